using Corpus.Harness.Json;

namespace Corpus.Harness.Model;

/// <summary>How a run must end, as a manifest's "exit" says it.</summary>
/// <remarks>Budget: the run used up its time (or CPU) budget or met its memory cap, for a loop that allocates without
/// end, where which comes first depends on how fast the host's CPU lets it go round.</remarks>
public enum ExitForm { Any, Zero, Nonzero, Timeout, Budget, Sigabrt, Sigsegv, Sigkill }

public static class ExitForms
{
    public static readonly IReadOnlyDictionary<string, ExitForm> ByName = new Dictionary<string, ExitForm>
    {
        ["any"] = ExitForm.Any, ["zero"] = ExitForm.Zero, ["nonzero"] = ExitForm.Nonzero, ["timeout"] = ExitForm.Timeout,
        ["budget"] = ExitForm.Budget,
        ["SIGABRT"] = ExitForm.Sigabrt, ["SIGSEGV"] = ExitForm.Sigsegv, ["SIGKILL"] = ExitForm.Sigkill,
    };

    public static string Name(this ExitForm e) => ByName.First(kv => kv.Value == e).Key;

    /// <summary>Whether the run ended this way; a run the harness stopped (time, CPU or memory cap, or starved) fits only
    /// "any", "timeout" when its budget ran out, and "budget" then or when it met its memory cap (a starved run fits neither).</summary>
    public static bool Fits(this ExitForm e, Containment.RunResult run) => e switch
    {
        ExitForm.Any => true,
        ExitForm.Timeout => run.TimedOut,
        ExitForm.Budget => run.TimedOut || run.MemoryCapped,
        _ when run.Stopped => false,
        ExitForm.Zero => run.ExitCode == 0,
        ExitForm.Nonzero => run.Signal is not null || run.ExitCode is not 0,
        var signal => run.Signal == signal.Name(),
    };
}

/// <summary>What a clean or a reproducing process looks like: exit status and output patterns.</summary>
/// <param name="MinGrowthMBs">The run's memory must grow at least this fast (MB/s, first sample to highest): a loop
/// that allocates, as opposed to one that spins.</param>
public sealed record ProcessPattern(ExitForm Exit, IReadOnlyList<string> Output, double? MaxSeconds, double? MinGrowthMBs = null)
{

    public static ProcessPattern Read(Fields f)
    {
        f.AllowOnly("exit", "output", "maxSeconds", "minGrowthMBs");
        return new ProcessPattern(f.Enum("exit", ExitForms.ByName, ExitForm.Any, required: false),
                                  f.RegexList("output", required: false, nonEmpty: false),
                                  f.NumberOr("maxSeconds", null, min: 0, above: true, max: 86400),
                                  f.NumberOr("minGrowthMBs", null, min: 0, above: true, max: 1048576));
    }

    public static readonly ProcessPattern DefaultClean = new(ExitForm.Zero, ["REPRO-DONE"], null);
}

/// <summary>A run that shows a missing prerequisite (e.g. a runtime that cannot run the repro at all).</summary>
public sealed record UnsupportedSpec(ProcessPattern When, string Reason)
{
    public static UnsupportedSpec Read(Fields f)
    {
        f.AllowOnly("exit", "output", "reason");
        return new UnsupportedSpec(new ProcessPattern(f.Enum("exit", ExitForms.ByName, ExitForm.Any, required: false),
                                                      f.RegexList("output"), null), f.String("reason"));
    }
}
