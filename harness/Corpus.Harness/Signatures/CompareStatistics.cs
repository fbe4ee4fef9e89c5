namespace Corpus.Harness.Signatures;

/// <summary>An estimate with its interval: 95% unless <see cref="Confidence"/> says the data give less.</summary>
public sealed record Interval(double Value, double Low, double High)
{
    /// <summary>The interval's confidence: 0.95 unless the data cannot give that much (4 sizes of a sweep).</summary>
    public double Confidence { get; init; } = 0.95;

    public bool Contains(double x) => Low <= x && x <= High;
    public override string ToString() => FormattableString.Invariant($"{Value:0.###} [{Low:0.###}, {High:0.###}]");
}

/// <summary>
/// The statistics of `corpus compare`: Fisher's exact test for two rates, Sen's distribution-free interval of the
/// median pair slope (Theil–Sen) for sweeps, and a Welch interval of a ratio of per-run figures.
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

    /// <summary>
    /// The median pair slope (Theil–Sen, as the complexity verdict) with Sen's distribution-free interval: the pair
    /// slopes ordered, k trimmed from each end, where the number of pair slopes below the true slope is Kendall's
    /// count of inversions (Mahonian) whenever the errors are independent and alike. The interval is the narrowest
    /// whose confidence is at least 95%; 4 sizes cannot reach that (all 6 slopes give 1 − 2/4! = 91.7%), and the
    /// confidence is then what they can give, and says so. A percentile bootstrap over the same 6 pair slopes was
    /// measured to hold the true slope in only 80–85% of synthetic sweeps, so it is not used.
    /// </summary>
    public static Interval SenSlope(IReadOnlyList<(double N, double Y)> points, bool exponential)
    {
        var slopes = PairSlopes(points, exponential);
        if (slopes.Count == 0) throw new ArgumentException("a slope needs two distinct sizes");
        slopes.Sort();
        var n = points.Select(p => p.N).Distinct().Count();
        var cdf = InversionCdf(n);
        // Trimming k slopes from each end misses the truth below with P(inversions ≤ k), and as often above.
        var k = 0;
        while (k + 1 < cdf.Length && slopes.Count - 2 * (k + 1) >= 1 && 1 - 2 * cdf[k + 1] >= 0.95) k++;
        var confidence = 1 - 2 * cdf[k];
        return new Interval(Median(slopes), slopes[k], slopes[^(k + 1)]) { Confidence = Math.Round(confidence, 4) };
    }

    /// <summary>P(inversions ≤ k) of a random permutation of n, for k = 0 … n(n−1)/2 (the Mahonian numbers over n!).</summary>
    public static double[] InversionCdf(int n)
    {
        var counts = new double[] { 1 };
        for (var m = 2; m <= n; m++)
        {
            // Inserting the m-th element adds 0 … m−1 inversions.
            var next = new double[counts.Length + m - 1];
            for (var i = 0; i < counts.Length; i++)
                for (var add = 0; add < m; add++) next[i + add] += counts[i];
            counts = next;
        }
        var total = counts.Sum();
        var cdf = new double[counts.Length];
        double run = 0;
        for (var i = 0; i < counts.Length; i++) cdf[i] = (run += counts[i]) / total;
        return cdf;
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

    /// <summary>
    /// The geometric mean of a per-run figure with its 95% t interval on the logarithms; from one run, the value alone
    /// (confidence 0: one run gives no interval).
    /// </summary>
    public static Interval GeometricMean(IReadOnlyList<double> xs)
    {
        var logs = xs.Where(x => x > 0).Select(x => Math.Log(x)).ToList();
        if (logs.Count == 0) throw new ArgumentException("a geometric mean needs a positive value");
        var m = logs.Average();
        if (logs.Count == 1) return new Interval(Math.Exp(m), Math.Exp(m), Math.Exp(m)) { Confidence = 0 };
        var se = Math.Sqrt(logs.Sum(x => (x - m) * (x - m)) / (logs.Count - 1) / logs.Count);
        var t = StudentT975(logs.Count - 1);
        return new Interval(Math.Exp(m), Math.Exp(m - t * se), Math.Exp(m + t * se));
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
