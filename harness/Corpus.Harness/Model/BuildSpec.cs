using Corpus.Harness.Json;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Model;

/// <summary>How to build the repro for each kind of subject.</summary>
public sealed partial record BuildSpec(string? DotnetProject, string? Assembly, IReadOnlyList<string> MonoSources, string? CmakeDir)
{
    /// <summary>Reads the build and checks that every path, glob and name in it resolves in the repro's folder.</summary>
    public static BuildSpec Read(Fields f, string dir, string id)
    {
        f.AllowOnly("dotnet", "mono", "cmake", "roslyn");
        var dotnet = f.ObjectOr("dotnet");
        dotnet?.AllowOnly("project", "assembly");
        var mono = f.ObjectOr("mono");
        mono?.AllowOnly("sources");
        var cmake = f.ObjectOr("cmake");
        cmake?.AllowOnly("dir");
        // roslyn: {} says the cases run the shared compiler runner ("program": "roslyn"); nothing of the repro is built.
        var roslyn = f.ObjectOr("roslyn");
        roslyn?.AllowOnly();
        if (dotnet is null && mono is null && cmake is null && roslyn is null)
            throw f.Error("needs at least one of 'dotnet', 'mono', 'cmake' or 'roslyn'");
        var here = $"repros/{Path.GetFileName(dir)}/";
        var project = dotnet?.String("project");
        var assembly = dotnet?.StringOr("assembly", null);
        if (dotnet is not null && project is not null)
        {
            var file = Path.Combine(dir, project);
            if (!File.Exists(file)) throw dotnet.Error($"'{project}' is not a file in {here}", "project");
            // The runner runs <assembly or id>.dll from the build output, so it must be the name the project builds.
            var (builds, why) = ProjectAssemblyName(file, dotnet);
            if (builds is not null && builds != (assembly ?? id))
                throw dotnet.Error(assembly is null
                    ? $"missing: the runner then looks for '{id}.dll', but {project} builds '{builds}' ({why}); set it to '{builds}'"
                    : $"'{assembly}' is not the assembly {project} builds: it builds '{builds}' ({why})", "assembly");
        }
        var sources = mono?.Strings("sources") ?? [];
        for (var i = 0; i < sources.Count; i++)
            if (ExpandSource(dir, sources[i]).Count == 0)
                throw mono!.Error($"'{sources[i]}' matches no file in {here}", $"sources[{i}]");
        var cmakeDir = cmake?.String("dir");
        if (cmakeDir is not null && !File.Exists(Path.Combine(dir, cmakeDir, "CMakeLists.txt")))
            throw cmake!.Error($"'{cmakeDir}' holds no CMakeLists.txt in {here}", "dir");
        return new BuildSpec(project, assembly, sources, cmakeDir);
    }

    /// <summary>The files a sources glob names, expanded as the Builder does: a folder, then a file pattern.</summary>
    public static IReadOnlyList<string> ExpandSource(string dir, string pattern)
    {
        var folder = Path.GetFullPath(Path.Combine(dir, Path.GetDirectoryName(pattern) ?? ""));
        return Directory.Exists(folder) ? Directory.GetFiles(folder, Path.GetFileName(pattern)) : [];
    }

    /// <summary>The project's &lt;AssemblyName&gt;, or its file name; null when a condition or property makes it unknowable here.</summary>
    private static (string? Name, string Why) ProjectAssemblyName(string file, Fields f)
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
