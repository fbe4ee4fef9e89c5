using System.Reflection;
using System.Text.RegularExpressions;

namespace Corpus.Harness.Tests;

/// <summary>
/// What a page of docs names that does not exist: links (files and their #anchors), repository paths in code spans,
/// `make TARGET`s, `Type.Member`s of the harness, and CamelCase names that are neither the corpus's code nor listed
/// as another project's (<see cref="NotOursFile"/>). Each finding is "page:line: what".
/// </summary>
public sealed partial class DocsCheck
{
    /// <summary>Names the docs may use that are other projects' (an API of a bug, a Pester keyword), one a line.</summary>
    public const string NotOursFile = "docs/names-not-ours.txt";

    private readonly string _root;
    private readonly HashSet<string> _targets;
    private readonly Dictionary<string, Type[]> _types;
    private readonly HashSet<string> _members;
    private readonly HashSet<string> _notOurs;
    private readonly Lazy<HashSet<string>> _sourceWords;

    public DocsCheck(string root, IEnumerable<Assembly> assemblies)
    {
        _root = root;
        _targets = [.. File.ReadAllLines(Path.Combine(root, "Makefile"))
                        .Select(l => MakeRule().Match(l)).Where(m => m.Success).SelectMany(m => m.Groups[1].Value.Split(' ', StringSplitOptions.RemoveEmptyEntries))];
        var types = assemblies.SelectMany(a => a.GetTypes()).Where(t => !t.Name.StartsWith('<')).ToList();
        _types = types.GroupBy(TypeName).ToDictionary(g => g.Key, g => g.ToArray());
        _members = [.. types.SelectMany(t => MembersOf(t))];
        var notOurs = Path.Combine(root, NotOursFile);
        _notOurs = File.Exists(notOurs)
            ? [.. File.ReadAllLines(notOurs).Select(l => l.Trim()).Where(l => l.Length > 0 && !l.StartsWith('#'))] : [];
        _sourceWords = new(() => SourceWords(root));
    }

    /// <summary>The pages checked: README.md and every page under docs/.</summary>
    public static IEnumerable<string> Pages(string root) =>
        Directory.EnumerateFiles(Path.Combine(root, "docs"), "*.md", SearchOption.AllDirectories).Append(Path.Combine(root, "README.md")).Order();

    public IReadOnlyList<string> Check(string page) => Check(page, File.ReadAllLines(page));

    public IReadOnlyList<string> Check(string page, IReadOnlyList<string> lines)
    {
        var found = new List<string>();
        var rel = Path.GetRelativePath(_root, page).Replace('\\', '/');
        // A lab's prose is about the bug's own code (its APIs, the write-up's frames): its names are not checked.
        var names = !rel.StartsWith("docs/labs/", StringComparison.Ordinal);
        var fenced = false;
        for (var i = 0; i < lines.Count; i++)
        {
            var line = lines[i];
            if (line.TrimStart().StartsWith("```", StringComparison.Ordinal)) { fenced = !fenced; continue; }
            void Stale(string what) => found.Add($"{rel}:{i + 1}: {what}");
            foreach (Match m in Link().Matches(line))
                if (LinkProblem(page, lines, m.Groups[1].Value) is { } why) Stale(why);
            if (fenced) continue;
            foreach (Match m in CodeSpan().Matches(line))
            {
                var span = m.Groups[1].Value.Trim();
                if (MakeCall().Match(span) is { Success: true } make && !_targets.Contains(make.Groups[1].Value))
                    Stale($"`make {make.Groups[1].Value}`: no such target in the Makefile");
                else if (PathProblem(span) is { } why) Stale(why);
                else if (names && NameProblem(span) is { } stale) Stale(stale);
            }
        }
        return found;
    }

    private string? LinkProblem(string page, IReadOnlyList<string> lines, string target)
    {
        if (target.Contains("://") || target.StartsWith("mailto:", StringComparison.Ordinal)) return null;
        var hash = target.IndexOf('#');
        var file = hash < 0 ? target : target[..hash];
        var anchor = hash < 0 ? null : target[(hash + 1)..];
        var path = file.Length == 0 ? page : Path.GetFullPath(Path.Combine(Path.GetDirectoryName(page)!, Uri.UnescapeDataString(file)));
        if (file.Length > 0 && !File.Exists(path) && !Directory.Exists(path)) return $"link ({target}): no file {file}";
        if (anchor is null || !path.EndsWith(".md", StringComparison.Ordinal)) return null;
        var heads = Anchors(path == page ? lines : File.ReadAllLines(path));
        return heads.Contains(anchor) ? null : $"link ({target}): {file}{(file.Length == 0 ? "this page" : "")} has no heading #{anchor}";
    }

    /// <summary>A path in a code span whose first folder is one of the repository's own: it must exist.</summary>
    private string? PathProblem(string span)
    {
        var path = LineSuffix().Replace(span, "");
        if (!RepoPath().IsMatch(path) || Placeholder().IsMatch(path)) return null;
        var first = path.Split('/')[0];
        if (first is "build" or "artifacts" or ".cache" or "." or ".." || !Exists(first)) return null;
        return Exists(path.TrimEnd('/')) ? null : $"`{span}`: no such file or folder";
    }

