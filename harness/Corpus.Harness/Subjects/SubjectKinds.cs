using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>The registry of subject kinds: the only place that lists them.</summary>
public static class SubjectKinds
{
    public static readonly IReadOnlyList<ISubjectKind> All =
        [new MonoKind(), new CoreClrKind(), new NativeKind(), new SanitizerKind(), new WineKind(), new WineDotnetKind(),
         new RoslynKind()];

    /// <summary>The built-in names that can be listed; an open kind (roslyn:VERSION) adds none.</summary>
    public static IEnumerable<string> BuiltIns => All.SelectMany(k => k.BuiltIns);

    /// <summary>Every built-in as written, for messages: the names and the open forms.</summary>
    public static IEnumerable<string> BuiltInForms => All.SelectMany(k => k.BuiltInForms);

    /// <summary>The kind a built-in name belongs to; null for a name no kind owns.</summary>
    public static ISubjectKind? Owner(string name) => All.FirstOrDefault(k => k.Owns(name));

    public static bool IsBuiltIn(string name) => Owner(name) is not null;

    /// <summary>What a built-in subject can do; None for a name no kind owns.</summary>
    public static SubjectCapabilities Capabilities(string name) => Owner(name)?.Capabilities(name) ?? SubjectCapabilities.None;

    /// <summary>Null when the built-in subject can run the case, else the field and reason (an unknown name is the manifest's own error).</summary>
    public static Unrunnable? Validate(CaseSpec cs, string name) => Owner(name)?.Validate(cs, name);

    /// <summary>The built-ins with a capability, as written, for messages.</summary>
    public static string Having(SubjectCapabilities capability) =>
        string.Join(", ", All.SelectMany(k => k.BuiltInForms.Where(n => k.Capabilities(n).HasFlag(capability)))) is { Length: > 0 } names ? names : "none";

    /// <summary>A built-in name or kind:PATH; an ArgumentException for a spec that names no kind.</summary>
    public static Subject Resolve(string spec, string root, IReadOnlyList<ISubjectKind>? kinds = null)
    {
        kinds ??= All;
        foreach (var k in kinds)
            if (k.Owns(spec)) return k.Resolve(spec, null, root);
        var colon = spec.IndexOf(':');
        if (colon <= 0)
            throw new ArgumentException($"unknown subject '{spec}': use one of {string.Join(", ", kinds.SelectMany(k => k.BuiltInForms))}, "
                                        + $"or {string.Join(", ", kinds.SelectMany(k => k.UserPrefixes.Take(1).Select(p => $"{p}:PATH ({k.UserPathMeaning})")))}");
        var prefix = spec[..colon];
        var kind = kinds.FirstOrDefault(k => k.UserPrefixes.Contains(prefix))
                   ?? throw new ArgumentException($"unknown subject kind '{prefix}' in '{spec}': use "
                                                  + string.Join(" or ", kinds.SelectMany(k => k.UserPrefixes.Take(1))));
        var path = spec[(colon + 1)..];
        if (path.Trim().Length == 0) throw new ArgumentException($"subject '{spec}': the path after '{prefix}:' is empty");
        return kind.Resolve(spec, Path.GetFullPath(path), root);
    }

    /// <summary>The program on PATH; on Windows also with .exe (Windows PATH entries are separated by ';').</summary>
    internal static string? Which(string program) =>
        (Environment.GetEnvironmentVariable("PATH") ?? "").Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
        .SelectMany(d => OperatingSystem.IsWindows() && !program.EndsWith(".exe") ? [Path.Combine(d, program + ".exe")] : new[] { Path.Combine(d, program) })
        .FirstOrDefault(File.Exists);
}
