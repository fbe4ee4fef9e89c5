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

    /// <summary>Null when this subject can run the case, otherwise the manifest field and the reason (naming the built-ins of <paramref name="kinds"/> that can).</summary>
    public Unrunnable? Validate(CaseSpec cs, SubjectKinds kinds) => Kind.Validate(cs, Name, kinds);

    internal static string? Which(string program) => SubjectKinds.Which(program);
}
