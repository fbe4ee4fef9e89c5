using Corpus.Harness.Containment;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Capture.Traces;

/// <summary>
/// Windows Performance Recorder around a run on Windows (ETW, the write-ups' own tool): `wpr -start PROFILE -filemode`
/// before the program starts, `wpr -stop FILE.etl` after it ends, `wpr -cancel` when the run broke in between. ETW
/// sessions are machine-wide, so the trace holds every process, and only one wpr recording may run at a time: a second
/// -start fails and says so. Found through CORPUS_WPR, else PATH (System32 has it on Windows 10 and later). Not on
/// Linux, where it is unavailable with the reason, like procdump.exe and TTD.exe.
/// </summary>
public sealed class WprTrace : ITraceBackend
{
    public const string Variable = "CORPUS_WPR";
    private const string Install = "wpr.exe ships with Windows 10 and the Windows Performance Toolkit (ADK); or set CORPUS_WPR to wpr.exe";

    private readonly IToolRunner _runner;

    public WprTrace(IToolRunner runner, string? exe = null, bool? isWindows = null, string? searchPath = null)
    {
        _runner = runner;
        (Path, Unavailable) = WindowsTools.Locate("wpr.exe", Variable, Install, isWindows, exe, searchPath);
    }

    public string Name => "wpr";
    public string? Path { get; }
    public string? Unavailable { get; }

    /// <summary>The profile of a manifest's trace: its first `events` entry when given (a built-in profile or a .wprp file), else the kind's.</summary>
    public static string Profile(Model.TraceCapture spec) => spec.Events.Count > 0 ? spec.Events[0] : Profile(PerfTrace.KindOf(spec.Kind));

    /// <summary>Starts the recording just before the run: the launch itself is unchanged (ETW sees every process).</summary>
    public Launch Wrap(Launch launch, TraceRun run)
    {
        Start(Profile(run.Spec));
        return launch;
    }

    /// <summary>
    /// Stops the recording into trace.etl. The ETL is kept for WPA and not read into the model here: no ETW reader runs on
    /// Linux, where this was written (TraceEvent's ETWTraceEventSource would read it on Windows), so evidence that needs
    /// its events fails there with this note rather than passing.
    /// </summary>
    public Task<TraceModel> ReadAsync(TraceRun run, RunResult result, CancellationToken cancel)
    {
        var etl = run.File("trace.etl");
        try { Stop(etl); }
        catch (InvalidOperationException e) { throw new TraceException(e.Message); }
        return Task.FromResult(new TraceModel(run.Spec.Kind, "samples", [], [])
            { Files = [etl], Note = "wpr: trace.etl kept for WPA (Windows Performance Analyzer); its events are not read into the model" });
    }

    /// <summary>
    /// The built-in profile of a trace kind: CPU sampling; VirtualAllocation (VirtualAlloc/Free, the NGen write-up's
    /// trace); ReferenceSet (pages touched and faulted); Handle (handle creation and close, which shows a section that is
    /// never closed). A manifest may name another built-in profile or a .wprp file.
    /// </summary>
    public static string Profile(NativeTraceKind kind) => kind switch
    {
        NativeTraceKind.Cpu => "CPU",
        NativeTraceKind.Alloc => "VirtualAllocation",
        NativeTraceKind.Faults => "ReferenceSet",
        NativeTraceKind.Api => "Handle",
        _ => throw new ArgumentOutOfRangeException(nameof(kind)),
    };

    public static IReadOnlyList<string> StartArgs(string profile) => ["-start", profile, "-filemode"];

    public static IReadOnlyList<string> StopArgs(string etl) => ["-stop", etl];

    public static IReadOnlyList<string> CancelArgs => ["-cancel"];

    /// <summary>Starts the recording; throws with wpr's own words when it refuses (another recording, no elevation).</summary>
    public void Start(string profile)
    {
        if (Unavailable is { } why) throw new PlatformNotSupportedException(why);
        var r = _runner.Run(Path!, StartArgs(profile), TimeSpan.FromMinutes(2));
        if (r.TimedOut || r.ExitCode != 0) throw new InvalidOperationException(r.Describe("wpr -start"));
    }

    /// <summary>Stops it and merges the trace into etl (wpr merges the kernel and user sessions, which takes a while).</summary>
    public long Stop(string etl)
    {
        if (Unavailable is { } why) throw new PlatformNotSupportedException(why);
        var r = _runner.Run(Path!, StopArgs(etl), TimeSpan.FromMinutes(10));
        if (r.TimedOut || r.ExitCode != 0)
        {
            _runner.Run(Path!, CancelArgs, TimeSpan.FromMinutes(1));
            throw new InvalidOperationException(r.Describe("wpr -stop"));
        }
        return File.Exists(etl) ? new FileInfo(etl).Length : throw new InvalidOperationException($"wpr -stop wrote no {etl}: {r.Describe("wpr")}");
    }

    /// <summary>Ends a recording that must not be kept (the run failed before it could be stopped).</summary>
    public void Cancel()
    {
        if (Unavailable is null) _runner.Run(Path!, CancelArgs, TimeSpan.FromMinutes(1));
    }
}
