using Corpus.Harness.Json;
using System.Diagnostics;
using System.Text.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Runner;

/// <summary>
/// `corpus winsmoke` (Linux): the harness published for win-x64 runs under Wine and takes its Windows code path (Job
/// Objects, Windows counters, procdump.exe/TTD.exe lookup) on the `windows` subject's cells. It runs inside a contained
/// run of this harness: a Linux memory cgroup around the whole Wine run (the real cap, since Wine ignores Job Object
/// memory limits), a private prefix, tmpfs TMPDIR and wineserver (harness/wine/run.sh), and the supervisor if this
/// harness dies. The same cells go through the Linux harness on `wine` and on `windows`, and the outcomes are compared.
/// Then PowerShell for Windows under Wine (harness/wine/pwsh.sh) runs the repros' Pester files over the Windows harness's
/// run, and a copy with one fact planted wrong must fail the It that reads it.
/// The cells and the outcomes expected of the Windows harness under Wine are in harness/wine/windows-harness.json.
/// </summary>
public static class WindowsSmoke
{
    public const string ExpectationsFile = "harness/wine/windows-harness.json";
    private const long CapBytes = 3L << 30;

    /// <param name="Outcome">Of the Windows harness under Wine (exercised by make unit).</param>
    /// <param name="WindowsOutcome">Of the Windows harness on real Windows (ci/workflows/windows.yml; not run here).</param>
    public sealed record Expect(string Repro, string Case, string Variant, string Outcome, string Reason, string WindowsOutcome, string WindowsReason);

    public static IReadOnlyList<Expect> LoadExpectations(string root)
    {
        var file = Path.Combine(root, ExpectationsFile);
        using var doc = JsonDocument.Parse(File.ReadAllText(file), new JsonDocumentOptions { CommentHandling = JsonCommentHandling.Skip });
        var list = new List<Expect>();
        var i = 0;
        foreach (var c in doc.RootElement.GetProperty("cells").EnumerateArray())
        {
            string Field(string name) => c.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.String ? v.GetString()!
                : throw new InputException($"{ExpectationsFile}: field 'cells[{i}].{name}': missing or not a string");
            string Outcome(string name)
            {
                var outcome = Field(name);
                return Model.Outcomes.ByName.ContainsKey(outcome) ? outcome
                    : throw new InputException($"{ExpectationsFile}: field 'cells[{i}].{name}': '{outcome}' is not an outcome");
            }
            list.Add(new Expect(Field("repro"), Field("case"), Field("variant"), Outcome("outcome"), Field("reason"),
                                Outcome("windowsOutcome"), Field("windowsReason")));
            i++;
        }
        return list;
    }

