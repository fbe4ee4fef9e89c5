using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

public class ComplexityFitTests
{
    [Theory]
    [InlineData(1.0)]
    [InlineData(1.5)]
    [InlineData(2.0)]
    [InlineData(0.5)]
    public void ExactPowerLawGivesItsExponent(double k)
    {
        var points = new[] { 1e4, 2e4, 5e4, 1e5, 4e5 }.Select(n => (n, 3e-9 * Math.Pow(n, k))).ToList();
        var fit = ComplexityFit.LogLog(points);
        Assert.Equal(k, fit.Exponent, 9);
        Assert.Equal(1.0, fit.R2, 9);
    }

    [Fact]
    public void NoisyQuadraticStaysNearTwoWithHighR2()
    {
        // Multiplicative noise of ±10%, as a busy host adds.
        double[] noise = [1.1, 0.9, 1.05, 0.95, 1.0];
        var points = new[] { 1e5, 2e5, 3e5, 4e5, 8e5 }.Select((n, i) => (n, 1e-10 * n * n * noise[i])).ToList();
        var fit = ComplexityFit.LogLog(points);
        Assert.InRange(fit.Exponent, 1.85, 2.15);
        Assert.InRange(fit.R2, 0.98, 1.0);
    }

    [Fact]
    public void ScatterLowersR2()
    {
        var fit = ComplexityFit.LogLog([(1e4, 1.0), (2e4, 0.2), (4e4, 3.0), (8e4, 0.5)]);
        Assert.True(fit.R2 < 0.5, $"r² {fit.R2}");
    }

    [Fact]
    public void MedianPairSlopeShrugsOffOneDisturbedRun()
    {
        // A quadratic series whose 300K point ran twice as slow as it should, as seen on a busy host.
        var points = new[] { 1e5, 2e5, 3e5, 4e5 }.Select(n => (n, 1e-10 * n * n)).ToList();
        points[2] = (points[2].n, points[2].Item2 * 2);
        var robust = ComplexityFit.MedianPairSlope(points);
        var ls = ComplexityFit.LogLog(points).Exponent;
        Assert.InRange(robust, 1.8, 2.6);
        Assert.True(Math.Abs(robust - 2) < Math.Abs(ls - 2) || Math.Abs(robust - 2) < 0.3, $"robust {robust}, least squares {ls}");
    }

    [Theory]
    [InlineData(1.0)]
    [InlineData(2.0)]
    public void MedianPairSlopeOfAnExactPowerLaw(double k) =>
        Assert.Equal(k, ComplexityFit.MedianPairSlope(new[] { 1e4, 3e4, 1e5 }.Select(n => (n, Math.Pow(n, k))).ToList()), 9);

    [Fact]
    public void FlatSeriesHasSlopeZero() =>
        Assert.Equal(0.0, ComplexityFit.LogLog([(1e3, 2.0), (1e4, 2.0), (1e5, 2.0)]).Exponent, 12);

    [Fact]
    public void RejectsUnusableInput()
    {
        Assert.Throws<ArgumentException>(() => ComplexityFit.LogLog([(1e3, 1.0)]));
        Assert.Throws<ArgumentException>(() => ComplexityFit.LogLog([(1e3, 1.0), (1e4, 0.0)]));
        Assert.Throws<ArgumentException>(() => ComplexityFit.LogLog([(1e3, 1.0), (1e3, 2.0)]));
    }
}
