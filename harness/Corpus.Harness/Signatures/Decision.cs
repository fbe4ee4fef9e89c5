using System.Globalization;
using Corpus.Harness.Json;

namespace Corpus.Harness.Signatures;

/// <summary>
/// How a measured verdict measures until it is sure (a family's or a check's "decide" block): at most
/// <see cref="MaxRounds"/> looks at the figure, each after one more round of measuring, within <see cref="BudgetSec"/>.
/// The error rate <see cref="Alpha"/> is spent evenly over the looks (Bonferroni), so a whole sequence that decides
/// is wrong with probability at most alpha, however many looks it took: each look's interval has confidence
/// 1 − alpha/maxRounds.
/// </summary>
public sealed record DecideSpec(int MaxRounds, double BudgetSec, double Alpha = DecideSpec.DefaultAlpha)
{
    public const double DefaultAlpha = 0.05;

    /// <summary>Each look's two-sided confidence.</summary>
    public double LookConfidence => 1 - Alpha / MaxRounds;

    /// <summary>The optional "decide" block of a family's or a check's spec; <paramref name="defaults"/> where it is silent.</summary>
    public static DecideSpec Read(Fields parent, DecideSpec defaults)
    {
        if (parent.ObjectOr("decide") is not { } f) return defaults;
        f.AllowOnly("maxRounds", "budgetSec", "alpha");
        return new DecideSpec(f.IntOr("maxRounds", defaults.MaxRounds, min: 1, max: 100)!.Value,
                              f.NumberOr("budgetSec", defaults.BudgetSec, min: 0, above: true, max: 86400)!.Value,
                              f.NumberOr("alpha", defaults.Alpha, min: 0, above: true, max: 0.5)!.Value);
    }

    public string Describe => string.Create(CultureInfo.InvariantCulture,
        $"at most {MaxRounds} looks within {BudgetSec:0.#} s, error rate {Alpha:0.###} over all of them ({LookConfidence * 100:0.##}% a look)");
}

/// <summary>Where a figure's interval lies against a signature's two bounds.</summary>
public enum Placement
{
    /// <summary>All of it at or beyond the bug's bound.</summary>
    Reproduced,
    /// <summary>All of it at or within the clean bound.</summary>
    Clean,
    /// <summary>All of it strictly between the bounds: neither clean nor the bug (a failure of another shape).</summary>
    Between,
    /// <summary>It straddles a bound: more measuring may decide.</summary>
    Undecided,
}

