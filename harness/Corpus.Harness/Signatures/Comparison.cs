using System.Globalization;
using Corpus.Harness.Model;

namespace Corpus.Harness.Signatures;

/// <summary>What `corpus compare` says of one cell between a base subject and a new one.</summary>
public enum CompareVerdict
{
    /// <summary>Reproduced on base, clean on new.</summary>
    Fixed,
    /// <summary>Clean on base, and reproduced or failing another way (wrong-failure) on new.</summary>
    Regressed,
    /// <summary>The same outcome, and no figure moved beyond its interval and noise floor.</summary>
    Unchanged,
    /// <summary>The same outcome, and a figure moved beyond its interval and noise floor.</summary>
    Changed,
    /// <summary>The two cannot be told apart or judged: an error or unsupported side, mixed rounds, an undecided test.</summary>
    Inconclusive,
}

/// <summary>One figure of a cell on both subjects, and how they differ.</summary>
/// <param name="Effect">"difference" (new − base) or "ratio" (new / base), with its 95% interval.</param>
/// <param name="P">The exact test's two-sided p, where there is one.</param>
/// <param name="Differs">The effect's interval excludes no change (0 or 1), and it is beyond the noise floor.</param>
public sealed record FigureComparison(string Name, Interval? Base, Interval? New, string Effect, Interval? Change, double? P, bool Differs,
                                      string? Note = null)
{
    private static string F(double x) => x.ToString(Math.Abs(x) >= 100 ? "0" : "0.###", CultureInfo.InvariantCulture);
    private static string I(Interval? i) => i is null ? "—" : i.Low == i.High ? F(i.Value) : $"{F(i.Value)} [{F(i.Low)}, {F(i.High)}]";

    /// <summary>A p-value as read: 0.0123, or 3.2e-06 when it is tiny (never "0").</summary>
    public static string PValue(double p) => p.ToString(p < 1e-4 ? "0.#e+0" : "0.####", CultureInfo.InvariantCulture);

    public override string ToString() => Change is null
        ? $"{Name} {I(Base)} → {I(New)}{(Note is null ? "" : $" ({Note})")}"
        : $"{Name} {I(Base)} → {I(New)}; {Effect} {I(Change)}{(P is { } p ? $", p={PValue(p)}" : "")}"
          + $"{(Differs ? ", differs" : ", no difference")}{(Note is null ? "" : $" ({Note})")}";
}

/// <param name="Decided">False when more runs could still decide (a race's exact test); the compare runs another round.</param>
/// <param name="Plot">How the cell's series of both subjects are plotted on one axis (None: no series).</param>
public sealed record CellComparison(CompareVerdict Verdict, string Detail)
{
    public IReadOnlyList<FigureComparison> Figures { get; init; } = [];
    public bool Decided { get; init; } = true;
    public PlotScale Plot { get; init; }
}

/// <summary>
/// How many times `corpus compare` runs a cell on each subject: rounds (each one a whole cell run, pooled by the
/// family), at least <see cref="MinRounds"/>, then more until the comparison is decided or the budget ends.
/// </summary>
/// <param name="ForceRuns">Races: exactly this many runs per round (a rate, not a first hit).</param>
/// <param name="BudgetSec">Wall time for the cell's rounds on both subjects together; no new round starts after it.</param>
/// <param name="Budget">The budget in words, for the output.</param>
public sealed record ComparePlan(int MinRounds, int MaxRounds, int? ForceRuns, double BudgetSec, string Budget)
{
    public static readonly ComparePlan Once = new(1, 1, null, double.MaxValue, "one run of the cell per subject");
}

/// <summary>
/// The comparisons families share: by outcomes, then by figures. A family with figures calls these from its
/// <see cref="ISignatureFamily.Compare"/>; a family without keeps the default (outcomes only).
/// </summary>
public static class Comparisons
{
    public const double Alpha = 0.05;

    /// <summary>One outcome for a subject's rounds: theirs when they agree; null when they do not (a flaky cell).</summary>
    public static Outcome? Pooled(IReadOnlyList<Verdict> rounds) =>
        rounds.Count > 0 && rounds.All(r => r.Outcome == rounds[0].Outcome) ? rounds[0].Outcome : null;

    private static string Describe(IReadOnlyList<Verdict> rounds) => Pooled(rounds) is { } o ? o.Name()
        : string.Join(", ", rounds.GroupBy(r => r.Outcome).Select(g => $"{g.Key.Name()} in {g.Count()} of {rounds.Count} rounds"));

