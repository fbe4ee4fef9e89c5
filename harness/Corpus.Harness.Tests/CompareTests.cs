using System.Text.Json;
using System.Xml.Linq;
using Corpus.Harness.Model;
using Corpus.Harness.Report;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>The statistics of `corpus compare`: exact values, intervals that hold the truth on data made to know it.</summary>
public sealed class CompareStatisticsTests
{
    [Theory]
    // R: fisher.test(matrix(c(3,1,1,3), 2))$p.value, the lady tasting tea.
    [InlineData(3, 4, 1, 4, 0.4857143)]
    // R: fisher.test(matrix(c(1,9,11,3), 2))$p.value.
    [InlineData(1, 12, 9, 12, 0.002759456)]
    // 0 of 10 against 5 of 10: 2 × C(10,5)/C(20,5) = 2 × 252/15504.
    [InlineData(0, 10, 5, 10, 0.0325077)]
    [InlineData(5, 10, 5, 10, 1.0)]
    [InlineData(0, 59, 0, 59, 1.0)]
    public void FishersExactTestGivesTheKnownP(int h1, int n1, int h2, int n2, double p)
    {
        Assert.Equal(p, CompareStatistics.FisherExact(h1, n1, h2, n2), 6);
        Assert.Equal(p, CompareStatistics.FisherExact(h2, n2, h1, n1), 6);   // symmetric in the two groups
    }

    [Fact]
    public void FishersExactTestRefusesImpossibleCounts() =>
        Assert.Throws<ArgumentOutOfRangeException>(() => CompareStatistics.FisherExact(5, 4, 0, 4));

    /// <summary>t = c · n^truth · e^noise, noise ~ N(0, sd²), seeded: a sweep whose true exponent is known.</summary>
    private static List<(double N, double Y)> Sweep(double exponent, int seed, double sd = 0.05, int sizes = 4)
    {
        var random = new Random(seed);
        return Enumerable.Range(0, sizes).Select(i => 50_000.0 * Math.Pow(2, i)).Select(n =>
        {
            var z = Math.Sqrt(-2 * Math.Log(1 - random.NextDouble())) * Math.Cos(2 * Math.PI * random.NextDouble());
            return (n, 1e-9 * Math.Pow(n, exponent) * Math.Exp(sd * z));
        }).ToList();
    }

    [Theory]
    // 4 sizes: all 6 pair slopes, 1 − 2/4! = 91.7% (the most 4 sizes give); 6 sizes: 95% or more.
    [InlineData(1.5, 4, 0.9167, 880)]
    [InlineData(1.0, 4, 0.9167, 880)]
    [InlineData(2.0, 6, 0.9833, 950)]
    public void SensIntervalHoldsTheTrueExponentAsOftenAsItSays(double truth, int sizes, double confidence, int atLeast)
    {
        var intervals = Enumerable.Range(0, 1000).Select(seed => CompareStatistics.SenSlope(Sweep(truth, seed, sizes: sizes), false)).ToList();
        Assert.All(intervals, i => Assert.Equal(confidence, i.Confidence, 4));
        var held = intervals.Count(i => i.Contains(truth));
        Assert.True(held >= atLeast, $"{held} of 1000 intervals hold {truth}");
        // It can miss: a linear sweep's interval never holds 1.5.
        Assert.DoesNotContain(Enumerable.Range(0, 1000), seed => CompareStatistics.SenSlope(Sweep(1.0, seed, sizes: sizes), false).Contains(1.5));
    }

    [Fact]
    public void KendallsInversionCountsAreTheMahonianNumbers()
    {
        // Permutations of 4 by inversions: 1, 3, 5, 6, 5, 3, 1 of 24.
        var cdf = CompareStatistics.InversionCdf(4);
        Assert.Equal([1 / 24.0, 4 / 24.0, 9 / 24.0, 15 / 24.0, 20 / 24.0, 23 / 24.0, 1], cdf.Select(x => Math.Round(x, 12)).ToArray(),
                     new ToleranceComparer(1e-12));
    }

