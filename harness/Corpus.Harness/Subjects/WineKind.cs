using Corpus.Harness.Containment;
using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>
/// Wine: real Win32 semantics on Linux. Each cell gets a private prefix copied from the template setup built
/// (.cache/wine/template), a private TMPDIR on a tmpfs (page-file-backed sections become the cell's Shmem), and
/// its own wineserver inside the run's cgroup (harness/wine/run.sh and cell.sh; docs/wine.md).
/// </summary>
public abstract class WineKindBase(IToolRunner? tools = null) : ISubjectKind
{
    /// <summary>The runner of the kind's tools (wine, template.sh, the NuGet lookups); injected in tests.</summary>
    protected IToolRunner Tools { get; } = tools ?? ToolRunner.Instance;

    public abstract string Name { get; }
    public abstract IReadOnlyList<string> BuiltIns { get; }
    public abstract IReadOnlyList<string> UserPrefixes { get; }
    public virtual string UserPathMeaning => "a wine executable, with wineserver beside it";

    /// <summary>The program type this kind runs: NativePrograms or ManagedProgram.</summary>
    protected abstract SubjectCapabilities Runs { get; }

    /// <summary>Every Wine subject has its prefix's registry and, when a case asks, a display (Xvfb).</summary>
    public SubjectCapabilities Capabilities(string subject) =>
        Runs | SubjectCapabilities.Registry | SubjectCapabilities.Display | (Windows10.Contains(subject) ? SubjectCapabilities.Windows10 : 0);

    /// <summary>The built-ins whose prefix says Windows 10.</summary>
    protected virtual IReadOnlyList<string> Windows10 => [];

    /// <summary>The Windows version the prefix says: win7 (Wine's default) or win10.</summary>
    protected string Windows(Subject s) => s.Capabilities.HasFlag(SubjectCapabilities.Windows10) ? "win10" : "win7";

    protected virtual bool NeedsDisplay => false;

    /// <summary>Environment the runtime needs under Wine, added before the case's own.</summary>
    protected virtual IReadOnlyDictionary<string, string> RuntimeEnv => new Dictionary<string, string>();

    /// <summary>What this kind's builds need beyond the template, made once; null when ready, otherwise why not.</summary>
    protected virtual string? Prepare(string root) => null;

    /// <summary>Why a built-in form cannot be provisioned here (a runtime version the feeds lack), or null.</summary>
    protected virtual string? Unprovisionable(string spec, string root) => null;

    public virtual IReadOnlyList<string> BuiltInForms => BuiltIns;
    public virtual bool Owns(string name) => BuiltIns.Contains(name);

    public Subject Resolve(string spec, string? userPath, string root)
    {
        var wine = userPath ?? SubjectKinds.Which("wine") ?? "/usr/bin/wine";
        Subject Unusable(string why) => new(spec, this, wine, null, why);
        if (userPath is null && Unprovisionable(spec, root) is { } lacking) return Unusable(lacking);
        // A Windows harness (even one running under Wine, which sees Linux paths through Z:) has no Wine to start.
        if (IHost.Current.Platform == IHost.Windows) return Unusable("Wine subjects run from the Linux harness");
        if (!File.Exists(wine))
            return Unusable(userPath is null ? "wine is not installed (make setup installs it)" : $"{wine}: no such file");
        if (userPath is not null && !File.Exists(Path.Combine(Path.GetDirectoryName(wine)!, "wineserver")))
            return Unusable($"{wine}: no wineserver beside it");
        ToolResult r;
        try { r = Tools.Run(wine, ["--version"], TimeSpan.FromSeconds(20)); }
        catch (System.ComponentModel.Win32Exception e) { return Unusable($"{wine}: not an executable Wine ({e.Message})"); }
        var version = r.Stdout.Trim();
        if (r.ExitCode != 0 || !version.StartsWith("wine-")) return Unusable($"{wine}: not an executable Wine ('--version' printed '{version}')");
        return new(spec, this, wine, version, null);
    }

