using System.Diagnostics;
using System.Text.RegularExpressions;
using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>
/// A C# compiler as the subject: <c>roslyn:VERSION</c> restores Microsoft.CodeAnalysis.CSharp VERSION from NuGet
/// into .cache/roslyn/VERSION (once; later cells reuse it), <c>roslyn:PATH</c> takes a folder holding
/// Microsoft.CodeAnalysis.CSharp.dll and Microsoft.CodeAnalysis.dll (or the CSharp dll itself). The program is
/// the roslyn runner (harness/RoslynRunner) on the .NET on PATH; the case's arguments are its mode and source.
/// </summary>
public sealed partial class RoslynKind(IToolRunner? tools = null) : ISubjectKind
{
    private readonly IToolRunner _tools = tools ?? ToolRunner.Instance;

    public const string Prefix = "roslyn";
    /// <summary>Extra NuGet sources (folders or feeds, ';'-separated) tried beside the configured ones.</summary>
    public const string FeedsVariable = "CORPUS_ROSLYN_FEEDS";
    public const string Package = "Microsoft.CodeAnalysis.CSharp";

    /// <summary>
    /// Versions that NuGet lacks as such but another package carries: the DotNetCompilerPlatform CodeDOM provider
    /// ships the csc of its time in tools/.
    /// </summary>
    private static readonly Dictionary<string, (string Package, string Version, string Folder)> Carriers = new()
    {
        ["2.10.0"] = ("Microsoft.CodeDom.Providers.DotNetCompilerPlatform", "3.11.1", "tools/Roslyn46"),
    };

    public string Name => Prefix;
    /// <summary>None to list: any roslyn:VERSION is built in, and is restored when a cell first needs it.</summary>
    public IReadOnlyList<string> BuiltIns => [];
    public bool Owns(string name) => name.StartsWith(Prefix + ":") && IsVersion(name[(Prefix.Length + 1)..]);
    public IReadOnlyList<string> BuiltInForms => [$"{Prefix}:VERSION"];
    public IReadOnlyList<string> UserPrefixes => [Prefix];
    public string UserPathMeaning => "a version, or Microsoft.CodeAnalysis.CSharp.dll or its folder";
    /// <summary>The runner runs on the .NET on PATH, so its snapshots read the heap as CoreCLR's do.</summary>
    public SubjectCapabilities Capabilities(string subject) => SubjectCapabilities.CompilerRunner | SubjectCapabilities.HeapFacts;
    public bool UnavailableIsUnchecked => true;

    [GeneratedRegex(@"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")]
    private static partial Regex VersionText();

    public static bool IsVersion(string text) => VersionText().IsMatch(text);

    public Subject Resolve(string spec, string? userPath, string root)
    {
        var given = spec.StartsWith(Prefix + ":") ? spec[(Prefix.Length + 1)..] : spec;
        // Resolving restores nothing: a version not yet restored is that version, to be provisioned by its first cell
        // (a restore already known to fail for these feeds says so at once).
        if (IsVersion(given))
            return Restored(root, given, Feeds()) switch
            {
                (true, _) => Found(spec, Folder(root, given), null),
                (false, { } failed) => new(spec, this, Folder(root, given), null, failed),
                _ => new(spec, this, Folder(root, given), given, null),
            };
        var path = userPath ?? Path.GetFullPath(given);
        var folder = File.Exists(path) && path.EndsWith(".dll", StringComparison.OrdinalIgnoreCase) ? Path.GetDirectoryName(path)! : path;
        if (!File.Exists(path) && !Directory.Exists(path)) return new(spec, this, path, null, $"{path}: no such file or folder");
        return Found(spec, folder, null);
    }

    public string? Provision(Subject s, string root) =>
        !s.IsUsers && Version(s.Name) is { } v ? Provision(v, root, Feeds(), tools: _tools).Why : null;

    public Subject Provisioned(Subject s, string root) =>
        Provision(s, root) is { } why ? s with { Unavailable = why } : s.IsUsers ? s : Resolve(s.Name, null, root);

    private static string? Version(string spec) =>
        spec.StartsWith(Prefix + ":") && IsVersion(spec[(Prefix.Length + 1)..]) ? spec[(Prefix.Length + 1)..] : null;

    private static string Folder(string root, string version) => Path.Combine(root, ".cache", "roslyn", version);

