using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>Leak family for shared memory: one run, watched over time by a <see cref="ShmemProbe"/>.</summary>
public sealed class ShmemFamily : ISignatureFamily
{
    public string Name => "shmem";

    // The program holds its memory for seconds while it is measured, and the verdict is memory, not time.
    public CellLane Lane => CellLane.Alongside;
    public bool Runs(Signature signature) => signature.Shmem is not null;

    public async Task RunAsync(ICellRuns runs, CellResult cell)
    {
        var cs = runs.Case;
        runs.Progress($"{cell.Key} …");
        var probe = new ShmemProbe(cs.Signature.Shmem!);
        LeakMeasure? leak = null;
        var (run, metrics, _) = await runs.ExecuteAsync(null, "run", cs.Timed, async p => leak = await probe.WatchAsync(p));
        ProcessFamily.Record(cell, run, metrics);
        var (outcome, detail) = ProcessFamily.Classify(cs.Signature, run);
        if (outcome != Outcome.Unsupported && leak is not null)
        {
            Evidence.RecordLeak(cell, leak);
            (outcome, detail) = ProcessMatch.Mismatch(cs.Signature.Clean, run) is { } bad
                ? (Outcome.WrongFailure, $"{run.Status}: the program did not finish ({bad}); {ProcessMatch.Tail(run)}")
                : probe.Judge(leak);
        }
        (cell.Outcome, cell.Detail) = (outcome, detail);
    }
}
