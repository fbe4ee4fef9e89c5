using Corpus.Harness.Containment;
using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>
/// CoreCLR (.NET 8, .NET 10, or a user's dotnet root): a folder with a 'dotnet' host beside
/// shared/Microsoft.NETCore.App/&lt;version&gt;/. The newest matching runtime there is the one under test.
/// </summary>
public sealed class CoreClrKind(IToolRunner? tools = null) : ISubjectKind
{
    private readonly IToolRunner _tools = tools ?? ToolRunner.Instance;

    public string Name => "coreclr";
    public IReadOnlyList<string> BuiltIns => ["net10", "net8"];

    /// <summary>net:VERSION: that exact runtime, from NuGet's runtime pack, assembled once into .cache/subjects/net-VERSION.</summary>
    public const string VersionPrefix = "net:";
    public const string RuntimePack = "Microsoft.NETCore.App.Runtime.linux-x64";
    public bool Owns(string name) => BuiltIns.Contains(name) || (name.StartsWith(VersionPrefix) && RoslynKind.IsVersion(name[VersionPrefix.Length..]));
    public IReadOnlyList<string> BuiltInForms => [.. BuiltIns, VersionPrefix + "VERSION"];
    public IReadOnlyList<string> UserPrefixes => ["coreclr", "dotnet"];
    public string UserPathMeaning => "a dotnet root";
    public SubjectCapabilities Capabilities(string subject) => SubjectCapabilities.ManagedProgram | SubjectCapabilities.HeapFacts;

    public Subject Resolve(string spec, string? userPath, string root)
    {
        var (dir, prefix) = spec switch
        {
            "net10" => (DotnetRootOnPath() ?? IHost.Current.DotnetRoot, "10."),
            "net8" => (Path.Combine(root, ".cache", "subjects", "net8"), "8."),
            _ when userPath is null && spec.StartsWith(VersionPrefix) => (PackRoot(root, spec[VersionPrefix.Length..]), spec[VersionPrefix.Length..]),
            _ => (userPath!, (string?)null),
        };
        // Resolving fetches nothing: a pack not yet assembled is that version, to be provisioned by its first cell.
        if (userPath is null && spec.StartsWith(VersionPrefix) && !Assembled(dir, prefix!))
            return new(spec, this, dir, prefix, null);
        return Inspect(spec, dir, prefix, userPath, root);
    }

    public string? Provision(Subject s, string root) =>
        s.IsUsers || !s.Name.StartsWith(VersionPrefix) ? null : Provision(s.Name[VersionPrefix.Length..], s.Path, root);

    public Subject Provisioned(Subject s, string root) =>
        Provision(s, root) is { } why ? s with { Unavailable = why } : s.IsUsers || !s.Name.StartsWith(VersionPrefix) ? s : Resolve(s.Name, null, root);

    /// <summary>The subject the folder holds, or unavailable saying what the folder lacks.</summary>
    private Subject Inspect(string spec, string dir, string? prefix, string? userPath, string root)
    {
        var host = Path.Combine(dir, IHost.Current.Executable("dotnet"));
        var shared = Path.Combine(dir, "shared", "Microsoft.NETCore.App");
        if (!Directory.Exists(dir))
            return new(spec, this, dir, null, userPath is null ? $"{dir} is missing (make setup makes it)" : $"{dir}: no such folder");
        if (!File.Exists(host) || !Directory.Exists(shared))
            return new(spec, this, dir, null, $"{dir} is not a dotnet root (needs 'dotnet' and shared/Microsoft.NETCore.App/)");
        var version = Directory.GetDirectories(shared).Select(Path.GetFileName)
            .Where(v => v is not null && (prefix is null || (prefix.EndsWith('.') ? v.StartsWith(prefix) : v == prefix)))
            .Select(v => (Text: v!, Parsed: Version.TryParse(v!.Split('-')[0], out var p) ? p : null))
            .Where(v => v.Parsed is not null).OrderByDescending(v => v.Parsed).Select(v => v.Text).FirstOrDefault();
        if (version is null)
            return new(spec, this, dir, null, $"no Microsoft.NETCore.App {prefix ?? ""}* runtime under {shared}");
        // A user's root is also run on a probe program: a root assembled by hand can hold a dotnet and a version folder
        // and still lack what a program needs once it starts.
        if (userPath is not null && IHost.Current.Platform == IHost.Linux && Probe(dir, version, root) is { } incomplete)
            return new(spec, this, dir, null, incomplete);
        return new(spec, this, dir, version, null);
    }

