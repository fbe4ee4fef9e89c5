using Corpus.Harness.Json;

namespace Corpus.Harness.Signatures;

/// <summary>
/// Hang family: a UI thread's call blocks for seconds and is released when another thread exits. The program prints
/// stamped markers (REPRO-REACHED ui-call|ui-return t_ms=… call=NAME, worker-exit t_ms=…); the harness judges them.
/// </summary>
/// <param name="Call">Regex over the call's name; only matching calls are judged.</param>
/// <param name="MinSec">A reproduction blocks at least this long.</param>
/// <param name="ExpectedMs">With <paramref name="Tolerance"/>: the block must last ExpectedMs ± that fraction (the
/// thread pool's ThreadTimeoutMs, or the worker's idle time).</param>
/// <param name="ReleaseSec">The call returns at most this long after the worker-exit stamp.</param>
/// <param name="CleanMaxMs">Clean: no judged call blocks longer.</param>
/// <param name="Evidence">Regexes that must all match the output for a reproduction (e.g. the attachment).</param>
/// <param name="ExpectedMsFrom">An environment variable whose value, when a run gets it (from the case or --env), is
/// the expected length instead of ExpectedMs: the hang follows the knob (DOTNET_ThreadPool_ThreadTimeoutMs).</param>
public sealed record HangSpec(string Call, double MinSec, double? ExpectedMs, double Tolerance, double ReleaseSec, double CleanMaxMs,
                              IReadOnlyList<string> Evidence, string? ExpectedMsFrom = null)
{
    /// <summary>More runs while the block straddles an edge: 3 within 120 s unless the case says otherwise.</summary>
    public static readonly DecideSpec DefaultDecide = new(3, 120);

    public DecideSpec Decide { get; init; } = DefaultDecide;

    /// <summary>The block lengths a reproduction may have, in ms: at least minSec, and expectedMs ± tolerance when given.</summary>
    public (double Low, double High) Window => ExpectedMs is { } e
        ? (Math.Max(MinSec * 1000, e * (1 - Tolerance)), e * (1 + Tolerance)) : (MinSec * 1000, double.PositiveInfinity);

    public static HangSpec Read(Fields f)
    {
        f.AllowOnly("call", "minSec", "expectedMs", "tolerance", "releaseSec", "cleanMaxMs", "evidence", "expectedMsFrom", "decide");
        var spec = new HangSpec(f.RegexOr("call") ?? ".", f.NumberOr("minSec", 3, min: 0, above: true, max: 3600)!.Value,
                                f.NumberOr("expectedMs", null, min: 0, above: true, max: 3_600_000),
                                f.NumberOr("tolerance", 0.25, min: 0, above: true, max: 1)!.Value,
                                f.NumberOr("releaseSec", 1, min: 0, above: true, max: 60)!.Value,
                                f.NumberOr("cleanMaxMs", 200, min: 0, above: true, max: 3_600_000)!.Value,
                                f.RegexList("evidence", required: false), f.StringOr("expectedMsFrom", null))
                   { Decide = DecideSpec.Read(f, DefaultDecide) };
        if (spec.ExpectedMsFrom is { } from && !System.Text.RegularExpressions.Regex.IsMatch(from, "^[A-Za-z_][A-Za-z0-9_]*$"))
            throw f.Error($"'{from}' is not an environment variable name", "expectedMsFrom");
        if (spec.CleanMaxMs >= spec.MinSec * 1000)
            throw f.Error($"must be below minSec ({spec.MinSec} s), or a run could be clean and a hang at once", "cleanMaxMs");
        if (spec.ExpectedMs is { } e && e * (1 + spec.Tolerance) < spec.MinSec * 1000)
            throw f.Error($"{e} ms (+{spec.Tolerance:P0}) is below minSec ({spec.MinSec} s): no run could reproduce", "expectedMs");
        return spec;
    }

    /// <summary>The longest block a reproduction may show, which the run's timeout must leave room for.</summary>
    public double LongestMs => ExpectedMs is { } e ? e * (1 + Tolerance) : MinSec * 1000;

    /// <summary>The spec as a run with this environment judges it; null with the reason when the knob is unusable.</summary>
    public (HangSpec? Spec, string? Why) For(IReadOnlyDictionary<string, string> env)
    {
        if (ExpectedMsFrom is not { } name || !env.TryGetValue(name, out var value)) return (this, null);
        if (!double.TryParse(value, System.Globalization.NumberStyles.Float, System.Globalization.CultureInfo.InvariantCulture, out var ms) || ms <= 0)
            return (null, $"{name}={value} is not a positive number of milliseconds");
        return (this with { ExpectedMs = ms, MinSec = Math.Min(MinSec, ms * (1 - Tolerance) / 1000) }, null);
    }
}