    /// <summary>The template prefix, built the first time a cell runs on Wine (make run's demo needs none; template.sh
    /// returns at once when it is there and current), and what the kind's builds need beyond it.</summary>
    public string? Provision(Subject s, string root)
    {
        var template = Path.Combine(root, ".cache", "wine", "template");
        var built = Tools.Run("bash", [Path.Combine(root, "harness", "wine", "template.sh"), template], TimeSpan.FromMinutes(5));
        if (built.ExitCode != 0 || !File.Exists(Path.Combine(template, ".corpus", "version")))
            return $"no Wine template prefix at {template}: {built.Describe("harness/wine/template.sh")}";
        return Prepare(root);
    }

    public abstract BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs);

    public Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options)
    {
        var env = new Dictionary<string, string>(RuntimeEnv);
        foreach (var kv in options.Env) env[kv.Key] = kv.Value;
        env["WINE"] = s.Path;
        env["WINESERVER"] = Path.Combine(Path.GetDirectoryName(s.Path)!, "wineserver");
        var cell = options.Env.TryGetValue(WineIsolation.CellVariable, out var c) ? c
            : throw new InvalidOperationException("a wine run needs its cell's isolation");
        var root = options.Env[WineIsolation.RootVariable];
        return new Launch("bash", [Path.Combine(root, "harness", "wine", "run.sh"), cell, Windows(s), NeedsDisplay || options.Display ? "1" : "0", "--",
                                   program, .. args], env);
    }

    public CellIsolation Isolate(Subject s, string cellDir) => new WineIsolation(cellDir, Windows(s), Tools);

    /// <summary>winedbg in the target's cell: a minidump and every thread's native stack.</summary>
    /// <summary>Wine's WINEDEBUG channels trace calls, not samples: kind api only.</summary>
    public string? TraceUnsupported(string subject, TraceCapture trace) => trace.Kind == TraceCapture.Api ? null
        : $"Wine's WINEDEBUG channels trace calls: kind 'api' with 'channels' (e.g. [\"+win\"]), not '{trace.Kind}'";

    public ITraceBackend TraceBackend(Subject s, TraceCapture trace, CaptureContext context) => new WineDebugTrace();

    public virtual ICaptureBackend SnapshotBackend(Subject s, CaptureContext context) =>
        new WineDbgSnapshot(s.Path, context.HoldsStill ? 75 : 20);

    public string CrashExecutable(Subject s, string program) => program;

    public virtual string Describe(Subject s) => $"{s.Version} at {s.Path}, {Windows(s)} prefix";
}

/// <summary>Native Win32 programs, cross-built with mingw-w64 from the case's CMake target.</summary>
public sealed class WineKind(IToolRunner? tools = null) : WineKindBase(tools)
{
    public override string Name => "wine";
    public override IReadOnlyList<string> BuiltIns => ["wine", "wine-win10"];
    protected override IReadOnlyList<string> Windows10 => ["wine-win10"];
    public override IReadOnlyList<string> UserPrefixes => ["wine"];
    protected override SubjectCapabilities Runs => SubjectCapabilities.NativePrograms;

    /// <summary>
    /// The cross-built GoogleTest a repro's CMake project finds (CrossArgs), built before the first cross build of a
    /// project that asks for it (find_package(GTest)), under a lock: harness/wine/googletest.sh returns at once when it
    /// is current, and a project without tests never waits for it.
    /// </summary>
    public static ToolResult? GoogleTestFor(Manifest m, IToolRunner tools)
    {
        var lists = Path.Combine(m.Dir, m.Build.CmakeDir ?? "", "CMakeLists.txt");
        if (!File.Exists(lists) || !File.ReadAllText(lists).Contains("GTest", StringComparison.Ordinal)) return null;
        var root = Path.GetFullPath(Path.Combine(m.Dir, "..", ".."));
        var dir = Path.Combine(root, ".cache", "wine", "googletest");
        var r = tools.Run("flock", [dir + ".lock", "bash", Path.Combine(root, "harness", "wine", "googletest.sh"), dir], TimeSpan.FromMinutes(10));
        return r.ExitCode == 0 ? null : r with { Stderr = $"no cross-built GoogleTest at {dir}: {r.Describe("harness/wine/googletest.sh")}" };
    }

