using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Report;

/// <summary>
/// facts.json: a cell's facts as data (schema in docs/architecture.md): its family's verdict and typed facts, every
/// evidence check's, the captures with their threads and heap counts, and the cell's files. Pester assertions, build
/// comparisons and labs read this file instead of parsing the detail text.
/// </summary>
public static class FactsWriter
{
    public const int SchemaVersion = 2;
    public const string FileName = "facts.json";

    public static readonly JsonSerializerOptions JsonOptions = new()
    {
        WriteIndented = true,
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        DefaultIgnoreCondition = JsonIgnoreCondition.Never,
        NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
    };

    private static string Camel(string s) => s.Length == 0 ? s : char.ToLowerInvariant(s[0]) + s[1..];

    public static object Json(CellResult c, string root)
    {
        string Rel(string path) => Path.GetRelativePath(root, path);
        return new Dictionary<string, object?>
        {
            ["schema"] = SchemaVersion,
            ["cell"] = new { repro = c.Key.Repro, @case = c.Key.Case, variant = c.Key.Variant, subject = c.Key.Subject },
            ["outcome"] = c.Outcome.Name(),
            ["expected"] = c.Expected?.Outcome.Name(),
            ["expectedReason"] = c.Expected?.Reason,
            ["reference"] = c.Expected?.Reference,
            ["gate"] = c.Gate.ToString().ToLowerInvariant(),
            ["gateMessage"] = c.GateMessage,
            ["detail"] = c.Detail,
            ["keyFigures"] = c.KeyFigures,
            ["seconds"] = c.Seconds,
            ["phases"] = c.Phases,
            ["lane"] = c.Lane,
            ["startedAt"] = c.StartedAt,
            ["rerun"] = c.Rerun,
            // The family that ran the cell, and its verdict (null when it gave none: the run broke before it decided).
            ["family"] = c.Family is null ? null : new
            {
                key = c.Family, outcome = c.Verdict?.Outcome.Name(), detail = c.Verdict?.Detail, facts = c.Verdict?.Facts,
                keyFigures = c.Verdict?.KeyFigures ?? [], plot = c.Verdict is not { Plot: not PlotScale.None } v ? null : Camel(v.Plot.ToString()),
                plotLabel = c.Verdict?.PlotLabel, hitRun = c.Verdict?.HitRun,
            },
            ["evidence"] = c.Evidence.Select(e => new { key = e.Key, status = Camel(e.Status.ToString()), detail = e.Detail, facts = e.Facts, keyFigures = e.KeyFigures }),
            ["runtime"] = c.Runtime,
            ["isolation"] = c.Isolation,
            ["env"] = c.Env,
            ["inheritedEnv"] = c.InheritedEnv,
            ["fixture"] = c.Fixture,
            ["series"] = c.Series.Count == 0 ? null
                : new { metric = c.SeriesMetric, unit = c.SeriesUnit, points = c.Series.Select(p => new[] { p.X, p.Y }) },
            ["timeSeries"] = c.TimeSeries.Count == 0 ? null
                : c.TimeSeries.ToDictionary(kv => kv.Key, kv => kv.Value.Select(p => new[] { p.X, p.Y })),
            ["runs"] = c.Runs.Select(r => new
            {
                label = r.Label, status = r.Status, wallSeconds = r.WallSeconds, peakMB = Math.Round(r.PeakBytes / 1048576.0, 1),
                captureOnly = r.CaptureOnly, exitedZero = r.ExitedZero, metrics = r.Metrics, containment = r.Containment, n = r.N,
                cpuSeconds = r.CpuSeconds,
            }),
            ["captures"] = c.Captures.Select(x => new
            {
                backend = x.Backend, run = x.Run, file = Rel(x.File), bytes = x.Bytes, seconds = x.Seconds, atSeconds = x.AtSeconds,
                note = x.Note, deletedOverCap = x.DeletedOverCap,
                threads = x.Threads.Select(t => new { thread = t.Thread, crashing = t.Crashing, frames = t.Frames }),
                heap = x.HeapCounts,
            }),
            ["captureErrors"] = c.CaptureErrors,
            ["launchRetries"] = c.LaunchRetries,
            ["traces"] = c.Traces.Select(t => SummaryWriter.TraceJson(t, root)),
            ["artifacts"] = c.ArtifactDir is null ? null : new
            {
                dir = Rel(c.ArtifactDir),
                files = Directory.Exists(c.ArtifactDir)
                    ? Directory.EnumerateFiles(c.ArtifactDir, "*", SearchOption.AllDirectories).Order(StringComparer.Ordinal)
                               .Select(f => new { path = Rel(f), bytes = new FileInfo(f).Length }).ToList()
                    : null,
            },
        };
    }

    public static void Write(CellResult c, string root, string dir) =>
        File.WriteAllText(Path.Combine(dir, FileName), JsonSerializer.Serialize(Json(c, root), JsonOptions));
}
