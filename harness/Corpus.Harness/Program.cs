using Corpus.Harness.Json;
using System.Diagnostics;
using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Report;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness;

public static class Program
{
    /// <summary>The one runner of outside tools: every command and kind below is handed it.</summary>
    private static readonly IToolRunner Tools = ToolRunner.Instance;

    public static async Task<int> Main(string[] argv)
    {
        // The one source of signature families and subject kinds: every command is handed these.
        var families = SignatureFamilies.Default;
        var kinds = SubjectKinds.Default;
        string? command = null;
        try
        {
            var parsed = Cli.Parse(argv, kinds);
            // Help (`corpus run --help`) and directives ([suggest] for shell completion) answer themselves.
            if (Cli.AnswersItself(parsed)) return Cli.Answer(parsed);
            var args = Args.From(parsed);
            command = args.Command.Name();
            // No checkout needed: the selftest runs in a published harness anywhere.
            if (args.Command == Verb.Selftest) return await SelfTestAsync(args.Get("dir"));
            if (args.Command == Verb.SelftestChild) return await SelfTest.ChildAsync(args.Get("mode") ?? "", args.Get("dir") ?? "", Tools);
            var root = args.Get("root") ?? FindRoot(Environment.CurrentDirectory)
                       ?? throw new ArgumentException("not inside a corpus checkout (no repros/ folder above here); use --root");
            root = Path.GetFullPath(root);
            KeepTempInCorpus(root);
            return args.Command switch
            {
                Verb.Run => await RunAsync(root, args, families, kinds),
                Verb.Validate => Validate(root, families, kinds),
                Verb.Subjects => Subjects(root, args.List("subject"), kinds),
                Verb.List => CellList.Write(root, new Filter(args.List("repro"), args.List("case"), args.List("variant"),
                                                          args.List("subject"), args.List("exclude-tag")),
                                         args.Has("json"), Console.Out, Console.Error, families, kinds),
                Verb.Clean => Clean(root),
                Verb.Merge => MergeCommand.Run(root, args, Console.Out, Tools),
                Verb.Durations => ShardCommand.Record(root, args, Console.Out),
                Verb.Bisect => await BisectCommand.RunAsync(root, args, families, kinds, Tools),
                Verb.Compare => await Compare.RunAsync(root, args, families, kinds, Tools),
                Verb.Matrix => await RunAsync(root, args, families, kinds,
                                           (id, dir, plan, cells, code) => MatrixCommand.Finish(root, args.List("subjects"), id, dir, plan, cells, code, kinds)),
                Verb.Winsmoke => await WindowsSmoke.RunAsync(root, args.Get("exe") ?? Path.Combine(root, "build", "harness", "win-x64", "corpus.exe"),
                                                          families, kinds, m => Console.Error.WriteLine(m), Tools),
                Verb.Selftest or Verb.SelftestChild => throw new InvalidOperationException("answered above, without a checkout"),
                _ => throw new ArgumentException($"unknown command '{args.Command.Name()}'"),
            };
        }
        catch (InputException e)
        {
            Console.Error.WriteLine($"corpus: {e.Message}");
            return RunExit.InputError;
        }
        catch (IOException e) when (Disk.IsFull(e))
        {
            // No verdict: the cells done so far keep their records in the run's folder; the running one has none.
            Console.Error.WriteLine($"corpus: stopped, the disk is full: {e.Message}. No verdict. Kept runs are the usual "
                                    + "cause (`--keep` keeps every core: several GB a run of a sweep with snapshots); free space and run again.");
            return RunExit.DiskFull;
        }
        catch (ArgumentException e)
        {
            Console.Error.WriteLine($"corpus: {e.Message}");
            Console.Error.WriteLine();
            Cli.WriteHelp(e is UsageException u ? u.Command : command, Console.Error, kinds);
            return RunExit.InputError;
        }
    }

