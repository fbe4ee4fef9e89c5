using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

[CollectionDefinition(nameof(ConsoleCollection), DisableParallelization = true)]
public sealed class ConsoleCollection;

/// <summary>
/// `corpus` as a user calls it: wrong invocations and unusable subjects exit 2 with the reason, and the exit code
/// of a run follows the gate. Runs the real Main on a temp corpus whose cells are Windows-only (so `unsupported`
/// here without building anything). Console is redirected, so these tests run alone.
/// </summary>
[Collection(nameof(ConsoleCollection))]
public sealed class CommandLineTests : IDisposable
{
    private readonly TestCorpus _corpus = new();

    public void Dispose() => _corpus.Dispose();

    private (int Exit, string Out, string Err) Corpus(params string[] args) => _corpus.Main(args);

    private string Artifacts => Path.Combine(_corpus.Root, "artifacts");

    [Theory]
    [InlineData(new[] { "run", "--repro", "a", "--cas", "one" }, "corpus: unknown option '--cas' for run (did you mean --case?)")]
    [InlineData(new[] { "run", "--repro", "a", "--variants", "bug" }, "corpus: unknown option '--variants' for run (did you mean --variant?)")]
    [InlineData(new[] { "validate", "--repro", "a" }, "corpus: unknown option '--repro' for validate (options: --root)")]
    [InlineData(new[] { "run", "--repro", "--case", "one" }, "corpus: --repro needs a value")]
    [InlineData(new[] { "run", "--case" }, "corpus: --case needs a value")]
    [InlineData(new[] { "frobnicate" }, "corpus: unknown command 'frobnicate'")]
    [InlineData(new[] { "runn", "--repro", "a" }, "corpus: unknown command 'runn' (did you mean run?)")]
    [InlineData(new string[0], "corpus: no command given")]
    [InlineData(new[] { "run", "--cas", "x" }, "corpus: unknown option '--cas' for run (did you mean --case?)")]
    [InlineData(new[] { "run", "--repro", "a", "extra" }, "corpus: unexpected argument 'extra'")]
    [InlineData(new[] { "run", "--env", "--keep" }, "corpus: --env needs a value")]
    [InlineData(new[] { "bisect", "--subjects", "mono", "--subjects" }, "corpus: --subjects needs a value")]
    public void WrongInvocationsExit2WithTheReason(string[] args, string message)
    {
        _corpus.Write("a");
        var (exit, _, err) = Corpus(args);
        Assert.Equal(2, exit);
        Assert.Equal(message, err.Split('\n')[0]);
        Assert.False(Directory.Exists(Artifacts));
    }

    [Fact]
    public void WrongInvocationShowsTheHelpOfItsCommand()
    {
        var (exit, output, err) = Corpus("run", "--cas", "x");
        Assert.Equal(2, exit);
        Assert.Equal("", output);
        Assert.Matches(@"\S+ run \[options\]", err);   // corpus, or the test host here
        Assert.Contains("--case <ID[,ID]>", err);
    }

    /// <summary>`subjects --subject` resolves what it is given, as a cell would; an unusable one exits 2 with its reason.</summary>
    [Fact]
    public void SubjectsResolvesTheGivenOnesAndAnUnusableOneExits2()
    {
        var (exit, output, _) = Corpus("subjects", "--subject", "mono:/nonexistent/mono");
        Assert.Equal(2, exit);
        Assert.Contains("mono:/nonexistent/mono unavailable: /nonexistent/mono", output);
        var listed = Corpus("subjects");
        Assert.Equal(0, listed.Exit);
        Assert.Contains("roslyn:VERSION: any, provisioned when a cell first needs it (or by --subject roslyn:VERSION)", listed.Out);
    }

