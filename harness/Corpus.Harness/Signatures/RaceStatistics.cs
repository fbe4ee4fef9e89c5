namespace Corpus.Harness.Signatures;

/// <summary>A reproduction rate with its 95% Wilson score interval.</summary>
public sealed record Rate(int Hits, int Runs, double Low, double High)
{
    public double Point => Runs == 0 ? 0 : (double)Hits / Runs;
    public override string ToString() =>
        FormattableString.Invariant($"{Hits}/{Runs} = {Point * 100:0.0}% (95% CI {Low * 100:0.00}%–{High * 100:0.00}%)");
}

/// <summary>Races are statistics: rates with intervals, and how many clean runs make "clean" mean something.</summary>
public static class RaceStatistics
{
    public const double Z95 = 1.959963984540054;

    /// <summary>Wilson score interval; unlike the normal approximation it behaves at 0 and n hits.</summary>
    public static Rate Wilson(int hits, int runs, double z = Z95)
    {
        if (runs < 0 || hits < 0 || hits > runs) throw new ArgumentOutOfRangeException(nameof(hits), $"{hits}/{runs}");
        if (runs == 0) return new Rate(0, 0, 0, 1);
        double n = runs, p = hits / n, z2 = z * z;
        var centre = (p + z2 / (2 * n)) / (1 + z2 / n);
        var half = z / (1 + z2 / n) * Math.Sqrt(p * (1 - p) / n + z2 / (4 * n * n));
        // At the edges the interval touches 0 or 1 exactly; rounding must not push it past.
        var low = hits == 0 ? 0 : Math.Max(0, centre - half);
        var high = hits == runs ? 1 : Math.Min(1, centre + half);
        return new Rate(hits, runs, low, high);
    }

    /// <summary>
    /// Clean runs needed so that a true rate of epsilon or more would have shown at least one hit with
    /// 95% confidence: the smallest n with (1 - epsilon)^n ≤ 0.05 (about 3/epsilon, the rule of three).
    /// </summary>
    public static int RunsForClean(double epsilon, double confidence = 0.95)
    {
        if (epsilon is <= 0 or >= 1) throw new ArgumentOutOfRangeException(nameof(epsilon));
        return (int)Math.Ceiling(Math.Log(1 - confidence) / Math.Log(1 - epsilon));
    }

    /// <summary>The exact one-sided upper bound on the rate after zero hits in n runs: 1 - 0.05^(1/n).</summary>
    public static double UpperBoundAfterZeroHits(int runs, double confidence = 0.95) =>
        runs == 0 ? 1 : 1 - Math.Pow(1 - confidence, 1.0 / runs);
}