    public static async Task<int> RunAsync(string root, string exe, Signatures.SignatureFamilies families, SubjectKinds kinds, Action<string> progress,
                                           IToolRunner tools)
    {
        var clock = Stopwatch.StartNew();
        var expects = LoadExpectations(root);
        if (IHost.Current.Platform == IHost.Windows) return OnWindows(root, expects, progress, tools);
        if (!File.Exists(exe)) throw new InputException($"{exe}: no such file (publish the harness for win-x64 first; see make unit)");
        var catalog = Catalog.Load(root, families, kinds);
        var wine = SubjectKinds.Provisioned(kinds.Resolve("wine", root), root);
        if (wine.Unavailable is { } why) throw new InputException($"winsmoke needs the wine subject: {why}");
        var stamp = DateTime.UtcNow.ToString("yyyyMMdd-HHmmss");
        var dir = Path.Combine(root, "artifacts", $"winsmoke-{stamp}-{Environment.ProcessId}");
        Directory.CreateDirectory(dir);

        // 1. The windows flavor, cross-built with mingw-w64: a Windows harness finds it up to date (same source hash).
        var builder = new Builder(root, tools);
        var windowsSubject = kinds.Resolve("windows", root);
        foreach (var (repro, cs) in expects.Select(e => (e.Repro, e.Case)).Distinct())
        {
            var m = catalog.Entries.FirstOrDefault(e => e.Manifest.Id == repro)?.Manifest
                    ?? throw new InputException($"{ExpectationsFile}: repro '{repro}' does not exist or does not load");
            var c = m.Cases.FirstOrDefault(x => x.Id == cs) ?? throw new InputException($"{ExpectationsFile}: {repro} has no case '{cs}'");
            if (c.CmakeTarget is null || !c.Subjects.Contains("windows"))
                throw new InputException($"{ExpectationsFile}: {repro}:{cs} is not a native case on the windows subject");
            var t = Stopwatch.StartNew();
            var recipe = windowsSubject.Kind.CrossBuild(windowsSubject, m, c)
                         ?? throw new InvalidOperationException($"the windows subject has no cross build of {repro}:{cs}");
            var built = builder.Ensure(m, recipe);
            if (built.Program is null) throw new InvalidOperationException($"cross-building {repro}:{cs} for windows: {built.Error}");
            progress($"windows flavor of {repro}:{cs}: {Path.GetRelativePath(root, built.Program)} ({t.Elapsed.TotalSeconds:0.0} s)");
        }
        var repros = string.Join(',', expects.Select(e => e.Repro).Distinct());
        var cases = string.Join(',', expects.Select(e => e.Case).Distinct());
        var variants = string.Join(',', expects.Select(e => e.Variant).Distinct());

        // 2. The Linux harness: the same cells on wine (gated against expected/) and on windows (unsupported here).
        var linuxId = $"winsmoke-{stamp}-{Environment.ProcessId}-linux";
        var self = Environment.ProcessPath!;
        IReadOnlyList<string> selfArgs = Path.GetFileNameWithoutExtension(self) == "dotnet" ? [typeof(WindowsSmoke).Assembly.Location] : [];
        var t2 = Stopwatch.StartNew();
        // The smoke's runs are its own: artifacts/latest stays the user's last run.
        var latest = new FileInfo(Path.Combine(root, "artifacts", "latest"));
        var latestBefore = latest.LinkTarget;
        var linux = tools.Run(self, [.. selfArgs, "run", "--root", root, "--repro", repros, "--case", cases, "--variant", variants,
                                                   "--subject", "wine,windows", "--run-id", linuxId], TimeSpan.FromMinutes(10));
        latest.Refresh();
        if (latest.LinkTarget is not null && latest.LinkTarget != latestBefore)
        {
            if (latestBefore is not null) Report.RunOutputs.LinkLatest(latest.DirectoryName!, latestBefore);
            else latest.Delete();
        }
        File.WriteAllText(Path.Combine(dir, "linux-harness.log"), linux.Stdout + linux.Stderr);
        progress($"linux harness: exit {linux.ExitCode} in {t2.Elapsed.TotalSeconds:0.0} s (wine and windows subjects)");

        // 3. The Windows harness under Wine: its selftest, then the cells on windows, each in its own contained Wine run.
        var windowsId = $"winsmoke-{stamp}-{Environment.ProcessId}-windows";
        var isolation = wine.Kind.Isolate(wine, dir);
        async Task<(RunResult Run, double Seconds)> UnderWine(string label, IReadOnlyList<string> args)
        {
            // The harness is .NET for Windows: under Wine 8 its W^X double mapping breaks the finalizing of dynamic methods
            // (System.Text.Json's serializers), "Internal CLR error (0x80131506)", as for the wine-net subjects and pwsh.
            var env = new Dictionary<string, string>(isolation.Env) { ["DOTNET_EnableWriteXorExecute"] = "0" };
            var launch = wine.Kind.Launch(wine, exe, args, new LaunchOptions(env, PerfMap: false));
            var spec = new ProcessSpec(launch.File, launch.Args, dir, Path.Combine(dir, $"{label}.stdout"), Path.Combine(dir, $"{label}.stderr"),
                                       TimeSpan.FromMinutes(10), CapBytes, launch.Env);
            var t = Stopwatch.StartNew();
            // The Windows harness's own table gates its cells against expected/, which says unsupported for windows: it is
            // not this smoke's verdict, so only its progress (stderr) is shown; the table stays in its .stdout file.
            using var p = new ContainedProcess(spec, (line, stderr, _) =>
            {
                if (stderr || label == "selftest") progress($"  {label}| {line}");
            });
            var r = await p.WaitAsync();
            return (r, t.Elapsed.TotalSeconds);
        }
        // PowerShell for Windows (harness/wine/pwsh.sh) in a prefix of the same isolation, so its teardown covers it.
        async Task<(RunResult Run, double Seconds)> Pwsh(string label, IReadOnlyList<string> args)
        {
            var env = new Dictionary<string, string>(isolation.Env)
            {
                ["WINE"] = wine.Path, ["WINESERVER"] = Path.Combine(Path.GetDirectoryName(wine.Path)!, "wineserver"),
            };
            var spec = new ProcessSpec("bash", [Path.Combine(root, "harness", "wine", "pwsh.sh"), "run", .. args], root,
                                       Path.Combine(dir, $"{label}.stdout"), Path.Combine(dir, $"{label}.stderr"), TimeSpan.FromMinutes(5), CapBytes, env);
            var t = Stopwatch.StartNew();
            using var p = new ContainedProcess(spec, (_, _, _) => { });
            var r = await p.WaitAsync();
            return (r, t.Elapsed.TotalSeconds);
        }
        (RunResult Run, double Seconds) selftest, windows, pester = default, planted = default;
        var pesterRepros = expects.Select(e => e.Repro).Distinct().ToList();
        try
        {
            selftest = await UnderWine("selftest", ["selftest"]);
            windows = await UnderWine("windows-harness",
                ["run", "--root", WinePath(root), "--repro", repros, "--case", cases, "--variant", variants, "--subject", "windows", "--run-id", windowsId]);
            // 3b. The repros' Pester files, as on Linux (ci/pester.ps1), over the Windows harness's run; then one fact of
            // that run planted wrong must fail the It that reads it (ci/pester-planted.ps1).
            if (File.Exists(Path.Combine(root, "artifacts", windowsId, "summary.json")))
            {
                pester = await Pwsh("pester", ["-File", "ci/pester.ps1", "-Run", windowsId, "-Repro", string.Join(',', pesterRepros)]);
                progress($"pester under wine: {pester.Run.Status} in {pester.Seconds:0.0} s");
                planted = await Pwsh("pester-planted", ["-File", "ci/pester-planted.ps1", "-Run", windowsId, "-Windows"]);
                progress($"pester-planted under wine: {planted.Run.Status} in {planted.Seconds:0.0} s");
            }
        }
        finally { isolation.Dispose(); }   // every run's prefix, tmpfs and wineserver
        var (selftestRun, selftestSec) = selftest;
        var (windowsRun, windowsSec) = windows;

        // 4. The comparison.
        var linuxCells = Outcomes(Path.Combine(root, "artifacts", linuxId, "summary.json"));
        var windowsCells = Outcomes(Path.Combine(root, "artifacts", windowsId, "summary.json"));
        var failures = new List<string>();
        if (selftestRun.ExitCode != 0) failures.Add($"the selftest under Wine ended {selftestRun.Status} (see {Path.Combine(dir, "selftest.stdout")})");
        if (windowsCells.Count == 0) failures.Add($"the Windows harness wrote no summary ({windowsRun.Status}; see {Path.Combine(dir, "windows-harness.stderr")})");
        Console.WriteLine();
        Console.WriteLine("The windows subject's cells: the Linux harness (on wine and on windows) against the Windows harness under Wine (on windows)");
        Console.WriteLine($"{"cell",-34} {"linux: wine",-14} {"linux: windows",-15} {"windows harness",-16} {"expected",-12} verdict");
        foreach (var e in expects)
        {
            var key = $"{e.Repro}:{e.Case} {e.Variant}";
            var onWine = linuxCells.GetValueOrDefault((key, "wine"));
            var onWindows = linuxCells.GetValueOrDefault((key, "windows"));
            var win = windowsCells.GetValueOrDefault((key, "windows"));
            var bad = new List<string>();
            if (onWine?.Gate != "pass") bad.Add($"linux harness on wine: {onWine?.Outcome ?? "missing"} ({onWine?.Gate ?? "not run"})");
            if (onWindows?.Outcome != "unsupported") bad.Add($"linux harness on windows: {onWindows?.Outcome ?? "missing"}, not unsupported");
            if (win?.Outcome != e.Outcome) bad.Add($"windows harness: {win?.Outcome ?? "missing"}, expected {e.Outcome}");
            Console.WriteLine($"{key,-34} {onWine?.Outcome ?? "-",-14} {onWindows?.Outcome ?? "-",-15} {win?.Outcome ?? "-",-16} {e.Outcome,-12} "
                              + (bad.Count == 0 ? "ok" : "DIFFERS"));
            if (win is not null) Console.WriteLine($"    windows harness: {win.Detail}");
            Console.WriteLine($"    why: {e.Reason}");
            failures.AddRange(bad.Select(b => $"{key}: {b}"));
        }
        var junit = Path.Combine(root, "artifacts", windowsId, "pester.junit.xml");
        var tally = PesterTally(junit);
        Console.WriteLine();
        Console.WriteLine($"The repros' Pester files ({string.Join(", ", pesterRepros)}) under PowerShell for Windows, over the Windows harness's run:");
        if (tally is null) failures.Add($"pester under Wine wrote no {Path.GetRelativePath(root, junit)} ({pester.Run?.Status ?? "not run"}; see {Path.Combine(dir, "pester.stdout")})");
        else
        {
            Console.WriteLine($"pester: {tally.Passed} passed, {tally.Failed} failed, {tally.Skipped} skipped ({pester.Run!.Status}, {pester.Seconds:0.0} s)");
            foreach (var f in tally.Failures) Console.WriteLine($"    FAILED {f}");
            if (tally.Failed > 0 || pester.Run.ExitCode != 0) failures.Add($"pester under Wine: {tally.Failed} failed ({pester.Run.Status})");
            if (tally.Passed == 0) failures.Add("pester under Wine: no It passed");
        }
        var plantedSaid = planted.Run is null ? "" : PlainText(planted.Run.Stdout).Split('\n').LastOrDefault(l => l.StartsWith("planted:")) ?? "";
        if (planted.Run?.ExitCode != 0)
            failures.Add($"pester-planted under Wine: {planted.Run?.Status ?? "not run"} {plantedSaid} (see {Path.Combine(dir, "pester-planted.stdout")})");
        else Console.WriteLine($"{plantedSaid} ({planted.Seconds:0.0} s)");
        Console.WriteLine();
        Console.WriteLine($"winsmoke: selftest under Wine {selftestSec:0.0} s ({selftestRun.Status}), Windows harness run {windowsSec:0.0} s "
                          + $"({windowsRun.Status}; its own table, gated against expected/ where windows is unsupported, is in "
                          + $"{Path.GetRelativePath(root, Path.Combine(dir, "windows-harness.stdout"))} and does not decide this smoke), "
                          + $"peak memory of the Wine run {windowsRun.PeakBytes >> 20} MB of a {CapBytes >> 20} MB cgroup cap, {clock.Elapsed.TotalSeconds:0} s in all");
        foreach (var f in failures) Console.WriteLine($"winsmoke: FAIL {f}");
        Console.WriteLine(failures.Count == 0 ? $"winsmoke: passed; the Linux harness's run is artifacts/{linuxId}"
                          : $"winsmoke: {failures.Count} failure(s); logs in {Path.GetRelativePath(root, dir)}, the Windows harness's run in artifacts/{windowsId}");
        if (failures.Count == 0)
            foreach (var d in new[] { dir, Path.Combine(root, "artifacts", windowsId) })
                if (Directory.Exists(d)) Directory.Delete(d, recursive: true);
        return failures.Count == 0 ? 0 : 1;
    }