/// <summary>
/// One measured figure at one look: its value, its interval and how that was computed, the bounds it was placed
/// against, and where it lies. Facts of every family that decides by measuring (facts.json "decision").
/// </summary>
/// <param name="BugAbove">True when the bug makes the figure large (an exponent, a share); the bounds are then
/// reproducedMin ≤ figure and figure ≤ cleanMax.</param>
/// <param name="StoppedBy">What ended the looks: "decided", "maxRounds N", "the N s budget".</param>
/// <param name="Low">The interval's ends; null where it is unbounded (no scatter measured yet).</param>
public sealed record DecisionFacts(string Figure, double Value, double? Low, double? High, double Confidence, string Method,
                                   double? ReproducedMin, double? CleanMax, bool BugAbove, string Placement, int Rounds, int MaxRounds,
                                   double Alpha, double Seconds, string StoppedBy)
{
    /// <summary>A window's upper end, where the bug's region is bounded on both sides (a hang of expectedMs ± tolerance).</summary>
    public double? WindowHigh { get; init; }

    private static string F(double x) => x.ToString(Math.Abs(x) >= 100 ? "0" : "0.###", CultureInfo.InvariantCulture);

    /// <summary>"1.97 [1.81, 2.13] at 98.3%".</summary>
    public string Interval => Low is not { } lo || High is not { } hi ? $"{F(Value)} (no interval yet)"
        : lo == hi ? F(Value) : Confidence <= 0 ? $"{F(Value)} [{F(lo)}, {F(hi)}]" : $"{F(Value)} [{F(lo)}, {F(hi)}] at {Confidence * 100:0.#}%";

    /// <summary>The facts of a figure's interval at one look: infinite ends become null.</summary>
    public static DecisionFacts Of(string figure, Interval i, string method, double? reproducedMin, double? cleanMax, bool bugAbove,
                                   Placement placement, int rounds, DecideSpec decide, double seconds, string stoppedBy)
    {
        static double? End(double d) => double.IsInfinity(d) ? null : Math.Round(d, 4);
        return new DecisionFacts(figure, Math.Round(i.Value, 4), End(i.Low), End(i.High), Math.Round(i.Confidence, 4), method, reproducedMin, cleanMax,
                                 bugAbove, placement.ToString().ToLowerInvariant(), rounds, decide.MaxRounds, decide.Alpha, Math.Round(seconds, 1), stoppedBy);
    }

    public string Bounds => string.Join(", ", new[]
    {
        ReproducedMin is { } r ? WindowHigh is { } w ? $"the bug in [{F(r)}, {F(w)}]" : $"the bug {(BugAbove ? "≥" : "≤")} {F(r)}" : null,
        CleanMax is { } c ? $"clean {(BugAbove ? "≤" : "≥")} {F(c)}" : null,
    }.OfType<string>());

    /// <summary>The inconclusive detail: the figure, its interval and the bounds, and what ended the measuring.</summary>
    [System.Text.Json.Serialization.JsonIgnore]
    public string Undecided => $"{Figure} {Interval} straddles a bound ({Bounds}) after {Rounds} of at most {MaxRounds} rounds; "
                               + $"ended by {StoppedBy} ({Method})";
}

/// <summary>The statistics a measured verdict decides with.</summary>
public static class Decision
{
    /// <summary>Where <paramref name="i"/> lies against the bounds (either may be absent: that region cannot be reached).</summary>
    public static Placement Place(Interval i, double? reproducedMin, double? cleanMax, bool bugAbove = true)
    {
        // Mirror a figure the bug makes small, so one rule serves both.
        var (low, high, r, c) = bugAbove ? (i.Low, i.High, reproducedMin, cleanMax) : (-i.High, -i.Low, -reproducedMin, -cleanMax);
        if (r is { } rm && low >= rm) return Placement.Reproduced;
        if (c is { } cm && high <= cm) return Placement.Clean;
        if (r is { } rb && c is { } cb && low > cb && high < rb) return Placement.Between;
        return Placement.Undecided;
    }

    /// <summary>
    /// The least-squares slope of y on x with its Student-t interval on n − 2 degrees of freedom (ordinary least
    /// squares, independent errors). Two points give no interval: it is unbounded, and never decides.
    /// </summary>
    public static Interval Slope(IReadOnlyList<(double X, double Y)> points, double confidence)
    {
        var n = points.Count;
        var (b, a, sxx) = Line(points);
        if (n == 2) return new Interval(b, double.NegativeInfinity, double.PositiveInfinity) { Confidence = confidence };
        var sse = points.Sum(p => (p.Y - a - b * p.X) * (p.Y - a - b * p.X));
        var se = Math.Sqrt(sse / (n - 2) / sxx);
        var t = StudentT.Quantile(1 - (1 - confidence) / 2, n - 2);
        return new Interval(b, b - t * se, b + t * se) { Confidence = confidence };
    }

