namespace Corpus.LostMemory.Tests;

public sealed class ParserTests
{
    [Theory]
    [InlineData("/memfd:doublemapper (deleted)", ObjectKind.Memfd, "doublemapper", true)]
    [InlineData("/memfd:name with spaces (deleted)", ObjectKind.Memfd, "name with spaces", true)]
    [InlineData("/dev/shm/CoreFxShm_1a2b (deleted)", ObjectKind.Shm, "CoreFxShm_1a2b", true)]
    [InlineData("/dev/shm/mono.1234", ObjectKind.Shm, "mono.1234", false)]
    [InlineData("/SYSV0000abcd (deleted)", ObjectKind.SysV, "0000abcd", true)]
    [InlineData("/dev/zero (deleted)", ObjectKind.AnonShared, "", true)]
    [InlineData("/tmp/cell/tmp/wine-E7VUwg/server-fe00-b204de/tmpmap-5f35fb1d (deleted)", ObjectKind.WineSection, "tmpmap-5f35fb1d", true)]
    [InlineData("/tmp/.wine-0/server-803-2a0b7c/tmpmap-00000001 (deleted)", ObjectKind.WineSection, "tmpmap-00000001", true)]
    public void ClassifiesShmemTargets(string target, ObjectKind kind, string name, bool deleted)
    {
        Assert.True(ProcText.TryClassify(target, out var k, out var n, out var d));
        Assert.Equal(kind, k);
        Assert.Equal(name, n);
        Assert.Equal(deleted, d);
    }

    [Theory]
    [InlineData("/usr/lib/libc.so.6")]
    [InlineData("socket:[12345]")]
    [InlineData("/tmp/x (deleted)")]
    [InlineData("/dev/zero")]
    [InlineData("anon_inode:[eventfd]")]
    [InlineData("/tmp/wine-E7VUwg/server-fe00-b204de/socket")]
    [InlineData("/tmp/wine-E7VUwg/tmpmap-5f35fb1d (deleted)")]
    [InlineData("/home/u/server-notes/tmpmap-list.txt")]
    public void IgnoresOtherTargets(string target) => Assert.False(ProcText.TryClassify(target, out _, out _, out _));

    [Fact]
    public void ParsesMapsLines()
    {
        Assert.True(ProcText.TryParseMapsLine("7f3a2c000000-7f3a30000000 rw-s 00000000 00:01 4711                       /memfd:x (deleted)", out var e));
        Assert.Equal(0x4000000L, e.Length);
        Assert.Equal(0u, e.DevMajor);
        Assert.Equal(1u, e.DevMinor);
        Assert.Equal(4711UL, e.Inode);
        Assert.Equal("/memfd:x (deleted)", e.Path);

        Assert.True(ProcText.TryParseMapsLine("55d0c0a00000-55d0c0a21000 r--p 00000000 fe:1a 131 /usr/bin/a b", out e));
        Assert.Equal(0xfeu, e.DevMajor);
        Assert.Equal(0x1au, e.DevMinor);
        Assert.Equal("/usr/bin/a b", e.Path);

        Assert.False(ProcText.TryParseMapsLine("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 ", out _)); // anonymous
        Assert.False(ProcText.TryParseMapsLine("garbage", out _));
    }

    [Fact]
    public void ParsesMeminfoAndSysV()
    {
        var d = new Dictionary<string, long>();
        ProcText.ParseMeminfoLine("Shmem:            37512 kB", d);
        ProcText.ParseMeminfoLine("HugePages_Total:       0", d);
        Assert.Equal(37512, d["Shmem"]);
        Assert.Equal(0, d["HugePages_Total"]);

        string[] sysv =
        [
            "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap",
            "         0          1  1600               1048576  100   100      0     0     0     0     0          0          0 1700000000               1048576                     0",
            "         0          2  1600               4194304  100   100      1     0     0     0     0          0          0 1700000000               4194304                     0",
        ];
        Assert.Equal((1, 1048576L), ProcText.ParseSysV(sysv));
    }
}
