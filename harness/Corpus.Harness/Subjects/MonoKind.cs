using Corpus.Harness.Containment;
using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
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
        var path = userPath ?? SubjectKinds.Which("mono") ?? (IHost.Current.Platform == IHost.Windows ? "mono.exe" : "/usr/bin/mono");
        Subject Unusable(string why) => new(spec, this, path, null, why);
        if (Directory.Exists(path)) return Unusable($"{path} is a folder; give the mono executable");
        if (!File.Exists(path)) return Unusable(userPath is null ? "mono is not installed (make setup installs it)" : $"{path}: no such file");
        if (IHost.Current.UnixSignals && (File.GetUnixFileMode(path) & UnixFileMode.UserExecute) == 0)
            return Unusable($"{path}: not executable");
        // Asking the program itself is the only proof that a path is a Mono.
        ToolResult r;
        try { r = _tools.Run(path, ["--version"], TimeSpan.FromSeconds(20)); }
        catch (System.ComponentModel.Win32Exception e) { return Unusable($"{path}: not an executable Mono ({e.Message})"); }
        var first = r.Stdout.Split('\n')[0];
        const string banner = "Mono JIT compiler version ";
        if (r.ExitCode != 0 || !first.StartsWith(banner))
            return Unusable($"{path}: not an executable Mono ('{path} --version' {(r.ExitCode != 0 ? $"exited {r.ExitCode}" : $"printed '{first.Trim()}'")})");
        var version = first[banner.Length..].Split(' ')[0];
        // A user's build is also run on a probe program: a Mono copied without its native shim or config starts and
        // prints its version, then dies in the first file call of a repro.
        if (userPath is not null && Probe(path, root) is { } incomplete) return Unusable(incomplete);
        return new(spec, this, path, version, null);
    }

    /// <summary>Null when the probe program ran; otherwise its cause and the files a relocated Mono lacks.</summary>
    private string? Probe(string mono, string root)
    {
        var source = Path.Combine(root, "harness", "subjects", "probe", "Probe.cs");
        var exe = Path.Combine(root, "build", "harness", "probe", "probe.exe");
        if (!File.Exists(source)) return null;
        if (!File.Exists(exe) || File.GetLastWriteTimeUtc(exe) < File.GetLastWriteTimeUtc(source))
        {
            // The user's own mcs, else the machine's: either compiles IL that any Mono runs.
            var mcs = new[] { Path.Combine(Path.GetDirectoryName(Path.GetFullPath(mono))!, "mcs"), SubjectKinds.Which("mcs") }
                      .FirstOrDefault(File.Exists);
            if (mcs is null) return null;
            Directory.CreateDirectory(Path.GetDirectoryName(exe)!);
            var built = _tools.Run(mcs, ["-nologo", $"-out:{exe}", source], TimeSpan.FromMinutes(1));
            if (built.ExitCode != 0) return null;
        }
        var r = _tools.Run(mono, [exe], TimeSpan.FromSeconds(30));
        if (r.ExitCode == 0 && r.Stdout.Contains("corpus-probe ok")) return null;
        var run = new Containment.RunResult(r.ExitCode, null, r.TimedOut, false, r.Seconds, 0, r.Stdout, r.Stderr, "", "", "", []);
        var cause = Signatures.ProcessMatch.Cause(run) ?? r.Describe("the probe");
        // Mono finds its native shim and config relative to its prefix (bin/..): name what a copy left out.
        var prefix = Path.GetDirectoryName(Path.GetDirectoryName(Path.GetFullPath(mono))!)!;
        var missing = new[] { "lib/libmono-native.so", "etc/mono/config", "lib/mono/4.5/mscorlib.dll" }
                      .Select(f => Path.Combine(prefix, f)).Where(f => !File.Exists(f)).ToList();
        return $"{mono}: an incomplete Mono: a probe program failed: {cause}"
               + (missing.Count > 0 ? $"; missing: {string.Join(", ", missing)}" : "");
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

    public string? TraceUnsupported(string subject, TraceCapture trace) =>
        trace.Kind is TraceCapture.Cpu or TraceCapture.Alloc ? null : $"Mono's log profiler backend takes 'cpu' and 'alloc' traces here, not '{trace.Kind}'";

    public ITraceBackend TraceBackend(Subject s, TraceCapture trace, CaptureContext context) => new MonoLogProfilerBackend();

    public string CrashExecutable(Subject s, string program) =>
        new FileInfo(s.Path).ResolveLinkTarget(returnFinalTarget: true)?.FullName ?? s.Path;

    public string Describe(Subject s) => $"mono {s.Version} at {s.Path}";
}
