using System.Diagnostics;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// Every trigger text of the two Roslyn repros on every fixed compiler that can be provisioned here, through the
/// real runner: diagnostics, and no hang. The compilers go to the checkout's .cache/roslyn (a gate reuses them).
/// </summary>
public class RoslynTriggerTests
{
    public static readonly string Root = FindRoot();

    private static string FindRoot()
    {
        for (var d = new DirectoryInfo(AppContext.BaseDirectory); d is not null; d = d.Parent)
            if (Directory.Exists(Path.Combine(d.FullName, "repros")) && Directory.Exists(Path.Combine(d.FullName, "harness", "RoslynRunner")))
                return d.FullName;
        throw new InvalidOperationException("not inside a corpus checkout");
    }

    private const string Writeup = "readonly struct FastPoint { public int X { ref readonly get; private set; } }";
    private const string Thread = "class C { int P { ref get; } }";

    private static (int Code, string Stdout, double Seconds) Run(string version, params string[] args)
    {
        var (dir, why) = RoslynKind.Provision(version, Root, []);
        Assert.True(why is null, why);
        var runner = Path.Combine(Root, "build", "harness", "roslyn-runner", "roslyn-runner.dll");
        if (!File.Exists(runner))
        {
            var build = Capture.ToolRunner.Instance.Run("dotnet", ["build", Path.Combine(Root, "harness", "RoslynRunner"), "-c", "Release",
                                                                     "-o", Path.GetDirectoryName(runner)!, "-nologo", "-v", "q"], TimeSpan.FromMinutes(5));
            Assert.True(build.ExitCode == 0, build.Stdout);
        }
        var clock = Stopwatch.StartNew();
        var r = Capture.ToolRunner.Instance.Run("dotnet", ["exec", runner, "--roslyn", dir, .. args], TimeSpan.FromSeconds(30));
        Assert.False(r.TimedOut, $"{version}: still running after 30 s");
        return (r.ExitCode, r.Stdout + r.Stderr, clock.Elapsed.TotalSeconds);
    }

    [Theory]
    [InlineData("2.10.0")]
    [InlineData("3.6.0")]
    [InlineData("4.3.1")]
    [InlineData("4.5.0")]
    [InlineData("4.8.0")]
    [InlineData("4.14.0")]
    [InlineData("5.12.0")]
    public void RefBeforeAnAccessorIsCS0106OnFixedCompilers(string version)
    {
        foreach (var text in new[] { Writeup, Thread })
        {
            var (code, output, seconds) = Run(version, "compile", "--text", text);
            Assert.True(code == 0, output);
            Assert.Matches(@"DIAGNOSTIC CS0106 error \(1,\d+\): The modifier 'ref' is not valid for this item", output);
            Assert.Matches("METRIC .*\"compile_s\"", output);
            Assert.True(seconds < 20, $"{version}: {seconds:0.0} s");
        }
    }

    [Theory]
    [InlineData("3.6.0", "CS1022")]
    [InlineData("4.14.0", "none")]
    [InlineData("5.12.0", "none")]
    public void DeepNestedAttributesParseQuicklyOnUnaffectedCompilers(string version, string ids)
    {
        // Depth 30: 4.3.1 would need days. The fixed parsers accept it (no diagnostics); 3.6.0 rejects it at once.
        var (code, output, _) = Run(version, "parse", "--repeat", "30", "[A(", "--repeat", "30", ")]", "--text", "class C { }");
        Assert.True(code == 0, output);
        Assert.Contains("DIAGNOSTIC-IDS " + ids, output);
        var parse = double.Parse(System.Text.RegularExpressions.Regex.Match(output, "\"parse_s\": ([0-9.]+)").Groups[1].Value,
                                 System.Globalization.CultureInfo.InvariantCulture);
        Assert.True(parse < 2, $"{version}: parse took {parse} s");
    }

    [Fact]
    public void TheRunnerRefusesBadArguments()
    {
        var runner = Path.Combine(Root, "build", "harness", "roslyn-runner", "roslyn-runner.dll");
        Run("5.12.0", "parse", "--text", "class C { }");   // builds the runner if needed
        var r = Capture.ToolRunner.Instance.Run("dotnet", ["exec", runner, "--roslyn", "/nonexistent", "parse", "--text", "x"], TimeSpan.FromSeconds(30));
        Assert.Equal(2, r.ExitCode);
        Assert.Contains("needs Microsoft.CodeAnalysis.CSharp.dll", r.Stderr);
        r = Capture.ToolRunner.Instance.Run("dotnet", ["exec", runner, "--roslyn", "/tmp", "parse", "--repeat", "x", "y"], TimeSpan.FromSeconds(30));
        Assert.Equal(2, r.ExitCode);
        Assert.Contains("--repeat needs a count", r.Stderr);
    }
}