    /// <summary>Null when the probe ran on the root's runtime; otherwise its cause and the runtime files the root lacks.</summary>
    private string? Probe(string dir, string version, string root)
    {
        var probe = Path.Combine(root, "build", "harness", "probe-net", "probe.dll");
        if (!File.Exists(probe)) return null;   // setup builds it; without it the cells will say what fails
        var host = Path.Combine(dir, "dotnet");
        var r = _tools.Run("env", [$"DOTNET_ROOT={dir}", "DOTNET_CLI_TELEMETRY_OPTOUT=1", host, "exec", "--fx-version", version, probe],
                                        TimeSpan.FromSeconds(60));
        if (r.ExitCode == 0 && r.Stdout.Contains("corpus-probe ok")) return null;
        var run = new Containment.RunResult(r.ExitCode, null, r.TimedOut, false, r.Seconds, 0, r.Stdout, r.Stderr, "", "", "", []);
        var cause = Signatures.ProcessMatch.Cause(run) ?? r.Describe("the probe");
        var fx = Path.Combine(dir, "shared", "Microsoft.NETCore.App", version);
        var missing = new[] { "libcoreclr.so", "libclrjit.so", "libSystem.Native.so", "System.Private.CoreLib.dll", "System.Runtime.dll",
                              "Microsoft.NETCore.App.deps.json", "Microsoft.NETCore.App.runtimeconfig.json" }
                      .Select(f => Path.Combine(fx, f)).Where(f => !File.Exists(f)).ToList();
        if (!Directory.Exists(Path.Combine(dir, "host", "fxr"))) missing.Add(Path.Combine(dir, "host", "fxr"));
        return $"{dir}: an incomplete dotnet root: a probe program failed on {version}: {cause.Trim()}"
               + (missing.Count > 0 ? $"; missing: {string.Join(", ", missing)}" : "");
    }

    private static int Major(Subject s) => s.Version is { } v && int.TryParse(v.Split('.')[0], out var m) ? m : int.MaxValue;

    private static string? SystemIcuMajor() =>
        new[] { "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib" }.Where(Directory.Exists)
            .SelectMany(d => Directory.GetFiles(d, "libicuuc.so.*"))
            .Select(Path.GetFileName).Where(f => f!.Length > "libicuuc.so.".Length)
            .Select(f => f!["libicuuc.so.".Length..].Split('.')[0])
            .Where(v => int.TryParse(v, out _)).OrderByDescending(int.Parse).FirstOrDefault();

    public static string PackRoot(string root, string version) => Path.Combine(root, ".cache", "subjects", "net-" + version);

    /// <summary>Whether the pack of this version is assembled in the folder (its marker names the version).</summary>
    private static bool Assembled(string dir, string version)
    {
        var marker = Path.Combine(dir, ".subject-complete");
        return File.Exists(marker) && File.ReadAllText(marker).Trim() == version;
    }

