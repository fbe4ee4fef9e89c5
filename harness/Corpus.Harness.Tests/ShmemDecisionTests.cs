using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;
using Corpus.Harness.Signatures.Leaks;

namespace Corpus.Harness.Tests;

/// <summary>
/// Issue 35: the shmem family decides from its figures' intervals over the hold (every sample from the measure to the
/// program's release), not from one reading: a figure across a bound is inconclusive, never a wrong-failure.
/// </summary>
public class ShmemDecisionTests
{
    private const long MB = 1 << 20;
    private static readonly ShmemSpec Spec = new("REPRO-REACHED leaked", 512 * MB, 0.10, 0.10, 16, 0.5);

    private sealed class NoMeter : ILeakMeter
    {
        public long HostBytes() => 0;
        public long RssBytes(int pid) => 0;
        public long CellBytes(ContainedProcess p, long hostBaseline) => 0;
        public HeldAtMarker Held(ContainedProcess p) => new(0, 0, 0, null, null);
        public long AfterBytes(ContainedProcess p, long hostBaseline) => 0;
        public string Attribution(ContainedProcess p) => "planted";
        public string CellCurve => "cell shmem (MB)";
        public bool SamplesTheCell => true;
        public bool Windows => false;
        public string Describe(LeakMeasure m, HeldAtMarker? held) => $"+{m.ShmemDeltaBytes / MB} MB";
    }

    /// <summary>A run that held <paramref name="held"/> MB by descriptor, measured at 2 s, with these samples after it.</summary>
    private static LeakMeasure Measure(long shmemMb, long rssMb, long held, params (long Shmem, long Rss)[] after) =>
        new(0, shmemMb * MB, rssMb * MB, 8, held * MB, 0,
            [(1.0, 0, 20 * MB), (2.0, shmemMb * MB, rssMb * MB), .. after.Select((x, i) => (2.1 + i / 10.0, x.Shmem * MB, x.Rss * MB))])
        { MeasuredAt = 2.0 };

    private static (Outcome, string) Judge(LeakMeasure m)
    {
        var probe = new ShmemProbe(Spec, new NoMeter());
        return probe.Judge(m, m.Held(m.ShmemDeltaBytes, x => x.Shmem, Spec.SettleSec), m.Held(m.RssBytes, x => x.Rss, Spec.SettleSec));
    }

    [Fact]
    public void AHoldWhollyInsideTheBoundsDecides()
    {
        Assert.Equal(Outcome.Reproduced, Judge(Measure(513, 30, 512, (513, 30), (514, 31))).Item1);
        Assert.Equal(Outcome.Clean, Judge(Measure(0, 30, 0, (1, 30))).Item1);
        // Wholly outside: a figure that held still at another size is another failure, decided.
        Assert.Equal(Outcome.WrongFailure, Judge(Measure(256, 30, 256, (256, 30))).Item1);
    }

    [Fact]
    public void TheProgramLettingGoAfterTheHoldIsNotPartOfIt()
    {
        // The hold, then the exit empties the memory over the last samples (1 s after the measure and later).
        var m = Measure(513, 30, 512, (513, 30), (513, 30), (513, 30), (513, 30), (513, 30), (513, 30), (513, 30), (513, 30), (256, 20), (0, 10));
        Assert.Equal(Outcome.Reproduced, Judge(m).Item1);
    }

    [Fact]
    public void AFigureThatMovedAcrossItsBoundDuringTheHoldIsUndecided()
    {
        // The RSS read 50 MB at the measure and 53 MB a moment later, across its bound of 10% of 512 MB.
        var (outcome, detail) = Judge(Measure(513, 50, 512, (513, 53)));
        Assert.Equal(Outcome.Inconclusive, outcome);
        Assert.Contains("RSS [50.0 MB, 53.0 MB] across 51.2 MB", detail);
        // The cell's shared memory still growing past the window's top.
        (outcome, detail) = Judge(Measure(560, 30, 512, (565, 30)));
        Assert.Equal(Outcome.Inconclusive, outcome);
        Assert.Contains("shared memory [560.0 MB, 565.0 MB] across 563.2 MB", detail);
    }
}
