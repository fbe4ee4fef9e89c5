using System.Diagnostics;
using System.Text.Json;
using Xunit.Abstractions;

namespace Corpus.LostMemory.Tests;

public sealed class ScannerTests(ITestOutputHelper output)
{
    private const long MiB = 1 << 20;

    private static IReadOnlyList<SharedObject> Ours(ProcessEntry p) => p.Objects.Where(o => o.Name.StartsWith("lm-", StringComparison.Ordinal)).ToList();

    [Fact]
    public void FindsDeletedMemfdAndShmObjectsOfAnotherProcess()
    {
        using var holder = HolderProcess.Start();
        var report = Scanner.Scan(new ScanOptions { Pid = holder.Pid });
        output.WriteLine(Render.Table(report, objects: true));

        var entry = Assert.Single(report.Processes);
        Assert.Equal(holder.Pid, entry.Pid);
        var ours = Ours(entry);
        Assert.Equal(4, ours.Count);
        Assert.All(ours, o => Assert.True(o.Deleted));

        var fdOnly = ours.Single(o => o.Name == "lm-fdonly");
        Assert.Equal(ObjectKind.Memfd, fdOnly.Kind);
        Assert.Equal(3 * MiB, fdOnly.SizeBytes);
        Assert.Equal(3 * MiB, fdOnly.AllocatedBytes);
        Assert.True(fdOnly.FdOnly);
        Assert.Equal(2, fdOnly.Fds.Count); // the fd and its dup: one object

        var mapped = ours.Single(o => o.Name == "lm-mapped");
        Assert.Equal(ObjectKind.Memfd, mapped.Kind);
        Assert.Equal(2 * MiB, mapped.SizeBytes);
        Assert.Equal(1 * MiB, mapped.AllocatedBytes); // only the written half has pages
        Assert.Equal(2 * MiB, mapped.MappedBytes);
        Assert.Empty(mapped.Fds);
        Assert.False(mapped.FdOnly);

        var shm = ours.Single(o => o.Name.StartsWith("lm-shm-fdonly-", StringComparison.Ordinal));
        Assert.Equal(ObjectKind.Shm, shm.Kind);
        Assert.Equal(5 * MiB, shm.SizeBytes);
        Assert.Equal(5 * MiB, shm.AllocatedBytes);
        Assert.True(shm.FdOnly);
        Assert.EndsWith(" (deleted)", shm.Target, StringComparison.Ordinal);

        var both = ours.Single(o => o.Name.StartsWith("lm-shm-both-", StringComparison.Ordinal));
        Assert.Equal(ObjectKind.Shm, both.Kind);
        Assert.Equal(1 * MiB, both.SizeBytes);
        Assert.Single(both.Fds);
        Assert.True(both.Mapped);
        Assert.False(both.FdOnly);

        // Per-process totals over our objects: 8 MiB only through descriptors, 3 MiB mapped.
        Assert.Equal(8 * MiB, ours.Where(o => o.FdOnly).Sum(o => o.SizeBytes));
        Assert.Equal(3 * MiB, ours.Where(o => o.Mapped).Sum(o => o.SizeBytes));
        Assert.True(entry.FdOnlySizeBytes >= 8 * MiB);
        Assert.True(report.System.FdOnlyAllocatedBytes >= 8 * MiB);
        Assert.True(report.System.Partial);
        Assert.True(report.System.ShmemKb * 1024 >= report.System.ProcessObjectsAllocatedBytes);
    }

    [Fact]
    public void WholeHostScanFindsTheHolderAndUnheldShmFiles()
    {
        string unheld = $"/dev/shm/lm-test-unheld-{Environment.ProcessId}";
        File.WriteAllBytes(unheld, new byte[64 * 1024]);
        try
        {
            using var holder = HolderProcess.Start();
            Scanner.Scan(new ScanOptions()); // warm up (JIT), then time the real thing
            var times = new List<double>();
            Report report = null!;
            for (int i = 0; i < 3; i++)
            {
                var sw = Stopwatch.StartNew();
                report = Scanner.Scan(new ScanOptions());
                times.Add(sw.Elapsed.TotalMilliseconds);
            }
            output.WriteLine($"whole-host scan of {report.ProcessesScanned} processes: {string.Join(", ", times.Select(t => t.ToString("0.0", System.Globalization.CultureInfo.InvariantCulture)))} ms");
            output.WriteLine(Render.Table(report));

            var entry = Assert.Single(report.Processes, p => p.Pid == holder.Pid);
            Assert.Equal(4, Ours(entry).Count);
            Assert.DoesNotContain(report.Processes, p => p.Pid == Environment.ProcessId); // self left out by default
            Assert.False(report.System.Partial);
            Assert.True(report.System.UnheldShmFiles >= 1);
            Assert.True(report.System.UnheldShmFilesAllocatedBytes >= 64 * 1024);
            Assert.True(times.Min() < 10_000, $"a whole-host scan took {times.Min()} ms");
        }
        finally
        {
            File.Delete(unheld);
        }
    }

