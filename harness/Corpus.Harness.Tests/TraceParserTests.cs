using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>
/// The trace backends' readers on real output, recorded from binaryformatter-quadratic's deserialize at 20,000 books
/// (Fixtures/traces): Mono 6.8's log profiler through `mprof-report --debug` (its sample lines), and dotnet-trace
/// 10.0.750501's speedscope file of the same program on .NET 10. The alloc fixtures are a small program that allocates
/// 1000-byte arrays in Fill (64 MB on .NET 8, 16 MB on Mono; a few KB elsewhere), recorded through the backends'
/// commands: dotnet-trace's nettrace (gzipped: 260 KB, nearly all rundown) and mprof-report's allocation summary.
/// </summary>
public sealed class TraceParserTests
{
    private static string Fixture(string name) => Path.Combine(RoslynTriggerTests.Root, "harness", "Corpus.Harness.Tests", "Fixtures", "traces", name);

    private static readonly TraceShareSpec ObjectManager =
        new(@"System\.Runtime\.Serialization\.ObjectManager[.:]", @"Formatters\.Binary\.BinaryFormatter[.:]Deserialize", 0.5, 0.5);

    [Fact]
    public void MonoSamplesAreStacksRootFirst()
    {
        var lines = File.ReadLines(Fixture("mono-deserialize-20000.mprof-debug.txt")).ToList();
        var model = MonoLogProfilerBackend.Read(lines, "cpu");
        Assert.Equal(lines.Count(l => l.StartsWith("sample hit, type: ")), model.Samples.Count);
        Assert.All(model.Samples, s => Assert.StartsWith("thread 0x", s.Thread));
        // Root first: the runtime's invoke wrapper, then Main, ..., and ObjectManager below BinaryFormatter:Deserialize.
        var deep = model.Samples.First(s => s.Frames.Any(f => f.Contains("ObjectManager:")));
        Assert.StartsWith("(wrapper runtime-invoke)", deep.Frames[0]);
        Assert.True(deep.Frames.ToList().FindIndex(f => f.Contains("BinaryFormatter:Deserialize")) < deep.Frames.ToList().FindIndex(f => f.Contains("ObjectManager:")));
        // Idle and native-only hits keep their thread, as one [native] frame.
        Assert.Contains(model.Samples, s => s.Frames is ["[native]"]);
        var share = TraceEvidence.Share(ObjectManager, model, reproduced: true);
        Assert.InRange(share.SamplesUnder, 5, model.Samples.Count);
        Assert.NotNull(share.Share);
    }

    [Fact]
    public void DotnetTraceSpeedscopeBecomesTimeWeightedStacks()
    {
        var json = File.ReadAllText(Fixture("net10-deserialize-20000.speedscope.json"));
        var model = DotnetTraceBackend.ReadSpeedscope(json, "cpu");
        Assert.Equal("milliseconds", model.Unit);
        Assert.NotEmpty(model.Samples);
        Assert.DoesNotContain(model.Samples, s => s.Frames.Count > 0 && (s.Frames[0].StartsWith("Process64") || s.Frames[0] == "Threads"));
        // The weights add up to the profile's span: every millisecond lands in exactly one stack.
        using var doc = System.Text.Json.JsonDocument.Parse(json);
        var span = doc.RootElement.GetProperty("profiles").EnumerateArray().Sum(p => p.GetProperty("endValue").GetDouble() - p.GetProperty("startValue").GetDouble());
        Assert.InRange(model.TotalWeight, span * 0.95, span * 1.0001);
        var under = model.Samples.First(s => s.Frames.Any(f => f.Contains("ObjectManager.")) && s.Frames.Any(f => f.Contains("BinaryFormatter.Deserialize")));
        Assert.True(under.Frames.ToList().FindIndex(f => f.Contains("BinaryFormatter.Deserialize")) < under.Frames.ToList().FindIndex(f => f.Contains("ObjectManager.")));
        Assert.NotNull(TraceEvidence.Share(ObjectManager, model, reproduced: false).Share);
    }

