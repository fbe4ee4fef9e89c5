using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>Every name on the command line must match something, and the error says which one did not.</summary>
public sealed class SelectionTests : IDisposable
{
    private readonly TestCorpus _corpus = new();

    public void Dispose() => _corpus.Dispose();

    private Plan Select(string repros = "", string cases = "", string variants = "", string subjects = "", string exclude = "")
    {
        static IReadOnlyList<string> L(string s) => s.Split(',', StringSplitOptions.RemoveEmptyEntries);
        return Selection.Build(Catalog.Load(_corpus.Root), new Filter(L(repros), L(cases), L(variants), L(subjects), L(exclude)),
                               spec => SubjectKinds.Default.Resolve(spec, _corpus.Root), SubjectKinds.Default);
    }

    private string SelectError(string repros = "", string cases = "", string variants = "", string exclude = "") =>
        Assert.Throws<InputException>(() => Select(repros, cases, variants, exclude: exclude)).Message;

    [Fact]
    public void AllCellsOfTheDefaultSubjects()
    {
        _corpus.Write("a");
        var plan = Select();
        Assert.Equal(8, plan.Cells.Count);
        Assert.All(plan.Cells, c => Assert.Equal(Outcome.Unsupported, c.Expected!.Outcome));
    }

    [Fact]
    public void UnknownCaseNamesTheReproAndItsCases()
    {
        _corpus.Write("a");
        Assert.Equal("no case 'win33' in a (cases: one, big)", SelectError("a", cases: "one,win33"));
    }

    [Fact]
    public void UnknownVariantNamesTheReproAndItsVariants()
    {
        _corpus.Write("a");
        Assert.Equal("no variant 'bgu' in a (variants: bug, fix)", SelectError("a", variants: "bgu"));
    }

    [Fact]
    public void UnknownReproListsTheRepros()
    {
        _corpus.Write("a");
        _corpus.Write("b");
        Assert.Equal("no repro 'c' (repros: a, b)", SelectError("a,c"));
    }

    [Fact]
    public void ANamedReproThatGivesNoCellIsNamed()
    {
        _corpus.Write("a");
        _corpus.Write("b", TestCorpus.WindowsOnly.Replace("\"one\"", "\"two\""), TestCorpus.AllUnsupported("b").Replace("\"one\"", "\"two\""));
        Assert.Equal("no case 'one' in b (cases: two, big)", SelectError("a,b", cases: "one"));
        Assert.Equal(4, Select(cases: "one").Cells.Count);   // without --repro, a case of any repro will do
    }

    [Fact]
    public void CasesExcludedByTagAreNamed()
    {
        _corpus.Write("a");
        Assert.Equal("every selected case of a (big) has a tag excluded by --exclude-tag slow", SelectError("a", cases: "big", exclude: "slow"));
        Assert.Equal("--exclude-tag: no case has the tag 'slw' (tags: slow)", SelectError("a", exclude: "slw"));
        Assert.Equal(4, Select(exclude: "slow").Cells.Count);
    }

    private const string NativeCase = """{ "id": "cpp", "program": "cmake:leak", "subjects": ["linux"], "args": ["{variant}"], "signature": { "process": { "exit": "zero" } } },""";

    private void WriteMixed(string id)
    {
        _corpus.Write(id, TestCorpus.WindowsOnly.Replace("\"mono\": { \"sources\": [\"src/*.cs\"] }",
                                                         "\"mono\": { \"sources\": [\"src/*.cs\"] }, \"cmake\": { \"dir\": \"cpp\" }")
                                                .Replace("\"cases\": [", "\"cases\": [" + NativeCase),
                      TestCorpus.AllUnsupported(id).Replace("] }", """, { "case": "cpp", "variant": "bug", "subject": "linux", "outcome": "unsupported", "reason": "r" }, { "case": "cpp", "variant": "fix", "subject": "linux", "outcome": "unsupported", "reason": "r" } ] }"""));
        Directory.CreateDirectory(Path.Combine(_corpus.Root, "repros", id, "cpp"));
        File.WriteAllText(Path.Combine(_corpus.Root, "repros", id, "cpp", "CMakeLists.txt"), "add_executable(leak leak.cpp)\n");
    }

    [Fact]
    public void GivenSubjectRunsOnlyTheCasesOfItsKind()
    {
        WriteMixed("m");
        Assert.Equal(["one", "big"], Select("m", subjects: "net10").Cells.Select(c => c.Case.Id).Distinct());
        Assert.Equal(["cpp"], Select("m", subjects: "linux").Cells.Select(c => c.Case.Id).Distinct());
        Assert.Equal(10, Select("m").Cells.Count);
        Assert.Equal("--subject: net10 can run none of the selected cases (m:cpp): a native program (cmake:TARGET) runs on linux, windows, "
                     + "linux-asan, linux-tsan, wine, wine-win10, not on net10, which runs the .NET/Mono program (main)",
                     Assert.Throws<InputException>(() => Select("m", cases: "cpp", subjects: "net10")).Message);
        Assert.Equal("--subject: linux can run none of the selected cases (m:one): the .NET/Mono program (main) runs on mono, net10, "
                     + "net8, net:VERSION, wine-net10, wine-net8, wine-net:VERSION, not on linux, which runs a native program (cmake:TARGET)",
                     Assert.Throws<InputException>(() => Select("m", cases: "one", subjects: "linux,mono")).Message);
    }

    [Fact]
    public void SubjectGivenTwiceIsAnError()
    {
        _corpus.Write("a");
        Assert.Equal("--subject: 'mono' is given twice, which would run every cell twice",
                     Assert.Throws<InputException>(() => Select("a", subjects: "mono,net10,mono")).Message);
    }

    [Fact]
    public void BrokenReproIsReportedAndTheOthersStillRun()
    {
        _corpus.Write("x", expected: "{ \"repro\": \"x\", \"cells\": [");
        _corpus.Write("y");
        var plan = Select("x,y");
        Assert.All(plan.Cells, c => Assert.Equal("y", c.Entry.Manifest.Id));
        Assert.Equal(8, plan.Cells.Count);
        Assert.StartsWith("expected/x.json: field '(syntax)'", Assert.Single(plan.Errors));
        Assert.Equal(0, plan.OtherErrors);
    }

    [Fact]
    public void ErrorsOfReprosNotSelectedAreOnlyCounted()
    {
        _corpus.Write("x", TestCorpus.WindowsOnly.Replace("\"mono\", \"net10\"", "\"mono\", \"net9\""));
        _corpus.Write("y");
        var plan = Select("y");
        Assert.Empty(plan.Errors);
        Assert.Equal(1, plan.OtherErrors);
        Assert.Equal("repros/x/repro.json: field 'subjects[1]': 'net9' is not a built-in subject",
                     Assert.Single(Select().Errors).Split(" (")[0]);
    }
}
