using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// A run whose launcher says it never reached the program ("CORPUS-LAUNCH-FAILED stage: why" on stderr, as
/// harness/wine/run.sh says it when the cell's wineserver is missing) is an error naming the stage, never a verdict:
/// not the wrong-failure its exit code would otherwise be judged.
/// </summary>
public sealed class LaunchFailedTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-launch-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Theory]
    [InlineData("CORPUS-LAUNCH-FAILED wine: no wineserver socket at /x/socket\n", "wine: no wineserver socket at /x/socket")]
    [InlineData("some output\nCORPUS-LAUNCH-FAILED stage: why\nmore", "stage: why")]
    [InlineData("the program quoted CORPUS-LAUNCH-FAILED wine: x\n", null)]
    [InlineData("", null)]
    public void OnlyALineThatStartsWithTheMarkerSaysIt(string stderr, string? said) =>
        Assert.Equal(said, LaunchFailedException.Said(stderr));

    /// <summary>A native repro whose program is <paramref name="source"/>; its case names <paramref name="caseExtra"/>.</summary>
    private Manifest Repro(string source, string caseExtra = "")
    {
        var dir = Path.Combine(_root, "repros", "launch");
        Directory.CreateDirectory(Path.Combine(dir, "cpp"));
        File.WriteAllText(Path.Combine(dir, "cpp", "CMakeLists.txt"), """
            cmake_minimum_required(VERSION 3.16)
            project(launch LANGUAGES CXX)
            add_executable(launch launch.cpp)
            """);
        File.WriteAllText(Path.Combine(dir, "cpp", "launch.cpp"), source);
        File.WriteAllText(Path.Combine(dir, "repro.json"), $$"""
            { "id": "launch", "title": "t", "category": "crash", "references": ["r"], "languages": ["cpp"],
              "subjects": ["linux"], "variants": ["bug"], "build": { "cmake": { "dir": "cpp" } },
              "budget": { "timeoutSec": 20, "memoryMB": 256 },
              "cases": [ { "id": "main", "program": "cmake:launch", "args": ["{variant}"], {{caseExtra}}
                           "signature": { "process": { "exit": "nonzero", "output": ["boom"] } } } ] }
            """);
        return Manifest.Load(Path.Combine(dir, "repro.json"));
    }

    private async Task<CellResult> Run(Manifest m) =>
        await new CellRunner(new RunOptions(_root, Path.Combine(_root, "artifacts", "run"), Keep: true, _ => { }),
                             new Builder(_root, ToolRunner.Instance), ToolRunner.Instance)
            .RunAsync(m, m.Cases[0], "bug", SubjectKinds.Default.Resolve("linux", _root), null);

    /// <summary>
    /// A launcher that gives up silently before the program (Wine's client when its server fails: exit 1, no word):
    /// without the case's start line the run never reached the program. It is started again, the failed attempts kept
    /// and recorded, and the verdict rests on the run that did.
    /// </summary>
    [Fact]
    public async Task ARunWithoutTheStartLineIsStartedAgainAndRecorded()
    {
        // Exits 1 silently the first two times (a count in its working folder), then runs.
        var m = Repro("""
            #include <cstdio>
            int main() {
              int n = 0; FILE* f = std::fopen("tries", "r"); if (f) { std::fscanf(f, "%d", &n); std::fclose(f); }
              f = std::fopen("tries", "w"); std::fprintf(f, "%d", n + 1); std::fclose(f);
              if (n < 2) return 1;
              std::puts("REPRO-STARTED launch"); std::puts("boom"); return 3;
            }
            """, "\"startMarker\": \"REPRO-STARTED\",");
        var cell = await Run(m);
        Assert.True(cell.Outcome == Outcome.Reproduced, cell.Detail);
        Assert.Equal(2, cell.LaunchRetries.Count);
        Assert.StartsWith("run: attempt 1 of 3 never reached the program: it ended without the program's start line 'REPRO-STARTED' (exit 1 in ",
                          cell.LaunchRetries[0]);
        Assert.Contains("nothing on stderr; kept as run.attempt1.stdout/.stderr)", cell.LaunchRetries[0]);
        Assert.True(File.Exists(Path.Combine(cell.ArtifactDir!, "run.attempt2.stdout")));
        Assert.Single(cell.Runs);
        Assert.Contains("2 run(s) never reached the program, started again", cell.KeyFigures);
    }

    [Fact]
    public async Task ARunThatNeverPrintsTheStartLineIsAnErrorNotAVerdict()
    {
        var cell = await Run(Repro("int main() { return 1; }\n", "\"startMarker\": \"REPRO-STARTED\","));
        Assert.Equal(Outcome.Error, cell.Outcome);
        Assert.Equal("the run never reached the program: it ended without the program's start line 'REPRO-STARTED', 3 times (run: exit 1)", cell.Detail);
        Assert.Equal(3, cell.LaunchRetries.Count);
    }

    [Fact]
    public async Task ARunThatNeverReachedTheProgramIsAnErrorNamingTheStage()
    {
        // What a launcher prints when it gives up before the program: its stage, and an exit code of its own.
        var cell = await Run(Repro("""
            #include <cstdio>
            int main() { std::fputs("CORPUS-LAUNCH-FAILED planted: the program was never started\n", stderr); return 97; }
            """));
        Assert.Equal(Outcome.Error, cell.Outcome);
        Assert.Equal("the run never reached the program: planted: the program was never started, 3 times (run: exit 97)", cell.Detail);
    }
}
