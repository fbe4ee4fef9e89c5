using System.Globalization;
using System.Text.RegularExpressions;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Json;
using Corpus.Harness.Model;

namespace Corpus.Harness.Signatures;

/// <summary>
/// A share of the samples: of the samples whose stack holds a frame matching Under (all samples when null), the weight
/// of those with a frame matching Frame at or above it (towards the leaf). Min: at least this share on a reproduced
/// cell. CleanMax: below this share on a clean cell (the subject that fixed the bug).
/// </summary>
/// <param name="Thread">"main": only the samples of the process's main thread (its id is the process's), for a program
/// that does its work there and whose other threads come and go from run to run (CoreCLR's finalizer thread enters a
/// thread-time trace at its first finalizer, and from then on counts the whole run).</param>
/// <param name="Label">What the share is called in key figures ("ObjectManager of deserialize"); default the regexes.</param>
public sealed record TraceShareSpec(string Frame, string? Under, double? Min, double? CleanMax, string? Label = null, string? Thread = null)
{
    public const string MainThread = "main";

    public static TraceShareSpec Read(Fields f)
    {
        f.AllowOnly("frame", "under", "thread", "min", "cleanMax", "label");
        var spec = new TraceShareSpec(f.RegexOr("frame", required: true)!, f.RegexOr("under"),
                                      f.NumberOr("min", null, min: 0, max: 1, above: true), f.NumberOr("cleanMax", null, min: 0, max: 1, above: true),
                                      f.StringOr("label", null), f.StringOr("thread", null));
        if (spec.Min is null && spec.CleanMax is null) throw f.Error("give 'min' (reproduced cells), 'cleanMax' (clean cells) or both");
        if (spec.Thread is not (null or MainThread)) throw f.Error($"'{spec.Thread}' is not a thread the share can be of: give '{MainThread}'", "thread");
        return spec;
    }

    public string Describe => (Under is null ? $"/{Frame}/" : $"/{Frame}/ under /{Under}/") + (Thread is null ? "" : $" on the {Thread} thread");
}

/// <summary>Events matching each regex in turn, in time order (A, then B after it, …), at least Min times.</summary>
public sealed record TraceSequenceSpec(IReadOnlyList<string> Events, int Min)
{
    public static TraceSequenceSpec Read(Fields f)
    {
        f.AllowOnly("events", "min");
        return new TraceSequenceSpec(f.RegexList("events"), f.IntOr("min", 1, min: 1)!.Value);
    }

    public string Describe => string.Join(" then ", Events.Select(e => $"/{e}/"));
}

/// <summary>How many events match a regex: at least Min, at most Max (0: none may).</summary>
public sealed record TraceCountSpec(string Event, int? Min, int? Max)
{
    public static TraceCountSpec Read(Fields f)
    {
        f.AllowOnly("event", "min", "max");
        var spec = new TraceCountSpec(f.RegexOr("event", required: true)!, f.IntOr("min", null, min: 0), f.IntOr("max", null, min: 0));
        if (spec.Min is null && spec.Max is null) throw f.Error("give 'min', 'max' or both");
        if (spec.Min > spec.Max) throw f.Error($"must not be above max ({spec.Max})", "min");
        return spec;
    }
}

/// <summary>The trace evidence block of a signature: assertions on the cell's trace (capture.trace).</summary>
/// <param name="Decide">While a share's interval straddles its bound, more traced runs, their samples pooled.</param>
public sealed record TraceSpec(IReadOnlyList<TraceShareSpec> Samples, IReadOnlyList<TraceSequenceSpec> Sequences, IReadOnlyList<TraceCountSpec> Counts)
{
    /// <summary>Three traced runs at most, within 120 s, unless the case says otherwise.</summary>
    public static readonly DecideSpec DefaultDecide = new(3, 120);

    public DecideSpec Decide { get; init; } = DefaultDecide;

