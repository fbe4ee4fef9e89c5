using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Runner.Phases;

/// <summary>
/// The Linux side of a run: /dev/shm is watched for what the run leaves there (<see cref="ShmJanitor"/>), and a crash
/// capture reads what the kernel and the program left: procdump -e semantics through the kernel's core.
/// </summary>
public sealed class LinuxRuns(string root, IToolRunner tools, CaseSpec cs, Subject subject, string program) : IRunPlatform
{
    private string FreelogScript => Path.Combine(root, "harness", "native", "freelog", "freelog.py");

    public (Launch Launch, string? CaptureError) Wrap(Launch launch, string workDir, string label) => (launch, null);

    public IRunScope Begin() => new ShmScope(new ShmJanitor(Path.Combine(root, ".cache", "ledger")));

    public RunFindings Collect(RunResult run, int pid, string workDir, string label)
    {
        var found = new RunFindings();
        if (cs.Crash is not null) CollectCrash(cs.Crash, pid, run, workDir, label, found);
        return found;
    }

    /// <summary>
    /// After a crash, keep the core, name its threads with gdb and, with freelog, list every free() of the pointer that
    /// blew up. The perf map is moved beside the core either way.
    /// </summary>
    private void CollectCrash(CrashCapture crash, int pid, RunResult run, string workDir, string label, RunFindings found)
    {
        var perfMap = ContainedProcess.PerfMapFiles(pid)[0];
        try
        {
            if (run.TimedOut) return;
            // The program's own crash handler wrote its event ring (a Windows program writes no core).
            if (crash.RingFile is { } ringName && Path.Combine(workDir, ringName) is var ring && File.Exists(ring))
                found.Captures.Add(new CaptureRecord("ring", ring, new FileInfo(ring).Length, 0, run.WallSeconds, [],
                                                  $"written by the program's crash handler in {label}") { Run = label });
            if (run.Signal is null) return;
            var core = new[] { "core", $"core.{pid}" }.Select(f => Path.Combine(workDir, f)).FirstOrDefault(File.Exists);
            if (core is null)
            {
                found.CaptureErrors.Add($"{label}: {run.Signal} but no core in {workDir} (core_pattern: {CorePattern()})");
                return;
            }
            if (File.Exists(perfMap)) File.Copy(perfMap, Path.Combine(workDir, Path.GetFileName(perfMap)), overwrite: true);
            // gdb needs the real executable behind the subject's launcher.
            var exe = subject.Kind.CrashExecutable(subject, program);
            var clock = System.Diagnostics.Stopwatch.StartNew();
            var bt = tools.Run("gdb", ["-q", "-batch", "-nx", "-ex", "thread apply all bt", exe, core], TimeSpan.FromMinutes(2));
            File.WriteAllText(Path.Combine(workDir, "gdb-threads.txt"), bt.Stdout + bt.Stderr);
            IReadOnlyList<ThreadStack> threads = [];
            if (crash.Freelog)
            {
                var facts = FreelogAnalysis.Run(tools, exe, core, FreelogScript);
                File.WriteAllText(Path.Combine(workDir, "freelog.txt"), facts.Text);
                found.CrashFacts[label] = facts;
                threads = facts.Frees.Select(f => new ThreadStack($"LWP {f.Thread}{(f.Aborting ? " (aborting)" : "")}", f.Frames) { Crashing = f.Aborting }).ToList();
            }
            found.Captures.Add(new CaptureRecord("core", core, new FileInfo(core).Length, Math.Round(clock.Elapsed.TotalSeconds, 2),
                                              run.WallSeconds, threads, $"{run.Signal} in {label}") { Run = label });
        }
        catch (Exception e) when (e is IOException or InvalidOperationException or UnauthorizedAccessException)
        {
            found.CaptureErrors.Add($"{label}: crash capture failed: {e.Message}");
        }
        finally
        {
            foreach (var file in ContainedProcess.PerfMapFiles(pid))
                try { File.Delete(file); } catch (IOException) { }
        }
    }

    private static string CorePattern()
    {
        try { return File.ReadAllText("/proc/sys/kernel/core_pattern").Trim(); }
        catch (IOException) { return "unknown"; }
    }

    private sealed class ShmScope(ShmJanitor janitor) : IRunScope
    {
        public void Started(int pid) => janitor.Own(pid);
        public void Dispose() => janitor.Dispose();
    }
}
