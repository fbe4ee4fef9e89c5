using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>
/// One kind of subject (Mono, CoreCLR, a native OS, …): everything the runner needs to know about it. Adding a
/// kind is one class, one registration (<see cref="SubjectKinds.With(ISubjectKind)"/>, or a line in
/// <see cref="SubjectKinds.Default"/> for a built-in) and its tests; the runner never switches on kinds.
/// </summary>
public interface ISubjectKind
{
    /// <summary>Short name of the kind, as written before the colon of a user's subject ("mono" in mono:PATH).</summary>
    string Name { get; }

    /// <summary>The built-in subject names of this kind that can be listed (e.g. net10, net8); see <see cref="Owns"/>.</summary>
    IReadOnlyList<string> BuiltIns { get; }

    /// <summary>Whether a manifest may name this subject: one of <see cref="BuiltIns"/>, or a kind's open form (roslyn:VERSION).</summary>
    bool Owns(string name) => BuiltIns.Contains(name);

    /// <summary>How the built-in names are written, for messages: the names, or the open form ("roslyn:VERSION").</summary>
    IReadOnlyList<string> BuiltInForms => BuiltIns;

    /// <summary>Prefixes this kind accepts for a user's build, "kind:PATH"; empty when it takes none.</summary>
    IReadOnlyList<string> UserPrefixes { get; }

    /// <summary>What a user's PATH names, for the usage text ("the mono executable").</summary>
    string UserPathMeaning { get; }

    /// <summary>What a subject of this kind can do (a built-in name or a user's kind:PATH); one program type among them.</summary>
    SubjectCapabilities Capabilities(string subject);

    /// <summary>
    /// Null when the subject can run the case, otherwise the manifest field and the reason. Manifest validation,
    /// selection and the runner all ask this; <paramref name="kinds"/> are the run's kinds, whose built-ins the reason
    /// names (the subjects that can).
    /// </summary>
    Unrunnable? Validate(CaseSpec cs, string subject, SubjectKinds kinds) => ProgramTypes.Check(Capabilities(subject), cs, subject, kinds);

    /// <summary>A subject of this kind that cannot be provisioned here is reported, not gated (a compiler version NuGet lacks).</summary>
    bool UnavailableIsUnchecked => false;

    /// <summary>Resolves a built-in name or a user's path. Never throws for a missing path: that is <see cref="Subject.Unavailable"/>.</summary>
    Subject Resolve(string spec, string? userPath, string root);

    /// <summary>
    /// Builds what the subject's cells need beyond the subject itself (Wine's template prefix, its cross-built
    /// GoogleTest), once a cell is to run on it; listing or selecting subjects never does. Null when ready, otherwise why
    /// not (the cell is then unsupported with that reason).
    /// </summary>
    string? Provision(Subject s, string root) => null;

    /// <summary>
    /// The subject once <see cref="Provision"/> has run: unavailable with its reason, or, for a kind whose subject is
    /// only known once fetched (net:VERSION, roslyn:VERSION), resolved again from what was fetched.
    /// </summary>
    Subject Provisioned(Subject s, string root) => Provision(s, root) is { } why ? s with { Unavailable = why } : s;

    /// <summary>The build of the repro this subject runs; null with the reason when the manifest has none for it.</summary>
    BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs);

    /// <summary>
    /// The build of this subject's program made on another OS, for a harness there to find up to date (the windows
    /// flavor, cross-built with mingw-w64 on Linux by `corpus winsmoke`); null when there is none.
    /// </summary>
    BuildRecipe? CrossBuild(Subject s, Manifest m, CaseSpec cs) => null;

    /// <summary>The command and environment that run a built program on this subject.</summary>
    Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options);

    /// <summary>Per-cell isolation (a private prefix, display or tmp dir), set up before the first run of a cell.</summary>
    CellIsolation Isolate(Subject s, string cellDir);

    /// <summary>The backend for timed snapshots of a live process.</summary>
    ICaptureBackend SnapshotBackend(Subject s, CaptureContext context);

    /// <summary>
    /// Null when a subject of this kind can take the trace (capture.trace) at all; otherwise why not. Manifest validation
    /// asks it for every traced subject of a case, so a case never asks a kind for a trace it has no backend for.
    /// </summary>
    string? TraceUnsupported(string subject, TraceCapture trace) => $"the {Name} subject kind has no trace backend";

    /// <summary>
    /// The backend that traces a run of this subject (dotnet-trace, Mono's log profiler, perf, WINEDEBUG, wpr). One whose
    /// tool is missing here says so through <see cref="ITraceBackend.Unavailable"/> (a capture error, the cell an error
    /// where its evidence reads the trace).
    /// </summary>
    ITraceBackend TraceBackend(Subject s, TraceCapture trace, CaptureContext context) =>
        new UnavailableTraceBackend("trace", TraceUnsupported(s.Name, trace) ?? $"the {Name} subject kind has no trace backend");

    /// <summary>The executable gdb needs to read a core of a crashed run (the real binary behind a launcher).</summary>
    string CrashExecutable(Subject s, string program);

    /// <summary>The `runtime` line in the report: what exactly ran.</summary>
    string Describe(Subject s);
}

/// <param name="File">The program to exec.</param>
/// <param name="Env">Environment added to the harness's own.</param>
public sealed record Launch(string File, IReadOnlyList<string> Args, IReadOnlyDictionary<string, string> Env);

/// <param name="PerfMap">The run is a crash capture with freelog: ask the runtime for a perf map of JIT code.</param>
/// <param name="Display">The case makes windows (manifest `display`): a kind that can, gives the run a display.</param>
public sealed record LaunchOptions(IReadOnlyDictionary<string, string> Env, bool PerfMap, bool Display = false);

/// <param name="Heap">The case asks snapshots for heap statistics.</param>
/// <param name="HoldsStill">The case's family holds still (a hang): the process stays put for seconds after the marker.</param>
public sealed record CaptureContext(IToolRunner Tools, string Root, bool Heap, bool HoldsStill = false);

/// <summary>
/// What a cell gets around its runs and must give back afterwards. The default is nothing; kinds that need a
/// private prefix, display or tmp dir override it and add to the environment of every run.
/// </summary>
public class CellIsolation : IDisposable
{
    public static readonly CellIsolation None = new();

    /// <summary>Environment every run of the cell gets (e.g. WINEPREFIX, TMPDIR, DISPLAY).</summary>
    public virtual IReadOnlyDictionary<string, string> Env => new Dictionary<string, string>();

    /// <summary>One line for the report on what was set up, or null for none.</summary>
    public virtual string? Describe => null;

    /// <summary>What the isolation's own processes were doing when a run never reached the program (they may be why),
    /// or null when it keeps none between runs.</summary>
    public virtual string? StateAfterLaunchFailure() => null;

    public virtual void Dispose() => GC.SuppressFinalize(this);
}
