using Corpus.Harness.Capture;
using Corpus.Harness.Model;

namespace Corpus.Harness.Runner;

/// <summary>How an outcome compares with expected/.</summary>
public enum GateStatus { Pass, Regression, XPass, Mismatch, Unchecked, Inconclusive }

public static class GateStatuses
{
    /// <summary>The cell differs from expected/: the gate fails on it.</summary>
    public static bool Fails(this GateStatus g) => g is GateStatus.Regression or GateStatus.XPass or GateStatus.Mismatch or GateStatus.Inconclusive;
}

public sealed record RunSummary(string Label, string Status, double WallSeconds, long PeakBytes,
                                ProgramMetrics Metrics, string Containment)
{
    /// <summary>A run that existed only to be captured (ended once its snapshots were taken): its figures are not measured.</summary>
    public bool CaptureOnly { get; init; }
    /// <summary>The program ended by itself with exit code 0 (<see cref="Containment.RunResult.ExitedZero"/>).</summary>
    public bool ExitedZero { get; init; }
    /// <summary>The run's {n} in a sweep; null otherwise.</summary>
    public long? N { get; init; }
    /// <summary>On the CPU clock: the CPU seconds of the run's processes (<see cref="Containment.RunResult.CpuSeconds"/>).</summary>
    public double? CpuSeconds { get; init; }
}

public sealed record SeriesPoint(double X, double Y);

public sealed class CellResult
{
    public required CellKey Key { get; init; }
    public Outcome Outcome { get; set; }
    public string Detail { get; set; } = "";
    /// <summary>The key of the family that ran the cell, and what it decided; null when the cell never ran.</summary>
    public string? Family { get; set; }
    public Signatures.Verdict? Verdict { get; set; }
    /// <summary>What each evidence check found, in order.</summary>
    public List<Signatures.EvidenceResult> Evidence { get; } = [];
    /// <summary>The figures a person reads first: the family's, the evidence's, and the capture errors.</summary>
    public IReadOnlyList<string> KeyFigures =>
        [.. Verdict?.KeyFigures ?? [], .. Evidence.SelectMany(e => e.KeyFigures),
         .. CaptureErrors.Count > 0 ? new[] { $"{CaptureErrors.Count} capture error(s)" } : [],
         .. LaunchRetries.Count > 0 ? new[] { $"{LaunchRetries.Count} run(s) never reached the program, started again" } : []];
    public Expectation? Expected { get; set; }
    public GateStatus Gate { get; set; }
    public string GateMessage { get; set; } = "";
    /// <summary>What ran the cell: the subject kind's description of its runtime, and the cell's isolation.</summary>
    public string? Runtime { get; set; }
    public string? Isolation { get; set; }
    /// <summary>Variables set with --env for every run, and the knobs of the harness's own environment that reach the runs.</summary>
    public IReadOnlyDictionary<string, string>? Env { get; set; }
    public IReadOnlyDictionary<string, string>? InheritedEnv { get; set; }
    public Fixtures.FixtureFacts? Fixture { get; set; }
    public List<RunSummary> Runs { get; } = [];
    public List<CaptureRecord> Captures { get; } = [];
    /// <summary>The cell's traces (capture.trace): what each cost and where it is.</summary>
    public List<Capture.Traces.TraceRecord> Traces { get; } = [];
    /// <summary>The trace the evidence reads, in memory only (its files are in <see cref="Traces"/>).</summary>
    public Capture.Traces.TraceModel? Trace { get; set; }
    public List<string> CaptureErrors { get; } = [];
    /// <summary>Double-free facts read from crash cores, by run label.</summary>
    public Dictionary<string, FreelogAnalysis> CrashFacts { get; } = [];
    /// <summary>Size against time for the complexity plot; empty for other families.</summary>
    public List<SeriesPoint> Series { get; } = [];
    public string? SeriesMetric { get; set; }
    /// <summary>What the sweep's size counts (the manifest's complexity.sizeUnit), for the plot's axis.</summary>
    public string? SeriesUnit { get; set; }
    /// <summary>Named curves over run time (seconds), e.g. Shmem and RSS during a leak.</summary>
    public Dictionary<string, List<SeriesPoint>> TimeSeries { get; } = [];
    /// <summary>The cell's folder with its runs and captures; null once pruned (its records stay in <see cref="RecordDir"/>).</summary>
    public string? ArtifactDir { get; set; }
    /// <summary>The cell's folder, where facts.json and rerun.txt stay even when the rest is pruned.</summary>
    public string? RecordDir { get; init; }
    public required string Rerun { get; init; }
    public double Seconds { get; set; }
    /// <summary>Seconds building the cell's program (0 when the build was current), and provisioning its subject
    /// (a Wine template prefix, a cross-built GoogleTest: the first cell on the subject pays it).</summary>
    public double BuildSeconds { get; set; }
    public double ProvisionSeconds { get; set; }
    /// <summary>The lane the run put the cell in, and when it started, in seconds from the run's start.</summary>
    public string? Lane { get; init; }
    public double? StartedAt { get; init; }

