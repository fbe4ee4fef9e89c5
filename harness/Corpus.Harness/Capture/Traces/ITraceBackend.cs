using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Capture.Traces;

/// <summary>
/// The trace run's folders and settings, handed to the backend. Dir holds what the tool writes (contained in the
/// cell's folder, ledgered and pruned with it); Tmp is the run's private TMPDIR (diagnostic sockets, the tool's
/// scratch), removed after the run.
/// </summary>
public sealed record TraceRun(TraceCapture Spec, string Dir, string Tmp, string Label, IToolRunner Tools, string Root)
{
    /// <summary>A file of this trace in its folder: "trace.nettrace", "trace.mlpd", "perf.data".</summary>
    public string File(string name) => Path.Combine(Dir, name);

    /// <summary>Set for ReadAsync: each REPRO-REACHED line of the traced run and when it first appeared (seconds since the
    /// run's start), so a backend can place the program's markers among its events (a leak judged at its marker).</summary>
    public IReadOnlyDictionary<string, double> Markers { get; init; } = new Dictionary<string, double>();

    /// <summary>The readings the case switched on (capture.trace.analysers), for the native backends.</summary>
    public IReadOnlyList<ITraceAnalyser> Analysers { get; init; } = [];
}

/// <summary>
/// A subject kind's way to trace a run (dotnet-trace for CoreCLR, Mono's log profiler, perf, WINEDEBUG, wpr). The
/// runner launches the traced run itself (containment, caps, ledger): the backend only changes its command and
/// environment, then reads what the tool wrote into the common <see cref="TraceModel"/>.
/// </summary>
public interface ITraceBackend
{
    /// <summary>"dotnet-trace", "mono-log-profiler", "perf", "winedebug", "wpr".</summary>
    string Name { get; }

    /// <summary>Null when usable here; otherwise why not (the tool is missing, Windows only): a capture error.</summary>
    string? Unavailable { get; }

    /// <summary>The traced run's command: the subject's launch wrapped by the tool, or with the tool's environment.</summary>
    Launch Wrap(Launch launch, TraceRun run);

    /// <summary>After the run (whatever its status): the tool's output read into the model. Throws <see cref="TraceException"/> when it cannot.</summary>
    Task<TraceModel> ReadAsync(TraceRun run, RunResult result, CancellationToken cancel);
}

/// <summary>A trace that was asked for and could not be read: the message says what is missing.</summary>
public sealed class TraceException(string message) : Exception(message);

/// <summary>
/// The backend of a subject that cannot take this trace here (wpr off Windows; a tool that is missing). Subjects that
/// cannot take it at all say so earlier, through <see cref="ISubjectKind.TraceUnsupported"/>.
/// </summary>
public sealed class UnavailableTraceBackend(string name, string why) : ITraceBackend
{
    public string Name => name;
    public string? Unavailable => why;
    public Launch Wrap(Launch launch, TraceRun run) => throw new InvalidOperationException($"{name}: {why}");
    public Task<TraceModel> ReadAsync(TraceRun run, RunResult result, CancellationToken cancel) => throw new TraceException($"{name}: {why}");
}
