using System.Diagnostics;
using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Report;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness;

public static class Program
{
    private const string Usage = """
        usage: corpus <command> [options]
          run       run cells and gate them against expected/
                      --repro ID[,ID]   --case ID[,ID]   --variant V[,V]
                      --subject S[,S]   built-in name (mono, net10, net8) or mono:PATH, coreclr:DOTNET_ROOT
                      --exclude-tag T   skip cases with this tag (e.g. slow)
                      --keep            keep artifacts of cells that matched expected/
                      --runs N          races: exactly N runs per cell (a rate), not stop at the first hit
                      --run-id ID       name of artifacts/<run-id>/, which must not exist yet (default: UTC time)
                      --alongside N     cells that mostly wait (hangs, held memory) run alongside the busy ones,
                                        N at once (default 2), and timed cells (sweeps) run last, alone;
                                        0 runs every cell in turn, in plan order
          list      the cells a run would run, with their expected outcomes (--json for other drivers);
                    takes run's --repro, --case, --variant, --subject, --exclude-tag
          validate  check every manifest and expected file
          subjects  list built-in subjects and whether they are usable here
          clean     kill and remove what a killed run left behind
          bisect    --repro ID [--case C] [--variant V] --subjects S1,S2,… (oldest first) [--keep]: which subject
                    changed the cell's outcome; prints each probe and the last/first subject on either side
          winsmoke  (Linux) the harness published for win-x64 runs the windows subject's cells under Wine; compared
                    with the Linux harness's outcomes    --exe PATH  (default build/harness/win-x64/corpus.exe)
          selftest  check this platform's containment with real processes (Windows: the Job Object path)
                      --dir DIR         where the children run (default: a temporary folder, removed after)
          --root DIR  the corpus checkout (default: found upward from the current folder)
        exit: 0 every cell as expected (a cell with no expectation: reproduced or clean); 1 some differ;
              2 bad input (manifest, expected, arguments, an unusable subject);
              130 / 143 interrupted by SIGINT / SIGTERM (the running cell is killed and reported as interrupted)
        """;

