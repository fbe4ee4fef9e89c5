using System.Diagnostics;
using System.Text.Json;
using Corpus.Harness.Containment;
using Xunit.Abstractions;

namespace Corpus.Harness.Tests;

/// <summary>
/// A small corpus in a temp folder: one race cell whose native program (built by cmake, like every native repro)
/// fills a memfd of 128 MB, forks a child that shares it, and sleeps. Race cells run two processes at once here.
/// </summary>
public sealed class HoldingCorpus : IDisposable
{
    // A checkout path with a space: the ledger, the build and the runs' folders must all survive it.
    public string Root { get; } = Directory.CreateDirectory(
        Path.Combine(Directory.CreateTempSubdirectory("corpus-signal-").FullName, "a checkout")).FullName;

    public HoldingCorpus()
    {
        var repro = Path.Combine(Root, "repros", "hold");
        Directory.CreateDirectory(Path.Combine(repro, "cpp"));
        Directory.CreateDirectory(Path.Combine(Root, "harness"));
        File.WriteAllText(Path.Combine(repro, "repro.json"), """
            {
              "id": "hold", "title": "holds shared memory and sleeps", "category": "race", "references": ["a containment test"],
              "languages": ["cpp"], "subjects": ["linux"], "variants": ["bug"],
              "build": { "cmake": { "dir": "cpp" } },
              "budget": { "timeoutSec": 120, "memoryMB": 1024 },
              "cases": [{
                "id": "hold", "program": "cmake:hold", "args": ["{variant}"],
                "signature": { "process": { "exit": "SIGABRT" },
                               "statistics": { "epsilon": 0.5, "maxRuns": 100, "budgetSec": 100, "parallel": 2 } },
                "capture": { "crash": { "core": true } }
              }]
            }
            """);
        Directory.CreateDirectory(Path.Combine(Root, "expected"));
        File.WriteAllText(Path.Combine(Root, "expected", "hold.json"), """
            { "repro": "hold", "cells": [
              { "case": "hold", "variant": "bug", "subject": "linux", "outcome": "reproduced", "reason": "never: it is interrupted" } ] }
            """);
        File.WriteAllText(Path.Combine(repro, "cpp", "CMakeLists.txt"), """
            cmake_minimum_required(VERSION 3.16)
            project(hold LANGUAGES CXX)
            add_executable(hold hold.cpp)
            """);
        // The memfd's name carries CORPUS_TEST_TOKEN, so a test can find every process that still holds it.
        File.WriteAllText(Path.Combine(repro, "cpp", "hold.cpp"), """
            #include <cstdio>
            #include <cstdlib>
            #include <cstring>
            #include <string>
            #include <sys/mman.h>
            #include <unistd.h>
            int main() {
                const char* token = std::getenv("CORPUS_TEST_TOKEN");
                std::string name = std::string("corpus-hold-") + (token ? token : "none");
                const size_t size = 128u << 20;
                int fd = memfd_create(name.c_str(), 0);
                if (fd < 0 || ftruncate(fd, size) != 0) return 3;
                void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (p == MAP_FAILED) return 4;
                std::memset(p, 1, size);
                if (fork() == 0) { pause(); return 0; }
                std::printf("HOLDING %s\n", name.c_str());
                std::fflush(stdout);
                sleep(300);
                return 0;
            }
            """);
    }

    public void Dispose()
    {
        try { Directory.Delete(Path.GetDirectoryName(Root)!, recursive: true); } catch (IOException) { }
    }
}

/// <summary>
/// The real harness (corpus.dll) as a child process, killed or interrupted mid-cell. Nothing of the cell may
/// outlive it: its processes, its cgroups, its shared memory.
/// </summary>
public sealed class HarnessSignalTests(HoldingCorpus corpus, ITestOutputHelper output) : IClassFixture<HoldingCorpus>
{
    private static readonly string CorpusDll = typeof(Program).Assembly.Location;

    private sealed record Started(Process Harness, string Token, IReadOnlyList<int> Pids, IReadOnlyList<string> Cgroups,
                                  System.Text.StringBuilder Stderr);