    private sealed class ToleranceComparer(double tolerance) : IEqualityComparer<double>
    {
        public bool Equals(double a, double b) => Math.Abs(a - b) <= tolerance;
        public int GetHashCode(double d) => 0;
    }

    [Fact]
    public void AtFourSizesTheIntervalSpansEveryPairSlope()
    {
        var points = Sweep(1.9, 7, 0.1);
        var slopes = CompareStatistics.PairSlopes(points, false);
        var i = CompareStatistics.SenSlope(points, false);
        Assert.Equal((slopes.Min(), slopes.Max(), CompareStatistics.Median(slopes)), (i.Low, i.High, i.Value));
    }

    [Fact]
    public void ExponentialSlopesAreAgainstNNotLogN()
    {
        // Doubling per level: every pair's log slope is ln 2.
        var points = Enumerable.Range(10, 5).Select(n => ((double)n, Math.Pow(2, n) * 1e-3)).ToList();
        var slope = CompareStatistics.SenSlope(points, true);
        Assert.Equal(Math.Log(2), slope.Value, 9);
        Assert.Equal(Math.Log(2), slope.Low, 9);
    }

    [Fact]
    public void TheRatioOfTwiceTheTimeIsTwoAndExcludesOne()
    {
        var r = CompareStatistics.Ratio([1.0, 1.1, 0.9], [2.0, 2.2, 1.8])!;
        Assert.Equal(2, r.Value, 9);
        Assert.True(r.Low > 1 && r.High < 4, r.ToString());
        var same = CompareStatistics.Ratio([1.0, 1.3, 0.8], [1.1, 0.9, 1.2])!;
        Assert.True(same.Contains(1), same.ToString());
        Assert.Null(CompareStatistics.Ratio([1.0], [2.0, 2.1]));
    }

    [Fact]
    public void TheGeometricMeanOfRunsHasAnIntervalFromTwoRunsOn()
    {
        var g = CompareStatistics.GeometricMean([2.0, 8.0]);
        Assert.Equal(4, g.Value, 9);
        // Two runs: 1 degree of freedom (t = 12.7), so the interval is wide and holds both runs.
        Assert.True(g.Low < 2 && g.High > 8, g.ToString());
        Assert.Equal(0, CompareStatistics.GeometricMean([5.0]).Confidence);
    }

    [Theory]
    [InlineData(1, 12.706)]
    [InlineData(2, 4.303)]
    [InlineData(30, 2.042)]
    [InlineData(1000, 1.96)]
    public void StudentsTQuantile(int df, double t) => Assert.Equal(t, CompareStatistics.StudentT975(df), 2);
}

/// <summary>Each comparison verdict from fabricated family verdicts, through the families' own Compare.</summary>
public sealed class CompareVerdictTests
{
    private static ISignatureFamily Family(string key) => SignatureFamilies.Default.Families.Single(f => f.Key == key);

    private static Verdict Process(Outcome o, double wall = 1.0, double peak = 50) =>
        new(o, o.Name()) { Facts = new ProcessFacts("exit 0", wall, peak, null, ProgramMetrics.None) };

    private static Verdict Race(Outcome o, int hits, int runs, double epsilon = 0.05) =>
        new(o, $"{hits}/{runs}") { Facts = new RaceFacts(hits, runs, (double)hits / runs, [0, 1], runs, null, epsilon, 1, 0.1, null, "RUNS") };

    private static Verdict Sweep(Outcome o, double exponent, int seed = 1)
    {
        var random = new Random(seed);
        var points = new[] { 50_000.0, 100_000, 200_000, 400_000 }
            .Select(n => new[] { n, 1e-8 * Math.Pow(n, exponent) * (1 + 0.03 * (random.NextDouble() - 0.5)) }).ToList();
        return new(o, $"exponent {exponent}")
            { Facts = new ComplexityFacts(ComplexitySpec.Power, "deserialize_s", "books", points, exponent, exponent, 0.99, 1.7, 1.3) };
    }

    private static CellComparison C(string family, Verdict b, Verdict n) => Family(family).Compare([b], [n]);

