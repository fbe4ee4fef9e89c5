using Corpus.Harness.Json;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Model;

/// <summary>
/// On a crash: keep the core, and optionally record every free() (freelog) to name who freed what. RingFile: where
/// no core is written (a Windows program, also under Wine), the event ring file the program's crash handler writes
/// into its working folder (eventring::WriteTo), read in place of the core.
/// </summary>
public sealed record CrashCapture(bool Core, bool Freelog, string? RingFile = null)
{
    public static CrashCapture Read(Fields f)
    {
        f.AllowOnly("core", "freelog", "ringFile");
        var ring = f.StringOr("ringFile", null);
        if (ring is not null && (ring.Length == 0 || ring.IndexOfAny(['/', '\\']) >= 0 || ring is "." or ".."))
            throw f.Error($"'{ring}' must be a plain file name (it is written into the run's folder)", "ringFile");
        return new CrashCapture(f.BoolOr("core", true), f.BoolOr("freelog", false), ring);
    }
}

/// <summary>
/// After a reproduction, the case once more under gdb's process record (`record full`): Script, a gdb Python script
/// in the repro's folder, records the failing run and walks back through its history; its output must show Shows.
/// Subjects: where gdb can record the program (not every build decodes under record full).
/// </summary>
/// <param name="Retakes">A walk that showed nothing, for no reason of the host's, is recorded again this many times at most.</param>
public sealed record TimeTravelCapture(string Script, string Shows, IReadOnlyList<string> Subjects, int Retakes = TimedCapture.DefaultRetakes)
{
    public static TimeTravelCapture Read(Fields f, string dir)
    {
        f.AllowOnly("script", "shows", "subjects", "retakes");
        var script = f.String("script");
        var full = Path.GetFullPath(Path.Combine(dir, script));
        if (!full.StartsWith(dir + Path.DirectorySeparatorChar) || !System.IO.File.Exists(full))
            throw f.Error($"'{script}' is not a file in the repro's folder", "script");
        return new TimeTravelCapture(full, f.RegexOr("shows", required: true)!, f.NameList("subjects"),
                                     f.IntOr("retakes", TimedCapture.DefaultRetakes, min: 0, max: 10)!.Value);
    }
}

/// <summary>procdump -s/-n semantics, started when a marker line appears.</summary>
/// <param name="Core">After the series, one native core of the process with Debian's procdump (for gdb).</param>
/// <param name="MemoryMB">procdump -M: the first snapshot waits until the run's memory reaches this, at most delaySec
/// after the marker (a run that spins without allocating is still captured).</param>
/// <param name="Retakes">When every snapshot of a run came out short (<see cref="Capture.CaptureRecord.Short"/>), at most
/// this many more are taken, an interval apart, while the run lives; and a capture-only run is started again as often.</param>
public sealed record TimedCapture(string Marker, double DelaySec, double IntervalSec, int Count, bool Heap, bool Core = false,
                                  int? MemoryMB = null, int Retakes = TimedCapture.DefaultRetakes)
{
    public const int DefaultRetakes = 2;

    public static TimedCapture Read(Fields f)
    {
        f.AllowOnly("marker", "delaySec", "intervalSec", "count", "heap", "core", "memoryMB", "retakes");
        // The marker is matched literally (line.Contains), so any text is fine.
        return new TimedCapture(f.String("marker"), f.NumberOr("delaySec", 0, min: 0, max: 3600)!.Value,
                                f.NumberOr("intervalSec", 1, min: 0, above: true, max: 3600)!.Value,
                                f.IntOr("count", 3, min: 1, max: 100)!.Value,
                                f.BoolOr("heap", false), f.BoolOr("core", false), f.IntOr("memoryMB", null, min: 16, max: 1048576),
                                f.IntOr("retakes", DefaultRetakes, min: 0, max: 10)!.Value);
    }
}

