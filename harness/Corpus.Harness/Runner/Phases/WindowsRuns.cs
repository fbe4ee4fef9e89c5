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
    public Launch Wrap(Launch launch, string workDir, string label)
    {
        if (Environment.GetEnvironmentVariable(WindowsTtd.TraceVariable) is { Length: > 0 } mode)
        {
            var ttd = new WindowsTtd();
            if (ttd.Unavailable is { } why) cell.AddCaptureError($"{label}: TTD.exe: {why}");
            // procdump -x around TTD.exe would dump TTD, not the program: the trace holds the crash anyway.
            else return ttd.Wrap(launch, Path.Combine(workDir, $"{label}-ttd"), WindowsTtd.ParseMode(mode));
        }
        if (cs.Crash is null) return launch;
        var procdump = new WindowsProcDump(tools);
        if (procdump.Unavailable is { } missing)
        {
            cell.AddCaptureError($"{label}: procdump.exe (crash): {missing}");
            return launch;
        }
        return procdump.WrapCrash(launch, workDir);
    }

    public IRunScope Begin() => new NoScope();

    /// <summary>What procdump -e and TTD.exe wrote for this run: crash dumps and traces, for WinDbg.</summary>
    public void Collect(RunResult run, int pid, string workDir, string label)
    {
        var traces = Path.Combine(workDir, $"{label}-ttd");
        var files = Directory.GetFiles(workDir, "*.dmp")
            .Concat(Directory.Exists(traces) ? Directory.GetFiles(traces, "*.run") : []).ToList();
        foreach (var f in files)
            cell.AddCaptureOnce(new CaptureRecord(f.EndsWith(".run") ? "TTD.exe" : "procdump.exe", f, new FileInfo(f).Length, 0,
                                                  run.WallSeconds, [], $"{run.Status} in {label}; open it in WinDbg") { Run = label });
        if (cs.Crash is not null && run.Signal is not null && files.Count == 0)
            cell.AddCaptureError($"{label}: {run.Signal} but no dump in {workDir}");
    }

    private sealed class NoScope : IRunScope
    {
        public void Started(int pid) { }
        public void Dispose() { }
    }
}