    /// <summary>
    /// The slope of an exponential sweep measured in repeated runs (the finished sizes run once more only while
    /// undecided, and the killed size has no replicate): the least-squares line through the fastest run of each size
    /// (log of the metric against x). Its uncertainty is how far each size's fastest run may be from the size's true
    /// time, estimated two ways and pooled as one variance. The host only ever slows a run, so one estimate is the gap
    /// from the fastest run to the next fastest (log), one degree of freedom per size with two runs or more: a size whose
    /// runs agree is sure of its point; one where a single run was fast and the rest were slowed is not, and another
    /// round tells. The other is the line's misfit through the fastest runs, n − 2 degrees of freedom: fastest runs that
    /// lie on their line are evidence that they are near their true times, though one gap at a loaded moment is wide
    /// (a lab run at load 12: net8's gaps pooled alone gave 0.956 [0.474, 1.438], undecided against 1.3, over fastest
    /// runs that fit their line with r² 0.998). A cost that bends adds to the misfit: it widens the interval, never
    /// narrows it, and left Mono's power sweep inconclusive, which is why power sweeps use <see cref="MeanSlope"/>. On synthetic sweeps of an exact power law with one-sided noise
    /// (exponential, a mixture, half-normal; 2–5 runs a size) a 95% interval missed 0.6–2.2% of the time, the gaps
    /// alone 0.3–2.8%, and was a fifth narrower. <paramref name="single"/> are points with no replicate (an
    /// exponential sweep's killed size): fitted, in the misfit, with no gap. No size with two runs: an unbounded
    /// interval. <paramref name="estimated"/>: parameters fitted to these same runs before (a calibration's weight),
    /// a degree of freedom each.
    /// </summary>
    public static (Interval Slope, double Sigma, int Df) ReplicateSlope(IReadOnlyList<(double X, IReadOnlyList<double> LogY)> sizes,
                                                                        double confidence, IReadOnlyList<(double X, double LogY)>? single = null,
                                                                        int estimated = 0)
    {
        var points = sizes.Select(s => (s.X, LogY: s.LogY.Min())).Concat(single ?? []).ToList();
        var (b, a, sxx) = Line(points);
        var gaps = sizes.Where(s => s.LogY.Count >= 2).Select(s => s.LogY.Order().Take(2).ToList()).Select(t => t[1] - t[0]).ToList();
        if (gaps.Count == 0) return (new Interval(b, double.NegativeInfinity, double.PositiveInfinity) { Confidence = confidence }, double.NaN, 0);
        var misfit = points.Sum(p => (p.LogY - a - b * p.X) * (p.LogY - a - b * p.X));
        var df = gaps.Count + points.Count - 2 - estimated;
        if (df < 1) return (new Interval(b, double.NegativeInfinity, double.PositiveInfinity) { Confidence = confidence }, double.NaN, 0);
        var sigma = Math.Sqrt((gaps.Sum(g => g * g) + misfit) / df);
        var half = StudentT.Quantile(1 - (1 - confidence) / 2, df) * sigma / Math.Sqrt(sxx);
        return (new Interval(b, b - half, b + half) { Confidence = confidence }, sigma, df);
    }

    /// <summary>
    /// The slope of a power sweep measured in repeated runs: the least-squares line through each size's mean log
    /// metric, its uncertainty from the runs' scatter about their own size's mean alone (pure error, Σ(k − 1) degrees
    /// of freedom), each size's mean known to σ/√k. A curve that bends on log axes (Mono's a·n + b·n² and its cache
    /// misses: local slopes 1.2, 2.1, 3.1 over 50K–400K on an Intel VM) is the cost the slope sums up, not noise.
    /// Charged to the noise, as the misfit of the line through the fastest runs (<see cref="ReplicateSlope"/>), it
    /// left 4 of 15 Mono cells on that VM inconclusive with their exponent at 2.07–2.22. Every run counts: 9–16
    /// degrees of freedom at a first look, where the gaps and the misfit gave 5. On synthetic sweeps of an exact power
    /// law (one-sided exponential, a 1.7× slow mode in a quarter of the runs, half-normal and log-normal noise; 2–7 runs a size;
    /// 2,000 each) a 95% interval missed 4.5–6.0% of the time, the fastest-run interval 0.6–7.1% (7.1% with Mono's
    /// 5/5/4/2 runs and a slow mode). A host that slows every run alike moves every mean alike, which leaves the
    /// slope alone; the rounds run every size in turn, so a stretch of load falls on all of them.
    /// <paramref name="estimated"/>: parameters fitted to these same runs before (a calibration's weight), a degree
    /// of freedom each. Fewer than one degree of freedom left: an unbounded interval.
    /// </summary>
    public static (Interval Slope, double Sigma, int Df) MeanSlope(IReadOnlyList<(double X, IReadOnlyList<double> LogY)> sizes,
                                                                 double confidence, int estimated = 0)
    {
        var means = sizes.Select(s => (s.X, Y: s.LogY.Average())).ToList();
        var (b, _, sxx) = Line(means);
        var df = sizes.Sum(s => s.LogY.Count - 1) - estimated;
        if (df < 1) return (new Interval(b, double.NegativeInfinity, double.PositiveInfinity) { Confidence = confidence }, double.NaN, 0);
        var within = means.Zip(sizes, (m, s) => s.LogY.Sum(y => (y - m.Y) * (y - m.Y))).Sum();
        var sigma = Math.Sqrt(within / df);
        var mx = means.Average(m => m.X);
        var se = sigma * Math.Sqrt(sizes.Sum(s => (s.X - mx) * (s.X - mx) / s.LogY.Count)) / sxx;
        var half = StudentT.Quantile(1 - (1 - confidence) / 2, df) * se;
        return (new Interval(b, b - half, b + half) { Confidence = confidence }, sigma, df);
    }

