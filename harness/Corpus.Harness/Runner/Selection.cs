using Corpus.Harness.Json;
using Corpus.Harness.Model;

namespace Corpus.Harness.Runner;

/// <summary>A selection or subject that cannot be run as given: exit 2, with the reason and without the usage text.</summary>

/// <summary>What `corpus run` was asked for; empty lists mean "all" (or, for subjects, each case's defaults).</summary>
public sealed record Filter(IReadOnlyList<string> Repros, IReadOnlyList<string> Cases, IReadOnlyList<string> Variants,
                            IReadOnlyList<string> Subjects, IReadOnlyList<string> ExcludeTags);

public sealed record PlannedCell(Entry Entry, CaseSpec Case, string Variant, Subject Subject, Expectation? Expected);

/// <param name="Errors">Input errors of the selected repros: reported, and those repros skipped.</param>
/// <param name="OtherErrors">How many input errors belong to repros that were not selected.</param>
public sealed record Plan(IReadOnlyList<PlannedCell> Cells, IReadOnlyList<string> Errors, int OtherErrors);

/// <summary>Turns a filter into cells. Every name given must match something, and the error says which did not.</summary>
public static class Selection
{
    /// <param name="kinds">The run's subject kinds: a --subject's reason for a case it cannot run names their built-ins that can.</param>
    public static Plan Build(Catalog catalog, Filter filter, Func<string, Subject> resolve, Subjects.SubjectKinds kinds)
    {
        var explicitRepros = filter.Repros.Count > 0;
        var errors = catalog.InputErrors.Where(e => !explicitRepros || filter.Repros.Contains(e.Repro)).Select(e => e.Message).ToList();
        // The selected repros' input errors go with any selection error: one of them may hold the missing name.
        InputException Fail(string message) =>
            new(string.Join("\n", errors.Select(e => $"INPUT ERROR {e}").Prepend(message)));
        var unknown = filter.Repros.Where(r => catalog.Entries.All(e => e.Manifest.Id != r)
                                               && catalog.InputErrors.All(e => e.Repro != r)).ToList();
        if (unknown.Count > 0)
            throw Fail($"no repro {Quote(unknown)} (repros: {string.Join(", ", AllRepros(catalog))})");
        var others = catalog.InputErrors.Count - errors.Count;
        var selected = catalog.Entries.Where(e => !explicitRepros || filter.Repros.Contains(e.Manifest.Id)).ToList();
        foreach (var dup in filter.Subjects.GroupBy(x => x).Where(g => g.Count() > 1))
            throw Fail($"--subject: '{dup.Key}' is given twice, which would run every cell twice");
        // Resolve --subject before anything else, so an unusable one stops the run before it starts.
        var given = filter.Subjects.Select(resolve).ToList();

        var allTags = catalog.Entries.SelectMany(e => e.Manifest.Cases).SelectMany(c => c.Tags).Distinct().Order().ToList();
        foreach (var tag in filter.ExcludeTags.Where(t => !allTags.Contains(t)))
            throw Fail($"--exclude-tag: no case has the tag '{tag}' (tags: {Names(allTags)})");
        if (selected.Count > 0)
        {
            foreach (var c in filter.Cases.Where(c => selected.All(e => e.Manifest.Cases.All(x => x.Id != c))))
                throw Fail($"no case '{c}' in {Where(selected)} ({Listing(selected, "cases", m => m.Cases.Select(x => x.Id))})");
            foreach (var v in filter.Variants.Where(v => selected.All(e => !e.Manifest.Variants.Contains(v))))
                throw Fail($"no variant '{v}' in {Where(selected)} ({Listing(selected, "variants", m => m.Variants)})");
        }

        var cells = new List<PlannedCell>();
        var misses = new List<string>();
        var keptCases = new List<KeyValuePair<string, CaseSpec>>();
        foreach (var entry in selected)
        {
            var m = entry.Manifest;
            var cases = m.Cases.Where(c => filter.Cases.Count == 0 || filter.Cases.Contains(c.Id)).ToList();
            var kept = cases.Where(c => !c.Tags.Intersect(filter.ExcludeTags).Any()).ToList();
            var variants = m.Variants.Where(v => filter.Variants.Count == 0 || filter.Variants.Contains(v)).ToList();
            if (cases.Count == 0)
                misses.Add($"no case {Quote(filter.Cases)} in {m.Id} (cases: {Names(m.Cases.Select(c => c.Id))})");
            else if (kept.Count == 0)
                misses.Add($"every selected case of {m.Id} ({Names(cases.Select(c => c.Id))}) has a tag excluded by --exclude-tag {Names(filter.ExcludeTags)}");
            else if (variants.Count == 0)
                misses.Add($"no variant {Quote(filter.Variants)} in {m.Id} (variants: {Names(m.Variants)})");
            foreach (var cs in kept)
            {
                // A subject given on the command line runs the cases it can run (the subject's Validate, which
                // CellRunner enforces too), so a CoreCLR build is not failed by a repro's C++ cases.
                var subjects = given.Count > 0 ? given.Where(s => s.Validate(cs, kinds) is null).ToList() : cs.Subjects.Select(resolve).ToList();
                keptCases.Add(new($"{m.Id}:{cs.Id}", cs));
                foreach (var v in variants)
                    foreach (var s in subjects)
                        cells.Add(new(entry, cs, v, s, entry.Expected.FirstOrDefault(e => e.Key == new CellKey(m.Id, cs.Id, v, s.Name))));
            }
        }
        foreach (var s in given.Where(s => cells.All(c => c.Subject != s) && misses.Count == 0 && selected.Count > 0))
            throw Fail($"--subject: {s.Name} can run none of the selected cases ({string.Join(", ", keptCases.Select(k => k.Key))}): "
                       + string.Join("; ", keptCases.Select(k => s.Validate(k.Value, kinds)?.Reason).OfType<string>().Distinct()));
        // A repro named on the command line that gives no cell is a typo in one of the other filters.
        if (misses.Count > 0 && (explicitRepros || cells.Count == 0))
            throw Fail(string.Join("; ", misses));
        if (cells.Count == 0 && errors.Count == 0) throw Fail("the selection matches no cell");
        return new Plan(cells, errors, others);
    }