    /// <summary>
    /// A real 4.5.0 trace of 15 nesting levels: the main thread parses for 8.2 s, and the finalizer thread entered the
    /// trace at 0.84 s, its first finalizer, and counted 3.3 s of RunFinalizers without a parser frame. Of all samples
    /// the parser holds 70 %; of the main thread's, 98 %. In other runs the finalizer thread counted from start to end
    /// and the share of all samples halved (49–52 %, under the bound of 50 %), while the main thread's held.
    /// </summary>
    [Fact]
    public void TheShareOfTheMainThreadLeavesOutAFinalizerThreadThatEnteredTheTraceLate()
    {
        string json;
        using (var gz = new System.IO.Compression.GZipStream(File.OpenRead(Fixture("roslyn450-attribute-15.speedscope.json.gz")), System.IO.Compression.CompressionMode.Decompress))
        using (var text = new StreamReader(gz))
            json = text.ReadToEnd();
        var model = DotnetTraceBackend.ReadSpeedscope(json, "cpu");
        Assert.Equal("Thread (9894)", model.MainThread);
        Assert.Equal(["Thread (9894)", "Thread (9903)"], model.Samples.Select(x => x.Thread).Distinct().Order());
        var finalizer = model.Samples.Where(x => x.Thread == "Thread (9903)").ToList();
        Assert.All(finalizer, x => Assert.Contains(x.Frames, f => f.EndsWith("System.GC.RunFinalizers()")));
        const string parser = @"LanguageParser\.Parse(AttributeDeclaration|CollectionExpression)";
        var all = TraceEvidence.Share(new TraceShareSpec(parser, null, 0.5, 0.5), model, reproduced: true);
        var main = TraceEvidence.Share(new TraceShareSpec(parser, null, 0.5, 0.5, Thread: "main"), model, reproduced: true);
        Assert.InRange(all.Share!.Value, 0.69, 0.71);
        Assert.InRange(main.Share!.Value, 0.97, 0.99);
        Assert.Equal("Thread (9894)", main.Thread);
        Assert.Equal(model.Samples.Where(x => x.Thread == "Thread (9894)").Sum(x => x.Weight), main.Total, 2);
    }

    [Fact]
    public void AShareOfTheMainThreadOnATraceThatNamesNoneIsAnErrorNotAVerdict()
    {
        var model = new TraceModel("cpu", "samples", Enumerable.Repeat(new TraceSample(["Main", "Parse"], 3) { Thread = "t1" }, 20).ToList(), []);
        var spec = new TraceSpec([new TraceShareSpec("Parse", null, 0.5, null, Thread: "main")], [], []);
        var r = TraceEvidence.Check(spec, model, null, new TraceCapture("cpu", [], null, null, [], [], [], null), Outcome.Reproduced, []);
        Assert.Equal(EvidenceStatus.Broken, r.Status);
        Assert.Contains("names no main thread", r.Detail);
        var named = TraceEvidence.Check(spec, model with { MainThread = "t1" }, null, new TraceCapture("cpu", [], null, null, [], [], [], null), Outcome.Reproduced, []);
        Assert.Equal(EvidenceStatus.Holds, named.Status);
        Assert.Contains("of the samples of t1 in /Parse/", named.Detail);
        Assert.StartsWith("trace: 100% [", named.Detail);
    }

    [Fact]
    public void TheSpeedscopeWeWriteReadsBackAsTheSameSamples()
    {
        var model = MonoLogProfilerBackend.Read(File.ReadLines(Fixture("mono-deserialize-20000.mprof-debug.txt")), "cpu");
        var back = DotnetTraceBackend.ReadSpeedscope(TracePictures.Speedscope(model, "t"), "cpu");
        Assert.Equal(model.Samples.Count, back.Samples.Count);
        Assert.Equal(model.TotalWeight, back.TotalWeight);
        Assert.Equal(TraceEvidence.Share(ObjectManager, model, true).Share, TraceEvidence.Share(ObjectManager, back, true).Share);
    }

