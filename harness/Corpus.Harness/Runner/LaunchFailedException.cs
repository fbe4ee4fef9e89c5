namespace Corpus.Harness.Runner;

/// <summary>
/// A run that never reached the program: its launcher said so on stderr, in a line "CORPUS-LAUNCH-FAILED stage: why"
/// (harness/wine/run.sh, when the cell's wineserver is not where Wine's client will look for it). An infrastructure
/// fault, never a verdict: the cell is an error naming the stage, with the launcher's status.
/// </summary>
public sealed class LaunchFailedException(string said, string label, string status)
    : Exception($"{said} ({label}: {status})")
{
    public const string Marker = "CORPUS-LAUNCH-FAILED";

    /// <summary>What the first such line says, or null; only at the start of a line, so quoting the marker is not saying it.</summary>
    public static string? Said(string stderr)
    {
        foreach (var line in stderr.Split('\n'))
            if (line.StartsWith(Marker + " ", StringComparison.Ordinal))
                return line[Marker.Length..].Trim() is { Length: > 0 } said ? said : "the launcher gave no reason";
        return null;
    }
}