    private async Task<Started> StartHoldingCellAsync()
    {
        var token = $"{Environment.ProcessId}-{Guid.NewGuid():N}"[..24];
        // A job started in the background by a non-interactive shell inherits SIGINT ignored, and .NET keeps it so (as
        // a shell's background jobs do): the harness would never see the test's SIGINT. env gives it the default back.
        var psi = new ProcessStartInfo("env")
        {
            RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false,
        };
        foreach (var a in new[] { "--default-signal=INT", "dotnet", CorpusDll, "run", "--root", corpus.Root, "--repro", "hold" })
            psi.ArgumentList.Add(a);
        psi.Environment["CORPUS_TEST_TOKEN"] = token;
        var harness = Process.Start(psi)!;
        var stderr = new System.Text.StringBuilder();
        harness.ErrorDataReceived += (_, e) => { if (e.Data is not null) lock (stderr) stderr.AppendLine(e.Data); };
        harness.OutputDataReceived += (_, e) => { };
        harness.BeginErrorReadLine();
        harness.BeginOutputReadLine();
        // Two runs in parallel, each a parent and a child that hold the filled memfd (the build comes first).
        var until = DateTime.UtcNow.AddSeconds(25);
        IReadOnlyList<int> pids = [];
        while (DateTime.UtcNow < until && !harness.HasExited)
        {
            pids = Holders(token);
            if (pids.Count >= 4 && CellCgroups(harness.Id).Count == 2) break;
            await Task.Delay(50);
        }
        Assert.True(pids.Count >= 4, $"the cell's programs did not start: {pids.Count} holders\n{stderr}");
        // The fork comes after the memset: give the children a moment to be counted by the cgroups as well.
        var cgroups = CellCgroups(harness.Id);
        Assert.Equal(2, cgroups.Count);
        foreach (var cg in cgroups)
            output.WriteLine($"{cg}: {File.ReadAllText(Path.Combine(cg, "cgroup.procs")).Replace('\n', ' ')}, "
                             + $"usage {CgroupUsageMB(cg)} MB");
        return new Started(harness, token, pids, cgroups, stderr);
    }

    /// <summary>The run cgroups of a harness, from its ledger in the checkout (the cgroup name also carries its pid).</summary>
    private List<string> CellCgroups(int harnessPid)
    {
        var ledgers = Directory.Exists(Path.Combine(corpus.Root, ".cache", "ledger"))
            ? Directory.GetFiles(Path.Combine(corpus.Root, ".cache", "ledger"), $"harness-{harnessPid}-*.ledger") : [];
        var dirs = new List<string>();
        foreach (var ledger in ledgers)
            try { dirs.AddRange(File.ReadAllLines(ledger).Select(LedgerEntry.Parse).Where(e => e.Kind == "cg").Select(e => e.Fields[0])); }
            catch (IOException) { }
        return dirs.Where(d => Directory.Exists(d) && File.ReadAllText(Path.Combine(d, "cgroup.procs")).Trim().Length > 0).ToList();
    }

    private static long CgroupUsageMB(string dir)
    {
        foreach (var f in new[] { "memory.usage_in_bytes", "memory.current" })
            if (File.Exists(Path.Combine(dir, f))) return long.Parse(File.ReadAllText(Path.Combine(dir, f)).Trim()) >> 20;
        return -1;
    }