    [Fact]
    public void Fixed() =>
        Assert.Equal(CompareVerdict.Fixed, C("process", Process(Outcome.Reproduced), Process(Outcome.Clean)).Verdict);

    [Fact]
    public void RegressedWithBothExponentsAndTheirIntervals()
    {
        var c = C("complexity", Sweep(Outcome.Clean, 1.0), Sweep(Outcome.Reproduced, 1.95));
        Assert.Equal(CompareVerdict.Regressed, c.Verdict);
        var exponent = Assert.Single(c.Figures);
        Assert.Equal("exponent", exponent.Name);
        Assert.True(exponent.Base!.Contains(1.0) && exponent.New!.Contains(1.95), exponent.ToString());
        Assert.True(exponent.Differs);
        Assert.Equal(PlotScale.LogLog, c.Plot);
    }

    [Fact]
    public void CleanToAnotherFailureIsARegressionToo() =>
        Assert.Equal(CompareVerdict.Regressed, C("process", Process(Outcome.Clean), Process(Outcome.WrongFailure)).Verdict);

    [Fact]
    public void UnchangedAndChangedBySlope()
    {
        Assert.Equal(CompareVerdict.Unchanged, C("complexity", Sweep(Outcome.Reproduced, 1.9), Sweep(Outcome.Reproduced, 1.9, 2)).Verdict);
        var c = C("complexity", Sweep(Outcome.Reproduced, 1.8), Sweep(Outcome.Reproduced, 2.6));
        Assert.Equal(CompareVerdict.Changed, c.Verdict);
        Assert.Contains("exponent moved", c.Detail);
    }

    [Fact]
    public void ChangedByTimeOverRounds()
    {
        var family = Family("process");
        Verdict[] fast = [Process(Outcome.Clean, 1.0), Process(Outcome.Clean, 1.1), Process(Outcome.Clean, 0.95)];
        Verdict[] slow = [Process(Outcome.Clean, 3.0), Process(Outcome.Clean, 3.2), Process(Outcome.Clean, 2.9)];
        var c = family.Compare(fast, slow);
        Assert.Equal(CompareVerdict.Changed, c.Verdict);
        var wall = c.Figures.Single(f => f.Name == "wall s");
        Assert.Equal("ratio", wall.Effect);
        Assert.True(wall.Change!.Low > 1, wall.ToString());
        Assert.Equal(CompareVerdict.Unchanged, family.Compare(fast, [Process(Outcome.Clean, 1.05), Process(Outcome.Clean, 0.98), Process(Outcome.Clean, 1.02)]).Verdict);
    }

    /// <summary>
    /// Issue 35 item 4: idgen-limit's peak memory on net:8.0.0 → 8.0.34, 2,745–2,795 MB → 2,211 MB in every round (ratio
    /// 0.79–0.80). A fixed ×1.25 floor sat on it and the verdict flipped between compares; the floor is now the noise the
    /// runs showed, ×1.018 here, and the verdict is the same every time.
    /// </summary>
    [Fact]
    public void AFigureThatDoesNotVaryHasNoFixedFloorToClear()
    {
        var memory = Comparisons.RatioOf("peak MB", [2745, 2770, 2795], [2211, 2211, 2211])!;
        Assert.True(memory.Differs, memory.ToString());
        Assert.Contains("noise ×1.018", memory.Note);
        Assert.True(Comparisons.RatioOf("peak MB", [2750, 2795], [2211, 2212])!.Differs);
        // A time the host moved by a third does not differ by a fifth, however narrow the interval of the means.
        var wall = Comparisons.RatioOf("wall s", [40, 46, 54, 41, 53], [48, 49, 52, 55, 50])!;
        Assert.False(wall.Differs, wall.ToString());
    }

