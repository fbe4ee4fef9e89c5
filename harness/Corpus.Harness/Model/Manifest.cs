using Corpus.Harness.Json;

namespace Corpus.Harness.Model;

public enum Outcome { Reproduced, Clean, WrongFailure, Unsupported, Error }

public static class Outcomes
{
    public static readonly IReadOnlyDictionary<string, Outcome> ByName = new Dictionary<string, Outcome>
    {
        ["reproduced"] = Outcome.Reproduced,
        ["clean"] = Outcome.Clean,
        ["wrong-failure"] = Outcome.WrongFailure,
        ["unsupported"] = Outcome.Unsupported,
        ["error"] = Outcome.Error,
    };

    public static string Name(this Outcome o) => ByName.First(kv => kv.Value == o).Key;
}

public sealed record Budget(int TimeoutSec, int MemoryMB)
{
    public static Budget Read(Fields? f, Budget fallback)
    {
        if (f is null) return fallback;
        f.AllowOnly("timeoutSec", "memoryMB");
        return new Budget(f.IntOr("timeoutSec", fallback.TimeoutSec, min: 1)!.Value,
                          f.IntOr("memoryMB", fallback.MemoryMB, min: 16)!.Value);
    }
}

/// <summary>How to build the repro for each kind of subject.</summary>
public sealed record BuildSpec(string? DotnetProject, string? Assembly, IReadOnlyList<string> MonoSources, string? CmakeDir)
{
    public static BuildSpec Read(Fields f)
    {
        f.AllowOnly("dotnet", "mono", "cmake");
        var dotnet = f.ObjectOr("dotnet");
        dotnet?.AllowOnly("project", "assembly");
        var mono = f.ObjectOr("mono");
        mono?.AllowOnly("sources");
        var cmake = f.ObjectOr("cmake");
        cmake?.AllowOnly("dir");
        if (dotnet is null && mono is null && cmake is null) throw f.Error("needs at least one of 'dotnet', 'mono' or 'cmake'");
        return new BuildSpec(dotnet?.String("project"), dotnet?.String("assembly") ?? null,
                             mono?.Strings("sources") ?? [], cmake?.String("dir"));
    }
}

/// <summary>What a clean or a reproducing process looks like: exit status and output patterns.</summary>
public sealed record ProcessPattern(string Exit, IReadOnlyList<string> Output, double? MaxSeconds)
{
    public static readonly IReadOnlyDictionary<string, string> ExitForms = new Dictionary<string, string>
    {
        ["zero"] = "zero", ["nonzero"] = "nonzero", ["any"] = "any",
        ["SIGABRT"] = "SIGABRT", ["SIGSEGV"] = "SIGSEGV", ["SIGKILL"] = "SIGKILL", ["timeout"] = "timeout",
    };

    public static ProcessPattern Read(Fields f)
    {
        f.AllowOnly("exit", "output", "maxSeconds");
        return new ProcessPattern(f.Enum("exit", ExitForms, "any", required: false),
                                  f.Strings("output", required: false, nonEmpty: false),
                                  f.NumberOr("maxSeconds", null));
    }

    public static readonly ProcessPattern DefaultClean = new("zero", ["REPRO-DONE"], null);
}

public sealed record ComplexitySpec(string Metric, IReadOnlyList<long> Sizes, double ReproducedMin, double CleanMax,
                                    double MinR2, double RepeatUnderSec)
{
    public static ComplexitySpec Read(Fields f)
    {
        f.AllowOnly("metric", "sizes", "reproducedMin", "cleanMax", "minR2", "repeatUnderSec");
        var spec = new ComplexitySpec(f.String("metric"), f.PositiveIntegers("sizes"), f.Number("reproducedMin"),
                                      f.Number("cleanMax"), f.NumberOr("minR2", 0.9)!.Value,
                                      f.NumberOr("repeatUnderSec", 1.0)!.Value);
        if (spec.Sizes.Count < 3) throw f.Error("needs at least 3 sizes to fit a slope", "sizes");
        if (spec.Sizes.Distinct().Count() != spec.Sizes.Count) throw f.Error("sizes must be distinct", "sizes");
        if (spec.CleanMax >= spec.ReproducedMin)
            throw f.Error($"must be below reproducedMin ({spec.ReproducedMin})", "cleanMax");
        return spec;
    }
}

/// <summary>Races: repeat a run until the first hit, or until enough clean runs bound the rate below epsilon.</summary>
/// <param name="Parallel">Runs at a time; independent processes, so a clean verdict's 300 runs fit the budget.</param>
public sealed record StatisticsSpec(double Epsilon, int MaxRuns, double BudgetSec, int Parallel = 1)
{
    public int RunsForClean => Signatures.RaceStatistics.RunsForClean(Epsilon);

