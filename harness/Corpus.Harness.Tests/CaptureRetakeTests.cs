using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// Issue 35, item 2: a snapshot that came out short (ClrMD unwound no thread: a lone "[Managed] 0x0", as roslyn:4.8.0's
/// dumps did in a CI gate) is taken again within the capture's retakes, in the run while it lives and then in a
/// capture-only run; one that stays short is a capture error saying what was seen, never a verdict. Real processes
/// through the real runner; only the snapshot backend is planted.
/// </summary>
public sealed class CaptureRetakeTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-retake-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    /// <summary>Gives <paramref name="shortFirst"/> snapshots whose only stacks could not be walked, then walked ones.</summary>
    private sealed class PlantedSnapshots(int shortFirst) : ICaptureBackend
    {
        public int Taken;
        public string Name => "planted";
        public string? Unavailable => null;

        public Task<CaptureRecord> SnapshotAsync(ContainedProcess target, string dir, int index, CancellationToken cancel)
        {
            var file = Path.Combine(dir, $"snapshot-{index}.txt");
            File.WriteAllText(file, "planted\n");
            IReadOnlyList<ThreadStack> threads = Interlocked.Increment(ref Taken) <= shortFirst
                ? [new ThreadStack("managed 1", ["[Managed] 0x0"]), new ThreadStack("managed 2", ["[Runtime] DebuggerU2MCatchHandlerFrame"])]
                : [new ThreadStack("managed 1", ["Prog.Work()", "Prog.Main()"])];
            return Task.FromResult(new CaptureRecord(Name, file, 8, 0.01, target.Elapsed, threads));
        }

        /// <summary>What the series asked of it, in order: "take I" while the process lives, "read I" later.</summary>
        public readonly List<string> Steps = [];

        public async Task<Func<Task<CaptureRecord>>> TakeAsync(ContainedProcess target, string dir, int index, CancellationToken cancel)
        {
            lock (Steps) Steps.Add($"take {index}");
            var record = await SnapshotAsync(target, dir, index, cancel);
            return () =>
            {
                lock (Steps) Steps.Add($"read {index}");
                return Task.FromResult(record);
            };
        }
    }

    /// <summary>
    /// A program that prints its marker and holds: 4 s, room for the count and every retake even on a loaded host; with
    /// <paramref name="firstEndsAtOnce"/>, its first run ends before a snapshot is due and later runs hold.
    /// </summary>
    private Task<(CellResult Cell, PlantedSnapshots Backend)> RunAsync(int shortFirst, bool firstEndsAtOnce = false) =>
        RunAsync(shortFirst, firstEndsAtOnce ? "if [ -e ran ]; then sleep 4; else touch ran; fi" : "sleep 4",
                 "\"timeoutSec\": 20", "\"delaySec\": 0.5, \"intervalSec\": 0.4, \"count\": 2, \"retakes\": 2");

    private async Task<(CellResult Cell, PlantedSnapshots Backend)> RunAsync(int shortFirst, string hold, string budget, string timed)
    {
        var dir = Path.Combine(_root, "repros", "retake");
        Directory.CreateDirectory(Path.Combine(dir, "src"));
        File.WriteAllText(Path.Combine(dir, "src", "prog.sh"), $"echo 'REPRO-REACHED go'\n{hold}\necho REPRO-DONE\n");
        File.WriteAllText(Path.Combine(dir, "repro.json"), $$"""
            { "id": "retake", "title": "t", "category": "hang", "references": ["r"], "languages": ["sh"],
              "subjects": ["shell"], "variants": ["bug"], "build": { "mono": { "sources": ["src/*.sh"] } },
              "budget": { {{budget}}, "memoryMB": 256 },
              "cases": [ { "id": "main", "args": ["{variant}"],
                           "signature": { "process": { "exit": "zero", "output": ["REPRO-DONE"] }, "stacks": { "frame": "Prog\\.Work" } },
                           "capture": { "timed": { "marker": "REPRO-REACHED go", {{timed}} } } } ] }
            """);
        var backend = new PlantedSnapshots(shortFirst);
        var kinds = SubjectKinds.Default.With(new ShellKind(() => new CopyScript(), backend));
        var m = Manifest.Load(Path.Combine(dir, "repro.json"), null, kinds);
        var runner = new CellRunner(new RunOptions(_root, Path.Combine(_root, "artifacts", "run"), Keep: true, _ => { }),
                                    new Builder(_root, ToolRunner.Instance), ToolRunner.Instance, null, kinds);
        return (await runner.RunAsync(m, m.Cases[0], "bug", kinds.Resolve("shell", _root), null), backend);
    }

    [Fact]
    public async Task ShortSnapshotsAreRetakenWhileTheRunLives()
    {
        var (cell, _) = await RunAsync(shortFirst: 2);
        Assert.Equal(Outcome.Reproduced, cell.Outcome);
        var captures = cell.CapturesNow();
        Assert.All(captures, c => Assert.Equal("run", c.Run));
        Assert.Equal(3, captures.Count);
        Assert.Contains("short: none of its 2 threads carried a stack that could be walked", captures[0].Note);
        Assert.Contains("retake 1 of 2: the 2 before came out short", captures[2].Note);
        Assert.Null(captures[2].Short);
        Assert.DoesNotContain(cell.Runs, r => r.Label.StartsWith("recapture"));
    }

    [Fact]
    public async Task TheCountIsTakenBeforeAnyIsReadAndEachRetakeIsReadBeforeTheNext()
    {
        // Reading a snapshot (ClrMD over a createdump core) while the program runs on spent its time after the marker:
        // 2 of 3 snapshots and no core in a loaded gate. A retake depends on what the ones before showed.
        var (cell, backend) = await RunAsync(shortFirst: 2);
        Assert.Equal(Outcome.Reproduced, cell.Outcome);
        Assert.Equal(["take 0", "take 1", "read 0", "read 1", "take 2", "read 2"], backend.Steps);
    }

    [Fact]
    public async Task WhenTheRunEndsFirstACaptureOnlyRunTakesThemAgain()
    {
        // The first run ends before its first snapshot is due; the capture-only run holds, its first two are short and
        // its retake is walked.
        var (cell, backend) = await RunAsync(shortFirst: 2, firstEndsAtOnce: true);
        Assert.Equal(Outcome.Reproduced, cell.Outcome);
        Assert.Contains(cell.Runs, r => r.Label == "recapture1" && r.CaptureOnly);
        Assert.DoesNotContain(cell.CapturesNow(), c => c.Run == "run");
        Assert.Contains(cell.CapturesNow(), c => c.Run == "recapture1" && c.Short is null);
        Assert.Contains("shows /Prog\\.Work/", cell.Detail);
        Assert.Equal(3, backend.Taken);
    }

    [Fact]
    public async Task SnapshotsThatStayShortAreACaptureErrorThatSaysWhatWasSeen()
    {
        var (cell, _) = await RunAsync(shortFirst: int.MaxValue, firstEndsAtOnce: true);
        Assert.Equal(Outcome.Error, cell.Outcome);
        Assert.Contains("no stack snapshot carried a stack that could be walked", cell.Detail);
        Assert.Contains("came out short", cell.Detail);
        // The run, then a capture-only run per retake; never a verdict about the bug.
        Assert.Equal(["run", "recapture1", "recapture2"], cell.Runs.Select(r => r.Label).ToArray());
    }

    /// <summary>Marker, 3 s asleep (no CPU), then a busy loop until the shell itself has used 2 s of CPU (its own
    /// utime + stime in /proc, in clock ticks): a run that gets no CPU after its marker, then its work, however loaded
    /// the host is (a loop bounded by wall time got less than the 1 s of CPU asked for in a loaded make test).</summary>
    private const string SleepsThenWorks =
        "sleep 3\nwhile :; do read -r l < /proc/$$/stat; set -- ${l##*) }; [ $(( ${12} + ${13} )) -ge 200 ] && break; done";

    [Fact]
    public async Task OnTheCpuClockTheDelayWaitsForCpuNotForTheWallClock()
    {
        // A fixed Roslyn compile that the host starves met its 6 s snapshot as it ended (a capture error on a clean
        // cell): on the CPU clock the delay is CPU too. 1 s of CPU after the marker comes after the 3 s sleep.
        var (cell, _) = await RunAsync(0, SleepsThenWorks, "\"timeoutSec\": 20, \"clock\": \"cpu\"",
                                       "\"delaySec\": 1, \"intervalSec\": 0.4, \"count\": 1, \"retakes\": 0");
        var snapshot = Assert.Single(cell.CapturesNow());
        Assert.True(snapshot.AtSeconds >= 3.5, $"taken {snapshot.AtSeconds:0.00} s after the start, before the run had 1 s of CPU");
        Assert.Empty(cell.CaptureErrors);
    }

    [Fact]
    public async Task OnTheWallClockTheSameDelayIsWallSeconds()
    {
        // The control: the same program and delay on the wall clock is dumped during the sleep.
        var (cell, _) = await RunAsync(0, SleepsThenWorks, "\"timeoutSec\": 20",
                                       "\"delaySec\": 1, \"intervalSec\": 0.4, \"count\": 1, \"retakes\": 0");
        var snapshot = Assert.Single(cell.CapturesNow());
        Assert.True(snapshot.AtSeconds < 3, $"taken {snapshot.AtSeconds:0.00} s after the start, after the sleep");
    }
}
