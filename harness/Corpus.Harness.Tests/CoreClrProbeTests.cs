using System.Diagnostics;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>A dotnet root assembled by hand that lacks a runtime file is refused, naming it; a whole one resolves.</summary>
public sealed class CoreClrProbeTests : IDisposable
{
    private readonly string _copy = Directory.CreateTempSubdirectory("corpus-dotnet-copy-").FullName;

    public void Dispose() => Directory.Delete(_copy, recursive: true);

    [Fact]
    public void ARootWithoutItsNativeShimIsRefusedAndTheRefusalNamesIt()
    {
        if (OperatingSystem.IsWindows()) return;
        var root = RoslynTriggerTests.Root;
        var net8 = Path.Combine(root, ".cache", "subjects", "net8");
        Assert.True(Directory.Exists(net8), "setup assembles the net8 root");
        Assert.True(File.Exists(Path.Combine(root, "build", "harness", "probe-net", "probe.dll")), "setup builds the probe");
        var copy = Path.Combine(_copy, "dotnet");
        Process.Start("cp", ["-a", net8, copy])!.WaitForExit();

        Assert.Null(SubjectKinds.Default.Resolve($"coreclr:{copy}", root).Unavailable);

        var fx = Directory.GetDirectories(Path.Combine(copy, "shared", "Microsoft.NETCore.App")).Single();
        File.Delete(Path.Combine(fx, "libSystem.Native.so"));
        var incomplete = SubjectKinds.Default.Resolve($"coreclr:{copy}", root);
        Assert.NotNull(incomplete.Unavailable);
        Assert.Contains("an incomplete dotnet root: a probe program failed", incomplete.Unavailable);
        Assert.Contains($"missing: {Path.Combine(fx, "libSystem.Native.so")}", incomplete.Unavailable);
    }
}
