using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Tests;

public class GateTests
{
    private static Expectation Expect(Outcome o) => new(new CellKey("r", "c", "bug", "mono"), o, "because", null);

    [Fact]
    public void ReproducedWhereCleanWasExpectedIsARegression()
    {
        var (status, message) = CellResult.Compare(Outcome.Reproduced, Expect(Outcome.Clean));
        Assert.Equal(GateStatus.Regression, status);
        Assert.StartsWith("REGRESSION", message);
    }

    [Fact]
    public void CleanWhereReproducedWasExpectedIsAnXPass()
    {
        var (status, message) = CellResult.Compare(Outcome.Clean, Expect(Outcome.Reproduced));
        Assert.Equal(GateStatus.XPass, status);
        Assert.StartsWith("XPASS", message);
        Assert.Contains("because", message);
    }

    [Theory]
    [InlineData(Outcome.WrongFailure, Outcome.Reproduced)]
    [InlineData(Outcome.Error, Outcome.Clean)]
    [InlineData(Outcome.Unsupported, Outcome.Reproduced)]
    public void OtherDifferencesAreMismatches(Outcome actual, Outcome expected) =>
        Assert.Equal(GateStatus.Mismatch, CellResult.Compare(actual, Expect(expected)).Item1);

    [Fact]
    public void SameOutcomePasses() => Assert.Equal(GateStatus.Pass, CellResult.Compare(Outcome.Unsupported, Expect(Outcome.Unsupported)).Item1);

    [Fact]
    public void UserSubjectsAreReportedButNotGated() => Assert.Equal(GateStatus.Unchecked, CellResult.Compare(Outcome.Clean, null).Item1);
}