    public static StatisticsSpec Read(Fields f)
    {
        f.AllowOnly("epsilon", "maxRuns", "budgetSec", "parallel");
        var eps = f.NumberOr("epsilon", 0.01)!.Value;
        if (eps is <= 0 or >= 1) throw f.Error($"must be between 0 and 1, found {eps}", "epsilon");
        var spec = new StatisticsSpec(eps, f.IntOr("maxRuns", 1000, min: 1)!.Value, f.NumberOr("budgetSec", 120)!.Value,
                                      f.IntOr("parallel", 1, min: 1)!.Value);
        if (spec.MaxRuns < spec.RunsForClean)
            throw f.Error($"{spec.MaxRuns} runs can never show p < {eps} at 95%; at least {spec.RunsForClean} are needed", "maxRuns");
        return spec;
    }
}

/// <summary>A run that shows a missing prerequisite (e.g. a runtime that cannot run the repro at all).</summary>
public sealed record UnsupportedSpec(ProcessPattern When, string Reason)
{
    public static UnsupportedSpec Read(Fields f)
    {
        f.AllowOnly("exit", "output", "reason");
        return new UnsupportedSpec(new ProcessPattern(f.Enum("exit", ProcessPattern.ExitForms, "any", required: false),
                                                      f.Strings("output"), null), f.String("reason"));
    }
}

/// <summary>
/// Leak family for shared memory: when the marker line appears, the shared memory charged to the cell has grown by
/// about LeakBytes while the process's RSS stays small, and the process holds descriptors to unmapped shm/memfd
/// objects of that size. After the run the cell's shared memory must be gone, within ReturnToleranceMB.
/// </summary>
public sealed record ShmemSpec(string Marker, long LeakBytes, double Tolerance, double MaxRssFraction, double ReturnToleranceMB,
                               double SettleSec)
{
    public static ShmemSpec Read(Fields f)
    {
        f.AllowOnly("marker", "leakBytes", "tolerance", "maxRssFraction", "returnToleranceMB", "settleSec");
        var leak = f.NumberOr("leakBytes", null, required: true)!.Value;
        if (leak <= 0) throw f.Error("must be positive", "leakBytes");
        return new ShmemSpec(f.String("marker"), (long)leak, f.NumberOr("tolerance", 0.10)!.Value,
                             f.NumberOr("maxRssFraction", 0.10)!.Value, f.NumberOr("returnToleranceMB", 16)!.Value,
                             f.NumberOr("settleSec", 0.5)!.Value);
    }
}

/// <summary>
/// Double-free facts from the crash capture: the aborting free's frames must match CrashingFrames, and another
/// thread must have freed the same pointer earlier from frames matching OtherFrames.
/// </summary>
public sealed record DoubleFreeSpec(IReadOnlyList<string> CrashingFrames, IReadOnlyList<string> OtherFrames)
{
    public static DoubleFreeSpec Read(Fields f)
    {
        f.AllowOnly("crashingFrames", "otherFrames");
        var spec = new DoubleFreeSpec(f.Strings("crashingFrames"), f.Strings("otherFrames"));
        foreach (var pattern in spec.CrashingFrames.Concat(spec.OtherFrames))
        {
            try { _ = new System.Text.RegularExpressions.Regex(pattern); }
            catch (ArgumentException e) { throw f.Error($"'{pattern}' is not a valid regular expression: {e.Message}"); }
        }
        return spec;
    }
}

/// <summary>
/// Lost-update facts from the crash core's event ring (harness/native/eventring): an exchange that wrote back a
/// value its thread had read over a different one. Lost: increment, decrement or any; BeforeDelete: the lost
/// update precedes the object's first delete in the ring. Script: eventring.py, found from the manifest's place.
/// </summary>
public sealed record LostUpdateSpec(string Lost, bool BeforeDelete, string Script)
{
    public static LostUpdateSpec Read(Fields f)
    {
        f.AllowOnly("lost", "beforeDelete");
        var lost = f.Enum("lost", new Dictionary<string, string> { ["increment"] = "increment", ["decrement"] = "decrement", ["any"] = "any" },
                          "increment", required: false);
        // repros/<id>/repro.json: the corpus root is two folders up.
        var script = Path.GetFullPath(Path.Combine(Path.GetDirectoryName(Path.GetFullPath(f.File))!, "..", "..",
                                                   "harness", "native", "eventring", "eventring.py"));
        if (!System.IO.File.Exists(script)) throw f.Error($"needs {script}, the event ring reader, which is missing");
        return new LostUpdateSpec(lost, f.BoolOr("beforeDelete", true), script);
    }

    public bool Matches(Signatures.LostUpdate l) => Lost switch
    {
        "increment" => l.Found > l.Wrote,
        "decrement" => l.Found < l.Wrote,
        _ => l.Found != l.Wrote,
    };
}

