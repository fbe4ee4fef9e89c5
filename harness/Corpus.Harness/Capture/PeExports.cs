namespace Corpus.Harness.Capture;

/// <summary>
/// The export table of a PE file (a Wine builtin DLL), to name frames winedbg leaves as "module (+0xOFFSET)". Wine 8's
/// win32u syscall stubs carry no debug info, so a thread blocked in one shows as "win32u (+0xbdc4)": the export at
/// or below that offset (NtUserSetFocus, whose stub is 0x20 bytes) names it.
/// </summary>
public sealed class PeExports
{
    private readonly (uint Rva, string Name)[] _exports;

    private PeExports((uint, string)[] exports) => _exports = exports;

    public int Count => _exports.Length;

    /// <summary>Reads the export directory; an empty table for a file that is not a PE image with exports.</summary>
    public static PeExports Read(string file)
    {
        var b = File.ReadAllBytes(file);
        uint U32(long at) => at + 4 <= b.Length ? BitConverter.ToUInt32(b, (int)at) : 0;
        ushort U16(long at) => at + 2 <= b.Length ? BitConverter.ToUInt16(b, (int)at) : (ushort)0;
        if (b.Length < 0x40 || U16(0) != 0x5A4D) return new([]);
        long pe = U32(0x3C);
        if (U32(pe) != 0x4550) return new([]);
        int sections = U16(pe + 6), optSize = U16(pe + 20);
        long opt = pe + 24;
        var dirs = opt + (U16(opt) == 0x20B ? 112 : 96);  // PE32+ or PE32
        var exportRva = U32(dirs);
        long sectionTable = opt + optSize;
        long Offset(uint rva)
        {
            for (var i = 0; i < sections; i++)
            {
                long s = sectionTable + i * 40;
                uint va = U32(s + 12), size = Math.Max(U32(s + 8), U32(s + 16)), raw = U32(s + 20);
                if (rva >= va && rva < va + size) return raw + (rva - va);
            }
            return -1;
        }
        var dir = Offset(exportRva);
        if (exportRva == 0 || dir < 0) return new([]);
        uint names = U32(dir + 24);
        long functions = Offset(U32(dir + 28)), namePtrs = Offset(U32(dir + 32)), ordinals = Offset(U32(dir + 36));
        var list = new List<(uint, string)>();
        for (var i = 0; i < names && functions >= 0 && namePtrs >= 0 && ordinals >= 0; i++)
        {
            var nameAt = Offset(U32(namePtrs + 4 * i));
            if (nameAt < 0) continue;
            var end = Array.IndexOf(b, (byte)0, (int)nameAt);
            if (end < 0) continue;
            var rva = U32(functions + 4 * U16(ordinals + 2 * i));
            list.Add((rva, System.Text.Encoding.ASCII.GetString(b, (int)nameAt, end - (int)nameAt)));
        }
        return new(list.OrderBy(x => x.Item1).ToArray());
    }

    /// <summary>"Name+0xN" for the export at or below the offset, or null below the first one.</summary>
    public string? Nearest(uint rva)
    {
        var i = Array.FindLastIndex(_exports, e => e.Rva <= rva);
        if (i < 0) return null;
        var (at, name) = _exports[i];
        return rva == at ? name : $"{name}+0x{rva - at:x}";
    }
}
