using Corpus.Harness.Capture;
using Corpus.Harness.Fixtures;

namespace Corpus.Harness.Tests;

/// <summary>
/// A reg step in a Wine prefix that never reached reg.exe (Wine's start.exe: "ShellExecuteEx failed: Internal error",
/// the child died before it finished starting; or an exit with not a word) is started again, at most three times in
/// all, and each such attempt is said; reg.exe's own failures are its answer and are not repeated.
/// </summary>
public sealed class WineRegistryRetryTests : IDisposable
{
    private readonly string _env = Path.GetTempFileName();

    public WineRegistryRetryTests() => File.WriteAllText(_env, "WINEPREFIX=/nowhere\nWINEDEBUG=-all\n");
    public void Dispose() => File.Delete(_env);

    private sealed class Scripted(params ToolResult[] results) : IToolRunner
    {
        public int Calls { get; private set; }
        public ToolResult Run(string file, IReadOnlyList<string> args, TimeSpan timeout) => results[Math.Min(Calls++, results.Length - 1)];
    }

    private static readonly ToolResult Died =
        new(1, "", "Application could not be started, or no application associated with the specified file.\nShellExecuteEx failed: Internal error.\n", 0.4, false);
    private static readonly ToolResult Silent = new(1, "", "", 0.1, false);
    private static readonly ToolResult Ok = new(0, "HKEY_LOCAL_MACHINE\\Software\\X\n", "", 0.2, false);
    private static readonly ToolResult RegSaysNo = new(1, "", "reg: Unable to find the specified registry key\n", 0.2, false);

    [Fact]
    public void AStepWhoseRegDiedStartingIsStartedAgainAndSaid()
    {
        var tools = new Scripted(Died, Silent, Ok);
        var host = new WineRegistry("wine", _env, tools);
        var r = host.Reg(["query", @"HKLM\Software\X"]);
        Assert.Equal((0, 3), (r.ExitCode, tools.Calls));
        Assert.Equal(2, host.Retried.Count);
        Assert.Equal(@"reg query HKLM\Software\X: attempt 1 of 3 never reached reg.exe: exit 1: start.exe's ""ShellExecuteEx failed: Internal error"" (reg.exe died before it finished starting)",
                     host.Retried[0]);
        Assert.EndsWith("attempt 2 of 3 never reached reg.exe: exit 1 with no output", host.Retried[1]);
    }

    [Fact]
    public void RegsOwnAnswerIsNotRepeatedAndThreeDeathsEndIt()
    {
        var answered = new Scripted(RegSaysNo, Ok);
        Assert.Equal(1, new WineRegistry("wine", _env, answered).Reg(["query", "HKLM\\X"]).ExitCode);
        Assert.Equal(1, answered.Calls);
        var dying = new Scripted(Died);
        var host = new WineRegistry("wine", _env, dying);
        Assert.Contains("Internal error", host.Reg(["export", "HKLM\\X", "f.reg", "/y"]).Stderr);
        Assert.Equal((3, 2), (dying.Calls, host.Retried.Count));
    }
}