    /// <summary>
    /// Build tools and runtimes leave files in TMPDIR that nobody removes: two empty folders per `dotnet build`, the
    /// diagnostic socket and debugger pipes of every killed CoreCLR run. Unless TMPDIR names a folder already (the
    /// Makefile gives build/tmp), the harness and all it starts use the corpus's build/tmp, so the host's /tmp is
    /// left alone. A Wine cell still gets its own tmpfs.
    /// </summary>
    private static void KeepTempInCorpus(string root)
    {
        if (!string.IsNullOrEmpty(Environment.GetEnvironmentVariable("TMPDIR")) || IHost.Current.CorpusTemp(root) is not { } tmp) return;
        Directory.CreateDirectory(tmp);
        Environment.SetEnvironmentVariable("TMPDIR", tmp);
    }

    private static async Task<int> SelfTestAsync(string? dir)
    {
        var work = dir ?? Path.Combine(Path.GetTempPath(), $"corpus-selftest-{Environment.ProcessId}");
        try { return await SelfTest.RunAsync(work, Tools); }
        finally { if (dir is null) try { Directory.Delete(work, true); } catch (IOException) { } }
    }

    private static string? FindRoot(string dir)
    {
        for (var d = new DirectoryInfo(dir); d is not null; d = d.Parent)
            if (Directory.Exists(Path.Combine(d.FullName, "repros")) && Directory.Exists(Path.Combine(d.FullName, "harness")))
                return d.FullName;
        return null;
    }

    private static int Validate(string root, SignatureFamilies families, SubjectKinds kinds)
    {
        var catalog = Catalog.Load(root, families, kinds);
        foreach (var e in catalog.Entries)
            Console.WriteLine($"ok  {e.Manifest.Id}: {e.Manifest.Cases.Count} cases, {e.Expected.Count} expected cells");
        foreach (var e in catalog.Errors) Console.Error.WriteLine($"ERROR {e}");
        return catalog.Errors.Count == 0 ? 0 : 2;
    }

    /// <summary>Every built-in subject, or the ones given (an open form or KIND:PATH too, provisioned as a cell would); exit 2 when a given one is unusable.</summary>
    private static int Subjects(string root, IReadOnlyList<string> given, SubjectKinds kinds)
    {
        var unusable = 0;
        foreach (var name in given.Count > 0 ? given : kinds.BuiltIns)
        {
            // Given ones are provisioned as a cell would; the listing of every built-in builds nothing.
            var s = given.Count > 0 ? SubjectKinds.Provisioned(kinds.Resolve(name, root), root) : kinds.Resolve(name, root);
            Console.WriteLine(s.Unavailable is null
                ? $"{s.Name,-6} {s.Kind.Name,-7} {s.Version ?? "",-8} {s.Path}"
                : $"{s.Name,-6} unavailable: {s.Unavailable}");
            if (s.Unavailable is not null && given.Count > 0) unusable++;
        }
        if (given.Count > 0) return unusable > 0 ? RunExit.InputError : RunExit.Ok;
        // An open form (roslyn:VERSION) names too many subjects to resolve here; each is provisioned by its first cell,
        // or by `corpus subjects --subject roslyn:4.5.0`.
        foreach (var form in kinds.BuiltInForms.Except(kinds.BuiltIns))
            Console.WriteLine($"{form}: any, provisioned when a cell first needs it (or by --subject {form})");
        return 0;
    }

    private static int Clean(string root)
    {
        Console.WriteLine($"corpus: {Leftovers.Clean(Path.Combine(root, ".cache", "ledger"), Tools)}");
        return 0;
    }

