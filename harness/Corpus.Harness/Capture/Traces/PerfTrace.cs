using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Capture.Traces;

/// <summary>
/// Linux perf (Debian's linux-perf) around a native run: software events only, since these VMs have no hardware
/// counters. The run is launched as `perf record … -- program`, so perf leads the run's session and cgroup, dies with
/// the tree on a timeout, and, when the program ends, writes its file before it exits with the program's status (a
/// signal is raised again: a SIGSEGV run reads as SIGSEGV). Started beside the program instead (perf -p), a perf that
/// the run's end kills leaves a file `perf script` cannot read. Timestamps are CLOCK_MONOTONIC (-k), the clock of
/// .NET's Stopwatch on Linux less any time namespace's offset (<see cref="KernelClockOffset"/>), so events line up with
/// the run's markers.
/// </summary>
public sealed partial class PerfTrace : ITraceBackend
{
    public const string Variable = "CORPUS_PERF";
    public const string Install = "install Debian's linux-perf (make setup does), or set CORPUS_PERF to a perf binary";

    /// <summary>The syscalls an `api` trace records when the manifest names none: what a mapping's life is made of.</summary>
    public static readonly IReadOnlyList<string> MappingSyscalls = ["memfd_create", "openat", "mmap", "munmap", "close"];

    /// <summary>
    /// Stacks by DWARF unwinding of a copy of each sample's user stack (8 KB): the corpus's programs are built without
    /// frame pointers, where -g's chains stop at the first frame, and even with them a leaf such as munmap hides its
    /// caller. It costs size: 1.1 MB for filemapping_leak's 110 syscalls, 6.4 MB for 1.5 s of cpu-clock at 999 Hz.
    /// </summary>
    public static readonly IReadOnlyList<string> CallGraph = ["--call-graph", "dwarf"];

    /// <summary>cpu-clock samples per second (perf's -F): 999, off the 1 kHz tick, as perf's documentation advises.</summary>
    public const int CpuHz = 999;

    /// <summary>
    /// perf's ring buffer per CPU (-m), set as root, where no mlock limit applies. perf's default follows the host's
    /// kernel.perf_event_mlock_kb (516 KB here: about 60 syscall records with their 8 KB stacks), and a run whose perf
    /// is not scheduled while its program runs loses every record past that: a CI host lost the three views of a
    /// 54-record run. A run that still loses records has an incomplete trace, which <see cref="Read"/> refuses.
    /// </summary>
    public const string RootBuffer = "4M";

    public string Name => "perf";
    public string? Path { get; }
    public string? Unavailable { get; }
    private double _origin;

    /// <param name="configured">CORPUS_PERF's value (null: the environment's).</param>
    /// <param name="paranoid">/proc/sys/kernel/perf_event_paranoid (null: read it).</param>
    /// <param name="isRoot">null: ask the OS.</param>
    public PerfTrace(string? configured = null, bool? isLinux = null, int? paranoid = null, bool? isRoot = null)
    {
        if (!(isLinux ?? IHost.Current.Platform == IHost.Linux)) { Unavailable = "perf runs only on Linux"; return; }
        configured ??= Environment.GetEnvironmentVariable(Variable);
        if (!string.IsNullOrEmpty(configured))
        {
            if (!File.Exists(configured)) { Unavailable = $"{Variable}={configured}: no such file"; return; }
            Path = configured;
        }
        else if (SubjectKinds.Which("perf") is { } found) Path = found;
        else { Unavailable = $"perf is not on PATH and {Variable} is not set ({Install})"; return; }
        // Tracepoints (syscalls:*) need paranoid -1 or root; cpu-clock of one's own process needs at most 2.
        paranoid ??= ReadParanoid();
        isRoot ??= IHost.Current.UnixSignals && Environment.UserName == "root";
        if (isRoot != true && paranoid is > 1)
            Unavailable = $"kernel.perf_event_paranoid is {paranoid} and the harness is not root: perf may not trace (sysctl kernel.perf_event_paranoid=-1)";
    }

    private static int? ReadParanoid()
    {
        try { return int.Parse(File.ReadAllText("/proc/sys/kernel/perf_event_paranoid").Trim(), CultureInfo.InvariantCulture); }
        catch (Exception e) when (e is IOException or FormatException or UnauthorizedAccessException) { return null; }
    }

