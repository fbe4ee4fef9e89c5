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

    [Fact]
    public async Task ARunThatNeverReachedTheProgramIsAnErrorNamingTheStage()
    {
        var dir = Path.Combine(_root, "repros", "launch");
        Directory.CreateDirectory(Path.Combine(dir, "cpp"));
        File.WriteAllText(Path.Combine(dir, "cpp", "CMakeLists.txt"), """
            cmake_minimum_required(VERSION 3.16)
            project(launch LANGUAGES CXX)
            add_executable(launch launch.cpp)
            """);
        // What a launcher prints when it gives up before the program: its stage, and an exit code of its own.
        File.WriteAllText(Path.Combine(dir, "cpp", "launch.cpp"), """
            #include <cstdio>
            int main() { std::fputs("CORPUS-LAUNCH-FAILED planted: the program was never started\n", stderr); return 97; }
            """);
        File.WriteAllText(Path.Combine(dir, "repro.json"), """
            { "id": "launch", "title": "t", "category": "crash", "references": ["r"], "languages": ["cpp"],
              "subjects": ["linux"], "variants": ["bug"], "build": { "cmake": { "dir": "cpp" } },
              "budget": { "timeoutSec": 20, "memoryMB": 256 },
              "cases": [ { "id": "main", "program": "cmake:launch", "args": ["{variant}"], "signature": { "process": { "exit": "nonzero", "output": ["boom"] } } } ] }
            """);
        var m = Manifest.Load(Path.Combine(dir, "repro.json"));
        var runner = new CellRunner(new RunOptions(_root, Path.Combine(_root, "artifacts", "run"), Keep: true, _ => { }),
                                    new Builder(_root, ToolRunner.Instance), ToolRunner.Instance);
        var cell = await runner.RunAsync(m, m.Cases[0], "bug", SubjectKinds.Default.Resolve("linux", _root), null);
        Assert.Equal(Outcome.Error, cell.Outcome);
        Assert.Equal("the run never reached the program: planted: the program was never started (run: exit 97)", cell.Detail);
    }
}