    /// <param name="then">What a command built on run does with its cells (matrix); it decides the exit code.</param>
    private static async Task<int> RunAsync(string root, Args args, SignatureFamilies families, SubjectKinds kinds,
                                            Func<string, string, IReadOnlyList<PlannedCell>, IReadOnlyList<CellResult>, int, int>? then = null)
    {
        var ledgerDir = Path.Combine(root, ".cache", "ledger");
        if (Leftovers.Clean(ledgerDir, Tools) is { Any: true } left) Console.Error.WriteLine($"corpus: {left}");
        Supervisor.UseLedger(ledgerDir);
        using var signals = Interrupt.Register();
        // Validation first: a broken repro is reported and skipped, the others run.
        var catalog = Catalog.Load(root, families, kinds);
        int? forceRuns = args.Get("runs") is { } r
            ? int.TryParse(r, out var n) && n > 0 ? n : throw new ArgumentException($"--runs needs a positive integer, not '{r}'")
            : null;
        var subjectCache = new Dictionary<string, Subject>();
        var givenSubjects = args.List(args.Command == Verb.Matrix ? "subjects" : "subject");
        // Of several subjects given, one that cannot be used is an input error of its own: the others still run.
        var unusable = new SortedDictionary<string, string>(StringComparer.Ordinal);
        Subject Resolve(string spec)
        {
            if (subjectCache.TryGetValue(spec, out var known)) return known;
            try
            {
                var subject = ResolveSubject(spec, root, kinds);
                // A version the user names (net:VERSION, roslyn:VERSION) is fetched now, so that one the feeds lack is
                // known before any cell runs; the other cells' subjects are provisioned by their first cell.
                return subjectCache[spec] = givenSubjects.Contains(spec) && kinds.Owner(spec) is { } owner && !owner.BuiltIns.Contains(spec)
                    ? SubjectKinds.Provisioned(subject, root) : subject;
            }
            catch (InputException e) when (givenSubjects.Count > 1 && givenSubjects.Contains(spec))
            {
                unusable[spec] = e.Message;
                return subjectCache[spec] = kinds.Resolve(spec, root);
            }
        }
        var selection = Selection.Build(catalog,
            new Filter(args.List("repro"), args.List("case"), args.List("variant"), givenSubjects, args.List("exclude-tag")), Resolve, kinds);
        // A given subject that cannot be provisioned here (a compiler version NuGet lacks) and that no selected cell
        // expects anything of cannot be judged: an input error too, not a row of unsupported cells.
        foreach (var spec in givenSubjects.Where(g => !unusable.ContainsKey(g)))
            if (subjectCache.TryGetValue(spec, out var s) && s.Unavailable is { } why
                && selection.Cells.Where(c => c.Subject.Name == spec).All(c => c.Expected is null))
                unusable[spec] = $"{spec}: {why}";
        if (unusable.Count > 0 && unusable.Count == givenSubjects.Count) throw new InputException(string.Join("\n", unusable.Values));
        var plan = selection.Cells.Where(c => !unusable.ContainsKey(c.Subject.Name)).ToList();
        var (shard, shardPlan) = ShardCommand.Pick(root, args.Get("shard"), plan);
        plan = [.. shardPlan];
        var errors = selection.Errors.Concat(unusable.Values.Select(m => $"--subject {m}")).ToList();
        if (selection.OtherErrors > 0)
            Console.Error.WriteLine($"note: {selection.OtherErrors} input errors in repros not selected; see corpus validate");

        var artifacts = Path.Combine(root, "artifacts");
        var (runId, runDir) = ClaimRunDir(artifacts, args.Get("run-id"));
        // A harness killed before its summary leaves dumps of hundreds of MB in the run: the next run prunes them.
        var runEntry = Containment.LedgerEntry.Format("run", runDir);
        Supervisor.Add(runEntry);
        var clock = Stopwatch.StartNew();
        void Progress(string msg) => Console.Error.WriteLine($"[{clock.Elapsed:mm\\:ss}] {msg}");
        var tools = Tools;
        var runner = new CellRunner(new RunOptions(root, runDir, args.Has("keep"), Progress, forceRuns, Env: args.Env()),
                                    new Builder(root, tools), tools, families, kinds);
        var alongside = args.Get("alongside") is { } al
            ? int.TryParse(al, out var k) && k >= 0 ? k : throw new ArgumentException($"--alongside needs a count of 0 or more, not '{al}'")
            : Lanes.DefaultAlongside;
        var cells = await Lanes.RunAsync(plan, c => families.For(c.Case.Signature).Lane, alongside, async (i, c) =>
        {
            var (entry, cs, v, s, expected) = c;
            Progress($"cell {i + 1}/{plan.Count}: {entry.Manifest.Id}:{cs.Id} {v} {s.Name}");
            var cell = await runner.RunAsync(entry.Manifest, cs, v, s, expected,
                                             alongside == 0 ? "serial" : families.For(cs.Signature).Lane.ToString().ToLowerInvariant(),
                                             Math.Round(clock.Elapsed.TotalSeconds, 1));
            if (Interrupt.IsRequested) MarkInterrupted(cell, root);
            Progress($"cell {i + 1}/{plan.Count}: {cell.Outcome.Name()} (expected {expected?.Outcome.Name() ?? "—"}) in {cell.Seconds:0.0} s: {cell.Detail}");
            return cell;
        }, () => Interrupt.IsRequested);
        var seconds = clock.Elapsed.TotalSeconds;
        SummaryWriter.Write(Path.Combine(runDir, "summary.json"), runId, cells, errors, seconds, root, new Provenance(Checkout.Of(root), shard));
        Supervisor.Remove(runEntry);
        SummaryWriter.WriteJUnit(Path.Combine(runDir, "junit.xml"), cells, errors);
        new MarkdownReport(tools).Write(runDir, runId, cells, errors, seconds);
        RunOutputs.LinkLatest(artifacts, runId);
        RunOutputs.Print(Console.Out, root, runDir, cells, errors, seconds);
        if (Interrupt.IsRequested)
        {
            // A race cell's other run may still be removing its cgroup.
            Supervisor.WaitIdle(TimeSpan.FromSeconds(5));
            Console.Error.WriteLine($"corpus: interrupted by {Interrupt.SignalName}: {Interrupt.Cleaned}; {cells.Count} of {plan.Count} cells "
                                    + $"in {Path.GetRelativePath(root, Path.Combine(runDir, "summary.json"))}");
            return 128 + Interrupt.Signal;
        }
        return then?.Invoke(runId, runDir, plan, cells, RunExit.Code(cells, errors.Count)) ?? RunExit.Code(cells, errors.Count);
    }

