using System.Globalization;
using System.Net;
using System.Text;
using System.Text.Json;

namespace Corpus.Harness.Capture.Traces;

/// <summary>
/// A trace's pictures: its samples as a speedscope file (one sampled profile per thread; open it at speedscope.app or
/// with the npm speedscope viewer) and a self-contained HTML page with an SVG flame graph drawn here (no script, no
/// network: it opens from a pruned cell's folder, a CI artifact or a mail). Both sit beside the cell's records and
/// survive pruning (<see cref="Kept"/>).
/// </summary>
public static class TracePictures
{
    public const string SpeedscopeSuffix = ".speedscope.json", HtmlSuffix = ".flamegraph.html", SvgSuffix = ".flamegraph.svg";

    /// <summary>Whether a file of a cell's folder is a trace picture, kept with the records when the cell is pruned.</summary>
    public static bool Kept(string fileName) => fileName.StartsWith("trace", StringComparison.Ordinal)
                                               && (fileName.EndsWith(SpeedscopeSuffix) || fileName.EndsWith(HtmlSuffix) || fileName.EndsWith(SvgSuffix));

    public static (string Speedscope, string Html) Write(TraceModel model, string dir, string label, string title)
    {
        var speedscope = Path.Combine(dir, label + SpeedscopeSuffix);
        var html = Path.Combine(dir, label + HtmlSuffix);
        File.WriteAllText(speedscope, Speedscope(model, title));
        File.WriteAllText(html, Html(model, title, Path.GetFileName(speedscope)));
        // The same graph as a picture of its own, for report.md to show beside a sweep's plot.
        File.WriteAllText(Path.Combine(dir, label + SvgSuffix), Svg(Node.Of(Drawn(model, out _)), model.Unit, out _));
        return (speedscope, html);
    }

    /// <summary>The speedscope file format (https://www.speedscope.app/file-format-schema.json): sampled profiles, stacks root first.</summary>
    public static string Speedscope(TraceModel model, string title)
    {
        var frames = new List<string>();
        var index = new Dictionary<string, int>(StringComparer.Ordinal);
        int Frame(string name)
        {
            if (!index.TryGetValue(name, out var i)) { index[name] = i = frames.Count; frames.Add(name); }
            return i;
        }
        var profiles = model.Samples.GroupBy(s => s.Thread ?? "all threads").Select(g =>
        {
            var samples = g.Select(s => s.Frames.Select(Frame).ToArray()).ToList();
            var weights = g.Select(s => s.Weight).ToList();
            return new Dictionary<string, object>
            {
                ["type"] = "sampled", ["name"] = g.Key, ["unit"] = model.Unit == "milliseconds" ? "milliseconds" : model.Unit == "bytes" ? "bytes" : "none",
                ["startValue"] = 0, ["endValue"] = weights.Sum(), ["samples"] = samples, ["weights"] = weights,
            };
        }).ToList();
        var doc = new Dictionary<string, object>
        {
            ["$schema"] = "https://www.speedscope.app/file-format-schema.json",
            ["shared"] = new { frames = frames.Select(f => new { name = f }) },
            ["profiles"] = profiles, ["name"] = title, ["activeProfileIndex"] = 0, ["exporter"] = "corpus",
        };
        return JsonSerializer.Serialize(doc);
    }

    /// <summary>A node of the merged call tree: inclusive weight, children by frame name.</summary>
    public sealed class Node(string name)
    {
        public string Name => name;
        public double Weight { get; set; }
        public Dictionary<string, Node> Children { get; } = new(StringComparer.Ordinal);

        public static Node Of(IEnumerable<TraceSample> samples)
        {
            var root = new Node("all");
            foreach (var s in samples)
            {
                root.Weight += s.Weight;
                var at = root;
                foreach (var f in s.Frames)
                {
                    if (!at.Children.TryGetValue(f, out var next)) at.Children[f] = next = new Node(f);
                    next.Weight += s.Weight;
                    at = next;
                }
            }
            return root;
        }

        public int Depth => Children.Count == 0 ? 0 : 1 + Children.Values.Max(c => c.Depth);
    }

    private const int Width = 1200, RowHeight = 17, MaxRows = 100;
    private const double MinBoxPx = 3.0;

    public static string Html(TraceModel model, string title, string speedscopeName)
    {
        var root = Node.Of(Drawn(model, out var inverted));
        var svg = Svg(root, model.Unit, out var drawn);
        var how = inverted
            ? "leaf on top, its callers below (an inverted graph: most stacks were cut off before their root, as EventPipe keeps about 100 frames, so their roots differ)"
            : "root on top, callees below";
        // The frames that hold the most time, inclusive: the table a reader checks the picture against.
        var inclusive = new Dictionary<string, double>(StringComparer.Ordinal);
        foreach (var s in model.Samples)
            foreach (var f in s.Frames.Distinct())
                inclusive[f] = inclusive.GetValueOrDefault(f) + s.Weight;
        var top = inclusive.OrderByDescending(kv => kv.Value).Take(15);
        var rows = string.Concat(top.Select(kv => string.Create(CultureInfo.InvariantCulture,
            $"<tr><td>{kv.Value / Math.Max(root.Weight, 1e-9) * 100:0.0}%</td><td>{WebUtility.HtmlEncode(kv.Key)}</td></tr>")));
        var t = WebUtility.HtmlEncode(title);
        return $$"""
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>{{t}}: flame graph</title>
            <style>body{font-family:sans-serif;margin:12px;background:#fff}svg .frame:hover rect{stroke:#000;stroke-width:1}
            svg text{pointer-events:none;fill:#000}table{border-collapse:collapse;font-size:12px}td{padding:1px 8px;font-family:monospace;white-space:nowrap}</style></head>
            <body><h1 style="font-size:16px">{{t}}</h1>
            <p id="summary">{{model.Samples.Count}} samples ({{root.Weight.ToString("0.##", CultureInfo.InvariantCulture)}} {{model.Unit}}), {{model.Events.Count}} events, {{drawn}} frames drawn; {{how}}, width is the share of samples. The same samples as <a href="{{WebUtility.HtmlEncode(speedscopeName)}}">speedscope JSON</a>.</p>
            {{svg}}
            <h2 style="font-size:14px">Frames by inclusive share</h2><table id="top">{{rows}}</table>
            </body></html>
            """;
    }