    [Fact]
    public void TheFlameGraphNamesTheFramesItDraws()
    {
        var model = new TraceModel("cpu", "samples",
            [new TraceSample(["Main", "Deserialize", "ObjectManager.Fixup<T>"], 3), new TraceSample(["Main", "Parse"], 1)], []);
        var html = TracePictures.Html(model, "cell & title", "x.speedscope.json");
        Assert.Contains("<svg", html);
        Assert.Contains("ObjectManager.Fixup&lt;T&gt; (75.0%", html);
        Assert.Contains("cell &amp; title", html);
        Assert.DoesNotContain("<script", html);
    }

    [Fact]
    public void ADeepRecursionDrawsASmallPicture()
    {
        // Roslyn's nested parse: 2000 samples 120 to 220 frames deep, each branch a little different (13 MB of SVG
        // before boxes under 3 pixels were left out).
        var random = new Random(7);
        var samples = Enumerable.Range(0, 2000).Select(_ =>
            new TraceSample(Enumerable.Range(0, 120 + random.Next(100)).Select(d => $"LanguageParser.Parse{(d + random.Next(3)) % 7}()").ToList())).ToList();
        var svg = TracePictures.Svg(TracePictures.Node.Of(samples), "samples", out var drawn);
        Assert.InRange(svg.Length, 1000, 1_500_000);
        Assert.InRange(drawn, 100, 20_000);
        // Cut off at different depths, the stacks share no root: the graph is drawn from the leaf.
        var model = new TraceModel("cpu", "samples", samples, []);
        Assert.True(TracePictures.Drawn(model, out _) is var drawnSamples && drawnSamples.Count == 2000);
        TracePictures.Drawn(model, out var inverted);
        Assert.True(inverted);
        TracePictures.Drawn(new TraceModel("cpu", "samples", samples.Select(x => x with { Frames = ["Main", .. x.Frames] }).ToList(), []), out inverted);
        Assert.False(inverted);
    }

    [Fact]
    public void MonoProfilerArgumentsGoBeforeTheProgram()
    {
        var run = new TraceRun(new TraceCapture("cpu", [], null, 250, [], [], [], null), "/d", "/d/tmp", "trace", Capture.ToolRunner.Instance, "/r");
        var wrapped = new MonoLogProfilerBackend().Wrap(new Subjects.Launch("/usr/bin/mono", ["--debug", "p.exe", "x"], new Dictionary<string, string>()), run);
        Assert.Equal(["--profile=log:nodefaults,sample=250,maxframes=64,output=/d/trace.mlpd", "--debug", "p.exe", "x"], wrapped.Args);
    }

    private static readonly TraceShareSpec FillUnderMain = new(@"g__Fill\||Program:Fill ", @"Program[.:]<?Main", 0.9, null);

