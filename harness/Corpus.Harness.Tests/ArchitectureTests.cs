using System.Text.RegularExpressions;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// The extension points stay open: code outside a part's own folder asks the part's interface, never one of its
/// classes by name. Checked on the sources, so a new class is covered as soon as it exists.
/// </summary>
public sealed class ArchitectureTests
{
    private static readonly string Harness = Path.Combine(RoslynTriggerTests.Root, "harness");

    /// <summary>Every class that implements an interface, found in the harness assembly (abstract bases too).</summary>
    internal static IReadOnlyList<Type> Implementations(Type contract) =>
        contract.Assembly.GetTypes().Where(t => t.IsClass && contract.IsAssignableFrom(t)).ToList();

    /// <summary>
    /// "file:line: Name" for each use of one of the types' names in a harness source outside ownFolder (relative to
    /// harness/). Test projects are left out: tests of a part name its classes.
    /// </summary>
    internal static IReadOnlyList<string> NamedOutside(IReadOnlyList<Type> types, string ownFolder)
    {
        Assert.NotEmpty(types);
        var own = Path.GetFullPath(Path.Combine(Harness, ownFolder)) + Path.DirectorySeparatorChar;
        Assert.True(Directory.Exists(own), $"no folder {own}");
        var name = new Regex($@"\b({string.Join("|", types.Select(t => Regex.Escape(t.Name)))})\b");
        var found = new List<string>();
        foreach (var file in Directory.EnumerateFiles(Harness, "*.cs", SearchOption.AllDirectories))
        {
            var rel = Path.GetRelativePath(Harness, file);
            var parts = rel.Split(Path.DirectorySeparatorChar);
            if (file.StartsWith(own) || parts[0].EndsWith(".Tests") || parts.Contains("obj") || parts.Contains("bin")) continue;
            var lines = File.ReadAllLines(file);
            for (var i = 0; i < lines.Length; i++)
                foreach (Match m in name.Matches(lines[i]))
                    found.Add($"harness/{rel.Replace('\\', '/')}:{i + 1}: {m.Value}");
        }
        return found;
    }

    [Fact]
    public void NoCodeOutsideSubjectsNamesAConcreteSubjectKind()
    {
        var kinds = Implementations(typeof(ISubjectKind));
        Assert.Contains(typeof(WineKindBase), kinds);
        Assert.True(kinds.Count >= SubjectKinds.Default.All.Count);
        Assert.Equal([], NamedOutside(kinds, Path.Combine("Corpus.Harness", "Subjects")));
    }

    [Fact]
    public void TheCheckFindsANameOutsideItsFolder()
    {
        // The check itself must be able to fail: the subject kinds are named in Subjects/, so from any other folder they are found.
        var found = NamedOutside(Implementations(typeof(ISubjectKind)), Path.Combine("Corpus.Harness", "Runner"));
        Assert.Contains(found, f => f.StartsWith("harness/Corpus.Harness/Subjects/SubjectKinds.cs:") && f.EndsWith(": MonoKind"));
    }

    /// <summary>
    /// "file:line" of each question to the operating system (OperatingSystem.IsWindows/IsLinux) in the harness's
    /// sources outside the seams that own the difference: an interface that chooses its side (IHost, IRunPlatform,
    /// ILeakMeter), and the Windows or Linux side itself (a file named Windows… or Linux…).
    /// </summary>
    internal static IReadOnlyList<string> OperatingSystemAskedOutsideASeam(string folder)
    {
        string[] choosers = ["IHost.cs", "IRunPlatform.cs", "ILeakMeter.cs"];
        return LinesMatching(folder, new Regex(@"\bOperatingSystem\.Is(Windows|Linux)\(\)"),
                             (name, _) => choosers.Contains(name) || name.StartsWith("Windows") || name.StartsWith("Linux"));
    }

    /// <summary>"file:line" of each uncommented source line under <paramref name="folder"/> that matches
    /// <paramref name="pattern"/>; obj, bin and the files <paramref name="skip"/> names (by file name and relative
    /// path's parts) are left out.</summary>
    private static IReadOnlyList<string> LinesMatching(string folder, Regex pattern, Func<string, string[], bool> skip)
    {
        var found = new List<string>();
        foreach (var file in Directory.EnumerateFiles(folder, "*.cs", SearchOption.AllDirectories))
        {
            var name = Path.GetFileName(file);
            var parts = Path.GetRelativePath(folder, file).Split(Path.DirectorySeparatorChar);
            if (parts.Any(p => p is "obj" or "bin") || skip(name, parts)) continue;
            var lines = File.ReadAllLines(file);
            for (var i = 0; i < lines.Length; i++)
                if (pattern.IsMatch(lines[i]) && !lines[i].TrimStart().StartsWith("//")) found.Add($"{name}:{i + 1}");
        }
        return found;
    }