    [Fact]
    public void AHangThatGrewLongerIsChangedWithTheRatioOfItsBlock()
    {
        static Verdict Hang(double ms) => new(Outcome.Reproduced, $"{ms} ms")
            { Facts = new HangFacts("SendMessage", ms, null, 20, ms, ms, [], []) };
        var c = Family("hang").Compare([Hang(5020), Hang(4990), Hang(5050)], [Hang(8010), Hang(8100), Hang(7950)]);
        Assert.Equal(CompareVerdict.Changed, c.Verdict);
        var block = Assert.Single(c.Figures);
        Assert.Equal("UI block ms", block.Name);
        Assert.True(block.Change!.Contains(1.6) && !block.Change.Contains(1), block.ToString());
    }

    [Fact]
    public void AnExponentialSweepComparesFactorsPerLevelAboveTheFloor()
    {
        // 2.0× per level against 1.1× per level; the first size is under the 0.1 s floor and left out.
        static Verdict Levels(Outcome o, double factor) => new(o, $"×{factor}")
        {
            Facts = new ComplexityFacts(ComplexitySpec.Exponential, "parse_s", "levels",
                                        [.. Enumerable.Range(8, 6).Select(n => new[] { (double)n, n == 8 ? 0.01 : 0.2 * Math.Pow(factor, n - 9) * (1 + 0.01 * (n % 3)) })],
                                        factor, factor, 0.99, 1.5, 1.2) { FloorSec = 0.1 },
        };
        var c = Family("complexity").Compare([Levels(Outcome.Reproduced, 2.0)], [Levels(Outcome.Clean, 1.1)]);
        Assert.Equal(CompareVerdict.Fixed, c.Verdict);
        Assert.Equal(PlotScale.SemiLog, c.Plot);
        var f = Assert.Single(c.Figures);
        Assert.Equal(("factor per level", "ratio"), (f.Name, f.Effect));
        Assert.True(f.Base!.Contains(2.0) && f.New!.Contains(1.1) && f.Differs, f.ToString());
        // 5 sizes above the floor: Sen's interval reaches 95% (98.3%: trimming none of 10 slopes).
        Assert.Equal(0.9833, f.Base.Confidence, 4);
        // A fixed compiler's sweep stays under the floor: it has no factor, and the base's is still given.
        var flat = new Verdict(Outcome.Clean, "flat")
            { Facts = new ComplexityFacts(ComplexitySpec.Exponential, "parse_s", "levels", [[8, 0.03], [9, 0.04], [10, 0.04]], null, null, null, 1.5, 1.2) { FloorSec = 0.1 } };
        var fixedNow = Family("complexity").Compare([Levels(Outcome.Reproduced, 2.0)], [flat]);
        Assert.Equal(CompareVerdict.Fixed, fixedNow.Verdict);
        var one = Assert.Single(fixedNow.Figures);
        Assert.True(one.Base!.Contains(2.0) && one.New is null, one.ToString());
        Assert.Contains("new is flat", one.Note);
    }

    [Fact]
    public void InconclusiveWhenASideCannotBeJudgedOrTheRoundsDisagree()
    {
        Assert.Equal(CompareVerdict.Inconclusive, C("process", Process(Outcome.Clean), new Verdict(Outcome.Unsupported, "no such API")).Verdict);
        Assert.Equal(CompareVerdict.Inconclusive, C("process", new Verdict(Outcome.Error, "build broke"), Process(Outcome.Clean)).Verdict);
        var flaky = Family("process").Compare([Process(Outcome.Clean), Process(Outcome.Clean)], [Process(Outcome.Clean), Process(Outcome.Reproduced)]);
        Assert.Equal(CompareVerdict.Inconclusive, flaky.Verdict);
        Assert.Contains("rounds disagree", flaky.Detail);
    }

