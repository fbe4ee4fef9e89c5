namespace Corpus.Harness.Signatures;

/// <summary>An estimate with its 95% interval.</summary>
public sealed record Interval(double Value, double Low, double High)
{
    public bool Contains(double x) => Low <= x && x <= High;
    public override string ToString() => FormattableString.Invariant($"{Value:0.###} [{Low:0.###}, {High:0.###}]");
}

/// <summary>
/// The statistics of `corpus compare`: Fisher's exact test for two rates, a seeded bootstrap of the median pair
/// slope (Theil–Sen) for sweeps, and a Welch interval of a ratio of per-run figures.
/// </summary>
public static class CompareStatistics
{
    /// <summary>
    /// Two-sided Fisher's exact test of hits1/runs1 against hits2/runs2: the probability, with the margins fixed, of a
    /// table no more likely than the one seen (the usual two-sided definition, as R's fisher.test).
    /// </summary>
    public static double FisherExact(int hits1, int runs1, int hits2, int runs2)
    {
        if (hits1 < 0 || hits2 < 0 || hits1 > runs1 || hits2 > runs2) throw new ArgumentOutOfRangeException(nameof(hits1), $"{hits1}/{runs1}, {hits2}/{runs2}");
        int hits = hits1 + hits2, n = runs1 + runs2;
        if (n == 0) return 1;
        var logFact = new double[n + 1];
        for (var i = 2; i <= n; i++) logFact[i] = logFact[i - 1] + Math.Log(i);
        // P(X = x) for x hits in the first group: hypergeometric.
        double LogP(int x) => logFact[hits] + logFact[n - hits] + logFact[runs1] + logFact[runs2]
                              - logFact[n] - logFact[x] - logFact[hits - x] - logFact[runs1 - x] - logFact[runs2 - hits + x];
        var seen = LogP(hits1);
        double p = 0;
        for (int x = Math.Max(0, hits - runs2), hi = Math.Min(hits, runs1); x <= hi; x++)
        {
            var lp = LogP(x);
            // A relative tolerance, so tables exactly as likely as the one seen are not lost to rounding.
            if (lp <= seen + 1e-7) p += Math.Exp(lp);
        }
        return Math.Min(1, p);
    }

    /// <summary>Slopes between every pair of points: of log(y) against log(n) (power), or against n (exponential).</summary>
    public static List<double> PairSlopes(IReadOnlyList<(double N, double Y)> points, bool exponential)
    {
        var slopes = new List<double>();
        for (var i = 0; i < points.Count; i++)
            for (var j = i + 1; j < points.Count; j++)
            {
                var (a, b) = (points[i], points[j]);
                if (a.N == b.N || a.Y <= 0 || b.Y <= 0) continue;
                var dx = exponential ? b.N - a.N : Math.Log(b.N) - Math.Log(a.N);
                slopes.Add((Math.Log(b.Y) - Math.Log(a.Y)) / dx);
            }
        return slopes;
    }

    public static double Median(IReadOnlyList<double> xs)
    {
        if (xs.Count == 0) throw new ArgumentException("the median of nothing");
        var s = xs.Order().ToList();
        return s.Count % 2 == 1 ? s[s.Count / 2] : (s[s.Count / 2 - 1] + s[s.Count / 2]) / 2;
    }

    public const int BootstrapDraws = 4000;

    /// <summary>
    /// The median pair slope and a 95% percentile bootstrap interval: the pair slopes resampled with replacement,
    /// the median of each resample. Seeded, so the same points always give the same interval.
    /// </summary>
    public static (Interval Slope, double[] Draws) BootstrapSlope(IReadOnlyList<(double N, double Y)> points, bool exponential, int seed)
    {
        var slopes = PairSlopes(points, exponential);
        if (slopes.Count == 0) throw new ArgumentException("a slope needs two distinct sizes");
        var random = new Random(seed);
        var draws = new double[BootstrapDraws];
        var sample = new double[slopes.Count];
        for (var d = 0; d < draws.Length; d++)
        {
            for (var i = 0; i < sample.Length; i++) sample[i] = slopes[random.Next(slopes.Count)];
            draws[d] = Median(sample);
        }
        Array.Sort(draws);
        return (new Interval(Median(slopes), Percentile(draws, 0.025), Percentile(draws, 0.975)), draws);
    }

    /// <summary>The difference of two bootstrap distributions drawn independently: its 95% interval.</summary>
    public static Interval Difference(double a, double[] drawsA, double b, double[] drawsB, int seed)
    {
        var random = new Random(seed);
        var diff = new double[Math.Min(drawsA.Length, drawsB.Length)];
        for (var i = 0; i < diff.Length; i++) diff[i] = drawsB[random.Next(drawsB.Length)] - drawsA[random.Next(drawsA.Length)];
        Array.Sort(diff);
        return new Interval(b - a, Percentile(diff, 0.025), Percentile(diff, 0.975));
    }

    public static double Percentile(double[] sorted, double q)
    {
        var pos = q * (sorted.Length - 1);
        var lo = (int)Math.Floor(pos);
        var hi = Math.Min(lo + 1, sorted.Length - 1);
        return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
    }

    /// <summary>
    /// The ratio of geometric means new/base of a per-run figure (a time, a peak), with a 95% Welch interval on
    /// the logarithms. Needs at least two positive values on each side; null otherwise.
    /// </summary>
    public static Interval? Ratio(IReadOnlyList<double> @base, IReadOnlyList<double> @new)
    {
        var a = @base.Where(x => x > 0).Select(x => Math.Log(x)).ToList();
        var b = @new.Where(x => x > 0).Select(x => Math.Log(x)).ToList();
        if (a.Count < 2 || b.Count < 2) return null;
        double ma = a.Average(), mb = b.Average();
        double va = a.Sum(x => (x - ma) * (x - ma)) / (a.Count - 1), vb = b.Sum(x => (x - mb) * (x - mb)) / (b.Count - 1);
        double sa = va / a.Count, sb = vb / b.Count, se = Math.Sqrt(sa + sb);
        var diff = mb - ma;
        if (se == 0) return new Interval(Math.Exp(diff), Math.Exp(diff), Math.Exp(diff));
        // Welch–Satterthwaite degrees of freedom, rounded down (a wider, safer interval).
        var df = (sa + sb) * (sa + sb) / (sa * sa / (a.Count - 1) + sb * sb / (b.Count - 1));
        var t = StudentT975((int)Math.Max(1, Math.Floor(df)));
        return new Interval(Math.Exp(diff), Math.Exp(diff - t * se), Math.Exp(diff + t * se));
    }

    private static readonly double[] T975 =
    [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];

    /// <summary>The 97.5% quantile of Student's t (two-sided 95%); the normal's beyond 30 degrees of freedom is within 2%.</summary>
    public static double StudentT975(int df) => df < 1 ? throw new ArgumentOutOfRangeException(nameof(df))
        : df <= T975.Length ? T975[df - 1] : df <= 60 ? 2.000 : df <= 120 ? 1.980 : RaceStatistics.Z95;
}