    /// <summary>Processes that hold the test's memfd open or mapped: while any does, its memory is not released.</summary>
    private static List<int> Holders(string token)
    {
        var name = $"/memfd:corpus-hold-{token}";
        var pids = new List<int>();
        foreach (var proc in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(proc), out var pid)) continue;
            try
            {
                if (Directory.EnumerateFileSystemEntries(Path.Combine(proc, "fd"))
                        .Any(fd => new FileInfo(fd).LinkTarget?.StartsWith(name) == true)
                    || File.ReadLines(Path.Combine(proc, "maps")).Any(l => l.Contains(name)))
                    pids.Add(pid);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException) { }
        }
        return pids;
    }

    /// <summary>A pid is gone when no process has it, or only its zombie (no memory, no descriptors) is left.</summary>
    private static bool Gone(int pid)
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            return stat[stat.LastIndexOf(')') + 2] == 'Z';
        }
        catch (IOException) { return true; }
    }

    private static long HostShmemMB() =>
        long.Parse(File.ReadLines("/proc/meminfo").First(l => l.StartsWith("Shmem:")).Split(' ', StringSplitOptions.RemoveEmptyEntries)[1]) >> 10;

    /// <summary>Within 2 s of the signal: every process of the cell gone, its cgroups removed, its memfd held by no one.</summary>
    private async Task<double> AssertCellGoneAsync(Started s, Stopwatch sinceSignal)
    {
        var limit = TimeSpan.FromSeconds(2);
        double? lastGone = null;
        while (sinceSignal.Elapsed < limit)
        {
            if (s.Pids.All(Gone) && Holders(s.Token).Count == 0 && s.Cgroups.All(d => !Directory.Exists(d)))
            {
                lastGone = sinceSignal.Elapsed.TotalSeconds;
                break;
            }
            await Task.Delay(10);
        }
        var left = s.Pids.Where(p => !Gone(p)).ToList();
        Assert.True(lastGone is not null,
                    $"after {limit.TotalSeconds} s: pids {string.Join(",", left)} alive, holders {string.Join(",", Holders(s.Token))}, "
                    + $"cgroups left {string.Join(",", s.Cgroups.Where(Directory.Exists))}\n{s.Stderr}");
        output.WriteLine($"cell gone {lastGone * 1000:0} ms after the signal; host Shmem now {HostShmemMB()} MB (context only)");
        return lastGone!.Value;
    }

    [Fact]
    public async Task SigkillOfTheHarnessLeavesNothingOfTheCell()
    {
        var s = await StartHoldingCellAsync();
        var supervisor = Process.GetProcesses().Where(p => p.Id != s.Harness.Id).Select(p => p.Id)
                                .FirstOrDefault(p => CmdLine(p).Contains($"corpus-supervisor\0{s.Harness.Id}"));
        Assert.True(supervisor != 0, "no supervisor runs for the harness");
        // The crash capture's run folders are in the checkout, whose path has a space: one field of the ledger all the same.
        var ledger = Directory.GetFiles(Path.Combine(corpus.Root, ".cache", "ledger"), $"harness-{s.Harness.Id}-*.ledger").Single();
        var runDirs = File.ReadAllLines(ledger).Where(l => l.StartsWith("core ")).ToList();
        Assert.True(runDirs.Count > 0 && runDirs.All(l => l.Contains("a%20checkout")), string.Join("\n", File.ReadAllLines(ledger)));
        var runDir = LedgerEntry.Parse(runDirs[0]).Fields.Single();
        Assert.True(Directory.Exists(runDir), runDir);
        var clock = Stopwatch.StartNew();
        s.Harness.Kill();   // SIGKILL: no handler runs, only the supervisor can clean up
        await AssertCellGoneAsync(s, clock);
        await s.Harness.WaitForExitAsync();
        // The supervisor is done too: it exits after the cleanup.
        var until = DateTime.UtcNow.AddSeconds(2);
        while (!Gone(supervisor) && DateTime.UtcNow < until) await Task.Delay(20);
        Assert.True(Gone(supervisor), "the supervisor outlived its cleanup");
        // The harness's own runtime files (debugger pipes, diagnostic socket) go too: only a clean exit removes them.
        var ipc = new[] { Path.GetTempPath(), "/tmp/" }.Distinct().SelectMany(d => Directory.GetFiles(d))
                  .Select(Path.GetFileName).OfType<string>()
                  .Where(f => f.StartsWith($"clr-debug-pipe-{s.Harness.Id}-") || f.StartsWith($"dotnet-diagnostic-{s.Harness.Id}-")).ToList();
        Assert.True(ipc.Count == 0, "left of the killed harness: " + string.Join(", ", ipc));
        // A core the kernel might have written into the run's folder before the harness could read it.
        File.WriteAllText(Path.Combine(runDir, "core"), "core");
        // The ledger stays for a later run, which finds the runs already removed and says what it cleaned.
        var clean = Process.Start(new ProcessStartInfo("dotnet", [CorpusDll, "clean", "--root", corpus.Root])
                                  { RedirectStandardOutput = true })!;
        var said = await clean.StandardOutput.ReadToEndAsync();
        await clean.WaitForExitAsync();
        output.WriteLine(said);
        Assert.Matches(@"removed what killed harnesses left: 0 cgroup\(s\) .*[1-9]\d* ledger\(s\)", said);
        Assert.Contains("1 core(s)", said);
        Assert.False(File.Exists(Path.Combine(runDir, "core")), "the core in the run's folder (a path with a space) was left");
        Assert.Empty(Directory.GetFiles(Path.Combine(corpus.Root, ".cache", "ledger"), $"*-{s.Harness.Id}-*.ledger"));
    }

    [Theory]
    [InlineData(2, 130)]
    [InlineData(15, 143)]
    public async Task SigintOrSigtermStopsTheCellAndWritesTheSummary(int signal, int exitCode)
    {
        var s = await StartHoldingCellAsync();
        var clock = Stopwatch.StartNew();
        Assert.True(Native.Kill(s.Harness.Id, signal));
        await AssertCellGoneAsync(s, clock);
        Assert.True(s.Harness.WaitForExit(15_000), "the harness did not exit after the signal");
        s.Harness.WaitForExit();   // and its stderr is read to the end
        output.WriteLine($"exit {s.Harness.ExitCode} {clock.Elapsed.TotalMilliseconds:0} ms after the signal");
        Assert.Equal(exitCode, s.Harness.ExitCode);
        var err = s.Stderr.ToString();
        Assert.Contains($"corpus: interrupted by {(signal == 2 ? "SIGINT" : "SIGTERM")}: stopped 2 run(s)", err);
        Assert.Contains("removed 2 run cgroup(s)", err);
        var summaryFile = Path.Combine(corpus.Root, err.Split('\n').First(l => l.StartsWith("corpus: interrupted")).Split(" in ")[^1].Trim());
        using var summary = JsonDocument.Parse(File.ReadAllText(summaryFile));
        var cell = summary.RootElement.GetProperty("cells").EnumerateArray().Single();
        Assert.Equal("error", cell.GetProperty("outcome").GetString());
        Assert.Equal("interrupted", cell.GetProperty("detail").GetString());
        // Nothing is left for a later run: a clean exit leaves no ledger.
        Assert.Empty(Directory.GetFiles(Path.Combine(corpus.Root, ".cache", "ledger"), $"*-{s.Harness.Id}-*.ledger"));
    }

    private static string CmdLine(int pid)
    {
        try { return File.ReadAllText($"/proc/{pid}/cmdline"); }
        catch (IOException) { return ""; }
    }
}
