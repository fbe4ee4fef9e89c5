using Corpus.Harness.Capture;
using Corpus.Harness.Containment;

namespace Corpus.Harness.Tests;

/// <summary>The Windows path is not exercised on Linux: its command lines are checked against a fake runner.</summary>
public class CaptureTests
{
    private sealed class FakeRunner : IToolRunner
    {
        public List<(string File, IReadOnlyList<string> Args)> Calls { get; } = [];
        public ToolResult Run(string file, IReadOnlyList<string> args, TimeSpan timeout)
        {
            Calls.Add((file, args));
            // procdump.exe writes the dump named by its last argument.
            if (args.Count > 0 && args[^1].EndsWith(".dmp")) File.WriteAllText(args[^1], "MDMP");
            return new ToolResult(1, "", "", 0.5, false);
        }
    }

    [Fact]
    public void ProcDumpExeCommandLines()
    {
        Assert.Equal("-accepteula -ma -e -x C:\\dumps app.exe run bug",
                     string.Join(' ', WindowsProcDump.CrashArgs("C:\\dumps", "app.exe", ["run", "bug"])));
    }

    [Fact]
    public void TtdCommandLines()
    {
        Assert.Equal("-accepteula -out C:\\t -launch app.exe a", string.Join(' ', WindowsTtd.LaunchArgs("C:\\t", "app.exe", ["a"])));
        Assert.Equal("-accepteula -ring -maxFile 512 -out C:\\t -launch app.exe",
                     string.Join(' ', WindowsTtd.RingArgs("C:\\t", 512, "app.exe", [])));
    }

    [Fact]
    public void WindowsBackendsSayWhyTheyAreUnavailableHere()
    {
        Assert.Equal("procdump.exe runs only on Windows", new WindowsProcDump(new FakeRunner(), isWindows: false).Unavailable);
        Assert.Equal("TTD.exe runs only on Windows", new WindowsTtd(isWindows: false).Unavailable);
        var empty = Directory.CreateTempSubdirectory("corpus-nopath-").FullName;
        try
        {
            var pd = new WindowsProcDump(new FakeRunner(), isWindows: true, searchPath: empty);
            Assert.StartsWith("procdump.exe is not on PATH and CORPUS_PROCDUMP is not set (install Sysinternals ProcDump", pd.Unavailable);
            Assert.Throws<PlatformNotSupportedException>(() => pd.WrapCrash(new Subjects.Launch("app.exe", [], new Dictionary<string, string>()), "C:\\d"));
            Assert.StartsWith("TTD.exe is not on PATH and CORPUS_TTD is not set", new WindowsTtd(isWindows: true, searchPath: empty).Unavailable);
            Assert.Equal($"CORPUS_TTD={empty}/TTD.exe: no such file", new WindowsTtd(Path.Combine(empty, "TTD.exe"), isWindows: true).Unavailable);
        }
        finally { Directory.Delete(empty, true); }
    }

