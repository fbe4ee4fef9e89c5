using Corpus.Harness.Containment;
using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>
/// The subject kinds of one corpus run: the one source the manifest reader, selection, the runner, bisect and the
/// command line's help all use. <see cref="Default"/> holds the built-ins (the only list of them); a test or a
/// plug-in adds its own with <see cref="With"/>.
/// </summary>
public sealed class SubjectKinds
{
    public static readonly SubjectKinds Default = new(
        [new MonoKind(), new CoreClrKind(), new NativeKind(), new SanitizerKind(), new WineKind(), new WineDotnetKind(),
         new RoslynKind()]);

    public IReadOnlyList<ISubjectKind> All { get; }

    /// <summary>
    /// Refuses two kinds that would answer for the same words: a kind's name and its KIND:PATH prefixes are its own,
    /// and a built-in name belongs to one kind only.
    /// </summary>
    public SubjectKinds(IReadOnlyList<ISubjectKind> kinds)
    {
        for (var i = 0; i < kinds.Count; i++)
            for (var j = 0; j < i; j++)
            {
                var (earlier, kind) = (kinds[j], kinds[i]);
                if (kind.UserPrefixes.Prepend(kind.Name).Intersect(earlier.UserPrefixes.Prepend(earlier.Name)).FirstOrDefault() is { } word)
                    throw new ArgumentException($"subject kinds '{earlier.Name}' and '{kind.Name}' both answer to '{word}'");
                if ((kind.BuiltIns.FirstOrDefault(earlier.Owns) ?? earlier.BuiltIns.FirstOrDefault(kind.Owns)) is { } name)
                    throw new ArgumentException($"subject kinds '{earlier.Name}' and '{kind.Name}' both own the built-in subject '{name}'");
            }
        All = kinds;
    }

    /// <summary>These kinds and one more; an ArgumentException when it would answer for a name or prefix one of them has.</summary>
    public SubjectKinds With(ISubjectKind kind) => new([.. All, kind]);

    /// <summary>The subject with what its cells need built (<see cref="ISubjectKind.Provision"/>), or unavailable saying why not.</summary>
    public static Subject Provisioned(Subject s, string root) =>
        s.Unavailable is null ? s.Kind.Provisioned(s, root) : s;

    /// <summary>The built-in names that can be listed; an open kind (roslyn:VERSION) adds none.</summary>
    public IEnumerable<string> BuiltIns => All.SelectMany(k => k.BuiltIns);

    /// <summary>Every built-in as written, for messages: the names and the open forms.</summary>
    public IEnumerable<string> BuiltInForms => All.SelectMany(k => k.BuiltInForms);

    /// <summary>The kind a built-in name belongs to; null for a name no kind owns.</summary>
    public ISubjectKind? Owner(string name) => All.FirstOrDefault(k => k.Owns(name));

    /// <summary>The kind that takes a user's build as PREFIX:PATH; null for a prefix no kind takes.</summary>
    public ISubjectKind? ForPrefix(string prefix) => All.FirstOrDefault(k => k.UserPrefixes.Contains(prefix));

    public bool IsBuiltIn(string name) => Owner(name) is not null;

    /// <summary>What a built-in subject can do; None for a name no kind owns.</summary>
    public SubjectCapabilities Capabilities(string name) => Owner(name)?.Capabilities(name) ?? SubjectCapabilities.None;

    /// <summary>Null when the built-in subject can run the case, else the field and reason (an unknown name is the manifest's own error).</summary>
    public Unrunnable? Validate(CaseSpec cs, string name) => Owner(name)?.Validate(cs, name, this);

    /// <summary>The built-ins with a capability, as written, for messages.</summary>
    public string Having(SubjectCapabilities capability) =>
        string.Join(", ", All.SelectMany(k => k.BuiltInForms.Where(n => k.Capabilities(n).HasFlag(capability)))) is { Length: > 0 } names ? names : "none";

    /// <summary>A built-in name or kind:PATH; an ArgumentException for a spec that names no kind.</summary>
    public Subject Resolve(string spec, string root)
    {
        if (Owner(spec) is { } owner) return owner.Resolve(spec, null, root);
        var colon = spec.IndexOf(':');
        if (colon <= 0)
            throw new ArgumentException($"unknown subject '{spec}': use one of {string.Join(", ", BuiltInForms)}, "
                                        + $"or {string.Join(", ", All.SelectMany(k => k.UserPrefixes.Take(1).Select(p => $"{p}:PATH ({k.UserPathMeaning})")))}");
        var prefix = spec[..colon];
        var kind = ForPrefix(prefix)
                   ?? throw new ArgumentException($"unknown subject kind '{prefix}' in '{spec}': use "
                                                  + string.Join(" or ", All.SelectMany(k => k.UserPrefixes.Take(1))));
        var path = spec[(colon + 1)..];
        if (path.Trim().Length == 0) throw new ArgumentException($"subject '{spec}': the path after '{prefix}:' is empty");
        return kind.Resolve(spec, Path.GetFullPath(path), root);
    }

    /// <summary>The program on PATH; on Windows also with .exe (Windows PATH entries are separated by ';').</summary>
    internal static string? Which(string program) =>
        (Environment.GetEnvironmentVariable("PATH") ?? "").Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
        .Select(d => Path.Combine(d, IHost.Current.Executable(program)))
        .FirstOrDefault(File.Exists);
}