    /// <summary>
    /// A user's subject (kind:PATH) that cannot run is an input error, so a patch-validation job with a mistyped
    /// path fails instead of reporting unsupported cells. Built-ins stay: an absent one is an unsupported cell.
    /// </summary>
    internal static Subject ResolveSubject(string spec, string root, SubjectKinds kinds)
    {
        var colon = spec.IndexOf(':');
        if (colon > 0 && spec[(colon + 1)..].Trim().Length == 0)
            throw new InputException($"{spec}: no path after '{spec[..(colon + 1)]}' (give {spec[..colon]}:PATH)");
        var subject = kinds.Resolve(spec, root);
        if (subject.IsUsers && subject.Unavailable is { } why)
            throw new InputException($"{spec}: {(why.StartsWith(subject.Path + ": ") ? why[(subject.Path.Length + 2)..] : why)}");
        return subject;
    }

    /// <summary>
    /// artifacts/RUN-ID, created here and by no one else: mkdir fails on an existing folder, so two runs started in
    /// the same second get -2, -3…, and an explicit --run-id that exists is refused rather than overwritten.
    /// </summary>
    internal static (string RunId, string RunDir) ClaimRunDir(string artifacts, string? requested)
    {
        Directory.CreateDirectory(artifacts);
        if (requested is not null)
        {
            if (requested.Contains('/') || requested is "." or ".." or "latest")
                throw new ArgumentException($"--run-id '{requested}' must be a plain folder name");
            var dir = Path.Combine(artifacts, requested);
            return IHost.Current.MakeDir(dir) ? (requested, dir)
                : throw new ArgumentException($"--run-id {requested}: {dir} already exists; choose another id");
        }
        var stem = DateTime.UtcNow.ToString("yyyyMMdd-HHmmss");
        for (var n = 1; ; n++)
        {
            var id = n == 1 ? stem : $"{stem}-{n}";
            if (IHost.Current.MakeDir(Path.Combine(artifacts, id))) return (id, Path.Combine(artifacts, id));
        }
    }

    /// <summary>The cell that was running when SIGINT/SIGTERM came: its runs were killed, so its outcome means nothing.</summary>
    private static void MarkInterrupted(CellResult cell, string root)
    {
        cell.Outcome = Outcome.Error;
        cell.Detail = "interrupted";
        (cell.Gate, cell.GateMessage) = CellResult.Compare(cell.Outcome, cell.Expected);
        if (cell.RecordDir is { } dir && Directory.Exists(dir))
        {
            FactsWriter.Write(cell, root, dir);
        }
    }
}