    public static async Task<int> Main(string[] argv)
    {
        try
        {
            var args = Args.Parse(argv);
            // No checkout needed: the selftest runs in a published harness anywhere.
            if (args.Command == "selftest") return await SelfTestAsync(args.Get("dir"));
            if (args.Command == "selftest-child") return await SelfTest.ChildAsync(args.Get("mode") ?? "", args.Get("dir") ?? "");
            var root = args.Get("root") ?? FindRoot(Environment.CurrentDirectory)
                       ?? throw new ArgumentException("not inside a corpus checkout (no repros/ folder above here); use --root");
            root = Path.GetFullPath(root);
            if (!OperatingSystem.IsWindows()) KeepTempInCorpus(root);
            return args.Command switch
            {
                "run" => await RunAsync(root, args),
                "validate" => Validate(root),
                "subjects" => Subjects(root),
                "list" => CellList.Write(root, new Filter(args.List("repro"), args.List("case"), args.List("variant"),
                                                          args.List("subject"), args.List("exclude-tag")),
                                         args.Has("json"), Console.Out, Console.Error),
                "clean" => Clean(root),
                "bisect" => await BisectCommand.RunAsync(root, args),
                "winsmoke" => await WindowsSmoke.RunAsync(root, args.Get("exe") ?? Path.Combine(root, "build", "harness", "win-x64", "corpus.exe"),
                                                          m => Console.Error.WriteLine(m)),
                _ => throw new ArgumentException($"unknown command '{args.Command}'"),
            };
        }
        catch (InputErrorException e)
        {
            Console.Error.WriteLine($"corpus: {e.Message}");
            return RunExit.InputError;
        }
        catch (ArgumentException e)
        {
            Console.Error.WriteLine($"corpus: {e.Message}");
            Console.Error.WriteLine(Usage);
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
        if (!string.IsNullOrEmpty(Environment.GetEnvironmentVariable("TMPDIR"))) return;
        var tmp = Path.Combine(root, "build", "tmp");
        Directory.CreateDirectory(tmp);
        Environment.SetEnvironmentVariable("TMPDIR", tmp);
    }

    private static async Task<int> SelfTestAsync(string? dir)
    {
        var work = dir ?? Path.Combine(Path.GetTempPath(), $"corpus-selftest-{Environment.ProcessId}");
        try { return await SelfTest.RunAsync(work); }
        finally { if (dir is null) try { Directory.Delete(work, true); } catch (IOException) { } }
    }

    private static string? FindRoot(string dir)
    {
        for (var d = new DirectoryInfo(dir); d is not null; d = d.Parent)
            if (Directory.Exists(Path.Combine(d.FullName, "repros")) && Directory.Exists(Path.Combine(d.FullName, "harness")))
                return d.FullName;
        return null;
    }

    private static int Validate(string root)
    {
        var catalog = Catalog.Load(root);
        foreach (var e in catalog.Entries)
            Console.WriteLine($"ok  {e.Manifest.Id}: {e.Manifest.Cases.Count} cases, {e.Expected.Count} expected cells");
        foreach (var e in catalog.Errors) Console.Error.WriteLine($"ERROR {e}");
        return catalog.Errors.Count == 0 ? 0 : 2;
    }

    private static int Subjects(string root)
    {
        foreach (var name in Subject.BuiltIn)
        {
            var s = Subject.Resolve(name, root);
            Console.WriteLine(s.Unavailable is null
                ? $"{s.Name,-6} {s.Kind.Name,-7} {s.Version ?? "",-8} {s.Path}"
                : $"{s.Name,-6} unavailable: {s.Unavailable}");
        }
        // An open form (roslyn:VERSION) names too many subjects to resolve here; each is provisioned by its first cell.
        foreach (var form in Corpus.Harness.Subjects.SubjectKinds.BuiltInForms.Except(Subject.BuiltIn))
            Console.WriteLine($"{form}: any, provisioned when a cell first needs it");
        return 0;
    }

    private static int Clean(string root)
    {
        Console.WriteLine($"corpus: {Leftovers.Clean(Path.Combine(root, ".cache", "ledger"))}");
        return 0;
    }

    private static async Task<int> RunAsync(string root, Args args)
    {
        var ledgerDir = Path.Combine(root, ".cache", "ledger");
        if (Leftovers.Clean(ledgerDir) is { Any: true } left) Console.Error.WriteLine($"corpus: {left}");
        Supervisor.UseLedger(ledgerDir);
        using var signals = Interrupt.Register();
        // Validation first: a broken repro is reported and skipped, the others run.
        var catalog = Catalog.Load(root);
        int? forceRuns = args.Get("runs") is { } r
            ? int.TryParse(r, out var n) && n > 0 ? n : throw new ArgumentException($"--runs needs a positive integer, not '{r}'")
            : null;
        var subjectCache = new Dictionary<string, Subject>();
        var selection = Selection.Build(catalog,
            new Filter(args.List("repro"), args.List("case"), args.List("variant"), args.List("subject"), args.List("exclude-tag")),
            spec => subjectCache.TryGetValue(spec, out var s) ? s : subjectCache[spec] = ResolveSubject(spec, root));
        var plan = selection.Cells;
        var errors = selection.Errors;
        if (selection.OtherErrors > 0)
            Console.Error.WriteLine($"note: {selection.OtherErrors} input errors in repros not selected; see corpus validate");

        var artifacts = Path.Combine(root, "artifacts");
        var (runId, runDir) = ClaimRunDir(artifacts, args.Get("run-id"));
        var clock = Stopwatch.StartNew();
        void Progress(string msg) => Console.Error.WriteLine($"[{clock.Elapsed:mm\\:ss}] {msg}");
        var tools = ToolRunner.Instance;
        var runner = new CellRunner(new RunOptions(root, runDir, args.Has("keep"), Progress, forceRuns),
                                    new Builder(root, tools), tools);
        var alongside = args.Get("alongside") is { } al
            ? int.TryParse(al, out var k) && k >= 0 ? k : throw new ArgumentException($"--alongside needs a count of 0 or more, not '{al}'")
            : Lanes.DefaultAlongside;
        var cells = await Lanes.RunAsync(plan, c => SignatureFamilies.For(c.Case.Signature).Lane, alongside, async (i, c) =>
        {
            var (entry, cs, v, s, expected) = c;
            Progress($"cell {i + 1}/{plan.Count}: {entry.Manifest.Id}:{cs.Id} {v} {s.Name}");
            var cell = await runner.RunAsync(entry.Manifest, cs, v, s, expected);
            if (Interrupt.IsRequested) MarkInterrupted(cell, root);
            Progress($"cell {i + 1}/{plan.Count}: {cell.Outcome.Name()} (expected {expected?.Outcome.Name() ?? "—"}) in {cell.Seconds:0.0} s: {cell.Detail}");
            return cell;
        }, () => Interrupt.IsRequested);
        var seconds = clock.Elapsed.TotalSeconds;
        SummaryWriter.Write(Path.Combine(runDir, "summary.json"), runId, cells, errors, seconds, root);
        SummaryWriter.WriteJUnit(Path.Combine(runDir, "junit.xml"), cells, errors);
        new MarkdownReport(tools).Write(runDir, runId, cells, errors, seconds);
        var latest = Path.Combine(artifacts, "latest");
        // Windows: a symbolic link needs a privilege (or developer mode), so there is no artifacts/latest there.
        if (!OperatingSystem.IsWindows())
        {
            if (File.Exists(latest) || Directory.Exists(latest)) File.Delete(latest);
            File.CreateSymbolicLink(latest, runId);
        }

        Console.WriteLine(ConsoleTable.Render(cells));
        foreach (var e in errors) Console.WriteLine($"INPUT ERROR {e}");
        var differ = cells.Count(c => c.Gate is GateStatus.Regression or GateStatus.XPass or GateStatus.Mismatch);
        var failed = cells.Count(RunExit.Fails);
        Console.WriteLine();
        Console.WriteLine($"{cells.Count} cells, {differ} differ from expected/, "
                          + (failed > differ ? $"{failed - differ} with no expectation ended neither reproduced nor clean, " : "")
                          + $"{errors.Count} input errors, {seconds:0} s. "
                          + $"Report: {Path.GetRelativePath(root, Path.Combine(runDir, "report.md"))}");
        // Cells whose subject cannot be provisioned here (a compiler version NuGet lacks) neither pass nor fail.
        var notGated = cells.Count(c => c.Gate == GateStatus.Unchecked && c.Expected is not null);
        Console.WriteLine($"gate: {cells.Count - failed - notGated} passed, {failed} failed"
                          + (notGated > 0 ? $", {notGated} not gated (subject unavailable here)" : "")
                          + (errors.Count > 0 ? $", {errors.Count} input errors" : ""));
        if (Interrupt.IsRequested)
        {
            // A race cell's other run may still be removing its cgroup.
            Supervisor.WaitIdle(TimeSpan.FromSeconds(5));
            Console.Error.WriteLine($"corpus: interrupted by {Interrupt.SignalName}: {Interrupt.Cleaned}; {cells.Count} of {plan.Count} cells "
                                    + $"in {Path.GetRelativePath(root, Path.Combine(runDir, "summary.json"))}");
            return 128 + Interrupt.Signal;
        }
        return RunExit.Code(cells, errors.Count);
    }

    /// <summary>
    /// A user's subject (kind:PATH) that cannot run is an input error, so a patch-validation job with a mistyped
    /// path fails instead of reporting unsupported cells. Built-ins stay: an absent one is an unsupported cell.
    /// </summary>
    internal static Subject ResolveSubject(string spec, string root)
    {
        var colon = spec.IndexOf(':');
        if (colon > 0 && spec[(colon + 1)..].Trim().Length == 0)
            throw new InputErrorException($"{spec}: no path after '{spec[..(colon + 1)]}' (give {spec[..colon]}:PATH)");
        var subject = Subject.Resolve(spec, root);
        if (subject.IsUsers && subject.Unavailable is { } why)
            throw new InputErrorException($"{spec}: {(why.StartsWith(subject.Path + ": ") ? why[(subject.Path.Length + 2)..] : why)}");
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
            return Native.MakeDir(dir) ? (requested, dir)
                : throw new ArgumentException($"--run-id {requested}: {dir} already exists; choose another id");
        }
        var stem = DateTime.UtcNow.ToString("yyyyMMdd-HHmmss");
        for (var n = 1; ; n++)
        {
            var id = n == 1 ? stem : $"{stem}-{n}";
            if (Native.MakeDir(Path.Combine(artifacts, id))) return (id, Path.Combine(artifacts, id));
        }
    }

