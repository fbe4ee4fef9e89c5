using Corpus.Harness.Containment;
using System.Text.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Runner;

/// <param name="ForceRuns">For races: run exactly this many times, without stopping at the first hit, to measure a rate.</param>
/// <param name="MaxCoreMB">Kept cores larger than this are deleted (the capture record says so).</param>
/// <param name="Env">Given with --env: set for every run of every cell, over the manifest's env.</param>
public sealed record RunOptions(string Root, string RunDir, bool Keep, Action<string> Progress, int? ForceRuns = null,
                                int MaxCoreMB = RunOptions.DefaultMaxCoreMB, IReadOnlyDictionary<string, string>? Env = null)
{
    public const int DefaultMaxCoreMB = 1024;

    /// <summary>Runtime knobs that reach a program from the harness's own environment unless --env sets them.</summary>
    public static readonly string[] KnobPrefixes = ["DOTNET_", "COMPlus_", "MONO_", "WINE"];

    /// <summary>The SDK's own settings (dotnet test and dotnet tool set them), which no runtime reads.</summary>
    public static readonly string[] SdkOnly = ["DOTNET_CLI_", "DOTNET_NOLOGO", "DOTNET_GENERATE_ASPNET_CERTIFICATE",
                                               "DOTNET_SKIP_FIRST_TIME_EXPERIENCE", "DOTNET_ADD_GLOBAL_TOOLS_TO_PATH", "DOTNET_HOST_PATH"];

    /// <summary>The knobs the harness's environment passes on to runs, which --env does not set: recorded per cell.</summary>
    public IReadOnlyDictionary<string, string> InheritedKnobs()
    {
        var knobs = new SortedDictionary<string, string>(StringComparer.Ordinal);
        foreach (System.Collections.DictionaryEntry e in Environment.GetEnvironmentVariables())
            if (e.Key is string k && KnobPrefixes.Any(p => k.StartsWith(p, StringComparison.Ordinal))
                && !SdkOnly.Any(p => k.StartsWith(p, StringComparison.Ordinal)) && Env?.ContainsKey(k) != true)
                knobs[k] = e.Value as string ?? "";
        return knobs;
    }

    /// <summary>The ENV= part of a re-run line: --env and the inherited knobs, so the result can be had again.</summary>
    public string RerunEnv()
    {
        var all = (Env ?? new Dictionary<string, string>()).Concat(InheritedKnobs()).Select(kv => $"{kv.Key}={kv.Value}").ToList();
        return all.Count == 0 ? "" : $" ENV='{string.Join(' ', all)}'";
    }
}

