using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>Wine subjects resolve through their kinds, and a user's Wine that cannot run says why.</summary>
public sealed class WineKindTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-wine-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    /// <summary>Resolving names and checks the subject and builds nothing; a cell's provisioning builds the template.</summary>
    [Fact]
    public void ResolvingBuildsNothingAndWithoutATemplateThatCanBeBuiltProvisioningSaysWhy()
    {
        foreach (var name in new[] { "wine", "wine-win10", "wine-net10", "wine-net8" })
        {
            var s = SubjectKinds.Default.Resolve(name, _root);
            Assert.False(Directory.Exists(Path.Combine(_root, ".cache")), $"resolving {name} made {_root}/.cache");
            var why = s.Unavailable ?? SubjectKinds.Provisioned(s, _root).Unavailable;
            Assert.NotNull(why);
            Assert.True(why!.Contains("wine is not installed") || why.Contains("no Wine template prefix"), why);
        }
    }

    private sealed class RecordingTools(string wineVersion) : Capture.IToolRunner
    {
        public List<string> Calls { get; } = [];
        public Capture.ToolResult Run(string file, IReadOnlyList<string> args, TimeSpan timeout)
        {
            Calls.Add(string.Join(' ', [Path.GetFileName(file), .. args.Select(Path.GetFileName)]));
            return new Capture.ToolResult(file.EndsWith("wine") ? 0 : 1, file.EndsWith("wine") ? wineVersion : "", "refused", 0, false);
        }
    }

    /// <summary>The kind runs its tools through the runner it was given: a test sees every command.</summary>
    [Fact]
    public void TheKindRunsItsToolsThroughTheInjectedRunner()
    {
        if (OperatingSystem.IsWindows()) return;
        var wine = Path.Combine(_root, "bin", "wine");
        Directory.CreateDirectory(Path.GetDirectoryName(wine)!);
        File.WriteAllText(wine, "");
        File.WriteAllText(Path.Combine(_root, "bin", "wineserver"), "");
        var tools = new RecordingTools("wine-8.0 (test)");
        var kind = new WineKind(tools);
        var s = kind.Resolve($"wine:{wine}", wine, _root);
        Assert.Null(s.Unavailable);
        Assert.Equal("wine-8.0 (test)", s.Version);
        Assert.Equal(["wine --version"], tools.Calls);
        Assert.StartsWith("no Wine template prefix", kind.Provision(s, _root));
        Assert.Equal(["wine --version", "bash template.sh template"], tools.Calls);
    }

    [Fact]
    public void AUsersWineMustExistAndHaveAWineserverBesideIt()
    {
        if (OperatingSystem.IsWindows()) return;
        Assert.Contains("no such file", SubjectKinds.Default.Resolve("wine:/nonexistent/bin/wine", _root).Unavailable);
        var lone = Path.Combine(_root, "wine");
        File.WriteAllText(lone, "#!/bin/sh\necho wine-9.0\n");
        File.SetUnixFileMode(lone, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        Assert.Contains("no wineserver beside it", SubjectKinds.Default.Resolve($"wine:{lone}", _root).Unavailable);
    }

    [Fact]
    public void ADotnetWineSubjectNamesTheRuntimeItsProgramCarries()
    {
        var kind = new WineDotnetKind();
        Assert.EndsWith("; .NET 8.0.31 (Microsoft.NETCore.App.Runtime.win-x64), self-contained",
                        kind.Describe(new Subject("wine-net:8.0.31", kind, "/usr/bin/wine", "wine-8.0", null)));
        Assert.EndsWith("; .NET 8 (the SDK's win-x64 pack), self-contained",
                        kind.Describe(new Subject("wine-net8", kind, "/usr/bin/wine", "wine-8.0", null)));
        Assert.EndsWith("win7 prefix", new WineKind().Describe(new Subject("wine", new WineKind(), "/usr/bin/wine", "wine-8.0", null)));
    }

    [Fact]
    public void NativeAndDotnetWineKindsBuildTheirOwnFlavors()
    {
        Assert.True(new WineKind().Capabilities("wine").HasFlag(SubjectCapabilities.NativePrograms));
        Assert.Equal(SubjectCapabilities.ManagedProgram | SubjectCapabilities.Registry | SubjectCapabilities.Display,
                     new WineDotnetKind().Capabilities("wine-net10"));
        Assert.Equal("win-x64-net8.0", new DotnetPublish("net8.0", "win-x64").Flavor);
        Assert.EndsWith("filemapping_leak_win32.exe",
                        new CmakeBuild("filemapping_leak_win32", "wine-cmake", [], ".exe").ProgramPath(null!, "/out"));
    }
}
