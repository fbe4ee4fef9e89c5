using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Containment;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>
/// A signature family: how a cell is run (once, repeated, swept over sizes, watched over time) and how its runs are
/// judged. It owns its block of the manifest's signature (<see cref="Key"/>), reads and validates it, runs the cell
/// and returns a <see cref="Verdict"/>; evidence checks are applied on top by the runner. Adding a family is one
/// class and one registration (<see cref="SignatureFamilies.With(ISignatureFamily)"/>).
/// </summary>
public interface ISignatureFamily
{
    /// <summary>Its key in a case's "signature" object, e.g. "complexity".</summary>
    string Key { get; }

    /// <summary>
    /// The family this one refines, when both blocks are given: "statistics" repeats the runs that "process"
    /// judges. A signature names one family, or one and the family it refines.
    /// </summary>
    string? Refines => null;

    /// <summary>Reads its own block; every error names the field.</summary>
    object ReadSpec(Fields f);

    /// <summary>Checks that need the whole case (arguments, budget, captures); throws a field error.</summary>
    void Validate(CaseSpec cs, Fields c) { }

    /// <summary>Whether its runs substitute a size for {n} in the arguments.</summary>
    bool SweepsSizes => false;

    /// <summary>It judges one run by its time and knows a starved run (budget "clock": "cpu" is for it alone).</summary>
    bool TakesCpuClock => false;

    /// <summary>
    /// Its runs hold still for seconds after their marker (a hang), so a live capture has time: winedbg may attach
    /// to .NET under Wine. Such a family's cells go in the alongside lane.
    /// </summary>
    bool HoldsStill => false;

    /// <summary>Where a run of many cells schedules this family's cells (<see cref="Lanes"/>).</summary>
    CellLane Lane => HoldsStill ? CellLane.Alongside : CellLane.Busy;

    Task<Verdict> RunAsync(IRunLauncher runs, CellResult cell);

    /// <summary>How `corpus compare` runs this family's cell on each subject; <paramref name="rounds"/> is its --rounds.</summary>
    ComparePlan PlanComparison(CaseSpec cs, int rounds) => ComparePlan.Once;

    /// <summary>
    /// One cell on a base and a new subject, from this family's facts: a verdict per round on each side, with the
    /// cell's final outcome (after evidence). The default compares outcomes only.
    /// </summary>
    CellComparison Compare(IReadOnlyList<Verdict> @base, IReadOnlyList<Verdict> @new) => Comparisons.OfOutcomes(@base, @new);

    /// <summary>
    /// Its facts as a finished run's facts.json holds them ("family.facts"), typed again for <see cref="Compare"/>
    /// (`corpus compare --from`); null when it does not read them back (the default), and compare runs the cell itself.
    /// </summary>
    object? ReadFacts(System.Text.Json.JsonElement facts) => null;
}

/// <summary>
/// The families and evidence checks of one corpus run: the one source the manifest reader, the lanes and the runner
/// all use. <see cref="Default"/> holds the built-ins; a test or a plug-in adds its own with <c>With</c>.
/// </summary>
public sealed class SignatureFamilies
{
    public static readonly SignatureFamilies Default = new(
        [new ProcessFamily(), new StatisticsFamily(), new ComplexityFamily(), new ShmemFamily(), new FixtureFamily(), new HangFamily()],
        [new StacksEvidence(), new HeapEvidence(), new LostUpdateEvidence(), new DoubleFreeEvidence(), new TraceEvidence(), new TimeTravelEvidence()])
        {
            Captures = [new TimedCaptureKind(), new CrashCaptureKind(), new TimeTravelCaptureKind(), new TraceCaptureKind()],
            Builds = [new DotnetBuildKind(), new MonoBuildKind(), new CmakeBuildKind(), new RoslynBuildKind()],
            Analysers = [new MappingLeakAnalyser(), new SetParentAttachAnalyser()],
        };

    public IReadOnlyList<ISignatureFamily> Families { get; }
    public IReadOnlyList<IEvidenceCheck> Evidence { get; }
    /// <summary>The trace analysers a case may switch on by key (capture.trace.analysers).</summary>
    public IReadOnlyList<ITraceAnalyser> Analysers { get; private init; } = [];
    /// <summary>The blocks a case's `capture` may hold, each read by its kind.</summary>
    public IReadOnlyList<ICaptureKind> Captures { get; private init; } = [];
    /// <summary>The blocks a manifest's `build` may hold, each read by its kind.</summary>
    public IReadOnlyList<IBuildKind> Builds { get; private init; } = [];

    public SignatureFamilies(IReadOnlyList<ISignatureFamily> families, IReadOnlyList<IEvidenceCheck> evidence)
    {
        var keys = families.Select(f => f.Key).Concat(evidence.Where(e => e.InSignature).Select(e => e.Key)).ToList();
        if (keys.GroupBy(k => k).FirstOrDefault(g => g.Count() > 1) is { } twice)
            throw new ArgumentException($"two signature blocks are named '{twice.Key}'");
        foreach (var f in families.Where(f => f.Refines is not null && families.All(b => b.Key != f.Refines)))
            throw new ArgumentException($"family '{f.Key}' refines '{f.Refines}', which is not registered");
        (Families, Evidence) = (families, evidence);
    }