    public static TraceSpec Read(Fields f)
    {
        f.AllowOnly("samples", "sequence", "count", "decide");
        var spec = new TraceSpec(f.Objects("samples", required: false, nonEmpty: false).Select(TraceShareSpec.Read).ToList(),
                                 f.Objects("sequence", required: false, nonEmpty: false).Select(TraceSequenceSpec.Read).ToList(),
                                 f.Objects("count", required: false, nonEmpty: false).Select(TraceCountSpec.Read).ToList())
                   { Decide = DecideSpec.Read(f, DefaultDecide) };
        if (spec.Samples.Count + spec.Sequences.Count + spec.Counts.Count == 0)
            throw f.Error("a trace block asserts nothing: give 'samples', 'sequence' or 'count'");
        return spec;
    }
}

/// <param name="Share">Weight with the frame over weight under the root (null: no sample under it).</param>
/// <param name="Judged">"min" on a reproduced cell, "cleanMax" on a clean one, null when this cell's outcome has no bound.</param>
/// <param name="Holds">Null while the share's interval straddles the bound it is judged by.</param>
/// <param name="Thread">The thread the share is of ("Thread (1234)"), when the spec asks for one.</param>
public sealed record TraceShareFacts(string Frame, string? Under, double? Share, double Matched, double Total, int SamplesUnder,
                                     double? Min, double? CleanMax, string? Judged, bool? Holds, IReadOnlyList<string> Example, string Label = "",
                                     string? Thread = null)
{
    /// <summary>The share's interval (Wilson's, on the effective number of samples; exact for an account of every byte).</summary>
    public double? Low { get; init; }
    public double? High { get; init; }
    public double? Confidence { get; init; }
    /// <summary>The traced runs whose samples were pooled.</summary>
    public int Traces { get; init; } = 1;

    /// <summary>"64% [55%, 72%]", or with too few samples for an interval "64% (no interval from 12 samples)".</summary>
    public string Percent => Share is not { } v ? "no samples"
        : Low is { } lo && High is { } hi ? (lo == v && hi == v ? string.Create(CultureInfo.InvariantCulture, $"{v * 100:0}%")
                                                                 : string.Create(CultureInfo.InvariantCulture, $"{v * 100:0}% [{lo * 100:0}%, {hi * 100:0}%]"))
        : string.Create(CultureInfo.InvariantCulture, $"{v * 100:0}% (no interval from {SamplesUnder} samples)");
}

/// <param name="Found">The matched events of the first chain, as "t=1.234s text".</param>
public sealed record TraceSequenceFacts(IReadOnlyList<string> Events, int Min, int Chains, IReadOnlyList<string> Found, bool Holds);

public sealed record TraceCountFacts(string Event, int? Min, int? Max, int Count, IReadOnlyList<string> First, bool Holds);

public sealed record TraceFacts(string? Backend, string Kind, string? File, int Samples, int Events, string Unit,
                                IReadOnlyList<TraceShareFacts> Shares, IReadOnlyList<TraceSequenceFacts> Sequences,
                                IReadOnlyList<TraceCountFacts> Counts, string? FlameGraph);

/// <summary>
/// Trace evidence: the cell's trace (capture.trace) must show the bug where the write-up's trace did: a share of the
/// samples in the bug's frames, events in order, a count of calls. It judges clean cells too, against the bounds
/// given for them (cleanMax; sequences and counts only on reproduced cells). A trace that was asked for and is missing
/// is an error, never a pass.
/// </summary>
public sealed class TraceEvidence : IEvidenceCheck
{
    public string Key => "trace";
    public bool OnClean => true;
    public object ReadSpec(Fields f) => TraceSpec.Read(f);

    public void Validate(CaseSpec cs, Fields c)
    {
        if (cs.Trace is null) throw c.Error("a trace signature needs the trace capture ('capture.trace')", "signature.trace");
        var spec = cs.Signature.Get<TraceSpec>(Key)!;
        if (spec.Samples.Count > 0 && cs.Trace.Kind is not (TraceCapture.Cpu or TraceCapture.Alloc))
            throw c.Error($"a share of samples needs a sampling trace (capture.trace.kind 'cpu' or 'alloc', not '{cs.Trace.Kind}')", "signature.trace.samples");
    }

    /// <summary>Only where the case traces this subject: the other subjects' cells have no trace to read.</summary>
    public bool Applies(CaseSpec cs, Subject subject) => cs.Signature.Has(Key) && cs.Trace is { } t && t.Traces(subject.Name);

