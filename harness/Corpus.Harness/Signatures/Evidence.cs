using System.Text.RegularExpressions;
using Corpus.Harness.Capture;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

public sealed record StacksSpec(string Frame)
{
    public static StacksSpec Read(Fields f)
    {
        f.AllowOnly("frame");
        return new StacksSpec(f.RegexOr("frame", required: true)!);
    }
}

/// <param name="Snapshots">Captures that carried stacks.</param>
/// <param name="Hits">Of those, the ones with a frame that matches.</param>
/// <param name="Frames">The hit thread's top frames (where it was); <paramref name="Matched"/> the first of its frames, at any depth, that matches.</param>
public sealed record StacksFacts(string Frame, int Snapshots, int Hits, string? Snapshot, string? Thread, IReadOnlyList<string> Frames,
                                 string? Matched = null);

/// <summary>Stack facts: a reproduction must also show the hot path in a snapshot.</summary>
public sealed class StacksEvidence : IEvidenceCheck
{
    public string Key => "stacks";
    public object ReadSpec(Fields f) => StacksSpec.Read(f);

    public async Task<EvidenceResult> CheckAsync(EvidenceContext x)
    {
        await RecaptureAsync(x);
        return Judge(x);
    }

    /// <summary>
    /// Snapshots that came out short, or were never taken because the run ended first, say nothing about the bug:
    /// while none carried a walked stack, the run they were asked of is started again as a capture-only run (its size,
    /// the same timed capture), at most the capture's retakes times.
    /// </summary>
    private static async Task RecaptureAsync(EvidenceContext x)
    {
        if (x.Case.Timed is not { } timed) return;
        var cell = x.Cell;
        for (var again = 1; again <= timed.Retakes; again++)
        {
            var captures = cell.CapturesNow();
            if (captures.Any(c => c.Threads.Any(t => t.Walked))) return;
            // The run asked for them: the last capture's, else the one a capture error names ("label: backend: why").
            var from = captures.Count > 0 ? captures[^1].Run : cell.CaptureErrorsNow().Select(e => e.Split(':')[0]).LastOrDefault();
            if (cell.RunsNow().LastOrDefault(r => r.Label == from) is not { } asked) return;
            var n = asked.N;
            x.Runs.Progress($"{cell.Key} recapture {again} of {timed.Retakes}: the {captures.Count} snapshots so far came out short");
            await x.Runs.ExecuteAsync(n, $"recapture{again}{(n is null ? "" : $"-n{n}")}", timed, untilCaptured: true);
        }
    }

    private EvidenceResult Judge(EvidenceContext x)
    {
        var spec = x.Case.Signature.Get<StacksSpec>(Key)!;
        var cell = x.Cell;
        var re = new Regex(spec.Frame);
        var captures = cell.CapturesNow();
        var hits = captures.SelectMany(c => c.Threads.Select(t => (c, t))).Where(h => h.t.Frames.Any(f => re.IsMatch(f))).ToList();
        // A snapshot whose threads could not be unwound (ClrMD's lone "[Managed] 0x0") carries no stack to judge.
        var withStacks = captures.Count(c => c.Threads.Any(t => t.Walked));
        var hitSnapshots = hits.Select(h => h.c).Distinct().Count();
        var figure = $"stacks {hitSnapshots}/{withStacks} snapshots";
        if (hits.Count > 0)
        {
            var (c, t) = hits[0];
            var top = t.Frames.Take(6).ToList();
            return EvidenceResult.Hold(Key, $"snapshot {Path.GetFileName(c.File)} shows /{spec.Frame}/ on thread '{t.Thread}'",
                new StacksFacts(spec.Frame, withStacks, hitSnapshots, c.File, t.Thread, top, t.Frames.First(f => re.IsMatch(f))), figure);
        }
        var facts = new StacksFacts(spec.Frame, withStacks, 0, null, null, []);
        // No stacks to read says nothing about the bug: the capture broke or never ran, and the cell is an error naming why.
        if (withStacks == 0)
            return EvidenceResult.Broken(Key, captures.Count == 0
                ? $"no stack snapshot was taken ({string.Join("; ", cell.CaptureErrorsNow())})"
                : $"no stack snapshot carried a stack that could be walked ({captures.Count(c => c.Threads.Count > 0)} with threads, "
                  + $"none with a named frame){(cell.CaptureErrorsNow() is { Count: > 0 } errors ? $"; {string.Join("; ", errors)}" : "")}", facts, figure);
        return EvidenceResult.Fail(Key, $"no snapshot shows /{spec.Frame}/", facts, figure);
    }
}

/// <summary>Dump facts: a heap capture must hold exactly this many live instances of a type.</summary>
public sealed record HeapSpec(string Type, int Count)
{
    public static HeapSpec Read(Fields f)
    {
        f.AllowOnly("type", "count");
        return new HeapSpec(f.String("type"), f.IntOr("count", null, required: true, min: 0)!.Value);
    }
}

