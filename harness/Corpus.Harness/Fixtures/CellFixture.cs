using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Fixtures;

/// <summary>What a cell's fixture did: where it went and what was checked, with the times.</summary>
/// <param name="HostSeconds">Bringing up the registry's host (a Wine cell's shared prefix).</param>
/// <param name="Applied">The files, where they went, what was read back, and which keys were saved before.</param>
/// <param name="Into">The registry: a Wine prefix, or this Windows machine's.</param>
public sealed record FixtureFacts(double HostSeconds, IReadOnlyList<string> Files, string Into, string Applied, int ValuesReadBack,
                                  int DeletedKeysAbsent, double ApplySeconds)
{
    /// <summary>What the restore checked; null until it ran.</summary>
    public string? Restored { get; init; }
    public bool? RestoredOk { get; init; }
    public int? KeysAbsentAgain { get; init; }
    public int? ExportsIdentical { get; init; }
    public double? RestoreSeconds { get; init; }
}

/// <summary>A case's fixture around its cell's runs: applied before the family runs, restored after, whatever happened.</summary>
public sealed class CellFixture(RegistryFixture registry, IRegistryHost host)
{
    private readonly int _retriedBefore = host.Retried.Count;   // recorded with the apply

    public static CellFixture Apply(FixtureSpec spec, Manifest m, string variant, Subject subject, CellIsolation isolation,
                                    IToolRunner tools, Budget budget, CellResult cell, string dir)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        var host = RegistryHosts.For(subject, isolation, tools, budget);
        if (isolation is IRegistryCell { Retried.Count: > 0 } retried)
        {
            var said = new RunFindings();
            said.LaunchRetries.AddRange(retried.Retried);
            cell.Record(null, said);
        }
        var hostSeconds = Math.Round(clock.Elapsed.TotalSeconds, 2);   // a Wine cell: its prefix comes up
        clock.Restart();
        RegistryFixture fixture;
        try { fixture = RegistryFixture.Apply(host, spec.Files(m.Dir, variant), Path.Combine(dir, "fixture")); }
        finally { RecordRetries(host, cell, 0); }
        var files = spec.Registry.Select(r => r.Replace("{variant}", variant)).ToList();
        var applied = $"{string.Join(", ", files)} into {host.Describe}: {fixture.Applied}; saved before: "
                      + string.Join(", ", fixture.Saved.Select(s => $"{s.Key} ({(s.Existed ? "exported" : "absent")})"));
        cell.Fixture = new FixtureFacts(hostSeconds, files, host.Describe, applied, fixture.ValuesReadBack, fixture.DeletedKeysAbsent,
                                        Math.Round(clock.Elapsed.TotalSeconds, 2));
        return new CellFixture(fixture, host);
    }

    /// <summary>The reg steps that never reached reg.exe and were started again (those after the first <paramref name="seen"/>).</summary>
    private static int RecordRetries(IRegistryHost host, CellResult cell, int seen)
    {
        var retried = host.Retried;
        if (retried.Count <= seen) return retried.Count;
        var said = new RunFindings();
        said.LaunchRetries.AddRange(retried.Skip(seen));
        cell.Record(null, said);
        return retried.Count;
    }

    /// <summary>
    /// Null when restored byte for byte; otherwise what failed, which the runner turns into an `error`: containment
    /// failed.
    /// </summary>
    public string? Restore(CellResult cell)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        var (ok, detail) = registry.Restore();
        RecordRetries(host, cell, _retriedBefore);
        cell.Fixture = cell.Fixture! with
        {
            Restored = detail, RestoredOk = ok, KeysAbsentAgain = registry.KeysAbsentAgain, ExportsIdentical = registry.ExportsIdentical,
            RestoreSeconds = Math.Round(clock.Elapsed.TotalSeconds, 2),
        };
        return ok ? null : $"registry fixture {detail}";
    }
}
