using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using Corpus.Harness.Containment;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Capture.Traces;

/// <summary>
/// Wine's own tracing: WINEDEBUG channels (+win, +msg, +reg, …) for one run of a wine subject. The prefix's env file sets
/// WINEDEBUG=-all for every run; harness/wine/run.sh replaces it with CORPUS_WINEDEBUG and sends the Wine process's
/// stderr to CORPUS_WINEDEBUG_LOG in the run's folder (every Wine process the program starts inherits it). +timestamp
/// and +pid are always added, so each line says when (Wine's tick count, in milliseconds: CLOCK_MONOTONIC_RAW, which
/// ntdll's monotonic_counter prefers; 140 ms apart from CLOCK_MONOTONIC after 6 h on this VM) and which process and thread. The program's own stderr lands in the same file; only debug lines are parsed.
/// </summary>
public sealed partial class WineDebugTrace : ITraceBackend
{
    public const string ChannelsVariable = "CORPUS_WINEDEBUG", LogVariable = "CORPUS_WINEDEBUG_LOG";

    /// <summary>The channels of a manifest that names none: +win, the window manager's calls.</summary>
    public static readonly IReadOnlyList<string> DefaultChannels = ["+win"];

    private double _origin;

    public string Name => "winedebug";
    public string? Unavailable => IHost.Current.UnixSignals ? null : "WINEDEBUG is Wine's: the Windows harness has no Wine around its programs";

    /// <summary>The traced run with the channels on and Wine's stderr sent to winedebug.log in the trace folder.</summary>
    public Launch Wrap(Launch launch, TraceRun run)
    {
        // Wine stamps lines with CLOCK_MONOTONIC_RAW; the run starts right after this.
        _origin = (double)Stopwatch.GetTimestamp() / Stopwatch.Frequency - RawOffset();
        var channels = run.Spec.Channels.Count > 0 ? run.Spec.Channels : DefaultChannels;
        return launch with { Env = Env(launch.Env, channels, run.File("winedebug.log")) };
    }

    public Task<TraceModel> ReadAsync(TraceRun run, RunResult result, CancellationToken cancel)
    {
        var log = run.File("winedebug.log");
        if (!File.Exists(log)) throw new TraceException($"Wine wrote no {log} ({result.Status}): did harness/wine/run.sh take {LogVariable}?");
        var raw = Read(log, result.StartedMonotonic > 0 ? result.StartedMonotonic - RawOffset() : _origin);
        if (raw.Events.Count == 0) throw new TraceException($"{log} holds no Wine debug line ({result.Status})");
        return Task.FromResult(NativeTraceModel.FromWine(run.Spec.Kind, raw, run.Markers, [log], run.Analysers));
    }

    /// <summary>
    /// The WINEDEBUG value: +timestamp,+pid, then the channel settings as WINEDEBUG takes them ("win" or "+win",
    /// "-all", "warn+msg"); a bare name is switched on.
    /// </summary>
    public static string Value(IReadOnlyList<string> channels)
    {
        if (channels.Count == 0) throw new ArgumentException("a Wine trace needs at least one channel (e.g. +win)");
        var list = new List<string> { "+timestamp", "+pid" };
        foreach (var c in channels)
        {
            if (!Channel().IsMatch(c))
                throw new ArgumentException($"'{c}' is not a WINEDEBUG channel setting such as '+win', '-all' or 'warn+msg'");
            list.Add(c.Contains('+') || c.Contains('-') ? c : "+" + c);
        }
        return string.Join(',', list.Distinct());
    }

    /// <summary>The run's environment with the trace on: the channels and the log file.</summary>
    public static IReadOnlyDictionary<string, string> Env(IReadOnlyDictionary<string, string> env, IReadOnlyList<string> channels, string logFile) =>
        new Dictionary<string, string>(env) { [ChannelsVariable] = Value(channels), [LogVariable] = logFile };

