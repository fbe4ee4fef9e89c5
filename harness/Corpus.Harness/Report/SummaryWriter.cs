using System.Text.Encodings.Web;
using System.Text.Json;
using System.Xml.Linq;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Report;

/// <summary>summary.json (schema in docs/architecture.md) and JUnit XML for CI.</summary>
public static class SummaryWriter
{
    public const int SchemaVersion = 2;

    public static readonly JsonSerializerOptions JsonOptions = new()
    {
        WriteIndented = true,
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
    };

    public static object CellJson(CellResult c, string root) => new Dictionary<string, object?>
    {
        ["repro"] = c.Key.Repro,
        ["case"] = c.Key.Case,
        ["variant"] = c.Key.Variant,
        ["subject"] = c.Key.Subject,
        ["outcome"] = c.Outcome.Name(),
        ["detail"] = c.Detail,
        ["expected"] = c.Expected?.Outcome.Name(),
        ["expectedReason"] = c.Expected?.Reason,
        ["reference"] = c.Expected?.Reference,
        ["gate"] = c.Gate.ToString().ToLowerInvariant(),
        ["gateMessage"] = c.GateMessage,
        ["seconds"] = c.Seconds,
        ["phases"] = c.Phases,
        ["lane"] = c.Lane,
        ["startedAt"] = c.StartedAt,
        ["series"] = c.Series.Count == 0 ? null
            : new { metric = c.SeriesMetric, unit = c.SeriesUnit, points = c.Series.Select(p => new[] { p.X, p.Y }) },
        ["timeSeries"] = c.TimeSeries.Count == 0 ? null
            : c.TimeSeries.ToDictionary(kv => kv.Key, kv => kv.Value.Select(p => new[] { p.X, p.Y })),
        ["runs"] = c.Runs.Select(r => new
        {
            label = r.Label, status = r.Status, wallSeconds = r.WallSeconds,
            peakMB = Math.Round(r.PeakBytes / 1048576.0, 1), metrics = r.Metrics, containment = r.Containment, n = r.N,
        }),
        ["captures"] = c.Captures.Select(x => new
        {
            backend = x.Backend, run = x.Run, file = Rel(x.File, root), bytes = x.Bytes, seconds = x.Seconds, atSeconds = x.AtSeconds,
            threads = x.Threads.Count, note = x.Note, heapTypes = x.HeapCounts?.Count,
        }),
        ["captureErrors"] = c.CaptureErrors,
        ["traces"] = c.Traces.Select(t => TraceJson(t, root)),
        ["artifacts"] = c.ArtifactDir is null ? null : Rel(c.ArtifactDir, root),
        ["facts"] = c.RecordDir is null ? null : Rel(Path.Combine(c.RecordDir, FactsWriter.FileName), root),
        ["family"] = c.Family,
        ["keyFigures"] = c.KeyFigures,
        ["rerun"] = c.Rerun,
    };

    private static string Rel(string path, string root) => Path.GetRelativePath(root, path);

    /// <summary>A trace's record, as summary.json and facts.json both write it (docs/architecture.md).</summary>
    public static object TraceJson(Capture.Traces.TraceRecord t, string root) => new
    {
        backend = t.Backend, kind = t.Kind, run = t.Run, n = t.N, file = t.File is null ? null : Rel(t.File, root), bytes = t.Bytes,
        samples = t.Samples, events = t.Events, wallSeconds = t.WallSeconds, untracedWallSeconds = t.UntracedWallSeconds,
        slowdown = t.Slowdown, metricSlowdown = t.MetricSlowdown, readSeconds = t.ReadSeconds,
        speedscope = t.Speedscope is null ? null : Rel(t.Speedscope, root), flameGraph = t.FlameGraph is null ? null : Rel(t.FlameGraph, root),
        note = t.Note, error = t.Error,
    };

    public static void Write(string file, string runId, IReadOnlyList<CellResult> cells, IReadOnlyList<string> inputErrors,
                             double seconds, string root, Provenance? provenance = null, string? host = null)
    {
        var doc = new Dictionary<string, object?>
        {
            ["schema"] = SchemaVersion,
            ["runId"] = runId,
            ["host"] = host ?? Environment.MachineName,
            ["seconds"] = Math.Round(seconds, 1),
            ["passed"] = cells.All(c => c.Gate is GateStatus.Pass or GateStatus.Unchecked) && inputErrors.Count == 0,
            ["inputErrors"] = inputErrors,
            // Which checkout judged the run, and its shard: `corpus merge` checks both.
            ["checkout"] = (provenance?.Checkout ?? Checkout.Of(root)).Json(),
            ["shard"] = provenance?.Shard?.Json(),
            ["merged"] = provenance?.Merged,
            ["cells"] = cells.Select(c => CellJson(c, root)),
        };
        File.WriteAllText(file, JsonSerializer.Serialize(doc, JsonOptions));
    }

    /// <summary>One testsuite per repro, one testcase per cell; a gate difference is a failure.</summary>
    public static void WriteJUnit(string file, IReadOnlyList<CellResult> cells, IReadOnlyList<string> inputErrors)
    {
        var suites = new XElement("testsuites");
        foreach (var group in cells.GroupBy(c => c.Key.Repro))
        {
            var suite = new XElement("testsuite", new XAttribute("name", group.Key),
                                     new XAttribute("tests", group.Count()),
                                     new XAttribute("failures", group.Count(c => IsFailure(c))),
                                     new XAttribute("time", group.Sum(c => c.Seconds)));
            foreach (var c in group)
            {
                var tc = new XElement("testcase", new XAttribute("classname", $"{c.Key.Repro}.{c.Key.Case}"),
                                      new XAttribute("name", $"{c.Key.Variant}/{c.Key.Subject}"),
                                      new XAttribute("time", c.Seconds));
                if (IsFailure(c))
                    tc.Add(new XElement("failure", new XAttribute("message", c.GateMessage),
                                        $"{c.Detail}\nre-run: {c.Rerun}\nartifacts: {c.ArtifactDir}"));
                else if (c.Gate == GateStatus.Unchecked)
                    tc.Add(new XElement("skipped", new XAttribute("message", c.GateMessage)));
                tc.Add(new XElement("system-out", $"outcome: {c.Outcome.Name()}; {c.Detail}"));
                suite.Add(tc);
            }
            suites.Add(suite);
        }
        if (inputErrors.Count > 0)
        {
            var suite = new XElement("testsuite", new XAttribute("name", "inputs"), new XAttribute("tests", inputErrors.Count),
                                     new XAttribute("failures", inputErrors.Count));
            foreach (var e in inputErrors)
                suite.Add(new XElement("testcase", new XAttribute("name", e.Split(':')[0]),
                                       new XElement("failure", new XAttribute("message", e))));
            suites.Add(suite);
        }
        new XDocument(suites).Save(file);
    }

    private static bool IsFailure(CellResult c) => c.Gate.Fails();
}
