using System.Text.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// Both extension points at once, each taken with one registration line and nothing else: a subject kind and a
/// signature family the harness has never heard of, a manifest on disk that names the kind's built-in subject and
/// uses the family's block, read by the manifest reader and run by the real runner (real processes).
/// </summary>
public sealed class ExtensionPointTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-extension-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    /// <summary>A kind whose one built-in subject, "posix", runs the repro's shell script with /bin/sh.</summary>
    private sealed class PosixShellKind : ISubjectKind
    {
        public string Name => "posix-shell";
        public IReadOnlyList<string> BuiltIns => ["posix"];
        public IReadOnlyList<string> UserPrefixes => ["posix-shell"];
        public string UserPathMeaning => "a POSIX shell";
        public SubjectCapabilities Capabilities(string subject) => SubjectCapabilities.ManagedProgram;

        public Subject Resolve(string spec, string? userPath, string root) =>
            new(spec, this, userPath ?? "/bin/sh", null, File.Exists(userPath ?? "/bin/sh") ? null : $"{userPath}: no such file");

        public BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs) => new CopiedScript();

        public Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options) =>
            new(s.Path, [program, .. args], options.Env);

        public CellIsolation Isolate(Subject s, string cellDir) => new();
        public ICaptureBackend SnapshotBackend(Subject s, CaptureContext context) => new LinuxProcDump(context.Tools);
        public string CrashExecutable(Subject s, string program) => s.Path;
        public string Describe(Subject s) => $"posix shell {s.Path}";
    }

    /// <summary>"Builds" the repro's src/check.sh by copying it into the build folder.</summary>
    private sealed class CopiedScript : BuildRecipe
    {
        private static string Source(Manifest m) => Path.Combine(m.Dir, "src", "check.sh");
        public override string Flavor => "posix-shell";
        public override string ProgramPath(Manifest m, string outDir) => Path.Combine(outDir, "check.sh");
        public override string? Missing(Manifest m) => File.Exists(Source(m)) ? null : $"{m.File}: no src/check.sh";

        public override ToolResult Run(Manifest m, string outDir, string program, IToolRunner tools)
        {
            File.Copy(Source(m), program, overwrite: true);
            return new ToolResult(0, "", "", 0, false);
        }
    }

    private sealed record ExitStreakSpec(int Code, int Runs);

    /// <summary>What the family found: the exit code it looked for and each run's.</summary>
    private sealed record ExitStreakFacts(int Code, IReadOnlyList<int?> Exits);

    /// <summary>The block "exitStreak": runs the program `runs` times, reproduced when every run exited with `code`.</summary>
    private sealed class ExitStreakFamily : ISignatureFamily
    {
        public string Key => "exitStreak";

        public object ReadSpec(Fields f)
        {
            f.AllowOnly("code", "runs");
            return new ExitStreakSpec(f.IntOr("code", null, required: true, min: 1, max: 255)!.Value, f.IntOr("runs", 3, min: 1, max: 10)!.Value);
        }

        public async Task<Verdict> RunAsync(IRunLauncher runs, CellResult cell)
        {
            var spec = runs.Case.Signature.Get<ExitStreakSpec>(Key)!;
            var exits = new List<int?>();
            for (var i = 0; i < spec.Runs; i++) exits.Add((await runs.ExecuteAsync(null, $"streak{i}", null)).Run.ExitCode);
            var hits = exits.Count(e => e == spec.Code);
            return new Verdict(hits == spec.Runs ? Outcome.Reproduced : Outcome.Clean, $"exit {spec.Code} in {hits} of {spec.Runs} runs")
                { Facts = new ExitStreakFacts(spec.Code, exits), KeyFigures = [$"exit {spec.Code} {hits}/{spec.Runs}"] };
        }
    }

    private string WriteRepro()
    {
        var dir = Path.Combine(_root, "repros", "exit-streak");
        Directory.CreateDirectory(Path.Combine(dir, "src"));
        File.WriteAllText(Path.Combine(dir, "src", "check.sh"), "echo \"variant $1\"; if [ \"$1\" = bug ]; then exit 3; fi; exit 0\n");
        File.WriteAllText(Path.Combine(dir, "repro.json"), """
            { "id": "exit-streak", "title": "a bug that shows as exit code 3", "category": "crash", "references": ["r"],
              "languages": ["sh"], "subjects": ["posix"], "variants": ["bug", "fix"],
              "build": { "mono": { "sources": ["src/*.sh"] } }, "budget": { "timeoutSec": 20, "memoryMB": 256 },
              "cases": [ { "id": "main", "args": ["{variant}"], "signature": { "exitStreak": { "code": 3, "runs": 3 } } } ] }
            """);
        return Path.Combine(dir, "repro.json");
    }

    private static JsonElement Facts(CellResult cell) =>
        JsonDocument.Parse(File.ReadAllText(Path.Combine(cell.RecordDir!, "facts.json"))).RootElement;

    [Fact]
    public async Task ANewKindAndANewFamilyEachRegisteredInOneLineRunAManifestThroughTheRunner()
    {
        var kinds = SubjectKinds.Default.With(new PosixShellKind());
        var families = SignatureFamilies.Default.With(new ExitStreakFamily());

        var m = Manifest.Load(WriteRepro(), families, kinds);
        Assert.Equal(["posix"], m.Cases[0].Subjects);
        Assert.Equal("exitStreak", m.Cases[0].Signature.Family);
        Assert.Equal(new ExitStreakSpec(3, 3), m.Cases[0].Signature.Get<ExitStreakSpec>("exitStreak"));
        Assert.Contains("posix", kinds.Having(SubjectCapabilities.ManagedProgram).Split(", "));

        var subject = kinds.Resolve(m.Cases[0].Subjects[0], _root);
        Assert.IsType<PosixShellKind>(subject.Kind);
        Assert.Null(subject.Unavailable);
        var runner = new CellRunner(new RunOptions(_root, Path.Combine(_root, "artifacts", "run"), Keep: true, _ => { }),
                                    new Builder(_root, ToolRunner.Instance), ToolRunner.Instance, families, kinds);

        var bug = await runner.RunAsync(m, m.Cases[0], "bug", subject, null);
        Assert.Equal(Outcome.Reproduced, bug.Outcome);
        Assert.Equal("exitStreak", bug.Family);
        Assert.Equal(["streak0", "streak1", "streak2"], bug.Runs.Select(r => r.Label));
        Assert.Equal("posix shell /bin/sh", bug.Runtime);
        Assert.Equal(["exit 3 3/3"], bug.KeyFigures);
        var facts = Facts(bug);
        Assert.Equal("posix", facts.GetProperty("cell").GetProperty("subject").GetString());
        Assert.Equal("reproduced", facts.GetProperty("outcome").GetString());
        var family = facts.GetProperty("family");
        Assert.Equal("exitStreak", family.GetProperty("key").GetString());
        Assert.Equal("exit 3 in 3 of 3 runs", family.GetProperty("detail").GetString());
        Assert.Equal(3, family.GetProperty("facts").GetProperty("code").GetInt32());
        Assert.Equal([3, 3, 3], family.GetProperty("facts").GetProperty("exits").EnumerateArray().Select(e => e.GetInt32()));

        var fix = await runner.RunAsync(m, m.Cases[0], "fix", subject, null);
        Assert.Equal(Outcome.Clean, fix.Outcome);
        var fixFacts = Facts(fix).GetProperty("family");
        Assert.Equal("clean", fixFacts.GetProperty("outcome").GetString());
        Assert.Equal([0, 0, 0], fixFacts.GetProperty("facts").GetProperty("exits").EnumerateArray().Select(e => e.GetInt32()));
    }

    [Fact]
    public void WithoutTheKindsRegistrationTheManifestIsRefusedNamingTheSubject()
    {
        var file = WriteRepro();
        var e = Assert.Throws<InputException>(() => Manifest.Load(file, SignatureFamilies.Default.With(new ExitStreakFamily())));
        Assert.Equal("subjects[0]", e.Field);
        Assert.StartsWith("'posix' is not a built-in subject (", e.Problem);
        Assert.Contains("'posix'", e.Message);
        // And the family's block, without the family's registration, is a field nobody reads.
        var unread = Assert.Throws<InputException>(() => Manifest.Load(file, kinds: SubjectKinds.Default.With(new PosixShellKind())));
        Assert.Contains("exitStreak", unread.Message);
    }
}