    /// <summary>The events of a kind: cpu-clock samples, page-fault samples, or syscall tracepoints (enter and exit).</summary>
    /// <param name="period">Faults: one sample every this many faults (perf's -c); null: 64.</param>
    public static IReadOnlyList<string> EventArgs(NativeTraceKind kind, IReadOnlyList<string>? syscalls = null, int? period = null, int? hz = null)
    {
        switch (kind)
        {
            case NativeTraceKind.Cpu:
                return ["-e", "cpu-clock", "-F", (hz ?? CpuHz).ToString(CultureInfo.InvariantCulture), .. CallGraph];
            case NativeTraceKind.Faults:
                return ["-e", "page-faults", "-c", (period ?? 64).ToString(CultureInfo.InvariantCulture), .. CallGraph];
            case NativeTraceKind.Alloc:
            case NativeTraceKind.Api:
                var names = syscalls is { Count: > 0 } ? syscalls
                    : kind == NativeTraceKind.Alloc ? ["mmap", "munmap", "brk", "mremap"] : MappingSyscalls;
                foreach (var n in names)
                    if (!SyscallName().IsMatch(n)) throw new ArgumentException($"'{n}' is not a syscall name");
                var events = names.SelectMany(n => new[] { $"syscalls:sys_enter_{n}", $"syscalls:sys_exit_{n}" });
                return ["-e", string.Join(',', events), .. CallGraph];
            default:
                throw new ArgumentOutOfRangeException(nameof(kind));
        }
    }

    /// <summary>
    /// The events of a manifest's capture.trace: its own perf `events` when it lists them (cpu-clock, page-faults,
    /// syscalls:sys_enter_munmap, …), else the kind's; `syscalls` for api and alloc; `frequencyHz` for cpu.
    /// </summary>
    public static IReadOnlyList<string> EventArgs(TraceCapture spec) =>
        spec.Events.Count > 0
            ? ["-e", string.Join(',', spec.Events), .. spec.FrequencyHz is { } hz ? new[] { "-F", hz.ToString(CultureInfo.InvariantCulture) } : [], .. CallGraph]
            : EventArgs(KindOf(spec.Kind), spec.Syscalls, hz: spec.FrequencyHz);

    public static NativeTraceKind KindOf(string kind) => kind switch
    {
        TraceCapture.Cpu => NativeTraceKind.Cpu,
        TraceCapture.Alloc => NativeTraceKind.Alloc,
        TraceCapture.Faults => NativeTraceKind.Faults,
        TraceCapture.Api => NativeTraceKind.Api,
        _ => throw new ArgumentException($"'{kind}' is not a trace kind"),
    };

    /// <summary>The traced run: perf record around the program, into the trace folder's perf.data.</summary>
    public Launch Wrap(Launch launch, TraceRun run)
    {
        // The run starts right after this; ReadAsync takes the run's own start when the result has it, since the first
        // run of a harness can spend tens of milliseconds getting from here to its clock (JIT), which moved a munmap
        // past its marker.
        _origin = (double)Stopwatch.GetTimestamp() / Stopwatch.Frequency;
        return Wrap(launch, run.File("perf.data"), EventArgs(run.Spec));
    }

    /// <summary>perf script over the run's perf.data (kept as perf.script.txt), then the common model: syscalls as events
    /// with their return value, samples root first, the run's markers as events, and the case's analysers' readings.</summary>
    public Task<TraceModel> ReadAsync(TraceRun run, RunResult result, CancellationToken cancel)
    {
        var data = run.File("perf.data");
        if (!File.Exists(data)) throw new TraceException($"perf wrote no {data} ({result.Status})");
        NativeTraceData raw;
        try { raw = Read(run.Tools, data, run.File("perf.script.txt"), result.StartedMonotonic > 0 ? result.StartedMonotonic : _origin); }
        catch (InvalidOperationException e) { throw new TraceException(e.Message); }
        return Task.FromResult(NativeTraceModel.FromPerf(run.Spec.Kind, raw, run.Markers, [data, run.File("perf.script.txt")], run.Analysers));
    }