    private bool Exists(string rel) => File.Exists(Path.Combine(_root, rel)) || Directory.Exists(Path.Combine(_root, rel));

    private string? NameProblem(string span)
    {
        var name = span.EndsWith("()", StringComparison.Ordinal) ? span[..^2] : span;
        if (!CamelName().IsMatch(name) || FileName().IsMatch(name)) return null;
        var parts = name.Split('.');
        if (_types.TryGetValue(parts[0], out var types))
        {
            if (parts.Length == 1) return null;
            return types.Any(t => MembersOf(t).Contains(parts[1])) ? null : $"`{span}`: {parts[0]} has no member {parts[1]}";
        }
        if (_members.Contains(parts[0]) || _notOurs.Contains(parts[0]) || _notOurs.Contains(name)) return null;
        // Another project's name the corpus's own sources use (a repro calls the API, a test names the frame).
        return _sourceWords.Value.Contains(parts[0]) ? null
            : $"`{span}`: no type or member of that name in the corpus's code (another project's name goes in {NotOursFile})";
    }

    private static string TypeName(Type t) => t.Name.Split('`')[0];

    private static IEnumerable<string> MembersOf(Type t)
    {
        const BindingFlags all = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static;
        var own = t.GetMembers(all).Select(m => m.Name.Split('`')[0]);
        // An interface's members are its and those of the interfaces it extends.
        return own.Concat(t.GetInterfaces().SelectMany(i => i.GetMembers(all).Select(m => m.Name)));
    }

    /// <summary>GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered.</summary>
    public static HashSet<string> Anchors(IReadOnlyList<string> lines)
    {
        var seen = new Dictionary<string, int>();
        var anchors = new HashSet<string>();
        var fenced = false;
        foreach (var line in lines)
        {
            if (line.TrimStart().StartsWith("```", StringComparison.Ordinal)) fenced = !fenced;
            if (fenced || Heading().Match(line) is not { Success: true } h) continue;
            var slug = new string(h.Groups[1].Value.Trim().ToLowerInvariant()
                .Where(c => char.IsLetterOrDigit(c) || c is ' ' or '-' or '_').ToArray()).Replace(' ', '-');
            var n = seen.GetValueOrDefault(slug);
            seen[slug] = n + 1;
            anchors.Add(n == 0 ? slug : $"{slug}-{n}");
        }
        return anchors;
    }

    private static HashSet<string> SourceWords(string root)
    {
        string[] kinds = ["*.cs", "*.cpp", "*.h", "*.c", "*.py", "*.ps1", "*.psm1", "*.sh", "*.reg", "*.json"];
        var words = new HashSet<string>();
        foreach (var top in new[] { "harness", "repros", "ci" })
            foreach (var kind in kinds)
                foreach (var file in Directory.EnumerateFiles(Path.Combine(root, top), kind, SearchOption.AllDirectories))
                {
                    var parts = file.Split(Path.DirectorySeparatorChar);
                    // The check's own tests plant stale names: they are not the corpus's code.
                    if (parts.Contains("obj") || parts.Contains("bin") || parts[^1].StartsWith("DocsCheck", StringComparison.Ordinal)) continue;
                    foreach (Match m in Word().Matches(File.ReadAllText(file))) words.Add(m.Value);
                }
        return words;
    }

    [GeneratedRegex(@"^([A-Za-z0-9_.-][A-Za-z0-9_. -]*?)\s*:(?!=)")]
    private static partial Regex MakeRule();
    [GeneratedRegex(@"^make\s+([a-z][a-z0-9-]*)")]
    private static partial Regex MakeCall();
    [GeneratedRegex(@"\]\(([^)\s]+)\)")]
    private static partial Regex Link();
    [GeneratedRegex(@"`([^`]+)`")]
    private static partial Regex CodeSpan();
    [GeneratedRegex(@"^(\.?[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]*$|^(Makefile|corpus\.slnx)$")]
    private static partial Regex RepoPath();
    [GeneratedRegex(@":\d+(-\d+)?$")]
    private static partial Regex LineSuffix();
    // Written forms, not files: <id>, {n}, globs, VERSION, ID, PATH, N.
    [GeneratedRegex(@"[<>{}*…$|]|(^|/)[A-Z][A-Z0-9_]*(\.|/|$)")]
    private static partial Regex Placeholder();
    [GeneratedRegex(@"^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)?$|^I[A-Z][a-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)?$|^[A-Z][a-z0-9]+\.[A-Z][A-Za-z0-9]*$")]
    private static partial Regex CamelName();
    [GeneratedRegex(@"\.(cs|md|sh|json|ps1|psm1|psd1|py|c|cpp|h|txt|reg|exe|dll|so|csproj)$")]
    private static partial Regex FileName();
    [GeneratedRegex(@"^#{1,6}\s+(.*?)\s*#*$")]
    private static partial Regex Heading();
    [GeneratedRegex(@"[A-Za-z_][A-Za-z0-9_]*")]
    private static partial Regex Word();
}