    [Fact]
    public async Task ProcDumpExeSnapshotGoesThroughTheRunner()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-pd-").FullName;
        try
        {
            using var target = new ContainedProcess(new ProcessSpec("/bin/sh", ["-c", "sleep 30"], dir,
                Path.Combine(dir, "o"), Path.Combine(dir, "e"), TimeSpan.FromSeconds(30), 64 << 20));
            var runner = new FakeRunner();
            var exe = Path.Combine(dir, "procdump.exe");
            File.WriteAllText(exe, "");
            var backend = new WindowsProcDump(runner, isWindows: true, searchPath: dir) { ReadStacks = false };
            var record = await backend.SnapshotAsync(target, dir, 0, CancellationToken.None);
            var (file, args) = Assert.Single(runner.Calls);
            Assert.Equal(exe, file);
            Assert.Equal(["-accepteula", "-ma", target.Pid.ToString(), Path.Combine(dir, "snapshot-0.dmp")], args);
            Assert.Equal(4, record.Bytes);
        }
        finally { Directory.Delete(dir, true); }
    }

    [Fact]
    public async Task LinuxProcDumpWritesARealCore()
    {
        // Debian's procdump is part of the setup; a machine without it fails here rather than skipping.
        var backend = new LinuxProcDump(ToolRunner.Instance);
        Assert.Null(backend.Unavailable);
        var dir = Directory.CreateTempSubdirectory("corpus-procdump-").FullName;
        try
        {
            using var target = new ContainedProcess(new ProcessSpec("/bin/sleep", ["30"], dir,
                Path.Combine(dir, "o"), Path.Combine(dir, "e"), TimeSpan.FromSeconds(60), 64 << 20));
            var record = await backend.SnapshotAsync(target, dir, 0, CancellationToken.None);
            Assert.True(File.Exists(record.File));
            Assert.StartsWith("core-0_", Path.GetFileName(record.File));
            Assert.True(record.Bytes > 100_000, $"core of {record.Bytes} bytes");
            // Of the target: procdump 1.2 with this test's TMPDIR (it holds the testhost's diagnostic socket) once
            // dumped the testhost instead, freezing it for 1-2 s.
            Assert.Equal((target.Pid, "sleep"), CoreFile.ProcessOf(record.File));
            Assert.False(target.HasExited);   // a snapshot, not a kill
        }
        finally { Directory.Delete(dir, true); }
    }

    /// <summary>The smallest x86-64 ELF core: a header, one PT_NOTE and an NT_PRPSINFO naming pid and command.</summary>
    private static byte[] SyntheticCore(int pid, string command)
    {
        var desc = new byte[136];
        BitConverter.GetBytes(pid).CopyTo(desc, 24);
        System.Text.Encoding.ASCII.GetBytes(command).CopyTo(desc, 40);
        var note = new List<byte>();
        note.AddRange(BitConverter.GetBytes(5)); note.AddRange(BitConverter.GetBytes(desc.Length)); note.AddRange(BitConverter.GetBytes(3));
        note.AddRange("CORE\0\0\0\0"u8.ToArray());
        note.AddRange(desc);
        var elf = new byte[64 + 56];
        new byte[] { 0x7f, (byte)'E', (byte)'L', (byte)'F', 2, 1, 1 }.CopyTo(elf, 0);
        BitConverter.GetBytes((ushort)4).CopyTo(elf, 16);        // ET_CORE
        BitConverter.GetBytes(64L).CopyTo(elf, 32);              // e_phoff
        BitConverter.GetBytes((ushort)56).CopyTo(elf, 54);       // e_phentsize
        BitConverter.GetBytes((ushort)1).CopyTo(elf, 56);        // e_phnum
        BitConverter.GetBytes(4).CopyTo(elf, 64);                // PT_NOTE
        BitConverter.GetBytes((long)elf.Length).CopyTo(elf, 64 + 8);
        BitConverter.GetBytes((long)note.Count).CopyTo(elf, 64 + 32);
        return [.. elf, .. note];
    }

    [Fact]
    public void CoreFileNamesTheProcessOfACore()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-core-").FullName;
        try
        {
            File.WriteAllBytes(Path.Combine(dir, "a"), SyntheticCore(4242, "mono"));
            Assert.Equal((4242, "mono"), CoreFile.ProcessOf(Path.Combine(dir, "a")));
            File.WriteAllText(Path.Combine(dir, "b"), "not a core");
            Assert.Null(CoreFile.ProcessOf(Path.Combine(dir, "b")));
            Assert.Null(CoreFile.ProcessOf("/bin/sleep"));   // ELF, but an executable
        }
        finally { Directory.Delete(dir, true); }
    }

    private sealed class CoreOfRunner(int pid, string command) : IToolRunner
    {
        public ToolResult Run(string file, IReadOnlyList<string> args, TimeSpan timeout)
        {
            Assert.Equal("env", file);
            var prefix = args[args.ToList().IndexOf("-o") + 1];
            // Where no diagnostic socket can be: the folder the core goes to.
            Assert.Equal($"TMPDIR={Path.GetDirectoryName(prefix)}", args[0]);
            File.WriteAllBytes($"{prefix}_0.{args[^1]}", SyntheticCore(pid, command));
            return new ToolResult(0, "", "", 0.1, false);
        }
    }

    [Fact]
    public async Task LinuxProcDumpRefusesACoreOfAnotherProcess()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-pd-").FullName;
        try
        {
            using var target = new ContainedProcess(new ProcessSpec("/bin/sleep", ["30"], dir,
                Path.Combine(dir, "o"), Path.Combine(dir, "e"), TimeSpan.FromSeconds(30), 64 << 20));
            var wrong = new LinuxProcDump(new CoreOfRunner(target.Pid + 1, "dotnet"));
            var e = await Assert.ThrowsAsync<InvalidOperationException>(() => wrong.SnapshotAsync(target, dir, 0, CancellationToken.None));
            Assert.Equal($"procdump dumped pid {target.Pid + 1} (dotnet), not the target {target.Pid}", e.Message);
            Assert.Empty(Directory.GetFiles(dir, "core-0_*"));
            var right = new LinuxProcDump(new CoreOfRunner(target.Pid, "sleep"));
            var record = await right.SnapshotAsync(target, dir, 1, CancellationToken.None);
            Assert.Equal($"core-1_0.{target.Pid}", Path.GetFileName(record.File));
        }
        finally { Directory.Delete(dir, true); }
    }

    [Fact]
    public void LinuxProcDumpCommandLines()
    {
        Assert.Equal("-n 1 -s 1 -o /a/core-0 -p 7", string.Join(' ', LinuxProcDump.SnapshotArgs(7, "/a/core-0")));
        Assert.Equal("-M 1500 -n 1 -o /a/m -p 7", string.Join(' ', LinuxProcDump.MemoryArgs(7, "/a/m", 1500)));
    }

    [Fact]
    public void MonoThreadDumpParsesThreadsAndStripsOffsets()
    {
        string[] dump =
        [
            "Full thread dump:",
            "",
            "\"<unnamed thread>\"  at <unknown> <0xffffffff>",
            "  at System.Runtime.Serialization.ObjectManager.FindObjectHolder (long) [0x00023] in <12b418a7818c4ca0893feeaaf67f1e7f>:0",
            "  at Corpus.Repros.X.Program.Main (string[]) [0x00030] in /src/Program.cs:25",
            "",
            "\"Finalizer\"",
        ];
        var threads = MonoThreadDump.Parse(dump);
        Assert.Equal(2, threads.Count);
        Assert.Equal("<unnamed thread>", threads[0].Thread);
        Assert.Equal(["System.Runtime.Serialization.ObjectManager.FindObjectHolder (long)", "Corpus.Repros.X.Program.Main (string[])"],
                     threads[0].Frames);
        Assert.Empty(threads[1].Frames);
    }
}
