using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>linux-asan and linux-tsan: resolved, built into their own flavor with -fsanitize, launched with options
/// that abort at the first report; and for real, through the runner, on small programs with a known bug.</summary>
public sealed class SanitizerKindTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-sanitizer-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Fact]
    public void TheRegistryKnowsBothSubjects()
    {
        Assert.Contains("linux-asan", SubjectKinds.Default.BuiltIns);
        Assert.Contains("linux-tsan", SubjectKinds.Default.BuiltIns);
        Assert.IsType<SanitizerKind>(SubjectKinds.Default.Resolve("linux-tsan", _root).Kind);
    }

    [Fact]
    public void AMissingRuntimeMakesTheSubjectUnavailableWithTheReason()
    {
        var s = new SanitizerKind([Path.Combine(_root, "no-gcc")]).Resolve("linux-asan", null, _root);
        Assert.Contains("libasan.so is not installed", s.Unavailable);
    }

    [Fact]
    public void ItBuildsItsOwnFlavorAndTheCaseOptionsWinOverItsDefaults()
    {
        var dir = Path.Combine(_root, "lib");
        Directory.CreateDirectory(dir);
        File.WriteAllText(Path.Combine(dir, "libtsan.so"), "");
        var kind = new SanitizerKind([dir]);
        var s = kind.Resolve("linux-tsan", null, _root);
        Assert.Null(s.Unavailable);
        var cs = new CaseSpec("main", "", [], [], Manifest.DefaultBudget, Signature.Of("process", ProcessPattern.DefaultClean),
                              new Dictionary<string, string>(), ["linux-tsan"], ["linux"], "cmake:prog");
        var recipe = Assert.IsType<CmakeBuild>(kind.Recipe(s, null!, cs));
        Assert.Equal("cmake-thread", recipe.Flavor);
        var launch = kind.Launch(s, "/p", ["a"], new LaunchOptions(new Dictionary<string, string> { ["TSAN_OPTIONS"] = "halt_on_error=0" }, false));
        Assert.Equal("/p", launch.File);
        Assert.StartsWith("abort_on_error=1:", launch.Env["TSAN_OPTIONS"]);
        Assert.EndsWith(":halt_on_error=0", launch.Env["TSAN_OPTIONS"]);
    }

    private Manifest WriteRepro(string source, string output)
    {
        var dir = Path.Combine(_root, "repros", "san");
        Directory.CreateDirectory(Path.Combine(dir, "cpp"));
        File.WriteAllText(Path.Combine(dir, "cpp", "CMakeLists.txt"), """
            cmake_minimum_required(VERSION 3.16)
            project(san LANGUAGES CXX)
            find_package(Threads REQUIRED)
            add_executable(san san.cpp)
            target_link_libraries(san PRIVATE Threads::Threads)
            """);
        File.WriteAllText(Path.Combine(dir, "cpp", "san.cpp"), source);
        File.WriteAllText(Path.Combine(dir, "repro.json"), $$"""
            { "id": "san", "title": "t", "category": "crash", "references": ["r"], "languages": ["cpp"],
              "subjects": ["linux-asan"], "variants": ["bug", "fix"], "build": { "cmake": { "dir": "cpp" } },
              "budget": { "timeoutSec": 60, "memoryMB": 1024 },
              "cases": [ { "id": "main", "program": "cmake:san", "args": ["{variant}"],
                           "signature": { "process": { "exit": "SIGABRT", "output": ["{{output}}"] } } } ] }
            """);
        return Manifest.Load(Path.Combine(dir, "repro.json"));
    }

    private CellRunner Runner() =>
        new(new RunOptions(_root, Path.Combine(_root, "artifacts", "run"), Keep: true, _ => { }),
            new Builder(_root, ToolRunner.Instance), ToolRunner.Instance);

    [Fact]
    public async Task AsanCatchesAUseAfterFreeThatThePlainBuildSurvives()
    {
        var m = WriteRepro("""
            #include <cstdio>
            #include <cstring>
            int main(int argc, char** argv) {
                int* p = new int[4]();
                int* volatile seen = p;  // opaque to the optimizer, which would fold the read and drop the pair
                if (std::strcmp(argv[1], "bug") == 0) delete[] p;
                int x = seen[1];
                std::printf("%d\nREPRO-DONE\n", x);
                return 0;
            }
            """, "AddressSanitizer: heap-use-after-free");
        var bug = await Runner().RunAsync(m, m.Cases[0], "bug", SubjectKinds.Default.Resolve("linux-asan", _root), null);
        Assert.True(bug.Outcome == Outcome.Reproduced, bug.Detail);
        Assert.Contains("-fsanitize=address", bug.Runtime);
        Assert.True(Directory.Exists(Path.Combine(_root, "build", "san", "cmake-address")));
        // The same program, uninstrumented: the freed int is still readable, so it exits normally.
        var plain = await Runner().RunAsync(m, m.Cases[0], "bug", SubjectKinds.Default.Resolve("linux", _root), null);
        Assert.Equal(Outcome.Clean, plain.Outcome);
    }

    [Fact]
    public async Task TsanNamesADataRace()
    {
        var m = WriteRepro("""
            #include <cstdio>
            #include <cstring>
            #include <thread>
            long counter;
            int main(int argc, char** argv) {
                bool bug = std::strcmp(argv[1], "bug") == 0;
                auto work = [bug] { for (int i = 0; i < 1000; i++) bug ? (void)counter++ : (void)__atomic_add_fetch(&counter, 1, __ATOMIC_SEQ_CST); };
                std::thread a(work), b(work);
                a.join();
                b.join();
                std::printf("REPRO-DONE\n");
                return 0;
            }
            """, "ThreadSanitizer: data race");
        var tsan = SubjectKinds.Default.Resolve("linux-tsan", _root);
        var bug = await Runner().RunAsync(m, m.Cases[0], "bug", tsan, null);
        Assert.True(bug.Outcome == Outcome.Reproduced, bug.Detail);
        var fix = await Runner().RunAsync(m, m.Cases[0], "fix", tsan, null);
        Assert.True(fix.Outcome == Outcome.Clean, fix.Detail);
    }
}