    public override BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs) =>
        cs.CmakeTarget is not { } target ? new NoBuild($"case {cs.Id} has no native program")
        : new CmakeBuild(target, "wine-cmake", CrossArgs(m), ".exe", GoogleTestFor);

    /// <summary>CMake's arguments for a mingw-w64 cross build (also of the windows flavor, by `corpus winsmoke`).</summary>
    public static IReadOnlyList<string> CrossArgs(Manifest m) =>
        [$"-DCMAKE_TOOLCHAIN_FILE={Path.Combine(m.Dir, "..", "..", "harness", "wine", "mingw-w64-posix.cmake")}",
         $"-DCMAKE_PREFIX_PATH={Path.Combine(m.Dir, "..", "..", ".cache", "wine", "googletest")}"];
}

/// <summary>The repro's C# program published for win-x64, self-contained (.NET for Windows), run under Wine.</summary>
public sealed class WineDotnetKind(IToolRunner? tools = null) : WineKindBase(tools)
{
    public override string Name => "wine-dotnet";
    /// <summary>The built-in subjects and the .NET major each publishes with the SDK's own win-x64 pack.</summary>
    private static readonly Dictionary<string, int> BuiltInMajors = new() { ["wine-net10"] = 10, ["wine-net8"] = 8 };

    public override IReadOnlyList<string> BuiltIns => [.. BuiltInMajors.Keys];
    public override IReadOnlyList<string> UserPrefixes => [];
    public override string UserPathMeaning => "";
    protected override SubjectCapabilities Runs => SubjectCapabilities.ManagedProgram;

    /// <summary>wine-net:VERSION: the program published self-contained on that exact win-x64 runtime pack.</summary>
    public const string VersionPrefix = "wine-net:";
    public const string RuntimePack = "Microsoft.NETCore.App.Runtime.win-x64";
    public override bool Owns(string name) => BuiltIns.Contains(name) || RuntimeVersion(name) is not null;
    public override IReadOnlyList<string> BuiltInForms => [.. BuiltIns, VersionPrefix + "VERSION"];

    public static string? RuntimeVersion(string name) =>
        name.StartsWith(VersionPrefix) && RoslynKind.IsVersion(name[VersionPrefix.Length..]) ? name[VersionPrefix.Length..] : null;

    public const string HostPack = "Microsoft.NETCore.App.Host.win-x64";

    /// <summary>
    /// A self-contained publish takes the runtime pack and the apphost pack of the same version (the SDK ties the
    /// apphost to RuntimeFrameworkVersion), so both must be on the feeds; the refusal lists the versions that have both.
    /// </summary>
    protected override string? Unprovisionable(string spec, string root)
    {
        if (RuntimeVersion(spec) is not { } v) return null;
        var runtime = NuGetListing.Lookup(root, RuntimePack, v, Tools);
        var host = NuGetListing.Lookup(root, HostPack, v, Tools);
        if (runtime.Has && host.Has) return null;
        if (runtime.Versions is null || host.Versions is null) return null;   // the feeds could not be asked: the publish will say
        var both = runtime.Versions.Intersect(host.Versions, StringComparer.OrdinalIgnoreCase);
        return $"{(runtime.Has ? HostPack : RuntimePack)} {v} is not on this machine's NuGet feeds; versions with both "
               + $"{RuntimePack} and {HostPack}: {string.Join(", ", both)}";
    }

