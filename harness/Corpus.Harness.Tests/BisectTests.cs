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

    /// <summary>
    /// The repro's own subjects, in version order, with the outcomes expected/ records for them (each measured): the
    /// first fixed compiler in the NuGet copy is 4.11.0, not 4.14.0.
    /// </summary>
    [Fact]
    public async Task FindsTheVersionThatFixedTheNestedAttributeBlowup()
    {
        var entry = Catalog.Load(RoslynTriggerTests.Root).Entries.Single(e => e.Manifest.Id == "roslyn-nested-attribute-blowup");
        var outcomes = entry.Expected.ToDictionary(e => e.Key.Subject, e => e.Outcome);
        var subjects = SubjectOrder.ByVersion(entry.Manifest.Subjects)!.Where(s => s != "roslyn:3.6.0").ToList();
        Assert.Equal(["roslyn:4.3.1", "roslyn:4.5.0", "roslyn:4.8.0", "roslyn:4.11.0", "roslyn:4.14.0", "roslyn:5.0.0", "roslyn:5.9.0", "roslyn:5.12.0"],
                     subjects);
        var probed = new List<string>();
        var notes = new List<string>();
        var r = await Bisect.RunAsync(subjects, Fake(outcomes, probed), say: notes.Add);
        Assert.True(r.Found);
        Assert.Equal(("roslyn:4.8.0", "roslyn:4.11.0"), (r.Before, r.After));
        Assert.Equal("last reproduced: roslyn:4.8.0; first clean: roslyn:4.11.0", r.Verdict);
        Assert.Equal("ends checked: roslyn:4.3.1 reproduced, roslyn:5.12.0 clean: they differ", notes[0]);
        // Both ends, then halving: 4.11.0 (the middle), 4.5.0, then 4.8.0.
        Assert.Equal(["roslyn:4.3.1", "roslyn:5.12.0", "roslyn:4.11.0", "roslyn:4.5.0", "roslyn:4.8.0"], probed);
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

    /// <summary>As mozregression checks its good and bad builds: ends with one outcome are refused before any bisecting.</summary>
    [Fact]
    public async Task SameOutcomeAtBothEndsIsRefused()
    {
        var outcomes = Roslyn.ToDictionary(s => s, _ => Outcome.Clean);
        var probed = new List<string>();
        var r = await Bisect.RunAsync(Roslyn, Fake(outcomes, probed));
        Assert.False(r.Found);
        Assert.Equal("no change: the ends roslyn:4.3.1 and roslyn:5.12.0 are both clean, so there is nothing to bisect "
                     + "(one end must be reproduced and the other clean)", r.Verdict);
        Assert.Equal(["roslyn:4.3.1", "roslyn:5.12.0"], probed);
        Assert.Null(r.Before);
    }

    /// <summary>An end that cannot be provisioned (unsupported) or built (error) is skipped, said so, and its neighbour becomes the end.</summary>
    [Fact]
    public async Task AnEndThatCannotBeJudgedIsSkippedForItsNeighbour()
    {
        var outcomes = new Dictionary<string, Outcome>
        {
            ["roslyn:4.3.1"] = Outcome.Unsupported, ["roslyn:4.5.0"] = Outcome.Reproduced, ["roslyn:4.8.0"] = Outcome.Reproduced,
            ["roslyn:4.14.0"] = Outcome.Clean, ["roslyn:5.12.0"] = Outcome.Error,
        };
        var probed = new List<string>();
        var notes = new List<string>();
        var r = await Bisect.RunAsync(Roslyn, Fake(outcomes, probed), say: notes.Add);
        Assert.True(r.Found);
        Assert.Equal(("roslyn:4.8.0", "roslyn:4.14.0"), (r.Before, r.After));
        Assert.Equal(["roslyn:4.3.1", "roslyn:4.5.0", "roslyn:5.12.0", "roslyn:4.14.0", "roslyn:4.8.0"], probed);
        Assert.Contains("skipped roslyn:4.3.1 (unsupported): it cannot be judged; trying its neighbour roslyn:4.5.0", notes);
        Assert.Contains("skipped roslyn:5.12.0 (error): it cannot be judged; trying its neighbour roslyn:4.14.0", notes);
        Assert.EndsWith("(roslyn:4.3.1, roslyn:5.12.0 skipped: could not be judged)", r.Verdict);
    }

    [Fact]
    public async Task EndsThatCannotBeJudgedAnywhereAreInconclusive()
    {
        var outcomes = Roslyn.ToDictionary(s => s, s => s == "roslyn:4.3.1" ? Outcome.Clean : Outcome.Unsupported);
        var r = await Bisect.RunAsync(Roslyn, Fake(outcomes, []));
        Assert.False(r.Found);
        Assert.StartsWith("inconclusive: the ends must be reproduced or clean, got roslyn:4.3.1 clean and roslyn:4.5.0 unsupported", r.Verdict);
    }

    [Fact]
    public async Task NeedsTwoDistinctSubjects()
    {
        await Assert.ThrowsAsync<ArgumentException>(() => Bisect.RunAsync(["a"], Fake(new Dictionary<string, Outcome>(), [])));
        await Assert.ThrowsAsync<ArgumentException>(() => Bisect.RunAsync(["a", "a"], Fake(new Dictionary<string, Outcome>(), [])));
    }
}
