using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures.Leaks;
using Corpus.LostMemory;

namespace Corpus.Harness.Signatures;

/// <summary>
/// Leak family for shared memory: when the marker line appears, the shared memory charged to the cell has grown by
/// about LeakBytes while the process's RSS stays small, and the process holds descriptors to unmapped shm/memfd
/// objects of that size. After the run the cell's shared memory must be gone, within ReturnToleranceMB.
/// </summary>
public sealed record ShmemSpec(string Marker, long LeakBytes, double Tolerance, double MaxRssFraction, double ReturnToleranceMB,
                               double SettleSec)
{
    /// <summary>More runs while a figure straddles its bound: 3 within 120 s unless the case says otherwise.</summary>
    public static readonly DecideSpec DefaultDecide = new(3, 120);

    public DecideSpec Decide { get; init; } = DefaultDecide;

    public static ShmemSpec Read(Fields f)
    {
        f.AllowOnly("marker", "leakBytes", "tolerance", "maxRssFraction", "returnToleranceMB", "settleSec", "decide");
        var leak = f.NumberOr("leakBytes", null, required: true, min: 0, above: true, max: 1L << 40)!.Value;
        if (leak != Math.Floor(leak)) throw f.Error($"expected a whole number of bytes, found {leak}", "leakBytes");
        // Fractions of the leak: 0 would demand an exact byte count, above 1 accepts anything.
        return new ShmemSpec(f.String("marker"), (long)leak, f.NumberOr("tolerance", 0.10, min: 0, above: true, max: 1)!.Value,
                             f.NumberOr("maxRssFraction", 0.10, min: 0, above: true, max: 1)!.Value,
                             f.NumberOr("returnToleranceMB", 16, min: 0, above: true, max: 65536)!.Value,
                             f.NumberOr("settleSec", 0.5, min: 0, max: 60)!.Value)
               { Decide = DecideSpec.Read(f, DefaultDecide) };
    }
}

/// <summary>
/// One process of the cell that holds the objects the program holds by descriptor only, as the lost-memory finder's
/// heldBy names it: under Wine the program and wineserver each hold every section.
/// </summary>
/// <param name="Command">/proc/PID/comm: a Wine program's .exe name cut to 15 characters, "wineserver64".</param>
/// <param name="Program">The run's process itself; false for another process of the cell.</param>
/// <param name="Objects">How many of the program's unmapped objects it holds.</param>
/// <param name="Mapped">How many of those it maps: 0 when it holds them by descriptor only.</param>
public sealed record LeakHolder(int Pid, string Command, bool Program, int Objects, int Mapped)
{
    /// <summary>The holders of the program's fd-only objects, the program first, then by pid.</summary>
    public static IReadOnlyList<LeakHolder> Of(ProcessEntry? program)
    {
        if (program is null) return [];
        return program.Objects.Where(o => o.FdOnly)
            .SelectMany(o => o.HeldBy.Count > 0 ? o.HeldBy
                             : [new Holder { Pid = program.Pid, Command = program.Command, FdCount = o.Fds.Count, MappedBytes = o.MappedBytes }])
            .GroupBy(h => h.Pid)
            .Select(g => new LeakHolder(g.Key, g.First().Command, g.Key == program.Pid, g.Count(), g.Count(h => h.MappedBytes > 0)))
            .OrderByDescending(h => h.Program).ThenBy(h => h.Pid).ToList();
    }
}