    /// <summary>
    /// On real Windows (ci/workflows/windows.yml): this harness's selftest, then the same cells on `windows`, built there
    /// with CMake, against the expectations' windowsOutcome.
    /// </summary>
    private static int OnWindows(string root, IReadOnlyList<Expect> expects, Action<string> progress, IToolRunner tools)
    {
        var self = Environment.ProcessPath!;
        IReadOnlyList<string> selfArgs = Path.GetFileNameWithoutExtension(self) == "dotnet" ? [typeof(WindowsSmoke).Assembly.Location] : [];
        var failures = new List<string>();
        var selftest = tools.Run(self, [.. selfArgs, "selftest"], TimeSpan.FromMinutes(5));
        Console.WriteLine(selftest.Stdout.TrimEnd());
        if (selftest.ExitCode != 0) failures.Add($"selftest: {selftest.Describe("selftest")}");
        var id = $"winsmoke-{DateTime.UtcNow:yyyyMMdd-HHmmss}-{Environment.ProcessId}-windows";
        var run = tools.Run(self, [.. selfArgs, "run", "--root", root, "--repro", string.Join(',', expects.Select(e => e.Repro).Distinct()),
                                                 "--case", string.Join(',', expects.Select(e => e.Case).Distinct()),
                                                 "--variant", string.Join(',', expects.Select(e => e.Variant).Distinct()),
                                                 "--subject", "windows", "--run-id", id], TimeSpan.FromMinutes(20));
        progress(run.Stderr.TrimEnd());
        var seen = Outcomes(Path.Combine(root, "artifacts", id, "summary.json"));
        foreach (var e in expects)
        {
            var key = $"{e.Repro}:{e.Case} {e.Variant}";
            var got = seen.GetValueOrDefault((key, "windows"));
            Console.WriteLine($"{key,-34} windows harness: {got?.Outcome ?? "missing",-14} expected {e.WindowsOutcome,-14} "
                              + $"{(got?.Outcome == e.WindowsOutcome ? "ok" : "DIFFERS")}\n    {got?.Detail}\n    why: {e.WindowsReason}");
            if (got?.Outcome != e.WindowsOutcome) failures.Add($"{key}: {got?.Outcome ?? "missing"}, expected {e.WindowsOutcome}");
        }
        // The repros' Pester files over this run and the planted wrong fact, as under Wine: the pinned pwsh (dotnet tool
        // run) with the pinned Pester and the Corpus module first on PSModulePath; paths are relative to the checkout.
        Directory.SetCurrentDirectory(root);
        Environment.SetEnvironmentVariable("PSModulePath", string.Join(';', Path.Combine(root, ".cache", "powershell", "Modules"),
            Path.Combine(root, "harness", "pester"), Environment.GetEnvironmentVariable("PSModulePath") ?? ""));
        var pesterRepros = string.Join(',', expects.Select(e => e.Repro).Distinct());
        foreach (var (label, script) in new (string, string[])[]
                 {
                     ("pester", ["ci/pester.ps1", "-Run", id, "-Repro", pesterRepros]),
                     ("pester-planted", ["ci/pester-planted.ps1", "-Run", id, "-Windows"]),
                 })
        {
            var ps = tools.Run("dotnet", ["tool", "run", "pwsh", "-NoProfile", "-NonInteractive", "-File", .. script], TimeSpan.FromMinutes(10));
            Console.WriteLine(ps.Stdout.TrimEnd());
            if (ps.ExitCode != 0) failures.Add($"{label}: {ps.Describe(label)}");
        }
        var tally = PesterTally(Path.Combine(root, "artifacts", id, "pester.junit.xml"));
        Console.WriteLine(tally is null ? "pester: no JUnit XML" : $"pester: {tally.Passed} passed, {tally.Failed} failed, {tally.Skipped} skipped");
        if (tally is null || tally.Passed == 0) failures.Add("pester: no It passed");
        foreach (var f in failures) Console.WriteLine($"winsmoke: FAIL {f}");
        Console.WriteLine($"winsmoke: {(failures.Count == 0 ? "passed" : $"{failures.Count} failure(s)")}; artifacts/{id}");
        return failures.Count == 0 ? 0 : 1;
    }

