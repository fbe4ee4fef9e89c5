using Corpus.Harness.Containment;
using Corpus.Harness.Model;

namespace Corpus.Harness.Runner.Phases;

/// <summary>
/// Time travel (capture.timeTravel): the case's program once more under gdb's process record, driven by the repro's
/// script, whose output must show the capture's pattern. The script and its output stay in time-travel/. gdb runs with
/// the xstate shim (harness/native/xstate), which completes the register writes of a step back where the kernel's
/// XSAVE area is larger than gdb 13's buffer; the program keeps its own environment.
/// </summary>
public sealed class TimeTravelRun(RunLauncher runs, string root)
{
    private string XstateLibrary => Path.Combine(root, "build", "harness", "xstate.so");
    private const string XstateReportVariable = "CORPUS_XSTATE_REPORT";

    /// <summary>The shim's one line, beside gdb's output: the kernel's XSAVE size, gdb's, and the writes it completed.</summary>
    public const string XstateReportFile = "xstate.txt";

    /// <summary>The recording's run and output, and a capture error when gdb runs without the shim.</summary>
    public async Task<(RunResult Run, string StdoutFile, RunFindings Findings)> RunAsync(TimeTravelCapture tt)
    {
        var launch = runs.Command(null);
        var work = Path.Combine(runs.Dir, "time-travel");
        // A recording made again keeps the earlier one beside it.
        for (var i = 1; Directory.Exists(work); i++)
            if (!Directory.Exists($"{work}.attempt{i}")) Directory.Move(work, $"{work}.attempt{i}");
        Directory.CreateDirectory(work);
        var script = Path.Combine(work, Path.GetFileName(tt.Script));
        File.Copy(tt.Script, script, overwrite: true);
        var env = new Dictionary<string, string>(launch.Env);
        var found = new RunFindings();
        var programPreload = launch.Env.GetValueOrDefault("LD_PRELOAD");
        if (File.Exists(XstateLibrary))
        {
            env["LD_PRELOAD"] = string.IsNullOrEmpty(programPreload) ? XstateLibrary : $"{XstateLibrary} {programPreload}";
            env[XstateReportVariable] = Path.Combine(work, XstateReportFile);
        }
        else found.CaptureErrors.Add($"time travel: {XstateLibrary} is missing (ci/setup.sh builds it): gdb's register writes go uncompleted");
        string[] inferiorEnv = string.IsNullOrEmpty(programPreload)
            ? ["-iex", "unset environment LD_PRELOAD"] : ["-iex", $"set environment LD_PRELOAD={programPreload}"];
        string[] args = ["-q", "-batch", "-nx", .. inferiorEnv, "-iex", $"unset environment {XstateReportVariable}",
                         "-x", script, "--args", launch.File, .. launch.Args];
        File.WriteAllText(Path.Combine(work, "command.txt"), "gdb " + string.Join(' ', args) + "\n");
        var budget = runs.Case.Budget;
        var spec = new ProcessSpec("gdb", args, work, Path.Combine(work, "gdb.stdout"), Path.Combine(work, "gdb.stderr"),
                                   TimeSpan.FromSeconds(budget.TimeoutSec), (long)budget.MemoryMB << 20, env);
        runs.Progress("time travel: gdb record full with " + Path.GetFileName(tt.Script));
        using var p = new ContainedProcess(spec);
        return (await p.WaitAsync(), spec.StdoutFile, found);
    }
}
