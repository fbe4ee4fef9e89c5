using Corpus.Harness.Json;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Model;

/// <param name="CpuClock">"clock": "cpu": timeoutSec counts the CPU the run's processes used, not the wall clock, so a
/// host that starves the run does not spend its budget; the wall cap is then <see cref="StarvedWallFactor"/> × timeoutSec.</param>
public sealed record Budget(int TimeoutSec, int MemoryMB, bool CpuClock = false)
{
    /// <summary>The wall cap of a run on the CPU clock, in budgets: one that reaches it first got under a third of a core.</summary>
    public const int StarvedWallFactor = 3;

    public static readonly IReadOnlyDictionary<string, bool> Clocks = new Dictionary<string, bool> { ["wall"] = false, ["cpu"] = true };

    public static Budget Read(Fields? f, Budget fallback)
    {
        if (f is null) return fallback;
        f.AllowOnly("timeoutSec", "memoryMB", "clock");
        return new Budget(f.IntOr("timeoutSec", fallback.TimeoutSec, min: 1, max: 86400)!.Value,
                          f.IntOr("memoryMB", fallback.MemoryMB, min: 16, max: 1 << 20)!.Value,
                          f.Enum("clock", Clocks, fallback.CpuClock, required: false));
    }
}

/// <summary>
/// The facts that prove this bug: one family's block (its key is <see cref="Family"/>; a refining family such as
/// "statistics" comes with the one it refines), the evidence checks' blocks, and what a clean or an unsupported run
/// looks like. Each block is read by the family or evidence check that owns its key (Signatures/).
/// </summary>
public sealed record Signature(string Family, IReadOnlyDictionary<string, object> Specs, ProcessPattern Clean,
                               UnsupportedSpec? Unsupported = null)
{
    public T? Get<T>(string key) where T : class => Specs.TryGetValue(key, out var s) ? s as T : null;
    public bool Has(string key) => Specs.ContainsKey(key);

    /// <summary>A signature of one block, for tests and tools.</summary>
    public static Signature Of(string family, object spec, ProcessPattern? clean = null) =>
        new(family, new Dictionary<string, object> { [family] = spec }, clean ?? ProcessPattern.DefaultClean);

    public static Signature Read(Fields f, SignatureFamilies families)
    {
        f.AllowOnly([.. families.SignatureKeys, "clean", "unsupported"]);
        var specs = new Dictionary<string, object>();
        foreach (var family in families.Families)
            if (f.ObjectOr(family.Key) is { } block) specs[family.Key] = family.ReadSpec(block);
        var given = families.Families.Where(x => specs.ContainsKey(x.Key)).ToList();
        // A refining family (statistics) with the one it refines (process) is one choice, the refining one.
        var chosen = given.Where(x => !given.Any(r => r.Refines == x.Key)).ToList();
        var roots = string.Join(", ", families.Families.Where(x => x.Refines is null).Select(x => $"'{x.Key}'"));
        if (chosen.Count == 0) throw f.Error($"a repro without a signature proves nothing: give one of {roots}");
        if (chosen.Count > 1)
            throw f.Error($"give one of {roots}, not several (found {string.Join(", ", chosen.Select(x => $"'{x.Key}'"))})");
        foreach (var check in families.Evidence.Where(e => e.InSignature))
            if (f.ObjectOr(check.Key) is { } block) specs[check.Key] = check.ReadSpec(block);
        var clean = f.ObjectOr("clean") is { } c ? ProcessPattern.Read(c) : ProcessPattern.DefaultClean;
        var unsupported = f.ObjectOr("unsupported") is { } us ? UnsupportedSpec.Read(us) : null;
        return new Signature(chosen[0].Key, specs, clean, unsupported);
    }
}

