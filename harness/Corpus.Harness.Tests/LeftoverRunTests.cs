using Corpus.Harness.Containment;

namespace Corpus.Harness.Tests;

/// <summary>A run a killed harness left without its summary loses its dumps, never anything reached through a link.</summary>
public sealed class LeftoverRunTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-leftrun-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Fact]
    public void AnUnfinishedRunsDumpsGoItsLogsStayAndLinksAreNotFollowed()
    {
        var run = Path.Combine(_root, "artifacts", "a run");
        var cell = Path.Combine(run, "r", "c", "bug", "s");
        Directory.CreateDirectory(Path.Combine(cell, "captures"));
        File.WriteAllText(Path.Combine(cell, "captures", "snapshot-0.core"), "core");
        File.WriteAllText(Path.Combine(cell, "run.stdout"), "log");
        // A Wine prefix's dosdevices/z: points at the host's root: a core out there is not the run's.
        var outside = Directory.CreateDirectory(Path.Combine(_root, "outside")).FullName;
        File.WriteAllText(Path.Combine(outside, "core"), "not ours");
        Directory.CreateSymbolicLink(Path.Combine(cell, "z:"), outside);
        var ledgers = Directory.CreateDirectory(Path.Combine(_root, "ledger")).FullName;
        // Pid 4194304 is above Linux's pid limit: a dead owner for sure.
        File.WriteAllText(Path.Combine(ledgers, "harness-4194304-1.ledger"), LedgerEntry.Format("run", run) + "\n");

        var left = Leftovers.Clean(ledgers, Capture.ToolRunner.Instance);

        Assert.Contains("1 core(s)", left.ToString());
        Assert.False(File.Exists(Path.Combine(cell, "captures", "snapshot-0.core")));
        Assert.True(File.Exists(Path.Combine(cell, "run.stdout")));
        Assert.True(File.Exists(Path.Combine(outside, "core")));
        Assert.Empty(Directory.GetFiles(ledgers));
    }

    [Fact]
    public void AFinishedRunKeepsItsDumps()
    {
        var run = Directory.CreateDirectory(Path.Combine(_root, "artifacts", "done")).FullName;
        File.WriteAllText(Path.Combine(run, "summary.json"), "{}");
        File.WriteAllText(Path.Combine(run, "snapshot-0.core"), "kept with KEEP=1");
        var ledgers = Directory.CreateDirectory(Path.Combine(_root, "ledger")).FullName;
        File.WriteAllText(Path.Combine(ledgers, "harness-4194304-1.ledger"), LedgerEntry.Format("run", run) + "\n");
        Leftovers.Clean(ledgers, Capture.ToolRunner.Instance);
        Assert.True(File.Exists(Path.Combine(run, "snapshot-0.core")));
    }
}
