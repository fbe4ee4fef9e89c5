using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// A subject a test registers: its program is a shell script the test wrote, built by the recipe the test gives, run
/// under /bin/sh through the real runner; snapshots from the backend the test gives (procdump by default), traces
/// with the real perf backend. <paramref name="shells"/> gives more subjects, each a name and its shell's path.
/// </summary>
internal sealed class ShellKind(Func<BuildRecipe> recipe, ICaptureBackend? snapshots = null, IReadOnlyDictionary<string, string>? shells = null)
    : ISubjectKind
{
    private readonly IReadOnlyDictionary<string, string> _shells = shells ?? new Dictionary<string, string> { ["shell"] = "/bin/sh" };
    public string Name => "shell";
    public IReadOnlyList<string> BuiltIns => [.. _shells.Keys];
    public IReadOnlyList<string> UserPrefixes => [];
    public string UserPathMeaning => "a POSIX shell";
    public SubjectCapabilities Capabilities(string subject) => SubjectCapabilities.ManagedProgram;
    public Subject Resolve(string spec, string? userPath, string root) => new(spec, this, _shells[spec], "1", null);
    public BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs) => recipe();
    public Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options) => new(s.Path, [program, .. args], options.Env);
    public CellIsolation Isolate(Subject s, string cellDir) => CellIsolation.None;
    public ICaptureBackend SnapshotBackend(Subject s, CaptureContext context) => snapshots ?? new LinuxProcDump(context.Tools);
    public string? TraceUnsupported(string subject, TraceCapture trace) => null;
    public ITraceBackend TraceBackend(Subject s, TraceCapture trace, CaptureContext context) => new PerfTrace();
    public string CrashExecutable(Subject s, string program) => s.Path;
    public string Describe(Subject s) => $"shell {s.Path}";
}

/// <summary>The build of a shell subject's program: the repro's src/prog.sh, copied into place.</summary>
internal sealed class CopyScript : BuildRecipe
{
    public override string Flavor => "script";
    public override string ProgramPath(Manifest m, string outDir) => Path.Combine(outDir, "prog.sh");
    public override string? Missing(Manifest m) => null;
    public override ToolResult Run(Manifest m, string outDir, string program, IToolRunner tools)
    {
        File.Copy(Path.Combine(m.Dir, "src", "prog.sh"), program, overwrite: true);
        return new ToolResult(0, "", "", 0, false);
    }
}
