using System.Text.Json;
using Corpus.Harness.Capture;

namespace Corpus.Harness.Subjects;

/// <summary>
/// The versions of one NuGet package that this machine's feeds hold, from `dotnet package search --exact-match`, cached
/// in .cache/subjects/listing/ so a message can list them without asking the feed each time. The cache is asked again
/// only when a version is not in it (a feed gains versions; it rarely loses them).
/// </summary>
public static class NuGetListing
{
    public static string CacheFile(string root, string package) =>
        Path.Combine(root, ".cache", "subjects", "listing", package.ToLowerInvariant() + ".json");

    /// <summary>Whether the feed holds the version, and the versions it holds (oldest first); null versions when it could not be asked.</summary>
    public static (bool Has, IReadOnlyList<string>? Versions) Lookup(string root, string package, string version, IToolRunner tools)
    {
        var cached = Read(CacheFile(root, package));
        if (cached is not null && cached.Contains(version, StringComparer.OrdinalIgnoreCase)) return (true, cached);
        var fresh = Ask(package, tools);
        if (fresh is null) return (false, cached);
        var file = CacheFile(root, package);
        Directory.CreateDirectory(Path.GetDirectoryName(file)!);
        var tmp = file + "." + Environment.ProcessId;
        File.WriteAllText(tmp, JsonSerializer.Serialize(fresh));
        File.Move(tmp, file, overwrite: true);
        return (fresh.Contains(version, StringComparer.OrdinalIgnoreCase), fresh);
    }

    private static List<string>? Read(string file)
    {
        try { return File.Exists(file) ? JsonSerializer.Deserialize<List<string>>(File.ReadAllText(file)) : null; }
        catch (JsonException) { return null; }   // a torn or foreign file: ask the feed again
    }

    private static List<string>? Ask(string package, IToolRunner tools)
    {
        var r = tools.Run("dotnet", ["package", "search", package, "--exact-match", "--format", "json"], TimeSpan.FromMinutes(2));
        if (r.ExitCode != 0) return null;
        try
        {
            using var doc = JsonDocument.Parse(r.Stdout);
            return doc.RootElement.GetProperty("searchResult").EnumerateArray()
                .SelectMany(s => s.GetProperty("packages").EnumerateArray())
                .Select(p => p.GetProperty("version").GetString()!)
                .Distinct(StringComparer.OrdinalIgnoreCase)
                .OrderBy(v => Version.TryParse(v.Split('-')[0], out var p) ? p : new Version(0, 0)).ThenBy(v => v, StringComparer.Ordinal)
                .ToList();
        }
        catch (Exception e) when (e is JsonException or KeyNotFoundException or InvalidOperationException) { return null; }
    }
}