    [Fact]
    public void RunHelpListsEverySubjectKindsNamesAndPaths()
    {
        var (exit, output, err) = Corpus("run", "--help");
        Assert.Equal(0, exit);
        Assert.Equal("", err);
        Assert.Contains("--subject <S[,S]>", output);
        Assert.Contains("--env <NAME=VALUE>", output);
        Assert.Contains("wine:PATH", output);
        Assert.Contains("roslyn:PATH: PATH is a version, or Microsoft.CodeAnalysis.CSharp.dll or its folder", output);
        Assert.Contains("roslyn:VERSION", output);
        foreach (var kind in SubjectKinds.Default.All)
        {
            Assert.Contains(kind.Name, output);
            Assert.All(kind.BuiltInForms, name => Assert.Contains(name, output));
            Assert.All(kind.UserPrefixes, prefix => Assert.Contains($"{prefix}:PATH", output));
            if (kind.UserPrefixes.Count > 0) Assert.Contains(kind.UserPathMeaning, output);
        }
        Assert.Contains("130 / 143", output);
        Assert.False(Directory.Exists(Artifacts));
    }

    [Fact]
    public void HelpListsEveryCommand()
    {
        var (exit, output, _) = Corpus("--help");
        Assert.Equal(0, exit);
        foreach (var command in new[] { "run", "list", "validate", "subjects", "clean", "bisect", "matrix", "winsmoke", "selftest" })
            Assert.Matches($"(?m)^  {command} ", output);
        Assert.DoesNotContain("selftest-child", output);
    }

    [Theory]
    [InlineData("run")]
    [InlineData("list")]
    [InlineData("validate")]
    [InlineData("subjects")]
    [InlineData("clean")]
    [InlineData("bisect")]
    [InlineData("matrix")]
    [InlineData("winsmoke")]
    [InlineData("selftest")]
    public void EveryCommandHasHelp(string command)
    {
        var (exit, output, _) = Corpus(command, "-h");
        Assert.Equal(0, exit);
        Assert.Matches($@"\S+ {command} \[options\]", output);
        Assert.Equal(command is "list" or "run" or "bisect" or "matrix" or "subjects", output.Contains("Subjects ("));
    }

    /// <summary>The [suggest] directive that dotnet-suggest calls for shell completion.</summary>
    [Theory]
    [InlineData("run --subject w", "windows\nwine\nwine-net10\nwine-net8\nwine-win10\nwine:\n")]
    [InlineData("run --repro a --ca", "--case\n")]
    [InlineData("va", "validate\n")]
    public async Task SuggestDirectiveCompletes(string line, string completions)
    {
        var (oldOut, o) = (Console.Out, new StringWriter());
        Console.SetOut(o);
        try { Assert.Equal(0, await Program.Main([$"[suggest:{line.Length}]", line])); }
        finally { Console.SetOut(oldOut); }
        Assert.Equal(completions, o.ToString().Replace("\r\n", "\n"));
    }

    [Fact]
    public void ListsSplitAndRepeatAndAnEmptyValueIsNotGiven()
    {
        var a = Args.Parse(["run", "--repro", "a,b", "--repro=c", "--subject", "", "--case=", "--runs", "3", "--runs", "5", "--keep",
                            "--env", "A=1,2", "--env", "", "--env=B=x=y"]);
        Assert.Equal(["a", "b", "c"], a.List("repro"));
        Assert.Empty(a.List("subject"));
        Assert.Null(a.Get("case"));
        Assert.Equal("5", a.Get("runs"));
        Assert.True(a.Has("keep"));
        Assert.False(a.Has("json"));
        Assert.Equal(new Dictionary<string, string> { ["A"] = "1,2", ["B"] = "x=y" }, a.Env());
    }

    [Fact]
    public void EmptySubjectFromMakeRunsTheDefaults()
    {
        _corpus.Write("a");
        var (exit, output, _) = Corpus("run", "--repro", "a", "--subject", "", "--variant=");
        Assert.Equal(0, exit);
        Assert.Contains("gate: 8 passed, 0 failed", output);
    }

    [Fact]
    public void OptionsMayComeBeforeTheCommand()
    {
        var a = Args.Parse(["--repro", "a", "--keep", "run", "--case", "one"]);
        Assert.Equal(Verb.Run, a.Command);
        Assert.Equal(["a"], a.List("repro"));
        Assert.True(a.Has("keep"));
        Assert.Equal(["one"], a.List("case"));
    }

