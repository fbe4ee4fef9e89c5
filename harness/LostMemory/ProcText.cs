using System.Globalization;

namespace Corpus.LostMemory;

/// <summary>The text of /proc the scanner reads: a descriptor's link target or a maps path, maps lines, meminfo and
/// /proc/sysvipc/shm. Pure parsers beside two file readers, so tests feed them lines.</summary>
internal static class ProcText
{
    private const string DeletedSuffix = " (deleted)";

    internal readonly record struct MapsEntry(ulong Start, ulong End, uint DevMajor, uint DevMinor, ulong Inode, string Path)
    {
        public long Length => (long)(End - Start);
    }

    /// <summary>Recognises the link targets and maps paths of shmem-backed objects.</summary>
    internal static bool TryClassify(string target, out ObjectKind kind, out string name, out bool deleted)
    {
        deleted = target.EndsWith(DeletedSuffix, StringComparison.Ordinal);
        string path = deleted ? target[..^DeletedSuffix.Length] : target;
        // First: a Wine cell's TMPDIR may well be under /dev/shm.
        if (IsWineSection(path))
        {
            kind = ObjectKind.WineSection;
            name = path[(path.LastIndexOf('/') + 1)..];
            return true;
        }
        if (path.StartsWith("/memfd:", StringComparison.Ordinal))
        {
            kind = ObjectKind.Memfd;
            name = path["/memfd:".Length..];
            return true;
        }
        if (path.StartsWith("/dev/shm/", StringComparison.Ordinal))
        {
            kind = ObjectKind.Shm;
            name = path["/dev/shm/".Length..];
            return true;
        }
        if (path.StartsWith("/SYSV", StringComparison.Ordinal) && deleted)
        {
            kind = ObjectKind.SysV;
            name = path["/SYSV".Length..];
            return true;
        }
        if (path == "/dev/zero" && deleted)
        {
            kind = ObjectKind.AnonShared;
            name = "";
            return true;
        }
        kind = default;
        name = "";
        return false;
    }

    /// <summary>".../server-DEV-INODE/tmpmap-XXXXXXXX": wineserver's directory for one prefix, keyed by the prefix's device and inode.</summary>
    private static bool IsWineSection(string path)
    {
        int slash = path.LastIndexOf('/');
        if (slash <= 0 || !IsHexAfter(path.AsSpan(slash + 1), "tmpmap-"))
            return false;
        var dir = path.AsSpan(0, slash);
        var server = dir[(dir.LastIndexOf('/') + 1)..];
        int dash = server.LastIndexOf('-');
        return dash > "server-".Length && IsHexAfter(server[..dash], "server-") && IsHex(server[(dash + 1)..]);
    }

    private static bool IsHexAfter(ReadOnlySpan<char> s, string prefix) => s.StartsWith(prefix, StringComparison.Ordinal) && IsHex(s[prefix.Length..]);

    private static bool IsHex(ReadOnlySpan<char> s) => !s.IsEmpty && !s.ContainsAnyExcept("0123456789abcdefABCDEF");

    /// <summary>"start-end perms offset major:minor inode   path" (all numbers but inode in hex).</summary>
    internal static bool TryParseMapsLine(string line, out MapsEntry entry)
    {
        entry = default;
        var s = line.AsSpan();
        if (!NextField(ref s, out var range) || !NextField(ref s, out _) || !NextField(ref s, out _)
            || !NextField(ref s, out var dev) || !NextField(ref s, out var inode))
            return false;
        var path = s.TrimStart(' ');
        if (path.IsEmpty)
            return false;
        int dash = range.IndexOf('-');
        int colon = dev.IndexOf(':');
        if (dash < 0 || colon < 0
            || !ulong.TryParse(range[..dash], NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out ulong start)
            || !ulong.TryParse(range[(dash + 1)..], NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out ulong end)
            || !uint.TryParse(dev[..colon], NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out uint major)
            || !uint.TryParse(dev[(colon + 1)..], NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out uint minor)
            || !ulong.TryParse(inode, NumberStyles.None, CultureInfo.InvariantCulture, out ulong ino))
            return false;
        entry = new MapsEntry(start, end, major, minor, ino, path.ToString());
        return true;
    }

    private static bool NextField(ref ReadOnlySpan<char> s, out ReadOnlySpan<char> field)
    {
        s = s.TrimStart(' ');
        int sp = s.IndexOf(' ');
        if (sp <= 0)
        {
            field = s;
            s = default;
            return !field.IsEmpty;
        }
        field = s[..sp];
        s = s[sp..];
        return true;
    }

    /// <summary>"Key:   123 kB" lines of /proc/meminfo, in kB.</summary>
    internal static Dictionary<string, long> ReadMeminfo(string path)
    {
        var result = new Dictionary<string, long>(StringComparer.Ordinal);
        try
        {
            foreach (string line in File.ReadLines(path))
                ParseMeminfoLine(line, result);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
        }
        return result;
    }

    internal static void ParseMeminfoLine(string line, Dictionary<string, long> into)
    {
        int colon = line.IndexOf(':');
        if (colon <= 0)
            return;
        var rest = line.AsSpan(colon + 1).Trim();
        int sp = rest.IndexOf(' ');
        if (sp > 0)
            rest = rest[..sp];
        if (long.TryParse(rest, NumberStyles.None, CultureInfo.InvariantCulture, out long v))
            into[line[..colon]] = v;
    }

    /// <summary>/proc/sysvipc/shm: segments with nattch 0 are held by no process at all.</summary>
    internal static (int Count, long Bytes) UnattachedSysV(string path)
    {
        try
        {
            return ParseSysV(File.ReadLines(path));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return (0, 0);
        }
    }

    internal static (int Count, long Bytes) ParseSysV(IEnumerable<string> lines)
    {
        int nattchCol = -1, rssCol = -1, count = 0;
        long bytes = 0;
        foreach (string line in lines)
        {
            var cols = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (nattchCol < 0)
            {
                nattchCol = Array.IndexOf(cols, "nattch");
                rssCol = Array.IndexOf(cols, "rss");
                if (nattchCol < 0 || rssCol < 0)
                    return (0, 0);
                continue;
            }
            if (cols.Length > Math.Max(nattchCol, rssCol) && cols[nattchCol] == "0"
                && long.TryParse(cols[rssCol], NumberStyles.None, CultureInfo.InvariantCulture, out long rss))
            {
                count++;
                bytes += rss;
            }
        }
        return (count, bytes);
    }
}
