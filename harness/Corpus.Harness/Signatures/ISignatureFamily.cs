using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>
/// A signature family: how a cell is run (once, repeated, swept over sizes, watched over time) and how its runs
/// are judged. It sets the cell's outcome and detail; evidence families are checked on top by the runner.
/// Adding a family is one class and one line in <see cref="SignatureFamilies.All"/>.
/// </summary>
public interface ISignatureFamily
{
    string Name { get; }

    /// <summary>Whether this family runs a case with this signature (the first that says yes runs it).</summary>
    bool Runs(Signature signature);

    Task RunAsync(ICellRuns runs, CellResult cell);

    /// <summary>
    /// Its runs hold still for seconds after their marker (a hang), so a live capture has time: winedbg may attach
    /// to .NET under Wine. It also puts the cells in the alongside lane.
    /// </summary>
    bool Waits => false;

    /// <summary>Where a run of many cells schedules this family's cells (<see cref="Lanes"/>).</summary>
    CellLane Lane => Waits ? CellLane.Alongside : CellLane.Busy;
}

public static class SignatureFamilies
{
    public static readonly IReadOnlyList<ISignatureFamily> All =
        [new ComplexityFamily(), new StatisticsFamily(), new ShmemFamily(), new FixtureFamily(), new HangFamily(), new ProcessFamily()];

    public static ISignatureFamily For(Signature s, IReadOnlyList<ISignatureFamily>? families = null) =>
        (families ?? All).First(f => f.Runs(s));
}

/// <summary>One contained run of the cell's program, as a family asks for it.</summary>
/// <param name="Markers">Seconds from start at which each distinct REPRO-REACHED line first appeared.</param>
public sealed record RunOutput(RunResult Run, IReadOnlyDictionary<string, double> Metrics, IReadOnlyDictionary<string, double> Markers);

/// <summary>What a family may do with a cell: start contained runs of its program and report progress.</summary>
public interface ICellRuns
{
    Manifest Manifest { get; }
    CaseSpec Case { get; }
    string Variant { get; }
    Subject Subject { get; }
    /// <summary>The cell's artifact folder.</summary>
    string Dir { get; }
    /// <summary>Races: exactly this many runs, to measure a rate.</summary>
    int? ForceRuns { get; }
    void Progress(string message);

    /// <param name="n">The size of a sweep, substituted for {n}; null elsewhere.</param>
    /// <param name="timed">The timed capture to run alongside, or null.</param>
    /// <param name="alongside">Watches the live process (e.g. a memory probe) until it exits.</param>
    /// <param name="exited">Called as soon as the run ends, before its crash capture is read.</param>
    /// <param name="untilCaptured">End the run once its timed capture is done (procdump -n: the count is reached):
    /// for a run that exists only to be captured.</param>
    Task<RunOutput> ExecuteAsync(long? n, string label, TimedCapture? timed,
                                 Func<ContainedProcess, Task>? alongside = null, Action<RunResult>? exited = null,
                                 bool untilCaptured = false);

    /// <summary>Drops a clean run's files (hundreds of race runs keep only the first).</summary>
    void DeleteRun(RunResult run, string label);
}