    /// <summary>The cell that was running when SIGINT/SIGTERM came: its runs were killed, so its outcome means nothing.</summary>
    private static void MarkInterrupted(CellResult cell, string root)
    {
        cell.Outcome = Outcome.Error;
        cell.Detail = "interrupted";
        (cell.Gate, cell.GateMessage) = CellResult.Compare(cell.Outcome, cell.Expected);
        if (cell.ArtifactDir is { } dir && Directory.Exists(dir))
            File.WriteAllText(Path.Combine(dir, "cell.json"),
                              System.Text.Json.JsonSerializer.Serialize(SummaryWriter.CellJson(cell, root), SummaryWriter.JsonOptions));
    }
}

/// <summary>Minimal --name value parsing; lists are comma-separated and may repeat.</summary>
internal sealed class Args
{
    private static readonly string[] Flags = ["keep", "json"];
    /// <summary>The options each command takes; anything else is an error, so a typo never widens a run.</summary>
    private static readonly Dictionary<string, string[]> Options = new()
    {
        ["run"] = ["root", "repro", "case", "variant", "subject", "exclude-tag", "keep", "runs", "run-id", "alongside"],
        ["validate"] = ["root"],
        ["list"] = ["root", "repro", "case", "variant", "subject", "exclude-tag", "json"],
        ["subjects"] = ["root"],
        ["clean"] = ["root"],
        ["bisect"] = ["root", "repro", "case", "variant", "subjects", "keep", "run-id"],
        ["selftest"] = ["dir"],
        ["winsmoke"] = ["root", "exe"],
        ["selftest-child"] = ["mode", "dir"],
    };
    private readonly Dictionary<string, List<string>> _values = [];
    public string Command { get; private set; } = "";

