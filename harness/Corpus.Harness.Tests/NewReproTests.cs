using System.Diagnostics;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Tests;

/// <summary>make new-repro writes skeletons that the catalog accepts as they are, and refuses bad requests.</summary>
public sealed class NewReproTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-new-").FullName;

    public NewReproTests()
    {
        var repo = AppContext.BaseDirectory;
        while (!File.Exists(Path.Combine(repo, "ci", "new-repro.sh"))) repo = Path.GetDirectoryName(repo)!;
        Directory.CreateDirectory(Path.Combine(_root, "ci", "templates"));
        Directory.CreateDirectory(Path.Combine(_root, "repros"));
        Directory.CreateDirectory(Path.Combine(_root, "expected"));
        File.Copy(Path.Combine(repo, "ci", "new-repro.sh"), Path.Combine(_root, "ci", "new-repro.sh"));
        foreach (var t in Directory.GetFiles(Path.Combine(repo, "ci", "templates")))
            File.Copy(t, Path.Combine(_root, "ci", "templates", Path.GetFileName(t)));
        File.WriteAllText(Path.Combine(_root, "corpus.slnx"), "<Solution>\n  <Folder Name=\"/repros/\">\n  </Folder>\n</Solution>\n");
    }

    public void Dispose() => Directory.Delete(_root, recursive: true);

    private (int Code, string Output) NewRepro(string id, string kind)
    {
        var psi = new ProcessStartInfo("bash", [Path.Combine(_root, "ci", "new-repro.sh"), id, kind])
        {
            RedirectStandardOutput = true, RedirectStandardError = true,
        };
        using var p = Process.Start(psi)!;
        var output = p.StandardOutput.ReadToEnd() + p.StandardError.ReadToEnd();
        p.WaitForExit();
        return (p.ExitCode, output);
    }

    [Theory]
    [InlineData("csharp", 4)]
    [InlineData("cpp", 2)]
    [InlineData("win32", 2)]
    public void EachKindOfSkeletonValidates(string kind, int cells)
    {
        var (code, output) = NewRepro($"my-{kind}-bug", kind);
        Assert.True(code == 0, output);
        var catalog = Catalog.Load(_root);
        Assert.Empty(catalog.Errors);
        var entry = Assert.Single(catalog.Entries);
        Assert.Equal($"my-{kind}-bug", entry.Manifest.Id);
        Assert.Equal(cells, entry.Expected.Count);
        if (kind == "csharp")
            Assert.Contains("repros/my-csharp-bug/src/MyCsharpBug.csproj", File.ReadAllText(Path.Combine(_root, "corpus.slnx")));
    }

    [Theory]
    [InlineData("Bad_Id", "cpp", "lowercase words")]
    [InlineData("ok-id", "rust", "KIND 'rust' is not one of")]
    [InlineData("", "cpp", "usage")]
    public void BadRequestsExitTwoAndSayWhy(string id, string kind, string message)
    {
        var (code, output) = NewRepro(id, kind);
        Assert.Equal(2, code);
        Assert.Contains(message, output);
    }

    [Fact]
    public void AnExistingReproIsNeverOverwritten()
    {
        Assert.Equal(0, NewRepro("twice", "cpp").Code);
        var manifest = Path.Combine(_root, "repros", "twice", "repro.json");
        File.AppendAllText(manifest, "// edited\n");
        var (code, output) = NewRepro("twice", "csharp");
        Assert.Equal(2, code);
        Assert.Contains("exists", output);
        Assert.EndsWith("// edited\n", File.ReadAllText(manifest));
    }
}