    /// <summary>
    /// Wine's debug lines with +timestamp,+pid: "23076.622:00d8:0118:trace:win:NtUserSetParent (0x1005e 0x10048)"
    /// (seconds.millis, pid, tid in hex, class, channel, function, message). Other lines (the program's stderr) are skipped.
    /// </summary>
    /// <param name="origin">The run's start on CLOCK_MONOTONIC, in seconds.</param>
    public static NativeTraceData Parse(IEnumerable<string> lines, double origin = 0)
    {
        var events = new List<NativeEvent>();
        foreach (var raw in lines)
        {
            if (Line().Match(raw.TrimEnd('\r')) is not { Success: true } m) continue;
            var t = m.Groups["t"].Success ? double.Parse(m.Groups["t"].Value, CultureInfo.InvariantCulture) - origin : double.NaN;
            var pid = m.Groups["pid"].Success ? int.Parse(m.Groups["pid"].Value, NumberStyles.HexNumber, CultureInfo.InvariantCulture) : 0;
            var fields = new Dictionary<string, string> { ["class"] = m.Groups["class"].Value, ["channel"] = m.Groups["channel"].Value };
            events.Add(new NativeEvent(t, pid, int.Parse(m.Groups["tid"].Value, NumberStyles.HexNumber, CultureInfo.InvariantCulture),
                                       m.Groups["fn"].Value, m.Groups["msg"].Value, fields, []));
        }
        return new NativeTraceData([], events);
    }

    /// <summary>CLOCK_MONOTONIC minus CLOCK_MONOTONIC_RAW now, in seconds: a run's start on Wine's clock is its
    /// <see cref="Containment.ContainedProcess.StartedMonotonic"/> minus this.</summary>
    public static double RawOffset()
    {
        if (IHost.Current.Platform != IHost.Linux || ClockGetTime(1, out var mono) != 0 || ClockGetTime(4, out var raw) != 0) return 0;
        return mono.Sec - raw.Sec + (mono.Nsec - raw.Nsec) / 1e9;
    }

    private struct Timespec { public long Sec, Nsec; }

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "clock_gettime")]
    private static extern int ClockGetTime(int clock, out Timespec ts);

    public static NativeTraceData Read(string logFile, double origin) =>
        File.Exists(logFile) ? Parse(File.ReadLines(logFile), origin) : throw new InvalidOperationException($"the Wine trace {logFile} was not written");

    [GeneratedRegex(@"^(?:(?<t>\d+\.\d+):)?(?:(?<pid>[0-9a-f]{4,8}):)?(?<tid>[0-9a-f]{4,8}):(?<class>trace|warn|fixme|err):(?<channel>[A-Za-z0-9_]+):(?<fn>[^ ]+)(?: (?<msg>.*))?$")]
    private static partial Regex Line();

    [GeneratedRegex(@"^((trace|warn|err|fixme)?[+-])?[A-Za-z0-9_]+$")]
    private static partial Regex Channel();
}

/// <summary>One window a +win trace saw created, and the thread that owns it.</summary>
public sealed record TracedWindow(string Hwnd, int Pid, int Tid, double At);

/// <param name="Thread">The thread that called SetParent; ParentThread owns the new parent.</param>
public sealed record TracedSetParent(double At, int Pid, int Thread, string Child, string Parent, int ParentThread);

/// <summary>A SetFocus whose previous focus, or new focus, is another thread's window: the two threads share one input queue.</summary>
public sealed record TracedAttach(double At, int Thread, string Focus, string Previous, int OtherThread);

/// <param name="UiBlockMs">How long the parent's thread printed nothing after its attached SetFocus (the hang seen in the trace).</param>
public sealed record SetParentAttachFacts(IReadOnlyList<TracedSetParent> CrossThread, TracedAttach? Attach, double? UiBlockMs, int Windows)
{
    /// <summary>The bug's order: a cross-thread SetParent, then the shared-queue focus.</summary>
    public bool InOrder => CrossThread.Count > 0 && Attach is not null && Attach.At >= CrossThread[0].At;
}

