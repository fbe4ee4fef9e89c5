using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>The trace contract: capture.trace and the trace evidence read with errors naming the field, and the evidence judged on the model.</summary>
public sealed class TraceContractTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-trace-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    private string Write(string capture, string signatureExtra = "", string subjects = "\"linux\"", string family = "\"process\": { \"exit\": \"nonzero\" }",
                         string args = "\"x\"")
    {
        var dir = Path.Combine(_root, "repros", "t");
        Directory.CreateDirectory(Path.Combine(dir, "src"));
        File.WriteAllText(Path.Combine(dir, "src", "Program.cs"), "class P { static void Main() {} }");
        File.WriteAllText(Path.Combine(dir, "repro.json"), $$"""
            { "id": "t", "title": "t", "category": "perf", "references": ["r"], "languages": ["csharp"],
              "subjects": [{{subjects}}], "variants": ["bug"], "build": { "mono": { "sources": ["src/*.cs"] } },
              "cases": [ { "id": "main", "args": [{{args}}], "program": "main",
                           "signature": { {{family}} {{signatureExtra}} }, "capture": { {{capture}} } } ] }
            """);
        return Path.Combine(dir, "repro.json");
    }

    private static InputException Error(string file) => Assert.Throws<InputException>(() => Manifest.Load(file));

    [Theory]
    [InlineData("\"trace\": { }", "cases[0].capture.trace.kind")]
    [InlineData("\"trace\": { \"kind\": \"wall\" }", "cases[0].capture.trace.kind")]
    [InlineData("\"trace\": { \"kind\": \"api\", \"channels\": [\"win\"] }", "cases[0].capture.trace.channels[0]")]
    [InlineData("\"trace\": { \"kind\": \"cpu\", \"channels\": [\"+win\"] }", "cases[0].capture.trace.channels")]
    [InlineData("\"trace\": { \"kind\": \"api\", \"syscalls\": [\"mun map\"] }", "cases[0].capture.trace.syscalls[0]")]
    [InlineData("\"trace\": { \"kind\": \"cpu\", \"events\": [\"cpu clock\"] }", "cases[0].capture.trace.events[0]")]
    [InlineData("\"trace\": { \"kind\": \"cpu\", \"frequencyHz\": 0 }", "cases[0].capture.trace.frequencyHz")]
    [InlineData("\"trace\": { \"kind\": \"cpu\", \"colour\": 1 }", "cases[0].capture.trace.colour")]
    public void BadTraceCaptureNamesTheField(string capture, string field)
    {
        var e = Error(Write(capture, subjects: "\"mono\""));
        Assert.Equal(field, e.Field);
    }

    [Fact]
    public void ATracedRunsSocketsGetAFolderShortEnoughForAUnixSocket()
    {
        const string name = "corpus-trace-7014-2";
        var shallow = "/c/artifacts/r/x/case/bug/net10/trace/tmp";
        Assert.Equal(shallow, Runner.Phases.TracedRun.SocketFolder(shallow, "/c/build/tmp/", name));
        var deep = "/work/corpus/artifacts/20261126-034934/binaryformatter-quadratic/deserialize/bug/net10/trace/tmp";
        Assert.Equal("/work/corpus/build/tmp/" + name, Runner.Phases.TracedRun.SocketFolder(deep, "/work/corpus/build/tmp/", name));
        // A lab's fresh clone: under its TMPDIR dotnet-trace's socket path was 114 bytes, and the trace was never taken.
        var folder = Runner.Phases.TracedRun.SocketFolder(deep, "/work/fresh2/build/test-labs.RRgOyK/corpus/build/tmp/", name);
        Assert.Equal("/tmp/" + name, folder);
        Assert.True(Path.Combine(folder, "dotnet-trace-8198-20261126_035302.socket").Length <= 107);
    }

    [Fact]
    public void AKindWithoutABackendIsRefusedByName()
    {
        // The native helper's perf backend is not there on this branch: linux subjects cannot be traced yet.
        var e = Error(Write("\"trace\": { \"kind\": \"faults\" }", subjects: "\"wine\""));
        Assert.Equal("cases[0].capture.trace.kind", e.Field);
        Assert.Contains("wine cannot be traced", e.Problem);
    }

    [Theory]
    [InlineData("\"size\": \"biggest\"", "cases[0].capture.trace.size")]
    [InlineData("\"size\": 2.5", "cases[0].capture.trace.size")]
    [InlineData("\"subjects\": [\"mono\"]", "cases[0].capture.trace.size")]   // a sweep must say which size
    public void ASweepNamesItsTracedSize(string extra, string field)
    {
        var sweep = "\"complexity\": { \"metric\": \"t\", \"sizes\": [1, 2, 4], \"reproducedMin\": 1.7, \"cleanMax\": 1.3 }";
        var e = Error(Write($"\"trace\": {{ \"kind\": \"cpu\", {extra} }}", subjects: "\"mono\"", family: sweep, args: "\"{n}\""));
        Assert.Equal(field, e.Field);
    }

    [Fact]
    public void LargestFinishedIsASizeOnlyInASweep()
    {
        var sweep = "\"complexity\": { \"metric\": \"t\", \"sizes\": [1, 2, 4], \"reproducedMin\": 1.7, \"cleanMax\": 1.3 }";
        var m = Manifest.Load(Write("\"trace\": { \"kind\": \"cpu\", \"size\": \"largest-finished\" }", subjects: "\"mono\", \"net10\"", family: sweep, args: "\"{n}\""));
        Assert.True(m.Cases[0].Trace!.SizeIsLargestFinished);
        Assert.Null(m.Cases[0].Trace!.Size);
        var e = Error(Write("\"trace\": { \"kind\": \"cpu\", \"size\": \"largest-finished\" }", subjects: "\"mono\""));
        Assert.Equal("cases[0].capture.trace.size", e.Field);
    }

    [Fact]
    public void ATraceSubjectMustBeTheCases()
    {
        var e = Error(Write("\"trace\": { \"kind\": \"cpu\", \"subjects\": [\"net8\"] }", subjects: "\"mono\""));
        Assert.Equal("cases[0].capture.trace.subjects[0]", e.Field);
    }

    [Fact]
    public void TraceEvidenceNeedsTheCaptureAndAnAssertion()
    {
        var e = Error(Write("\"timed\": { \"marker\": \"m\" }", ", \"trace\": { \"samples\": [ { \"frame\": \"X\", \"min\": 0.5 } ] }", subjects: "\"mono\""));
        Assert.Equal("cases[0].signature.trace", e.Field);
        e = Error(Write("\"timed\": { \"marker\": \"m\" }", ", \"trace\": { }", subjects: "\"mono\""));
        Assert.Equal("cases[0].signature.trace", e.Field);
        e = Error(Write("\"timed\": { \"marker\": \"m\" }", ", \"trace\": { \"samples\": [ { \"frame\": \"(\", \"min\": 0.5 } ] }", subjects: "\"mono\""));
        Assert.Equal("cases[0].signature.trace.samples[0].frame", e.Field);
        e = Error(Write("\"timed\": { \"marker\": \"m\" }", ", \"trace\": { \"samples\": [ { \"frame\": \"X\" } ] }", subjects: "\"mono\""));
        Assert.Equal("cases[0].signature.trace.samples[0]", e.Field);
        e = Error(Write("\"timed\": { \"marker\": \"m\" }", ", \"trace\": { \"samples\": [ { \"frame\": \"X\", \"min\": 1.5 } ] }", subjects: "\"mono\""));
        Assert.Equal("cases[0].signature.trace.samples[0].min", e.Field);
    }

    private static TraceModel Model(params (string Stack, double Weight)[] samples) => Model(1, samples);

    /// <summary>The samples in this order, the whole pattern <paramref name="times"/> over: enough for the share's interval.</summary>
    private static TraceModel Model(int times, params (string Stack, double Weight)[] samples) =>
        new("cpu", "samples", Enumerable.Repeat(samples, times).SelectMany(x => x).Select(s => new TraceSample(s.Stack.Split(';'), s.Weight)).ToList(), []);

    private static readonly TraceCapture Cpu = new("cpu", [], null, null, [], [], [], null);

    [Fact]
    public void ShareCountsOnlySamplesUnderTheRootAndFramesAtOrBelowIt()
    {
        var model = Model(("Main;Serialize;ObjectManager.Fix", 5),     // not under Deserialize
                          ("Main;Deserialize;ObjectManager.Fix", 6),
                          ("Main;Deserialize;Parse", 2),
                          ("ObjectManager.Fix;Main;Deserialize;Read", 2));  // the frame above the root does not count
        var spec = new TraceShareSpec("ObjectManager", "Deserialize", 0.5, 0.2);
        var share = TraceEvidence.Share(spec, model, reproduced: true);
        Assert.Equal(0.6, share.Share);
        Assert.Equal(3, share.SamplesUnder);
        Assert.Equal("min", share.Judged);
        // Three samples give a wide interval (Wilson's, 95%): the share decides nothing yet.
        Assert.Null(share.Holds);
        Assert.True(share.Low < 0.5 && share.High > 0.5, share.Percent);
        var more = TraceEvidence.Share(spec, Model(60, ("Main;Serialize;ObjectManager.Fix", 5), ("Main;Deserialize;ObjectManager.Fix", 6),
                                                   ("Main;Deserialize;Parse", 2), ("ObjectManager.Fix;Main;Deserialize;Read", 2)), reproduced: true);
        Assert.Equal((0.6, 180, true), (more.Share, more.SamplesUnder, more.Holds));
    }

    [Fact]
    public void ACleanCellIsJudgedAgainstItsOwnBound()
    {
        var spec = new TraceSpec([new TraceShareSpec("ObjectManager", "Deserialize", 0.5, 0.2)], [], []);
        var clean = TraceEvidence.Check(spec, Model(100, ("Deserialize;Parse", 9), ("Deserialize;ObjectManager", 1)), null, Cpu, Outcome.Clean, []);
        Assert.Equal(EvidenceStatus.Holds, clean.Status);
        var notClean = TraceEvidence.Check(spec, Model(20, ("Deserialize;Parse", 1), ("Deserialize;ObjectManager", 1)), null, Cpu, Outcome.Clean, []);
        Assert.Equal(EvidenceStatus.Fails, notClean.Status);
        Assert.Contains("clean by its family", notClean.Detail);
        var weak = TraceEvidence.Check(spec, Model(20, ("Deserialize;Parse", 3), ("Deserialize;ObjectManager", 1)), null, Cpu, Outcome.Reproduced, []);
        Assert.Equal(EvidenceStatus.Fails, weak.Status);
        var noBound = TraceEvidence.Check(new TraceSpec([new TraceShareSpec("X", null, 0.5, null)], [], []), Model(("X", 1)), null, Cpu, Outcome.Clean, []);
        Assert.Equal(EvidenceStatus.NotJudged, noBound.Status);
    }

    [Fact]
    public void AMissingTraceIsBrokenNotAPass()
    {
        var spec = new TraceSpec([new TraceShareSpec("X", null, 0.5, null)], [], []);
        var r = TraceEvidence.Check(spec, (TraceModel?)null, null, Cpu, Outcome.Reproduced, ["trace: dotnet-trace: not installed"]);
        Assert.Equal(EvidenceStatus.Broken, r.Status);
        Assert.Contains("not installed", r.Detail);
    }

    [Fact]
    public void EventsMustComeInOrder()
    {
        TraceEvent E(double t, string name, string fields = "") =>
            new(t, name, fields.Length == 0 ? new Dictionary<string, string>() : fields.Split(' ').ToDictionary(f => f.Split('=')[0], f => f.Split('=')[1]));
        var model = new TraceModel("api", "samples", [], [E(2, "AttachThreadInput", "from=0024"), E(1, "SetParent", "hwnd=0x10"), E(3, "munmap", "addr=0x7f00")]);
        var inOrder = TraceEvidence.Sequence(new TraceSequenceSpec(["SetParent", "AttachThreadInput from=0024"], 1), model);
        Assert.True(inOrder.Holds);
        Assert.Equal(["t=1.000s SetParent hwnd=0x10", "t=2.000s AttachThreadInput from=0024"], inOrder.Found);
        Assert.False(TraceEvidence.Sequence(new TraceSequenceSpec(["AttachThreadInput", "SetParent"], 1), model).Holds);
        Assert.True(TraceEvidence.Count(new TraceCountSpec("^close", null, 0), model).Holds);
        Assert.False(TraceEvidence.Count(new TraceCountSpec("munmap", 2, null), model).Holds);
    }

    [Fact]
    public void PicturesAreKeptByName()
    {
        Assert.True(TracePictures.Kept("trace-n200000" + TracePictures.HtmlSuffix));
        Assert.True(TracePictures.Kept("trace" + TracePictures.SpeedscopeSuffix));
        Assert.False(TracePictures.Kept("trace.mlpd"));
    }
}