    /// <summary>
    /// Judges the cell's trace; while a share's interval straddles its bound, one more traced run at the same size, its
    /// samples pooled with the earlier ones', within the spec's decide budget. Still undecided then: undecided, and the
    /// cell inconclusive.
    /// </summary>
    public async Task<EvidenceResult> CheckAsync(EvidenceContext x)
    {
        var spec = x.Case.Signature.Get<TraceSpec>(Key)!;
        var traces = x.Cell.Trace is { } first ? new List<TraceModel> { first } : [];
        var clock = System.Diagnostics.Stopwatch.StartNew();
        var result = Check(spec, traces, x.Cell.Traces.LastOrDefault(), x.Case.Trace!, x.Outcome, x.Cell.CaptureErrorsNow());
        while (result.Status == EvidenceStatus.Undecided)
        {
            var stop = traces.Count >= spec.Decide.MaxRounds ? $"maxRounds {spec.Decide.MaxRounds}"
                : clock.Elapsed.TotalSeconds >= spec.Decide.BudgetSec ? $"the {spec.Decide.BudgetSec:0} s budget" : null;
            if (stop is not null) return result with { Detail = $"{result.Detail}; {traces.Count} traced runs, ended by {stop} ({spec.Decide.Describe})" };
            var before = x.Cell.Trace;
            x.Runs.Progress($"{x.Cell.Key} the trace's share straddles its bound: traced run {traces.Count + 1} …");
            await x.Runs.TraceAsync(x.Case.Trace!, x.Cell.Traces.LastOrDefault()?.N, x.Cell.Traces.Count + 1);
            if (x.Cell.Trace is not { } next || ReferenceEquals(next, before))
                return result with { Detail = $"{result.Detail}; a further traced run could not be taken ({x.Cell.Traces.LastOrDefault()?.Error})" };
            traces.Add(next);
            result = Check(spec, traces, x.Cell.Traces.LastOrDefault(), x.Case.Trace!, x.Outcome, x.Cell.CaptureErrorsNow());
        }
        return result;
    }

    public static EvidenceResult Check(TraceSpec spec, TraceModel? trace, TraceRecord? record, TraceCapture capture, Outcome outcome,
                                       IReadOnlyList<string> captureErrors) =>
        Check(spec, trace is null ? [] : [trace], record, capture, outcome, captureErrors);