/// <summary>A leak cell's figures. On Windows "cell shmem" and "held" are the page-file sections the process holds by handle.</summary>
/// <param name="HostShmemDeltaMB">Host-wide, context only: another program moves it.</param>
public sealed record LeakFacts(double LeakMB, double ShmemDeltaMB, double RssMB, int HeldObjects, double HeldFdOnlyMB,
                               double AfterExitDeltaMB, double HostShmemDeltaMB, string Attribution, bool Windows)
{
    /// <summary>Who holds the unmapped objects (<see cref="LeakHolder"/>); null on Windows, where only the program's
    /// own handles are read.</summary>
    public IReadOnlyList<LeakHolder>? HeldBy { get; init; }
    /// <summary>The cell's shared memory before the run.</summary>
    public double BaselineMB { get; init; }
    /// <summary>The cell's shared memory's interval against the leak's window and the clean tolerance, at the last look.</summary>
    public DecisionFacts? Decision { get; init; }

    public IReadOnlyList<string> KeyFigures() => Windows
        ? [$"working set {RssMB:0.0} MB", $"sections held by handle {HeldObjects} ({HeldFdOnlyMB:0.0} MB)", $"after exit {AfterExitDeltaMB:+0.0;-0.0} MB"]
        : [$"cell shmem {ShmemDeltaMB:+0.0;-0.0} MB", $"RSS {RssMB:0.0} MB", $"held by fd {HeldObjects} ({HeldFdOnlyMB:0.0} MB)",
           $"after exit {AfterExitDeltaMB:+0.0;-0.0} MB"];
}

/// <summary>Leak family for shared memory: one run, watched over time by a <see cref="ShmemProbe"/>.</summary>
public sealed class ShmemFamily : ISignatureFamily
{
    public string Key => "shmem";
    public object ReadSpec(Fields f) => ShmemSpec.Read(f);

    // The program holds its memory for seconds while it is measured, and the verdict is memory, not time.
    public CellLane Lane => CellLane.Alongside;

    /// <summary>--rounds runs per subject: the leak's size and the process's RSS get an interval over runs.</summary>
    public ComparePlan PlanComparison(CaseSpec cs, int rounds) =>
        new(rounds, rounds, null, double.MaxValue, $"{rounds} runs per subject (--rounds)");

    public CellComparison Compare(IReadOnlyList<Verdict> @base, IReadOnlyList<Verdict> @new)
    {
        static List<double> Of(IReadOnlyList<Verdict> vs, Func<LeakFacts, double> f) => vs.Select(v => v.Facts).OfType<LeakFacts>().Select(f).ToList();
        // A clean cell's shared memory is noise around 0: its ratio means nothing, so it is compared from 1 MB up.
        return Comparisons.WithFigures(@base, @new, [.. new[]
        {
            Comparisons.RatioOf("cell shmem MB", Of(@base, f => f.ShmemDeltaMB), Of(@new, f => f.ShmemDeltaMB), minimum: 1),
            Comparisons.RatioOf("RSS MB", Of(@base, f => f.RssMB), Of(@new, f => f.RssMB)),
        }.OfType<FigureComparison>()]);
    }

    public void Validate(CaseSpec cs, Fields c)
    {
        var sh = cs.Signature.Get<ShmemSpec>(Key)!;
        if (sh.SettleSec >= cs.Budget.TimeoutSec)
            throw c.Error($"settling {sh.SettleSec} s after the marker must be shorter than the run's budget.timeoutSec ({cs.Budget.TimeoutSec} s)",
                          "signature.shmem.settleSec");
    }

