using Corpus.Harness.Model;
using ScottPlot;

namespace Corpus.Harness.Report;

/// <summary>
/// matrix.png: one coloured square per (cell, subject), the outcome and its key figure written in it, cells down
/// the side and subjects along the top, so "which versions have which bug" reads at a glance.
/// </summary>
public static class MatrixPicture
{
    /// <summary>The fill of each outcome; not applicable is a pale grey.</summary>
    public static readonly IReadOnlyDictionary<string, string> Fill = new Dictionary<string, string>
    {
        ["reproduced"] = "#d94b3d", ["clean"] = "#4caf50", ["wrong-failure"] = "#f0a030",
        ["unsupported"] = "#9e9e9e", ["error"] = "#6a3d9a", ["inconclusive"] = "#5c7fa8", [MatrixTable.NotApplicable] = "#eeeeee",
    };

    private const int SquareWidth = 190, SquareHeight = 78, LabelWidth = 300, HeaderHeight = 110;
    private const int CharsPerLine = 26;

    /// <summary>Draws the picture; returns, for each square, a pixel inside it clear of its text (row, column order).</summary>
    public static IReadOnlyList<IReadOnlyList<(int X, int Y)>> Draw(MatrixTable m, string file)
    {
        var plot = new Plot();
        int rows = m.Rows.Count, cols = m.Subjects.Count;
        // Row 0 at the top: rows are drawn from y = rows down to 0.
        for (var r = 0; r < rows; r++)
            for (var c = 0; c < cols; c++)
            {
                var q = m.Rows[r].Squares[c];
                double left = c, bottom = rows - r - 1;
                var rect = plot.Add.Rectangle(left + 0.03, left + 0.97, bottom + 0.04, bottom + 0.96);
                rect.FillColor = Color.FromHex(Fill[q.OutcomeText]);
                rect.LineColor = Colors.White;
                var text = plot.Add.Text(SquareText(q), left + 0.5, bottom + 0.5);
                text.LabelAlignment = Alignment.MiddleCenter;
                text.LabelFontSize = 11;
                text.LabelFontColor = q.Outcome is null or Outcome.Unsupported ? Colors.Black : Colors.White;
                text.LabelBold = false;
            }
        var x = new ScottPlot.TickGenerators.NumericManual();
        for (var c = 0; c < cols; c++) x.AddMajor(c + 0.5, Wrap(MatrixTable.Header(m.Subjects[c]), 22));
        var y = new ScottPlot.TickGenerators.NumericManual();
        for (var r = 0; r < rows; r++) y.AddMajor(rows - r - 0.5, Wrap(m.Rows[r].Label, 40));
        plot.Axes.Top.TickGenerator = x;
        plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual();
        plot.Axes.Left.TickGenerator = y;
        // The top axis is a secondary one: its labels are hidden unless asked for.
        plot.Axes.Top.IsVisible = true;
        plot.Axes.Top.TickLabelStyle.IsVisible = true;
        plot.Axes.Top.MajorTickStyle.Length = 0;
        plot.Axes.Left.MajorTickStyle.Length = 0;
        plot.Axes.Top.TickLabelStyle.FontSize = 12;
        plot.Axes.Left.TickLabelStyle.FontSize = 12;
        plot.Axes.SetLimits(0, cols, 0, rows);
        plot.Axes.SetLimitsX(0, cols, plot.Axes.Top);
        plot.HideGrid();
        plot.Axes.Title.Label.Text = $"run {m.RunId}: outcome and key figure";
        plot.Layout.Fixed(new PixelPadding(LabelWidth, 20, 20, HeaderHeight));
        // Wide enough for the title when there are few subjects.
        int width = Math.Max(LabelWidth + 20 + cols * SquareWidth, 800), height = HeaderHeight + 20 + rows * SquareHeight;
        plot.SavePng(file, width, height);
        // A point near each square's lower-left corner: the fill, not the text.
        return Enumerable.Range(0, rows).Select(r => (IReadOnlyList<(int, int)>)Enumerable.Range(0, cols).Select(c =>
        {
            var p = plot.GetPixel(new Coordinates(c + 0.1, rows - r - 1 + 0.12));
            return ((int)p.X, (int)p.Y);
        }).ToList()).ToList();
    }

    private static string SquareText(MatrixSquare q) =>
        q.KeyFigure is { } k ? $"{q.OutcomeText}\n{Wrap(k, CharsPerLine, 2)}"
        : q.Outcome is null or Outcome.Reproduced or Outcome.Clean ? q.OutcomeText
        : $"{q.OutcomeText}\n{Wrap(q.Detail, CharsPerLine, 2)}";

    /// <summary>Words on lines of at most <paramref name="width"/> characters; past <paramref name="lines"/> lines, an ellipsis.</summary>
    internal static string Wrap(string text, int width, int lines = 3)
    {
        var result = new List<string>();
        var line = "";
        foreach (var word in text.Replace('\n', ' ').Split(' ', StringSplitOptions.RemoveEmptyEntries))
        {
            if (line.Length > 0 && line.Length + 1 + word.Length > width) { result.Add(line); line = ""; }
            line = line.Length == 0 ? word : line + " " + word;
        }
        if (line.Length > 0) result.Add(line);
        if (result.Count <= lines) return string.Join("\n", result);
        var kept = result.Take(lines).ToList();
        kept[^1] = (kept[^1].Length >= width ? kept[^1][..(width - 1)] : kept[^1]) + "…";
        return string.Join("\n", kept);
    }
}