    [Fact]
    public void OptionsTakeTheEqualsForm()
    {
        _corpus.Write("a");
        var (exit, _, err) = Corpus("run", "--repro=a", "--case=one", "--variant=bug", "--keep");
        Assert.Equal(0, exit);
        Assert.Contains("cell 2/2", err);
    }

    [Theory]
    [InlineData("mono:/nonexistent/bin/mono", "corpus: mono:/nonexistent/bin/mono: no such file")]
    [InlineData("mono:{root}/notes.txt", "corpus: mono:{root}/notes.txt: not executable")]
    [InlineData("mono:", "corpus: mono:: no path after 'mono:' (give mono:PATH)")]
    [InlineData("coreclr:/tmp", "corpus: coreclr:/tmp: /tmp is not a dotnet root")]
    public void UnusableUserSubjectIsAnInputError(string subject, string message)
    {
        _corpus.Write("a");
        File.WriteAllText(Path.Combine(_corpus.Root, "notes.txt"), "not a runtime\n");
        (subject, message) = (subject.Replace("{root}", _corpus.Root), message.Replace("{root}", _corpus.Root));
        var (exit, _, err) = Corpus("run", "--repro", "a", "--subject", subject);
        Assert.Equal(2, exit);
        Assert.StartsWith(message, err);
        Assert.DoesNotContain("usage:", err);
        Assert.False(Directory.Exists(Artifacts));   // nothing ran
    }

    [Fact]
    public void SelectionThatMatchesNothingSaysWhich()
    {
        _corpus.Write("a");
        var (exit, _, err) = Corpus("run", "--repro", "a", "--case", "win33");
        Assert.Equal(2, exit);
        Assert.Equal("corpus: no case 'win33' in a (cases: one, big)", err.Trim());
    }

    [Fact]
    public void EveryCellAsExpectedExits0()
    {
        _corpus.Write("a");
        var (exit, output, _) = Corpus("run", "--repro", "a");
        Assert.Equal(0, exit);
        Assert.Contains("gate: 8 passed, 0 failed", output);
    }

    [Fact]
    public void UserSubjectCellThatIsNeitherReproducedNorCleanExits1()
    {
        _corpus.Write("a");
        var mono = SubjectKinds.Default.Resolve("mono", _corpus.Root);
        Assert.Null(mono.Unavailable);   // mono is part of these machines (ci/setup.sh)
        var (exit, output, _) = Corpus("run", "--repro", "a", "--case", "one", "--subject", $"mono:{mono.Path}");
        Assert.Equal(1, exit);
        Assert.Contains("2 with no expectation ended neither reproduced nor clean", output);
        Assert.Contains("gate: 0 passed, 2 failed", output);
    }

    [Fact]
    public void OneUnusableSubjectAmongSeveralIsAnInputErrorAndTheOthersRun()
    {
        _corpus.Write("a");
        var mono = SubjectKinds.Default.Resolve("mono", _corpus.Root);
        Assert.Null(mono.Unavailable);
        var (exit, output, _) = Corpus("run", "--repro", "a", "--case", "one", "--subject", $"mono:/nonexistent/bin/mono,mono:{mono.Path}");
        Assert.Equal(2, exit);
        Assert.Contains("INPUT ERROR --subject mono:/nonexistent/bin/mono: no such file", output);
        Assert.Contains($"mono:{mono.Path}", output);          // its cells ran
        Assert.Contains("1 input errors", output);
    }

    [Fact]
    public void ASingleRuntimeVersionTheFeedsLackIsAnInputErrorListingTheirs()
    {
        _corpus.Write("a");
        // The feeds' listing as cached; the harness asks the feeds again for a version outside it and keeps this offline.
        var listing = NuGetListing.CacheFile(_corpus.Root, CoreClrKind.RuntimePack);
        Directory.CreateDirectory(Path.GetDirectoryName(listing)!);
        File.WriteAllText(listing, """["8.0.0","9.0.23"]""");
        var (exit, output, err) = Corpus("run", "--repro", "a", "--case", "one", "--subject", "net:9.9.9");
        Assert.Equal(2, exit);
        Assert.Contains("9.9.9 is not on this machine's NuGet feeds", output + err);
        Assert.Matches(@"they have .*8\.0\.0, .*9\.0\.23", output + err);
        Assert.DoesNotContain("unsupported", output);   // no row of cells that could not have run
    }

