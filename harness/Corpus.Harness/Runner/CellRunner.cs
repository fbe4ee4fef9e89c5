using System.Text.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Runner;

/// <param name="ForceRuns">For races: run exactly this many times, without stopping at the first hit, to measure a rate.</param>
/// <param name="MaxCoreMB">Kept cores larger than this are deleted (the capture record says so).</param>
public sealed record RunOptions(string Root, string RunDir, bool Keep, Action<string> Progress, int? ForceRuns = null,
                                int MaxCoreMB = RunOptions.DefaultMaxCoreMB)
{
    public const int DefaultMaxCoreMB = 1024;
}

/// <summary>
/// Orchestrates one (repro, case, variant, subject) cell: resolve, build, isolate, run the signature family,
/// check evidence, gate. What a subject or a family does lives in its own class (Subjects/, Signatures/).
/// </summary>
public sealed class CellRunner(RunOptions options, Builder builder, IToolRunner tools,
                               IReadOnlyList<ISignatureFamily>? families = null)
{
    public const string MetricPrefix = CellRuns.MetricPrefix;

    public async Task<CellResult> RunAsync(Manifest m, CaseSpec cs, string variant, Subject subject, Expectation? expected)
    {
        var key = new CellKey(m.Id, cs.Id, variant, subject.Name);
        var dir = Path.Combine(options.RunDir, m.Id, cs.Id, variant, subject.Slug);
        var cell = new CellResult
        {
            Key = key, Expected = expected, ArtifactDir = dir,
            Rerun = $"make run REPRO={m.Id} CASE={cs.Id} VARIANT={variant} SUBJECT={subject.Name} KEEP=1",
        };
        var clock = System.Diagnostics.Stopwatch.StartNew();
        Directory.CreateDirectory(dir);
        File.WriteAllText(Path.Combine(dir, "rerun.txt"), cell.Rerun + "\n");
        try
        {
            await RunCoreAsync(m, cs, variant, subject, cell, dir);
        }
        catch (Exception e)
        {
            cell.Outcome = Outcome.Error;
            cell.Detail = $"harness error: {e.GetType().Name}: {e.Message}";
            File.WriteAllText(Path.Combine(dir, "harness-error.txt"), e.ToString());
        }
        cell.Seconds = Math.Round(clock.Elapsed.TotalSeconds, 2);
        (cell.Gate, cell.GateMessage) = CellResult.Compare(cell.Outcome, expected);
        // A compiler version NuGet lacks here: its expectation applies where it can be provisioned.
        if (cell.Outcome == Outcome.Unsupported && subject.Unavailable is not null && subject.Kind.UnavailableIsUnchecked
            && expected is not null && expected.Outcome != Outcome.Unsupported)
            (cell.Gate, cell.GateMessage) = (GateStatus.Unchecked,
                $"not gated: {subject.Name} cannot be provisioned here; expected {expected.Outcome.Name()} where it can");
        CapCores(cell);
        File.WriteAllText(Path.Combine(dir, "cell.json"), JsonSerializer.Serialize(Report.SummaryWriter.CellJson(cell, options.Root),
                          Report.SummaryWriter.JsonOptions));
        // A user's subject has no expectation: its artifacts go like the others' unless it ended in a way worth reading.
        var asWanted = cell.Gate == GateStatus.Pass
                       || (cell.Gate == GateStatus.Unchecked && cell.Outcome is Outcome.Reproduced or Outcome.Clean);
        if (asWanted && !options.Keep)
        {
            Directory.Delete(dir, recursive: true);
            cell.ArtifactDir = null;
        }
        return cell;
    }

    private async Task RunCoreAsync(Manifest m, CaseSpec cs, string variant, Subject subject, CellResult cell, string dir)
    {
        if (!cs.Platforms.Contains(OperatingSystem.IsWindows() ? "windows" : "linux"))
        {
            (cell.Outcome, cell.Detail) = (Outcome.Unsupported, $"runs only on {string.Join(", ", cs.Platforms)}");
            return;
        }
        if (subject.Unavailable is { } why)
        {
            (cell.Outcome, cell.Detail) = (Outcome.Unsupported, $"subject {subject.Name} unavailable: {why}");
            return;
        }
        var kind = subject.Kind;
        if (subject.Validate(cs) is { } unrunnable)
        {
            (cell.Outcome, cell.Detail) = (Outcome.Error, unrunnable.Reason);
            return;
        }
        var build = builder.Ensure(m, kind.Recipe(subject, m, cs));
        if (build.Program is null)
        {
            (cell.Outcome, cell.Detail) = (Outcome.Error, build.Error!);
            return;
        }
        cell.Metrics["runtime"] = kind.Describe(subject);
        using var isolation = kind.Isolate(subject, dir);
        var backend = kind.SnapshotBackend(subject, new CaptureContext(tools, options.Root, cs.Timed?.Heap ?? false,
                                                                               Holds: SignatureFamilies.For(cs.Signature).Waits));
        var runs = new CellRuns(options, tools, m, cs, variant, subject, build.Program, isolation, backend, cell, dir);
        var fixture = cs.Fixture is { } fx ? Fixtures.CellFixture.Apply(fx, m, variant, subject, isolation, tools, cs.Budget, cell, dir) : null;
        try
        {
            await SignatureFamilies.For(cs.Signature, families).RunAsync(runs, cell);
        }
        finally
        {
            fixture?.Restore(cell);
        }
        if (isolation.Describe is { } isolated) cell.Metrics["isolation"] = isolated;
        if (cell.Outcome == Outcome.Reproduced) Evidence.Check(cs.Signature, cell, backend);
        if (cell.Outcome == Outcome.Reproduced && cs.TimeTravel is { } tt && tt.Subjects.Contains(subject.Name))
            await runs.TimeTravelAsync(tt);
    }

    /// <summary>Cores can be hundreds of MB a run: over the cap they are deleted, and the record says so.</summary>
    private void CapCores(CellResult cell)
    {
        var cap = (long)options.MaxCoreMB << 20;
        lock (cell.Captures)
            for (var i = 0; i < cell.Captures.Count; i++)
            {
                var c = cell.Captures[i];
                if (c.Bytes <= cap || !File.Exists(c.File) || c.File.EndsWith(".txt")) continue;
                File.Delete(c.File);
                cell.Captures[i] = c with { Note = $"{(c.Note is null ? "" : c.Note + "; ")}deleted after reading: "
                                                   + $"{c.Bytes >> 20} MB is over the {options.MaxCoreMB} MB cap for kept cores" };
            }
    }
}