/// <param name="Program">"main" (the .NET/Mono build), "cmake:TARGET" (a native program) or "roslyn" (the compiler runner).</param>
/// <param name="Display">The program makes windows: a subject with a display gives each run one (Wine: Xvfb).</param>
public sealed record CaseSpec(string Id, string Title, IReadOnlyList<string> Args, IReadOnlyList<string> Tags,
                              Budget Budget, Signature Signature,
                              IReadOnlyDictionary<string, string> Env, IReadOnlyList<string> Subjects,
                              IReadOnlyList<string> Platforms, string Program = "main", FixtureSpec? Fixture = null, bool Display = false)
{
    /// <summary>The case's capture blocks, each read by its registered kind (<see cref="Capture.ICaptureKind"/>).</summary>
    public Capture.CaptureSpecs Captures { get; init; } = Capture.CaptureSpecs.None;

    public TimedCapture? Timed => Captures.Get<TimedCapture>("timed");
    public CrashCapture? Crash => Captures.Get<CrashCapture>("crash");
    public TimeTravelCapture? TimeTravel => Captures.Get<TimeTravelCapture>("timeTravel");
    public TraceCapture? Trace => Captures.Get<TraceCapture>("trace");

    /// <summary>What the program prints first (startMarker): a run that ends without it never reached the program.</summary>
    public string? StartMarker { get; init; }

    public string? CmakeTarget => Program.StartsWith("cmake:") ? Program["cmake:".Length..] : null;

    /// <summary>The type of <see cref="Program"/>: a subject runs the case when its capabilities include it.</summary>
    public ProgramType ProgramType =>
        ProgramTypes.Of(Program) ?? throw new InvalidOperationException($"case {Id}: '{Program}' is not {ProgramTypes.Written}");
}