    /// <summary>The trace evidence over one traced run or several (their samples pooled for shares; sequences and counts
    /// read from the latest).</summary>
    public static EvidenceResult Check(TraceSpec spec, IReadOnlyList<TraceModel> traces, TraceRecord? record, TraceCapture capture, Outcome outcome,
                                       IReadOnlyList<string> captureErrors)
    {
        const string key = "trace";
        var trace = traces.Count == 0 ? null : traces[^1];
        if (trace is null)
            return new EvidenceResult(key, EvidenceStatus.Broken,
                $"the {capture.Kind} trace the signature reads was not taken ({record?.Error ?? string.Join("; ", captureErrors)})")
                { Facts = new TraceFacts(record?.Backend, capture.Kind, null, 0, 0, "", [], [], [], null) };
        var reproduced = outcome == Outcome.Reproduced;
        if (spec.Samples.Any(s => s.Thread == TraceShareSpec.MainThread) && trace.MainThread is null)
            return new EvidenceResult(key, EvidenceStatus.Broken,
                $"a share of the main thread was asked for, and the {record?.Backend ?? "trace"} trace names no main thread")
                { Facts = new TraceFacts(record?.Backend, capture.Kind, record?.File, trace.Samples.Count, trace.Events.Count, trace.Unit, [], [], [], record?.FlameGraph) };
        var shares = spec.Samples.Select(s => Share(s, traces, reproduced, spec.Decide.LookConfidence)).ToList();
        var sequences = reproduced ? spec.Sequences.Select(s => Sequence(s, trace)).ToList() : [];
        var counts = reproduced ? spec.Counts.Select(s => Count(s, trace)).ToList() : [];
        var facts = new TraceFacts(record?.Backend, capture.Kind, record?.File, trace.Samples.Count, trace.Events.Count, trace.Unit,
                                   shares, sequences, counts, record?.FlameGraph);
        var parts = new List<(bool Holds, string Text)>();
        var figures = new List<string>();
        var undecided = new List<string>();
        foreach (var s in shares)
        {
            var pct = s.Percent;
            var of = s.Thread is null ? "" : $" of {s.Thread}";
            var runs = s.Traces > 1 ? $" over {s.Traces} traced runs" : "";
            var what = s.Under is not null ? $"{pct} of {s.SamplesUnder} /{s.Under}/ samples{of} in /{s.Frame}/{runs}"
                : s.Thread is not null ? $"{pct} of the samples{of} in /{s.Frame}/{runs}" : $"{pct} of samples in /{s.Frame}/{runs}";
            figures.Add($"trace {pct} {s.Label}");
            var bound = s.Judged is "min" ? $"{s.Min * 100:0}%" : $"{s.CleanMax * 100:0}% allowed on a clean cell";
            if (s.Judged is not null && s.Holds is null) undecided.Add($"{what} straddles {bound}");
            else if (s.Judged is "min") parts.Add((s.Holds!.Value, $"{what} ({(s.Holds.Value ? "≥" : "<")} {bound})"));
            else if (s.Judged is "cleanMax") parts.Add((s.Holds!.Value, $"{what} ({(s.Holds.Value ? "<" : "≥")} {bound})"));
        }
        foreach (var s in sequences)
            parts.Add((s.Holds, s.Holds ? $"{s.Chains}× {string.Join(" then ", s.Events.Select(e => $"/{e}/"))} (first: {string.Join(" → ", s.Found)})"
                                        : $"{s.Chains} of {s.Min} {string.Join(" then ", s.Events.Select(e => $"/{e}/"))} in {trace.Events.Count} events"));
        foreach (var s in counts)
            parts.Add((s.Holds, $"{s.Count} events /{s.Event}/{(s.Min is { } mn ? $", min {mn}" : "")}{(s.Max is { } mx ? $", max {mx}" : "")}"));
        var failed = parts.Where(p => !p.Holds).Select(p => p.Text).ToList();
        // A share that is not yet on one side of its bound decides nothing, unless another part already failed.
        if (failed.Count == 0 && undecided.Count > 0)
            return new EvidenceResult(key, EvidenceStatus.Undecided, $"trace: {string.Join("; ", undecided)}") { Facts = facts, KeyFigures = figures };
        if (parts.Count == 0)
            return new EvidenceResult(key, EvidenceStatus.NotJudged, $"trace recorded ({string.Join("; ", figures)}); no bound for a {outcome.Name()} cell")
                { Facts = facts, KeyFigures = figures };
        var detail = failed.Count == 0 ? $"trace: {string.Join("; ", parts.Select(p => p.Text))}" : $"trace: {string.Join("; ", failed)}";
        return failed.Count == 0 ? EvidenceResult.Hold(key, detail, facts, [.. figures])
            : EvidenceResult.Fail(key, outcome == Outcome.Clean ? $"clean by its family, yet the {detail}" : $"the {detail}", facts, [.. figures]);
    }

    public static TraceShareFacts Share(TraceShareSpec s, TraceModel trace, bool reproduced, double confidence = 0.95) =>
        Share(s, [trace], reproduced, confidence);