    [Fact]
    public void OnlyTheSeamsAskWhichOperatingSystemThisIs()
    {
        Assert.Equal([], OperatingSystemAskedOutsideASeam(Path.Combine(Harness, "Corpus.Harness")));
        // And the check can fail: a planted question in a file of no seam is found.
        var dir = Directory.CreateTempSubdirectory("corpus-seam-check-").FullName;
        try
        {
            File.WriteAllText(Path.Combine(dir, "Runner.cs"), "class R { bool W => OperatingSystem.IsWindows(); }\n");
            File.WriteAllText(Path.Combine(dir, "WindowsThing.cs"), "class T { bool W => OperatingSystem.IsWindows(); }\n");
            Assert.Equal(["Runner.cs:1"], OperatingSystemAskedOutsideASeam(dir));
        }
        finally { Directory.Delete(dir, recursive: true); }
    }

    /// <summary>Most lines a harness source may have: a file past it holds more than one part, which a reader then has
    /// to tell apart.</summary>
    internal const int MaxSourceLines = 350;

    /// <summary>"file: N lines" of each source under <paramref name="folder"/> (tests, obj and bin left out) longer than
    /// <see cref="MaxSourceLines"/>.</summary>
    internal static IReadOnlyList<string> LongSources(string folder) =>
        Directory.EnumerateFiles(folder, "*.cs", SearchOption.AllDirectories)
                 .Select(f => (Rel: Path.GetRelativePath(folder, f), Lines: File.ReadLines(f).Count()))
                 .Where(f => f.Lines > MaxSourceLines
                             && !f.Rel.Split(Path.DirectorySeparatorChar).Any(p => p is "obj" or "bin" || p.EndsWith(".Tests")))
                 .Select(f => $"{f.Rel}: {f.Lines} lines").Order().ToList();

    [Fact]
    public void NoHarnessSourceIsLongerThanItsBound()
    {
        Assert.Equal([], LongSources(Harness));
        // And the check can fail: a planted long file is found, one in a test project is not.
        var dir = Directory.CreateTempSubdirectory("corpus-length-check-").FullName;
        try
        {
            Directory.CreateDirectory(Path.Combine(dir, "Part.Tests"));
            var body = string.Concat(Enumerable.Repeat("//\n", MaxSourceLines + 1));
            File.WriteAllText(Path.Combine(dir, "Long.cs"), body);
            File.WriteAllText(Path.Combine(dir, "Part.Tests", "LongTests.cs"), body);
            File.WriteAllText(Path.Combine(dir, "Short.cs"), string.Concat(Enumerable.Repeat("//\n", MaxSourceLines)));
            Assert.Equal([$"Long.cs: {MaxSourceLines + 1} lines"], LongSources(dir));
        }
        finally { Directory.Delete(dir, recursive: true); }
    }

    /// <summary>"file:line" of each index into a metrics table by a string in the harness's sources (tests, obj and bin
    /// left out). Results are typed facts; a program's METRIC numbers are <see cref="Runner.ProgramMetrics"/>, asked
    /// by the names a manifest declares. (Plug-ins' manifest blocks are keyed by the plug-in's key: not results.)</summary>
    internal static IReadOnlyList<string> StringKeyedResults(string folder) =>
        LinesMatching(folder, new Regex(@"\bMetrics\s*\["), (_, parts) => parts.Any(p => p.EndsWith(".Tests")));

    [Fact]
    public void NoResultIsKeptUnderAStringKey()
    {
        Assert.Equal([], StringKeyedResults(Harness));
        // And the check can fail: a planted index is found, a typed lookup is not.
        var dir = Directory.CreateTempSubdirectory("corpus-keyed-check-").FullName;
        try
        {
            File.WriteAllText(Path.Combine(dir, "Family.cs"), "class F {\n var a = run.Metrics[\"x\"];\n var b = run.Metrics.TryGet(name, out var v);\n}\n");
            Assert.Equal(["Family.cs:2"], StringKeyedResults(dir));
        }
        finally { Directory.Delete(dir, recursive: true); }
    }
}
