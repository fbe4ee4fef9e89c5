using Corpus.Harness.Capture;
using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>Mono: .NET Framework semantics on Linux (finalizes at exit, 4096-bucket ObjectManager). Runs IL built by mcs.</summary>
public sealed class MonoKind(IToolRunner? tools = null) : ISubjectKind
{
    private readonly IToolRunner _tools = tools ?? ToolRunner.Instance;

    public string Name => "mono";
    public IReadOnlyList<string> BuiltIns => ["mono"];
    public IReadOnlyList<string> UserPrefixes => ["mono"];
    public string UserPathMeaning => "the mono executable";
    public SubjectCapabilities Capabilities(string subject) => SubjectCapabilities.ManagedProgram;

    public Subject Resolve(string spec, string? userPath, string root)
    {
        var path = userPath ?? SubjectKinds.Which("mono") ?? (OperatingSystem.IsWindows() ? "mono.exe" : "/usr/bin/mono");
        Subject Unusable(string why) => new(spec, this, path, null, why);
        if (Directory.Exists(path)) return Unusable($"{path} is a folder; give the mono executable");
        if (!File.Exists(path)) return Unusable(userPath is null ? "mono is not installed (make setup installs it)" : $"{path}: no such file");
        if (!OperatingSystem.IsWindows() && (File.GetUnixFileMode(path) & UnixFileMode.UserExecute) == 0)
            return Unusable($"{path}: not executable");
        // Asking the program itself is the only proof that a path is a Mono.
        ToolResult r;
        try { r = _tools.Run(path, ["--version"], TimeSpan.FromSeconds(20)); }
        catch (System.ComponentModel.Win32Exception e) { return Unusable($"{path}: not an executable Mono ({e.Message})"); }
        var first = r.Stdout.Split('\n')[0];
        const string banner = "Mono JIT compiler version ";
        if (r.ExitCode != 0 || !first.StartsWith(banner))
            return Unusable($"{path}: not an executable Mono ('{path} --version' {(r.ExitCode != 0 ? $"exited {r.ExitCode}" : $"printed '{first.Trim()}'")})");
        return new(spec, this, path, first[banner.Length..].Split(' ')[0], null);
    }

    public BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs) => new MonoBuild();

    public Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options)
    {
        var env = new Dictionary<string, string>(options.Env);
        // Without this, Mono's crash reporter attaches gdb after an abort and can hang there.
        env.TryAdd("MONO_DEBUG", "no-gdb-backtrace");
        // --jitmap writes /tmp/perf-PID.map, which names JIT code addresses found in a core.
        return new Launch(s.Path, options.PerfMap ? ["--debug", "--jitmap", program, .. args] : ["--debug", program, .. args], env);
    }

    public CellIsolation Isolate(Subject s, string cellDir) => CellIsolation.None;

    public ICaptureBackend SnapshotBackend(Subject s, CaptureContext context) => new MonoThreadDump();

    public string CrashExecutable(Subject s, string program) =>
        new FileInfo(s.Path).ResolveLinkTarget(returnFinalTarget: true)?.FullName ?? s.Path;

    public string Describe(Subject s) => $"mono {s.Version} at {s.Path}";
}