/// <summary>On a crash: keep the core, and optionally record every free() (freelog) to name who freed what.</summary>
public sealed record CrashCapture(bool Core, bool Freelog)
{
    public static CrashCapture Read(Fields f)
    {
        f.AllowOnly("core", "freelog");
        return new CrashCapture(f.BoolOr("core", true), f.BoolOr("freelog", false));
    }
}

/// <summary>Dump facts: a heap capture must hold exactly this many live instances of a type.</summary>
public sealed record HeapSpec(string Type, int Count)
{
    public static HeapSpec Read(Fields f)
    {
        f.AllowOnly("type", "count");
        return new HeapSpec(f.String("type"), f.IntOr("count", null, required: true, min: 0)!.Value);
    }
}

public sealed record StacksSpec(string Frame)
{
    public static StacksSpec Read(Fields f)
    {
        f.AllowOnly("frame");
        var frame = f.String("frame");
        try { _ = new System.Text.RegularExpressions.Regex(frame); }
        catch (ArgumentException e) { throw f.Error($"not a valid regular expression: {e.Message}", "frame"); }
        return new StacksSpec(frame);
    }
}

/// <summary>The facts that prove this bug; at least one family must be present.</summary>
public sealed record Signature(ProcessPattern? Process, ProcessPattern Clean, ComplexitySpec? Complexity, StacksSpec? Stacks,
                               StatisticsSpec? Statistics = null, ShmemSpec? Shmem = null, HeapSpec? Heap = null,
                               UnsupportedSpec? Unsupported = null, DoubleFreeSpec? DoubleFree = null,
                               LostUpdateSpec? LostUpdate = null)
{
    public static Signature Read(Fields f)
    {
        f.AllowOnly("process", "clean", "complexity", "stacks", "statistics", "shmem", "heap", "unsupported", "doubleFree",
                    "lostUpdate");
        var process = f.ObjectOr("process") is { } p ? ProcessPattern.Read(p) : null;
        var clean = f.ObjectOr("clean") is { } c ? ProcessPattern.Read(c) : ProcessPattern.DefaultClean;
        var complexity = f.ObjectOr("complexity") is { } x ? ComplexitySpec.Read(x) : null;
        var stacks = f.ObjectOr("stacks") is { } s ? StacksSpec.Read(s) : null;
        var shmem = f.ObjectOr("shmem") is { } sh ? ShmemSpec.Read(sh) : null;
        var families = new object?[] { process, complexity, shmem }.Count(x => x is not null);
        if (families == 0)
            throw f.Error("a repro without a signature proves nothing: give 'process', 'complexity' or 'shmem'");
        if (families > 1) throw f.Error("give one of 'process', 'complexity' or 'shmem', not several");
        foreach (var pattern in (process?.Output ?? []).Concat(clean.Output))
        {
            try { _ = new System.Text.RegularExpressions.Regex(pattern); }
            catch (ArgumentException e) { throw f.Error($"'{pattern}' is not a valid regular expression: {e.Message}"); }
        }
        var statistics = f.ObjectOr("statistics") is { } st ? StatisticsSpec.Read(st) : null;
        if (statistics is not null && process is null)
            throw f.Error("repeats need a 'process' signature to count hits", "statistics");
        var heap = f.ObjectOr("heap") is { } hp ? HeapSpec.Read(hp) : null;
        var unsupported = f.ObjectOr("unsupported") is { } us ? UnsupportedSpec.Read(us) : null;
        var doubleFree = f.ObjectOr("doubleFree") is { } df ? DoubleFreeSpec.Read(df) : null;
        var lostUpdate = f.ObjectOr("lostUpdate") is { } lu ? LostUpdateSpec.Read(lu) : null;
        return new Signature(process, clean, complexity, stacks, statistics, shmem, heap, unsupported, doubleFree, lostUpdate);
    }
}

/// <summary>procdump -s/-n semantics, started when a marker line appears.</summary>
/// <param name="Core">After the series, one native core of the process with Debian's procdump (for gdb).</param>
public sealed record TimedCapture(string Marker, double DelaySec, double IntervalSec, int Count, bool Heap, bool Core = false)
{
    public static TimedCapture Read(Fields f)
    {
        f.AllowOnly("marker", "delaySec", "intervalSec", "count", "heap", "core");
        return new TimedCapture(f.String("marker"), f.NumberOr("delaySec", 0)!.Value,
                                f.NumberOr("intervalSec", 1)!.Value, f.IntOr("count", 3, min: 1)!.Value,
                                f.BoolOr("heap", false), f.BoolOr("core", false));
    }
}

