namespace Corpus.Harness.Signatures;

/// <summary>
/// What a family's one long run says while it runs: first the run and its budget, then a line every 5 s, so a run
/// that uses its whole budget (a hang on purpose) is never a silent stretch of the output.
/// </summary>
public sealed class RunTicker : IDisposable
{
    private readonly Timer _timer;

    private RunTicker(Action<string> say, string what, TimeSpan first, TimeSpan every)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        _timer = new Timer(_ => say($"{what} … {clock.Elapsed.TotalSeconds:0} s so far"), null, first, every);
    }

    /// <summary>"<paramref name="what"/> … N s so far" after <paramref name="first"/>, then every <paramref name="every"/>, until disposed.</summary>
    public static RunTicker Every(Action<string> say, string what, TimeSpan first, TimeSpan every) => new(say, what, first, every);

    /// <summary>Says that <paramref name="key"/>'s program runs, and within what budget, then ticks until disposed.</summary>
    public static RunTicker Start(IRunLauncher runs, string key)
    {
        var budget = runs.Case.Budget;
        var what = $"{key}: the program runs (its budget: {budget.TimeoutSec} s{(budget.CpuClock ? " of CPU" : "")}; a program that ends sooner stops it)";
        runs.Progress(what + " …");
        return new RunTicker(runs.Progress, key, TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(5));
    }

    public void Dispose() => _timer.Dispose();
}
