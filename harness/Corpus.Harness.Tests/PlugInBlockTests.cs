using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// Three plug-ins the harness has never heard of, each one class and one registration line: a build kind (a shell
/// script copied into place), a capture kind (the program's output once more after the verdict, kept as a capture), and
/// a trace analyser (a reading of perf's syscall events). One manifest uses all three, through the real manifest reader
/// and the real runner, with a real perf trace of a real process.
/// </summary>
public sealed class PlugInBlockTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-plugin-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    // The build kind: build.script names the script to run.
    private sealed record ScriptBuildSpec(string File);

    private sealed class ScriptBuildKind : IBuildKind
    {
        public string Key => "script";

        public object ReadSpec(Fields f, string repoDir, string id)
        {
            f.AllowOnly("file");
            var file = f.String("file");
            if (!File.Exists(Path.Combine(repoDir, file))) throw f.Error($"'{file}' is not a file in the repro", "file");
            return new ScriptBuildSpec(file);
        }
    }

    // The capture kind: capture.listing runs the program once more after the verdict and keeps its output.
    private sealed record ListingSpec(string Label);

    private sealed class ListingCaptureKind : ICaptureKind
    {
        public string Key => "listing";
        public object ReadSpec(Fields f, string repoDir) => new ListingSpec(f.StringOr("label", "listing")!);

        public async Task AfterVerdictAsync(CaptureAfter x)
        {
            var spec = x.Case.Captures.Get<ListingSpec>(Key)!;
            var run = await x.Runs.ExecuteAsync(null, spec.Label, null);
            x.Cell.Record(null, RunFindings.Of(new CaptureRecord("listing", run.Run.StdoutFile, new FileInfo(run.Run.StdoutFile).Length, run.Run.WallSeconds, 0, [],
                                                                 $"the program's output after the verdict ({run.Run.Status})") { Run = spec.Label }));
        }
    }

    // The trace analyser: one "writes" event per process, with how many write(2) calls perf saw it make.
    private sealed class WriteCountAnalyser : ITraceAnalyser
    {
        public string Key => "write-count";

        public IEnumerable<TraceEvent> Events(NativeTraceData raw, IReadOnlyDictionary<string, double> markers) =>
            raw.Events.Where(e => e.Name == "sys_enter_write").GroupBy(e => e.Pid)
               .Select(g => new TraceEvent(g.Max(e => e.Seconds), "writes", new Dictionary<string, string> { ["count"] = g.Count().ToString() }));
    }

    private sealed class ScriptRecipe : BuildRecipe
    {
        public override string Flavor => "script";
        public override string ProgramPath(Manifest m, string outDir) => Path.Combine(outDir, "prog.sh");
        public override string? Missing(Manifest m) => m.Build.Get<ScriptBuildSpec>("script") is null ? "no build.script" : null;
        public override ToolResult Run(Manifest m, string outDir, string program, IToolRunner tools)
        {
            File.Copy(Path.Combine(m.Dir, m.Build.Get<ScriptBuildSpec>("script")!.File), program, overwrite: true);
            return new ToolResult(0, "", "", 0, false);
        }
    }

    [Fact]
    public async Task ABuildKindACaptureKindAndATraceAnalyserRunThroughTheRealRunner()
    {
        var families = SignatureFamilies.Default.With(new ScriptBuildKind()).With(new ListingCaptureKind()).With(new WriteCountAnalyser());
        // A subject that runs the script build under /bin/sh and traces it with the real perf backend.
        var kinds = SubjectKinds.Default.With(new ShellKind(() => new ScriptRecipe()));
        var dir = Path.Combine(_root, "repros", "plug");
        Directory.CreateDirectory(dir);
        File.WriteAllText(Path.Combine(dir, "prog.sh"), "for i in 1 2 3; do echo \"line $i\"; done\necho REPRO-DONE\n");
        File.WriteAllText(Path.Combine(dir, "repro.json"), """
            { "id": "plug", "title": "t", "category": "perf", "references": ["r"], "languages": ["sh"],
              "subjects": ["shell"], "variants": ["bug"], "build": { "script": { "file": "prog.sh" } },
              "budget": { "timeoutSec": 30, "memoryMB": 256 },
              "cases": [ { "id": "main", "args": ["{variant}"],
                           "signature": { "process": { "exit": "zero", "output": ["line 3"] },
                                          "trace": { "count": [ { "event": "^writes count=[1-9]", "min": 1 } ] } },
                           "capture": { "listing": { "label": "again" },
                                        "trace": { "kind": "api", "syscalls": ["write"], "analysers": ["write-count"] } } } ] }
            """);
        var m = Manifest.Load(Path.Combine(dir, "repro.json"), families, kinds);
        Assert.Equal("prog.sh", m.Build.Get<ScriptBuildSpec>("script")!.File);

        var runner = new CellRunner(new RunOptions(_root, Path.Combine(_root, "artifacts", "run"), Keep: true, _ => { }),
                                    new Builder(_root, ToolRunner.Instance), ToolRunner.Instance, families, kinds);
        var cell = await runner.RunAsync(m, m.Cases[0], "bug", kinds.Resolve("shell", _root), null);

        Assert.True(cell.Outcome == Outcome.Reproduced, cell.Detail);
        var listing = Assert.Single(cell.Captures, c => c.Backend == "listing");
        Assert.Contains("line 3", File.ReadAllText(listing.File));
        var trace = Assert.Single(cell.Evidence, e => e.Key == "trace");
        Assert.Equal(EvidenceStatus.Holds, trace.Status);
        Assert.Contains(cell.Trace!.Events, e => e.Name == "writes");

        // Unregistered, the same blocks are input errors naming their fields.
        var plain = Assert.Throws<InputException>(() => Manifest.Load(Path.Combine(dir, "repro.json"), SignatureFamilies.Default, kinds));
        Assert.Equal("build.script", plain.Field);
    }
}
