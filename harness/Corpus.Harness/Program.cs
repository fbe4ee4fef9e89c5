using System.Diagnostics;
using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Report;
using Corpus.Harness.Runner;

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
          validate  check every manifest and expected file
          subjects  list built-in subjects and whether they are usable here
          clean     kill and remove what a killed run left behind
          --root DIR  the corpus checkout (default: found upward from the current folder)
        exit: 0 all outcomes as expected; 1 some differ; 2 bad input (manifest, expected, arguments);
              130 / 143 interrupted by SIGINT / SIGTERM (the running cell is killed and reported as interrupted)
        """;

    public static async Task<int> Main(string[] argv)
    {
        try
        {
            var args = Args.Parse(argv);
            var root = args.Get("root") ?? FindRoot(Environment.CurrentDirectory)
                       ?? throw new ArgumentException("not inside a corpus checkout (no repros/ folder above here); use --root");
            root = Path.GetFullPath(root);
            return args.Command switch
            {
                "run" => await RunAsync(root, args),
                "validate" => Validate(root),
                "subjects" => Subjects(root),
                "clean" => Clean(root),
                _ => throw new ArgumentException($"unknown command '{args.Command}'"),
            };
        }
        catch (ArgumentException e)
        {
            Console.Error.WriteLine($"corpus: {e.Message}");
            Console.Error.WriteLine(Usage);
            return 2;
        }
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
                ? $"{s.Name,-6} {s.Kind,-7} {s.Version ?? "",-8} {s.Path}"
                : $"{s.Name,-6} unavailable: {s.Unavailable}");
        }
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
        var catalog = Catalog.Load(root);
        var errors = catalog.Errors.ToList();
        var repros = args.List("repro");
        var unknown = repros.Where(r => catalog.Entries.All(e => e.Manifest.Id != r)
                                        && catalog.Errors.All(err => !err.Contains($"repros/{r}/"))).ToList();
        if (unknown.Count > 0) throw new ArgumentException($"no repro named {string.Join(", ", unknown)}");
        var subjectArg = args.List("subject");
        var subjectCache = new Dictionary<string, Subject>();
        Subject SubjectFor(string spec) =>
            subjectCache.TryGetValue(spec, out var s) ? s : subjectCache[spec] = Subject.Resolve(spec, root);
        foreach (var s in subjectArg) SubjectFor(s);   // bad subject specs fail before anything runs

        var plan = new List<(Entry Entry, CaseSpec Case, string Variant, Subject Subject)>();
        foreach (var entry in catalog.Entries.Where(e => repros.Count == 0 || repros.Contains(e.Manifest.Id)))
        {
            var m = entry.Manifest;
            foreach (var cs in m.Cases)
            {
                if (args.List("case") is { Count: > 0 } cases && !cases.Contains(cs.Id)) continue;
                if (args.List("exclude-tag").Intersect(cs.Tags).Any()) continue;
                foreach (var v in m.Variants.Where(v => args.List("variant") is not { Count: > 0 } vs || vs.Contains(v)))
                    foreach (var s in subjectArg.Count > 0 ? subjectArg : cs.Subjects)
                        plan.Add((entry, cs, v, SubjectFor(s)));
            }
        }
        if (plan.Count == 0 && errors.Count == 0) throw new ArgumentException("the selection matches no cell");

        var artifacts = Path.Combine(root, "artifacts");
        var (runId, runDir) = ClaimRunDir(artifacts, args.Get("run-id"));
        var clock = Stopwatch.StartNew();
        void Progress(string msg) => Console.Error.WriteLine($"[{clock.Elapsed:mm\\:ss}] {msg}");
        var tools = ToolRunner.Instance;
        int? forceRuns = args.Get("runs") is { } r
            ? int.TryParse(r, out var n) && n > 0 ? n : throw new ArgumentException($"--runs needs a positive integer, not '{r}'")
            : null;
        var runner = new CellRunner(new RunOptions(root, runDir, args.Has("keep"), Progress, forceRuns),
                                    new Builder(root, tools), tools);
        var cells = new List<CellResult>();
        for (var i = 0; i < plan.Count && !Interrupt.IsRequested; i++)
        {
            var (entry, cs, v, s) = plan[i];
            var expected = entry.Expected.FirstOrDefault(e => e.Key == new CellKey(entry.Manifest.Id, cs.Id, v, s.Name));
            Progress($"cell {i + 1}/{plan.Count}: {entry.Manifest.Id}:{cs.Id} {v} {s.Name}");
            var cell = await runner.RunAsync(entry.Manifest, cs, v, s, expected);
            if (Interrupt.IsRequested) MarkInterrupted(cell, root);
            Progress($"cell {i + 1}/{plan.Count}: {cell.Outcome.Name()} (expected {expected?.Outcome.Name() ?? "—"}) in {cell.Seconds:0.0} s: {cell.Detail}");
            cells.Add(cell);
        }
        var seconds = clock.Elapsed.TotalSeconds;
        SummaryWriter.Write(Path.Combine(runDir, "summary.json"), runId, cells, errors, seconds, root);
        SummaryWriter.WriteJUnit(Path.Combine(runDir, "junit.xml"), cells, errors);
        new MarkdownReport(tools).Write(runDir, runId, cells, errors, seconds);
        var latest = Path.Combine(artifacts, "latest");
        if (File.Exists(latest) || Directory.Exists(latest)) File.Delete(latest);
        File.CreateSymbolicLink(latest, runId);

        Console.WriteLine(ConsoleTable.Render(cells));
        foreach (var e in errors) Console.WriteLine($"INPUT ERROR {e}");
        var differ = cells.Count(c => c.Gate is GateStatus.Regression or GateStatus.XPass or GateStatus.Mismatch);
        Console.WriteLine();
        Console.WriteLine($"{cells.Count} cells, {differ} differ from expected/, {errors.Count} input errors, {seconds:0} s. "
                          + $"Report: {Path.GetRelativePath(root, Path.Combine(runDir, "report.md"))}");
        Console.WriteLine($"gate: {cells.Count - differ} passed, {differ} failed");
        if (Interrupt.IsRequested)
        {
            // A race cell's other run may still be removing its cgroup.
            Supervisor.WaitIdle(TimeSpan.FromSeconds(5));
            Console.Error.WriteLine($"corpus: interrupted by {Interrupt.SignalName}: {Interrupt.Cleaned}; {cells.Count} of {plan.Count} cells "
                                    + $"in {Path.GetRelativePath(root, Path.Combine(runDir, "summary.json"))}");
            return 128 + Interrupt.Signal;
        }
        return errors.Count > 0 ? 2 : differ > 0 ? 1 : 0;
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
    private static readonly string[] Flags = ["keep"];
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
            var value = Flags.Contains(name) ? "true"
                : i + 1 < argv.Length ? argv[++i] : throw new ArgumentException($"{arg} needs a value");
            if (!a._values.TryGetValue(name, out var list)) a._values[name] = list = [];
            // An empty value (e.g. SUBJECT= from make) means "not given".
            list.AddRange(value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
        }
        if (a.Command.Length == 0) throw new ArgumentException("no command given");
        return a;
    }

    public bool Has(string name) => _values.ContainsKey(name);
    public string? Get(string name) => _values.TryGetValue(name, out var l) && l.Count > 0 ? l[^1] : null;
    public IReadOnlyList<string> List(string name) => _values.TryGetValue(name, out var l) ? l : [];
}
