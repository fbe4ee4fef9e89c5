using Corpus.Harness.Capture;
using Corpus.Harness.Model;

namespace Corpus.Harness.Runner;

/// <summary>How an outcome compares with expected/.</summary>
public enum GateStatus { Pass, Regression, XPass, Mismatch, Unchecked }

public sealed record RunSummary(string Label, string Status, double WallSeconds, long PeakBytes,
                                IReadOnlyDictionary<string, double> Metrics, string Containment)
{
    /// <summary>A run that existed only to be captured (ended once its snapshots were taken): its figures are not measured.</summary>
    public bool CaptureOnly { get; init; }
    /// <summary>The run's {n} in a sweep; null otherwise.</summary>
    public long? N { get; init; }
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
         .. CaptureErrors.Count > 0 ? new[] { $"{CaptureErrors.Count} capture error(s)" } : []];
    public Expectation? Expected { get; set; }
    public GateStatus Gate { get; set; }
    public string GateMessage { get; set; } = "";
    public Dictionary<string, object> Metrics { get; } = [];
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
    /// <summary>The cell's folder, where facts.json, cell.json and rerun.txt stay even when the rest is pruned.</summary>
    public string? RecordDir { get; init; }
    public required string Rerun { get; init; }
    public double Seconds { get; set; }

    public List<string> CaptureErrorsNow()
    {
        lock (CaptureErrors) return [.. CaptureErrors];
    }

    public static (GateStatus, string) Compare(Outcome actual, Expectation? expected)
    {
        if (expected is null) return (GateStatus.Unchecked, "no expectation recorded for this cell");
        if (actual == expected.Outcome) return (GateStatus.Pass, "as expected");
        if (expected.Outcome == Outcome.Clean && actual == Outcome.Reproduced)
            return (GateStatus.Regression, $"REGRESSION: expected clean ({expected.Reason}), but the bug reproduced");
        if (expected.Outcome == Outcome.Reproduced && actual == Outcome.Clean)
            return (GateStatus.XPass,
                    $"XPASS: expected reproduced ({expected.Reason}), but it ran clean: the subject fixed the bug or the repro broke");
        return (GateStatus.Mismatch, $"expected {expected.Outcome.Name()}, got {actual.Name()}");
    }
}