    public SignatureFamilies With(ISignatureFamily family) => new([.. Families, family], Evidence) { Analysers = Analysers, Captures = Captures, Builds = Builds };
    public SignatureFamilies With(IEvidenceCheck check) => new(Families, [.. Evidence, check]) { Analysers = Analysers, Captures = Captures, Builds = Builds };

    public SignatureFamilies With(ITraceAnalyser analyser) =>
        Analysers.Any(a => a.Key == analyser.Key) ? throw new ArgumentException($"two trace analysers are named '{analyser.Key}'")
            : new(Families, Evidence) { Analysers = [.. Analysers, analyser], Captures = Captures, Builds = Builds };

    public SignatureFamilies With(IBuildKind build) =>
        Builds.Any(k => k.Key == build.Key) ? throw new ArgumentException($"two build blocks are named '{build.Key}'")
            : new(Families, Evidence) { Analysers = Analysers, Captures = Captures, Builds = [.. Builds, build] };

    public SignatureFamilies With(ICaptureKind capture) =>
        Captures.Any(k => k.Key == capture.Key) ? throw new ArgumentException($"two capture blocks are named '{capture.Key}'")
            : new(Families, Evidence) { Analysers = Analysers, Captures = [.. Captures, capture], Builds = Builds };

    /// <summary>The keys a signature may hold, for the manifest reader's unknown-field check.</summary>
    public IEnumerable<string> SignatureKeys =>
        Families.Select(f => f.Key).Concat(Evidence.Where(e => e.InSignature).Select(e => e.Key));

    /// <summary>The family that runs a signature (read by these families).</summary>
    public ISignatureFamily For(Signature s) =>
        Families.FirstOrDefault(f => f.Key == s.Family)
        ?? throw new ArgumentException($"no family '{s.Family}' is registered (families: {string.Join(", ", Families.Select(f => f.Key))})");
}

/// <summary>One contained run of the cell's program, as a family asks for it.</summary>
/// <param name="Markers">Seconds from start at which each distinct REPRO-REACHED line first appeared.</param>
public sealed record RunOutput(RunResult Run, ProgramMetrics Metrics, IReadOnlyDictionary<string, double> Markers);

/// <summary>What a family may do with a cell: start contained runs of its program and report progress.</summary>
public interface IRunLauncher
{
    Manifest Manifest { get; }
    CaseSpec Case { get; }
    string Variant { get; }
    Subject Subject { get; }
    /// <summary>The cell's artifact folder.</summary>
    string Dir { get; }
    /// <summary>Races: exactly this many runs, to measure a rate.</summary>
    int? ForceRuns { get; }
    /// <summary>The environment the program gets from the case and from --env (not the isolation's).</summary>
    IReadOnlyDictionary<string, string> Env { get; }
    void Progress(string message);

    /// <param name="n">The size of a sweep, substituted for {n}; null elsewhere.</param>
    /// <param name="timed">The timed capture to run alongside, or null.</param>
    /// <param name="alongside">Watches the live process (e.g. a memory probe) until it exits.</param>
    /// <param name="exited">Called as soon as the run ends, before its crash capture is read.</param>
    /// <param name="untilCaptured">End the run once its timed capture is done (procdump -n: the count is reached):
    /// for a run that exists only to be captured; its record says so (<see cref="RunSummary.CaptureOnly"/>).</param>
    Task<RunOutput> ExecuteAsync(long? n, string label, TimedCapture? timed,
                                 Func<ContainedProcess, Task>? alongside = null, Action<RunResult>? exited = null,
                                 bool untilCaptured = false);

    /// <summary>Drops a clean run's files (hundreds of race runs keep only the first).</summary>
    void DeleteRun(RunResult run, string label);

    /// <summary>
    /// The case's trace capture: one more run of the cell, on the subject's trace backend, read into the cell's trace
    /// (<see cref="CellResult.Trace"/>) and recorded with its cost (<see cref="CellResult.Traces"/>). Null when no
    /// trace was taken (the reason is a capture error). The runner calls it after the family's verdict.
    /// </summary>
    /// <param name="attempt">1 for the first traced run; a retake of one that came out short keeps the earlier ones' files.</param>
    Task<Capture.Traces.TraceRecord?> TraceAsync(TraceCapture trace, long? n, int attempt = 1) => Task.FromResult<Capture.Traces.TraceRecord?>(null);

    /// <summary>
    /// The case's native program once more under gdb's process record (the time-travel capture), its output in
    /// time-travel/; null when gdb could not be run.
    /// </summary>
    Task<(RunResult Run, string StdoutFile)> RecordAsync(TimeTravelCapture tt);
}