    /// <summary>
    /// The share over one traced run or several, each filtered by its own main thread; its interval by Wilson's on
    /// the effective number of samples (<see cref="Decision.Share"/>), or exact for a trace that accounts for every byte. It
    /// holds or fails only when the whole interval is on one side of the bound; null (undecided) while it straddles it.
    /// </summary>
    public static TraceShareFacts Share(TraceShareSpec s, IReadOnlyList<TraceModel> traces, bool reproduced, double confidence)
    {
        var frame = new Regex(s.Frame);
        var under = s.Under is null ? null : new Regex(s.Under);
        var weights = new List<(double Matched, double Total)>();
        IReadOnlyList<string> example = [];
        string? thread = null;
        foreach (var trace in traces)
        {
            var main = s.Thread == TraceShareSpec.MainThread ? trace.MainThread : null;
            thread ??= main;
            foreach (var sample in trace.Samples)
            {
                if (main is not null && sample.Thread != main) continue;
                var from = under is null ? 0 : IndexOf(sample.Frames, under, 0);
                if (from < 0) continue;
                var hit = IndexOf(sample.Frames, frame, from) >= 0;
                weights.Add((hit ? sample.Weight : 0, sample.Weight));
                if (hit && example.Count == 0) example = sample.Frames.Skip(Math.Max(0, sample.Frames.Count - 8)).ToList();
            }
        }
        double total = weights.Sum(w => w.Total), matched = weights.Sum(w => w.Matched);
        double? share = total > 0 ? Math.Round(matched / total, 4) : null;
        Interval? interval = total <= 0 ? null
            : traces.All(t => !t.Sampled) ? new Interval(matched / total, matched / total, matched / total) { Confidence = 1 }
            // Milliseconds of a 1 ms sampler: the weight is the number of draws (dotnet-trace merges a stack's samples into spans).
            : Decision.Share(weights, confidence, traces.All(t => t.Unit == "milliseconds") ? weights.Sum(w => w.Total) / SamplerMs : null);
        var judged = reproduced ? (s.Min is null ? null : "min") : (s.CleanMax is null ? null : "cleanMax");
        bool? holds = (judged, interval) switch
        {
            ("min", null) => false,
            ("min", { } i) => i.Low >= s.Min ? true : i.High < s.Min ? false : null,
            ("cleanMax", null) => true,
            ("cleanMax", { } i) => i.High < s.CleanMax ? true : i.Low >= s.CleanMax ? false : null,
            _ => null,
        };
        return new TraceShareFacts(s.Frame, s.Under, share, Math.Round(matched, 3), Math.Round(total, 3), weights.Count, s.Min, s.CleanMax, judged, holds, example,
                                   s.Label ?? s.Describe, thread)
        {
            Low = interval is null ? null : Round(interval.Low), High = interval is null ? null : Round(interval.High),
            Confidence = interval?.Confidence, Traces = traces.Count,
        };
    }

    /// <summary>The sampling interval of the profiles whose weights are milliseconds (EventPipe's sample profiler: 1 kHz).</summary>
    public const double SamplerMs = 1;

    /// <summary>An unbounded end (too few samples) is null: no interval, not an infinite one.</summary>
    private static double? Round(double d) => double.IsInfinity(d) ? null : Math.Round(d, 4);

    private static int IndexOf(IReadOnlyList<string> frames, Regex re, int from)
    {
        for (var i = from; i < frames.Count; i++) if (re.IsMatch(frames[i])) return i;
        return -1;
    }

    public static TraceSequenceFacts Sequence(TraceSequenceSpec s, TraceModel trace)
    {
        var res = s.Events.Select(e => new Regex(e)).ToList();
        var chains = 0;
        var found = new List<string>();
        var step = 0;
        var current = new List<string>();
        foreach (var e in trace.Ordered)
        {
            if (!res[step].IsMatch(e.Text)) continue;
            current.Add(string.Create(CultureInfo.InvariantCulture, $"t={e.Time:0.000}s {Trim(e.Text)}"));
            if (++step < res.Count) continue;
            if (chains++ == 0) found.AddRange(current);
            (step, current) = (0, []);
        }
        return new TraceSequenceFacts(s.Events, s.Min, chains, found, chains >= s.Min);
    }

    public static TraceCountFacts Count(TraceCountSpec s, TraceModel trace)
    {
        var re = new Regex(s.Event);
        var hits = trace.Ordered.Where(e => re.IsMatch(e.Text)).ToList();
        var holds = (s.Min is null || hits.Count >= s.Min) && (s.Max is null || hits.Count <= s.Max);
        return new TraceCountFacts(s.Event, s.Min, s.Max, hits.Count,
                                   hits.Take(5).Select(e => string.Create(CultureInfo.InvariantCulture, $"t={e.Time:0.000}s {Trim(e.Text)}")).ToList(), holds);
    }

    private static string Trim(string text) => text.Length <= 160 ? text : text[..157] + "...";
}
