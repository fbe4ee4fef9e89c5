using System.Diagnostics;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Tests;

/// <summary>make new-repro writes skeletons that the catalog accepts as they are, and refuses bad requests.</summary>
public sealed class NewReproTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-new-").FullName;
    private readonly string _repo;

    public NewReproTests()
    {
        var repo = AppContext.BaseDirectory;
        while (!File.Exists(Path.Combine(repo, "ci", "new-repro.sh"))) repo = Path.GetDirectoryName(repo)!;
        _repo = repo;
        Directory.CreateDirectory(Path.Combine(_root, "ci", "templates"));
        Directory.CreateDirectory(Path.Combine(_root, "repros"));
        Directory.CreateDirectory(Path.Combine(_root, "expected"));
        File.Copy(Path.Combine(repo, "ci", "new-repro.sh"), Path.Combine(_root, "ci", "new-repro.sh"));
        foreach (var t in Directory.GetFiles(Path.Combine(repo, "ci", "templates")))
            File.Copy(t, Path.Combine(_root, "ci", "templates", Path.GetFileName(t)));
        File.WriteAllText(Path.Combine(_root, "corpus.slnx"), "<Solution>\n  <Folder Name=\"/repros/\">\n  </Folder>\n</Solution>\n");
    }

    public void Dispose() => Directory.Delete(_root, recursive: true);

    private (int Code, string Output) NewRepro(string id, string kind, string name = "")
    {
        var psi = new ProcessStartInfo("bash", [Path.Combine(_root, "ci", "new-repro.sh"), id, kind, name])
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

        // Every repro has its Pester file: it parses, pins Pester, takes -Run, and has an It for each expected cell.
        var tests = Path.Combine(_root, "repros", $"my-{kind}-bug", $"my-{kind}-bug.Tests.ps1");
        Assert.True(File.Exists(tests), output);
        var text = File.ReadAllText(tests);
        Assert.DoesNotContain("@ID@", text);
        Assert.Contains($"Describe 'my-{kind}-bug' -Tag 'Scenario'", text);
        Assert.Contains($"-Repro 'my-{kind}-bug' -Case main", text);
        Assert.Contains("REPLACE:", text);
        var shape = PowerShellShape(tests);
        Assert.StartsWith("parse=0 requires=Pester 5.7.1 param=Run its=", shape);
        Assert.True(Its(shape) >= cells, $"{tests}: {shape}: fewer Its than its {cells} expected cells");

        // The lab the sources point at exists: a stub with a block make test-labs runs, and what it must show.
        var lab = File.ReadAllText(Path.Combine(_root, "docs", "labs", $"my-{kind}-bug.md"));
        Assert.DoesNotContain("@ID@", lab);
        Assert.Contains($"```sh lab\nmake run REPRO=my-{kind}-bug\n```", lab);
        Assert.Contains("<!-- expect output: 0 differ from expected/ -->", lab);
    }

    [Fact]
    public void NameChoosesTheCSharpNamesWhereTheIdRunsWordsTogether()
    {
        var (code, output) = NewRepro("binaryformatter-linkedlist", "csharp", "BinaryFormatterLinkedList");
        Assert.True(code == 0, output);
        Assert.True(File.Exists(Path.Combine(_root, "repros", "binaryformatter-linkedlist", "src", "BinaryFormatterLinkedList.csproj")), output);
        Assert.Contains("C# names: BinaryFormatterLinkedList", output);
        Assert.Equal(2, NewRepro("other-bug", "csharp", "not_pascal").Code);
    }

    private static int Its(string shape) => int.Parse(System.Text.RegularExpressions.Regex.Match(shape, @"its=(\d+)").Groups[1].Value);

    /// <summary>
    /// A Tests file through ci/check-powershell.ps1 (PowerShell's own parser, as make unit runs it over the tree) and
    /// its shape from the same parser's tree: the #Requires pin, the param block, and the Its a run makes (an It with
    /// -ForEach counts once per data item).
    /// </summary>
    private string PowerShellShape(string file)
    {
        const string script = """
            $file = $env:CORPUS_TESTS_FILE
            & ./ci/check-powershell.ps1 $file | Out-Null
            $parse = $LASTEXITCODE
            $ast = [System.Management.Automation.Language.Parser]::ParseFile($file, [ref] $null, [ref] $null)
            $its = 0
            foreach ($it in $ast.FindAll({ param($n) $n -is [System.Management.Automation.Language.CommandAst] -and $n.GetCommandName() -eq 'It' }, $true)) {
                $e = $it.CommandElements
                $n = 1
                for ($i = 0; $i -lt $e.Count - 1; $i++) {
                    if ($e[$i] -is [System.Management.Automation.Language.CommandParameterAst] -and $e[$i].ParameterName -in 'ForEach', 'TestCases') {
                        $n = @($e[$i + 1].SafeGetValue()).Count
                    }
                }
                $its += $n
            }
            $requires = @($ast.ScriptRequirements.RequiredModules | ForEach-Object { "$($_.Name) $($_.RequiredVersion)" }) -join ','
            $params = @($ast.ParamBlock.Parameters | ForEach-Object { $_.Name.VariablePath.UserPath }) -join ','
            "parse=$parse requires=$requires param=$params its=$its"
            """;
        var psi = new ProcessStartInfo("bash", [Path.Combine(_repo, "ci", "pwsh.sh"), "-Command", script])
        {
            RedirectStandardOutput = true, RedirectStandardError = true,
        };
        psi.Environment["CORPUS_TESTS_FILE"] = file;
        using var p = Process.Start(psi)!;
        var stderr = p.StandardError.ReadToEndAsync();
        var stdout = p.StandardOutput.ReadToEnd();
        p.WaitForExit();
        Assert.True(p.ExitCode == 0, $"ci/pwsh.sh (PowerShell from make setup) exited {p.ExitCode}: {stdout}{stderr.Result}");
        return stdout.Trim().Split('\n')[^1].Trim();
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