    /// <summary>
    /// The verdict from the two outcomes alone; null when they are the same, decidable outcome (then the figures
    /// decide between unchanged and changed).
    /// </summary>
    public static CellComparison? ByOutcome(IReadOnlyList<Verdict> @base, IReadOnlyList<Verdict> @new)
    {
        var (b, n) = (Pooled(@base), Pooled(@new));
        var what = $"base {Describe(@base)}, new {Describe(@new)}";
        if (b is null || n is null) return new(CompareVerdict.Inconclusive, $"{what}: the rounds disagree");
        if (b is Outcome.Error or Outcome.Unsupported or Outcome.Inconclusive || n is Outcome.Error or Outcome.Unsupported or Outcome.Inconclusive)
            return new(CompareVerdict.Inconclusive, $"{what}: {(b is Outcome.Error or Outcome.Unsupported or Outcome.Inconclusive ? "base" : "new")} could not be judged "
                                                   + $"({(b is Outcome.Error or Outcome.Unsupported or Outcome.Inconclusive ? @base : @new)[0].Detail})");
        if (b == n) return null;
        return (b, n) switch
        {
            (Outcome.Reproduced, Outcome.Clean) => new(CompareVerdict.Fixed, what),
            (Outcome.Clean, Outcome.Reproduced) => new(CompareVerdict.Regressed, what),
            (Outcome.Clean, Outcome.WrongFailure) => new(CompareVerdict.Regressed, $"{what}: it fails another way now"),
            _ => new(CompareVerdict.Inconclusive, $"{what}: neither a fix nor a regression of this bug"),
        };
    }

    /// <summary>The default of a family without figures: outcomes only.</summary>
    public static CellComparison OfOutcomes(IReadOnlyList<Verdict> @base, IReadOnlyList<Verdict> @new) =>
        ByOutcome(@base, @new) ?? new(CompareVerdict.Unchanged, $"both {Pooled(@base)!.Value.Name()}");

    /// <summary>Outcomes first; with the same outcome, changed when any figure differs.</summary>
    public static CellComparison WithFigures(IReadOnlyList<Verdict> @base, IReadOnlyList<Verdict> @new, IReadOnlyList<FigureComparison> figures,
                                             PlotScale plot = PlotScale.None)
    {
        var byOutcome = ByOutcome(@base, @new);
        var moved = figures.Where(f => f.Differs).Select(f => f.Name).ToList();
        var verdict = byOutcome ?? (moved.Count > 0
            ? new CellComparison(CompareVerdict.Changed, $"both {Pooled(@base)!.Value.Name()}; {string.Join(", ", moved)} moved beyond the interval")
            : new CellComparison(CompareVerdict.Unchanged, $"both {Pooled(@base)!.Value.Name()}"));
        return verdict with { Figures = figures, Plot = plot };
    }

    /// <summary>
    /// A per-run figure of each round on both subjects: the ratio new/base with its interval over runs. Null when a
    /// side has no value, or a value under <paramref name="minimum"/> (noise, where a ratio means nothing). It differs
    /// when the interval excludes 1 and the ratio is beyond the noise both sides measured: each side's largest run over
    /// its smallest. A figure that does not vary (a peak of memory) has no floor to clear; one that a shared host
    /// moves by a third (a time) must move by more than that.
    /// </summary>
    public static FigureComparison? RatioOf(string name, IReadOnlyList<double> @base, IReadOnlyList<double> @new, double minimum = 0)
    {
        if (@base.Count == 0 || @new.Count == 0 || @base.Concat(@new).Any(x => x < minimum)) return null;
        if (@base.Concat(@new).Any(x => x <= 0)) return null;
        var ratio = CompareStatistics.Ratio(@base, @new);
        var floor = Math.Max(@base.Max() / @base.Min(), @new.Max() / @new.Min());
        var differs = ratio is not null && !ratio.Contains(1) && (ratio.Value > floor || ratio.Value < 1 / floor);
        var noise = string.Create(CultureInfo.InvariantCulture, $"noise ×{floor:0.###} (the larger side's largest run over its smallest)");
        return new FigureComparison(name, CompareStatistics.GeometricMean(@base), CompareStatistics.GeometricMean(@new), "ratio", ratio, null,
                                    differs, ratio is null ? "an interval needs 2 runs or more on each side" : $"geometric means over runs; {noise}");
    }

