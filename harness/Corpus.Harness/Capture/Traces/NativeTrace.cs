namespace Corpus.Harness.Capture.Traces;

/// <summary>
/// What the native trace backends (perf, Wine's WINEDEBUG channels, wpr) read out of their files: timed samples with
/// their stacks (cpu-clock, page faults) and ordered events (syscalls, Win32 calls). Times are seconds of the run, on
/// the clock its markers are stamped with (<see cref="Containment.ContainedProcess.Elapsed"/>).
/// </summary>
/// <param name="Frames">Leaf first.</param>
public sealed record NativeSample(double Seconds, int Pid, int Tid, string Event, long Weight, IReadOnlyList<string> Frames);

/// <param name="Name">The event: "sys_enter_munmap", "NtUserSetParent".</param>
/// <param name="Text">The rest of its line as the tool printed it.</param>
/// <param name="Fields">Named values parsed from the text ("addr", "len"; "ret" for a syscall's exit).</param>
/// <param name="Frames">The call stack when the tool recorded one, leaf first.</param>
public sealed record NativeEvent(double Seconds, int Pid, int Tid, string Name, string Text,
                                 IReadOnlyDictionary<string, string> Fields, IReadOnlyList<string> Frames);

public sealed record NativeTraceData(IReadOnlyList<NativeSample> Samples, IReadOnlyList<NativeEvent> Events)
{
    public static readonly NativeTraceData Empty = new([], []);
}

/// <summary>The trace kinds of a manifest's `capture.trace.kind`.</summary>
public enum NativeTraceKind { Cpu, Alloc, Faults, Api }

/// <summary>
/// The native backends' traces in the common model: samples root first, one event per syscall or Wine call (a syscall's
/// exit folded into its enter as ret=), the run's markers as events named "marker", and the events of the analysers the
/// case switched on (<see cref="ITraceAnalyser"/>).
/// </summary>
public static class NativeTraceModel
{
    private static readonly HashSet<string> DecimalFields = ["fd", "len", "count", "size", "ret"];

    public static TraceModel FromPerf(string kind, NativeTraceData raw, IReadOnlyDictionary<string, double> markers, IReadOnlyList<string> files,
                                      IReadOnlyList<ITraceAnalyser>? analysers = null)
    {
        var samples = raw.Samples.Select(s => new TraceSample(s.Frames.Count == 0 ? [$"[{s.Event}]"] : s.Frames.Reverse().ToList())
                                         { Thread = $"{s.Pid}/{s.Tid}", Time = Math.Round(s.Seconds, 6) }).ToList();
        var events = new List<TraceEvent>();
        var open = new Dictionary<(int, int), (NativeEvent Enter, int Index)>();
        foreach (var e in raw.Events.OrderBy(e => e.Seconds))
        {
            if (e.Name.StartsWith("sys_enter_", StringComparison.Ordinal))
            {
                var name = e.Name["sys_enter_".Length..];
                open[(e.Pid, e.Tid)] = (e, events.Count);
                events.Add(Event(e, name, e.Fields));
            }
            else if (e.Name.StartsWith("sys_exit_", StringComparison.Ordinal))
            {
                if (!open.Remove((e.Pid, e.Tid), out var enter) || enter.Enter.Name[10..] != e.Name[9..]) continue;
                var fields = new Dictionary<string, string>(enter.Enter.Fields) { ["ret"] = e.Fields.GetValueOrDefault("ret", "") };
                events[enter.Index] = Event(enter.Enter, e.Name[9..], fields);
            }
            else events.Add(Event(e, e.Name, e.Fields));
        }
        events.AddRange(Markers(markers));
        foreach (var a in analysers ?? []) events.AddRange(a.Events(raw, markers));
        return new TraceModel(kind, "samples", samples, events) { Files = files, Note = Note(raw) };
    }

    public static TraceModel FromWine(string kind, NativeTraceData raw, IReadOnlyDictionary<string, double> markers, IReadOnlyList<string> files,
                                      IReadOnlyList<ITraceAnalyser>? analysers = null)
    {
        var events = raw.Events.Select(e => new TraceEvent(Math.Round(e.Seconds, 3), e.Name,
                                                           new Dictionary<string, string> { ["channel"] = e.Fields.GetValueOrDefault("channel", ""), ["args"] = e.Text })
                                            { Thread = Tid(e.Pid, e.Tid) }).ToList();
        events.AddRange(Markers(markers));
        foreach (var a in analysers ?? []) events.AddRange(a.Events(raw, markers));
        var note = string.Join(", ", new[] { $"{raw.Events.Count} Wine debug lines" }.Concat((analysers ?? []).Select(a => a.Note(raw)).OfType<string>()));
        return new TraceModel(kind, "samples", [], events) { Files = files, Note = note };
    }

    private static string Hex(int id) => id.ToString("x4", System.Globalization.CultureInfo.InvariantCulture);
    private static string Tid(int pid, int tid) => $"{Hex(pid)}:{Hex(tid)}";

    private static TraceEvent Event(NativeEvent e, string name, IReadOnlyDictionary<string, string> fields) =>
        new(Math.Round(e.Seconds, 6), name, fields.ToDictionary(kv => kv.Key, kv => Format(kv.Key, kv.Value))) { Thread = $"{e.Pid}/{e.Tid}" };

    /// <summary>perf prints every argument in fixed-width hex: descriptors, lengths and results in decimal (fd=-1, len=67108864), the rest short hex.</summary>
    private static string Format(string key, string value)
    {
        if (!value.StartsWith("0x", StringComparison.Ordinal)) return value;
        long n;
        try { n = PerfTrace.Number(value); }
        catch (FormatException) { return value; }
        if (key == "fd") return ((int)n).ToString(System.Globalization.CultureInfo.InvariantCulture);
        if (DecimalFields.Contains(key) && n is > -4096 and < 1L << 40) return n.ToString(System.Globalization.CultureInfo.InvariantCulture);
        return "0x" + n.ToString("x", System.Globalization.CultureInfo.InvariantCulture);
    }

    private static IEnumerable<TraceEvent> Markers(IReadOnlyDictionary<string, double> markers) =>
        markers.Select(m => new TraceEvent(Math.Round(m.Value, 6), "marker", new Dictionary<string, string> { ["line"] = m.Key }));

    /// <summary>The marker's name: "REPRO-REACHED leaked count=8 …" → "leaked".</summary>
    public static string MarkerName(string line) => line.Split(' ', StringSplitOptions.RemoveEmptyEntries) is [_, var name, ..] ? name : line;


    private static string Note(NativeTraceData raw) =>
        $"perf: {raw.Samples.Count} samples, {raw.Events.Count} tracepoint records";
}
