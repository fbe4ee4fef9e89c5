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
public sealed record BuildSpec(string? DotnetProject, string? Assembly, IReadOnlyList<string> MonoSources)
{
    public static BuildSpec Read(Fields f)
    {
        f.AllowOnly("dotnet", "mono");
        var dotnet = f.ObjectOr("dotnet");
        dotnet?.AllowOnly("project", "assembly");
        var mono = f.ObjectOr("mono");
        mono?.AllowOnly("sources");
        if (dotnet is null && mono is null) throw f.Error("needs at least one of 'dotnet' or 'mono'");
        return new BuildSpec(dotnet?.String("project"), dotnet?.String("assembly") ?? null,
                             mono?.Strings("sources") ?? []);
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
public sealed record StatisticsSpec(double Epsilon, int MaxRuns, double BudgetSec)
{
    public int RunsForClean => Signatures.RaceStatistics.RunsForClean(Epsilon);

    public static StatisticsSpec Read(Fields f)
    {
        f.AllowOnly("epsilon", "maxRuns", "budgetSec");
        var eps = f.NumberOr("epsilon", 0.01)!.Value;
        if (eps is <= 0 or >= 1) throw f.Error($"must be between 0 and 1, found {eps}", "epsilon");
        var spec = new StatisticsSpec(eps, f.IntOr("maxRuns", 1000, min: 1)!.Value, f.NumberOr("budgetSec", 120)!.Value);
        if (spec.MaxRuns < spec.RunsForClean)
            throw f.Error($"{spec.MaxRuns} runs can never show p < {eps} at 95%; at least {spec.RunsForClean} are needed", "maxRuns");
        return spec;
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
                               StatisticsSpec? Statistics = null)
{
    public static Signature Read(Fields f)
    {
        f.AllowOnly("process", "clean", "complexity", "stacks", "statistics");
        var process = f.ObjectOr("process") is { } p ? ProcessPattern.Read(p) : null;
        var clean = f.ObjectOr("clean") is { } c ? ProcessPattern.Read(c) : ProcessPattern.DefaultClean;
        var complexity = f.ObjectOr("complexity") is { } x ? ComplexitySpec.Read(x) : null;
        var stacks = f.ObjectOr("stacks") is { } s ? StacksSpec.Read(s) : null;
        if (process is null && complexity is null)
            throw f.Error("a repro without a signature proves nothing: give 'process' or 'complexity'");
        if (process is not null && complexity is not null)
            throw f.Error("give either 'process' or 'complexity', not both");
        foreach (var pattern in (process?.Output ?? []).Concat(clean.Output))
        {
            try { _ = new System.Text.RegularExpressions.Regex(pattern); }
            catch (ArgumentException e) { throw f.Error($"'{pattern}' is not a valid regular expression: {e.Message}"); }
        }
        var statistics = f.ObjectOr("statistics") is { } st ? StatisticsSpec.Read(st) : null;
        if (statistics is not null && process is null)
            throw f.Error("repeats need a 'process' signature to count hits", "statistics");
        return new Signature(process, clean, complexity, stacks, statistics);
    }
}

/// <summary>procdump -s/-n semantics, started when a marker line appears.</summary>
public sealed record TimedCapture(string Marker, double DelaySec, double IntervalSec, int Count)
{
    public static TimedCapture Read(Fields f)
    {
        f.AllowOnly("marker", "delaySec", "intervalSec", "count");
        return new TimedCapture(f.String("marker"), f.NumberOr("delaySec", 0)!.Value,
                                f.NumberOr("intervalSec", 1)!.Value, f.IntOr("count", 3, min: 1)!.Value);
    }
}

public sealed record CaseSpec(string Id, string Title, IReadOnlyList<string> Args, IReadOnlyList<string> Tags,
                              Budget Budget, Signature Signature, TimedCapture? Timed,
                              IReadOnlyDictionary<string, string> Env);

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
        var platforms = f.Strings("platforms", required: false);
        foreach (var p in platforms)
            if (!KnownPlatforms.Contains(p)) throw f.Error($"'{p}' is not one of: {string.Join(", ", KnownPlatforms)}", "platforms");
        var budget = Budget.Read(f.ObjectOr("budget"), DefaultBudget);
        var env = f.StringMap("env");
        var cases = new List<CaseSpec>();
        foreach (var c in f.Objects("cases"))
        {
            c.AllowOnly("id", "title", "args", "tags", "budget", "signature", "capture", "env");
            var capture = c.ObjectOr("capture");
            capture?.AllowOnly("timed");
            var caseEnv = new Dictionary<string, string>(env);
            foreach (var kv in c.StringMap("env")) caseEnv[kv.Key] = kv.Value;
            var spec = new CaseSpec(c.String("id"), c.StringOr("title", "")!, c.Strings("args"),
                                    c.Strings("tags", required: false, nonEmpty: false),
                                    Budget.Read(c.ObjectOr("budget"), budget), Signature.Read(c.Object("signature")),
                                    capture?.ObjectOr("timed") is { } t ? TimedCapture.Read(t) : null, caseEnv);
            if (spec.Signature.Complexity is not null && !spec.Args.Any(a => a.Contains("{n}")))
                throw c.Error("a complexity signature needs '{n}' in the arguments", "args");
            if (cases.Any(x => x.Id == spec.Id)) throw c.Error($"duplicate case id '{spec.Id}'", "id");
            cases.Add(spec);
        }
        return new Manifest(file, dir, id, f.String("title"), f.Enum("kind", Kinds),
                            f.Strings("references"), f.Strings("languages"),
                            platforms.Count == 0 ? KnownPlatforms : platforms, f.Strings("subjects"),
                            f.Strings("variants"), BuildSpec.Read(f.Object("build")), cases);
    }
}
