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
        if (isolation is IRegistryCell cellHost) RecordRetries(cellHost.Retried, cell);
        var hostSeconds = Math.Round(clock.Elapsed.TotalSeconds, 2);   // a Wine cell: its prefix comes up
        clock.Restart();
        RegistryFixture fixture;
        try { fixture = RegistryFixture.Apply(host, spec.Files(m.Dir, variant), Path.Combine(dir, "fixture")); }
        finally { RecordRetries(host.Retried, cell); }
        var files = spec.Registry.Select(r => r.Replace("{variant}", variant)).ToList();
        var applied = $"{string.Join(", ", files)} into {host.Describe}: {fixture.Applied}; saved before: "
                      + string.Join(", ", fixture.Saved.Select(s => $"{s.Key} ({(s.Existed ? "exported" : "absent")})"));
        cell.Fixture = new FixtureFacts(hostSeconds, files, host.Describe, applied, fixture.ValuesReadBack, fixture.DeletedKeysAbsent,
                                        Math.Round(clock.Elapsed.TotalSeconds, 2));
        return new CellFixture(fixture, host);
    }

    /// <summary>Attempts that never reached their program (a prefix's bring-up, a reg step) and were started again.</summary>
    private static void RecordRetries(IEnumerable<string> retried, CellResult cell)
    {
        var said = new RunFindings();
        said.LaunchRetries.AddRange(retried);
        if (said.LaunchRetries.Count > 0) cell.Record(null, said);
    }

    /// <summary>
    /// Null when restored byte for byte; otherwise what failed, which the runner turns into an `error`: containment
    /// failed.
    /// </summary>
    public string? Restore(CellResult cell)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        var (ok, detail) = registry.Restore();
        RecordRetries(host.Retried.Skip(_retriedBefore), cell);
        cell.Fixture = cell.Fixture! with
        {
            Restored = detail, RestoredOk = ok, KeysAbsentAgain = registry.KeysAbsentAgain, ExportsIdentical = registry.ExportsIdentical,
            RestoreSeconds = Math.Round(clock.Elapsed.TotalSeconds, 2),
        };
        return ok ? null : $"registry fixture {detail}";
    }
}
