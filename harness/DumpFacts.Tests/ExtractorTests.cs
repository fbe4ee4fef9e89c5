using Xunit.Abstractions;

namespace Corpus.DumpFacts.Tests;

public sealed class ExtractorTests(DebuggeeDump dump, ITestOutputHelper output) : IClassFixture<DebuggeeDump>
{
    private const string SpinForever = "Corpus.Debuggee.Spinner.SpinForever";

    [Fact]
    public void Spinner_thread_is_found_by_name_and_spins_in_SpinForever()
    {
        Facts facts = Extractor.Extract(dump.Path, new Options());
        output.WriteLine($"createdump took {dump.CreatedumpTime.TotalSeconds:F2}s, {new FileInfo(dump.Path).Length} bytes");

        ThreadFacts spinner = Assert.Single(facts.Threads, t => t.Name == "corpus-spinner");
        Assert.True(spinner.IsAlive);
        Assert.False(spinner.IsFinalizer);
        Assert.Contains(spinner.Frames, f => f.StartsWith(SpinForever + "("));
        Assert.Equal(SpinForever, spinner.TopFrames[0]);
        Assert.Single(facts.Threads, t => t.IsFinalizer);
        Assert.Equal(Environment.Version.ToString(3), facts.Runtime);
    }

    [Fact]
    public async Task Reading_a_dump_leaves_nothing_in_the_readers_temp_folder()
    {
        // The tool as a person runs it, with a temp folder of its own: ClrMD's symbol cache must not stay there.
        DirectoryInfo temp = Directory.CreateTempSubdirectory("dumpfacts-tmp-");
        try
        {
            var start = new System.Diagnostics.ProcessStartInfo("dotnet")
            {
                ArgumentList = { "exec", Path.Combine(AppContext.BaseDirectory, "DumpFacts.dll"), dump.Path, "--top", "1" },
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            start.Environment["TMPDIR"] = temp.FullName;
            using var tool = System.Diagnostics.Process.Start(start)!;
            Task<string> stdout = tool.StandardOutput.ReadToEndAsync(), stderr = tool.StandardError.ReadToEndAsync();
            using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            await tool.WaitForExitAsync(limit.Token);
            Assert.True(tool.ExitCode == 0, $"DumpFacts exited {tool.ExitCode}: {await stderr}");
            Assert.Contains("\"threads\"", await stdout);
            Assert.Empty(temp.EnumerateFileSystemInfos().Select(e => e.Name));
        }
        finally
        {
            temp.Delete(recursive: true);
        }
    }

    [Fact]
    public void Heap_holds_exactly_the_debuggee_markers()
    {
        Facts facts = Extractor.Extract(dump.Path, new Options { Top = 1000 });

        HeapFacts heap = Assert.IsType<HeapFacts>(facts.Heap);
        TypeCount markers = Assert.Single(heap.Types, t => t.Type == "Corpus.Debuggee.Marker");
        Assert.Equal(1000, markers.Count);
        Assert.Equal(heap.TotalObjects, heap.Types.Sum(t => t.Count));
        Assert.Equal(heap.Types.OrderByDescending(t => t.Bytes).Select(t => t.Bytes), heap.Types.Select(t => t.Bytes));
    }

    [Fact]
    public void No_heap_skips_heap_but_keeps_frames()
    {
        Facts facts = Extractor.Extract(dump.Path, new Options { Heap = false, Top = 3 });

        Assert.Null(facts.Heap);
        Assert.Contains(facts.Threads, t => t.Frames.Any(f => f.StartsWith(SpinForever + "(")));
    }

    [Fact]
    public void Missing_dump_is_reported_with_its_path()
    {
        var e = Assert.Throws<DumpOpenException>(() => Extractor.Extract("/nonexistent/x.core", new Options()));
        Assert.Contains("/nonexistent/x.core", e.Message);
    }
}
