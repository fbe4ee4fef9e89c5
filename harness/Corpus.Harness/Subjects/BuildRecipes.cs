using Corpus.Harness.Capture;
using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>
/// How one flavor of a repro is built (mono IL, a target framework, a CMake target). Subject kinds choose a
/// recipe; the <see cref="Runner.Builder"/> runs it once per flavor and caches the result.
/// </summary>
public abstract class BuildRecipe
{
    /// <summary>Names the build folder build/&lt;id&gt;/&lt;Flavor&gt;/ and enters the source hash.</summary>
    public abstract string Flavor { get; }

    /// <summary>Distinguishes several programs built into one flavor folder (CMake targets); null for one program.</summary>
    public virtual string? Target => null;

    public abstract string ProgramPath(Manifest m, string outDir);

    /// <summary>Null when the manifest can be built this way, otherwise which field is missing.</summary>
    public abstract string? Missing(Manifest m);

    public abstract ToolResult Run(Manifest m, string outDir, string program, IToolRunner tools);

    /// <summary>
    /// Non-null when this build is only an attempt: the project does not say it builds this way (a target framework it
    /// does not list), so a failure means the subject cannot run the program, not that the repro is broken. Says what.
    /// </summary>
    public virtual string? Attempt(Manifest m) => null;

    /// <summary>Why the build ran but left no program: names the manifest field that is wrong.</summary>
    public virtual string NoProgram(Manifest m, string outDir, string program) =>
        $"the build succeeded but left no {Path.GetFileName(program)} in {outDir}";
}

/// <summary>Mono: every source matched by build.mono.sources compiled with mcs (C# 7 at most).</summary>
public sealed class MonoBuild : BuildRecipe
{
    public override string Flavor => "mono";
    public override string ProgramPath(Manifest m, string outDir) => Path.Combine(outDir, (m.Build.Assembly ?? m.Id) + ".exe");

    public override string? Missing(Manifest m) =>
        m.Build.MonoSources.Count == 0 ? $"{m.File}: field 'build.mono' is missing, so there is no Mono build"
        : Sources(m).Count == 0 ? $"{m.File}: field 'build.mono.sources' matches no file"
        : null;

    public override ToolResult Run(Manifest m, string outDir, string program, IToolRunner tools) =>
        tools.Run("mcs", ["-nologo", "-optimize+", "-debug", "-unsafe", $"-out:{program}", .. Sources(m)], TimeSpan.FromMinutes(5));

    public static IReadOnlyList<string> Sources(Manifest m)
    {
        var files = new List<string>();
        foreach (var pattern in m.Build.MonoSources)
        {
            var dir = Path.GetFullPath(Path.Combine(m.Dir, Path.GetDirectoryName(pattern) ?? ""));
            if (!Directory.Exists(dir)) continue;
            files.AddRange(Directory.GetFiles(dir, Path.GetFileName(pattern)).Order(StringComparer.Ordinal));
        }
        return files;
    }
}

/// <summary>
/// Where MSBuild keeps a repro build's obj/ and bin/: beside the program's folder under build/, not in the repro's
/// source tree (a self-contained win-x64 publish left 149 MB in src/bin), and not inside the program's folder, which
/// a cell may copy.
/// </summary>
public static class DotnetArtifacts
{
    public static string Beside(string outDir) => outDir.TrimEnd(Path.DirectorySeparatorChar) + ".msbuild";
}

/// <summary>.NET: build.dotnet.project built for one target framework.</summary>
public sealed class DotnetBuild(string targetFramework) : BuildRecipe
{
    public override string Flavor => targetFramework;
    public override string ProgramPath(Manifest m, string outDir) => Path.Combine(outDir, (m.Build.Assembly ?? m.Id) + ".dll");

    public override string? Missing(Manifest m) =>
        m.Build.DotnetProject is null ? $"{m.File}: field 'build.dotnet' is missing, so there is no .NET build" : null;

    public override string? Attempt(Manifest m) => ProjectFrameworks.Attempt(m, targetFramework);

    public override ToolResult Run(Manifest m, string outDir, string program, IToolRunner tools) =>
        tools.Run("dotnet", ["build", Path.Combine(m.Dir, m.Build.DotnetProject!), "-c", "Release", "-f", targetFramework,
                             "-o", outDir, "--artifacts-path", DotnetArtifacts.Beside(outDir), "-nologo", "-v", "q", "-p:TreatWarningsAsErrors=false",
                             .. ProjectFrameworks.Override(m, targetFramework)],
                  TimeSpan.FromMinutes(10));

    public override string NoProgram(Manifest m, string outDir, string program)
    {
        var built = Directory.Exists(outDir)
            ? Directory.GetFiles(outDir, "*.runtimeconfig.json").Select(f => Path.GetFileName(f)[..^".runtimeconfig.json".Length]).ToList()
            : [];
        return $"{m.File}: field 'build.dotnet.assembly' is '{m.Build.Assembly ?? m.Id}', but {m.Build.DotnetProject} built "
               + (built.Count > 0 ? $"the program {string.Join(", ", built)}" : "no program") + $" in {outDir}";
    }
}