public sealed record HeapFacts(string Type, int Expected, long? Seen, string? Capture);

/// <summary>Heap facts: judged where the subject's capture backend carries heap facts (CoreCLR's createdump).</summary>
public sealed class HeapEvidence : IEvidenceCheck
{
    public string Key => "heap";
    public object ReadSpec(Fields f) => HeapSpec.Read(f);

    public Task<EvidenceResult> CheckAsync(EvidenceContext x)
    {
        var heap = x.Case.Signature.Get<HeapSpec>(Key)!;
        var cell = x.Cell;
        var heaps = cell.CapturesNow().Where(c => c.HeapCounts is not null).ToList();
        if (heaps.Count == 0)
        {
            if (!x.Backend.HeapFacts)
            {
                return Task.FromResult(new EvidenceResult(Key, EvidenceStatus.NotJudged, "this subject's captures carry no heap facts")
                    { Facts = new HeapFacts(heap.Type, heap.Count, null, null), KeyFigures = ["heap not judged"] });
            }
            return Task.FromResult(EvidenceResult.Broken(Key, $"the heap capture the signature needs was not taken ({string.Join("; ", cell.CaptureErrorsNow())})",
                new HeapFacts(heap.Type, heap.Count, null, null)));
        }
        var seen = heaps[^1].HeapCounts!.GetValueOrDefault(heap.Type);
        var facts = new HeapFacts(heap.Type, heap.Count, seen, heaps[^1].File);
        var figure = $"heap {seen} {heap.Type}";
        return Task.FromResult(seen == heap.Count
            ? EvidenceResult.Hold(Key, $"the heap holds {seen} live {heap.Type}", facts, figure)
            : EvidenceResult.Fail(Key, $"the heap holds {seen} {heap.Type}, not {heap.Count}", facts, figure));
    }
}

/// <summary>
/// Double-free facts from the crash capture: the aborting free's frames must match CrashingFrames, and another
/// thread must have freed the same pointer earlier from frames matching OtherFrames.
/// </summary>
public sealed record DoubleFreeSpec(IReadOnlyList<string> CrashingFrames, IReadOnlyList<string> OtherFrames)
{
    public static DoubleFreeSpec Read(Fields f)
    {
        f.AllowOnly("crashingFrames", "otherFrames");
        return new DoubleFreeSpec(f.RegexList("crashingFrames"), f.RegexList("otherFrames"));
    }
}

public sealed record DoubleFreeFacts(string Pointer, int FirstThread, IReadOnlyList<string> FirstFrames, int? CrashThread,
                                     IReadOnlyList<string> CrashFrames);

/// <summary>A crash is this double free only if the core shows the same pointer freed by two threads.</summary>
public sealed class DoubleFreeEvidence : IEvidenceCheck
{
    public string Key => "doubleFree";
    public object ReadSpec(Fields f) => DoubleFreeSpec.Read(f);

    public void Validate(CaseSpec cs, Fields c)
    {
        if (cs.Crash is not { Freelog: true }) throw c.Error("a doubleFree signature needs the freelog crash capture", "signature.doubleFree");
    }

    public Task<EvidenceResult> CheckAsync(EvidenceContext x)
    {
        var spec = x.Case.Signature.Get<DoubleFreeSpec>(Key)!;
        var cell = x.Cell;
        if (x.HitRun is not { } label) return Task.FromResult(EvidenceResult.Broken(Key, "no hit run to read double-free facts from"));
        var facts = cell.CrashFactsOf(label);
        if (facts is null)
            return Task.FromResult(EvidenceResult.Broken(Key, $"the crash capture of {label} gave no free() facts ({string.Join("; ", cell.CaptureErrorsNow())})"));
        var why = facts.Mismatch(spec);
        if (why is not null) return Task.FromResult(EvidenceResult.Fail(Key, $"not this double free: {why}"));
        var other = facts!.OtherFree(spec)!;
        var aborting = facts.Frees.Last(f => f.Aborting);
        static IReadOnlyList<string> Frames(FreeRecord f) => f.Frames.Where(x => !x.StartsWith("(wrapper")).Take(3).Select(x => x.Split(' ')[0]).ToList();
        var figure = $"{facts.Pointer} freed on LWP {other.Thread} then on LWP {facts.CrashThread}";
        return Task.FromResult(EvidenceResult.Hold(Key,
            $"{facts.Pointer} was freed by LWP {other.Thread} ({string.Join(" ← ", Frames(other))}), then again by the crashing "
            + $"LWP {facts.CrashThread} ({string.Join(" ← ", Frames(aborting))})"
            + (facts.FreesBeforeAbort is { } later ? $", which glibc noticed at the free {later + 1} later" : ""),
            new DoubleFreeFacts(facts.Pointer!, other.Thread, Frames(other), facts.CrashThread, Frames(aborting)), figure));
    }
}
