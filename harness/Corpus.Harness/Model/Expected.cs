using Corpus.Harness.Json;

namespace Corpus.Harness.Model;

public sealed record CellKey(string Repro, string Case, string Variant, string Subject)
{
    public override string ToString() => $"{Repro}:{Case}/{Variant}/{Subject}";
}

public sealed record Expectation(CellKey Key, Outcome Outcome, string Reason, string? Reference);

/// <summary>expected/&lt;repro&gt;.json: one expected outcome per default cell, each with a reason.</summary>
public static class ExpectedFile
{
    public static string PathFor(string root, string repro) => Path.Combine(root, "expected", repro + ".json");

    public static IReadOnlyList<Expectation> Load(string file, Manifest manifest)
    {
        var f = Fields.Load(file);
        f.AllowOnly("repro", "cells");
        var repro = f.String("repro");
        if (repro != manifest.Id) throw f.Error($"'{repro}' does not match the file name's repro '{manifest.Id}'", "repro");
        var list = new List<Expectation>();
        foreach (var c in f.Objects("cells"))
        {
            c.AllowOnly("case", "variant", "subject", "outcome", "reason", "reference");
            var key = new CellKey(repro, c.String("case"), c.String("variant"), c.String("subject"));
            // An entry for a cell that does not exist would be silently ignored: it is a typo or a stale entry.
            var cs = manifest.Cases.FirstOrDefault(x => x.Id == key.Case)
                     ?? throw c.Error($"'{key.Case}' is not a case of {repro} (cases: {string.Join(", ", manifest.Cases.Select(x => x.Id))})", "case");
            if (!manifest.Variants.Contains(key.Variant))
                throw c.Error($"'{key.Variant}' is not a variant of {repro} (variants: {string.Join(", ", manifest.Variants)})", "variant");
            if (!cs.Subjects.Contains(key.Subject))
                throw c.Error($"'{key.Subject}' is not a subject of case {cs.Id} (subjects: {string.Join(", ", cs.Subjects)})", "subject");
            if (list.Any(e => e.Key == key)) throw c.Error($"duplicate entry for {key}");
            var outcome = c.Enum("outcome", Outcomes.ByName);
            // An expectation says what the cell shows; an undecided measurement is never what is expected of it.
            if (outcome == Outcome.Inconclusive) throw c.Error("'inconclusive' is no expected outcome: expect what the cell shows", "outcome");
            list.Add(new Expectation(key, outcome, c.String("reason"),
                                     c.StringOr("reference", null)));
        }
        // Defects4J's rule: a bug whose trigger is not recorded is a metadata error.
        foreach (var cs in manifest.Cases)
            foreach (var v in manifest.Variants)
                foreach (var s in cs.Subjects)
                    if (list.All(e => e.Key != new CellKey(repro, cs.Id, v, s)))
                        throw f.Error($"no expected outcome for the default cell {cs.Id}/{v}/{s}", "cells");
        return list;
    }
}
