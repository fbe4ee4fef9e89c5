using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Fixtures;

/// <summary>A case's fixture around its cell's runs: applied before the family runs, restored after, whatever happened.</summary>
public sealed class CellFixture(RegistryFixture registry)
{
    public static CellFixture Apply(FixtureSpec spec, Manifest m, string variant, Subject subject, CellIsolation isolation,
                                    IToolRunner tools, Budget budget, CellResult cell, string dir)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        var host = RegistryHosts.For(subject, isolation, tools, budget);
        cell.Metrics["fixture_host_s"] = Math.Round(clock.Elapsed.TotalSeconds, 2);   // a Wine cell: its prefix comes up
        clock.Restart();
        var fixture = RegistryFixture.Apply(host, spec.Files(m.Dir, variant), Path.Combine(dir, "fixture"));
        cell.Metrics["fixture_applied"] = $"{string.Join(", ", spec.Registry.Select(r => r.Replace("{variant}", variant)))} "
                                          + $"into {host.Describe}: {fixture.Applied}; saved before: "
                                          + string.Join(", ", fixture.Saved.Select(s => $"{s.Key} ({(s.Existed ? "exported" : "absent")})"));
        cell.Metrics["fixture_apply_s"] = Math.Round(clock.Elapsed.TotalSeconds, 2);
        return new CellFixture(fixture);
    }

    /// <summary>
    /// Null when restored byte for byte; otherwise what failed, which the runner turns into an `error`: containment
    /// failed.
    /// </summary>
    public string? Restore(CellResult cell)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        var (ok, detail) = registry.Restore();
        cell.Metrics["fixture_restored"] = detail;
        cell.Metrics["fixture_restore_s"] = Math.Round(clock.Elapsed.TotalSeconds, 2);
        return ok ? null : $"registry fixture {detail}";
    }
}