    /// <summary>
    /// What a box shows of a frame (its title keeps the whole name): no argument list, no module, no namespace, so
    /// "System.Runtime.Serialization.ObjectManager:RegisterObject (object,long)" (Mono) and
    /// "System.Runtime.Serialization.Formatters!System.Runtime.Serialization.ObjectManager.RegisterObject(class …)"
    /// (CoreCLR) both read "ObjectManager.RegisterObject".
    /// </summary>
    public static string Short(string name)
    {
        if (name.StartsWith('(') || name.StartsWith('[')) return name;
        var s = name;
        var args = s.IndexOf('(');
        if (args > 0) s = s[..args].TrimEnd();
        if (s.IndexOf('!') is var bang and > 0) s = s[(bang + 1)..];
        s = s.Replace(':', '.');
        var parts = s.Split('.', StringSplitOptions.RemoveEmptyEntries);
        // ".ctor"/".cctor" split into an empty part and the name: keep the type before them.
        return parts.Length <= 2 ? s : (s.EndsWith(".ctor") || s.EndsWith(".cctor")) && parts.Length >= 3
            ? $"{parts[^2]}..{parts[^1]}" : $"{parts[^2]}.{parts[^1]}";
    }

    /// <summary>
    /// The stacks as drawn: root first, unless no root frame holds half of the weight (stacks cut off in a deep
    /// recursion start anywhere in it): then leaf first, so the graph grows from where the time was spent.
    /// </summary>
    public static IReadOnlyList<TraceSample> Drawn(TraceModel model, out bool inverted)
    {
        var total = model.TotalWeight;
        var top = model.Samples.Where(x => x.Frames.Count > 0).GroupBy(x => x.Frames[0]).Select(g => g.Sum(x => x.Weight)).DefaultIfEmpty(0).Max();
        inverted = total > 0 && top < total / 2 && model.Samples.Average(x => x.Frames.Count) > 50;
        return inverted ? model.Samples.Select(x => x with { Frames = x.Frames.Reverse().ToList() }).ToList() : model.Samples;
    }

    /// <summary>The flame graph as a standalone SVG: root on top (an icicle), width the share of weight, names in titles and boxes.</summary>
    public static string Svg(Node root, string unit, out int drawn)
    {
        var depth = Math.Min(root.Depth, MaxRows);
        var height = (depth + 1) * RowHeight + 4;
        var svg = new StringBuilder();
        svg.Append(CultureInfo.InvariantCulture, $"<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"flamegraph\" width=\"{Width}\" height=\"{height}\" font-family=\"monospace\" font-size=\"11\">");
        var count = 0;
        void Draw(Node n, double x, int level)
        {
            if (level > depth) return;
            var w = root.Weight <= 0 ? 0 : n.Weight / root.Weight * Width;
            // A box of a pixel or two cannot be read, and a deep recursion has tens of thousands of them (13 MB of SVG
            // at 0.3 px, 8 MB at 1 px for roslyn 4.8.0's parse).
            if (w < MinBoxPx) return;
            // An icicle: the root (or the leaf of an inverted graph) on top, where a page opens.
            var y = 2 + level * RowHeight;
            var share = root.Weight <= 0 ? 0 : n.Weight / root.Weight;
            var name = WebUtility.HtmlEncode(n.Name);
            svg.Append(CultureInfo.InvariantCulture,
                $"<g class=\"frame\"><title>{name} ({share * 100:0.0}%, {n.Weight:0.##} {unit})</title>"
                + $"<rect x=\"{x:0.##}\" y=\"{y}\" width=\"{w:0.##}\" height=\"{RowHeight - 1}\" fill=\"{Colour(n.Name, level == 0)}\" rx=\"2\"/>");
            var chars = (int)((w - 6) / 6.6);
            if (chars >= 3)
            {
                var label = Short(n.Name);
                var text = label.Length <= chars ? label : label[..Math.Max(1, chars - 2)] + "..";
                svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{x + 3:0.##}\" y=\"{y + RowHeight - 5}\">{WebUtility.HtmlEncode(text)}</text>");
            }
            svg.Append("</g>");
            count++;
            var cx = x;
            foreach (var c in n.Children.Values.OrderBy(c => c.Name, StringComparer.Ordinal))
            {
                Draw(c, cx, level + 1);
                cx += root.Weight <= 0 ? 0 : c.Weight / root.Weight * Width;
            }
        }
        Draw(root, 0, 0);
        svg.Append("</svg>");
        drawn = count;
        return svg.ToString();
    }

    /// <summary>A warm colour fixed by the frame's name, so the same frame looks the same in every graph.</summary>
    private static string Colour(string name, bool root)
    {
        if (root) return "#cccccc";
        var h = 0u;
        foreach (var ch in name) h = h * 31 + ch;
        return string.Create(CultureInfo.InvariantCulture, $"rgb({205 + h % 50},{80 + (h >> 8) % 130},{40 + (h >> 16) % 50})");
    }
}