    /// <summary>
    /// One run watched by the probe; its figures' intervals span what the samples saw around the measure. While one
    /// straddles a bound, more runs and the means of their figures, within the case's decide budget; then inconclusive.
    /// </summary>
    public async Task<Verdict> RunAsync(IRunLauncher runs, CellResult cell)
    {
        var cs = runs.Case;
        var spec = cs.Signature.Get<ShmemSpec>(Key)!;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        var (deltas, rsses) = (new List<double>(), new List<double>());
        for (var round = 1; ; round++)
        {
            runs.Progress(round == 1 ? $"{cell.Key} …" : $"{cell.Key} run {round}: a figure straddles its bound …");
            var probe = new ShmemProbe(spec);
            LeakMeasure? leak = null;
            var (run, metrics, _) = await runs.ExecuteAsync(null, round == 1 ? "run" : $"run{round}", round == 1 ? cs.Timed : null,
                                                            async p => leak = await probe.WatchAsync(p));
            var process = ProcessFacts.Of(run, metrics);
            var (outcome, detail) = ProcessFamily.Classify(cs.Signature, run);
            if (outcome == Outcome.Unsupported || leak is null)
                return new Verdict(outcome, detail) { Facts = process, KeyFigures = process.KeyFigures() };
            var facts = RecordLeak(cell, leak, probe);
            if (ProcessMatch.Mismatch(cs.Signature.Clean, run) is { } bad)
                return new Verdict(Outcome.WrongFailure, $"{run.Status}: the program did not finish ({bad}); {ProcessMatch.Tail(run)}")
                       { Facts = facts, KeyFigures = facts.KeyFigures() };
            deltas.Add(leak.ShmemDeltaBytes);
            rsses.Add(leak.RssBytes);
            var (shmem, rss) = deltas.Count == 1
                ? (probe.Meter.SamplesTheCell ? leak.Held(leak.ShmemDeltaBytes, x => x.Shmem, spec.SettleSec) : Exact(leak.ShmemDeltaBytes),
                   leak.Held(leak.RssBytes, x => x.Rss, spec.SettleSec))
                : (Decision.Mean(deltas, spec.Decide.LookConfidence), Decision.Mean(rsses, spec.Decide.LookConfidence));
            (outcome, detail) = probe.Judge(leak, shmem, rss);
            var stop = outcome != Outcome.Inconclusive ? "decided"
                : round >= spec.Decide.MaxRounds ? $"maxRounds {spec.Decide.MaxRounds}"
                : clock.Elapsed.TotalSeconds >= spec.Decide.BudgetSec ? $"the {spec.Decide.BudgetSec:0} s budget" : null;
            if (stop is null) continue;
            var mb = new Interval(shmem.Value / 1048576, shmem.Low / 1048576, shmem.High / 1048576) { Confidence = shmem.Confidence };
            var (leakMb, tolMb) = (spec.LeakBytes / 1048576.0, spec.Tolerance * spec.LeakBytes / 1048576.0);
            facts = facts with
            {
                Decision = DecisionFacts.Of("cell shmem MB", mb, deltas.Count == 1 ? "one run: every sample of the hold" : $"the mean of {deltas.Count} runs, Student's t",
                                            leakMb - tolMb, tolMb, true, outcome switch { Outcome.Reproduced => Placement.Reproduced, Outcome.Clean => Placement.Clean,
                                                                                        Outcome.Inconclusive => Placement.Undecided, _ => Placement.Between },
                                            round, spec.Decide, clock.Elapsed.TotalSeconds, stop) with { WindowHigh = leakMb + tolMb },
            };
            if (outcome == Outcome.Inconclusive) detail = $"{detail}; after {round} of at most {spec.Decide.MaxRounds} runs, ended by {stop}";
            return new Verdict(outcome, detail) { Facts = facts, KeyFigures = facts.KeyFigures() };
        }
    }

    private static Interval Exact(double x) => new(x, x, x) { Confidence = 0 };

    private static LeakFacts RecordLeak(CellResult cell, LeakMeasure m, ShmemProbe probe)
    {
        static double Mb(long b) => Math.Round(b / 1048576.0, 1);
        // On Windows the sampled figure is the system commit charge, host-wide context (ShmemProbe).
        cell.TimeSeries[probe.Meter.CellCurve] = m.Samples.Select(x => new SeriesPoint(x.T, Mb(x.Shmem))).ToList();
        if (m.HostSamples is { } host)
            cell.TimeSeries["host Shmem - baseline (MB), context"] = host.Select(x => new SeriesPoint(x.T, Mb(x.Shmem))).ToList();
        cell.TimeSeries["process RSS (MB)"] = m.Samples.Select(x => new SeriesPoint(x.T, Mb(x.Rss))).ToList();
        return new LeakFacts(Mb(probe.Spec.LeakBytes), Mb(m.ShmemDeltaBytes), Mb(m.RssBytes), m.HeldObjects, Mb(m.HeldFdOnlyBytes),
                             Mb(m.AfterExitDeltaBytes), Mb(m.HostShmemDeltaBytes), m.Attribution, probe.Meter.Windows)
        { HeldBy = m.HeldBy, BaselineMB = Mb(m.BaselineBytes) };
    }
}
