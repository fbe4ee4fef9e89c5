using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// The two extension points, exercised through the real runner: a subject kind that the runner has never heard of,
/// and a signature family injected in place of the built-ins. Real processes, a real manifest on disk.
/// </summary>
public sealed class PluginSeamTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-seam-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    /// <summary>A kind whose "program" is a shell script, with a per-cell isolation that adds to the environment.</summary>
    private sealed class ScriptKind : ISubjectKind
    {
        public int Isolated, Released;
        public string Name => "script";
        public IReadOnlyList<string> BuiltIns => ["sh"];
        public IReadOnlyList<string> UserPrefixes => ["script"];
        public string UserPathMeaning => "a POSIX shell";
        public SubjectCapabilities Capabilities(string subject) => SubjectCapabilities.ManagedProgram;

        public Subject Resolve(string spec, string? userPath, string root) =>
            new(spec, this, userPath ?? "/bin/sh", "1", File.Exists(userPath ?? "/bin/sh") ? null : $"{userPath}: no such file");

        public BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs) => new ScriptBuild();

        public Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options) =>
            new(s.Path, [program, .. args], options.Env);

        public CellIsolation Isolate(Subject s, string cellDir)
        {
            Isolated++;
            return new ScriptIsolation(this);
        }

        public ICaptureBackend SnapshotBackend(Subject s, CaptureContext context) => new LinuxProcDump(context.Tools);
        public string CrashExecutable(Subject s, string program) => s.Path;
        public string Describe(Subject s) => $"script shell {s.Path}";
    }

    private sealed class ScriptIsolation(ScriptKind kind) : CellIsolation
    {
        public override IReadOnlyDictionary<string, string> Env => new Dictionary<string, string> { ["SEAM_PREFIX"] = "private" };
        public override string Describe => "a private nothing";
        public override void Dispose()
        {
            kind.Released++;
            base.Dispose();
        }
    }

    /// <summary>"Builds" by copying the manifest's one source into place.</summary>
    private sealed class ScriptBuild : BuildRecipe
    {
        public override string Flavor => "script";
        public override string ProgramPath(Manifest m, string outDir) => Path.Combine(outDir, "prog.sh");
        public override string? Missing(Manifest m) => MonoBuild.Sources(m).Count == 0 ? "no script" : null;
        public override ToolResult Run(Manifest m, string outDir, string program, IToolRunner tools)
        {
            File.Copy(MonoBuild.Sources(m)[0], program, overwrite: true);
            return new ToolResult(0, "", "", 0, false);
        }
    }

    private Manifest WriteRepro(string script, string signature)
    {
        var dir = Path.Combine(_root, "repros", "seam");
        Directory.CreateDirectory(Path.Combine(dir, "src"));
        File.WriteAllText(Path.Combine(dir, "src", "prog.sh"), script);
        File.WriteAllText(Path.Combine(dir, "repro.json"), $$"""
            { "id": "seam", "title": "t", "kind": "crash", "references": ["r"], "languages": ["sh"],
              "subjects": ["mono"], "variants": ["bug"], "build": { "mono": { "sources": ["src/*.sh"] } },
              "budget": { "timeoutSec": 20, "memoryMB": 256 },
              "cases": [ { "id": "main", "args": ["{variant}"], "signature": {{signature}} } ] }
            """);
        return Manifest.Load(Path.Combine(dir, "repro.json"));
    }

    private CellRunner Runner(IReadOnlyList<ISignatureFamily>? families = null) =>
        new(new RunOptions(_root, Path.Combine(_root, "artifacts", "run"), Keep: true, _ => { }),
            new Builder(_root, ToolRunner.Instance), ToolRunner.Instance, families);

    [Fact]
    public async Task ANewSubjectKindRunsThroughTheRunnerWithItsIsolation()
    {
        var kind = new ScriptKind();
        var m = WriteRepro("echo \"variant=$1 prefix=$SEAM_PREFIX\"; echo boom >&2; exit 3",
                           """{ "process": { "exit": "nonzero", "output": ["variant=bug prefix=private", "boom"] } }""");
        var subject = SubjectKinds.Resolve("sh", _root, [kind]);
        var cell = await Runner().RunAsync(m, m.Cases[0], "bug", subject, null);
        Assert.Equal(Outcome.Reproduced, cell.Outcome);
        Assert.Equal("script shell /bin/sh", cell.Metrics["runtime"]);
        Assert.Equal("a private nothing", cell.Metrics["isolation"]);
        Assert.Equal((1, 1), (kind.Isolated, kind.Released));
    }

    [Fact]
    public void UserSpecsOfAKindResolveThroughItAndBadOnesNameTheProblem()
    {
        var kinds = new ISubjectKind[] { new ScriptKind() };
        Assert.Equal("/bin/sh", SubjectKinds.Resolve("script:/bin/sh", _root, kinds).Path);
        Assert.Contains("no such file", SubjectKinds.Resolve("script:/nonexistent/sh", _root, kinds).Unavailable);
        Assert.Contains("is empty", Assert.Throws<ArgumentException>(() => SubjectKinds.Resolve("script:", _root, kinds)).Message);
        var unknown = Assert.Throws<ArgumentException>(() => SubjectKinds.Resolve("wine:/x", _root, kinds)).Message;
        Assert.Contains("unknown subject kind 'wine'", unknown);
        Assert.Contains("script", unknown);
    }

    /// <summary>A family that runs twice and calls it reproduced when both runs printed the marker.</summary>
    private sealed class TwiceFamily : ISignatureFamily
    {
        public string Name => "twice";
        public bool Runs(Signature signature) => true;
        public async Task RunAsync(ICellRuns runs, CellResult cell)
        {
            var a = await runs.ExecuteAsync(null, "first", null);
            var b = await runs.ExecuteAsync(null, "second", null);
            var both = a.Markers.ContainsKey("REPRO-REACHED here") && b.Markers.ContainsKey("REPRO-REACHED here");
            (cell.Outcome, cell.Detail) = both ? (Outcome.Reproduced, "marker twice") : (Outcome.Clean, "no marker");
        }
    }

    [Fact]
    public async Task AnInjectedFamilyRunsTheCellAndEvidenceIsCheckedOnTop()
    {
        var m = WriteRepro("echo 'REPRO-REACHED here'; echo 'METRIC {\"x\": 2}'",
                           """{ "process": { "exit": "zero" }, "stacks": { "frame": "NeverSeen" } }""");
        var subject = SubjectKinds.Resolve("sh", _root, [new ScriptKind()]);
        var cell = await Runner([new TwiceFamily()]).RunAsync(m, m.Cases[0], "bug", subject, null);
        Assert.Equal(["first", "second"], cell.Runs.Select(r => r.Label));
        Assert.Equal(2, cell.Runs[0].Metrics["x"]);
        // The family said reproduced, but the stacks evidence it asked for was never captured.
        Assert.Equal(Outcome.WrongFailure, cell.Outcome);
        Assert.Contains("marker twice", cell.Detail);
        Assert.Contains("no stack snapshot was taken", cell.Detail);
    }

    [Fact]
    public void TheFirstFamilyThatRunsASignatureIsChosen()
    {
        var cx = new ComplexitySpec("t", [1, 2, 3], 1.7, 1.3, 0.9, 1);
        var process = new ProcessPattern("zero", [], null);
        Assert.IsType<ComplexityFamily>(SignatureFamilies.For(new Signature(null, process, cx, null)));
        Assert.IsType<StatisticsFamily>(SignatureFamilies.For(new Signature(process, process, null, null, new StatisticsSpec(0.01, 400, 10))));
        Assert.IsType<ShmemFamily>(SignatureFamilies.For(new Signature(null, process, null, null, Shmem: new ShmemSpec("m", 1, 0.1, 0.1, 16, 0.5))));
        Assert.IsType<ProcessFamily>(SignatureFamilies.For(new Signature(process, process, null, null)));
    }

    private static RunOutput Output(double wall, double markerAt, long peakBytes) =>
        new(new RunResult(0, null, false, false, wall, peakBytes, "", "", "", "", "", []),
            new Dictionary<string, double>(), new Dictionary<string, double> { ["REPRO-REACHED go"] = markerAt });

    [Fact]
    public void CaptureRunsGrowOnlyWhenTheLargestRunEndsBeforeTheFirstSnapshot()
    {
        var timed = new TimedCapture("REPRO-REACHED go", DelaySec: 1, IntervalSec: 1, Count: 3, Heap: false);
        // Mono: 12 s after the marker, plenty of time.
        Assert.Equal(400_000, ComplexityFamily.CaptureSize(400_000, Output(14, 2, 300 << 20), timed, 2.0, 2048L << 20));
        // .NET: 0.5 s after the marker, linear: grown three-fold to last the delay and a half.
        Assert.Equal(1_200_000, ComplexityFamily.CaptureSize(400_000, Output(1.5, 1, 300 << 20), timed, 1.0, 2048L << 20));
        // The memory budget bounds the growth: 60% of 1 GB over 300 MB is 2.05.
        Assert.InRange(ComplexityFamily.CaptureSize(400_000, Output(1.5, 1, 300 << 20), timed, 1.0, 1024L << 20), 819_000, 820_000);
    }
}
