using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>
/// A family's runs without processes: each ExecuteAsync returns what the test scripts. What a family does not ask of
/// its runs throws, so a test learns when a family starts to need more.
/// </summary>
internal abstract class FakeRunLauncher(CaseSpec cs) : IRunLauncher
{
    public Manifest Manifest => throw new NotSupportedException();
    public CaseSpec Case => cs;
    public string Variant => "bug";
    public Subject Subject => throw new NotSupportedException();
    public string Dir => throw new NotSupportedException();
    public virtual int? ForceRuns => null;
    public virtual IReadOnlyDictionary<string, string> Env => new Dictionary<string, string>();
    public void Progress(string message) { }
    public void DeleteRun(RunResult run, string label) { }
    public virtual Task<(RunResult Run, string StdoutFile)> RecordAsync(TimeTravelCapture tt) => throw new NotSupportedException();

    /// <summary>The run at size n (null for one-run families) with this label, its metrics and markers.</summary>
    protected abstract RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured);

    public Task<RunOutput> ExecuteAsync(long? n, string label, TimedCapture? timed, Func<ContainedProcess, Task>? alongside = null,
                                        Action<RunResult>? exited = null, bool untilCaptured = false)
    {
        var output = Run(n, label, timed, untilCaptured);
        exited?.Invoke(output.Run);
        return Task.FromResult(output);
    }

    protected static RunOutput Exited(RunResult run, Dictionary<string, double>? metrics = null) =>
        new(run, metrics is null ? ProgramMetrics.None : new ProgramMetrics(metrics), new Dictionary<string, double>());
}