    public static Args Parse(string[] argv)
    {
        var a = new Args();
        for (var i = 0; i < argv.Length; i++)
        {
            var arg = argv[i];
            if (!arg.StartsWith("--"))
            {
                if (a.Command.Length > 0) throw new ArgumentException($"unexpected argument '{arg}'");
                a.Command = arg;
                continue;
            }
            var name = arg[2..];
            string? inline = null;
            if (name.IndexOf('=') is var eq and > 0) (name, inline) = (name[..eq], name[(eq + 1)..]);
            var value = Flags.Contains(name) ? inline ?? "true"
                : inline ?? (i + 1 < argv.Length && !argv[i + 1].StartsWith("--") ? argv[++i]
                             : throw new ArgumentException($"--{name} needs a value"));
            if (!a._values.TryGetValue(name, out var list)) a._values[name] = list = [];
            // An empty value (e.g. SUBJECT= from make) means "not given".
            list.AddRange(value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
        }
        if (a.Command.Length == 0) throw new ArgumentException("no command given");
        if (!Options.TryGetValue(a.Command, out var known)) throw new ArgumentException($"unknown command '{a.Command}'");
        foreach (var name in a._values.Keys.Where(n => !known.Contains(n)))
            throw new ArgumentException($"unknown option '--{name}' for {a.Command}"
                                        + (Closest(name, known) is { } c ? $" (did you mean --{c}?)" : $" (options: --{string.Join(", --", known)})"));
        return a;
    }

    private static string? Closest(string name, IEnumerable<string> known) =>
        known.Select(k => (k, d: Distance(name, k))).Where(x => x.d <= 2).OrderBy(x => x.d).Select(x => x.k).FirstOrDefault();

    private static int Distance(string a, string b)
    {
        var d = new int[a.Length + 1, b.Length + 1];
        for (var i = 0; i <= a.Length; i++) d[i, 0] = i;
        for (var j = 0; j <= b.Length; j++) d[0, j] = j;
        for (var i = 1; i <= a.Length; i++)
            for (var j = 1; j <= b.Length; j++)
                d[i, j] = Math.Min(Math.Min(d[i - 1, j] + 1, d[i, j - 1] + 1), d[i - 1, j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1));
        return d[a.Length, b.Length];
    }

    public bool Has(string name) => _values.ContainsKey(name);
    public string? Get(string name) => _values.TryGetValue(name, out var l) && l.Count > 0 ? l[^1] : null;
    public IReadOnlyList<string> List(string name) => _values.TryGetValue(name, out var l) ? l : [];
}
