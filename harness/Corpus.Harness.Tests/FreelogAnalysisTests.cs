using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>The double-free facts, on gdb output taken from a real Mono core of the SuppressFinalize race.</summary>
public class FreelogAnalysisTests
{
    private const string RealOutput = """
        pid 9118, JIT methods named: 167
        crashing thread LWP 9120 aborted in free(0x5619f9976ba0)
        frees recorded: 53375; frees of 0x5619f9976ba0: 2
          free #27170 on LWP 9125
              (wrapper managed-to-native) System.Runtime.InteropServices.Marshal:FreeHGlobal (intptr) +0x6d
              Corpus.Repros.SuppressFinalizeRace.Native:Free (intptr) +0x53
              Corpus.Repros.SuppressFinalizeRace.Event:Dispose () +0x48
              Corpus.Repros.SuppressFinalizeRace.Program/<Start>c__AnonStorey0`1<T_REF>:<>m__1 () +0xde
          free #53374 on LWP 9120  <- the aborting free
              (wrapper managed-to-native) System.Runtime.InteropServices.Marshal:FreeHGlobal (intptr) +0x6d
              Corpus.Repros.SuppressFinalizeRace.Native:Free (intptr) +0x53
              Corpus.Repros.SuppressFinalizeRace.Event:Dispose () +0x48
              Corpus.Repros.SuppressFinalizeRace.Event:Finalize () +0x30
        """;

    private static readonly DoubleFreeSpec Spec = new([@"\.Event:Finalize", @"\.Event:Dispose", "Marshal:FreeHGlobal"], [@"\.Event:Dispose"]);

    [Fact]
    public void ParsesPointerThreadsAndFrames()
    {
        var facts = FreelogAnalysis.Parse(RealOutput);
        Assert.Equal("0x5619f9976ba0", facts.Pointer);
        Assert.Equal(9120, facts.CrashThread);
        Assert.Equal(2, facts.Frees.Count);
        Assert.Equal((27170L, 9125, false), (facts.Frees[0].Sequence, facts.Frees[0].Thread, facts.Frees[0].Aborting));
        Assert.True(facts.Frees[1].Aborting);
        Assert.Equal(4, facts.Frees[1].Frames.Count);
        Assert.Null(facts.Mismatch(Spec));
    }

    [Fact]
    public void OneFreeIsNotADoubleFree()
    {
        var single = string.Join('\n', RealOutput.Split('\n').Where((_, i) => i is < 3 or >= 8));
        Assert.Contains("only 1 recorded free", FreelogAnalysis.Parse(single).Mismatch(Spec));
    }

    [Fact]
    public void TheSameThreadTwiceIsNotTheRace() =>
        Assert.Contains("no other thread", FreelogAnalysis.Parse(RealOutput.Replace("on LWP 9125", "on LWP 9120")).Mismatch(Spec));

    [Fact]
    public void AnAbortOutsideTheFinalizerIsNotThisBug() =>
        Assert.Contains("aborting free", FreelogAnalysis.Parse(RealOutput.Replace("Event:Finalize", "Event:Close")).Mismatch(Spec));

    [Fact]
    public void NoFreeInTheCoreIsNotADoubleFree() =>
        Assert.Contains("not a double-free abort", FreelogAnalysis.Parse("no thread is inside _int_free: not a double-free abort").Mismatch(Spec));

    [Fact]
    public void TheRepeatedFreeIsTheLastMatchingOneBeforeTheAbort()
    {
        // malloc reused the address: an older block at the same pointer was freed by main with no managed frames.
        var reused = RealOutput.Replace("frees of 0x5619f9976ba0: 2\n", "frees of 0x5619f9976ba0: 3\n  free #100 on LWP 9118\n      main +0x10\n");
        var facts = FreelogAnalysis.Parse(reused);
        Assert.Equal(3, facts.Frees.Count);
        Assert.Null(facts.Mismatch(Spec));
        Assert.Equal(9125, facts.OtherFree(Spec)!.Thread);
    }

    // A real core of the same race at load 11-18 (a lab's RUNS=300 run, 2026-11-27): glibc aborted with "corrupted
    // double-linked list" on a block freed once; the finalizer had freed the worker's last disposed block again just
    // before.
    private const string NoticedLater = """
        pid 4970, JIT methods named: 168
        crashing thread LWP 4973 aborted in free(0x559d0cd12600)
        frees recorded: 49138; frees of 0x559d0cd12600: 1
          free #49137 on LWP 4973  <- the aborting free
              (wrapper managed-to-native) System.Runtime.InteropServices.Marshal:FreeHGlobal (intptr) +0x6d
              Corpus.Repros.SuppressFinalizeRace.Native:Free (intptr) +0x53
              Corpus.Repros.SuppressFinalizeRace.Event:Dispose () +0x48
              Corpus.Repros.SuppressFinalizeRace.Event:Finalize () +0x30
        glibc noticed at that free the damage of an earlier one: LWP 4973 freed 0x559d0c2b0ac0 again at #49136, 0 free(s) of its own before the aborting one, after LWP 4993 had freed it at #26855
        frees of 0x559d0c2b0ac0: 2
          free #26855 on LWP 4993
              (wrapper managed-to-native) System.Runtime.InteropServices.Marshal:FreeHGlobal (intptr) +0x6d
              Corpus.Repros.SuppressFinalizeRace.Native:Free (intptr) +0x53
              Corpus.Repros.SuppressFinalizeRace.Event:Dispose () +0x48
              Corpus.Repros.SuppressFinalizeRace.Program/<Start>c__AnonStorey0`1<T_REF>:<>m__1 () +0xde
          free #49136 on LWP 4973  <- the repeated free
              (wrapper managed-to-native) System.Runtime.InteropServices.Marshal:FreeHGlobal (intptr) +0x6d
              Corpus.Repros.SuppressFinalizeRace.Native:Free (intptr) +0x53
              Corpus.Repros.SuppressFinalizeRace.Event:Dispose () +0x48
              Corpus.Repros.SuppressFinalizeRace.Event:Finalize () +0x30
        """;

    [Fact]
    public void AnAbortOnABlockFreedOnceIsTheRepeatedFreeGlibcNoticedThere()
    {
        var facts = FreelogAnalysis.Parse(NoticedLater);
        Assert.Equal(("0x559d0c2b0ac0", 4973, 0), (facts.Pointer, facts.CrashThread, facts.FreesBeforeAbort));
        Assert.Equal([(26855L, 4993, false), (49136L, 4973, true)], facts.Frees.Select(f => (f.Sequence, f.Thread, f.Aborting)));
        Assert.Null(facts.Mismatch(Spec));
        // Without the repeated free the script found, it is the block freed once, and not this bug.
        var alone = FreelogAnalysis.Parse(NoticedLater[..NoticedLater.IndexOf("glibc noticed", StringComparison.Ordinal)]);
        Assert.Null(alone.FreesBeforeAbort);
        Assert.Contains("only 1 recorded free of 0x559d0cd12600", alone.Mismatch(Spec));
        // The repeated free is judged as an aborting one is: the worker's free must be a Dispose.
        Assert.Contains("no other thread", FreelogAnalysis.Parse(NoticedLater.Replace("Event:Dispose () +0x48\n      Corpus.Repros.SuppressFinalizeRace.Program", "Event:Close () +0x48\n      Corpus.Repros.SuppressFinalizeRace.Program")).Mismatch(Spec));
    }
}