public sealed partial record Manifest(
    string File, string Dir, string Id, string Title, string Category, IReadOnlyList<string> References,
    IReadOnlyList<string> Languages, IReadOnlyList<string> Platforms, IReadOnlyList<string> Subjects,
    IReadOnlyList<string> Variants, BuildSpec Build, IReadOnlyList<CaseSpec> Cases)
{
    public static readonly Budget DefaultBudget = new(120, 2048);
    private static readonly Dictionary<string, string> Categories =
        new[] { "crash", "hang", "leak", "perf", "race" }.ToDictionary(k => k);
    private static readonly string[] KnownPlatforms = ["linux", "windows"];

    /// <param name="families">The run's signature families (default: the built-ins), which read the signatures.</param>
    /// <param name="kinds">The run's subject kinds (default: the built-ins), which own the subjects the manifest names.</param>
    public static Manifest Load(string file, SignatureFamilies? families = null, SubjectKinds? kinds = null)
    {
        families ??= SignatureFamilies.Default;
        kinds ??= SubjectKinds.Default;
        var f = Fields.Load(file);
        f.AllowOnly("id", "title", "category", "references", "languages", "platforms", "subjects", "variants",
                    "build", "budget", "env", "cases");
        var dir = Path.GetDirectoryName(Path.GetFullPath(file))!;
        var id = f.Name("id");
        if (id != Path.GetFileName(dir))
            throw f.Error($"'{id}' must equal the folder name '{Path.GetFileName(dir)}'", "id");
        var platforms = ReadPlatforms(f) is { Count: > 0 } mp ? mp : KnownPlatforms;
        var subjects = ReadSubjects(f, required: true, kinds);
        var variants = f.NameList("variants");
        var buildSpec = BuildSpec.Read(f.Object("build"), dir, id, families.Builds);
        var targets = buildSpec.CmakeDir is { } cd ? BuildSpec.CmakeTargets(Path.Combine(dir, cd)) : [];
        var budget = Budget.Read(f.ObjectOr("budget"), DefaultBudget);
        var env = ReadEnv(f);
        var cases = new List<CaseSpec>();
        foreach (var c in f.Objects("cases"))
        {
            c.AllowOnly("id", "title", "args", "tags", "budget", "signature", "capture", "env", "subjects", "platforms", "program",
                        "fixture", "display", "startMarker");
            var capture = c.ObjectOr("capture");
            capture?.AllowOnly([.. families.Captures.Select(k => k.Key)]);
            var captures = new Dictionary<string, object>();
            foreach (var kind in families.Captures)
                if (capture?.ObjectOr(kind.Key) is { } block) captures[kind.Key] = kind.ReadSpec(block, dir);
            var caseEnv = new Dictionary<string, string>(env);
            foreach (var kv in ReadEnv(c)) caseEnv[kv.Key] = kv.Value;
            var spec = new CaseSpec(c.Name("id"), c.StringOr("title", "")!, c.Strings("args"),
                                    c.NameList("tags", required: false, nonEmpty: false),
                                    Budget.Read(c.ObjectOr("budget"), budget), Signature.Read(c.Object("signature"), families),
                                    caseEnv, ReadSubjects(c, required: false, kinds) is { Count: > 0 } cs ? cs : subjects,
                                    ReadPlatforms(c) is { Count: > 0 } cp ? cp : platforms,
                                    c.StringOr("program", "main")!,
                                    c.ObjectOr("fixture") is { } fx ? FixtureSpec.Read(fx, dir, variants) : null,
                                    c.BoolOr("display", false))
                       { Captures = new Capture.CaptureSpecs(captures), StartMarker = c.StringOr("startMarker", null) };
            if (spec.StartMarker is { Length: 0 }) throw c.Error("must not be empty: the line the program prints first", "startMarker");
            var asked = new Capture.CaptureCheck(kinds, families.For(spec.Signature), families);
            foreach (var kind in families.Captures.Where(k => spec.Captures.Has(k.Key))) kind.Validate(spec, c, asked);
            if (ProgramTypes.Of(spec.Program) is null)
                throw c.Error($"'{spec.Program}' is not {ProgramTypes.Written}", "program");
            // Every subject of the case must be able to run it (its program, display, fixture, time travel).
            foreach (var s in spec.Subjects)
                if (kinds.Validate(spec, s) is { } unrunnable) throw c.Error(unrunnable.Reason, unrunnable.Field);
            if (spec.CmakeTarget is not null && buildSpec.CmakeDir is null)
                throw c.Error("a cmake program needs 'build.cmake'", "program");
            if (spec.CmakeTarget is { } target && !targets.Contains(target))
                throw c.Error($"'{target}' is not built by repros/{id}/{buildSpec.CmakeDir}/CMakeLists.txt "
                              + $"(add_executable targets: {(targets.Count == 0 ? "none" : string.Join(", ", targets))})", "program");
            var family = families.For(spec.Signature);
            if (!family.SweepsSizes && spec.Args.Any(a => a.Contains("{n}")))
                throw c.Error($"'{{n}}' is replaced only in a sweep over sizes; this case's '{family.Key}' signature runs none", "args");
            // Other families' sweeps and holds are on the wall clock and know no starved run.
            if (spec.Budget.CpuClock && !family.TakesCpuClock)
                throw c.Error($"'cpu' is for a family that judges one run by its time (process); this case's family is '{family.Key}'", "budget.clock");
            family.Validate(spec, c);
            foreach (var check in families.Evidence.Where(e => e.InSignature && spec.Signature.Has(e.Key))) check.Validate(spec, c);
            if (variants.Count > 1 && !spec.Args.Any(a => a.Contains("{variant}")))
                throw c.Error($"no '{{variant}}' in the arguments, so the variants {string.Join(", ", variants)} would run the same command", "args");
            CheckTimes(c, spec);
            if (cases.Any(x => x.Id == spec.Id)) throw c.Error($"duplicate case id '{spec.Id}'", "id");
            cases.Add(spec);
        }
        return new Manifest(file, dir, id, f.String("title"), f.Enum("category", Categories),
                            f.Strings("references"), f.Strings("languages"), platforms, subjects,
                            variants, buildSpec, cases);
    }

    /// <summary>Waits inside one run must fit its timeout, or the check they feed can never happen.</summary>
    private static void CheckTimes(Fields c, CaseSpec spec)
    {
        var timeout = spec.Budget.TimeoutSec;
        string Within(string what) => $"{what} must be shorter than the run's budget.timeoutSec ({timeout} s)";
        if (spec.Signature.Clean.MaxSeconds is { } cm && cm >= timeout)
            throw c.Error(Within($"maxSeconds {cm}"), "signature.clean.maxSeconds");
    }

    /// <summary>Manifests name built-in subjects only (of the run's kinds); a user's build is chosen at run time (SUBJECT=kind:PATH).</summary>
    private static IReadOnlyList<string> ReadSubjects(Fields f, bool required, SubjectKinds kinds)
    {
        var subjects = f.Strings("subjects", required);
        for (var i = 0; i < subjects.Count; i++)
        {
            if (!kinds.IsBuiltIn(subjects[i]))
                throw f.Error($"'{subjects[i]}' is not a built-in subject ({string.Join(", ", kinds.BuiltInForms)}); "
                              + "a user's build is given at run time with SUBJECT=kind:PATH", $"subjects[{i}]");
            if (subjects.Take(i).Contains(subjects[i])) throw f.Error($"'{subjects[i]}' is listed twice", $"subjects[{i}]");
        }
        return subjects;
    }

    private static IReadOnlyDictionary<string, string> ReadEnv(Fields f)
    {
        var env = f.StringMap("env");
        foreach (var name in env.Keys)
            if (!EnvName().IsMatch(name))
                throw f.Error("not a usable environment variable name: use letters, digits and '_', not starting with a digit", $"env.{name}");
        return env;
    }

    [System.Text.RegularExpressions.GeneratedRegex("^[A-Za-z_][A-Za-z0-9_]*$")]
    private static partial System.Text.RegularExpressions.Regex EnvName();

    private static IReadOnlyList<string> ReadPlatforms(Fields f)
    {
        var platforms = f.Strings("platforms", required: false);
        for (var i = 0; i < platforms.Count; i++)
        {
            if (!KnownPlatforms.Contains(platforms[i]))
                throw f.Error($"'{platforms[i]}' is not one of: {string.Join(", ", KnownPlatforms)}", $"platforms[{i}]");
            if (platforms.Take(i).Contains(platforms[i])) throw f.Error($"'{platforms[i]}' is listed twice", $"platforms[{i}]");
        }
        return platforms;
    }
}

