using Corpus.Harness.Json;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Model;

/// <summary>
/// One block of a manifest's `build`: how the repro is built for one kind of program, read and checked by its own class
/// and registered with the families (<see cref="SignatureFamilies"/>). A subject kind's recipe reads the block it
/// builds from (<see cref="BuildSpec.Get{T}"/>).
/// </summary>
public interface IBuildKind
{
    /// <summary>Its block under "build": "dotnet".</summary>
    string Key { get; }

    /// <summary>Its block, every path, glob and name checked against the repro's folder; <paramref name="id"/> is the repro's.</summary>
    object ReadSpec(Fields f, string repoDir, string id);
}

public sealed record DotnetBuildSpec(string Project, string? Assembly);
public sealed record MonoBuildSpec(IReadOnlyList<string> Sources);
public sealed record CmakeBuildSpec(string Dir);
/// <summary>The cases run the shared compiler runner ("program": "roslyn"); nothing of the repro is built.</summary>
public sealed record RoslynBuildSpec;

/// <summary>How to build the repro for each kind of subject: the manifest's build blocks, each as its kind read it.</summary>
public sealed partial class BuildSpec(IReadOnlyDictionary<string, object> blocks)
{
    public bool Has(string key) => blocks.ContainsKey(key);
    public T? Get<T>(string key) where T : class => blocks.GetValueOrDefault(key) as T;

    public string? DotnetProject => Get<DotnetBuildSpec>("dotnet")?.Project;
    public string? Assembly => Get<DotnetBuildSpec>("dotnet")?.Assembly;
    public IReadOnlyList<string> MonoSources => Get<MonoBuildSpec>("mono")?.Sources ?? [];
    public string? CmakeDir => Get<CmakeBuildSpec>("cmake")?.Dir;

    /// <summary>Reads the build: each block by its registered kind; at least one.</summary>
    public static BuildSpec Read(Fields f, string dir, string id, IReadOnlyList<IBuildKind> kinds)
    {
        f.AllowOnly([.. kinds.Select(k => k.Key)]);
        var blocks = new Dictionary<string, object>();
        foreach (var kind in kinds)
            if (f.ObjectOr(kind.Key) is { } block) blocks[kind.Key] = kind.ReadSpec(block, dir, id);
        if (blocks.Count == 0)
            throw f.Error($"needs at least one of {string.Join(", ", kinds.Select(k => $"'{k.Key}'"))}");
        return new BuildSpec(blocks);
    }

    /// <summary>The files a sources glob names, expanded as the Builder does: a folder, then a file pattern.</summary>
    public static IReadOnlyList<string> ExpandSource(string dir, string pattern)
    {
        var folder = Path.GetFullPath(Path.Combine(dir, Path.GetDirectoryName(pattern) ?? ""));
        return Directory.Exists(folder) ? Directory.GetFiles(folder, Path.GetFileName(pattern)) : [];
    }

    /// <summary>The project's &lt;AssemblyName&gt;, or its file name; null when a condition or property makes it unknowable here.</summary>
    internal static (string? Name, string Why) ProjectAssemblyName(string file, Fields f)
    {
        System.Xml.Linq.XDocument doc;
        try { doc = System.Xml.Linq.XDocument.Load(file); }
        catch (System.Xml.XmlException e) { throw f.Error($"not a readable project file: {e.Message}", "project"); }
        var projectName = Path.GetFileNameWithoutExtension(file);
        var names = doc.Descendants().Where(e => e.Name.LocalName == "AssemblyName").ToList();
        if (names.Count == 0) return (projectName, "the project file's name; it sets no <AssemblyName>");
        var last = names[^1];
        if (last.Attribute("Condition") is not null || last.Parent?.Attribute("Condition") is not null) return (null, "");
        var value = last.Value.Trim().Replace("$(MSBuildProjectName)", projectName);
        return value.Contains("$(") ? (null, "") : (value, "its <AssemblyName>");
    }

    /// <summary>Targets of add_executable() in the CMake project, for "cmake:TARGET" programs.</summary>
    public static IReadOnlyList<string> CmakeTargets(string dir)
    {
        var targets = new List<string>();
        foreach (var file in Directory.GetFiles(dir, "CMakeLists.txt", SearchOption.AllDirectories).Order(StringComparer.Ordinal))
            foreach (var line in File.ReadLines(file))
                foreach (System.Text.RegularExpressions.Match m in AddExecutable().Matches(line.Split('#')[0]))
                    targets.Add(m.Groups[1].Value);
        return targets;
    }

    [System.Text.RegularExpressions.GeneratedRegex(@"add_executable\s*\(\s*([^\s)]+)")]
    private static partial System.Text.RegularExpressions.Regex AddExecutable();
}

/// <summary>build.dotnet: a project built with `dotnet build` (multi-targeted) or published for a runtime pack.</summary>
public sealed class DotnetBuildKind : IBuildKind
{
    public string Key => "dotnet";

    public object ReadSpec(Fields f, string dir, string id)
    {
        f.AllowOnly("project", "assembly");
        var here = $"repros/{Path.GetFileName(dir)}/";
        var project = f.String("project");
        var assembly = f.StringOr("assembly", null);
        var file = Path.Combine(dir, project);
        if (!File.Exists(file)) throw f.Error($"'{project}' is not a file in {here}", "project");
        // The runner runs <assembly or id>.dll from the build output, so it must be the name the project builds.
        var (builds, why) = BuildSpec.ProjectAssemblyName(file, f);
        if (builds is not null && builds != (assembly ?? id))
            throw f.Error(assembly is null
                ? $"missing: the runner then looks for '{id}.dll', but {project} builds '{builds}' ({why}); set it to '{builds}'"
                : $"'{assembly}' is not the assembly {project} builds: it builds '{builds}' ({why})", "assembly");
        return new DotnetBuildSpec(project, assembly);
    }
}

/// <summary>build.mono: sources compiled together with mcs.</summary>
public sealed class MonoBuildKind : IBuildKind
{
    public string Key => "mono";

    public object ReadSpec(Fields f, string dir, string id)
    {
        f.AllowOnly("sources");
        var sources = f.Strings("sources");
        for (var i = 0; i < sources.Count; i++)
            if (BuildSpec.ExpandSource(dir, sources[i]).Count == 0)
                throw f.Error($"'{sources[i]}' matches no file in repros/{Path.GetFileName(dir)}/", $"sources[{i}]");
        return new MonoBuildSpec(sources);
    }
}

/// <summary>build.cmake: a CMake project whose add_executable targets are the cases' "cmake:TARGET" programs.</summary>
public sealed class CmakeBuildKind : IBuildKind
{
    public string Key => "cmake";

    public object ReadSpec(Fields f, string dir, string id)
    {
        f.AllowOnly("dir");
        var cmakeDir = f.String("dir");
        if (!File.Exists(Path.Combine(dir, cmakeDir, "CMakeLists.txt")))
            throw f.Error($"'{cmakeDir}' holds no CMakeLists.txt in repros/{Path.GetFileName(dir)}/", "dir");
        return new CmakeBuildSpec(cmakeDir);
    }
}

/// <summary>build.roslyn: {} says the cases run the shared compiler runner; nothing of the repro is built.</summary>
public sealed class RoslynBuildKind : IBuildKind
{
    public string Key => "roslyn";

    public object ReadSpec(Fields f, string dir, string id)
    {
        f.AllowOnly();
        return new RoslynBuildSpec();
    }
}
