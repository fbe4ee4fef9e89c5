using Corpus.Harness.Signatures;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Tests;

/// <summary>Bad manifests and expected files must name the file and the field, and not stop the other repros.</summary>
public sealed class InputValidationTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-input-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    private const string GoodManifest = """
        {
          "id": "ID", "title": "t", "category": "perf", "references": ["r"], "languages": ["csharp"],
          "subjects": ["mono", "net10"], "variants": ["bug"],
          "build": { "mono": { "sources": ["src/*.cs"] } },
          "cases": [ { "id": "main", "args": ["x"], "signature": { "process": { "exit": "nonzero", "output": ["boom"] } } } ]
        }
        """;

    private static string GoodExpected(string id) => $$"""
        { "repro": "{{id}}", "cells": [
          { "case": "main", "variant": "bug", "subject": "mono", "outcome": "reproduced", "reason": "r" },
          { "case": "main", "variant": "bug", "subject": "net10", "outcome": "clean", "reason": "r" } ] }
        """;

    private string Write(string id, string manifest, string? expected = null)
    {
        var dir = Path.Combine(_root, "repros", id);
        Directory.CreateDirectory(Path.Combine(dir, "src"));
        File.WriteAllText(Path.Combine(dir, "src", "Program.cs"), "class P { static void Main() {} }");
        File.WriteAllText(Path.Combine(dir, "repro.json"), manifest.Replace("\"ID\"", $"\"{id}\""));
        Directory.CreateDirectory(Path.Combine(_root, "expected"));
        File.WriteAllText(Path.Combine(_root, "expected", id + ".json"), expected ?? GoodExpected(id));
        return Path.Combine(dir, "repro.json");
    }

    private InputException ManifestError(string manifest)
    {
        var file = Write("bad", manifest);
        var e = Assert.Throws<InputException>(() => Manifest.Load(file));
        Assert.Equal(file, e.File);
        return e;
    }

    [Fact]
    public void GoodManifestLoads()
    {
        var m = Manifest.Load(Write("good", GoodManifest));
        Assert.Equal("good", m.Id);
        Assert.Equal(["linux", "windows"], m.Platforms);
        Assert.Equal(Manifest.DefaultBudget, m.Cases[0].Budget);
        Assert.Equal(ExitForm.Nonzero, m.Cases[0].Signature.Get<ProcessPattern>("process")!.Exit);
    }

    private static string WithTimeTravel(string tt) =>
        GoodManifest.Replace("\"signature\": { \"process\"", $"\"capture\": {{ \"timeTravel\": {tt} }}, \"signature\": {{ \"process\"")
                    .Replace("\"boom\"] } } } ]", "\"boom\"] } } } ]");

    [Theory]
    [InlineData("{ \"script\": \"gdb/none.py\", \"shows\": \"x\", \"subjects\": [\"mono\"] }", "cases[0].capture.timeTravel.script", "not a file in the repro's folder")]
    [InlineData("{ \"script\": \"../../expected/bad.json\", \"shows\": \"x\", \"subjects\": [\"mono\"] }", "cases[0].capture.timeTravel.script", "not a file in the repro's folder")]
    [InlineData("{ \"script\": \"src/Program.cs\", \"shows\": \"(\", \"subjects\": [\"mono\"] }", "cases[0].capture.timeTravel.shows", "")]
    [InlineData("{ \"script\": \"src/Program.cs\", \"shows\": \"x\", \"subjects\": [\"linux\"] }", "cases[0].capture.timeTravel.subjects", "not one of the case's subjects")]
    [InlineData("{ \"script\": \"src/Program.cs\", \"shows\": \"x\", \"subjects\": [\"mono\"] }", "cases[0].capture.timeTravel", "needs 'program': 'cmake:TARGET'")]
    public void TimeTravelCaptureIsChecked(string tt, string field, string problem)
    {
        var e = ManifestError(WithTimeTravel(tt));
        Assert.Equal(field, e.Field);
        Assert.Contains(problem, e.Message);
    }

    [Theory]
    [InlineData("\"dir/ring.bin\"")]
    [InlineData("\"..\"")]
    [InlineData("\"\"")]
    public void RingFileMustBeAPlainName(string ring)
    {
        var e = ManifestError(GoodManifest.Replace("\"signature\": { \"process\"",
                                                   $"\"capture\": {{ \"crash\": {{ \"ringFile\": {ring} }} }}, \"signature\": {{ \"process\""));
        Assert.Equal("cases[0].capture.crash.ringFile", e.Field);
    }

    [Fact]
    public void MissingFieldIsNamed() =>
        Assert.Equal("title", ManifestError(GoodManifest.Replace("\"title\": \"t\",", "")).Field);

    [Fact]
    public void WrongTypeInNestedFieldIsNamedWithItsPath()
    {
        var e = ManifestError(GoodManifest.Replace("\"args\": [\"x\"]", "\"args\": \"x\""));
        Assert.Equal("cases[0].args", e.Field);
        Assert.Contains("expected an array", e.Problem);
    }

    [Fact]
    public void MisspeltFieldIsRejected() =>
        Assert.Equal("cases[0].signature.proces",
                     ManifestError(GoodManifest.Replace("\"process\"", "\"proces\"")).Field);

    [Fact]
    public void SignatureIsRequired()
    {
        var e = ManifestError(GoodManifest.Replace("\"process\": { \"exit\": \"nonzero\", \"output\": [\"boom\"] }", ""));
        Assert.Equal("cases[0].signature", e.Field);
        Assert.Contains("without a signature", e.Problem);
    }

    [Fact]
    public void BadRegexIsRejected()
    {
        var e = ManifestError(GoodManifest.Replace("\"boom\"", "\"(unclosed\""));
        Assert.Equal("cases[0].signature.process.output[0]", e.Field);
        Assert.Contains("'(unclosed' is not a valid regular expression", e.Problem);
    }

    [Fact]
    public void IdMustMatchFolder() =>
        Assert.Equal("id", ManifestError(GoodManifest.Replace("\"ID\"", "\"other\"").Replace("\"id\": \"bad\"", "\"id\": \"other\"")).Field);

    [Fact]
    public void SyntaxErrorGivesLine()
    {
        var e = ManifestError(GoodManifest.Replace("\"category\": \"perf\",", "\"category\": perf,"));
        Assert.Equal("(syntax)", e.Field);
        Assert.Contains("line 2", e.Problem);
    }

    [Fact]
    public void AShareIsOfTheMainThreadOrOfAllThreads()
    {
        var real = File.ReadAllText(Path.Combine(RoslynTriggerTests.Root, "repros", "roslyn-nested-attribute-blowup", "repro.json"))
                       .Replace("\"id\": \"roslyn-nested-attribute-blowup\"", "\"id\": \"ID\"");
        Assert.Contains("\"thread\": \"main\"", real);
        var e = ManifestError(real.Replace("\"thread\": \"main\"", "\"thread\": \"worker\""));
        Assert.Equal("cases[0].signature.trace.samples[0].thread", e.Field);
        Assert.Contains("give 'main'", e.Problem);
    }

    [Fact]
    public void ComplexityNeedsSizePlaceholderAndSaneBounds()
    {
        var complexity = GoodManifest.Replace("\"process\": { \"exit\": \"nonzero\", \"output\": [\"boom\"] }",
            "\"complexity\": { \"metric\": \"t\", \"sizes\": [1, 2, 4], \"reproducedMin\": 1.7, \"cleanMax\": 1.3 }");
        Assert.Equal("cases[0].args", ManifestError(complexity).Field);
        var inverted = complexity.Replace("\"args\": [\"x\"]", "\"args\": [\"{n}\"]").Replace("1.3", "1.9");
        Assert.Equal("cases[0].signature.complexity.cleanMax", ManifestError(inverted).Field);
    }

    [Fact]
    public void ExpectedFileMustCoverEveryDefaultCell()
    {
        var file = Write("partial", GoodManifest, """
            { "repro": "partial", "cells": [ { "case": "main", "variant": "bug", "subject": "mono", "outcome": "reproduced", "reason": "r" } ] }
            """);
        var e = Assert.Throws<InputException>(() => ExpectedFile.Load(ExpectedFile.PathFor(_root, "partial"), Manifest.Load(file)));
        Assert.Equal("cells", e.Field);
        Assert.Contains("main/bug/net10", e.Problem);
    }

    [Fact]
    public void ExpectedOutcomeMustBeKnown()
    {
        var file = Write("typo", GoodManifest, GoodExpected("typo").Replace("\"clean\"", "\"passed\""));
        var e = Assert.Throws<InputException>(() => ExpectedFile.Load(ExpectedFile.PathFor(_root, "typo"), Manifest.Load(file)));
        Assert.Equal("cells[1].outcome", e.Field);
        Assert.Contains("wrong-failure", e.Problem);
    }

    [Fact]
    public void InconclusiveIsNoExpectedOutcome()
    {
        var file = Write("undecided", GoodManifest, GoodExpected("undecided").Replace("\"clean\"", "\"inconclusive\""));
        var e = Assert.Throws<InputException>(() => ExpectedFile.Load(ExpectedFile.PathFor(_root, "undecided"), Manifest.Load(file)));
        Assert.Equal("cells[1].outcome", e.Field);
        Assert.Contains("'inconclusive' is no expected outcome", e.Problem);
    }

    [Fact]
    public void OneBrokenReproDoesNotStopTheOthers()
    {
        Write("good", GoodManifest);
        Write("broken", GoodManifest.Replace("\"category\": \"perf\"", "\"category\": \"slow\""));
        Directory.CreateDirectory(Path.Combine(_root, "repros", "empty"));
        var catalog = Catalog.Load(_root);
        Assert.Equal(["good"], catalog.Entries.Select(e => e.Manifest.Id));
        Assert.Equal(2, catalog.Errors.Count);
        Assert.Contains(catalog.Errors, e => e.StartsWith("repros/broken/repro.json: field 'category': 'slow' is not one of"));
        Assert.Contains(catalog.Errors, e => e.StartsWith("repros/empty/repro.json: field '(file)'"));
    }

    /// <summary>A manifest with one case "main"; every part can be swapped to make one field bad.</summary>
    private static string Make(string signature = ProcessSignature, string? capture = null, string args = "[\"x\"]",
                               string subjects = "[\"mono\", \"net10\"]", string variants = "[\"bug\"]",
                               string build = "{ \"mono\": { \"sources\": [\"src/*.cs\"] } }", string top = "", string caseExtra = "") => $$"""
        {
          "id": "ID", "title": "t", "category": "perf", "references": ["r"], "languages": ["csharp"], {{top}}
          "subjects": {{subjects}}, "variants": {{variants}}, "build": {{build}},
          "cases": [ { "id": "main", "args": {{args}}, {{caseExtra}} "signature": {{signature}}{{(capture is null ? "" : $", \"capture\": {capture}")}} } ]
        }
        """;

    private const string ProcessSignature = "{ \"process\": { \"exit\": \"nonzero\", \"output\": [\"boom\"] } }";
    private const string Shmem = "{ \"shmem\": { \"marker\": \"m\", \"leakBytes\": 1048576, ";

    private void AssertField(string manifest, string field, string problem)
    {
        var e = ManifestError(manifest);
        Assert.Equal(field, e.Field);
        Assert.Contains(problem, e.Problem);
        Assert.Equal($"{e.File}: field '{field}': {e.Problem}", e.Message);
    }

    private const string Hang = "{ \"hang\": { ";

    [Theory]
    [InlineData("\"cleanMaxMs\": 5000 } }", "cases[0].signature.hang.cleanMaxMs", "must be below minSec (3 s)")]
    [InlineData("\"expectedMs\": 1000 } }", "cases[0].signature.hang.expectedMs", "below minSec (3 s)")]
    [InlineData("\"expectedMs\": 200000 } }", "cases[0].signature.hang.expectedMs", "must be shorter than the run's budget.timeoutSec (120 s)")]
    [InlineData("\"tolerance\": 0 } }", "cases[0].signature.hang.tolerance", "greater than 0")]
    [InlineData("\"evidence\": [\"(\"] } }", "cases[0].signature.hang.evidence[0]", "not a valid regular expression")]
    [InlineData("\"releaseSecs\": 1 } }", "cases[0].signature.hang.releaseSecs", "")]
    public void HangSignatureFieldsAreChecked(string rest, string field, string problem) =>
        AssertField(Make(signature: Hang + rest), field, problem);

    [Fact]
    public void AHangSignatureIsOneFamilyAmongTheOthers() =>
        AssertField(Make(signature: "{ \"hang\": {}, \"process\": { \"exit\": \"zero\" } }"), "cases[0].signature",
                    "give one of 'process', 'complexity', 'shmem', 'fixture', 'hang', not several (found 'process', 'hang')");

    [Fact]
    public void ADisplayNeedsASubjectWithOne()
    {
        AssertField(Make(caseExtra: "\"display\": true,"), "cases[0].display",
                    "a case with 'display' runs on a subject with a display (windows, wine, wine-win10, wine-net10, wine-net8, wine-net:VERSION), not on mono");
        // Every subject of the case needs one, not just some.
        AssertField(Make(caseExtra: "\"display\": true, \"subjects\": [\"wine-net10\", \"net10\"],"), "cases[0].display", "not on net10");
        AssertField(Make(caseExtra: "\"display\": \"yes\","), "cases[0].display", "expected true or false");
        var m = Manifest.Load(Write("shown", Make(caseExtra: "\"display\": true, \"subjects\": [\"wine-net10\"],")));
        Assert.True(m.Cases[0].Display);
    }

    [Fact]
    public void EverySubjectOfACaseMustRunItsProgram() =>
        AssertField(Make(caseExtra: "\"program\": \"roslyn\","), "cases[0].program",
                    "the compiler runner (roslyn) runs on roslyn:VERSION, not on mono, which runs the .NET/Mono program (main)");

    /// <summary>A trace analyser is one bug's reading: only a registered one, named by the case, runs.</summary>
    [Fact]
    public void ATraceAnalyserMustBeRegistered()
    {
        AssertField(Make(capture: "{ \"trace\": { \"kind\": \"cpu\", \"analysers\": [\"mapping-leak\", \"no-such\"] } }"),
                    "cases[0].capture.trace.analysers[1]", "'no-such' is no registered trace analyser (mapping-leak, setparent-attach)");
        Assert.Equal(["mapping-leak"], Manifest.Load(Write("analyser", Make(capture: "{ \"trace\": { \"kind\": \"cpu\", \"analysers\": [\"mapping-leak\"] } }")))
                                         .Cases[0].Trace!.Analysers);
    }

    [Fact]
    public void AHeapSnapshotNeedsASubjectWithHeapFacts()
    {
        const string heap = "{ \"timed\": { \"marker\": \"m\", \"heap\": true } }";
        AssertField(Make(subjects: "[\"mono\"]", capture: heap), "cases[0].capture.timed.heap",
                    "none of the case's subjects (mono) gives heap statistics (subjects that do: net10, net8, net:VERSION, roslyn:VERSION)");
        Assert.True(Manifest.Load(Write("heap", Make(capture: heap))).Cases[0].Timed!.Heap);
    }

    [Fact]
    public void ASubjectIsAskedWhatItCanDoNotWhatItIs()
    {
        var cs = Manifest.Load(Write("caps", Make())).Cases[0];
        Assert.Null(SubjectKinds.Default.Validate(cs, "mono"));
        Assert.Equal("program", SubjectKinds.Default.Validate(cs, "linux")?.Field);
        Assert.Equal("display", SubjectKinds.Default.Validate(cs with { Display = true }, "net10")?.Field);
        Assert.Null(SubjectKinds.Default.Validate(cs with { Display = true }, "wine-net8"));
        Assert.Equal("fixture", SubjectKinds.Default.Validate(cs with { Fixture = new FixtureSpec(["a.reg"]) }, "net10")?.Field);
        var native = cs with { Program = "cmake:t", Captures = new Capture.CaptureSpecs(new Dictionary<string, object>
            { ["timeTravel"] = new TimeTravelCapture("s.py", "x", ["linux", "linux-asan"]) }) };
        Assert.Null(SubjectKinds.Default.Validate(native, "linux"));
        Assert.Equal("subject 'linux-asan' cannot record a run for time travel; subjects that can: linux",
                     SubjectKinds.Default.Validate(native, "linux-asan")?.Reason);
        Assert.Null(SubjectKinds.Default.Validate(native with { Fixture = new FixtureSpec(["a.reg"]) }, "windows"));
        // A user's build is asked the same way, through its kind.
        var users = SubjectKinds.Default.Resolve("mono:/no/such/mono", "/");
        Assert.True(users.IsUsers);
        Assert.Equal("program", users.Validate(native, SubjectKinds.Default)?.Field);
    }

    [Fact]
    public void ManifestSubjectMustBeABuiltInName()
    {
        var e = ManifestError(Make(subjects: "[\"mono\", \"net9\"]"));
        Assert.Equal("subjects[1]", e.Field);
        Assert.StartsWith("'net9' is not a built-in subject", e.Problem);
        Assert.All(SubjectKinds.Default.BuiltInForms, name => Assert.Contains(name, e.Problem));
        Assert.Contains("roslyn:VERSION", e.Problem);
    }

    [Fact]
    public void CaseSubjectMustBeABuiltInName() =>
        AssertField(Make(caseExtra: "\"subjects\": [\"linx\"],"), "cases[0].subjects[0]", "'linx' is not a built-in subject");

    [Fact]
    public void DuplicateSubjectIsAnError() =>
        AssertField(Make(subjects: "[\"mono\", \"net10\", \"mono\"]"), "subjects[2]", "'mono' is listed twice");

    [Theory]
    [InlineData("[\"bug\", \"bug\"]", "variants[1]", "'bug' is listed twice")]
    [InlineData("[\"bug fix\"]", "variants[0]", "'bug fix' is not a usable name")]
    [InlineData("[\"bug,fix\"]", "variants[0]", "is not a usable name")]
    [InlineData("[]", "variants", "must not be empty")]
    [InlineData("[\"\"]", "variants[0]", "expected a non-empty string")]
    public void VariantsMustBeDistinctUsableNames(string variants, string field, string problem) =>
        AssertField(Make(variants: variants, args: "[\"{variant}\"]"), field, problem);

    [Fact]
    public void CaseIdMustBeAUsableName() =>
        AssertField(Make().Replace("\"id\": \"main\"", "\"id\": \"../main\""), "cases[0].id", "'../main' is not a usable name");

    [Theory]
    [InlineData("[\"slow\", \"slow\"]", "cases[0].tags[1]", "'slow' is listed twice")]
    [InlineData("[\"slow,big\"]", "cases[0].tags[0]", "is not a usable name")]
    public void TagsMustBeDistinctUsableNames(string tags, string field, string problem) =>
        AssertField(Make(caseExtra: $"\"tags\": {tags},"), field, problem);

    [Fact]
    public void EnvironmentNamesMustBeUsable() =>
        AssertField(Make(top: "\"env\": { \"1X\": \"y\" },"), "env.1X", "not a usable environment variable name");

    [Theory]
    // budgets
    [InlineData("\"budget\": { \"timeoutSec\": 0 },", ProcessSignature, null, "budget.timeoutSec", "between 1 and 86400, found 0")]
    [InlineData("\"budget\": { \"memoryMB\": -1 },", ProcessSignature, null, "budget.memoryMB", "found -1")]
    // process and clean
    [InlineData("", "{ \"process\": { \"exit\": \"zero\", \"maxSeconds\": -5 } }", null,
                "cases[0].signature.process.maxSeconds", "greater than 0 and at most 86400, found -5")]
    [InlineData("", "{ \"process\": { \"exit\": \"zero\" }, \"clean\": { \"maxSeconds\": 0 } }", null,
                "cases[0].signature.clean.maxSeconds", "greater than 0")]
    // races
    [InlineData("", "{ \"process\": { \"exit\": \"zero\" }, \"statistics\": { \"budgetSec\": -150 } }", null,
                "cases[0].signature.statistics.budgetSec", "found -150")]
    [InlineData("", "{ \"process\": { \"exit\": \"zero\" }, \"statistics\": { \"budgetSec\": 0 } }", null,
                "cases[0].signature.statistics.budgetSec", "greater than 0")]
    [InlineData("", "{ \"process\": { \"exit\": \"zero\" }, \"statistics\": { \"parallel\": 0 } }", null,
                "cases[0].signature.statistics.parallel", "between 1 and 64, found 0")]
    [InlineData("", "{ \"process\": { \"exit\": \"zero\" }, \"statistics\": { \"epsilon\": 1 } }", null,
                "cases[0].signature.statistics.epsilon", "between 0 and 1")]
    [InlineData("", "{ \"process\": { \"exit\": \"zero\" }, \"statistics\": { \"maxRuns\": 0 } }", null,
                "cases[0].signature.statistics.maxRuns", "found 0")]
    // shared-memory leaks
    [InlineData("", Shmem + "\"tolerance\": -0.1 } }", null, "cases[0].signature.shmem.tolerance", "greater than 0 and at most 1, found -0.1")]
    [InlineData("", Shmem + "\"returnToleranceMB\": 0 } }", null, "cases[0].signature.shmem.returnToleranceMB", "greater than 0 and at most 65536, found 0")]
    [InlineData("", Shmem + "\"maxRssFraction\": 1.5 } }", null, "cases[0].signature.shmem.maxRssFraction", "at most 1, found 1.5")]
    [InlineData("", Shmem + "\"settleSec\": -2 } }", null, "cases[0].signature.shmem.settleSec", "between 0 and 60, found -2")]
    [InlineData("", "{ \"shmem\": { \"marker\": \"m\", \"leakBytes\": 0 } }", null, "cases[0].signature.shmem.leakBytes", "greater than 0")]
    [InlineData("", "{ \"shmem\": { \"marker\": \"m\", \"leakBytes\": 1.5 } }", null, "cases[0].signature.shmem.leakBytes", "whole number")]
    // timed captures
    [InlineData("", ProcessSignature, "{ \"timed\": { \"marker\": \"m\", \"delaySec\": -1 } }", "cases[0].capture.timed.delaySec", "between 0 and 3600, found -1")]
    [InlineData("", ProcessSignature, "{ \"timed\": { \"marker\": \"m\", \"intervalSec\": 0 } }", "cases[0].capture.timed.intervalSec", "greater than 0")]
    [InlineData("", ProcessSignature, "{ \"timed\": { \"marker\": \"m\", \"count\": 0 } }", "cases[0].capture.timed.count", "between 1 and 100, found 0")]
    public void NumbersOutsideTheirRangeAreNamed(string top, string signature, string? capture, string field, string problem) =>
        AssertField(Make(signature, capture, top: top), field, problem);

    [Theory]
    [InlineData("\"repeatUnderSec\": -1", "cases[0].signature.complexity.repeatUnderSec", "between 0 and 3600, found -1")]
    [InlineData("\"minR2\": 1.5", "cases[0].signature.complexity.minR2", "between 0 and 1, found 1.5")]
    [InlineData("\"sizes\": [1, 2, -4]", "cases[0].signature.complexity.sizes[2]", "expected a positive integer")]
    [InlineData("\"calibration\": \"t\"", "cases[0].signature.complexity.calibration", "must name another METRIC than 'metric'")]
    [InlineData("\"calibration\": \"c\", \"shape\": \"exponential\"", "cases[0].signature.complexity.calibration", "applies to power sweeps only")]
    public void ComplexityNumbersOutsideTheirRangeAreNamed(string field, string name, string problem)
    {
        var complexity = $"{{ \"complexity\": {{ \"metric\": \"t\", \"reproducedMin\": 1.7, \"cleanMax\": 1.3, {field}"
                         + (field.StartsWith("\"sizes\"") ? "" : ", \"sizes\": [1, 2, 4]") + " } }";
        AssertField(Make(complexity, args: "[\"{n}\"]"), name, problem);
    }

    [Fact]
    public void RepeatUnderSecZeroMeansOneRunPerSize() =>
        Assert.Equal(0, Manifest.Load(Write("zero", Make("{ \"complexity\": { \"metric\": \"t\", \"sizes\": [1, 2, 4], "
            + "\"reproducedMin\": 1.7, \"cleanMax\": 1.3, \"repeatUnderSec\": 0 } }", args: "[\"{n}\"]"))).Cases[0].Signature.Get<ComplexitySpec>("complexity")!.RepeatUnderSec);

    [Theory]
    [InlineData("\"budget\": { \"timeoutSec\": 5 },", "{ \"timed\": { \"marker\": \"m\", \"delaySec\": 5 } }", ProcessSignature,
                "cases[0].capture.timed.delaySec")]
    [InlineData("\"budget\": { \"timeoutSec\": 5 },", null, "{ \"shmem\": { \"marker\": \"m\", \"leakBytes\": 1, \"settleSec\": 6 } }",
                "cases[0].signature.shmem.settleSec")]
    [InlineData("\"budget\": { \"timeoutSec\": 5 },", null, "{ \"process\": { \"exit\": \"zero\", \"maxSeconds\": 10 } }",
                "cases[0].signature.process.maxSeconds")]
    public void WaitsMustFitTheTimeout(string top, string? capture, string signature, string field) =>
        AssertField(Make(signature, capture, top: top), field, "must be shorter than the run's budget.timeoutSec (5 s)");

    [Theory]
    [InlineData("\"budget\": { \"clock\": \"gpu\" },", ProcessSignature, "budget.clock", "'gpu' is not one of: wall, cpu")]
    [InlineData("\"budget\": { \"clock\": \"cpu\" },", Shmem + "\"tolerance\": 0.1 } }", "cases[0].budget.clock",
                "'cpu' is for a family that judges one run by its time (process); this case's family is 'shmem'")]
    public void TheCpuClockIsNamedAndOnlyForTheProcessFamily(string top, string signature, string field, string problem) =>
        AssertField(Make(signature, top: top), field, problem);

    [Theory]
    [InlineData("{ \"process\": { \"exit\": \"zero\", \"output\": [\"ok\", \"[a-\"] } }", "cases[0].signature.process.output[1]")]
    [InlineData("{ \"process\": { \"exit\": \"zero\" }, \"clean\": { \"output\": [\"*x\"] } }", "cases[0].signature.clean.output[0]")]
    [InlineData("{ \"shmem\": { \"marker\": \"m\", \"leakBytes\": 1 }, \"unsupported\": { \"output\": [\"(abort\"], \"reason\": \"r\" } }",
                "cases[0].signature.unsupported.output[0]")]
    [InlineData("{ \"process\": { \"exit\": \"zero\" }, \"stacks\": { \"frame\": \"Foo\\\\.(\" } }", "cases[0].signature.stacks.frame")]
    [InlineData("{ \"process\": { \"exit\": \"zero\" }, \"doubleFree\": { \"crashingFrames\": [\"a\", \"b)\"], \"otherFrames\": [\"c\"] } }",
                "cases[0].signature.doubleFree.crashingFrames[1]")]
    public void EveryRegexIsCompiledAndNamed(string signature, string field) =>
        AssertField(Make(signature, "{ \"crash\": { \"freelog\": true } }"), field, "is not a valid regular expression");

    [Fact]
    public void SizePlaceholderOutsideASweepIsAnError() =>
        AssertField(Make(args: "[\"{n}\"]"), "cases[0].args", "'{n}' is replaced only in a sweep over sizes");

    [Fact]
    public void SeveralVariantsNeedTheVariantPlaceholder() =>
        AssertField(Make(variants: "[\"bug\", \"fix\"]"), "cases[0].args", "the variants bug, fix would run the same command");

    private const string DotnetBuild = "{ \"dotnet\": { \"project\": \"src/App.csproj\", \"assembly\": \"App\" } }";

    private string WriteProject(string id, string manifest, string project = "src/App.csproj", string? assemblyName = null)
    {
        var file = Write(id, manifest);
        var path = Path.Combine(Path.GetDirectoryName(file)!, project);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        File.WriteAllText(path, $"""
            <Project Sdk="Microsoft.NET.Sdk">
              <PropertyGroup>
                <TargetFrameworks>net8.0;net10.0</TargetFrameworks>
                {(assemblyName is null ? "" : $"<AssemblyName>{assemblyName}</AssemblyName>")}
              </PropertyGroup>
            </Project>
            """);
        return file;
    }

    private InputException LoadError(string file)
    {
        var e = Assert.Throws<InputException>(() => Manifest.Load(file));
        Assert.Equal(file, e.File);
        return e;
    }

    [Fact]
    public void DotnetProjectMustExist()
    {
        var e = LoadError(Write("noproj", Make(build: DotnetBuild)));
        Assert.Equal("build.dotnet.project", e.Field);
        Assert.Equal("'src/App.csproj' is not a file in repros/noproj/", e.Problem);
    }

    [Fact]
    public void AssemblyMustBeTheOneTheProjectBuilds()
    {
        var e = LoadError(WriteProject("asm", Make(build: DotnetBuild), assemblyName: "Other"));
        Assert.Equal("build.dotnet.assembly", e.Field);
        Assert.Equal("'App' is not the assembly src/App.csproj builds: it builds 'Other' (its <AssemblyName>)", e.Problem);
    }

    [Fact]
    public void MissingAssemblyMustMatchTheProjectName()
    {
        var e = LoadError(WriteProject("noasm", Make(build: "{ \"dotnet\": { \"project\": \"src/App.csproj\" } }")));
        Assert.Equal("build.dotnet.assembly", e.Field);
        Assert.Contains("the runner then looks for 'noasm.dll', but src/App.csproj builds 'App' (the project file's name", e.Problem);
    }

    [Fact]
    public void AssemblyDefaultsToTheProjectFileName() =>
        Assert.Equal("App", Manifest.Load(WriteProject("byname", Make(build: DotnetBuild))).Build.Assembly);

    [Fact]
    public void MonoSourcesGlobMustMatchAFile()
    {
        var e = LoadError(Write("noglob", Make(build: "{ \"mono\": { \"sources\": [\"src/*.cs\", \"lib/*.cs\"] } }")));
        Assert.Equal("build.mono.sources[1]", e.Field);
        Assert.Equal("'lib/*.cs' matches no file in repros/noglob/", e.Problem);
    }

    private string WriteCmake(string id, string program)
    {
        var file = Write(id, Make(build: "{ \"cmake\": { \"dir\": \"cpp\" } }", subjects: "[\"linux\"]",
                                  caseExtra: $"\"program\": \"{program}\","));
        var cpp = Path.Combine(Path.GetDirectoryName(file)!, "cpp");
        Directory.CreateDirectory(cpp);
        File.WriteAllText(Path.Combine(cpp, "CMakeLists.txt"),
            "project(x)\nadd_executable(leak leak.cpp)\n# add_executable(commented c.cpp)\nadd_executable( leak_test t.cpp)\n");
        return file;
    }

    [Fact]
    public void CmakeDirMustHoldACMakeLists()
    {
        var e = LoadError(Write("nocmake", Make(build: "{ \"cmake\": { \"dir\": \"cpp\" } }", subjects: "[\"linux\"]",
                                                caseExtra: "\"program\": \"cmake:leak\",")));
        Assert.Equal("build.cmake.dir", e.Field);
        Assert.Equal("'cpp' holds no CMakeLists.txt in repros/nocmake/", e.Problem);
    }

    [Fact]
    public void CmakeTargetMustBeAnExecutableOfTheProject()
    {
        var e = LoadError(WriteCmake("notarget", "cmake:commented"));
        Assert.Equal("cases[0].program", e.Field);
        Assert.Equal("'commented' is not built by repros/notarget/cpp/CMakeLists.txt (add_executable targets: leak, leak_test)", e.Problem);
        Assert.Equal("leak_test", Manifest.Load(WriteCmake("target", "cmake:leak_test")).Cases[0].CmakeTarget);
    }

    private InputException ExpectedError(string id, string expected)
    {
        var file = Write(id, GoodManifest, expected);
        var path = ExpectedFile.PathFor(_root, id);
        var e = Assert.Throws<InputException>(() => ExpectedFile.Load(path, Manifest.Load(file)));
        Assert.Equal(path, e.File);
        return e;
    }

    [Theory]
    [InlineData("\"case\": \"main\", \"variant\": \"bug\", \"subject\": \"net8\"", "cells[2].subject",
                "'net8' is not a subject of case main (subjects: mono, net10)")]
    [InlineData("\"case\": \"other\", \"variant\": \"bug\", \"subject\": \"mono\"", "cells[2].case", "'other' is not a case of ID (cases: main)")]
    [InlineData("\"case\": \"main\", \"variant\": \"fix\", \"subject\": \"mono\"", "cells[2].variant", "'fix' is not a variant of ID (variants: bug)")]
    public void ExpectedEntryForACellThatDoesNotExistIsAnError(string cell, string field, string problem)
    {
        var e = ExpectedError("extra", GoodExpected("extra").Replace("] }", $", {{ {cell}, \"outcome\": \"clean\", \"reason\": \"r\" }} ] }}"));
        Assert.Equal(field, e.Field);
        Assert.Equal(problem.Replace("ID", "extra"), e.Problem);
    }

    [Fact]
    public void BrokenExpectedFileIsAttributedToItsRepro()
    {
        Write("good", GoodManifest);
        Write("x", GoodManifest, "{ \"repro\": \"x\", \"cells\": [");
        var catalog = Catalog.Load(_root);
        var error = Assert.Single(catalog.InputErrors);
        Assert.Equal("x", error.Repro);
        Assert.StartsWith("expected/x.json: field '(syntax)': not valid JSON at line 1", error.Message);
        Assert.Equal(["good"], catalog.Entries.Select(e => e.Manifest.Id));
    }

    [Fact]
    public void TheCorpusItselfValidates()
    {
        var root = AppContext.BaseDirectory;
        while (!Directory.Exists(Path.Combine(root, "repros"))) root = Path.GetDirectoryName(root)!;
        var catalog = Catalog.Load(root);
        Assert.Empty(catalog.Errors);
        Assert.NotEmpty(catalog.Entries);
    }
}
