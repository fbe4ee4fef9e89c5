using System.Globalization;

namespace Corpus.Harness.Capture.Traces;

/// <summary>
/// One bug's reading of a native trace (perf's syscalls, Wine's debug channels), as events of its own that the trace
/// evidence's counts and sequences can name. A case switches one on by its key in `capture.trace.analysers`; nothing
/// runs it on other cases' traces. Registered with the families (<see cref="Signatures.SignatureFamilies"/>).
/// </summary>
public interface ITraceAnalyser
{
    /// <summary>Its name in `capture.trace.analysers`: "mapping-leak".</summary>
    string Key { get; }

    /// <summary>The events of its reading, in the run's seconds.</summary>
    IEnumerable<TraceEvent> Events(NativeTraceData raw, IReadOnlyDictionary<string, double> markers);

    /// <summary>What it saw, for the trace's note; null for nothing to say.</summary>
    string? Note(NativeTraceData raw) => null;
}

/// <summary>
/// filemapping-leak: at each marker, and at the trace's end, every shared view unmapped by then whose descriptor is
/// still open ("unmapped-open"), from perf's memfd_create/shm_open/mmap/munmap/close events.
/// </summary>
public sealed class MappingLeakAnalyser : ITraceAnalyser
{
    public string Key => "mapping-leak";

    public IEnumerable<TraceEvent> Events(NativeTraceData raw, IReadOnlyDictionary<string, double> markers)
    {
        if (!raw.Events.Any(e => e.Name == "sys_enter_munmap")) yield break;
        var end = raw.Events.Count == 0 ? 0 : raw.Events.Max(e => e.Seconds);
        foreach (var (at, name) in markers.Select(m => (m.Value, NativeTraceModel.MarkerName(m.Key))).Append((end, "end")))
        foreach (var v in MappingLeakTrace.Find(raw, at).NotClosed.Where(v => v.UnmappedAt <= at))
            yield return new TraceEvent(Math.Round(at, 6), "unmapped-open", new Dictionary<string, string>
            {
                ["at"] = name, ["fd"] = v.Fd.ToString(CultureInfo.InvariantCulture),
                ["bytes"] = v.Bytes.ToString(CultureInfo.InvariantCulture), ["created"] = v.Created,
                ["unmapped"] = v.UnmappedAt.ToString("0.000", CultureInfo.InvariantCulture) + "s",
                ["by"] = v.UnmapFrames.FirstOrDefault(f => !f.Contains("munmap", StringComparison.Ordinal)) ?? "",
            }) { Thread = v.Pid.ToString(CultureInfo.InvariantCulture) };
    }
}

/// <summary>
/// attachthreadinput-ui-hang: from Wine's +win channel, a window parented across threads ("CrossThreadSetParent") and
/// then a focus call that finds the other thread's window as its focus ("InputQueueShared": one input queue).
/// </summary>
public sealed class SetParentAttachAnalyser : ITraceAnalyser
{
    public string Key => "setparent-attach";

    public IEnumerable<TraceEvent> Events(NativeTraceData raw, IReadOnlyDictionary<string, double> markers)
    {
        var facts = SetParentAttachTrace.Find(raw);
        foreach (var sp in facts.CrossThread)
            yield return new TraceEvent(Math.Round(sp.At, 3), "CrossThreadSetParent", new Dictionary<string, string>
                { ["child"] = sp.Child, ["parent"] = sp.Parent, ["thread"] = Hex(sp.Thread), ["parentThread"] = Hex(sp.ParentThread) })
                { Thread = $"{Hex(sp.Pid)}:{Hex(sp.Thread)}" };
        if (facts.Attach is not { } a) yield break;
        var fields = new Dictionary<string, string>
            { ["thread"] = Hex(a.Thread), ["focus"] = a.Focus, ["previous"] = a.Previous, ["otherThread"] = Hex(a.OtherThread) };
        if (facts.UiBlockMs is { } ms) fields["silentMs"] = ms.ToString("0.#", CultureInfo.InvariantCulture);
        yield return new TraceEvent(Math.Round(a.At, 3), "InputQueueShared", fields) { Thread = Hex(a.Thread) };
    }

    public string? Note(NativeTraceData raw) => $"{SetParentAttachTrace.Find(raw).Windows} windows created";

    private static string Hex(int id) => id.ToString("x4", CultureInfo.InvariantCulture);
}
