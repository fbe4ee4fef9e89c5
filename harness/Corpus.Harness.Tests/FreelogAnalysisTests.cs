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
}
