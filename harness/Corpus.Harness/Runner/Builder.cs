using System.Security.Cryptography;
using System.Text;
using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Runner;

/// <param name="Unsupported">The build was only an attempt (<see cref="BuildRecipe.Attempt"/>) and failed: what it tried.</param>
public sealed record BuildOutput(string? Program, string? Error, string Log, string? Unsupported = null);

/// <summary>
/// Builds a repro once per flavor (a subject kind's <see cref="BuildRecipe"/>: mono IL, net8.0, net10.0, cmake)
/// into build/&lt;id&gt;/&lt;flavor&gt;/, skipping the build when the sources have not changed since the last good one.
/// </summary>
public sealed class Builder(string root, IToolRunner runner)
{
    private readonly object _gate = new();

    public BuildOutput Ensure(Manifest m, BuildRecipe recipe)
    {
        lock (_gate)
        {
            var outDir = Path.Combine(root, "build", m.Id, recipe.Flavor);
            var suffix = recipe.Target is null ? "" : "-" + recipe.Target;
            var log = Path.Combine(outDir, $"build{suffix}.log");
            var stamp = Path.Combine(outDir, $".stamp{suffix}");
            if (recipe.Missing(m) is { } missing) return new BuildOutput(null, missing, log);
            var hash = SourceHash(m, recipe.Flavor);
            var program = recipe.ProgramPath(m, outDir);
            if (File.Exists(stamp) && File.ReadAllText(stamp) == hash && File.Exists(program))
                return new BuildOutput(program, null, log);
            Directory.CreateDirectory(outDir);
            var r = recipe.Run(m, outDir, program, runner);
            File.WriteAllText(log, r.Stdout + r.Stderr);
            if (r.ExitCode != 0)
                return new BuildOutput(null, $"build for {recipe.Flavor} failed ({r.Describe("build")}); see {log}", log,
                                       recipe.Attempt(m) is { } tried ? $"{tried}, and that build failed: {FirstError(r.Stdout + r.Stderr)}" : null);
            if (!File.Exists(program)) return new BuildOutput(null, recipe.NoProgram(m, outDir, program) + $"; see {log}", log);
            File.WriteAllText(stamp, hash);
            return new BuildOutput(program, null, log);
        }
    }

    /// <summary>The compiler's or NuGet's first error line, without its project path, for a one-line detail.</summary>
    public static string FirstError(string log)
    {
        var line = log.Split('\n').Select(l => l.Trim()).FirstOrDefault(l => l.Contains(": error ")) ?? "see the build log";
        var at = line.IndexOf(": error ", StringComparison.Ordinal);
        var text = at >= 0 ? line[(at + 2)..] : line;
        return System.Text.RegularExpressions.Regex.Replace(text, @"\s*\[[^\]]*\.csproj[^\]]*\]\s*$", "");
    }

    /// <summary>Everything that can change the program: the repro's own files except tests, build output and docs.</summary>
    private static string SourceHash(Manifest m, string flavor)
    {
        using var sha = SHA256.Create();
        // Relative paths with '/' on every OS: a flavor cross-built on Linux (windows-cmake) is up to date for a Windows harness.
        var files = Directory.GetFiles(m.Dir, "*", SearchOption.AllDirectories)
            .Select(f => (File: f, Rel: Path.GetRelativePath(m.Dir, f).Replace('\\', '/')))
            .Where(f => !f.Rel.Split('/').Any(p => p is "bin" or "obj" or "tests"))
            .OrderBy(f => f.Rel, StringComparer.Ordinal);
        var sb = new StringBuilder(flavor);
        foreach (var (f, rel) in files)
            sb.Append(rel).Append(Convert.ToHexString(SHA256.HashData(File.ReadAllBytes(f))));
        return Convert.ToHexString(sha.ComputeHash(Encoding.UTF8.GetBytes(sb.ToString())));
    }
}
