using Corpus.Harness.Capture;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>What an evidence check reads: the case, the cell's captures and the run the family named as its hit.</summary>
public sealed record EvidenceContext(CaseSpec Case, Subject Subject, CellResult Cell, ICaptureBackend Backend, IRunLauncher Runs,
                                     string? HitRun)
{
    /// <summary>The run's tool runner, for checks that read a capture with a tool (gdb over a core).</summary>
    public IToolRunner Tools { get; init; } = ToolRunner.Instance;

    /// <summary>The family's outcome: reproduced, or clean for a check that judges clean cells (<see cref="IEvidenceCheck.OnClean"/>).</summary>
    public Outcome Outcome { get; init; } = Outcome.Reproduced;
}

/// <summary>
/// An evidence check: facts a reproduction must also show (a frame in a snapshot, live instances in a heap, a
/// pointer freed twice in a core). It runs only once the family says "reproduced"; a check that fails turns the cell
/// into a wrong-failure. Adding one is one class and one registration (<see cref="SignatureFamilies.With(IEvidenceCheck)"/>).
/// </summary>
public interface IEvidenceCheck
{
    /// <summary>Its key: a block of the case's signature, e.g. "stacks".</summary>
    string Key { get; }

    /// <summary>False for a check whose spec lives elsewhere in the case (time travel: under "capture").</summary>
    bool InSignature => true;

    /// <summary>
    /// Also runs on a cell its family called clean: its facts are recorded there, and a clean cell whose evidence shows
    /// the bug after all (a trace whose samples sit in the bug's frames) becomes a wrong-failure.
    /// </summary>
    bool OnClean => false;

    /// <summary>Runs only when the cheaper checks held (it starts a process of its own).</summary>
    bool Expensive => false;

    object ReadSpec(Fields f);

    /// <summary>Checks that need the whole case (e.g. the capture it reads); throws a field error.</summary>
    void Validate(CaseSpec cs, Fields c) { }

    bool Applies(CaseSpec cs, Subject subject) => cs.Signature.Has(Key);

    Task<EvidenceResult> CheckAsync(EvidenceContext context);
}