    /// <summary>The least-squares line through the points: its slope, its intercept, and Σ(x − x̄)².</summary>
    private static (double Slope, double Intercept, double Sxx) Line(IReadOnlyList<(double X, double Y)> points)
    {
        if (points.Count < 2) throw new ArgumentException("a slope needs at least two points");
        double mx = points.Average(p => p.X), my = points.Average(p => p.Y), sxx = 0, sxy = 0;
        foreach (var (x, y) in points)
        {
            sxx += (x - mx) * (x - mx);
            sxy += (x - mx) * (y - my);
        }
        if (sxx == 0) throw new ArgumentException("a slope needs two distinct x");
        return (sxy / sxx, my - sxy / sxx * mx, sxx);
    }

    /// <summary>The mean of per-round values with its Student-t interval; one value gives none (unbounded).</summary>
    public static Interval Mean(IReadOnlyList<double> values, double confidence)
    {
        if (values.Count == 0) throw new ArgumentException("a mean of nothing");
        var m = values.Average();
        if (values.Count == 1) return new Interval(m, double.NegativeInfinity, double.PositiveInfinity) { Confidence = confidence };
        var se = Math.Sqrt(values.Sum(v => (v - m) * (v - m)) / (values.Count - 1) / values.Count);
        var t = StudentT.Quantile(1 - (1 - confidence) / 2, values.Count - 1);
        return new Interval(m, m - t * se, m + t * se) { Confidence = confidence };
    }

    /// <summary>
    /// A share of weight (matched over total) of a traced run's samples, with Wilson's interval on the number of draws
    /// the sampler made: the samples are taken at the sampler's times, so the share of this run is known to about a
    /// binomial's error. <paramref name="draws"/> is that number where the weights count it (an evented profile's spans,
    /// in ms of a 1 ms sampler: a 40 ms span is 40 draws of one stack); without it, Kish's effective number, (Σw)²/Σw²,
    /// so that samples of unequal weight count for less than their number. A program's phases (a long stretch of one
    /// call) are not noise: batches of consecutive samples, tried first, put the phases into the error and gave .NET's
    /// deserialize 57% [27%, 88%] from 319 samples of three runs; Kish's count of those spans, 59% [40%, 75%].
    /// </summary>
    public static Interval Share(IReadOnlyList<(double Matched, double Total)> samples, double confidence, double? draws = null)
    {
        double total = 0, matched = 0, squares = 0;
        foreach (var (m, t) in samples) (total, matched, squares) = (total + t, matched + m, squares + t * t);
        if (total <= 0) throw new ArgumentException("a share of no weight");
        var share = matched / total;
        var n = draws ?? total * total / squares;
        var z = StudentT.Quantile(1 - (1 - confidence) / 2, 1e6);
        var (low, high) = Wilson(share, n, z);
        return new Interval(share, low, high) { Confidence = confidence };
    }

