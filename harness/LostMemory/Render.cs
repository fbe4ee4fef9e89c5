using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Corpus.LostMemory;

/// <summary>Text table and JSON forms of a <see cref="Report"/>.</summary>
public static class Render
{
    private static readonly JsonSerializerOptions JsonOptions = new()
    {
        WriteIndented = true,
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        Converters = { new JsonStringEnumConverter(JsonNamingPolicy.CamelCase) },
    };

    public static string Json(Report report) => JsonSerializer.Serialize(report, JsonOptions);

    public static Report? FromJson(string json) => JsonSerializer.Deserialize<Report>(json, JsonOptions);

    private static string Mib(long bytes) => (bytes / 1048576.0).ToString("0.0", CultureInfo.InvariantCulture);

    public static string Table(Report report, bool objects = false)
    {
        var sb = new StringBuilder();
        var inv = CultureInfo.InvariantCulture;
        sb.AppendLine(inv, $"{"PID",7} {"COMMAND",-16} {"OBJS",5} {"FD-ONLY",7} {"SIZE MiB",9} {"ALLOC MiB",9} {"MAPPED MiB",10} {"FD-ONLY MiB",11}  CMDLINE");
        foreach (var p in report.Processes)
        {
            string cmd = p.CommandLine.Length > 60 ? p.CommandLine[..57] + "..." : p.CommandLine;
            sb.AppendLine(inv, $"{p.Pid,7} {Clip(p.Command, 16),-16} {p.Count,5} {p.FdOnlyCount,7} {Mib(p.SizeBytes),9} {Mib(p.AllocatedBytes),9} {Mib(p.MappedSizeBytes),10} {Mib(p.FdOnlySizeBytes),11}  {cmd}");
            if (!objects)
                continue;
            foreach (var o in p.Objects)
            {
                string how = o.FdOnly ? "fd-only" : o.Fds.Count > 0 ? "fd+mapped" : "mapped";
                string fds = o.Fds.Count > 0 ? " fd=" + string.Join(",", o.Fds) : "";
                string shared = o.SharedWith.Count > 0 ? "  held by " + string.Join(", ", o.HeldBy.Select(Describe)) : "";
                string disk = o.Shmem ? "" : " (on disk: page cache, not Shmem)";
                sb.AppendLine(inv, $"{"",7}   {o.Kind,-10} {how,-9} size {Mib(o.SizeBytes),8} MiB alloc {Mib(Math.Max(0, o.AllocatedBytes)),8} MiB  {o.Device}/{o.Inode}{fds}  {o.Target}{disk}{shared}");
            }
        }
        var s = report.System;
        sb.AppendLine();
        sb.AppendLine(inv, $"Shmem {Mib(s.ShmemKb * 1024)} MiB (MemTotal {Mib(s.MemTotalKb * 1024)} MiB)");
        sb.AppendLine(inv, $"  held by scanned processes  {Mib(s.ProcessObjectsAllocatedBytes),9} MiB in {s.DistinctObjects} distinct objects; in no address space (fd only): {Mib(s.FdOnlyAllocatedBytes)} MiB");
        sb.AppendLine(inv, $"  /dev/shm files nobody holds {Mib(s.UnheldShmFilesAllocatedBytes),8} MiB in {s.UnheldShmFiles} files");
        sb.AppendLine(inv, $"  SysV segments not attached {Mib(s.UnattachedSysVResidentBytes),9} MiB in {s.UnattachedSysVSegments} segments");
        sb.AppendLine(inv, $"  unaccounted                 {Mib(s.UnaccountedKb * 1024),8} MiB{(s.Partial ? " (partial scan: includes other processes' objects)" : " (other tmpfs files, GPU buffers, ...)")}");
        sb.AppendLine(inv, $"Scanned {report.ProcessesScanned} processes in {report.ElapsedMs:0} ms; {report.ProcessesVanished} vanished, {report.ProcessesDenied} denied.");
        return sb.ToString();
    }

    private static string Describe(Holder h) =>
        string.Create(CultureInfo.InvariantCulture, $"{h.Pid} {h.Command} ({(h.FdCount > 0 ? h.MappedBytes > 0 ? "fd+mapped" : "fd only" : "mapped")})");

    private static string Clip(string s, int n) => s.Length > n ? s[..n] : s;
}
