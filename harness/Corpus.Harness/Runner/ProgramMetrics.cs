using System.Text.Json;
using System.Text.Json.Serialization;

namespace Corpus.Harness.Runner;

/// <summary>
/// The numbers of a run's <c>METRIC {…}</c> lines, under the names the repro's program gave them. The harness has
/// no names of its own here: it asks only for the names a manifest declares (<c>complexity.metric</c>,
/// <c>complexity.calibration</c>, and the report's extra series by suffix). Its own results are typed facts.
/// Written to facts.json as a JSON object, name → number.
/// </summary>
[JsonConverter(typeof(ProgramMetricsJson))]
public sealed class ProgramMetrics
{
    public const string Prefix = "METRIC ";
    public static readonly ProgramMetrics None = new(new Dictionary<string, double>());

    private readonly IReadOnlyDictionary<string, double> _values;

    public ProgramMetrics(IReadOnlyDictionary<string, double> values) => _values = values;

    public IEnumerable<string> Names => _values.Keys;
    public bool IsEmpty => _values.Count == 0;
    public bool Has(string name) => _values.ContainsKey(name);
    public bool TryGet(string name, out double value) => _values.TryGetValue(name, out value);

    /// <summary>The numbers of every METRIC line in <paramref name="stdout"/>; a line that is not a JSON object is reported.</summary>
    public static ProgramMetrics Parse(string stdout, Action<string> unreadable)
    {
        var values = new Dictionary<string, double>();
        // Anywhere in the line: Mono's SIGQUIT dump ends without a newline and glues itself to the next line.
        foreach (var line in stdout.Split('\n').Where(l => l.Contains(Prefix)))
        {
            try
            {
                using var doc = JsonDocument.Parse(line[(line.IndexOf(Prefix, StringComparison.Ordinal) + Prefix.Length)..]);
                foreach (var prop in doc.RootElement.EnumerateObject())
                    // A number too large for a double is not a figure any check can use.
                    if (prop.Value.ValueKind == JsonValueKind.Number && prop.Value.TryGetDouble(out var v) && double.IsFinite(v))
                        values[prop.Name] = v;
            }
            catch (Exception e) when (e is JsonException or InvalidOperationException)
            {
                unreadable($"unreadable METRIC line: {e.Message}");
            }
        }
        return new ProgramMetrics(values);
    }

    /// <summary>The object facts.json holds; a non-number value is an error naming the name.</summary>
    public static ProgramMetrics Read(JsonElement obj) =>
        new(obj.EnumerateObject().ToDictionary(m => m.Name, m => m.Value.ValueKind == JsonValueKind.Number
            ? m.Value.GetDouble() : throw new FormatException($"metrics.{m.Name} is {m.Value.ValueKind}, not a number")));

    internal void Write(Utf8JsonWriter w)
    {
        w.WriteStartObject();
        foreach (var (name, value) in _values) w.WriteNumber(name, value);
        w.WriteEndObject();
    }
}

internal sealed class ProgramMetricsJson : JsonConverter<ProgramMetrics>
{
    public override ProgramMetrics Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        using var doc = JsonDocument.ParseValue(ref reader);
        return ProgramMetrics.Read(doc.RootElement);
    }

    public override void Write(Utf8JsonWriter writer, ProgramMetrics value, JsonSerializerOptions options) => value.Write(writer);
}
