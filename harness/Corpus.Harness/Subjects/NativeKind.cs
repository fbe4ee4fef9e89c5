using Corpus.Harness.Containment;
using System.Runtime.InteropServices;
using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>Native programs built with CMake: the OS itself is the subject (linux here; windows only on real Windows).</summary>
public sealed class NativeKind : ISubjectKind
{
    public string Name => "native";
    public IReadOnlyList<string> BuiltIns => ["linux", "windows"];
    public IReadOnlyList<string> UserPrefixes => [];
    public string UserPathMeaning => "";

    /// <summary>windows has its own registry and desktop; linux records runs for time travel (gdb record full).</summary>
    public SubjectCapabilities Capabilities(string subject) => SubjectCapabilities.NativePrograms | (subject == "windows"
        ? SubjectCapabilities.WindowsHost | SubjectCapabilities.Registry | SubjectCapabilities.Display : SubjectCapabilities.TimeTravel);

    public Subject Resolve(string spec, string? userPath, string root) => spec == "windows"
        ? new(spec, this, "C:\\", null, IHost.Current.Platform == IHost.Windows ? null : "needs real Windows; these machines run Linux")
        : new(spec, this, "/", Environment.OSVersion.Version.ToString(), IHost.Current.Platform == IHost.Linux ? null : "needs Linux");

    /// <summary>
    /// windows: CMake's default generator there (Visual Studio) is multi-config, so the Release program is placed at the top
    /// of the build folder, with a PDB (/Zi, /DEBUG) so that cdb names the frames of a procdump dump. Its own flavor: on
    /// Linux, `corpus winsmoke` cross-builds the same flavor with mingw-w64.
    /// </summary>
    public BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs) =>
        cs.CmakeTarget is not { } target ? new NoBuild($"case {cs.Id} has no native program")
        : OnWindows(s) ? new CmakeBuild(target, WindowsFlavor, ["-DCMAKE_RUNTIME_OUTPUT_DIRECTORY_RELEASE={out}",
                                                                   "-DCMAKE_CXX_FLAGS_RELEASE=/O2 /Zi /DNDEBUG", "-DCMAKE_EXE_LINKER_FLAGS_RELEASE=/DEBUG"], ".exe")
        : new CmakeBuild(target);

    public const string WindowsFlavor = "windows-cmake";

    private static bool OnWindows(Subject s) => s.Capabilities.HasFlag(SubjectCapabilities.WindowsHost);

    /// <summary>windows: the same flavor cross-built with mingw-w64 (`corpus winsmoke`), so a Windows harness finds it up to date.</summary>
    public BuildRecipe? CrossBuild(Subject s, Manifest m, CaseSpec cs) =>
        OnWindows(s) && cs.CmakeTarget is { } target ? new CmakeBuild(target, WindowsFlavor, WineKind.CrossArgs(m), ".exe", WineKind.GoogleTestFor) : null;

    public Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options) =>
        new(program, args, options.Env);

    public CellIsolation Isolate(Subject s, string cellDir) => CellIsolation.None;

    public ICaptureBackend SnapshotBackend(Subject s, CaptureContext context) =>
        IHost.Current.Platform == IHost.Windows ? new WindowsProcDump(context.Tools) : new LinuxProcDump(context.Tools);

    /// <summary>Every kind of trace: perf's software events and syscall tracepoints on linux, wpr's profiles on windows.</summary>
    public string? TraceUnsupported(string subject, TraceCapture trace) => null;

    public ITraceBackend TraceBackend(Subject s, TraceCapture trace, CaptureContext context) =>
        OnWindows(s) ? new WprTrace(context.Tools) : new PerfTrace();

    public string CrashExecutable(Subject s, string program) => program;

    public string Describe(Subject s) => $"native on {RuntimeInformation.OSDescription}";
}
