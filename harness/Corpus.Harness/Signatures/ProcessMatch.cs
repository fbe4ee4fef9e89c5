using System.Text.RegularExpressions;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;

namespace Corpus.Harness.Signatures;

/// <summary>Process-level signature family: exit status or signal, output patterns, duration (on the budget's clock).</summary>
public static partial class ProcessMatch
{
    /// <summary>Null when the run fits the pattern, otherwise what did not fit.</summary>
    public static string? Mismatch(ProcessPattern pattern, RunResult run)
    {
        if (!pattern.Exit.Fits(run)) return $"expected exit '{pattern.Exit.Name()}', got {run.Status}";
        var text = run.Stdout + run.Stderr;
        foreach (var p in pattern.Output)
            if (!Regex.IsMatch(text, p, RegexOptions.Multiline))
                return $"output lacks /{p}/";
        if (pattern.MaxSeconds is { } max && run.ClockSeconds > max)
            return run.CpuBudget is not null && run.CpuSeconds is { } cpu
                ? $"used {cpu:0.00} s of CPU, more than {max} s" : $"took {run.WallSeconds:0.00} s, more than {max} s";
        if (pattern.MinGrowthMBs is { } growth && (ExponentialSweep.GrowthMBPerSec(run.Memory) ?? 0) < growth)
            return $"memory grew {ExponentialSweep.GrowthMBPerSec(run.Memory) ?? 0:0.0} MB/s, less than {growth} MB/s";
        return null;
    }

    /// <summary>The last lines of stderr (or stdout), to say in one line why a run failed.</summary>
    public static string Tail(RunResult run, int lines = 3)
    {
        var text = string.IsNullOrWhiteSpace(run.Stderr) ? run.Stdout : run.Stderr;
        // A silent run's end is all there is to say, and a blank detail hides it.
        if (string.IsNullOrWhiteSpace(text)) return $"no output; {run.Status} after {run.WallSeconds:0.00} s";
        var last = text.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).TakeLast(lines).ToList();
        // The cause first: an exception or abort line is what a reader needs, and it is rarely among the last frames.
        if (Cause(run) is not { } cause) return string.Join(" | ", last);
        var rest = last.Where(l => !l.Contains(cause, StringComparison.Ordinal)).ToList();
        var skipped = rest.Count == last.Count ? "… " : "";
        return rest.Count == 0 ? cause : $"{cause} | {skipped}{string.Join(" | ", rest)}";
    }

    /// <summary>
    /// The line that says why the program died: the first unhandled exception (its type and message), an assertion
    /// or abort message (CoreCLR's FailFast: "Process terminated. …"), or a sanitizer's summary; null when the output has none.
    /// </summary>
    public static string? Cause(RunResult run)
    {
        foreach (var line in (run.Stderr + "\n" + run.Stdout).Split('\n'))
            if (CauseLine().Match(line) is { Success: true } m) return m.Value.Trim();
        return null;
    }

    [System.Text.RegularExpressions.GeneratedRegex(
        @"(Unhandled [Ee]xception[.:]?\s*)?\b(\w+\.)*\w*Exception\b(: .+)?$|(Assertion .* failed|\* Assertion at|double free or corruption|terminate called|SUMMARY: \w+Sanitizer:|Fatal error\.|Process terminated\. ).*$")]
    private static partial System.Text.RegularExpressions.Regex CauseLine();
}
