using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Runner.Phases;

/// <summary>
/// The Windows side of a run: a trace (CORPUS_TTD_TRACE) launches it under TTD.exe, a crash capture under
/// procdump -e -x; their dumps and traces are the run's captures. An absent tool is a capture error with the reason,
/// and the run goes on without it. Named sections die with the run's Job Object, so nothing is watched.
/// </summary>
public sealed class WindowsRuns(IToolRunner tools, CaseSpec cs, CellResult cell) : IRunPlatform
{
    public (Launch Launch, string? CaptureError) Wrap(Launch launch, string workDir, string label)
    {
        string? error = null;
        if (Environment.GetEnvironmentVariable(WindowsTtd.TraceVariable) is { Length: > 0 } mode)
        {
            var ttd = new WindowsTtd();
            if (ttd.Unavailable is { } why) error = $"{label}: TTD.exe: {why}";
            // procdump -x around TTD.exe would dump TTD, not the program: the trace holds the crash anyway.
            else return (ttd.Wrap(launch, Path.Combine(workDir, $"{label}-ttd"), WindowsTtd.ParseMode(mode)), null);
        }
        if (cs.Crash is null) return (launch, error);
        var procdump = new WindowsProcDump(tools);
        if (procdump.Unavailable is { } missing) return (launch, string.Join("; ", new[] { error, $"{label}: procdump.exe (crash): {missing}" }.OfType<string>()));
        return (procdump.WrapCrash(launch, workDir), error);
    }

    public IRunScope Begin() => new NoScope();

    /// <summary>What procdump -e and TTD.exe wrote for this run: crash dumps and traces, for WinDbg; a file an earlier
    /// run of the cell left in the same folder is that run's.</summary>
    public RunFindings Collect(RunResult run, int pid, string workDir, string label)
    {
        var found = new RunFindings();
        var traces = Path.Combine(workDir, $"{label}-ttd");
        var files = Directory.GetFiles(workDir, "*.dmp")
            .Concat(Directory.Exists(traces) ? Directory.GetFiles(traces, "*.run") : []).ToList();
        var recorded = cell.CapturesNow().Select(c => c.File).ToHashSet();
        foreach (var f in files.Where(f => !recorded.Contains(f)))
            found.Captures.Add(new CaptureRecord(f.EndsWith(".run") ? "TTD.exe" : "procdump.exe", f, new FileInfo(f).Length, 0,
                                                  run.WallSeconds, [], $"{run.Status} in {label}; open it in WinDbg") { Run = label });
        if (cs.Crash is not null && run.Signal is not null && files.Count == 0)
            found.CaptureErrors.Add($"{label}: {run.Signal} but no dump in {workDir}");
        return found;
    }

    private sealed class NoScope : IRunScope
    {
        public void Started(int pid) { }
        public void Dispose() { }
    }
}