    [Fact]
    public void RacesAreDecidedByFishersExactTest()
    {
        var regressed = C("statistics", Race(Outcome.Clean, 0, 59), Race(Outcome.Reproduced, 30, 59));
        Assert.Equal(CompareVerdict.Regressed, regressed.Verdict);
        Assert.True(regressed.Figures[0].P < 1e-6);
        Assert.Equal(CompareVerdict.Fixed, C("statistics", Race(Outcome.Reproduced, 40, 59), Race(Outcome.Clean, 0, 59)).Verdict);
        Assert.Equal(CompareVerdict.Changed, C("statistics", Race(Outcome.Reproduced, 55, 59), Race(Outcome.Reproduced, 5, 59)).Verdict);
        Assert.Equal(CompareVerdict.Unchanged, C("statistics", Race(Outcome.Clean, 0, 59), Race(Outcome.Clean, 0, 59)).Verdict);
        var open = C("statistics", Race(Outcome.Reproduced, 3, 59), Race(Outcome.Reproduced, 5, 59));
        Assert.False(open.Decided);
    }

    [Fact]
    public void AFamilyWithoutFiguresComparesOutcomes()
    {
        var fixture = Family("fixture");
        Assert.Equal(ComparePlan.Once, fixture.PlanComparison(null!, 3));
        Assert.Equal(CompareVerdict.Unchanged, fixture.Compare([Process(Outcome.Clean)], [Process(Outcome.Clean, 9)]).Verdict);
        Assert.Equal(CompareVerdict.Regressed, fixture.Compare([Process(Outcome.Clean)], [Process(Outcome.WrongFailure)]).Verdict);
        Assert.Empty(fixture.Compare([Process(Outcome.Clean)], [Process(Outcome.Clean, 9)]).Figures);
    }

    [Fact]
    public void ALeakComparesItsSizeOnlyWhereThereIsOne()
    {
        static Verdict Leak(Outcome o, double shmem, double rss) =>
            new(o, "") { Facts = new LeakFacts(512, shmem, rss, 8, shmem, 0, shmem, "cgroup", false) };
        var shmem = Family("shmem");
        var grew = shmem.Compare([Leak(Outcome.Reproduced, 513, 30), Leak(Outcome.Reproduced, 514, 31)],
                                 [Leak(Outcome.Reproduced, 1026, 30), Leak(Outcome.Reproduced, 1027, 31)]);
        Assert.Equal(CompareVerdict.Changed, grew.Verdict);
        Assert.True(grew.Figures.Single(f => f.Name == "cell shmem MB").Differs);
        Assert.False(grew.Figures.Single(f => f.Name == "RSS MB").Differs);
        // Clean on both, shared memory ±0.3 MB: no ratio of noise.
        var clean = shmem.Compare([Leak(Outcome.Clean, 0.1, 30), Leak(Outcome.Clean, 0.3, 30)], [Leak(Outcome.Clean, 0.2, 30), Leak(Outcome.Clean, 0.1, 31)]);
        Assert.Equal(CompareVerdict.Unchanged, clean.Verdict);
        Assert.DoesNotContain(clean.Figures, f => f.Name == "cell shmem MB");
    }

    private static readonly ComparePlan ThreeRounds = new(1, 3, 59, double.MaxValue, "3 rounds");

    [Fact]
    public async Task ARaceRunsMoreRoundsUntilTheTestDecides()
    {
        // Base hits 2 of 59 a round, new 8: undecided after one round, decided after two.
        var (c, rounds) = await Compare.DecideAsync(Family("statistics"), ThreeRounds,
            _ => Task.FromResult((Race(Outcome.Reproduced, 2, 59), Race(Outcome.Reproduced, 8, 59))), () => 0);
        Assert.Equal(2, rounds);
        Assert.Equal(CompareVerdict.Changed, c.Verdict);
        Assert.True(c.Decided);
    }

    [Fact]
    public async Task AnUndecidedRaceEndsAtItsBudgetAndSaysSo()
    {
        // Epsilon 0.01: 3 rounds cannot show two rates of 5% the same within ±1%.
        var (c, rounds) = await Compare.DecideAsync(Family("statistics"), ThreeRounds,
            _ => Task.FromResult((Race(Outcome.Reproduced, 3, 59, 0.01), Race(Outcome.Reproduced, 3, 59, 0.01))), () => 0);
        Assert.Equal(3, rounds);
        Assert.Equal(CompareVerdict.Unchanged, c.Verdict);
        Assert.Contains("undecided when the budget ended (3 rounds)", c.Detail);
        // 0 hits on one side and a few on the other, never significant: no verdict can be given.
        var (open, _) = await Compare.DecideAsync(Family("statistics"), ThreeRounds,
            i => Task.FromResult((Race(Outcome.Clean, 0, 59), i == 0 ? Race(Outcome.Reproduced, 1, 59) : Race(Outcome.Clean, 0, 59))), () => 0);
        Assert.Equal(CompareVerdict.Inconclusive, open.Verdict);
    }