    /// <summary>
    /// Assembles net:VERSION's dotnet root once (harness/subjects/get-dotnet-runtime.sh, under a lock: two harnesses may
    /// ask at once). Null when it is there; otherwise why not, listing the versions the feeds have when it is not one.
    /// </summary>
    private string? Provision(string version, string dir, string root)
    {
        if (Assembled(dir, version)) return null;
        var (has, versions) = NuGetListing.Lookup(root, RuntimePack, version, _tools);
        if (!has && versions is not null)
            return $"{RuntimePack} {version} is not on this machine's NuGet feeds; they have {string.Join(", ", versions)}";
        Directory.CreateDirectory(Path.GetDirectoryName(dir)!);
        var r = _tools.Run("flock", [dir + ".lock", "bash", Path.Combine(root, "harness", "subjects", "get-dotnet-runtime.sh"), version, dir],
                                        TimeSpan.FromMinutes(15));
        if (r.ExitCode == 0 && Assembled(dir, version)) return null;
        var said = r.Stderr.Split('\n').Select(l => l.Trim()).Where(l => l.Length > 0).TakeLast(3);
        return $"could not assemble {RuntimePack} {version} into {dir}: {string.Join(" ", said)}";
    }

    /// <summary>
    /// The repro's build a runtime runs: 8 and 9 the net8.0 build, 10 and later the net10.0 build (the SDK here targets
    /// nothing newer; --fx-version runs it on the newer runtime), 3.x a netcoreapp3.1 build, which a repro's project
    /// does not list: that build is an attempt, and its failure means this runtime cannot run the program.
    /// </summary>
    public static string TargetFramework(Subject s) =>
        s.Version is { } v && int.TryParse(v.Split('.')[0], out var major) && major < 10 ? (major < 5 ? $"netcoreapp{major}.1" : "net8.0") : "net10.0";

    public BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs) => new DotnetBuild(TargetFramework(s));

    public Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options)
    {
        var env = new Dictionary<string, string>(options.Env);
        // 3: the perf map alone; 1 would add a jitdump of ~0.5 MB a run in /tmp.
        if (options.PerfMap) env["DOTNET_PerfMapEnabled"] = "3";
        env["DOTNET_ROOT"] = s.Path;
        // .NET Core 3.x looks only for the ICU versions it knew (up to 6x) and fails fast on a newer system's: name it.
        if (Major(s) < 5 && SystemIcuMajor() is { } icu) env.TryAdd("CLR_ICU_VERSION_OVERRIDE", icu);
        env.TryAdd("DOTNET_CLI_TELEMETRY_OPTOUT", "1");
        // --fx-version pins the exact runtime of the subject, even when the root holds several.
        return new Launch(Path.Combine(s.Path, "dotnet"), ["exec", "--fx-version", s.Version!, program, .. args], env);
    }

    public CellIsolation Isolate(Subject s, string cellDir) => CellIsolation.None;

    public static string? CreateDump(Subject s) =>
        s.Version is null ? null : Path.Combine(s.Path, "shared", "Microsoft.NETCore.App", s.Version, "createdump");

    public ICaptureBackend SnapshotBackend(Subject s, CaptureContext context) =>
        new CoreClrCreateDump(context.Tools, CreateDump(s), Path.Combine(context.Root, "build", "harness", "DumpFacts", "DumpFacts.dll"),
                              context.Heap);

    public string CrashExecutable(Subject s, string program) => Path.Combine(s.Path, "dotnet");

    public string? TraceUnsupported(string subject, TraceCapture trace) =>
        trace.Kind is TraceCapture.Cpu or TraceCapture.Alloc ? null
            : $"dotnet-trace's backend takes 'cpu' (sample profiler) and 'alloc' (GC allocation ticks) traces, not '{trace.Kind}' on CoreCLR";

    public ITraceBackend TraceBackend(Subject s, TraceCapture trace, CaptureContext context) => new DotnetTraceBackend(context.Root);

    public string Describe(Subject s) => $"coreclr {s.Version} at {s.Path}";

    private static string? DotnetRootOnPath()
    {
        var dotnet = SubjectKinds.Which("dotnet");
        if (dotnet is null) return null;
        var real = new FileInfo(dotnet).ResolveLinkTarget(returnFinalTarget: true)?.FullName ?? dotnet;
        return Path.GetDirectoryName(real);
    }
}