    /// <summary>`perf record -q -k CLOCK_MONOTONIC [-m BUFFER] -o FILE EVENTS -- program args`.</summary>
    public static IReadOnlyList<string> RecordArgs(string dataFile, IReadOnlyList<string> events, string program, IReadOnlyList<string> args,
                                                   string? buffer = null) =>
        ["record", "-q", "-k", "CLOCK_MONOTONIC", .. buffer is null ? Array.Empty<string>() : ["-m", buffer], "-o", dataFile, .. events, "--", program, .. args];

    /// <summary>
    /// The run launched under perf record; its environment is the program's. As root, in a mount namespace of its own:
    /// perf mounts tracefs at /sys/kernel/tracing the first time it needs a syscall tracepoint, and that mount must
    /// not stay on the host. perf script needs no tracefs: perf.data carries the tracepoints' formats.
    /// </summary>
    /// <param name="buffer">perf's -m; null: <see cref="RootBuffer"/> as root, perf's default otherwise.</param>
    public Launch Wrap(Launch launch, string dataFile, IReadOnlyList<string> events, string? buffer = null)
    {
        if (Unavailable is { } why) throw new PlatformNotSupportedException(why);
        var root = Environment.UserName == "root";
        var record = RecordArgs(dataFile, events, launch.File, launch.Args, buffer ?? (root ? RootBuffer : null));
        return root && SubjectKinds.Which("unshare") is { } unshare
            ? launch with { File = unshare, Args = ["--mount", "--propagation", "private", "--", Path!, .. record] }
            : launch with { File = Path!, Args = record };
    }

    /// <summary>The fields `perf script` prints, fixed so <see cref="Parse"/> reads every kind the same way.</summary>
    public static IReadOnlyList<string> ScriptArgs(string dataFile) =>
        ["script", "-i", dataFile, "-F", "pid,tid,time,period,event,trace,ip,sym,dso", "--ns"];

    /// <summary>
    /// Runs perf script over a recorded file and parses it; origin is the run's start on CLOCK_MONOTONIC. A file in which
    /// perf lost records (perf script warns "Processed N events and lost M chunks!") is refused: a syscall trace with
    /// holes reads as calls that never happened.
    /// </summary>
    public NativeTraceData Read(IToolRunner runner, string dataFile, string textFile, double origin)
    {
        if (Unavailable is { } why) throw new PlatformNotSupportedException(why);
        var r = runner.Run(Path!, ScriptArgs(dataFile), TimeSpan.FromMinutes(5));
        File.WriteAllText(textFile, r.Stdout);
        if (r.TimedOut || r.ExitCode != 0) throw new InvalidOperationException(r.Describe("perf script"));
        if (Lost(r.Stderr) is { } lost)
            throw new InvalidOperationException($"perf lost records of {dataFile}: {lost}; its ring buffer (-m) filled before perf wrote it out");
        return Parse(r.Stdout, origin - KernelClockOffset);
    }

    /// <summary>
    /// How far this process's CLOCK_MONOTONIC runs ahead of the kernel's, in seconds. perf stamps its records with the
    /// kernel's clock; the run's start and markers are on ours, which a time namespace moves (a sandbox or a restored
    /// container may run the harness in one: 1000 s ahead, every unmap and close read 1000 s before the marker).
    /// </summary>
    private static readonly double KernelClockOffset =
        File.Exists("/proc/self/timens_offsets") ? MonotonicOffset(File.ReadAllText("/proc/self/timens_offsets")) : 0;

    /// <summary>The monotonic line of /proc/PID/timens_offsets ("monotonic  SECONDS  NANOSECONDS"); 0 without one.</summary>
    public static double MonotonicOffset(string timensOffsets)
    {
        foreach (var line in timensOffsets.Split('\n'))
        {
            var f = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (f.Length == 3 && f[0] == "monotonic")
                return long.Parse(f[1], CultureInfo.InvariantCulture) + long.Parse(f[2], CultureInfo.InvariantCulture) / 1e9;
        }
        return 0;
    }

    /// <summary>perf script's warnings that records were lost, joined; null when it printed none.</summary>
    public static string? Lost(string stderr)
    {
        var lines = LostLine().Matches(stderr).Select(m => m.Value.TrimEnd('!')).ToList();
        return lines.Count == 0 ? null : string.Join("; ", lines);
    }

