using System.Security.Cryptography;
using System.Text;

namespace Corpus.Harness.Report;

/// <summary>
/// Which checkout a run judged against: its commit and fingerprints of expected/ and the manifests. `corpus merge`
/// refuses runs whose checkouts differ, since their gates compared against different expectations.
/// </summary>
public sealed record Checkout(string? Commit, string Expected, string Manifests)
{
    public static Checkout Of(string root) =>
        new(GitHead(root), Fingerprint(root, "expected", "*.json", SearchOption.TopDirectoryOnly),
            Fingerprint(root, "repros", "repro.json", SearchOption.AllDirectories));

    public object Json() => new Dictionary<string, object?> { ["commit"] = Commit, ["expected"] = Expected, ["manifests"] = Manifests };

    /// <summary>sha256 over each file's path (relative, '/') and bytes, in ordinal order: the same files give the same value anywhere.</summary>
    private static string Fingerprint(string root, string dir, string pattern, SearchOption depth)
    {
        using var sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        var folder = Path.Combine(root, dir);
        var files = Directory.Exists(folder) ? Directory.GetFiles(folder, pattern, depth) : [];
        foreach (var f in files.Select(f => (f, rel: Path.GetRelativePath(root, f).Replace('\\', '/'))).OrderBy(x => x.rel, StringComparer.Ordinal))
        {
            sha.AppendData(Encoding.UTF8.GetBytes(f.rel + "\n"));
            sha.AppendData(File.ReadAllBytes(f.f));
        }
        return "sha256:" + Convert.ToHexStringLower(sha.GetHashAndReset());
    }

    /// <summary>HEAD's commit, read from .git without running git; null outside a git checkout (a tarball).</summary>
    private static string? GitHead(string root)
    {
        try
        {
            var git = Path.Combine(root, ".git");
            // A worktree's .git is a file naming its git dir.
            if (File.Exists(git)) git = Path.GetFullPath(File.ReadAllText(git).Trim()["gitdir:".Length..].Trim(), root);
            var head = File.ReadAllText(Path.Combine(git, "HEAD")).Trim();
            if (!head.StartsWith("ref: ", StringComparison.Ordinal)) return head;
            var name = head[5..];
            foreach (var dir in new[] { git, CommonDir(git) })
                if (File.Exists(Path.Combine(dir, name))) return File.ReadAllText(Path.Combine(dir, name)).Trim();
            foreach (var dir in new[] { git, CommonDir(git) })
                if (File.Exists(Path.Combine(dir, "packed-refs")))
                    foreach (var line in File.ReadLines(Path.Combine(dir, "packed-refs")))
                        if (line.EndsWith(" " + name, StringComparison.Ordinal)) return line.Split(' ')[0];
        }
        // The commit is context for merge's check, beside the fingerprints: a .git it cannot read (a Windows harness
        // under Wine reading a Linux worktree's gitdir) gives none rather than failing the run.
        catch (Exception e) when (e is not OutOfMemoryException) { }
        return null;
    }

    private static string CommonDir(string git) =>
        File.Exists(Path.Combine(git, "commondir")) ? Path.GetFullPath(File.ReadAllText(Path.Combine(git, "commondir")).Trim(), git) : git;
}

/// <summary>What summary.json says of a run beyond its cells: its checkout, its shard, the runs it was merged from.</summary>
/// <param name="Shard">For `run --shard I/N`: I, N and every cell of the whole selection, in plan order.</param>
/// <param name="Merged">For `corpus merge`: the runs it merged (run id, host, seconds, shard).</param>
public sealed record Provenance(Checkout Checkout, ShardRecord? Shard = null, IReadOnlyList<object>? Merged = null);

public sealed record ShardRecord(int Index, int Count, IReadOnlyList<string> Selection)
{
    public object Json() => new Dictionary<string, object?> { ["index"] = Index, ["count"] = Count, ["selection"] = Selection };
}
