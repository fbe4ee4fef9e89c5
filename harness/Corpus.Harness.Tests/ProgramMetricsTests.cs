using System.Text.Json;
using Corpus.Harness.Report;
using Corpus.Harness.Runner;
using Xunit;

namespace Corpus.Harness.Tests;

public class ProgramMetricsTests
{
    [Fact]
    public void EveryMetricLineIsReadAndABadOneIsReported()
    {
        var errors = new List<string>();
        // The second line is glued to Mono's SIGQUIT dump, as it is when the dump ends without a newline.
        var m = ProgramMetrics.Parse("REPRO-REACHED go\nMETRIC {\"n\": 400, \"deserialize_s\": 1.5, \"note\": \"x\", \"huge\": 1e400}\n"
                                     + "at Main ()METRIC {\"serialize_s\": 0.25}\nMETRIC {broken\nMETRIC 5\n", errors.Add);

        Assert.Equal(["n", "deserialize_s", "serialize_s"], m.Names);
        Assert.True(m.TryGet("deserialize_s", out var d));
        Assert.Equal(1.5, d);
        Assert.True(m.Has("serialize_s"));
        Assert.False(m.Has("note"));          // not a number: not a metric
        Assert.False(m.Has("huge"));          // no finite double
        Assert.Equal(2, errors.Count);
        Assert.All(errors, e => Assert.StartsWith("unreadable METRIC line", e));
    }

    [Fact]
    public void FactsJsonHoldsAnObjectAndReadsItBack()
    {
        var m = new ProgramMetrics(new Dictionary<string, double> { ["n"] = 400, ["deserialize_s"] = 1.5 });
        var json = JsonSerializer.Serialize(new { metrics = m }, SummaryWriter.JsonOptions);
        using var doc = JsonDocument.Parse(json);
        var obj = doc.RootElement.GetProperty("metrics");
        Assert.Equal(JsonValueKind.Object, obj.ValueKind);
        Assert.Equal(1.5, obj.GetProperty("deserialize_s").GetDouble());

        var back = ProgramMetrics.Read(obj);
        Assert.Equal(m.Names, back.Names);
        Assert.True(back.TryGet("n", out var n));
        Assert.Equal(400, n);
    }

    [Fact]
    public void ANonNumberInFactsJsonIsAnErrorNamingIt()
    {
        using var doc = JsonDocument.Parse("{\"n\": 400, \"deserialize_s\": \"fast\"}");
        var e = Assert.Throws<FormatException>(() => ProgramMetrics.Read(doc.RootElement));
        Assert.Contains("metrics.deserialize_s", e.Message);
    }
}
