using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// A subject a test registers: its program is a shell script the test wrote, built by the recipe the test gives, run
/// under /bin/sh through the real runner; snapshots from the backend the test gives (procdump by default), traces
/// with the real perf backend.
/// </summary>
internal sealed class ShellKind(Func<BuildRecipe> recipe, ICaptureBackend? snapshots = null) : ISubjectKind
{
    public string Name => "shell";
    public IReadOnlyList<string> BuiltIns => ["shell"];
    public IReadOnlyList<string> UserPrefixes => [];
    public string UserPathMeaning => "a POSIX shell";
    public SubjectCapabilities Capabilities(string subject) => SubjectCapabilities.ManagedProgram;
    public Subject Resolve(string spec, string? userPath, string root) => new(spec, this, "/bin/sh", "1", null);
    public BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs) => recipe();
    public Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options) => new(s.Path, [program, .. args], options.Env);
    public CellIsolation Isolate(Subject s, string cellDir) => CellIsolation.None;
    public ICaptureBackend SnapshotBackend(Subject s, CaptureContext context) => snapshots ?? new LinuxProcDump(context.Tools);
    public string? TraceUnsupported(string subject, TraceCapture trace) => null;
    public ITraceBackend TraceBackend(Subject s, TraceCapture trace, CaptureContext context) => new PerfTrace();
    public string CrashExecutable(Subject s, string program) => s.Path;
    public string Describe(Subject s) => "shell /bin/sh";
}
