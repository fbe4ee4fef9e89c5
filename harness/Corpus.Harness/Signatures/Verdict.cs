using Corpus.Harness.Model;

namespace Corpus.Harness.Signatures;

/// <summary>How a family's series is plotted: power laws on log-log axes, exponential growth on a log y axis.</summary>
public enum PlotScale { None, LogLog, SemiLog }

/// <summary>
/// What a family decided about a cell, as data: the outcome, a one-line detail, typed facts (serialised into
/// facts.json), the key figures for the table, and how its series is plotted.
/// </summary>
public sealed record Verdict(Outcome Outcome, string Detail)
{
    /// <summary>A typed, serialisable record of the family's own facts (see docs/architecture.md, facts.json).</summary>
    public object? Facts { get; init; }

    /// <summary>The figures a person reads first, in the order they are shown.</summary>
    public IReadOnlyList<string> KeyFigures { get; init; } = [];

    public PlotScale Plot { get; init; }

    /// <summary>What the plot's legend says of the verdict's own curve ("slope 1.93", "×2.09 per level").</summary>
    public string? PlotLabel { get; init; }

    /// <summary>The run whose reproduction evidence is read from (a race's first hit); null for one-run families.</summary>
    public string? HitRun { get; init; }
}

public enum EvidenceStatus
{
    /// <summary>The evidence shows this bug.</summary>
    Holds,
    /// <summary>The evidence was read and does not show this bug: the failure is of another kind.</summary>
    Fails,
    /// <summary>This subject's captures cannot carry the evidence (e.g. heap facts on Mono): recorded, not judged.</summary>
    NotJudged,
    /// <summary>The capture the evidence needs broke: the harness cannot tell, so the cell is an error.</summary>
    Broken,
    /// <summary>
    /// This host cannot take the capture (gdb cannot replay here), said with the tool's own message: shown in the
    /// detail, not judged. Only for evidence outside the signature, so the verdict still rests on evidence.
    /// </summary>
    Unavailable,
    /// <summary>A measured figure still straddles its bound when its budget is spent: the cell is inconclusive.</summary>
    Undecided,
}

/// <summary>What one evidence check found: its status, a one-line detail, typed facts and key figures.</summary>
public sealed record EvidenceResult(string Key, EvidenceStatus Status, string Detail)
{
    public object? Facts { get; init; }
    public IReadOnlyList<string> KeyFigures { get; init; } = [];

    public static EvidenceResult Hold(string key, string detail, object? facts, params string[] figures) =>
        new(key, EvidenceStatus.Holds, detail) { Facts = facts, KeyFigures = figures };

    public static EvidenceResult Fail(string key, string detail, object? facts = null, params string[] figures) =>
        new(key, EvidenceStatus.Fails, detail) { Facts = facts, KeyFigures = figures };

    /// <summary>The capture this evidence needs is missing or unreadable: an error, never a verdict about the bug.</summary>
    public static EvidenceResult Broken(string key, string detail, object? facts = null, params string[] figures) =>
        new(key, EvidenceStatus.Broken, detail) { Facts = facts, KeyFigures = figures };
}