    /// <summary>A runtime of major M is published as netM.0 (the SDK here targets up to net10.0): a framework the project does not list is an attempt.</summary>
    public override BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs) =>
        RuntimeVersion(s.Name) is { } v
            ? new DotnetPublish($"net{Math.Min(int.Parse(v.Split('.')[0]), 10)}.0", "win-x64", v)
            : new DotnetPublish($"net{BuiltInMajors[s.Name]}.0", "win-x64");

    /// <summary>
    /// winedbg on a .NET process needs the process to stay put: stacks took 1.0–1.3 s and the minidump 7–11 s (wine-net10)
    /// and over 20 s (wine-net8). A debuggee cannot exit while winedbg is attached, and killing a stuck winedbg killed the
    /// program: filemapping-leak's 4 s hold on wine-net8 lost its REPRO-DONE that way. So only cases whose family waits
    /// (a hang holds still for its whole length) get it. Managed frames stay unnamed: the DAC does not cross.
    /// </summary>
    public override ICaptureBackend SnapshotBackend(Subject s, CaptureContext context) => context.HoldsStill ? base.SnapshotBackend(s, context)
        : new UnavailableBackend("winedbg", "not taken for .NET under Wine outside a hang: winedbg --minidump took 7 to more than 20 s "
                                 + "and holds the program's exit while attached (a killed winedbg killed the program); managed stacks of a "
                                 + "Windows .NET process cannot be read on Linux");

    /// <summary>Which .NET the program carries: a patch validator reads it beside Wine's version.</summary>
    public override string Describe(Subject s) => $"{base.Describe(s)}; .NET "
        + (RuntimeVersion(s.Name) is { } v ? $"{v} ({RuntimePack})" : $"{BuiltInMajors[s.Name]} (the SDK's win-x64 pack)")
        + ", self-contained";

    /// <summary>
    /// Under Wine 8, .NET's W^X double mapping breaks dynamic methods: BinaryFormatter died with "Internal CLR error
    /// (0x80131506)" in DynamicResolver finalization on every run until W^X was off.
    /// </summary>
    protected override IReadOnlyDictionary<string, string> RuntimeEnv => new Dictionary<string, string> { ["DOTNET_EnableWriteXorExecute"] = "0" };
}

/// <summary>A private prefix, tmpfs TMPDIR and wineserver per run, in folders of the cell; all taken down at the end.</summary>
public sealed partial class WineIsolation(string cellDir, string windows, IToolRunner tools) : CellIsolation
{
    public const string CellVariable = "CORPUS_WINE_CELL", RootVariable = "CORPUS_ROOT";
    private readonly string _dir = Path.Combine(cellDir, "wine");
    private readonly string _root = FindRoot(cellDir);
    private string? _entry;

    /// <summary>The supervisor takes the cell down if the harness dies before <see cref="Dispose"/>.</summary>
    private void Register()
    {
        if (_entry is not null) return;
        _entry = Containment.Supervisor.AddTeardown("bash", Path.Combine(_root, "harness", "wine", "cell.sh"), "down-all", _dir);
    }

    public override IReadOnlyDictionary<string, string> Env
    {
        get
        {
            Register();
            var env = new Dictionary<string, string> { [CellVariable] = _dir, [RootVariable] = _root };
            if (_shared is not null) env[SharedVariable] = SharedDir;
            return env;
        }
    }

    /// <summary>What the last run's Wine and Windows said of themselves (harness/wine/cell.sh writes it).</summary>
    public override string? Describe
    {
        get
        {
            var file = Path.Combine(_dir, "runtime");
            var said = File.Exists(file) ? string.Join(", ", File.ReadAllLines(file).Where(l => l.Length > 0)) : "no run yet";
            return _shared is not null
                ? $"one private {windows} prefix, tmpfs TMPDIR and wineserver for the cell's fixture and runs ({said})"
                : $"private {windows} prefix, tmpfs TMPDIR and wineserver per run ({said})";
        }
    }

    private static string FindRoot(string dir)
    {
        for (var d = new DirectoryInfo(dir); d is not null; d = d.Parent)
            if (File.Exists(Path.Combine(d.FullName, "harness", "wine", "cell.sh"))) return d.FullName;
        throw new InvalidOperationException($"no corpus checkout above {dir}");
    }

    /// <summary>Takes down every run's prefix, tmpfs and processes (harness/wine/cell.sh down), then the folder.</summary>
    public override void Dispose()
    {
        StopShared();
        if (Directory.Exists(_dir))
            foreach (var run in Directory.GetDirectories(_dir, "run-*"))
                tools.Run("bash", [Path.Combine(_root, "harness", "wine", "cell.sh"), "down", run], TimeSpan.FromMinutes(1));
        if (_entry is not null) Containment.Supervisor.Remove(_entry);
        base.Dispose();
    }
}

/// <summary>A capture that cannot run for this subject; the reason reaches the capture errors.</summary>
public sealed class UnavailableBackend(string name, string why) : ICaptureBackend
{
    public string Name => name;
    public string? Unavailable => why;
    public Task<CaptureRecord> SnapshotAsync(Containment.ContainedProcess target, string dir, int index, CancellationToken cancel) =>
        throw new InvalidOperationException(why);
}
