using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// roslyn subjects: a version restored from a user's local folder feed, a compiler given by path, and the errors.
/// Restores go to a throwaway root, so they do not touch the checkout's .cache.
/// </summary>
public sealed class RoslynKindTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-roslyn-").FullName;
    public void Dispose() => Directory.Delete(_root, recursive: true);

    /// <summary>A local folder feed holding the .nupkg files of one version, copied from a restore of it.</summary>
    private string Feed(string version)
    {
        var (_, why) = RoslynKind.Provision(version, RoslynTriggerTests.Root, []);
        Assert.Null(why);
        var feed = Directory.CreateDirectory(Path.Combine(_root, "feed")).FullName;
        var packages = Path.Combine(RoslynTriggerTests.Root, ".cache", "roslyn", "packages");
        foreach (var id in new[] { "microsoft.codeanalysis.csharp", "microsoft.codeanalysis.common", "microsoft.codeanalysis.analyzers" })
            foreach (var nupkg in Directory.GetFiles(Path.Combine(packages, id), "*.nupkg", SearchOption.AllDirectories))
                File.Copy(nupkg, Path.Combine(feed, Path.GetFileName(nupkg)), overwrite: true);
        return feed;
    }

    [Fact]
    public void AVersionRestoresFromALocalFolderFeedAlone()
    {
        var feed = Feed("4.8.0");
        // Only the local feed: the configured sources are left out, so the compiler can only come from there.
        var (dir, why) = RoslynKind.Provision("4.8.0", _root, [feed], configured: false);
        Assert.Null(why);
        Assert.True(File.Exists(Path.Combine(dir, "Microsoft.CodeAnalysis.CSharp.dll")));
        Assert.True(File.Exists(Path.Combine(dir, "Microsoft.CodeAnalysis.dll")));
        Assert.Contains("Microsoft.CodeAnalysis.CSharp 4.8.0", File.ReadAllText(Path.Combine(dir, ".source")));
        var s = new RoslynKind().Resolve("roslyn:4.8.0", null, _root);
        Assert.Null(s.Unavailable);
        Assert.StartsWith("4.8.0", s.Version);
    }

    [Fact]
    public void AVersionNoFeedHasIsUnavailableWithTheRestoreError()
    {
        var feed = Directory.CreateDirectory(Path.Combine(_root, "empty-feed")).FullName;
        var (_, why) = RoslynKind.Provision("2.6.0", _root, [feed], configured: false);
        Assert.NotNull(why);
        // Resolving a version restores nothing: before any restore it is that version, not yet fetched.
        var unrestored = new RoslynKind().Resolve("roslyn:2.7.0", null, _root);
        Assert.Null(unrestored.Unavailable);
        Assert.Equal("2.7.0", unrestored.Version);
        Assert.False(Directory.Exists(Path.Combine(_root, ".cache", "roslyn", "2.7.0")));
        Assert.Contains("cannot restore Microsoft.CodeAnalysis.CSharp 2.6.0", why);
        Assert.Matches("NU110[12]", why);
        // Remembered for the same feeds: the second call does not restore again (no restore project reappears).
        var restores = Path.Combine(_root, ".cache", "roslyn", "restore");
        Assert.True(Directory.Exists(restores));
        Directory.Delete(restores, true);
        Assert.Equal(why, RoslynKind.Provision("2.6.0", _root, [feed], configured: false).Why);
        Assert.False(Directory.Exists(restores));
    }

    [Fact]
    public void ACompilerGivenByItsDllOrItsFolderResolves()
    {
        var (dir, why) = RoslynKind.Provision("4.14.0", RoslynTriggerTests.Root, []);
        Assert.Null(why);
        var copy = Directory.CreateDirectory(Path.Combine(_root, "my-build")).FullName;
        foreach (var f in Directory.GetFiles(dir, "*.dll")) File.Copy(f, Path.Combine(copy, Path.GetFileName(f)));
        foreach (var spec in new[] { copy, Path.Combine(copy, "Microsoft.CodeAnalysis.CSharp.dll") })
        {
            var s = SubjectKinds.Default.Resolve("roslyn:" + spec, _root);
            Assert.Null(s.Unavailable);
            Assert.True(s.IsUsers);
            Assert.Equal(copy, s.Path);
            Assert.StartsWith("4.14.0", s.Version);
            Assert.Contains("a user's build", s.Kind.Describe(s));
        }
    }

    [Theory]
    [InlineData("/nonexistent/roslyn", "no such file or folder")]
    [InlineData("/tmp", "no Microsoft.CodeAnalysis.CSharp.dll there")]
    public void AnUnusablePathSaysWhy(string path, string message)
    {
        var s = SubjectKinds.Default.Resolve("roslyn:" + path, _root);
        Assert.Contains(message, s.Unavailable);
    }

    [Fact]
    public void AnyVersionIsBuiltInAndRunsTheRunner()
    {
        var kind = new RoslynKind();
        // No list of versions in C#: any version a manifest names is built in, and is restored by its first cell.
        Assert.True(SubjectKinds.Default.IsBuiltIn("roslyn:4.8.0"));
        Assert.True(SubjectKinds.Default.IsBuiltIn("roslyn:9.87.6"));
        Assert.True(SubjectKinds.Default.IsBuiltIn("roslyn:5.0.0-2.final"));
        Assert.False(SubjectKinds.Default.IsBuiltIn("roslyn:4.8"));
        Assert.False(SubjectKinds.Default.IsBuiltIn("roslyn:/opt/roslyn"));
        Assert.DoesNotContain(SubjectKinds.Default.BuiltIns, n => n.StartsWith("roslyn:"));
        Assert.Contains("roslyn:VERSION", SubjectKinds.Default.BuiltInForms);
        Assert.Equal(ProgramType.CompilerRunner, ProgramTypes.Runs(kind.Capabilities("roslyn:4.8.0")));
        Assert.True(kind.UnavailableIsUnchecked);
        var s = new Subject("roslyn:4.8.0", kind, "/x", "4.8.0", null);
        Assert.False(s.IsUsers);
        var launch = kind.Launch(s, "/r/roslyn-runner.dll", ["parse", "--text", "class C { }"], new LaunchOptions(new Dictionary<string, string>(), false));
        Assert.Equal(["exec", "/r/roslyn-runner.dll", "--roslyn", "/x", "parse", "--text", "class C { }"], launch.Args);
    }

    [Theory]
    [InlineData("lib/net6.0,lib/net7.0,lib/netstandard2.0", "net7.0")]
    [InlineData("lib/netcoreapp3.1,lib/netstandard2.0", "netstandard2.0")]
    [InlineData("lib/net8.0,lib/net99.0,lib/netstandard2.0", "net8.0")]
    [InlineData("lib/netstandard1.3,lib/net46", "netstandard1.3")]
    public void TheNewestLoadableLibIsPicked(string folders, string expected)
    {
        foreach (var f in folders.Split(',')) Directory.CreateDirectory(Path.Combine(_root, f));
        Assert.Equal(expected, Path.GetFileName(RoslynKind.BestLib(Path.Combine(_root, "lib"))));
    }
}

/// <summary>NuGet's suggestion of a nearest version is quoted only with what a restore of it came to.</summary>
public sealed class RoslynNearestVersionTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-roslyn-near-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Fact]
    public void ANearestVersionThatCannotBeRestoredEitherIsSaidToBeSo()
    {
        // 2.6.0 is not in the NuGet copy these machines reach; NU1102 names 2.8.0, whose Common package is missing too.
        var (_, why) = Subjects.RoslynKind.Provision("2.6.0", _root, []);
        Assert.NotNull(why);
        Assert.Contains("NU1102", why);
        Assert.Matches(@"Nearest version: \S+, which (cannot be restored either \(.+\)|restores)", why);
    }
}