    /// <summary>
    /// A sweep's slope on both subjects (exponent, or log factor per level) with Sen's interval each, and their
    /// difference: it differs when the intervals do not overlap (each side's interval is its own measured noise).
    /// Exponential slopes are reported as factors (exp of the log slope), and their change as a ratio.
    /// </summary>
    public static FigureComparison? Slopes(string name, IReadOnlyList<(double N, double Y)> @base, IReadOnlyList<(double N, double Y)> @new,
                                           bool exponential)
    {
        static string Pct(double c) => (c * 100).ToString("0.#", CultureInfo.InvariantCulture) + "%";
        static Interval Exp(Interval i) => new(Math.Exp(i.Value), Math.Exp(i.Low), Math.Exp(i.High)) { Confidence = i.Confidence };
        var (hasBase, hasNew) = (CompareStatistics.PairSlopes(@base, exponential).Count > 0, CompareStatistics.PairSlopes(@new, exponential).Count > 0);
        if (!hasBase && !hasNew) return null;
        if (!hasBase || !hasNew)
        {
            // A flat side (fewer than 2 sizes above an exponential sweep's floor) has no slope to give; the other still has.
            var one = CompareStatistics.SenSlope(hasBase ? @base : @new, exponential);
            one = exponential ? Exp(one) : one;
            return new FigureComparison(name, hasBase ? one : null, hasNew ? one : null, exponential ? "ratio" : "difference", null, null, false,
                                        $"{(hasBase ? "new" : "base")} is flat: fewer than 2 sizes above the floor; Sen's interval at {Pct(one.Confidence)}");
        }
        var (b, n) = (CompareStatistics.SenSlope(@base, exponential), CompareStatistics.SenSlope(@new, exponential));
        // Every value both intervals allow: it holds the true difference whenever both hold their slopes.
        var diff = new Interval(n.Value - b.Value, n.Low - b.High, n.High - b.Low) { Confidence = Math.Round(b.Confidence * n.Confidence, 4) };
        var differs = !diff.Contains(0);
        var note = b.Confidence < 0.95 || n.Confidence < 0.95
            ? $"Sen's intervals, {Pct(b.Confidence)} and {Pct(n.Confidence)}: the most {@base.Count} and {@new.Count} sizes give" : "Sen's intervals";
        if (!exponential) return new FigureComparison(name, b, n, "difference", diff, null, differs, note);
        return new FigureComparison(name, Exp(b), Exp(n), "ratio", Exp(diff), null, differs, note);
    }

    /// <summary>
    /// Races: both rates with Wilson intervals, Fisher's exact test, and Newcombe's interval of the difference (from
    /// the two Wilson intervals). Decided when p &lt; 0.05 (the rates differ), when that interval lies within ±epsilon
    /// (the case's own "rare enough to ignore": the rates are the same), or when neither subject hit at all (both
    /// clean by the family's own count); otherwise more runs may decide.
    /// </summary>
    public static CellComparison Rates(IReadOnlyList<Verdict> @base, IReadOnlyList<Verdict> @new,
                                       Func<Verdict, (int Hits, int Runs, double Epsilon)?> count)
    {
        (int Hits, int Runs) Sum(IReadOnlyList<Verdict> vs) =>
            vs.Select(count).OfType<(int Hits, int Runs, double Epsilon)>().Aggregate((0, 0), (a, x) => (a.Item1 + x.Hits, a.Item2 + x.Runs));
        var epsilon = @base.Concat(@new).Select(count).OfType<(int Hits, int Runs, double Epsilon)>().Select(x => x.Epsilon).DefaultIfEmpty(0).Min();
        var (bh, br) = Sum(@base);
        var (nh, nr) = Sum(@new);
        var wb = RaceStatistics.Wilson(bh, br);
        var wn = RaceStatistics.Wilson(nh, nr);
        var p = CompareStatistics.FisherExact(bh, br, nh, nr);
        var d = wn.Point - wb.Point;
        var diff = new Interval(d, d - Math.Sqrt(Math.Pow(wn.Point - wn.Low, 2) + Math.Pow(wb.High - wb.Point, 2)),
                                d + Math.Sqrt(Math.Pow(wn.High - wn.Point, 2) + Math.Pow(wb.Point - wb.Low, 2)));
        var differs = br > 0 && nr > 0 && p < Alpha;
        var figure = new FigureComparison("rate", new Interval(wb.Point, wb.Low, wb.High), new Interval(wn.Point, wn.Low, wn.High),
                                          "difference", diff, p, differs,
                                          $"{bh}/{br} against {nh}/{nr}, Fisher's exact test; difference by Newcombe's interval");
        var rates = $"{bh}/{br} → {nh}/{nr}, p={FigureComparison.PValue(p)}";
        // A run that failed another way stops a race: the outcomes decide then.
        var (bo, no) = (Pooled(@base), Pooled(@new));
        if (bo is not (Outcome.Reproduced or Outcome.Clean or null) || no is not (Outcome.Reproduced or Outcome.Clean or null)
            || br == 0 || nr == 0)
            return (ByOutcome(@base, @new) ?? new(CompareVerdict.Unchanged, $"both {bo!.Value.Name()}")) with { Figures = [figure] };
        if (differs)
        {
            var verdict = nh > 0 && bh == 0 ? CompareVerdict.Regressed : nh == 0 && bh > 0 ? CompareVerdict.Fixed : CompareVerdict.Changed;
            return new(verdict, $"the rate {(d > 0 ? "rose" : "fell")}: {rates} < {Alpha}") { Figures = [figure] };
        }
        if (bh == 0 && nh == 0) return new(CompareVerdict.Unchanged, $"no hit on either: {rates}") { Figures = [figure] };
        if (epsilon > 0 && diff.Low > -epsilon && diff.High < epsilon && (bh > 0) == (nh > 0))
            return new(CompareVerdict.Unchanged, $"the rates are the same within ±{epsilon} (the case's epsilon): {rates}") { Figures = [figure] };
        // Neither different nor shown the same yet; more runs may tell.
        return new(CompareVerdict.Inconclusive, $"the rates do not differ at 95%: {rates}") { Figures = [figure], Decided = false };
    }
}