    private static string FeedKey(IReadOnlyList<string> feeds, bool configured) =>
        "feeds: " + string.Join(";", feeds) + (configured ? "" : " (only)");

    /// <summary>Whether the version is restored; if not, the remembered failure of a restore from these feeds, if any.</summary>
    private static (bool Done, string? Failed) Restored(string root, string version, IReadOnlyList<string> feeds, bool configured = true)
    {
        var dir = Folder(root, version);
        if (File.Exists(Path.Combine(dir, ".source"))) return (true, null);
        var failed = dir + ".unavailable";
        var key = FeedKey(feeds, configured);
        return File.Exists(failed) && File.ReadLines(failed).FirstOrDefault() == key
            ? (false, File.ReadAllText(failed)[(key.Length + 1)..].Trim())
            : (false, null);
    }

    private Subject Found(string spec, string dir, string? why)
    {
        if (why is not null) return new(spec, this, dir, null, why);
        foreach (var dll in new[] { "Microsoft.CodeAnalysis.CSharp.dll", "Microsoft.CodeAnalysis.dll" })
            if (!File.Exists(Path.Combine(dir, dll))) return new(spec, this, dir, null, $"{dir}: no {dll} there (a Roslyn compiler needs both)");
        var version = FileVersionInfo.GetVersionInfo(Path.Combine(dir, "Microsoft.CodeAnalysis.CSharp.dll")).ProductVersion;
        return new(spec, this, dir, version?.Split('+')[0], null);
    }

    public static IReadOnlyList<string> Feeds() =>
        (Environment.GetEnvironmentVariable(FeedsVariable) ?? "").Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
        .Select(Path.GetFullPath).ToList();

    /// <summary>
    /// The folder of one version's compiler, restored once. A failed restore is remembered with its errors (the
    /// NU1102 lines) for the same set of feeds, so an absent version costs one restore, not one per cell.
    /// </summary>
    /// <param name="configured">Also use the machine's configured NuGet sources (off only to prove a feed alone works).</param>
    public static (string Dir, string? Why) Provision(string version, string root, IReadOnlyList<string> feeds, bool configured = true,
                                                      IToolRunner? tools = null)
    {
        tools ??= ToolRunner.Instance;
        var cache = Path.Combine(root, ".cache", "roslyn");
        var dir = Folder(root, version);
        var failed = dir + ".unavailable";
        var feedKey = FeedKey(feeds, configured);
        Directory.CreateDirectory(cache);
        // One restore at a time per version, across harnesses (a bisect beside a gate).
        using var lockFile = Lock(Path.Combine(cache, version + ".lock"));
        switch (Restored(root, version, feeds, configured))
        {
            case (true, _): return (dir, null);
            case (false, { } known): return (dir, known);
        }
        var clock = Stopwatch.StartNew();
        var (libs, errors) = Restore(cache, Package, version, feeds, configured, tools);
        string? source = libs is null ? null : $"{Package} {version} from NuGet";
        if (libs is null && Carriers.TryGetValue(version, out var carrier))
        {
            var (carried, more) = Restore(cache, carrier.Package, carrier.Version, feeds, configured, tools, carrier.Folder);
            if (carried is not null) (libs, source) = (carried, $"{carrier.Package} {carrier.Version} {carrier.Folder} from NuGet");
            else errors += "\n" + more;
        }
        if (libs is null)
        {
            // NuGet's "Nearest version" is a name, not a promise: quote it only with what a restore of it came to.
            if (NearestVersion().Match(errors) is { Success: true } near && near.Groups[1].Value != version)
            {
                var (nearLibs, nearErrors) = Restore(cache, Package, near.Groups[1].Value, feeds, configured, tools);
                errors = errors.Replace(near.Value, nearLibs is null
                    ? $"{near.Value}, which cannot be restored either ({nearErrors.Trim().Split('\n')[0].Trim()})"
                    : $"{near.Value}, which restores");
            }
            var why = $"cannot restore {Package} {version}: {string.Join("; ", errors.Trim().Split('\n').Select(l => l.Trim()))}";
            File.WriteAllText(failed, feedKey + "\n" + why + "\n");
            return (dir, why);
        }
        Directory.CreateDirectory(dir);
        foreach (var dll in libs) File.Copy(dll, Path.Combine(dir, Path.GetFileName(dll)), overwrite: true);
        File.WriteAllText(Path.Combine(dir, ".source"), $"{source}; restored in {clock.Elapsed.TotalSeconds:0.0} s\n");
        File.Delete(failed);
        return (dir, null);
    }

