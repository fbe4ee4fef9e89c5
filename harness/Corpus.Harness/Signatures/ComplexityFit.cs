namespace Corpus.Harness.Signatures;

/// <summary>Least-squares line through (log n, log t): the slope is the complexity exponent.</summary>
public sealed record ComplexityFit(double Exponent, double Intercept, double R2, int Points)
{
    public static ComplexityFit LogLog(IReadOnlyList<(double N, double Seconds)> points)
    {
        if (points.Count < 2) throw new ArgumentException("a slope needs at least two points");
        if (points.Any(p => p.N <= 0 || p.Seconds <= 0 || double.IsNaN(p.Seconds)))
            throw new ArgumentException("log-log fitting needs positive sizes and times");
        var xs = points.Select(p => Math.Log(p.N)).ToArray();
        var ys = points.Select(p => Math.Log(p.Seconds)).ToArray();
        double mx = xs.Average(), my = ys.Average();
        double sxx = 0, sxy = 0, syy = 0;
        for (var i = 0; i < xs.Length; i++)
        {
            sxx += (xs[i] - mx) * (xs[i] - mx);
            sxy += (xs[i] - mx) * (ys[i] - my);
            syy += (ys[i] - my) * (ys[i] - my);
        }
        if (sxx == 0) throw new ArgumentException("all sizes are equal");
        var slope = sxy / sxx;
        // A flat series (syy == 0) is perfectly explained by a zero slope.
        var r2 = syy == 0 ? 1.0 : sxy * sxy / (sxx * syy);
        return new ComplexityFit(slope, my - slope * mx, r2, points.Count);
    }

    /// <summary>
    /// Theil–Sen: the median of the slopes between every pair of points. One badly disturbed run moves a
    /// least-squares slope a lot and this one hardly at all, which matters on a shared 2-core machine.
    /// </summary>
    public static double MedianPairSlope(IReadOnlyList<(double N, double Seconds)> points)
    {
        var slopes = new List<double>();
        for (var i = 0; i < points.Count; i++)
            for (var j = i + 1; j < points.Count; j++)
                if (points[i].N != points[j].N)
                    slopes.Add((Math.Log(points[j].Seconds) - Math.Log(points[i].Seconds)) / (Math.Log(points[j].N) - Math.Log(points[i].N)));
        if (slopes.Count == 0) throw new ArgumentException("a slope needs two distinct sizes");
        slopes.Sort();
        var mid = slopes.Count / 2;
        return slopes.Count % 2 == 1 ? slopes[mid] : (slopes[mid - 1] + slopes[mid]) / 2;
    }

    /// <summary>
    /// Exponential growth: least squares through (n, log t). Exponent is then log(factor per unit of n), so
    /// <see cref="Factor"/> is how many times the time multiplies when n grows by one.
    /// </summary>
    public static ComplexityFit SemiLog(IReadOnlyList<(double N, double Seconds)> points)
    {
        // Fitting (e^n, t) on log-log axes is fitting (n, log t): reuse the same least squares.
        if (points.Any(p => p.N > 700)) throw new ArgumentException("exponential fits take sizes up to 700 (levels, not items)");
        return LogLog(points.Select(p => (Math.Exp(p.N), p.Seconds)).ToList());
    }

    /// <summary>Theil–Sen for exponential growth: the median over pairs of (t_j / t_i)^(1 / (n_j - n_i)).</summary>
    public static double MedianFactor(IReadOnlyList<(double N, double Seconds)> points) =>
        Math.Exp(MedianPairSlope(points.Select(p => (Math.Exp(p.N), p.Seconds)).ToList()));

    public double Factor => Math.Exp(Exponent);
}