    [Fact]
    public async Task RatesShownTheSameWithinEpsilonStopTheRounds()
    {
        // 59 of 59 on both: one round leaves a difference of up to 6% possible, two rounds bound it within ±5%.
        var (c, rounds) = await Compare.DecideAsync(Family("statistics"), ThreeRounds,
            _ => Task.FromResult((Race(Outcome.Reproduced, 59, 59), Race(Outcome.Reproduced, 59, 59))), () => 0);
        Assert.Equal(2, rounds);
        Assert.Equal(CompareVerdict.Unchanged, c.Verdict);
        Assert.Contains("the same within ±0.05", c.Detail);
        Assert.True(c.Figures[0].Change!.Low > -0.05 && c.Figures[0].Change!.High >= 0, c.Figures[0].ToString());
    }

    [Fact]
    public async Task TheBudgetEndsTheRoundsWhateverTheTestSays()
    {
        var clock = 0.0;
        var (c, rounds) = await Compare.DecideAsync(Family("statistics"), new ComparePlan(1, 10, 59, 100, "100 s"),
            _ => { clock += 60; return Task.FromResult((Race(Outcome.Reproduced, 3, 59, 0.01), Race(Outcome.Reproduced, 4, 59, 0.01))); }, () => clock);
        Assert.Equal(2, rounds);
        Assert.Contains("undecided when the budget ended (100 s)", c.Detail);
    }

    [Fact]
    public async Task OneRunFamiliesRunEveryRoundTheyAskFor()
    {
        var process = Family("process");
        var plan = process.PlanComparison(null!, 3);
        var (c, rounds) = await Compare.DecideAsync(process, plan, _ => Task.FromResult((Process(Outcome.Clean), Process(Outcome.Clean))), () => 0);
        Assert.Equal((3, CompareVerdict.Unchanged), (rounds, c.Verdict));
        Assert.Equal("3 runs per subject (--rounds)", plan.Budget);
    }

    [Fact]
    public async Task AnUnsupportedSideStopsTheRounds()
    {
        var (c, rounds) = await Compare.DecideAsync(Family("process"), new ComparePlan(3, 3, null, double.MaxValue, "3 runs"),
            _ => Task.FromResult((Process(Outcome.Clean), new Verdict(Outcome.Unsupported, "gone"))), () => 0);
        Assert.Equal(1, rounds);
        Assert.Equal(CompareVerdict.Inconclusive, c.Verdict);
    }

    [Fact]
    public void ExitCodes()
    {
        static CompareResult With(CompareVerdict v, int inputErrors = 0) => new("r", "net10", "mono",
            [new ComparedCell("x", "c", "bug", "process", ComparePlan.Once, [], [], new CellComparison(v, ""), 1)], [],
            [.. Enumerable.Repeat("repros/y/repro.json: field 'id': broken", inputErrors)], 1);
        Assert.Equal(1, Compare.ExitCode(With(CompareVerdict.Regressed)));
        foreach (var v in new[] { CompareVerdict.Fixed, CompareVerdict.Unchanged, CompareVerdict.Changed, CompareVerdict.Inconclusive })
            Assert.Equal(0, Compare.ExitCode(With(v)));
        Assert.Equal(2, Compare.ExitCode(With(CompareVerdict.Regressed, inputErrors: 1)));
    }
}

/// <summary>compare.json and JUnit: their shape, from a fabricated result.</summary>
public sealed class CompareReportTests
{
    private static CellResult Cell(string subject, Outcome o, string detail) =>
        new() { Key = new CellKey("binaryformatter-quadratic", "deserialize", "bug", subject), Outcome = o, Detail = detail, Rerun = "make run …" };

