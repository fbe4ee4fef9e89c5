using Corpus.Harness.Capture;
using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>
/// CoreCLR (.NET 8, .NET 10, or a user's dotnet root): a folder with a 'dotnet' host beside
/// shared/Microsoft.NETCore.App/&lt;version&gt;/. The newest matching runtime there is the one under test.
/// </summary>
public sealed class CoreClrKind : ISubjectKind
{
    public string Name => "coreclr";
    public IReadOnlyList<string> BuiltIns => ["net10", "net8"];
    public IReadOnlyList<string> UserPrefixes => ["coreclr", "dotnet"];
    public string UserPathMeaning => "a dotnet root";
    public SubjectCapabilities Capabilities(string subject) => SubjectCapabilities.ManagedProgram | SubjectCapabilities.HeapFacts;

    public Subject Resolve(string spec, string? userPath, string root)
    {
        var (dir, prefix) = spec switch
        {
            "net10" => (DotnetRootOnPath() ?? (OperatingSystem.IsWindows()
                ? Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.ProgramFiles), "dotnet") : "/usr/share/dotnet"), "10."),
            "net8" => (Path.Combine(root, ".cache", "subjects", "net8"), "8."),
            _ => (userPath!, (string?)null),
        };
        var host = Path.Combine(dir, OperatingSystem.IsWindows() ? "dotnet.exe" : "dotnet");
        var shared = Path.Combine(dir, "shared", "Microsoft.NETCore.App");
        if (!Directory.Exists(dir))
            return new(spec, this, dir, null, userPath is null ? $"{dir} is missing (make setup makes it)" : $"{dir}: no such folder");
        if (!File.Exists(host) || !Directory.Exists(shared))
            return new(spec, this, dir, null, $"{dir} is not a dotnet root (needs 'dotnet' and shared/Microsoft.NETCore.App/)");
        var version = Directory.GetDirectories(shared).Select(Path.GetFileName)
            .Where(v => v is not null && (prefix is null || v.StartsWith(prefix)))
            .Select(v => (Text: v!, Parsed: Version.TryParse(v!.Split('-')[0], out var p) ? p : null))
            .Where(v => v.Parsed is not null).OrderByDescending(v => v.Parsed).Select(v => v.Text).FirstOrDefault();
        if (version is null)
            return new(spec, this, dir, null, $"no Microsoft.NETCore.App {prefix ?? ""}* runtime under {shared}");
        return new(spec, this, dir, version, null);
    }

    /// <summary>A runtime of major version 8 or 9 runs the net8.0 build; 10 and later the net10.0 build.</summary>
    public static string TargetFramework(Subject s) =>
        s.Version is { } v && int.TryParse(v.Split('.')[0], out var major) && major < 10 ? "net8.0" : "net10.0";

    public BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs) => new DotnetBuild(TargetFramework(s));

    public Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options)
    {
        var env = new Dictionary<string, string>(options.Env);
        // 3: the perf map alone; 1 would add a jitdump of ~0.5 MB a run in /tmp.
        if (options.PerfMap) env["DOTNET_PerfMapEnabled"] = "3";
        env["DOTNET_ROOT"] = s.Path;
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

    public string Describe(Subject s) => $"coreclr {s.Version} at {s.Path}";

    private static string? DotnetRootOnPath()
    {
        var dotnet = SubjectKinds.Which("dotnet");
        if (dotnet is null) return null;
        var real = new FileInfo(dotnet).ResolveLinkTarget(returnFinalTarget: true)?.FullName ?? dotnet;
        return Path.GetDirectoryName(real);
    }
}
