using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// net:VERSION / wine-net:VERSION subjects and a program's "this runtime cannot run me": the open forms, the feed's
/// listing in the error for a version it lacks, builds for frameworks a project does not list, and which lines say
/// REPRO-UNSUPPORTED (through the real runner: PluginSeamTests).
/// </summary>
public sealed class RuntimeVersionTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-rtver-").FullName;
    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Theory]
    [InlineData("net:9.0.23", true)]
    [InlineData("net:11.0.0", true)]
    [InlineData("net:10.0.0-preview.1", true)]
    [InlineData("net:9", false)]
    [InlineData("net:", false)]
    [InlineData("net9", false)]
    public void NetVersionIsAnOpenFormOfCoreClr(string name, bool owned)
    {
        Assert.Equal(owned, new CoreClrKind().Owns(name));
        Assert.Equal(owned, SubjectKinds.Default.Owner(name) is CoreClrKind);
    }

    [Fact]
    public void WineNetVersionIsAnOpenFormOfWineDotnetAndBothAreListed()
    {
        Assert.IsType<WineDotnetKind>(SubjectKinds.Default.Owner("wine-net:9.0.22"));
        Assert.Null(SubjectKinds.Default.Owner("wine-net:x"));
        Assert.Contains("net:VERSION", SubjectKinds.Default.BuiltInForms);
        Assert.Contains("wine-net:VERSION", SubjectKinds.Default.BuiltInForms);
    }

    [Theory]
    [InlineData("3.1.3", "netcoreapp3.1")]
    [InlineData("8.0.0", "net8.0")]
    [InlineData("9.0.23", "net8.0")]
    [InlineData("10.0.15", "net10.0")]
    [InlineData("11.0.0", "net10.0")]
    public void EachRuntimeRunsTheBuildOfItsFramework(string version, string tfm) =>
        Assert.Equal(tfm, CoreClrKind.TargetFramework(new Subject("net:" + version, new CoreClrKind(), "/x", version, null)));

    /// <summary>A listing cached as the feeds said it: a version outside it is refused with the versions it has.</summary>
    [Fact]
    public void AVersionTheFeedsLackIsRefusedWithTheirVersions()
    {
        var file = NuGetListing.CacheFile(_root, CoreClrKind.RuntimePack);
        Directory.CreateDirectory(Path.GetDirectoryName(file)!);
        File.WriteAllText(file, """["8.0.0","9.0.23"]""");
        // The feed is asked again for a version outside the cache; a runner that fails leaves the cached listing.
        var (has, versions) = NuGetListing.Lookup(_root, CoreClrKind.RuntimePack, "9.9.9", new FailingTools());
        Assert.False(has);
        Assert.Equal(["8.0.0", "9.0.23"], versions);
        // Resolving asks nothing of the feeds and fetches nothing; provisioning does, and refuses the version.
        var resolved = new CoreClrKind(new FailingTools()).Resolve("net:9.9.9", null, _root);
        Assert.Null(resolved.Unavailable);
        Assert.Equal("9.9.9", resolved.Version);
        Assert.False(Directory.Exists(CoreClrKind.PackRoot(_root, "9.9.9")));
        var s = SubjectKinds.Provisioned(new CoreClrKind().Resolve("net:9.9.9", null, _root), _root);
        Assert.NotNull(s.Unavailable);
        Assert.Contains("9.9.9 is not on this machine's NuGet feeds", s.Unavailable);
        // Asked again for real (or, offline, the cached listing): either way the versions it has are listed.
        Assert.Matches(@"they have .*8\.0\.0, .*9\.0\.23", s.Unavailable);
        Assert.True(NuGetListing.Lookup(_root, CoreClrKind.RuntimePack, "9.0.23", new FailingTools()).Has);
    }

    private sealed class FailingTools : IToolRunner
    {
        public ToolResult Run(string file, IReadOnlyList<string> args, TimeSpan timeout) => new(1, "", "offline", 0, false);
    }

    /// <summary>A repro "p" whose .NET build is src/P.csproj with the given text, run on net10.</summary>
    private Manifest Repro(string csproj)
    {
        var dir = Path.Combine(_root, "repros", "p");
        Directory.CreateDirectory(Path.Combine(dir, "src"));
        File.WriteAllText(Path.Combine(dir, "src", "P.csproj"), csproj);
        File.WriteAllText(Path.Combine(dir, "repro.json"), """
            { "id": "p", "title": "t", "category": "crash", "references": ["r"], "languages": ["csharp"],
              "subjects": ["net10"], "variants": ["bug"], "build": { "dotnet": { "project": "src/P.csproj", "assembly": "P" } },
              "budget": { "timeoutSec": 20, "memoryMB": 256 },
              "cases": [ { "id": "main", "args": ["x"], "signature": { "process": { "exit": "zero" } } } ] }
            """);
        return Manifest.Load(Path.Combine(dir, "repro.json"));
    }

    [Fact]
    public void AFrameworkTheProjectDoesNotListIsAnAttempt()
    {
        var m = Repro("<Project><PropertyGroup><TargetFrameworks>net8.0;net10.0</TargetFrameworks></PropertyGroup></Project>");
        Assert.Null(new DotnetBuild("net8.0").Attempt(m));
        Assert.Empty(ProjectFrameworks.Override(m, "net10.0"));
        Assert.Contains("targets net8.0;net10.0, not netcoreapp3.1", new DotnetBuild("netcoreapp3.1").Attempt(m));
        Assert.Contains("-p:TargetFrameworks=netcoreapp3.1", ProjectFrameworks.Override(m, "netcoreapp3.1"));
        Assert.NotNull(new DotnetPublish("net8.0", "win-x64", "8.0.31").Attempt(m));
        Assert.Null(new DotnetPublish("net8.0", "win-x64").Attempt(m));
    }

    /// <summary>A real build through the Builder: the program in build/, and nothing of MSBuild's in the repro's sources.</summary>
    [Fact]
    public void ADotnetBuildLeavesNothingInTheReprosSourceTree()
    {
        var m = Repro("<Project Sdk=\"Microsoft.NET.Sdk\"><PropertyGroup><OutputType>Exe</OutputType><TargetFramework>net10.0</TargetFramework></PropertyGroup></Project>");
        var dir = m.Dir;
        File.WriteAllText(Path.Combine(dir, "src", "Program.cs"), "System.Console.WriteLine(\"hi\");");
        var built = new Builder(_root, ToolRunner.Instance).Ensure(m, new DotnetBuild("net10.0"));
        Assert.True(built.Error is null, built.Error);
        Assert.Equal(Path.Combine(_root, "build", "p", "net10.0", "P.dll"), built.Program);
        Assert.Equal(["P.csproj", "Program.cs"], Directory.GetFileSystemEntries(Path.Combine(dir, "src")).Select(Path.GetFileName).Order());
        Assert.True(Directory.Exists(DotnetArtifacts.Beside(Path.Combine(_root, "build", "p", "net10.0"))));
    }

    [Fact]
    public void TheFirstErrorOfABuildLogIsItsReason() =>
        Assert.Equal("error NU1102: Unable to find package X with version (= 3.1.32)",
                     Builder.FirstError("  Determining projects to restore...\n/w/src/P.csproj : error NU1102: Unable to find package X with version (= 3.1.32) [/w/src/P.csproj::TargetFramework=netcoreapp3.1]\n"));

    [Theory]
    [InlineData("REPRO-UNSUPPORTED 9.0 has no BinaryFormatter\n", "9.0 has no BinaryFormatter")]
    [InlineData("x\nREPRO-UNSUPPORTED\n", "the program gave no reason")]
    [InlineData("the line REPRO-UNSUPPORTED quoted\n", null)]
    [InlineData("REPRO-UNSUPPORTEDX\n", null)]
    public void OnlyALineThatSaysItIsUnsupportedCounts(string stdout, string? reason) =>
        Assert.Equal(reason, ProgramUnsupportedException.Said(stdout));
}