    private static CompareResult Result()
    {
        var regressed = new CellComparison(CompareVerdict.Regressed, "base clean, new reproduced")
        {
            Figures = [new FigureComparison("exponent", new Interval(1.02, 0.98, 1.06), new Interval(1.93, 1.88, 1.99), "difference",
                                            new Interval(0.91, 0.84, 0.98), null, true)],
            Plot = PlotScale.LogLog,
        };
        return new CompareResult("r1", "net10", "mono",
            [new ComparedCell("binaryformatter-quadratic", "deserialize", "bug", "complexity", ComparePlan.Once,
                              [Cell("net10", Outcome.Clean, "exponent 1.02")], [Cell("mono", Outcome.Reproduced, "exponent 1.93")], regressed, 80),
             new ComparedCell("binaryformatter-quadratic", "idgen-limit", "bug", "process", new ComparePlan(3, 3, null, double.MaxValue, "3 runs"),
                              [Cell("net10", Outcome.Error, "build")], [Cell("mono", Outcome.Clean, "")],
                              new CellComparison(CompareVerdict.Inconclusive, "base could not be judged"), 3)],
            [new OneSidedCell("filemapping-leak", "cpp-memfd", "bug", "linux", "mono", "runs a native program")], [], 90);
    }

    [Fact]
    public void TheJsonHasEveryCellWithBothSidesAndTheFigures()
    {
        var doc = JsonDocument.Parse(JsonSerializer.Serialize(CompareReport.Json(Result(), "/"), SummaryWriter.JsonOptions)).RootElement;
        Assert.Equal(1, doc.GetProperty("schema").GetInt32());
        Assert.Equal("net10", doc.GetProperty("base").GetString());
        Assert.True(doc.GetProperty("regressed").GetBoolean());
        Assert.Equal(1, doc.GetProperty("counts").GetProperty("regressed").GetInt32());
        var cell = doc.GetProperty("cells")[0];
        Assert.Equal("regressed", cell.GetProperty("verdict").GetString());
        var figure = cell.GetProperty("figures")[0];
        Assert.Equal(1.88, figure.GetProperty("new").GetProperty("low").GetDouble());
        Assert.Equal(0.98, figure.GetProperty("base").GetProperty("low").GetDouble() , 9);
        Assert.Equal("reproduced", cell.GetProperty("new").GetProperty("outcome").GetString());
        Assert.Equal("clean", cell.GetProperty("base").GetProperty("rounds")[0].GetProperty("outcome").GetString());
        Assert.Equal("inconclusive", doc.GetProperty("cells")[1].GetProperty("verdict").GetString());
        Assert.Equal("linux", doc.GetProperty("oneSided")[0].GetProperty("subject").GetString());
    }

    [Fact]
    public void InJUnitARegressionFailsAndInconclusiveOrOneSidedCellsAreSkipped()
    {
        var x = CompareReport.JUnit(Result());
        var cases = x.Descendants("testcase").ToList();
        Assert.Equal(3, cases.Count);
        var failed = Assert.Single(cases, c => c.Element("failure") is not null);
        Assert.Equal("binaryformatter-quadratic.deserialize", failed.Attribute("classname")!.Value);
        Assert.StartsWith("regressed", failed.Element("failure")!.Attribute("message")!.Value);
        Assert.Contains("exponent 1.02 [0.98, 1.06] → 1.93 [1.88, 1.99]", failed.Element("failure")!.Value);
        Assert.Equal(2, cases.Count(c => c.Element("skipped") is not null));
        var suite = x.Descendants("testsuite").First(s => s.Attribute("name")!.Value == "binaryformatter-quadratic");
        Assert.Equal("1", suite.Attribute("failures")!.Value);
    }

    [Fact]
    public void TheTableNamesBothSubjectsAndTheRegression()
    {
        var table = CompareReport.Table(Result());
        Assert.Contains("base net10", table);
        Assert.Contains("REGRESSED", table);
        Assert.Contains("filemapping-leak:cpp-memfd/bug only on linux; mono: runs a native program", table);
        Assert.Contains("1 regressed", CompareReport.Totals(Result()));
    }
}