/// <summary>
/// A trace of what the program did over time (the trace capture): one dedicated run of the cell, after its family's
/// verdict (reproduced or clean), on the subject's trace backend (ISubjectKind.TraceBackend). Kind: what is traced:
/// "cpu" (stack samples), "alloc" (allocation samples or events), "faults" (page faults), "api" (calls into an API:
/// Wine's WINEDEBUG channels, syscalls). Channels: Wine debug channels ("+win", "+msg"). Events: perf events
/// ("cpu-clock", "page-faults"). Syscalls: syscalls a syscall trace records ("mmap", "munmap", "close").
/// </summary>
/// <param name="Size">The {n} of the traced run in a sweep (required there).</param>
/// <param name="Subjects">The subjects traced; empty: every subject of the case.</param>
/// <param name="FrequencyHz">Sampling rate where the backend takes one (Mono's log profiler, perf); null: the backend's default.</param>
/// <param name="TimeoutSec">The traced run's time cap, when tracing makes it slower than the case's budget allows.</param>
public sealed partial record TraceCapture(string Kind, IReadOnlyList<string> Subjects, long? Size, int? FrequencyHz,
                                          IReadOnlyList<string> Channels, IReadOnlyList<string> Events,
                                          IReadOnlyList<string> Syscalls, int? TimeoutSec)
{
    /// <summary>The registered trace analysers this case switches on (<see cref="Capture.Traces.ITraceAnalyser"/>).</summary>
    public IReadOnlyList<string> Analysers { get; init; } = [];

    /// <summary>How often a traced run that could not be taken or read is started again.</summary>
    public int Retakes { get; init; } = TimedCapture.DefaultRetakes;

    public const string Cpu = "cpu", Alloc = "alloc", Faults = "faults", Api = "api";
    public static readonly IReadOnlyDictionary<string, string> Kinds =
        new Dictionary<string, string> { [Cpu] = Cpu, [Alloc] = Alloc, [Faults] = Faults, [Api] = Api };

    public bool Traces(string subject) => Subjects.Count == 0 || Subjects.Contains(subject);

    public const string LargestFinished = "largest-finished";

    /// <summary>"size": "largest-finished": the traced run takes the largest {n} of the cell's sweep that exited 0.</summary>
    public bool SizeIsLargestFinished { get; init; }

    public static TraceCapture Read(Fields f)
    {
        f.AllowOnly("kind", "subjects", "size", "frequencyHz", "channels", "events", "syscalls", "timeoutSec", "analysers", "retakes");
        // "largest-finished": the largest size of the sweep whose run finished (exit 0), decided by the cell's own runs:
        // a compiler that hangs at 16 levels is traced at 14, one that hangs at 20 at 18.
        var largest = f.IsString("size");
        if (largest && f.StringOr("size", null) != LargestFinished)
            throw f.Error($"must be a size (a whole number) or '{LargestFinished}', found '{f.StringOr("size", null)}'", "size");
        var sizes = f.Has("size") && !largest ? f.NumberOr("size", null, min: 1, max: 1e12) : null;
        if (sizes is { } sz && sz != Math.Floor(sz)) throw f.Error($"must be a whole number, found {sz}", "size");
        var spec = new TraceCapture(f.Enum("kind", Kinds), f.Strings("subjects", required: false, nonEmpty: false),
                                    sizes is null ? null : (long)sizes.Value, f.IntOr("frequencyHz", null, min: 1, max: 20000),
                                    f.Strings("channels", required: false, nonEmpty: false),
                                    f.Strings("events", required: false, nonEmpty: false),
                                    f.Strings("syscalls", required: false, nonEmpty: false),
                                    f.IntOr("timeoutSec", null, min: 1, max: 86400))
                   {
                       SizeIsLargestFinished = largest, Analysers = f.Strings("analysers", required: false, nonEmpty: false),
                       Retakes = f.IntOr("retakes", TimedCapture.DefaultRetakes, min: 0, max: 10)!.Value,
                   };
        // They end up on a command line (WINEDEBUG=…, perf -e …): plain names only.
        for (var i = 0; i < spec.Channels.Count; i++)
            if (!Channel().IsMatch(spec.Channels[i]))
                throw f.Error($"'{spec.Channels[i]}' is not a Wine debug channel setting such as '+win', '-all' or 'warn+msg'", $"channels[{i}]");
        for (var i = 0; i < spec.Events.Count; i++)
            if (!EventName().IsMatch(spec.Events[i]))
                throw f.Error($"'{spec.Events[i]}' is not an event name such as 'cpu-clock' or 'syscalls:sys_enter_munmap'", $"events[{i}]");
        for (var i = 0; i < spec.Syscalls.Count; i++)
            if (!SyscallName().IsMatch(spec.Syscalls[i]))
                throw f.Error($"'{spec.Syscalls[i]}' is not a syscall name such as 'munmap'", $"syscalls[{i}]");
        if (spec.Channels.Count > 0 && spec.Kind != Api)
            throw f.Error($"channels are traced calls: they need kind 'api', not '{spec.Kind}'", "channels");
        return spec;
    }

    [System.Text.RegularExpressions.GeneratedRegex("^(trace|warn|err|fixme)?[+-][A-Za-z0-9_]+$")]
    private static partial System.Text.RegularExpressions.Regex Channel();

    [System.Text.RegularExpressions.GeneratedRegex("^[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+)?$")]
    private static partial System.Text.RegularExpressions.Regex EventName();

    [System.Text.RegularExpressions.GeneratedRegex("^[a-z0-9_]+$")]
    private static partial System.Text.RegularExpressions.Regex SyscallName();
}