/// <summary>
/// The AttachThreadInput hang in Wine's +win channel. win32u traces "NtUserCreateWindowEx created window HWND" on the
/// creating thread, "NtUserSetParent (CHILD PARENT)" on the calling thread, and "NtUserSetFocus HWND prev PREV" on the
/// thread that sets focus. Wine's server attaches the input queues of a non-top-level window's thread and its parent's
/// thread inside set_parent (server/window.c, set_parent_window), which prints nothing; the attachment shows in the
/// next SetFocus: a thread's previous (or new) focus is a window of the other thread, which only a shared queue gives.
/// </summary>
public static partial class SetParentAttachTrace
{
    public static SetParentAttachFacts Find(NativeTraceData trace)
    {
        var owner = new Dictionary<string, TracedWindow>();
        var cross = new List<TracedSetParent>();
        TracedAttach? attach = null;
        var events = trace.Events;
        for (var i = 0; i < events.Count; i++)
        {
            var e = events[i];
            if (e.Name == "NtUserCreateWindowEx" && Created().Match(e.Text) is { Success: true } c)
                owner[c.Groups[1].Value] = new TracedWindow(c.Groups[1].Value, e.Pid, e.Tid, e.Seconds);
            else if (e.Name == "NtUserSetParent" && SetParent().Match(e.Text) is { Success: true } p
                     && owner.TryGetValue(p.Groups[2].Value, out var parent) && parent.Tid != e.Tid && parent.Pid == e.Pid)
                cross.Add(new TracedSetParent(e.Seconds, e.Pid, e.Tid, p.Groups[1].Value, p.Groups[2].Value, parent.Tid));
            else if (attach is null && cross.Count > 0 && e.Name == "NtUserSetFocus" && Focus().Match(e.Text) is { Success: true } f)
            {
                var other = new[] { f.Groups[2].Value, f.Groups[1].Value }
                    .Select(h => owner.GetValueOrDefault(h)).FirstOrDefault(w => w is not null && w.Pid == e.Pid && w.Tid != e.Tid);
                if (other is not null) attach = new TracedAttach(e.Seconds, e.Tid, f.Groups[1].Value, f.Groups[2].Value, other.Tid);
            }
        }
        // The attachment the hang is about is the parent thread's SetFocus (with how long that thread then printed
        // nothing); the child's thread may show the shared queue first, in its own SetFocus.
        var uiAttach = FindUiAttach(events, owner, cross);
        if (uiAttach is { } ui) attach = ui.Item1;
        return new SetParentAttachFacts(cross, attach, uiAttach?.Item2, owner.Count);
    }

    /// <summary>The first SetFocus on the parent's thread after the cross-thread SetParent that sees the child's thread's window.</summary>
    private static (TracedAttach, double?)? FindUiAttach(IReadOnlyList<NativeEvent> events, Dictionary<string, TracedWindow> owner,
                                                        List<TracedSetParent> cross)
    {
        if (cross.Count == 0) return null;
        var sp = cross[0];
        for (var i = 0; i < events.Count; i++)
        {
            var e = events[i];
            if (e.Seconds < sp.At || e.Tid != sp.ParentThread || e.Pid != sp.Pid || e.Name != "NtUserSetFocus") continue;
            if (Focus().Match(e.Text) is not { Success: true } f) continue;
            var other = new[] { f.Groups[2].Value, f.Groups[1].Value }
                .Select(h => owner.GetValueOrDefault(h)).FirstOrDefault(w => w is not null && w.Pid == e.Pid && w.Tid == sp.Thread);
            if (other is null) continue;
            double? block = null;
            for (var j = i + 1; j < events.Count; j++)
                if (events[j].Pid == e.Pid && events[j].Tid == e.Tid) { block = Math.Round((events[j].Seconds - e.Seconds) * 1000, 1); break; }
            return (new TracedAttach(e.Seconds, e.Tid, f.Groups[1].Value, f.Groups[2].Value, other.Tid), block);
        }
        return null;
    }

    [GeneratedRegex(@"^created window (0x[0-9a-f]+)")]
    private static partial Regex Created();

    [GeneratedRegex(@"^\((0x[0-9a-f]+) (0x[0-9a-f]+)\)")]
    private static partial Regex SetParent();

    [GeneratedRegex(@"^(0x[0-9a-f]+|\(nil\)) prev (0x[0-9a-f]+|\(nil\))")]
    private static partial Regex Focus();
}