/// <param name="Program">"main" (the .NET/Mono build) or "cmake:TARGET" (a native program, run on a native subject).</param>
public sealed record CaseSpec(string Id, string Title, IReadOnlyList<string> Args, IReadOnlyList<string> Tags,
                              Budget Budget, Signature Signature, TimedCapture? Timed,
                              IReadOnlyDictionary<string, string> Env, IReadOnlyList<string> Subjects,
                              IReadOnlyList<string> Platforms, string Program = "main", CrashCapture? Crash = null)
{
    public string? CmakeTarget => Program.StartsWith("cmake:") ? Program["cmake:".Length..] : null;
}

public sealed record Manifest(
    string File, string Dir, string Id, string Title, string Kind, IReadOnlyList<string> References,
    IReadOnlyList<string> Languages, IReadOnlyList<string> Platforms, IReadOnlyList<string> Subjects,
    IReadOnlyList<string> Variants, BuildSpec Build, IReadOnlyList<CaseSpec> Cases)
{
    public static readonly Budget DefaultBudget = new(120, 2048);
    private static readonly Dictionary<string, string> Kinds =
        new[] { "crash", "hang", "leak", "perf", "race" }.ToDictionary(k => k);
    private static readonly string[] KnownPlatforms = ["linux", "windows"];

    public static Manifest Load(string file)
    {
        var f = Fields.Load(file);
        f.AllowOnly("id", "title", "kind", "references", "languages", "platforms", "subjects", "variants",
                    "build", "budget", "env", "cases");
        var dir = Path.GetDirectoryName(Path.GetFullPath(file))!;
        var id = f.String("id");
        if (id != Path.GetFileName(dir))
            throw f.Error($"'{id}' must equal the folder name '{Path.GetFileName(dir)}'", "id");
        var platforms = ReadPlatforms(f) is { Count: > 0 } mp ? mp : KnownPlatforms;
        var subjects = f.Strings("subjects");
        var buildSpec = BuildSpec.Read(f.Object("build"));
        var budget = Budget.Read(f.ObjectOr("budget"), DefaultBudget);
        var env = f.StringMap("env");
        var cases = new List<CaseSpec>();
        foreach (var c in f.Objects("cases"))
        {
            c.AllowOnly("id", "title", "args", "tags", "budget", "signature", "capture", "env", "subjects", "platforms", "program");
            var capture = c.ObjectOr("capture");
            capture?.AllowOnly("timed", "crash");
            var caseEnv = new Dictionary<string, string>(env);
            foreach (var kv in c.StringMap("env")) caseEnv[kv.Key] = kv.Value;
            var spec = new CaseSpec(c.String("id"), c.StringOr("title", "")!, c.Strings("args"),
                                    c.Strings("tags", required: false, nonEmpty: false),
                                    Budget.Read(c.ObjectOr("budget"), budget), Signature.Read(c.Object("signature")),
                                    capture?.ObjectOr("timed") is { } t ? TimedCapture.Read(t) : null, caseEnv,
                                    c.Strings("subjects", required: false) is { Count: > 0 } cs ? cs : subjects,
                                    ReadPlatforms(c) is { Count: > 0 } cp ? cp : platforms,
                                    c.StringOr("program", "main")!,
                                    capture?.ObjectOr("crash") is { } cr ? CrashCapture.Read(cr) : null);
            if (spec.Signature.DoubleFree is not null && spec.Crash is not { Freelog: true })
                throw c.Error("a doubleFree signature needs the freelog crash capture", "signature.doubleFree");
            if (spec.Signature.LostUpdate is not null && spec.Crash is not { Core: true })
                throw c.Error("a lostUpdate signature needs the crash capture with its core", "signature.lostUpdate");
            if (spec.Program != "main" && spec.CmakeTarget is null)
                throw c.Error($"'{spec.Program}' is neither 'main' nor 'cmake:TARGET'", "program");
            if (spec.CmakeTarget is not null && buildSpec.CmakeDir is null)
                throw c.Error("a cmake program needs 'build.cmake'", "program");
            if (spec.Signature.Complexity is not null && !spec.Args.Any(a => a.Contains("{n}")))
                throw c.Error("a complexity signature needs '{n}' in the arguments", "args");
            if (cases.Any(x => x.Id == spec.Id)) throw c.Error($"duplicate case id '{spec.Id}'", "id");
            cases.Add(spec);
        }
        return new Manifest(file, dir, id, f.String("title"), f.Enum("kind", Kinds),
                            f.Strings("references"), f.Strings("languages"), platforms, subjects,
                            f.Strings("variants"), buildSpec, cases);
    }

    private static IReadOnlyList<string> ReadPlatforms(Fields f)
    {
        var platforms = f.Strings("platforms", required: false);
        foreach (var p in platforms)
            if (!KnownPlatforms.Contains(p)) throw f.Error($"'{p}' is not one of: {string.Join(", ", KnownPlatforms)}", "platforms");
        return platforms;
    }
}
