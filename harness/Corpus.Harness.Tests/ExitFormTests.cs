using Corpus.Harness.Containment;
using Corpus.Harness.Model;

namespace Corpus.Harness.Tests;

/// <summary>How each manifest "exit" reads the ways a run can end.</summary>
public class ExitFormTests
{
    private static readonly RunResult Exited = new(0, null, false, false, 1, 1 << 20, "", "", "", "", "", []);

    /// <summary>The ways a run ends, by name: as it exited, killed by a signal, or stopped by the harness.</summary>
    private static RunResult Ending(string ending) => ending switch
    {
        "exit 0" => Exited,
        "exit 3" => Exited with { ExitCode = 3 },
        "SIGABRT" => Exited with { ExitCode = null, Signal = "SIGABRT" },
        "SIGKILL" => Exited with { ExitCode = null, Signal = "SIGKILL" },
        "timed out" => Exited with { ExitCode = null, Signal = "SIGKILL", TimedOut = true },
        "memory cap" => Exited with { ExitCode = null, Signal = "SIGKILL", MemoryCapped = true },
        "starved" => Exited with { ExitCode = null, Signal = "SIGKILL", CpuBudget = 10, CpuSeconds = 2, Starved = true },
        _ => throw new ArgumentException(ending),
    };

    [Theory]
    // A run the harness stopped fits "any", "timeout" when its budget ran out, and "budget" then or at its memory cap;
    // a starved run showed neither, so it fits no ending of its own; the harness's SIGKILL is not the program's.
    [InlineData("any", "exit 0 exit 3 SIGABRT SIGKILL timed out memory cap starved")]
    [InlineData("zero", "exit 0")]
    [InlineData("nonzero", "exit 3 SIGABRT SIGKILL")]
    [InlineData("timeout", "timed out")]
    [InlineData("budget", "timed out memory cap")]
    [InlineData("SIGABRT", "SIGABRT")]
    [InlineData("SIGKILL", "SIGKILL")]
    public void EachExitFitsItsEndingsOnly(string exit, string fits)
    {
        var form = ExitForms.ByName[exit];
        foreach (var ending in new[] { "exit 0", "exit 3", "SIGABRT", "SIGKILL", "timed out", "memory cap", "starved" })
            Assert.True(form.Fits(Ending(ending)) == fits.Contains(ending), $"\"{exit}\" against a run that ended {ending}");
    }
}
