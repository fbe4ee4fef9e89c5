using System.Buffers.Binary;
using System.Text;

namespace Corpus.Harness.Capture;

/// <summary>
/// Whose core a file is: the pid and command name in its NT_PRPSINFO note (the kernel, gdb's gcore and createdump
/// all write one). A capture tool that dumped another process must not pass for a snapshot of the target.
/// </summary>
public static class CoreFile
{
    private const uint PtNote = 4, NtPrpsinfo = 3;

    /// <summary>The process an x86-64 ELF core was taken of, or null when the file is no such core.</summary>
    public static (int Pid, string Command)? ProcessOf(string path)
    {
        using var f = File.OpenRead(path);
        var eh = new byte[64];
        if (f.Read(eh, 0, 64) < 64 || BinaryPrimitives.ReadUInt32LittleEndian(eh) != 0x464C457F   // "\x7fELF"
            || eh[4] != 2 || BinaryPrimitives.ReadUInt16LittleEndian(eh.AsSpan(16)) != 4)   // ELFCLASS64, ET_CORE
            return null;
        var phoff = (long)BinaryPrimitives.ReadUInt64LittleEndian(eh.AsSpan(32));
        int phentsize = BinaryPrimitives.ReadUInt16LittleEndian(eh.AsSpan(54)), phnum = BinaryPrimitives.ReadUInt16LittleEndian(eh.AsSpan(56));
        var ph = new byte[phentsize];
        for (var i = 0; i < phnum; i++)
        {
            f.Position = phoff + (long)i * phentsize;
            if (f.Read(ph, 0, phentsize) < 56 || BinaryPrimitives.ReadUInt32LittleEndian(ph) != PtNote) continue;
            var size = (long)BinaryPrimitives.ReadUInt64LittleEndian(ph.AsSpan(32));
            if (size is <= 0 or > 64 << 20) continue;
            var notes = new byte[size];
            f.Position = (long)BinaryPrimitives.ReadUInt64LittleEndian(ph.AsSpan(8));
            f.ReadExactly(notes);
            for (var at = 0; at + 12 <= notes.Length;)
            {
                int namesz = (int)BinaryPrimitives.ReadUInt32LittleEndian(notes.AsSpan(at)),
                    descsz = (int)BinaryPrimitives.ReadUInt32LittleEndian(notes.AsSpan(at + 4));
                var type = BinaryPrimitives.ReadUInt32LittleEndian(notes.AsSpan(at + 8));
                var desc = at + 12 + Align4(namesz);
                if (namesz < 0 || descsz < 0 || desc + descsz > notes.Length) break;
                // x86-64 elf_prpsinfo: pr_pid at 24, pr_fname[16] at 40.
                if (type == NtPrpsinfo && descsz >= 56)
                {
                    var pid = BinaryPrimitives.ReadInt32LittleEndian(notes.AsSpan(desc + 24));
                    var name = notes.AsSpan(desc + 40, 16);
                    var end = name.IndexOf((byte)0);
                    return (pid, Encoding.UTF8.GetString(end < 0 ? name : name[..end]));
                }
                at = desc + Align4(descsz);
            }
        }
        return null;
    }

    private static int Align4(int n) => (n + 3) & ~3;
}
