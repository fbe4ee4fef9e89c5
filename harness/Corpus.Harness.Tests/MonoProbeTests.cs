using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>A user's Mono copied the obvious way starts and prints its version; the probe program finds what it lacks.</summary>
public sealed class MonoProbeTests : IDisposable
{
    private readonly string _copy = Directory.CreateTempSubdirectory("corpus-mono-copy-").FullName;

    public void Dispose() => Directory.Delete(_copy, recursive: true);

    [Fact]
    public void ACopyWithoutItsNativeShimIsRefusedAndTheRefusalNamesWhatIsMissing()
    {
        if (OperatingSystem.IsWindows()) return;
        var mono = SubjectKinds.Which("mono");
        Assert.True(mono is not null, "mono is part of these machines (ci/setup.sh)");
        // The binary and lib/mono, as a user copies them; Debian keeps libmono-native.so and the config elsewhere.
        Directory.CreateDirectory(Path.Combine(_copy, "bin"));
        Directory.CreateDirectory(Path.Combine(_copy, "lib"));
        var copied = Path.Combine(_copy, "bin", "mono");
        File.Copy(new FileInfo(mono!).ResolveLinkTarget(true)?.FullName ?? mono!, copied);
        File.SetUnixFileMode(copied, File.GetUnixFileMode(copied) | UnixFileMode.UserExecute);
        Directory.CreateSymbolicLink(Path.Combine(_copy, "lib", "mono"), "/usr/lib/mono");

        var incomplete = SubjectKinds.Default.Resolve($"mono:{copied}", RoslynTriggerTests.Root);
        Assert.NotNull(incomplete.Unavailable);
        Assert.Contains("an incomplete Mono: a probe program failed", incomplete.Unavailable);
        Assert.Contains("System.Native", incomplete.Unavailable);
        Assert.Contains(Path.Combine(_copy, "lib", "libmono-native.so"), incomplete.Unavailable);
        Assert.Contains(Path.Combine(_copy, "etc", "mono", "config"), incomplete.Unavailable);

        // With the two files beside it, the same copy is a usable subject.
        foreach (var so in Directory.GetFiles("/usr/lib", "libmono-native.so*"))
            File.Copy(so, Path.Combine(_copy, "lib", Path.GetFileName(so)));
        Directory.CreateDirectory(Path.Combine(_copy, "etc", "mono"));
        File.Copy("/etc/mono/config", Path.Combine(_copy, "etc", "mono", "config"));
        Assert.Null(SubjectKinds.Default.Resolve($"mono:{copied}", RoslynTriggerTests.Root).Unavailable);
    }
}
