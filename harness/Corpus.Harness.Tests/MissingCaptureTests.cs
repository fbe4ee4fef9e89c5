using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>
/// Evidence the manifest asks for and that was never captured says nothing about the bug: the cell is an error that
/// names the capture and why, never a wrong-failure (issue 25). Judged on the repros' own signatures.
/// </summary>
public sealed class MissingCaptureTests
{
    private static CaseSpec CaseWith(string repro, string key) =>
        Manifest.Load(Path.Combine(RoslynTriggerTests.Root, "repros", repro, "repro.json")).Cases.First(c => c.Signature.Has(key));

    private static CellResult Cell(string repro, string error)
    {
        var cell = new CellResult { Key = new CellKey(repro, "c", "bug", "s"), Rerun = "" };
        cell.CaptureErrors.Add(error);
        return cell;
    }

    private static EvidenceResult Check(IEvidenceCheck check, CaseSpec cs, CellResult cell, ICaptureBackend? backend = null, string? hit = "run0001") =>
        check.CheckAsync(new EvidenceContext(cs, null!, cell, backend!, null!, hit)).Result;

    private static void IsErrorNaming(EvidenceResult e, string reason)
    {
        Assert.Equal(EvidenceStatus.Broken, e.Status);
        Assert.Contains(reason, e.Detail);
        var (outcome, detail) = CellRunner.Compose(new Verdict(Outcome.Reproduced, "the family's verdict"), [e]);
        Assert.Equal(Outcome.Error, outcome);
        Assert.Contains(reason, detail);
    }

    [Fact]
    public void AHeapCaptureThatWasNotTakenIsAnError()
    {
        var cs = CaseWith("filemapping-leak", "heap");
        var backend = new CoreClrCreateDump(ToolRunner.Instance, null, "DumpFacts.dll", heap: true);
        IsErrorNaming(Check(new HeapEvidence(), cs, Cell("filemapping-leak", "heap: createdump exited 1"), backend), "heap: createdump exited 1");
    }

    [Fact]
    public void ACrashWithoutItsFreeFactsIsAnError()
    {
        var cs = CaseWith("suppressfinalize-shutdown-race", "doubleFree");
        IsErrorNaming(Check(new DoubleFreeEvidence(), cs, Cell("suppressfinalize-shutdown-race", "run0001: gdb: no core")), "run0001: gdb: no core");
    }

    [Fact]
    public void ACrashWithoutItsCoreOrRingFileIsAnError()
    {
        var cs = CaseWith("refcount-lost-update", "lostUpdate");
        IsErrorNaming(Check(new LostUpdateEvidence(), cs, Cell("refcount-lost-update", "run0001: core not written")), "core not written");
    }
}
