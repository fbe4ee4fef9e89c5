using Corpus.Harness.Json;
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
    private sealed class ScriptKind(string name = "script", string builtIn = "sh", string prefix = "script") : ISubjectKind
    {
        public int Isolated, Released;
        public string Name => name;
        public IReadOnlyList<string> BuiltIns => [builtIn];
        public IReadOnlyList<string> UserPrefixes => [prefix];
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

    private Manifest WriteRepro(string script, string signature, SignatureFamilies? families = null, string args = "\"{variant}\"")
    {
        var dir = Path.Combine(_root, "repros", "seam");
        Directory.CreateDirectory(Path.Combine(dir, "src"));
        File.WriteAllText(Path.Combine(dir, "src", "prog.sh"), script);
        File.WriteAllText(Path.Combine(dir, "repro.json"), $$"""
            { "id": "seam", "title": "t", "category": "crash", "references": ["r"], "languages": ["sh"],
              "subjects": ["mono"], "variants": ["bug"], "build": { "mono": { "sources": ["src/*.sh"] } },
              "budget": { "timeoutSec": 20, "memoryMB": 256 },
              "cases": [ { "id": "main", "args": [{{args}}], "signature": {{signature}} } ] }
            """);
        return Manifest.Load(Path.Combine(dir, "repro.json"), families);
    }

    private CellRunner Runner(SignatureFamilies? families = null, IReadOnlyDictionary<string, string>? env = null) =>
        new(new RunOptions(_root, Path.Combine(_root, "artifacts", "run"), Keep: true, _ => { }, Env: env),
            new Builder(_root, ToolRunner.Instance), ToolRunner.Instance, families);

    [Fact]
    public async Task EnvReachesEveryRunAndIsRecordedWithTheReRunLine()
    {
        var m = WriteRepro("echo \"knob=$SEAM_KNOB\"", """{ "process": { "exit": "zero", "output": ["knob=a,b"] } }""");
        var subject = new SubjectKinds([new ScriptKind()]).Resolve("sh", _root);
        var env = new Dictionary<string, string> { ["SEAM_KNOB"] = "a,b" };
        var cell = await Runner(env: env).RunAsync(m, m.Cases[0], "bug", subject, null);
        Assert.Equal(Outcome.Reproduced, cell.Outcome);
        Assert.Equal(env, cell.Env);
        Assert.Contains("ENV='SEAM_KNOB=a,b", cell.Rerun);
        // The SDK's own settings are no knob of a runtime; a runtime's knob in the harness's environment is recorded.
        Assert.DoesNotContain("DOTNET_CLI_", cell.Rerun);
    }

    [Fact]
    public async Task ANewSubjectKindRunsThroughTheRunnerWithItsIsolation()
    {
        var kind = new ScriptKind();
        var m = WriteRepro("echo \"variant=$1 prefix=$SEAM_PREFIX\"; echo boom >&2; exit 3",
                           """{ "process": { "exit": "nonzero", "output": ["variant=bug prefix=private", "boom"] } }""");
        var subject = new SubjectKinds([kind]).Resolve("sh", _root);
        var cell = await Runner().RunAsync(m, m.Cases[0], "bug", subject, null);
        Assert.Equal(Outcome.Reproduced, cell.Outcome);
        Assert.Equal("script shell /bin/sh", cell.Runtime);
        Assert.Equal("a private nothing", cell.Isolation);
        Assert.Equal((1, 1), (kind.Isolated, kind.Released));
    }

    private const string Sweep = """{ "complexity": { "sizes": [1000, 2000, 4000], "metric": "t", "reproducedMin": 1.7, "cleanMax": 1.3 } }""";

    /// <summary>Any family: a sweep whose program says it cannot run ends unsupported after that one run, with its reason.</summary>
    [Fact]
    public async Task ASweepWhoseProgramSaysItCannotRunIsUnsupportedWithItsReason()
    {
        var m = WriteRepro("echo 'REPRO-UNSUPPORTED this runtime removed the API'; exit 3", Sweep, args: "\"{n}\"");
        var cell = await Runner().RunAsync(m, m.Cases[0], "bug", new SubjectKinds([new ScriptKind()]).Resolve("sh", _root), null);
        Assert.Equal(Outcome.Unsupported, cell.Outcome);
        Assert.Contains("this runtime removed the API", cell.Detail);
        Assert.Single(cell.Runs);
    }

    /// <summary>The same death without the line is no verdict about the runtime: it stays a failure of the program.</summary>
    [Fact]
    public async Task TheSameDeathWithoutTheLineIsNotUnsupported()
    {
        var m = WriteRepro("echo 'PlatformNotSupportedException: removed' >&2; exit 3", Sweep, args: "\"{n}\"");
        var cell = await Runner().RunAsync(m, m.Cases[0], "bug", new SubjectKinds([new ScriptKind()]).Resolve("sh", _root), null);
        Assert.NotEqual(Outcome.Unsupported, cell.Outcome);
    }

    [Fact]
    public void UserSpecsOfAKindResolveThroughItAndBadOnesNameTheProblem()
    {
        var kinds = new SubjectKinds([new ScriptKind()]);
        Assert.Equal("/bin/sh", kinds.Resolve("script:/bin/sh", _root).Path);
        Assert.Contains("no such file", kinds.Resolve("script:/nonexistent/sh", _root).Unavailable);
        Assert.Contains("is empty", Assert.Throws<ArgumentException>(() => kinds.Resolve("script:", _root)).Message);
        var unknown = Assert.Throws<ArgumentException>(() => kinds.Resolve("wine:/x", _root)).Message;
        Assert.Contains("unknown subject kind 'wine'", unknown);
        Assert.Contains("script", unknown);
    }

    [Fact]
    public void KindsAreRegisteredOnceAndRefuseASecondOwnerOfANamePrefixOrBuiltIn()
    {
        var kinds = SubjectKinds.Default.With(new ScriptKind());
        Assert.Contains("sh", kinds.BuiltIns);
        Assert.IsType<ScriptKind>(kinds.Owner("sh"));
        Assert.IsType<ScriptKind>(kinds.ForPrefix("script"));
        Assert.DoesNotContain("sh", SubjectKinds.Default.BuiltIns);   // the built-ins are left as they were
        Assert.Contains("both answer to 'script'",
                        Assert.Throws<ArgumentException>(() => kinds.With(new ScriptKind(builtIn: "bash"))).Message);
        Assert.Contains("both answer to 'dotnet'",
                        Assert.Throws<ArgumentException>(() => kinds.With(new ScriptKind("other", "other", "dotnet"))).Message);
        // net:VERSION is the coreclr kind's open form, so no other kind may list one of its names.
        Assert.Contains("both own the built-in subject 'net:8.0.10'",
                        Assert.Throws<ArgumentException>(() => kinds.With(new ScriptKind("other", "net:8.0.10", "other"))).Message);
    }

    /// <summary>A family of its own manifest block: runs `times` times, reproduced when every run printed the marker.</summary>
    private sealed record TwiceSpec(int Times);

    private sealed class TwiceFamily : ISignatureFamily
    {
        public string Key => "twice";
        public object ReadSpec(Json.Fields f)
        {
            f.AllowOnly("times");
            return new TwiceSpec(f.IntOr("times", 2, min: 1, max: 5)!.Value);
        }

        public async Task<Verdict> RunAsync(IRunLauncher runs, CellResult cell)
        {
            var times = runs.Case.Signature.Get<TwiceSpec>(Key)!.Times;
            var seen = 0;
            for (var i = 0; i < times; i++)
                if ((await runs.ExecuteAsync(null, $"run{i}", null)).Markers.ContainsKey("REPRO-REACHED here")) seen++;
            return new Verdict(seen == times ? Outcome.Reproduced : Outcome.Clean, $"marker in {seen} of {times} runs")
                { Facts = new { seen, times }, KeyFigures = [$"marker {seen}/{times}"] };
        }
    }

    [Fact]
    public async Task ARegisteredFamilyReadsItsBlockRunsTheCellAndEvidenceIsCheckedOnTop()
    {
        var families = SignatureFamilies.Default.With(new TwiceFamily());
        var m = WriteRepro("echo 'REPRO-REACHED here'; echo 'METRIC {\"x\": 2}'",
                           """{ "twice": { "times": 2 }, "stacks": { "frame": "NeverSeen" } }""", families);
        var subject = new SubjectKinds([new ScriptKind()]).Resolve("sh", _root);
        var cell = await Runner(families).RunAsync(m, m.Cases[0], "bug", subject, null);
        Assert.Equal("twice", cell.Family);
        Assert.Equal(["run0", "run1"], cell.Runs.Select(r => r.Label));
        Assert.True(cell.Runs[0].Metrics.TryGet("x", out var x));
        Assert.Equal(2, x);
        // The family said reproduced, but the stacks evidence it asked for was never captured: an error, not a verdict.
        Assert.Equal(Outcome.Reproduced, cell.Verdict!.Outcome);
        Assert.Equal(Outcome.Error, cell.Outcome);
        Assert.Contains("marker in 2 of 2 runs", cell.Detail);
        Assert.Contains("no stack snapshot was taken", cell.Detail);
        Assert.Equal(["marker 2/2", "stacks 0/0 snapshots"], cell.KeyFigures);
        var facts = System.Text.Json.JsonDocument.Parse(File.ReadAllText(Path.Combine(cell.RecordDir!, "facts.json"))).RootElement;
        Assert.Equal("twice", facts.GetProperty("family").GetProperty("key").GetString());
        Assert.Equal(2, facts.GetProperty("family").GetProperty("facts").GetProperty("seen").GetInt32());
        Assert.Equal("broken", facts.GetProperty("evidence")[0].GetProperty("status").GetString());
        // Without the registration the block is an unknown field, named.
        var e = Assert.Throws<Json.InputException>(() => Manifest.Load(Path.Combine(_root, "repros", "seam", "repro.json")));
        Assert.Contains("twice", e.Message);
    }

    [Fact]
    public void ASignatureNamesOneFamilyOrOneAndTheFamilyItRefines()
    {
        var families = SignatureFamilies.Default;
        Assert.IsType<StatisticsFamily>(families.For(WriteRepro("exit 1", """{ "process": { "exit": "zero" }, "statistics": { "epsilon": 0.1 } }""").Cases[0].Signature));
        Assert.IsType<ProcessFamily>(families.For(WriteRepro("exit 1", """{ "process": { "exit": "zero" } }""").Cases[0].Signature));
        var two = Assert.Throws<Json.InputException>(() => WriteRepro("exit 1", """{ "process": { "exit": "zero" }, "fixture": { "exit": "zero" } }"""));
        Assert.Contains("not several", two.Message);
        var none = Assert.Throws<Json.InputException>(() => WriteRepro("exit 1", """{ "stacks": { "frame": "x" } }"""));
        Assert.Contains("proves nothing", none.Message);
        Assert.Throws<ArgumentException>(() => families.With(new TwiceFamily()).With(new TwiceFamily()));
    }

    private static RunOutput Output(double wall, double markerAt, long peakBytes) =>
        new(new RunResult(0, null, false, false, wall, peakBytes, "", "", "", "", "", []),
            ProgramMetrics.None, new Dictionary<string, double> { ["REPRO-REACHED go"] = markerAt });

    [Fact]
    public void CaptureRunsGrowOnlyWhenTheLargestRunEndsBeforeTheLastSnapshot()
    {
        var timed = new TimedCapture("REPRO-REACHED go", DelaySec: 1, IntervalSec: 1, Count: 3, Heap: false);
        // Mono: 12 s after the marker, plenty of time.
        Assert.Equal(400_000, ComplexityFamily.CaptureSize(400_000, Output(14, 2, 300 << 20), timed, 2.0, 2048L << 20));
        // 3.5 s after the marker: the three snapshots (at 1, 2 and 3 s of the program's own time) and the core fit.
        Assert.Equal(400_000, ComplexityFamily.CaptureSize(400_000, Output(5.5, 2, 300 << 20), timed, 1.0, 2048L << 20));
        // .NET: 1 s after the marker, linear: grown 3.5-fold to last the delay, both intervals and a half.
        Assert.Equal(1_400_000, ComplexityFamily.CaptureSize(400_000, Output(2, 1, 300 << 20), timed, 1.0, 4096L << 20));
        // Quadratic: the size grows by the square root of the time asked.
        Assert.InRange(ComplexityFamily.CaptureSize(400_000, Output(2, 1, 300 << 20), timed, 2.0, 4096L << 20), 748_000, 749_000);
        // The memory budget bounds the growth: 60% of 1 GB over 300 MB is 2.05.
        Assert.InRange(ComplexityFamily.CaptureSize(400_000, Output(2, 1, 300 << 20), timed, 1.0, 1024L << 20), 819_000, 820_000);
        // At most four-fold, whatever the time asked.
        Assert.Equal(1_600_000, ComplexityFamily.CaptureSize(400_000, Output(1.2, 1, 300 << 20), timed, 1.0, 8192L << 20));
    }
}