    [Fact]
    public void WineSectionOnATmpfsHeldByTheProgramAndWineserverIsFdOnly()
    {
        // Wine's layout without Wine: a section is a tmpmap file in wineserver's directory, deleted at once and
        // held by descriptors of the program and of wineserver. /dev/shm is a tmpfs, as a Wine cell's TMPDIR is.
        string top = $"/dev/shm/lm-wine-test-{Environment.ProcessId}";
        string dir = Path.Combine(top, "wine-Q5aTHS", "server-fe00-b204de");
        string file = Path.Combine(dir, "tmpmap-5f35fb1d");
        Directory.CreateDirectory(dir);
        try
        {
            var data = new byte[4 * MiB];
            new Random(1).NextBytes(data);
            File.WriteAllBytes(file, data);
            using var program = HolderProcess.Start("hold", file, "filemapping_lea");
            using var server = HolderProcess.Start("hold", file, "wineserver64");
            File.Delete(file);

            var report = Scanner.Scan(new ScanOptions());
            output.WriteLine(Render.Table(report, objects: true));
            foreach (var holder in new[] { program, server })
            {
                var entry = Assert.Single(report.Processes, p => p.Pid == holder.Pid);
                var section = Assert.Single(entry.Objects, o => o.Kind == ObjectKind.WineSection);
                Assert.Equal("tmpmap-5f35fb1d", section.Name);
                Assert.True(section.Deleted);
                Assert.True(section.FdOnly);
                Assert.True(section.Shmem);
                Assert.Equal(4 * MiB, section.SizeBytes);
                Assert.Equal(4 * MiB, section.AllocatedBytes);
                Assert.Equal([(program.Pid, "filemapping_lea"), (server.Pid, "wineserver64")],
                    section.HeldBy.Select(h => (h.Pid, h.Command)).OrderBy(h => h.Command, StringComparer.Ordinal).ToList());
                Assert.All(section.HeldBy, h => Assert.Equal((1, 0L), (h.FdCount, h.MappedBytes)));
            }
            Assert.Contains($"{server.Pid} wineserver64 (fd only)", Render.Table(report, objects: true), StringComparison.Ordinal);
            // One object, counted once, in no address space.
            Assert.True(report.System.FdOnlyAllocatedBytes >= 4 * MiB);
        }
        finally
        {
            Directory.Delete(top, recursive: true);
        }
    }

    [Fact]
    public void WineSectionOnDiskIsNotShmem()
    {
        // With TMPDIR on a disk file system the same leak is page cache: listed, but kept out of the Shmem totals.
        string dir = Path.Combine(Path.GetTempPath(), $"lm-wine-test-{Environment.ProcessId}", "server-803-2a0b7c");
        string file = Path.Combine(dir, "tmpmap-00000001");
        Directory.CreateDirectory(dir);
        try
        {
            File.WriteAllBytes(file, new byte[1 * MiB]);
            using var holder = HolderProcess.Start("hold", file, "wineserver64");
            File.Delete(file);
            var report = Scanner.Scan(new ScanOptions { Pid = holder.Pid });
            var entry = Assert.Single(report.Processes);
            var section = Assert.Single(entry.Objects, o => o.Kind == ObjectKind.WineSection);
            Assert.True(section.FdOnly);
            Assert.Equal(Native.IsOnTmpfs(dir), section.Shmem);
            output.WriteLine($"{dir}: Shmem {section.Shmem}");
            Assert.Equal(entry.Objects.Where(o => o.Shmem).Sum(o => Math.Max(0, o.AllocatedBytes)), report.System.ProcessObjectsAllocatedBytes);
        }
        finally
        {
            Directory.Delete(Path.GetDirectoryName(dir)!, recursive: true);
        }
    }

    [Fact]
    public void MinKbLeavesOutSmallHolders()
    {
        using var holder = HolderProcess.Start();
        Assert.Single(Scanner.Scan(new ScanOptions { Pid = holder.Pid, MinKb = 1024 }).Processes);
        Assert.Empty(Scanner.Scan(new ScanOptions { Pid = holder.Pid, MinKb = 1L << 40 }).Processes);
    }

    [Fact]
    public void VanishedProcessIsSkipped()
    {
        using var p = Process.Start(new ProcessStartInfo("true") { UseShellExecute = false })!;
        p.WaitForExit();
        int pid = p.Id;
        p.Dispose();
        var report = Scanner.Scan(new ScanOptions { Pid = pid });
        Assert.Empty(report.Processes);
        Assert.Equal(1, report.ProcessesVanished);
    }

    [Fact]
    public void JsonCarriesTheTotals()
    {
        using var holder = HolderProcess.Start();
        var report = Scanner.Scan(new ScanOptions { Pid = holder.Pid });
        using var doc = JsonDocument.Parse(Render.Json(report));
        var proc = doc.RootElement.GetProperty("processes")[0];
        Assert.Equal(holder.Pid, proc.GetProperty("pid").GetInt32());
        Assert.True(proc.GetProperty("fdOnlySizeBytes").GetInt64() >= 8 * MiB);
        Assert.Contains(proc.GetProperty("objects").EnumerateArray(), o => o.GetProperty("kind").GetString() == "memfd" && o.GetProperty("fdOnly").GetBoolean());
        Assert.True(doc.RootElement.GetProperty("system").GetProperty("shmemKb").GetInt64() > 0);
    }
}
