using Corpus.Harness.Capture;
using Corpus.Harness.Fixtures;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// The shared prefix of a Wine cell with a registry fixture (WineIsolation.OpenRegistry), against real Wine: a bring-up
/// whose first program fails never reached the program, so it is taken down and started again, and said; one that
/// never comes up fails naming the stage, with Wine's own words. The failure is planted by a wine that fails its
/// first `cmd /c ver` (as one shared prefix in a loop of 200 fixture cells did, 2026-11-27).
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class WineSharedPrefixTests : IDisposable
{
    private readonly string _dir = Directory.CreateDirectory(
        Path.Combine(RoslynTriggerTests.Root, ".cache", "test-wine-shared", Guid.NewGuid().ToString("N")[..12])).FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    /// <summary>A wine whose first <paramref name="fails"/> `cmd /c ver` exit 3 with a line on stderr; wineserver beside it.</summary>
    private Subject FailingWine(int fails)
    {
        var real = SubjectKinds.Which("wine") ?? "/usr/bin/wine";
        var bin = Directory.CreateDirectory(Path.Combine(_dir, "bin")).FullName;
        var wine = Path.Combine(bin, "wine");
        File.WriteAllText(wine, $$"""
            #!/bin/sh
            if [ "$1 $2 $3" = "cmd /c ver" ]; then
              n=$(cat "{{bin}}/count" 2>/dev/null || echo 0); echo $((n + 1)) > "{{bin}}/count"
              [ "$n" -lt {{fails}} ] && { echo "err:planted: the first program failed" >&2; exit 3; }
            fi
            exec "{{real}}" "$@"
            """);
        File.SetUnixFileMode(wine, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        File.CreateSymbolicLink(Path.Combine(bin, "wineserver"), Path.Combine(Path.GetDirectoryName(real)!, "wineserver"));
        return new Subject("wine:" + wine, new WineKind(), wine, null, null);
    }

    [Fact]
    public void ABringUpThatFailedIsTakenDownStartedAgainAndSaid()
    {
        using var cell = new WineIsolation(Path.Combine(_dir, "cell"), "win7", ToolRunner.Instance);
        var host = cell.OpenRegistry(FailingWine(1), new Budget(60, 1024));
        var said = Assert.Single(cell.Retried);
        Assert.Contains("attempt 1 of 3 did not come up: wine/cell:", said);
        Assert.Contains("(exit 3 after", said);
        Assert.Contains("err:planted: the first program failed", said);
        Assert.True(File.Exists(Path.Combine(_dir, "cell", "wine", "shared.attempt1.stderr")));
        Assert.Equal(0, host.Reg(["query", @"HKLM\Software\Microsoft"]).ExitCode);
    }

    /// <summary>A run that never reached the program in a shared prefix says what the prefix's holder was doing then:
    /// a server that died would be why; a live one with its socket rules that out.</summary>
    [Fact]
    public void AFailedLaunchSaysWhatTheSharedPrefixWasDoing()
    {
        using var cell = new WineIsolation(Path.Combine(_dir, "cell"), "win7", ToolRunner.Instance);
        Assert.Null(cell.StateAfterLaunchFailure());
        cell.OpenRegistry(FailingWine(0), new Budget(60, 1024));
        var state = cell.StateAfterLaunchFailure();
        Assert.NotNull(state);
        Assert.StartsWith("the shared prefix's holder is alive (", state);
        Assert.Contains("wineserver", state);
        Assert.Contains("services.exe", state);
        Assert.Matches(@"; 1 wineserver socket\(s\) under /", state);
    }

    [Fact]
    public void ABringUpThatNeverComesUpFailsNamingTheStage()
    {
        using var cell = new WineIsolation(Path.Combine(_dir, "cell"), "win7", ToolRunner.Instance);
        var e = Assert.Throws<FixtureException>(() => cell.OpenRegistry(FailingWine(99), new Budget(60, 1024)));
        Assert.Contains("the cell's shared Wine prefix did not come up, 3 times: wine/cell:", e.Message);
        Assert.Contains("err:planted: the first program failed", e.Message);
        Assert.Equal(2, cell.Retried.Count);
    }
}
