using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

public class RaceStatisticsTests
{
    [Theory]
    // Reference values: 0/10 and 5/10 are the textbook Wilson intervals; 4/60 is the write-up's Mono rate.
    [InlineData(0, 10, 0.0, 0.2775)]
    [InlineData(5, 10, 0.2366, 0.7634)]
    [InlineData(4, 60, 0.0262, 0.1593)]
    [InlineData(1, 300, 0.0006, 0.0186)]
    [InlineData(10, 10, 0.7225, 1.0)]
    public void WilsonIntervalOnKnownInputs(int hits, int runs, double low, double high)
    {
        var r = RaceStatistics.Wilson(hits, runs);
        Assert.Equal(low, r.Low, 4);
        Assert.Equal(high, r.High, 4);
        Assert.InRange(r.Point, r.Low, r.High);
    }

    [Fact]
    public void NoRunsMeansNoKnowledge() => Assert.Equal((0.0, 1.0), (RaceStatistics.Wilson(0, 0).Low, RaceStatistics.Wilson(0, 0).High));

    [Fact]
    public void ImpossibleCountsAreRejected() =>
        Assert.Throws<ArgumentOutOfRangeException>(() => RaceStatistics.Wilson(3, 2));

    [Theory]
    [InlineData(0.01, 299)]
    [InlineData(0.05, 59)]
    [InlineData(0.1, 29)]
    public void RunsForCleanFollowTheRuleOfThree(double epsilon, int runs)
    {
        Assert.Equal(runs, RaceStatistics.RunsForClean(epsilon));
        Assert.True(RaceStatistics.UpperBoundAfterZeroHits(runs) <= epsilon);
        Assert.True(RaceStatistics.UpperBoundAfterZeroHits(runs - 1) > epsilon);
    }

    [Fact]
    public void RateFormatsWithItsInterval() =>
        Assert.Equal("4/60 = 6.7% (95% CI 2.62%–15.93%)", RaceStatistics.Wilson(4, 60).ToString());
}
