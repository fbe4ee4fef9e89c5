using Corpus.Harness.Subjects;

namespace Corpus.Harness.Model;

/// <summary>
/// A resolved subject: the runtime whose behaviour decides the bug. Built-ins are names; a user's build is
/// kind:PATH and goes through the same kind, which is how a patched runtime gets validated.
/// </summary>
/// <param name="Unavailable">Null when usable here, otherwise why not.</param>
public sealed record Subject(string Name, ISubjectKind Kind, string Path, string? Version, string? Unavailable)
{
    public string Slug => new(Name.Select(c => char.IsLetterOrDigit(c) || c is '-' or '.' ? c : '_').ToArray());

    /// <summary>A user's build (kind:PATH), as opposed to a built-in name.</summary>
    public bool IsUsers => !Kind.Owns(Name);

    /// <summary>What this subject can do.</summary>
    public SubjectCapabilities Capabilities => Kind.Capabilities(Name);

    /// <summary>Null when this subject can run the case, otherwise the manifest field and the reason.</summary>
    public Unrunnable? Validate(CaseSpec cs) => Kind.Validate(cs, Name);

    /// <summary>The built-in names that can be listed (roslyn:VERSION is open, so it lists none).</summary>
    public static IReadOnlyList<string> BuiltIn => SubjectKinds.BuiltIns.ToList();

    public static Subject Resolve(string spec, string root) => SubjectKinds.Resolve(spec, root);

    internal static string? Which(string program) => SubjectKinds.Which(program);
}
