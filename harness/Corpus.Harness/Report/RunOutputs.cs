using Corpus.Harness.Containment;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Report;

/// <summary>What `corpus run` and `corpus merge` both print and link at the end, so a merged run reads as one run.</summary>
public static class RunOutputs
{
    /// <summary>artifacts/latest → the run. Windows: a symbolic link needs a privilege (or developer mode), so none there.</summary>
    public static void LinkLatest(string artifacts, string runId)
    {
        if (!IHost.Current.LinksLatest) return;
        var latest = Path.Combine(artifacts, "latest");
        if (File.Exists(latest) || Directory.Exists(latest)) File.Delete(latest);
        File.CreateSymbolicLink(latest, runId);
    }

    /// <summary>The table, the input errors, the count line and the gate line.</summary>
    public static void Print(TextWriter to, string root, string runDir, IReadOnlyList<CellResult> cells, IReadOnlyList<string> errors, double seconds)
    {
        to.WriteLine(ConsoleTable.Render(cells));
        foreach (var e in errors) to.WriteLine($"INPUT ERROR {e}");
        var differ = cells.Count(c => c.Gate.Fails());
        var failed = cells.Count(RunExit.Fails);
        to.WriteLine();
        to.WriteLine($"{cells.Count} cells, {differ} differ from expected/, "
                     + (failed > differ ? $"{failed - differ} with no expectation ended neither reproduced nor clean, " : "")
                     + $"{errors.Count} input errors, {seconds:0} s. "
                     + $"Report: {Path.GetRelativePath(root, Path.Combine(runDir, "report.md"))}");
        // Cells whose subject cannot be provisioned here (a compiler version NuGet lacks) neither pass nor fail.
        var notGated = cells.Count(c => c.Gate == GateStatus.Unchecked && c.Expected is not null);
        to.WriteLine($"gate: {cells.Count - failed - notGated} passed, {failed} failed"
                     + (notGated > 0 ? $", {notGated} not gated (subject unavailable here)" : "")
                     + (errors.Count > 0 ? $", {errors.Count} input errors" : ""));
    }
}
