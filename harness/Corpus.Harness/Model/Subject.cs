namespace Corpus.Harness.Model;

public enum SubjectKind { Mono, CoreClr, Native }

/// <summary>
/// The runtime whose behaviour decides the bug. Built-ins are names; a user's build is kind:path and goes
/// through the same code, which is how a patched runtime gets validated.
/// </summary>
public sealed record Subject(string Name, SubjectKind Kind, string Path, string? Version, string? Unavailable)
{
    /// <summary>The build of the repro this subject runs: IL for Mono, a target framework for CoreCLR.</summary>
    public string Flavor => Kind == SubjectKind.Native ? "cmake" : Kind == SubjectKind.Mono ? "mono"
        : Version is { } v && int.TryParse(v.Split('.')[0], out var major) && major < 10 ? "net8.0" : "net10.0";

    public string Slug => new(Name.Select(c => char.IsLetterOrDigit(c) || c is '-' or '.' ? c : '_').ToArray());

    public string? CreateDump => Kind == SubjectKind.CoreClr && Version is not null
        ? System.IO.Path.Combine(Path, "shared", "Microsoft.NETCore.App", Version, "createdump") : null;

    public static readonly string[] BuiltIn = ["mono", "net10", "net8", "linux", "windows"];

    public static Subject Resolve(string spec, string root)
    {
        switch (spec)
        {
            case "mono":
                return Mono(spec, Which("mono") ?? "/usr/bin/mono");
            case "net10":
                return CoreClr(spec, DotnetRootOnPath() ?? "/usr/share/dotnet", "10.");
            case "net8":
                return CoreClr(spec, System.IO.Path.Combine(root, ".cache", "subjects", "net8"), "8.");
            // Native programs: the OS itself is the subject.
            case "linux":
                return new(spec, SubjectKind.Native, "/", Environment.OSVersion.Version.ToString(),
                           OperatingSystem.IsLinux() ? null : "needs Linux");
            case "windows":
                return new(spec, SubjectKind.Native, "C:\\", null,
                           OperatingSystem.IsWindows() ? null : "needs real Windows; these machines run Linux");
        }
        var colon = spec.IndexOf(':');
        if (colon <= 0)
            throw new ArgumentException(
                $"unknown subject '{spec}': use one of {string.Join(", ", BuiltIn)}, or mono:PATH, or coreclr:DOTNET_ROOT");
        var kind = spec[..colon];
        var path = System.IO.Path.GetFullPath(spec[(colon + 1)..]);
        return kind switch
        {
            "mono" => Mono(spec, path),
            "coreclr" or "dotnet" => CoreClr(spec, path, null),
            _ => throw new ArgumentException($"unknown subject kind '{kind}' in '{spec}': use mono or coreclr"),
        };
    }

    private static Subject Mono(string name, string path)
    {
        if (!File.Exists(path)) return new(name, SubjectKind.Mono, path, null, $"no mono executable at {path}");
        return new(name, SubjectKind.Mono, path, null, null);
    }

    /// <summary>A dotnet root: a 'dotnet' host beside shared/Microsoft.NETCore.App/&lt;version&gt;.</summary>
    private static Subject CoreClr(string name, string root, string? versionPrefix)
    {
        var host = System.IO.Path.Combine(root, "dotnet");
        var shared = System.IO.Path.Combine(root, "shared", "Microsoft.NETCore.App");
        if (!File.Exists(host) || !Directory.Exists(shared))
            return new(name, SubjectKind.CoreClr, root, null,
                       $"{root} is not a dotnet root (needs 'dotnet' and shared/Microsoft.NETCore.App/)");
        var version = Directory.GetDirectories(shared).Select(System.IO.Path.GetFileName)
            .Where(v => v is not null && (versionPrefix is null || v.StartsWith(versionPrefix)))
            .Select(v => (Text: v!, Parsed: System.Version.TryParse(v!.Split('-')[0], out var p) ? p : null))
            .Where(v => v.Parsed is not null).OrderByDescending(v => v.Parsed).Select(v => v.Text).FirstOrDefault();
        if (version is null)
            return new(name, SubjectKind.CoreClr, root, null,
                       $"no Microsoft.NETCore.App {versionPrefix ?? ""}* runtime under {shared}");
        return new(name, SubjectKind.CoreClr, root, version, null);
    }

    internal static string? Which(string program) =>
        (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries)
        .Select(d => System.IO.Path.Combine(d, program)).FirstOrDefault(File.Exists);

    private static string? DotnetRootOnPath()
    {
        var dotnet = Which("dotnet");
        if (dotnet is null) return null;
        var real = new FileInfo(dotnet).ResolveLinkTarget(returnFinalTarget: true)?.FullName ?? dotnet;
        return System.IO.Path.GetDirectoryName(real);
    }
}