    /// <summary>Wilson's score interval of a proportion p seen in n (possibly effective, so not whole) draws.</summary>
    public static (double Low, double High) Wilson(double p, double n, double z)
    {
        if (n <= 0) return (0, 1);
        var z2 = z * z;
        var centre = (p + z2 / (2 * n)) / (1 + z2 / n);
        var half = z / (1 + z2 / n) * Math.Sqrt(p * (1 - p) / n + z2 / (4 * n * n));
        return (Math.Max(0, centre - half), Math.Min(1, centre + half));
    }
}

/// <summary>Student's t distribution: its distribution function and quantiles, from the regularized incomplete beta.</summary>
public static class StudentT
{
    /// <summary>P(T ≤ t) on <paramref name="df"/> degrees of freedom.</summary>
    public static double Cdf(double t, double df)
    {
        if (df <= 0) throw new ArgumentOutOfRangeException(nameof(df));
        var tail = 0.5 * IncompleteBeta(df / 2, 0.5, df / (df + t * t));
        return t >= 0 ? 1 - tail : tail;
    }

    /// <summary>The t with P(T ≤ t) = p, by bisection on the distribution function (to 1e-10).</summary>
    public static double Quantile(double p, double df)
    {
        if (p is <= 0 or >= 1) throw new ArgumentOutOfRangeException(nameof(p));
        if (p < 0.5) return -Quantile(1 - p, df);
        double lo = 0, hi = 1;
        while (Cdf(hi, df) < p) hi *= 2;
        for (var i = 0; i < 200 && hi - lo > 1e-10; i++)
        {
            var mid = (lo + hi) / 2;
            if (Cdf(mid, df) < p) lo = mid; else hi = mid;
        }
        return (lo + hi) / 2;
    }

    /// <summary>The regularized incomplete beta I_x(a, b), by its continued fraction (modified Lentz).</summary>
    public static double IncompleteBeta(double a, double b, double x)
    {
        if (x <= 0) return 0;
        if (x >= 1) return 1;
        var front = Math.Exp(LogGamma(a + b) - LogGamma(a) - LogGamma(b) + a * Math.Log(x) + b * Math.Log(1 - x));
        // The fraction converges fast below the mean; above it, use the symmetry I_x(a, b) = 1 − I_{1−x}(b, a).
        return x < (a + 1) / (a + b + 2) ? front * Fraction(a, b, x) / a : 1 - front * Fraction(b, a, 1 - x) / b;
    }

    private static double Fraction(double a, double b, double x)
    {
        const double tiny = 1e-300;
        double c = 1, d = 1 - (a + b) * x / (a + 1);
        d = Math.Abs(d) < tiny ? 1 / tiny : 1 / d;
        var f = d;
        for (var m = 1; m <= 300; m++)
        {
            // The even step, then the odd step, of the fraction's terms.
            foreach (var num in new[] { m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)), -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)) })
            {
                d = 1 + num * d;
                d = Math.Abs(d) < tiny ? 1 / tiny : 1 / d;
                c = 1 + num / c;
                if (Math.Abs(c) < tiny) c = tiny;
                f *= c * d;
                if (num == 0) return f;
            }
            if (Math.Abs(c * d - 1) < 1e-15) break;
        }
        return f;
    }

    /// <summary>ln Γ(x) for x &gt; 0: Lanczos' approximation (g = 7, nine terms), good to about 15 digits.</summary>
    public static double LogGamma(double x)
    {
        if (x < 0.5) return Math.Log(Math.PI / Math.Abs(Math.Sin(Math.PI * x))) - LogGamma(1 - x);
        x -= 1;
        var sum = Lanczos[0];
        for (var i = 1; i < Lanczos.Length; i++) sum += Lanczos[i] / (x + i);
        var t = x + 7.5;
        return 0.5 * Math.Log(2 * Math.PI) + (x + 0.5) * Math.Log(t) - t + Math.Log(sum);
    }

    private static readonly double[] Lanczos =
    [
        0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
        12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
    ];
}
