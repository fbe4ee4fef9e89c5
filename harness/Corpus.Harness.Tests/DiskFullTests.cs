using Corpus.Harness.Containment;
using Corpus.Harness.Capture;

namespace Corpus.Harness.Tests;

/// <summary>A run whose disk fills up stops with no verdict (exit 3), where it died of an unhandled IOException.</summary>
public class DiskFullTests
{
    [Fact]
    public void AFullDiskIsToldApartFromOtherIoErrors()
    {
        // A real ENOSPC: a 64 KB tmpfs, written past its size.
        var dir = Directory.CreateTempSubdirectory("corpus-full-").FullName;
        try
        {
            var mount = ToolRunner.Instance.Run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], TimeSpan.FromSeconds(30));
            Assert.True(mount.ExitCode == 0, mount.Describe("mount"));
            try
            {
                var full = Assert.ThrowsAny<IOException>(() => File.WriteAllBytes(Path.Combine(dir, "big"), new byte[1 << 20]));
                Assert.True(Disk.IsFull(full), $"HResult {full.HResult}: {full.Message}");
            }
            finally
            {
                ToolRunner.Instance.Run("umount", [dir], TimeSpan.FromSeconds(30));
            }
            Assert.False(Disk.IsFull(Assert.ThrowsAny<IOException>(() => File.ReadAllBytes(Path.Combine(dir, "absent")))));
            Assert.False(Disk.IsFull(new IOException("an I/O error", 5)));
            Assert.False(Disk.IsFull(new InvalidOperationException()));
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }
}