/// <summary>
/// Orchestrates one (repro, case, variant, subject) cell: resolve, build, isolate, run the signature family,
/// check evidence, gate. What a subject or a family does lives in its own class (Subjects/, Signatures/).
/// </summary>
public sealed class CellRunner(RunOptions options, Builder builder, IToolRunner tools, SignatureFamilies? families = null,
                               SubjectKinds? kinds = null)
{
    private readonly SignatureFamilies _families = families ?? SignatureFamilies.Default;
    private readonly SubjectKinds _kinds = kinds ?? SubjectKinds.Default;

    /// <param name="lane">The lane a run of many cells put it in, and when it started it (seconds from the run's start).</param>
    public async Task<CellResult> RunAsync(Manifest m, CaseSpec cs, string variant, Subject subject, Expectation? expected,
                                           string? lane = null, double? startedAt = null)
    {
        var key = new CellKey(m.Id, cs.Id, variant, subject.Name);
        var dir = Path.Combine(options.RunDir, m.Id, cs.Id, variant, subject.Slug);
        var cell = new CellResult
        {
            Key = key, Expected = expected, ArtifactDir = dir, RecordDir = dir,
            Rerun = $"make run REPRO={m.Id} CASE={cs.Id} VARIANT={variant} SUBJECT={subject.Name} KEEP=1{options.RerunEnv()}",
            Lane = lane, StartedAt = startedAt,
        };
        if (options.Env is { Count: > 0 } given) cell.Env = given;
        if (options.InheritedKnobs() is { Count: > 0 } inherited) cell.InheritedEnv = inherited;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        Directory.CreateDirectory(dir);
        File.WriteAllText(Path.Combine(dir, "rerun.txt"), cell.Rerun + "\n");
        try
        {
            subject = await RunCoreAsync(m, cs, variant, subject, cell, dir);
        }
        catch (Exception e) when (!Disk.IsFull(e))
        {
            cell.Outcome = Outcome.Error;
            cell.Detail = $"harness error: {e.GetType().Name}: {e.Message}";
            File.WriteAllText(Path.Combine(dir, "harness-error.txt"), e.ToString());
        }
        cell.Seconds = Math.Round(clock.Elapsed.TotalSeconds, 2);
        (cell.Gate, cell.GateMessage) = CellResult.Compare(cell.Outcome, expected);
        // A compiler version NuGet lacks here (found when its first cell provisions it): its expectation applies where
        // it can be provisioned.
        if (cell.Outcome == Outcome.Unsupported && subject.Unavailable is not null && subject.Kind.UnavailableIsUnchecked
            && expected is not null && expected.Outcome != Outcome.Unsupported)
            (cell.Gate, cell.GateMessage) = (GateStatus.Unchecked,
                $"not gated: {subject.Name} cannot be provisioned here; expected {expected.Outcome.Name()} where it can");
        CapCores(cell);
        // A user's subject has no expectation: its artifacts go like the others' unless it ended in a way worth reading.
        var asWanted = cell.Gate == GateStatus.Pass
                       || (cell.Gate == GateStatus.Unchecked && cell.Outcome is Outcome.Reproduced or Outcome.Clean);
        if (asWanted && !options.Keep)
        {
            Prune(dir);
            cell.ArtifactDir = null;
        }
        // Written after pruning, so the records say whether the rest is there.
        Report.FactsWriter.Write(cell, options.Root, dir);
        return cell;
    }

    /// <summary>The records a cell always keeps, pruned or not: what it decided and how to run it again.</summary>
    public static readonly IReadOnlyList<string> Records = [Report.FactsWriter.FileName, "rerun.txt"];

    /// <summary>Removes a cell's runs, captures and cores, and keeps its records.</summary>
    private static void Prune(string dir)
    {
        foreach (var sub in Directory.GetDirectories(dir)) Directory.Delete(sub, recursive: true);
        // A trace's flame graph and speedscope file stay too: the report shows them for every traced cell.
        foreach (var file in Directory.GetFiles(dir).Where(f => !Records.Contains(Path.GetFileName(f)) && !Capture.Traces.TracePictures.Kept(Path.GetFileName(f))))
            File.Delete(file);
    }

    /// <summary>Runs the cell into <paramref name="cell"/>; the subject as provisioned (or as given, when the case never got that far).</summary>
    private async Task<Subject> RunCoreAsync(Manifest m, CaseSpec cs, string variant, Subject subject, CellResult cell, string dir)
    {
        if (!cs.Platforms.Contains(IHost.Current.Platform))
        {
            (cell.Outcome, cell.Detail) = (Outcome.Unsupported, $"runs only on {string.Join(", ", cs.Platforms)}");
            return subject;
        }
        var provisioning = System.Diagnostics.Stopwatch.StartNew();
        var s0 = subject;
        subject = Announced($"{cell.Key}: preparing {subject.Name} (the first cell on a subject provisions it: a Wine template "
                            + "prefix, 10–60 s; a runtime pack or a compiler from NuGet, a few seconds)",
                            () => SubjectKinds.Provisioned(s0, options.Root));
        cell.ProvisionSeconds = Math.Round(provisioning.Elapsed.TotalSeconds, 2);
        if (subject.Unavailable is { } why)
        {
            (cell.Outcome, cell.Detail) = (Outcome.Unsupported, $"subject {subject.Name} unavailable: {why}");
            return subject;
        }
        var kind = subject.Kind;
        if (subject.Validate(cs, _kinds) is { } unrunnable)
        {
            (cell.Outcome, cell.Detail) = (Outcome.Error, unrunnable.Reason);
            return subject;
        }
        var building = System.Diagnostics.Stopwatch.StartNew();
        var recipe = kind.Recipe(subject, m, cs);
        var build = Announced($"{cell.Key}: building {m.Id} for {recipe.Flavor} (a first build takes 5–60 s; later ones are cached by content)",
                              () => builder.Ensure(m, recipe));
        cell.BuildSeconds = Math.Round(building.Elapsed.TotalSeconds, 2);
        if (build.Program is null)
        {
            (cell.Outcome, cell.Detail) = build.Unsupported is { } tried
                ? (Outcome.Unsupported, $"{subject.Name} cannot run the program: {tried}; see {build.Log}")
                : (Outcome.Error, build.Error!);
            return subject;
        }
        cell.Runtime = kind.Describe(subject);
        var family = _families.For(cs.Signature);
        using var isolation = Announced($"{cell.Key}: setting up its isolation (a Wine cell's own prefix and server: 2–10 s)",
                                        () => kind.Isolate(subject, dir));
        var backend = kind.SnapshotBackend(subject, new CaptureContext(tools, options.Root, cs.Timed?.Heap ?? false,
                                                                               HoldsStill: family.HoldsStill));
        var runs = new RunLauncher(options, tools, m, cs, variant, subject, build.Program, isolation, backend, cell, dir, _families.Analysers);
        var fixture = cs.Fixture is { } fx
            ? Announced($"{cell.Key}: applying its registry fixture (exported first, so it can be restored: 3–10 s under Wine)",
                        () => Fixtures.CellFixture.Apply(fx, m, variant, subject, isolation, tools, cs.Budget, cell, dir))
            : null;
        Verdict verdict;
        string? unrestored = null;
        cell.Family = family.Key;
        try
        {
            verdict = await family.RunAsync(runs, cell);
        }
        catch (ProgramUnsupportedException e)
        {
            verdict = new Verdict(Outcome.Unsupported, $"the program cannot run on {subject.Name}: {e.Message}");
        }
        catch (LaunchFailedException e)
        {
            verdict = new Verdict(Outcome.Error, $"the run never reached the program: {e.Message}");
        }
        finally
        {
            unrestored = fixture?.Restore(cell);
        }
        cell.Isolation = isolation.Describe;
        cell.Verdict = verdict;
        (cell.Outcome, cell.Detail) = (verdict.Outcome, verdict.Detail);
        if (unrestored is not null)
        {
            (cell.Outcome, cell.Detail) = (Outcome.Error, $"{unrestored}; was: {verdict.Detail}");
            return subject;
        }
        if (verdict.Outcome is not (Outcome.Reproduced or Outcome.Clean)) return subject;
        // Captures that are runs of their own (the trace) come after the verdict, so no measured run is slowed by a tool.
        foreach (var capture in _families.Captures.Where(k => cs.Captures.Has(k.Key)))
            await capture.AfterVerdictAsync(new CaptureAfter(cs, subject, cell, runs, verdict.Outcome));
        var context = new EvidenceContext(cs, subject, cell, backend, runs, verdict.HitRun) { Outcome = verdict.Outcome, Tools = tools };
        // A clean cell meets only the checks that judge clean cells too (a trace's bound on a fixed subject).
        foreach (var check in _families.Evidence.Where(e => e.Applies(cs, subject) && (verdict.Outcome == Outcome.Reproduced || e.OnClean)))
        {
            if (check.Expensive && cell.Evidence.Any(e => e.Status is EvidenceStatus.Fails or EvidenceStatus.Broken)) continue;
            cell.Evidence.Add(await check.CheckAsync(context));
        }
        (cell.Outcome, cell.Detail) = Compose(verdict, cell.Evidence);
        return subject;
    }

    /// <summary>
    /// The cell's outcome and detail from its family's verdict and the evidence: a reproduction holds only when every
    /// judged check holds; evidence that was read and does not show the bug makes it a wrong-failure, evidence whose
    /// capture broke an error, a measured figure still undecided when its budget was spent inconclusive.
    /// </summary>
    public static (Outcome, string) Compose(Verdict verdict, IReadOnlyList<EvidenceResult> evidence)
    {
        var detail = verdict.Detail;
        foreach (var e in evidence.Where(e => e.Status != EvidenceStatus.NotJudged))
            detail += e.Status is EvidenceStatus.Holds or EvidenceStatus.Unavailable ? $"; {e.Detail}" : $"; but {e.Detail}";
        var outcome = evidence.Any(e => e.Status == EvidenceStatus.Broken) ? Outcome.Error
            : evidence.Any(e => e.Status == EvidenceStatus.Fails) ? Outcome.WrongFailure
            : evidence.Any(e => e.Status == EvidenceStatus.Undecided) ? Outcome.Inconclusive
            : verdict.Outcome;
        return (outcome, detail);
    }

    /// <summary>
    /// Work that may take a while, said when it does: a line once it has taken 1 s, and another every 3 s after, so no
    /// step of a run is a silent minute. Quick work (a current build, a provisioned subject) prints nothing. Two slow
    /// steps in a row stay within about 4 s of a line: the first's last tick, then the second's first.
    /// </summary>
    private T Announced<T>(string what, Func<T> work)
    {
        using var ticker = Signatures.RunTicker.Every(options.Progress, what, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(3));
        return work();
    }

    /// <summary>Cores can be hundreds of MB a run: over the cap they are deleted, and the record says so.</summary>
    private void CapCores(CellResult cell)
    {
        var cap = (long)options.MaxCoreMB << 20;
        cell.ChangeCaptures(c =>
        {
            if (c.Bytes <= cap || !File.Exists(c.File) || c.File.EndsWith(".txt")) return c;
            File.Delete(c.File);
            return c with { DeletedOverCap = true, Note = $"{(c.Note is null ? "" : c.Note + "; ")}deleted after reading: "
                                                          + $"{c.Bytes >> 20} MB is over the {options.MaxCoreMB} MB cap for kept cores" };
        });
    }
}