    [Fact]
    public void BrokenReproIsSkippedAndTheOthersRun()
    {
        _corpus.Write("x", expected: "{ \"repro\": \"x\", \"cells\": [");
        _corpus.Write("y");
        var (exit, output, err) = Corpus("run", "--repro", "x,y", "--case", "one");
        Assert.Equal(2, exit);
        Assert.DoesNotContain("no repro", err);
        Assert.Contains("INPUT ERROR expected/x.json: field '(syntax)': not valid JSON at line 1", output);
        Assert.Contains("gate: 4 passed, 0 failed, 1 input errors", output);
        Assert.Contains("y:one", output);
    }

    [Fact]
    public void UnknownSubjectInAManifestSkipsThatReproOnly()
    {
        _corpus.Write("x", TestCorpus.WindowsOnly.Replace("\"mono\", \"net10\"", "\"mono\", \"net9\""));
        _corpus.Write("y");
        var (exit, output, err) = Corpus("run", "--case", "one");
        Assert.Equal(2, exit);
        Assert.DoesNotContain("usage:", err);
        Assert.Contains("INPUT ERROR repros/x/repro.json: field 'subjects[1]': 'net9' is not a built-in subject", output);
        Assert.Contains("gate: 4 passed, 0 failed, 1 input errors", output);
    }

    [Fact]
    public void ValidateNamesTheFileAndFieldAndExits2()
    {
        _corpus.Write("x", TestCorpus.WindowsOnly.Replace("\"one\", \"args\": [\"{variant}\"], \"signature\": { \"process\": { \"exit\": \"zero\" }",
                                                          "\"one\", \"args\": [\"{variant}\"], \"signature\": { \"process\": { \"exit\": \"zero\", \"output\": [\"(x\"] }"));
        _corpus.Write("y");
        var (exit, output, err) = Corpus("validate");
        Assert.Equal(2, exit);
        Assert.Contains("ok  y: 2 cases, 8 expected cells", output);
        Assert.StartsWith("ERROR repros/x/repro.json: field 'cases[0].signature.process.output[0]': '(x' is not a valid regular expression", err);
    }
}

public sealed class RunExitTests
{
    private static CellResult Cell(Outcome outcome, Outcome? expected)
    {
        var key = new CellKey("r", "c", "bug", "mono");
        var e = expected is { } x ? new Expectation(key, x, "because", null) : null;
        var cell = new CellResult { Key = key, Rerun = "", Outcome = outcome, Expected = e };
        (cell.Gate, cell.GateMessage) = CellResult.Compare(outcome, e);
        return cell;
    }

    [Theory]
    [InlineData(Outcome.Reproduced, Outcome.Reproduced, 0)]
    [InlineData(Outcome.Unsupported, Outcome.Unsupported, 0)]
    [InlineData(Outcome.Reproduced, Outcome.Clean, 1)]
    [InlineData(Outcome.Clean, Outcome.Reproduced, 1)]
    [InlineData(Outcome.Error, Outcome.Clean, 1)]
    [InlineData(Outcome.Reproduced, null, 0)]
    [InlineData(Outcome.Clean, null, 0)]
    [InlineData(Outcome.Error, null, 1)]
    [InlineData(Outcome.WrongFailure, null, 1)]
    [InlineData(Outcome.Unsupported, null, 1)]
    public void OneCell(Outcome outcome, Outcome? expected, int code) =>
        Assert.Equal(code, RunExit.Code([Cell(outcome, expected)], inputErrors: 0));

    [Fact]
    public void InputErrorsWinOverEverything() =>
        Assert.Equal(2, RunExit.Code([Cell(Outcome.Clean, Outcome.Reproduced), Cell(Outcome.Clean, null)], inputErrors: 1));

    [Fact]
    public void OneBadCellAmongGoodOnesFails() =>
        Assert.Equal(1, RunExit.Code([Cell(Outcome.Clean, null), Cell(Outcome.Reproduced, Outcome.Reproduced), Cell(Outcome.Error, null)], 0));
}