    private static FileStream Lock(string file)
    {
        for (var i = 0; ; i++)
        {
            try { return new FileStream(file, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None); }
            catch (IOException) when (i < 600) { Thread.Sleep(500); }
        }
    }

    /// <summary>
    /// dotnet restore of a throwaway project that references exactly this version; the compiler's two assemblies
    /// from the restored packages, or the restore's error lines.
    /// </summary>
    private static (IReadOnlyList<string>? Dlls, string Errors) Restore(string cache, string package, string version,
                                                                        IReadOnlyList<string> feeds, bool configured, IToolRunner tools,
                                                                        string? folder = null)
    {
        var project = Path.Combine(cache, "restore", $"{package}-{version}");
        Directory.CreateDirectory(project);
        File.WriteAllText(Path.Combine(project, "restore.csproj"), $"""
            <Project Sdk="Microsoft.NET.Sdk">
              <PropertyGroup><TargetFramework>net10.0</TargetFramework><NoWarn>NU1701;NU1603</NoWarn></PropertyGroup>
              <ItemGroup><PackageReference Include="{package}" Version="[{version}]" /></ItemGroup>
            </Project>
            """);
        var packages = Path.Combine(cache, "packages");
        List<string> args = ["restore", Path.Combine(project, "restore.csproj"), "--packages", packages, "-nologo", "-v", "q"];
        foreach (var feed in feeds) args.AddRange(["--source", feed]);
        // The configured sources stay: a user's feed adds versions, it does not replace ours.
        if (feeds.Count > 0 && configured) args.AddRange(ConfiguredSources(tools).SelectMany(s => new[] { "--source", s }));
        var r = tools.Run("dotnet", args, TimeSpan.FromMinutes(5));
        var errors = string.Join("\n", (r.Stdout + r.Stderr).Split('\n').Where(l => l.Contains(": error "))
                                      .Select(l => l[(l.IndexOf(": error ", StringComparison.Ordinal) + 2)..].Trim()).Distinct());
        if (r.ExitCode != 0) return (null, errors.Length > 0 ? errors : r.Describe("dotnet restore"));
        if (folder is not null)
        {
            var dir = Path.Combine(packages, package.ToLowerInvariant(), version, folder);
            var dlls = new[] { "Microsoft.CodeAnalysis.dll", "Microsoft.CodeAnalysis.CSharp.dll" }.Select(d => Path.Combine(dir, d)).ToList();
            return dlls.All(File.Exists) ? (dlls, "") : (null, $"{package} {version} has no Roslyn in {folder}");
        }
        var common = Path.Combine(packages, "microsoft.codeanalysis.common");
        var commonVersion = Directory.Exists(Path.Combine(common, version)) ? version : null;
        if (commonVersion is null) return (null, $"the restore of {package} {version} left no Microsoft.CodeAnalysis.Common {version}");
        var found = new List<string>();
        foreach (var (id, dll) in new[] { (package, "Microsoft.CodeAnalysis.CSharp.dll"), ("Microsoft.CodeAnalysis.Common", "Microsoft.CodeAnalysis.dll") })
        {
            var lib = BestLib(Path.Combine(packages, id.ToLowerInvariant(), version, "lib"));
            if (lib is null || !File.Exists(Path.Combine(lib, dll))) return (null, $"{id} {version} has no lib folder this runner can load");
            found.Add(Path.Combine(lib, dll));
        }
        return (found, "");
    }

    /// <summary>The newest netX.0 build the runner's .NET can load, else netstandard2.0, netcoreapp3.1, netstandard1.x.</summary>
    internal static string? BestLib(string lib)
    {
        if (!Directory.Exists(lib)) return null;
        var names = Directory.GetDirectories(lib).Select(Path.GetFileName).OfType<string>().ToList();
        var net = names.Select(n => (n, m: NetTfm().Match(n))).Where(x => x.m.Success && int.Parse(x.m.Groups[1].Value) <= Environment.Version.Major)
            .OrderByDescending(x => int.Parse(x.m.Groups[1].Value)).Select(x => x.n).FirstOrDefault();
        // 2.x compilers ship netstandard1.3 only.
        var pick = net ?? names.FirstOrDefault(n => n == "netstandard2.0") ?? names.FirstOrDefault(n => n == "netcoreapp3.1")
                   ?? names.Where(n => n.StartsWith("netstandard1.", StringComparison.Ordinal)).OrderDescending(StringComparer.Ordinal).FirstOrDefault();
        return pick is null ? null : Path.Combine(lib, pick);
    }