/// <summary>.NET published for another runtime identifier, self-contained (e.g. win-x64 for Wine).</summary>
/// <param name="runtimeVersion">The exact runtime to publish with (wine-net:VERSION); null for the SDK's own.</param>
public sealed class DotnetPublish(string targetFramework, string rid, string? runtimeVersion = null) : BuildRecipe
{
    public override string Flavor => $"{rid}-{targetFramework}" + (runtimeVersion is null ? "" : "-" + runtimeVersion);
    public override string? Attempt(Manifest m) =>
        ProjectFrameworks.Attempt(m, targetFramework)
        ?? (runtimeVersion is null ? null : $"a self-contained {rid} publish on runtime {runtimeVersion}, which needs its runtime and host packs");
    public override string ProgramPath(Manifest m, string outDir) =>
        Path.Combine(outDir, (m.Build.Assembly ?? m.Id) + (rid.StartsWith("win") ? ".exe" : ""));

    public override string? Missing(Manifest m) =>
        m.Build.DotnetProject is null ? $"{m.File}: field 'build.dotnet' is missing, so there is no .NET build" : null;

    public override ToolResult Run(Manifest m, string outDir, string program, IToolRunner tools) =>
        tools.Run("dotnet", ["publish", Path.Combine(m.Dir, m.Build.DotnetProject!), "-c", "Release", "-f", targetFramework, "-r", rid,
                             "--self-contained", "-o", outDir, "--artifacts-path", DotnetArtifacts.Beside(outDir), "-nologo", "-v", "q",
                             "-p:TreatWarningsAsErrors=false",
                             .. ProjectFrameworks.Override(m, targetFramework, selfContained: true),
                             .. (runtimeVersion is null ? Array.Empty<string>() : [$"-p:RuntimeFrameworkVersion={runtimeVersion}"])],
                  TimeSpan.FromMinutes(10));
}

/// <summary>A native program: one target of the CMake project in build.cmake.dir.</summary>
/// <param name="suffix">".exe" for a Windows target.</param>
/// <param name="prepare">What the configure step needs first (a cross-built GoogleTest), or null; a failing result ends the build.</param>
public sealed class CmakeBuild(string target, string flavor = "cmake", IReadOnlyList<string>? configureArgs = null, string suffix = "",
                               Func<Manifest, IToolRunner, ToolResult?>? prepare = null)
    : BuildRecipe
{
    public override string Flavor => flavor;
    public override string? Target => target;
    public override string ProgramPath(Manifest m, string outDir) => Path.Combine(outDir, target + suffix);

    public override string? Missing(Manifest m) =>
        m.Build.CmakeDir is null ? $"{m.File}: field 'build.cmake' is missing, so there is no native build" : null;

    public override ToolResult Run(Manifest m, string outDir, string program, IToolRunner tools)
    {
        if (prepare?.Invoke(m, tools) is { ExitCode: not 0 } unprepared) return unprepared;
        // {out} is the build folder; --config picks Release where the generator is multi-config (Visual Studio).
        var configure = tools.Run("cmake", ["-S", Path.Combine(m.Dir, m.Build.CmakeDir!), "-B", outDir, "-DCMAKE_BUILD_TYPE=Release",
                                            .. (configureArgs ?? []).Select(a => a.Replace("{out}", outDir))], TimeSpan.FromMinutes(5));
        if (configure.ExitCode != 0) return configure;
        var compile = tools.Run("cmake", ["--build", outDir, "--target", target, "--config", "Release", "-j", "2"], TimeSpan.FromMinutes(10));
        return compile with { Stdout = configure.Stdout + compile.Stdout, Stderr = configure.Stderr + compile.Stderr };
    }

    public override string NoProgram(Manifest m, string outDir, string program) =>
        $"{m.File}: a case's field 'program' names cmake:{target}, but building it left no {program}";
}

/// <summary>No build is possible for this subject: the reason is the error.</summary>
public sealed class NoBuild(string why) : BuildRecipe
{
    public override string Flavor => "none";
    public override string ProgramPath(Manifest m, string outDir) => "";
    public override string? Missing(Manifest m) => why;
    public override ToolResult Run(Manifest m, string outDir, string program, IToolRunner tools) => throw new InvalidOperationException(why);
}

/// <summary>The target frameworks a repro's .NET project lists, and how to build it for one it does not.</summary>
public static partial class ProjectFrameworks
{
    public static IReadOnlyList<string> Listed(Manifest m)
    {
        var file = Path.Combine(m.Dir, m.Build.DotnetProject ?? "");
        if (!File.Exists(file)) return [];
        var match = Frameworks().Match(File.ReadAllText(file));
        return match.Success ? match.Groups[2].Value.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries) : [];
    }

    public static string? Attempt(Manifest m, string targetFramework) =>
        Listed(m) is { Count: > 0 } listed && !listed.Contains(targetFramework)
            ? $"{m.Build.DotnetProject} targets {string.Join(";", listed)}, not {targetFramework}" : null;

    /// <summary>
    /// Builds an unlisted framework by overriding the project's list for this build only. A framework-dependent build
    /// goes without an apphost: the harness runs the dll through the subject's own host, and the SDK would want the
    /// newest apphost of that framework (3.1.32 for netcoreapp3.1), which the feeds may lack.
    /// </summary>
    public static IReadOnlyList<string> Override(Manifest m, string targetFramework, bool selfContained = false) =>
        Attempt(m, targetFramework) is null ? [] : selfContained ? [$"-p:TargetFrameworks={targetFramework}"]
        : [$"-p:TargetFrameworks={targetFramework}", "-p:UseAppHost=false"];

    [System.Text.RegularExpressions.GeneratedRegex(@"<(TargetFrameworks?)>\s*([^<]+?)\s*</\1>")]
    private static partial System.Text.RegularExpressions.Regex Frameworks();
}