    /// <summary>
    /// `perf script -F pid,tid,time,period,event,trace,ip,sym,dso`: a header per record
    /// ("10266/10266 22782.366414:          1       syscalls:sys_enter_munmap: addr: 0x7f12…, len: 0x…"), then its
    /// callchain, one frame a line ("\t    7f121723ece7 munmap (/usr/lib/…/libc.so.6)"), then a blank line.
    /// Tracepoints become events, cpu-clock and fault records samples.
    /// </summary>
    public static NativeTraceData Parse(string text, double origin = 0)
    {
        var samples = new List<NativeSample>();
        var events = new List<NativeEvent>();
        (int Pid, int Tid, double T, long Period, string Event, string Trace)? head = null;
        var frames = new List<string>();
        void Flush()
        {
            if (head is not { } h) return;
            var colon = h.Event.IndexOf(':');
            if (colon > 0)
            {
                var name = h.Event[(colon + 1)..];
                events.Add(new NativeEvent(h.T - origin, h.Pid, h.Tid, name, h.Trace, Fields(name, h.Trace), [.. frames]));
            }
            else samples.Add(new NativeSample(h.T - origin, h.Pid, h.Tid, h.Event, h.Period, [.. frames]));
            head = null;
            frames.Clear();
        }
        foreach (var raw in text.Split('\n'))
        {
            var line = raw.TrimEnd('\r');
            if (Header().Match(line) is { Success: true } m)
            {
                Flush();
                head = (int.Parse(m.Groups["pid"].Value, CultureInfo.InvariantCulture), int.Parse(m.Groups["tid"].Value, CultureInfo.InvariantCulture),
                        double.Parse(m.Groups["time"].Value, CultureInfo.InvariantCulture),
                        long.Parse(m.Groups["period"].Value, CultureInfo.InvariantCulture), m.Groups["event"].Value, m.Groups["trace"].Value.Trim());
            }
            else if (head is not null && FrameLine().Match(line) is { Success: true } f)
                frames.Add(f.Groups["sym"].Value == "[unknown]" ? $"[unknown] {f.Groups["dso"].Value}" : f.Groups["sym"].Value);
            else if (line.Length == 0) Flush();
        }
        Flush();
        return new NativeTraceData(samples, events);
    }

    /// <summary>"addr: 0x7f…, len: 0x4000000" → addr, len; an exit's lone value ("0x3") → ret.</summary>
    private static IReadOnlyDictionary<string, string> Fields(string name, string trace)
    {
        var fields = new Dictionary<string, string>();
        if (name.StartsWith("sys_exit_", StringComparison.Ordinal))
        {
            fields["ret"] = trace.Split(' ', 2)[0];
            return fields;
        }
        foreach (var part in trace.Split(", "))
            if (part.Split(": ", 2) is [var k, var v]) fields[k.Trim()] = v.Trim();
        return fields;
    }

    /// <summary>A field as a number: perf prints them in hex ("0x00000003"), or decimal; a negative fd as 0xffffffff.</summary>
    public static long Number(string value) =>
        value.StartsWith("0x", StringComparison.OrdinalIgnoreCase)
            ? unchecked((long)ulong.Parse(value[2..], NumberStyles.HexNumber, CultureInfo.InvariantCulture))
            : long.Parse(value, CultureInfo.InvariantCulture);

    [GeneratedRegex(@"^\s*(?<pid>\d+)/(?<tid>\d+)\s+(?<time>\d+\.\d+):\s+(?<period>\d+)\s+(?<event>\S+?):(?:\s+(?<trace>.*))?$")]
    private static partial Regex Header();

    [GeneratedRegex(@"^\s+(?<ip>[0-9a-f]+)\s+(?<sym>.+?)\s+\((?<dso>[^()]*)\)$")]
    private static partial Regex FrameLine();

    [GeneratedRegex(@"Processed \d+ (events|samples) and lost [\d.]+( chunks|%)!")]
    private static partial Regex LostLine();

    [GeneratedRegex(@"^[a-z0-9_]+$")]
    private static partial Regex SyscallName();
}
