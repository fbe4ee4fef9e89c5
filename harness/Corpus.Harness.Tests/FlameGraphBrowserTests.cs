using System.Diagnostics;
using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using SkiaSharp;

namespace Corpus.Harness.Tests;

/// <summary>
/// The flame graph opens and draws in a real browser: Debian's Chromium, headless, on the page drawn from a real Mono
/// trace (Fixtures/traces). Its screenshot stays as the test's artifact in build/tests/ (the user's artifacts/ holds only their runs). Setup installs Chromium
/// (ci/debian-packages.txt), so a missing one fails here.
/// </summary>
public sealed class FlameGraphBrowserTests
{
    private static string Chromium() =>
        new[] { "chromium", "chromium-browser" }.Select(n => (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':')
            .Select(d => Path.Combine(d, n)).FirstOrDefault(File.Exists)).FirstOrDefault(p => p is not null)
        ?? throw new InvalidOperationException("chromium is not installed (make setup installs it: ci/debian-packages.txt)");

    [Fact]
    public void TheFlameGraphDrawsInHeadlessChromium()
    {
        var root = RoslynTriggerTests.Root;
        var model = MonoLogProfilerBackend.Read(File.ReadLines(Path.Combine(root, "harness", "Corpus.Harness.Tests", "Fixtures", "traces",
                                                                            "mono-deserialize-20000.mprof-debug.txt")), "cpu");
        var outDir = Path.Combine(root, "build", "tests");
        Directory.CreateDirectory(outDir);
        var work = Directory.CreateTempSubdirectory("corpus-chromium-").FullName;
        try
        {
            var (_, html) = TracePictures.Write(model, work, "trace", "binaryformatter-quadratic deserialize on mono (20K books)");
            var shot = Path.Combine(outDir, "trace-flamegraph.png");
            File.Delete(shot);
            string[] common = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", $"--user-data-dir={Path.Combine(work, "profile")}",
                               "--window-size=1280,900"];
            var chromium = Chromium();
            var dom = ToolRunner.Instance.Run(chromium, [.. common, "--dump-dom", new Uri(html).AbsoluteUri], TimeSpan.FromSeconds(90));
            Assert.True(dom.ExitCode == 0, dom.Describe("chromium --dump-dom"));
            // The browser parsed the page: the SVG and the frames' names are in its DOM.
            Assert.Contains("id=\"flamegraph\"", dom.Stdout);
            Assert.Contains("ObjectManager", dom.Stdout);
            Assert.Contains("BinaryFormatter.Deserialize", dom.Stdout);
            var taken = ToolRunner.Instance.Run(chromium, [.. common, $"--screenshot={shot}", new Uri(html).AbsoluteUri], TimeSpan.FromSeconds(90));
            Assert.True(File.Exists(shot), taken.Describe("chromium --screenshot"));
            using var bitmap = SKBitmap.Decode(shot);
            Assert.Equal(1280, bitmap.Width);
            // It drew: the flame graph's band (below the heading, above the table) holds many coloured pixels.
            var coloured = 0;
            for (var y = 100; y < Math.Min(bitmap.Height, 500); y += 2)
                for (var x = 0; x < bitmap.Width; x += 2)
                {
                    var c = bitmap.GetPixel(x, y);
                    if (c.Red > 150 && c.Blue < 120 && c.Red - c.Blue > 60) coloured++;
                }
            Assert.True(coloured > 2000, $"only {coloured} warm pixels in {shot}: the flame graph did not draw");
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }
    }
}