/// <summary>
/// Machine state a case needs (Fixtures/RegistryFixture): .reg files, relative to the repro's folder, applied in order
/// before the cell's runs and rolled back after them. "{variant}" in a name picks a file per variant.
/// </summary>
public sealed record FixtureSpec(IReadOnlyList<string> Registry)
{
    public static FixtureSpec Read(Fields f, string dir, IReadOnlyList<string> variants)
    {
        f.AllowOnly("registry");
        var files = f.Strings("registry");
        var here = $"repros/{System.IO.Path.GetFileName(dir)}/";
        foreach (var v in variants)
        {
            var keys = 0;
            for (var i = 0; i < files.Count; i++)
            {
                var name = files[i].Replace("{variant}", v);
                var file = System.IO.Path.Combine(dir, name);
                if (!System.IO.File.Exists(file))
                    throw f.Error($"'{name}'{(name == files[i] ? "" : $" (variant {v})")} is not a file in {here}", $"registry[{i}]");
                try { keys += Fixtures.RegFile.Parse(file).Count; }
                catch (FormatException e) { throw f.Error($"{here}{name}: {e.Message}", $"registry[{i}]"); }
            }
            if (keys == 0) throw f.Error($"no [KEY] line in the files of variant {v}: the fixture would change nothing", "registry");
        }
        return new FixtureSpec(files);
    }

    /// <summary>The files of one variant, as full paths.</summary>
    public IReadOnlyList<string> Files(string dir, string variant) =>
        Registry.Select(r => System.IO.Path.Combine(dir, r.Replace("{variant}", variant))).ToList();
}
