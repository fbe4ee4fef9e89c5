using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Tests;

/// <summary>Bisect over fake outcomes: which subjects it probes, and what it concludes.</summary>
public class BisectTests
{
    private static readonly string[] Roslyn = ["roslyn:4.3.1", "roslyn:4.5.0", "roslyn:4.8.0", "roslyn:4.14.0", "roslyn:5.12.0"];

    private static Func<string, Task<(Outcome, string)>> Fake(IReadOnlyDictionary<string, Outcome> outcomes, List<string> probed) =>
        s =>
        {
            probed.Add(s);
            return Task.FromResult((outcomes[s], $"fake {outcomes[s].Name()}"));
        };

    [Fact]
    public async Task FindsTheVersionThatFixedTheNestedAttributeBlowup()
    {
        var outcomes = new Dictionary<string, Outcome>
        {
            ["roslyn:4.3.1"] = Outcome.Reproduced, ["roslyn:4.5.0"] = Outcome.Reproduced, ["roslyn:4.8.0"] = Outcome.Reproduced,
            ["roslyn:4.14.0"] = Outcome.Clean, ["roslyn:5.12.0"] = Outcome.Clean,
        };
        var probed = new List<string>();
        var r = await Bisect.RunAsync(Roslyn, Fake(outcomes, probed));
        Assert.True(r.Found);
        Assert.Equal(("roslyn:4.8.0", "roslyn:4.14.0"), (r.Before, r.After));
        Assert.Equal("last reproduced: roslyn:4.8.0; first clean: roslyn:4.14.0", r.Verdict);
        // Both ends, then halving: 4.8.0 (the middle), then 4.14.0; 4.5.0 is never run.
        Assert.Equal(["roslyn:4.3.1", "roslyn:5.12.0", "roslyn:4.8.0", "roslyn:4.14.0"], probed);
        Assert.Equal(4, r.Probes.Count);
    }

    [Fact]
    public async Task FindsARegressionTheOtherWayRound()
    {
        var list = Enumerable.Range(0, 16).Select(i => $"v{i}").ToList();
        var outcomes = list.ToDictionary(s => s, s => int.Parse(s[1..]) >= 11 ? Outcome.Reproduced : Outcome.Clean);
        var probed = new List<string>();
        var r = await Bisect.RunAsync(list, Fake(outcomes, probed));
        Assert.Equal(("v10", "v11"), (r.Before, r.After));
        Assert.Equal("last clean: v10; first reproduced: v11", r.Verdict);
        // log2(16) = 4 halvings after the two ends.
        Assert.True(probed.Count <= 6, string.Join(", ", probed));
    }

    [Fact]
    public async Task SkipsAProbeThatCannotBeJudgedAndTriesItsNeighbour()
    {
        var outcomes = new Dictionary<string, Outcome>
        {
            ["roslyn:4.3.1"] = Outcome.Reproduced, ["roslyn:4.5.0"] = Outcome.Reproduced, ["roslyn:4.8.0"] = Outcome.Unsupported,
            ["roslyn:4.14.0"] = Outcome.Clean, ["roslyn:5.12.0"] = Outcome.Clean,
        };
        var probed = new List<string>();
        var r = await Bisect.RunAsync(Roslyn, Fake(outcomes, probed));
        Assert.False(r.Found);
        Assert.Equal(("roslyn:4.5.0", "roslyn:4.14.0"), (r.Before, r.After));
        Assert.Equal(["roslyn:4.8.0"], r.Skipped);
        Assert.Contains("roslyn:4.8.0 could not be judged", r.Verdict);
    }

    [Fact]
    public async Task SameOutcomeAtBothEndsIsNoChange()
    {
        var outcomes = Roslyn.ToDictionary(s => s, _ => Outcome.Clean);
        var r = await Bisect.RunAsync(Roslyn, Fake(outcomes, []));
        Assert.False(r.Found);
        Assert.StartsWith("no change", r.Verdict);
        Assert.Equal(2, r.Probes.Count);
    }

    [Fact]
    public async Task AnEndThatCannotBeJudgedIsInconclusive()
    {
        var outcomes = Roslyn.ToDictionary(s => s, s => s == "roslyn:4.3.1" ? Outcome.Error : Outcome.Clean);
        var r = await Bisect.RunAsync(Roslyn, Fake(outcomes, []));
        Assert.False(r.Found);
        Assert.StartsWith("inconclusive", r.Verdict);
    }

    [Fact]
    public async Task NeedsTwoDistinctSubjects()
    {
        await Assert.ThrowsAsync<ArgumentException>(() => Bisect.RunAsync(["a"], Fake(new Dictionary<string, Outcome>(), [])));
        await Assert.ThrowsAsync<ArgumentException>(() => Bisect.RunAsync(["a", "a"], Fake(new Dictionary<string, Outcome>(), [])));
    }
}
