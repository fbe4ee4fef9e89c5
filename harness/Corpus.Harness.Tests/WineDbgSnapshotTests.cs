using Corpus.Harness.Capture;

namespace Corpus.Harness.Tests;

/// <summary>winedbg's text, as Wine 8 printed it for the file-mapping program held in its Sleep.</summary>
public class WineDbgSnapshotTests
{
    private const string InfoProcess = """
         pid      threads  executable (all id:s are in hex)
         000000e0 1        'start.exe'
        =000000e8 1        \_ 'winedbg.exe'
         000000d8 1        'filemapping_leak_win32.exe'
         00000038 9        'services.exe'
        """;

    private const string InfoThread = "process  tid      prio (all id:s are in hex)\n"
        + "00000038 services.exe\n\t0000003c    0     \n"
        + "000000dc (D) Z:\\work\\main\\build\\filemapping-leak\\wine-cmake\\filemapping_leak_win32.exe\n\t000000e0    0     \n\t00000104    0 <== \n"
        + "000000f4 start.exe\n\t000000f8    0     \n";

    private const string Bt = """
        0x000001700555f5 ntdll+0x555f5: ret	
        Backtrace:
        =>0 0x0000017000d664 in ntdll (+0xd664) (0x00000000000002)
          1 0x0000007b075aec Sleep+0x24(timeout=<internal error>) [Z:\work\main\dlls\kernelbase\sync.c:57] in kernelbase (0x00000000000002)
          2 0x00000140023a6b main+0x23b(argc=<internal error>, argv=<internal error>) [Z:\work\main\repros\filemapping-leak\cpp\filemapping_leak_win32.cpp:55] in filemapping_leak_win32 (0x00000000000002)
          3 0x000001400013ae in filemapping_leak_win32 (+0x13ae) (0x00000000c81380)
        Unknown thread id (0104) in process (00dc)
        """;

    [Fact]
    public void FindsTheProgramByItsLinuxName() =>
        Assert.Equal("000000d8", WineDbgSnapshot.WindowsPid(InfoProcess, "filemapping_lea"));

    [Fact]
    public void ListsOnlyTheThreadsOfThatProcess() =>
        Assert.Equal(["000000e0", "00000104"], WineDbgSnapshot.ThreadIds(InfoThread, "dc"));

    [Fact]
    public void NamesFramesByModuleAndFunction()
    {
        var t = Assert.Single(WineDbgSnapshot.Threads(Bt, ["000000e0", "00000104"]));
        Assert.Equal("thread 0x000000e0", t.Thread);
        Assert.Equal(["ntdll+0xd664", "kernelbase!Sleep+0x24", "filemapping_leak_win32!main+0x23b", "filemapping_leak_win32+0x13ae"], t.Frames);
    }

    /// <summary>
    /// A winedbg that ends while a process it started lives on holding its output (seen: a minidump of a program that
    /// was exiting, reparented to init, waiting 8 minutes later, with the harness blocked reading its output). A
    /// planted loader does the same: prints, leaves a sleep behind on its stdout, and exits.
    /// </summary>
    [Fact]
    public async Task ALeftBehindProcessThatHoldsTheOutputIsEndedNotWaitedFor()
    {
        if (!OperatingSystem.IsLinux()) return;
        var dir = Directory.CreateTempSubdirectory("corpus-winedbg-").FullName;
        var marker = $"301.{Environment.ProcessId % 1000:D3}{Random.Shared.Next(1000000):D6}";
        try
        {
            var wine = Path.Combine(dir, "wine");
            File.WriteAllText(wine, $"#!/bin/sh\necho \"winedbg $*\"\n(exec sleep {marker}) &\nexit 0\n");
            File.SetUnixFileMode(wine, (UnixFileMode)0b111_101_101);
            var clock = System.Diagnostics.Stopwatch.StartNew();
            var e = await Assert.ThrowsAsync<InvalidOperationException>(
                () => new WineDbgSnapshot(wine).RunAsync(new Dictionary<string, string>(), ["--minidump", "x.mdmp", "0x20"]));
            Assert.InRange(clock.Elapsed.TotalSeconds, 1.5, 15);
            Assert.Contains("left a process behind, killed", e.Message);
            Assert.Contains("winedbg --minidump x.mdmp 0x20", e.Message);   // what it printed is kept
            await Task.Delay(200);
            Assert.DoesNotContain(Directory.EnumerateDirectories("/proc"), d =>
            {
                try { return File.ReadAllText(Path.Combine(d, "cmdline")).Contains(marker); }
                catch (Exception x) when (x is IOException or UnauthorizedAccessException) { return false; }
            });
        }
        finally { Directory.Delete(dir, recursive: true); }
    }
}