    /// <summary>
    /// The cell's seconds by phase: its build, its measured runs, capture-only runs, traced runs, time travel, and the
    /// rest (isolation, reading dumps and cores, evidence). From the runs' own wall times, so they add up to
    /// <see cref="Seconds"/> with "other" taking what no run accounts for.
    /// </summary>
    public IReadOnlyDictionary<string, double> Phases
    {
        get
        {
            static bool Traced(RunSummary r) => r.Label.StartsWith("trace", StringComparison.Ordinal);
            var runs = RunsNow();
            var phases = new Dictionary<string, double>
            {
                ["provision"] = ProvisionSeconds,
                ["build"] = BuildSeconds,
                ["measure"] = runs.Where(r => !r.CaptureOnly && !Traced(r)).Sum(r => r.WallSeconds),
                ["capture"] = runs.Where(r => r.CaptureOnly && !Traced(r)).Sum(r => r.WallSeconds),
                ["trace"] = runs.Where(Traced).Sum(r => r.WallSeconds),
                ["timeTravel"] = CapturesNow().Where(c => c.Run == "time-travel").Sum(c => c.Seconds),
            };
            phases["other"] = Math.Max(0, Seconds - phases.Values.Sum());
            return phases.ToDictionary(kv => kv.Key, kv => Math.Round(kv.Value, 2));
        }
    }

    // Runs of a race may go two at once: each records itself here, in one step, the one place that locks; readers
    // during the cell take copies (…Now), readers after it use the lists.
    private readonly Lock _record = new();

    /// <summary>Records one run (its summary, when it reached the program) with what its phases found, or what a step
    /// of the cell after its runs found (a trace, a time-travel walk, a capture that could not be taken).</summary>
    public void Record(RunSummary? run, RunFindings findings)
    {
        lock (_record)
        {
            if (run is not null) Runs.Add(run);
            Captures.AddRange(findings.Captures);
            CaptureErrors.AddRange(findings.CaptureErrors);
            foreach (var kv in findings.CrashFacts) CrashFacts[kv.Key] = kv.Value;
            LaunchRetries.AddRange(findings.LaunchRetries);
        }
    }

    /// <summary>Records a traced run, and its model when it was read.</summary>
    public void Record(Capture.Traces.TraceRecord trace, Capture.Traces.TraceModel? model, RunFindings findings)
    {
        lock (_record)
        {
            Traces.Add(trace);
            if (model is not null) Trace = model;
        }
        Record(null, findings);
    }

    public FreelogAnalysis? CrashFactsOf(string label)
    {
        lock (_record) return CrashFacts.GetValueOrDefault(label);
    }

    /// <summary>Runs that never reached the program and were started again (<see cref="RunLauncher.LaunchAttempts"/>).</summary>
    public List<string> LaunchRetries { get; } = [];

    public void RemoveCaptureErrors(Predicate<string> match)
    {
        lock (_record) CaptureErrors.RemoveAll(match);
    }

    public List<string> CaptureErrorsNow()
    {
        lock (_record) return [.. CaptureErrors];
    }

    public List<CaptureRecord> CapturesNow()
    {
        lock (_record) return [.. Captures];
    }

    public List<RunSummary> RunsNow()
    {
        lock (_record) return [.. Runs];
    }

    /// <summary>Replaces each capture record with what <paramref name="change"/> makes of it.</summary>
    public void ChangeCaptures(Func<CaptureRecord, CaptureRecord> change)
    {
        lock (_record)
            for (var i = 0; i < Captures.Count; i++) Captures[i] = change(Captures[i]);
    }

    public static (GateStatus, string) Compare(Outcome actual, Expectation? expected)
    {
        if (expected is null) return (GateStatus.Unchecked, "no expectation recorded for this cell");
        if (actual == expected.Outcome) return (GateStatus.Pass, "as expected");
        if (actual == Outcome.Inconclusive)
            return (GateStatus.Inconclusive, $"INCONCLUSIVE: expected {expected.Outcome.Name()} ({expected.Reason}), but the measurement's budget ran out undecided");
        if (expected.Outcome == Outcome.Clean && actual == Outcome.Reproduced)
            return (GateStatus.Regression, $"REGRESSION: expected clean ({expected.Reason}), but the bug reproduced");
        if (expected.Outcome == Outcome.Reproduced && actual == Outcome.Clean)
            return (GateStatus.XPass,
                    $"XPASS: expected reproduced ({expected.Reason}), but it ran clean: the subject fixed the bug or the repro broke");
        return (GateStatus.Mismatch, $"expected {expected.Outcome.Name()}, got {actual.Name()}");
    }
}
