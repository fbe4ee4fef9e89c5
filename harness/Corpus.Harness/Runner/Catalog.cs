using Corpus.Harness.Json;
using Corpus.Harness.Model;

namespace Corpus.Harness.Runner;

public sealed record Entry(Manifest Manifest, IReadOnlyList<Expectation> Expected);

/// <summary>A broken manifest or expected file; Repro is the folder it belongs to, so a run can skip just that repro.</summary>
public sealed record InputError(string Repro, string Message);

/// <summary>Every repro with its expectations. A broken file becomes an error naming the file and field; the rest still load.</summary>
public sealed record Catalog(IReadOnlyList<Entry> Entries, IReadOnlyList<InputError> InputErrors)
{
    public IReadOnlyList<string> Errors => InputErrors.Select(e => e.Message).ToList();

    public const string ManifestName = "repro.json";

    public static Catalog Load(string root, Signatures.SignatureFamilies? families = null, Subjects.SubjectKinds? kinds = null)
    {
        var entries = new List<Entry>();
        var errors = new List<InputError>();
        var repros = Path.Combine(root, "repros");
        var dirs = Directory.Exists(repros) ? Directory.GetDirectories(repros).Order(StringComparer.Ordinal).ToArray() : [];
        foreach (var dir in dirs)
        {
            var file = Path.Combine(dir, ManifestName);
            if (!File.Exists(file))
            {
                errors.Add(new(Path.GetFileName(dir), $"{Rel(root, file)}: field '(file)': every folder in repros/ needs a {ManifestName}"));
                continue;
            }
            try
            {
                var m = Manifest.Load(file, families, kinds);
                var expectedFile = ExpectedFile.PathFor(root, m.Id);
                if (!File.Exists(expectedFile))
                    throw new InputException(expectedFile, "(file)", $"missing: every repro needs expected outcomes (repro {m.Id})");
                entries.Add(new Entry(m, ExpectedFile.Load(expectedFile, m)));
            }
            catch (InputException e)
            {
                errors.Add(new(Path.GetFileName(dir), $"{Rel(root, e.File!)}: field '{e.Field}': {e.Problem}"));
            }
        }
        var known = entries.Select(e => e.Manifest.Id).ToHashSet();
        var expectedDir = Path.Combine(root, "expected");
        if (Directory.Exists(expectedDir))
            foreach (var f in Directory.GetFiles(expectedDir, "*.json").Order(StringComparer.Ordinal))
            {
                var id = Path.GetFileNameWithoutExtension(f);
                if (!known.Contains(id) && !Directory.Exists(Path.Combine(repros, id)))
                    errors.Add(new(id, $"{Rel(root, f)}: field 'repro': no folder repros/{id}"));
            }
        return new Catalog(entries, errors);
    }

    private static string Rel(string root, string path) => Path.GetRelativePath(root, Path.GetFullPath(path));
}