    private static IEnumerable<string> AllRepros(Catalog c) =>
        c.Entries.Select(e => e.Manifest.Id).Concat(c.InputErrors.Select(e => e.Repro)).Distinct().Order(StringComparer.Ordinal);

    private static string Where(IReadOnlyList<Entry> selected) =>
        selected.Count == 1 ? selected[0].Manifest.Id : "any selected repro";

    private static string Listing(IReadOnlyList<Entry> selected, string what, Func<Manifest, IEnumerable<string>> names) =>
        selected.Count == 1 ? $"{what}: {Names(names(selected[0].Manifest))}"
            : string.Join("; ", selected.Select(e => $"{e.Manifest.Id}: {Names(names(e.Manifest))}"));

    private static string Names(IEnumerable<string> names) => names.Any() ? string.Join(", ", names) : "none";

    private static string Quote(IEnumerable<string> names) => string.Join(", ", names.Select(n => $"'{n}'"));
}

/// <summary>The exit code of `corpus run`.</summary>
public static class RunExit
{
    public const int Ok = 0, Differs = 1, InputError = 2;

    /// <summary>The disk the run writes to filled up: the run stops, with no verdict (every later cell would fail to
    /// write its records too).</summary>
    public const int DiskFull = 3;

    /// <summary>
    /// A cell fails the run when it differs from expected/, or, with no expectation (a user's subject), when it did
    /// not end reproduced or clean: an error or an unsupported subject must not pass a patch-validation job.
    /// </summary>
    public static bool Fails(CellResult c) =>
        c.Gate.Fails()
        || (c.Gate == GateStatus.Unchecked && c.Expected is null && c.Outcome is not (Outcome.Reproduced or Outcome.Clean));

    public static int Code(IEnumerable<CellResult> cells, int inputErrors) =>
        inputErrors > 0 ? InputError : cells.Any(Fails) ? Differs : Ok;
}