    [Fact]
    public void DotnetTraceAllocationTicksAreStacksWeightedByBytes()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-alloc-").FullName;
        try
        {
            var nettrace = Path.Combine(dir, "trace.nettrace");
            using (var gz = new System.IO.Compression.GZipStream(File.OpenRead(Fixture("net8-alloc-64mb.nettrace.gz")), System.IO.Compression.CompressionMode.Decompress))
            using (var to = File.Create(nettrace))
                gz.CopyTo(to);
            var model = DotnetTraceBackend.ReadAllocations(nettrace, Path.Combine(dir, "trace.etlx"));
            Assert.False(File.Exists(Path.Combine(dir, "trace.etlx")));
            Assert.Equal(("alloc", "bytes"), (model.Kind, model.Unit));
            // One tick per ~100 KB: the weights add up to what the program allocated (64 Ki arrays of 1000 bytes and more).
            Assert.InRange(model.Samples.Count, 600, 700);
            Assert.InRange(model.TotalWeight, 64 * 1024 * 1000.0, 72 * 1024 * 1024.0);
            Assert.All(model.Samples, s => Assert.StartsWith("[alloc] ", s.Frames[^1]));
            Assert.All(model.Samples, s => Assert.StartsWith("Thread (", s.Thread));
            // Root first, in dotnet-trace's names: Main, then Fill, then the type it allocated.
            var fill = model.Samples.First(s => s.Frames.Any(f => f.Contains("g__Fill|")));
            Assert.Equal(["AllocProg!Program.<Main>$(class System.String[])", "AllocProg!Program.<<Main>$>g__Fill|0_0(class System.Collections.Generic.List`1<unsigned int8[]>,int32)", "[alloc] System.Byte[]"], fill.Frames);
            var share = TraceEvidence.Share(FillUnderMain, model, reproduced: true);
            Assert.True(share.Holds, $"Fill holds {share.Share} of Main's bytes");
            Assert.InRange(TraceEvidence.Share(new(@"^\[alloc\] System\.Byte\[\]$", null, 0.9, null), model, true).Share!.Value, 0.95, 1);
        }
        finally { Directory.Delete(dir, recursive: true); }
    }

    [Fact]
    public void ANettraceCutShortIsATraceException()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-alloc-").FullName;
        try
        {
            var bytes = new MemoryStream();
            using (var gz = new System.IO.Compression.GZipStream(File.OpenRead(Fixture("net8-alloc-64mb.nettrace.gz")), System.IO.Compression.CompressionMode.Decompress))
                gz.CopyTo(bytes);
            var nettrace = Path.Combine(dir, "trace.nettrace");
            File.WriteAllBytes(nettrace, bytes.ToArray()[..100_000]);
            // TraceEvent's own FormatException ("Read past end of stream") becomes the trace's error, not the cell's crash.
            var e = Assert.Throws<TraceException>(() => DotnetTraceBackend.ReadAllocations(nettrace, Path.Combine(dir, "trace.etlx")));
            Assert.Contains("Read past end", e.Message);
            Assert.False(File.Exists(Path.Combine(dir, "trace.etlx")));
        }
        finally { Directory.Delete(dir, recursive: true); }
    }

    [Fact]
    public void MonoAllocationSummaryBecomesStacksWeightedByBytes()
    {
        var lines = File.ReadLines(Fixture("mono-alloc-16mb.mprof-alloc.txt")).ToList();
        var model = MonoLogProfilerBackend.ReadAllocations(lines);
        Assert.Equal(("alloc", "bytes"), (model.Kind, model.Unit));
        // Every byte of the summary lands in one sample: "Total memory allocated: 17309744 bytes in 23047 objects".
        var total = long.Parse(lines.Single(l => l.StartsWith("Total memory allocated: ")).Split(' ')[3]);
        Assert.Equal(total, model.TotalWeight);
        Assert.Equal(lines.Count(l => l.EndsWith(" bytes from:")), model.Samples.Count(s => s.Frames[0] != "[native]"));
        Assert.All(model.Samples, s => Assert.StartsWith("[alloc] ", s.Frames[^1]));
        // Root first; the profiler's allocation wrappers are gone, so the allocating method sits right above the type.
        var fill = model.Samples.MaxBy(s => s.Weight)!;
        Assert.Equal(["(wrapper runtime-invoke) <Module>:runtime_invoke_void_object (object,intptr,intptr,intptr)", "Program:Main (string[])",
                      "Program:Fill (System.Collections.Generic.List`1<byte[]>,int)", "[alloc] System.Byte[]"], fill.Frames);
        Assert.True(TraceEvidence.Share(FillUnderMain, model, reproduced: true).Holds);
    }

    [Fact]
    public void AllocTracesAskTheToolsForAllocations()
    {
        var run = new TraceRun(new TraceCapture("alloc", [], null, null, [], [], [], null), "/d", "/d/tmp", "trace", Capture.ToolRunner.Instance, "/r");
        var mono = new MonoLogProfilerBackend().Wrap(new Subjects.Launch("/usr/bin/mono", ["p.exe"], new Dictionary<string, string>()), run);
        Assert.Equal(["--profile=log:nodefaults,alloc,maxframes=64,output=/d/trace.mlpd", "p.exe"], mono.Args);
        var dotnet = new DotnetTraceBackend("/r").Wrap(new Subjects.Launch("/s/dotnet", ["p.dll"], new Dictionary<string, string> { ["K"] = "V" }), run);
        var args = dotnet.Args.ToList();
        Assert.Equal("Microsoft-Windows-DotNETRuntime:0x1:5", args[args.IndexOf("--providers") + 1]);
        Assert.DoesNotContain("Speedscope", args);
        Assert.Equal(["--", "env", "K=V", "/s/dotnet", "p.dll"], args[args.IndexOf("--")..]);
    }
}