/// <summary>`corpus compare` as a user calls it, on a temp corpus whose cells are Windows-only (unsupported here, nothing built).</summary>
[Collection(nameof(ConsoleCollection))]
public sealed class CompareCommandTests : IDisposable
{
    private readonly TestCorpus _corpus = new();

    public void Dispose() => _corpus.Dispose();

    private (int Exit, string Out, string Err) Corpus(params string[] args) => _corpus.Main(args);

    [Theory]
    [InlineData(new[] { "compare", "--new", "mono" }, "corpus: compare needs --base SUBJECT (the build before the patch)")]
    [InlineData(new[] { "compare", "--base", "net10" }, "corpus: compare needs --new SUBJECT (the build after the patch)")]
    [InlineData(new[] { "compare", "--base", "net10", "--new", "net10" }, "corpus: --base and --new are both 'net10': compare needs two different subjects")]
    [InlineData(new[] { "compare", "--base", "net10", "--new", "net99" }, "corpus: unknown subject 'net99'")]
    [InlineData(new[] { "compare", "--base", "net10", "--new", "mono:/nonexistent/mono" }, "corpus: mono:/nonexistent/mono: ")]
    [InlineData(new[] { "compare", "--base", "net10", "--new", "mono", "--repro", "nope" }, "corpus: no repro 'nope'")]
    [InlineData(new[] { "compare", "--base", "net10", "--new", "mono", "--rounds", "0" }, "corpus: --rounds needs a count from 1 to 100, not '0'")]
    [InlineData(new[] { "compare", "--base", "net10", "--new", "linux" }, "corpus: --new: linux can run none of the selected cases")]
    public void BadInputExits2WithTheReason(string[] args, string message)
    {
        _corpus.Write("a");
        var (exit, _, err) = Corpus(args);
        Assert.Equal(2, exit);
        Assert.StartsWith(message, err.Split('\n')[0]);
        Assert.False(Directory.Exists(Path.Combine(_corpus.Root, "artifacts")));
    }

    [Fact]
    public void CompareHasHelpWithItsOptionsAndTheSubjects()
    {
        var (exit, output, _) = Corpus("compare", "--help");
        Assert.Equal(0, exit);
        Assert.Contains("--base <S>", output);
        Assert.Contains("--new <S>", output);
        Assert.Contains("--rounds <N>", output);
        Assert.Contains("Subjects (", output);
        Assert.Matches("(?m)^  compare ", Corpus("--help").Out);
    }

    [Fact]
    public void ARealCompareWritesItsTableJsonJUnitAndMarkdown()
    {
        _corpus.Write("a");
        var (exit, output, err) = Corpus("compare", "--base", "net10", "--new", "mono", "--run-id", "cmp", "--case", "one");
        Assert.True(exit == 0, output + err);
        // Windows-only cells are unsupported on both: nothing was compared, and the table says so.
        Assert.Contains("inconclusive", output);
        Assert.Contains("compare net10 → mono: 2 cells: 0 fixed, 0 regressed, 0 unchanged, 0 changed, 2 inconclusive", output);
        var dir = Path.Combine(_corpus.Root, "artifacts", "cmp");
        var json = JsonDocument.Parse(File.ReadAllText(Path.Combine(dir, "compare.json"))).RootElement;
        Assert.Equal(2, json.GetProperty("cells").GetArrayLength());
        Assert.Equal("unsupported", json.GetProperty("cells")[0].GetProperty("base").GetProperty("outcome").GetString());
        Assert.Equal(2, XDocument.Load(Path.Combine(dir, "junit.xml")).Descendants("skipped").Count());
        Assert.Contains("# Compare net10 (base) with mono (new)", File.ReadAllText(Path.Combine(dir, "compare.md")));
        Assert.True(File.Exists(Path.Combine(dir, "summary.json")));
    }
}
