using System.Text.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Runner;

/// <summary>
/// `corpus list`: the cells a `corpus run` with the same filters would run, each with its expected outcome, without
/// building or running anything (subjects are named, not probed). `--json` is for other drivers, such as the Pester
/// entry point (harness/pester/Corpus.Tests.ps1): each cell carries the arguments of the `corpus run` that runs it.
/// </summary>
public static class CellList
{
    public static int Write(string root, Filter filter, bool json, TextWriter stdout, TextWriter stderr,
                            Signatures.SignatureFamilies? families = null, SubjectKinds? kinds = null)
    {
        kinds ??= SubjectKinds.Default;
        var catalog = Catalog.Load(root, families, kinds);
        var plan = Selection.Build(catalog, filter, spec => Named(spec, root, kinds), kinds);
        var cells = plan.Cells.Select(c => new
        {
            repro = c.Entry.Manifest.Id, @case = c.Case.Id, variant = c.Variant, subject = c.Subject.Name,
            expected = c.Expected?.Outcome.Name(), reason = c.Expected?.Reason, tags = c.Case.Tags,
            args = new[] { "run", "--repro", c.Entry.Manifest.Id, "--case", c.Case.Id, "--variant", c.Variant, "--subject", c.Subject.Name },
        }).ToList();
        if (json)
            stdout.WriteLine(JsonSerializer.Serialize(new { schema = 1, cells, inputErrors = plan.Errors },
                                                      new JsonSerializerOptions { WriteIndented = true }));
        else
        {
            foreach (var c in cells)
                stdout.WriteLine($"{c.repro + ":" + c.@case,-45} {c.variant,-15} {c.subject,-11} {c.expected ?? "-"}");
            stdout.WriteLine($"{cells.Count} cells");
        }
        foreach (var e in plan.Errors) stderr.WriteLine($"INPUT ERROR {e}");
        return plan.Errors.Count == 0 ? RunExit.Ok : RunExit.InputError;
    }

    /// <summary>A subject by name and kind only: listing must not start Wine or a runtime to ask its version.</summary>
    private static Subject Named(string spec, string root, SubjectKinds kinds)
    {
        var colon = spec.IndexOf(':');
        var kind = kinds.Owner(spec) ?? (colon > 0 ? kinds.ForPrefix(spec[..colon]) : null);
        return kind is null ? kinds.Resolve(spec, root) : new Subject(spec, kind, "", null, null);
    }
}
