using Corpus.Harness.Capture;

namespace Corpus.Harness.Runner;

/// <summary>
/// What one run, or one step of a cell after its runs, found besides the run's summary: captures, capture errors, the
/// free() facts of a crash core, and the attempts that never reached the program. Each phase of a run makes its own
/// and returns it (<see cref="Phases.TimedCaptures"/>, <see cref="Phases.IRunPlatform.Collect"/>); the launcher joins
/// them and records the whole run in the cell in one step (<see cref="CellResult.Record"/>), so nothing is written into
/// the cell while a run goes on.
/// </summary>
public sealed class RunFindings
{
    public List<CaptureRecord> Captures { get; } = [];
    public List<string> CaptureErrors { get; } = [];
    /// <summary>Double-free facts read from crash cores, by run label.</summary>
    public Dictionary<string, FreelogAnalysis> CrashFacts { get; } = [];
    /// <summary>What each attempt that never reached the program said (<see cref="RunLauncher.LaunchAttempts"/>).</summary>
    public List<string> LaunchRetries { get; } = [];

    public static RunFindings Error(string message) => new() { CaptureErrors = { message } };
    public static RunFindings Of(CaptureRecord capture) => new() { Captures = { capture } };

    /// <summary>This one with <paramref name="other"/>'s findings added after its own.</summary>
    public RunFindings With(RunFindings? other)
    {
        if (other is null) return this;
        Captures.AddRange(other.Captures);
        CaptureErrors.AddRange(other.CaptureErrors);
        foreach (var kv in other.CrashFacts) CrashFacts[kv.Key] = kv.Value;
        LaunchRetries.AddRange(other.LaunchRetries);
        return this;
    }
}