    public sealed record Tally(int Passed, int Failed, int Skipped, IReadOnlyList<string> Failures);

    /// <summary>Pester's JUnit XML: what ran, and each failed It with its message's first line.</summary>
    public static Tally? PesterTally(string junit)
    {
        if (!File.Exists(junit)) return null;
        var cases = System.Xml.Linq.XDocument.Load(junit).Descendants("testcase").ToList();
        string Status(System.Xml.Linq.XElement c) => (string?)c.Attribute("status") ?? "";
        var failed = cases.Where(c => c.Element("failure") is not null).ToList();
        return new Tally(cases.Count(c => Status(c) == "Passed"), failed.Count, cases.Count(c => c.Element("skipped") is not null),
                         failed.Select(c => $"{(string?)c.Attribute("name")}: {((string?)c.Element("failure")!.Attribute("message") ?? "").Split('\n')[0]}").ToList());
    }

    /// <summary>What a pseudo-terminal carried, without its escape sequences and carriage returns.</summary>
    public static string PlainText(string s) =>
        System.Text.RegularExpressions.Regex.Replace(s, @"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r", "");

    /// <summary>Wine maps / to Z:.</summary>
    public static string WinePath(string path) => "Z:" + path.Replace('/', '\\');

    private sealed record Seen(string Outcome, string Gate, string Detail);

    private static Dictionary<(string Cell, string Subject), Seen> Outcomes(string summary)
    {
        var seen = new Dictionary<(string, string), Seen>();
        if (!File.Exists(summary)) return seen;
        using var doc = JsonDocument.Parse(File.ReadAllText(summary));
        foreach (var c in doc.RootElement.GetProperty("cells").EnumerateArray())
        {
            string S(string n) => c.TryGetProperty(n, out var v) ? v.ToString() : "";
            seen[($"{S("repro")}:{S("case")} {S("variant")}", S("subject"))] = new Seen(S("outcome"), S("gate"), S("detail"));
        }
        return seen;
    }
}