    [GeneratedRegex(@"Nearest version: ([0-9][0-9A-Za-z.-]*[0-9A-Za-z])")]
    private static partial Regex NearestVersion();

    [GeneratedRegex(@"^net(\d+)\.0$")]
    private static partial Regex NetTfm();

    private static IEnumerable<string> ConfiguredSources(IToolRunner tools)
    {
        var r = tools.Run("dotnet", ["nuget", "list", "source", "--format", "short"], TimeSpan.FromMinutes(1));
        // Lines look like "E https://api.nuget.org/v3/index.json" (E: enabled).
        return r.Stdout.Split('\n').Select(l => l.Trim()).Where(l => l.StartsWith("E ")).Select(l => l[2..].Trim());
    }

    public BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs) => new RoslynRunnerBuild();

    public Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options)
    {
        var env = new Dictionary<string, string>(options.Env);
        // 3: the perf map alone; 1 would add a jitdump of ~0.5 MB a run in /tmp.
        if (options.PerfMap) env["DOTNET_PerfMapEnabled"] = "3";
        env.TryAdd("DOTNET_CLI_TELEMETRY_OPTOUT", "1");
        return new Launch(Dotnet(), ["exec", program, "--roslyn", s.Path, .. args], env);
    }

    public CellIsolation Isolate(Subject s, string cellDir) => CellIsolation.None;

    /// <summary>The runner runs on the .NET on PATH: its createdump and DumpFacts read the parser's frames.</summary>
    public ICaptureBackend SnapshotBackend(Subject s, CaptureContext context)
    {
        var runtime = new CoreClrKind().Resolve("net10", null, context.Root);
        return new CoreClrCreateDump(context.Tools, CoreClrKind.CreateDump(runtime),
                                     Path.Combine(context.Root, "build", "harness", "DumpFacts", "DumpFacts.dll"), context.Heap);
    }

    public string CrashExecutable(Subject s, string program) => Dotnet();

    public string? TraceUnsupported(string subject, TraceCapture trace) =>
        trace.Kind is TraceCapture.Cpu or TraceCapture.Alloc ? null
            : $"dotnet-trace's backend takes 'cpu' (sample profiler) and 'alloc' (GC allocation ticks) traces, not '{trace.Kind}' on the compiler runner (on CoreCLR)";

    public ITraceBackend TraceBackend(Subject s, TraceCapture trace, CaptureContext context) => new DotnetTraceBackend(context.Root);

    public string Describe(Subject s)
    {
        var source = Path.Combine(s.Path, ".source");
        return $"roslyn {s.Version} at {s.Path}" + (File.Exists(source) ? $" ({File.ReadAllText(source).Trim()})" : " (a user's build)")
               + $", runner on .NET {Environment.Version}";
    }

    private static string Dotnet() => SubjectKinds.Which("dotnet") ?? "/usr/share/dotnet/dotnet";
}

/// <summary>
/// The roslyn runner, one build for every compiler version (it loads the compiler by reflection), into
/// build/harness/roslyn-runner/; ci/setup.sh builds it, and a cell builds it if it is missing.
/// </summary>
public sealed class RoslynRunnerBuild : BuildRecipe
{
    public override string Flavor => "roslyn";

    /// <summary>outDir is build/&lt;id&gt;/roslyn, so the shared runner is two folders up.</summary>
    public override string ProgramPath(Manifest m, string outDir) =>
        Path.GetFullPath(Path.Combine(outDir, "..", "..", "harness", "roslyn-runner", "roslyn-runner.dll"));

    public override string? Missing(Manifest m) => null;

    public override ToolResult Run(Manifest m, string outDir, string program, IToolRunner tools)
    {
        // ci/setup.sh keeps it up to date; a repro's first cell only builds it when it is missing.
        if (File.Exists(program)) return new ToolResult(0, $"{program} is built\n", "", 0, false);
        var root = Path.GetFullPath(Path.Combine(outDir, "..", "..", ".."));
        return tools.Run("dotnet", ["build", Path.Combine(root, "harness", "RoslynRunner"), "-c", "Release",
                                    "-o", Path.GetDirectoryName(program)!, "-nologo", "-v", "q"], TimeSpan.FromMinutes(10));
    }
}
