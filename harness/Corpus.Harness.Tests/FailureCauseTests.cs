using Corpus.Harness.Containment;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>A failure's detail quotes its cause before the last lines of output, which are usually stack frames.</summary>
public sealed class FailureCauseTests
{
    private static RunResult Run(string stdout, string stderr) => new(1, null, false, false, 1, 1, stdout, stderr, "", "", "", []);

    [Fact]
    public void CoreClrsRemovedBinaryFormatterIsQuotedFirst()
    {
        var run = Run("", """
            Unhandled exception. System.PlatformNotSupportedException: BinaryFormatter serialization and deserialization have been removed. See https://aka.ms/binaryformatter for more information.
               at System.Runtime.Serialization.Formatters.Binary.BinaryFormatter.Deserialize(Stream serializationStream)
               at Program.RunDeserialize(Int32 n) in /repro/Program.cs:line 155
               at Program.Main(String[] args) in /repro/Program.cs:line 40
            """);
        var tail = ProcessMatch.Tail(run);
        Assert.StartsWith("Unhandled exception. System.PlatformNotSupportedException: BinaryFormatter serialization", tail);
        Assert.EndsWith("at Program.Main(String[] args) in /repro/Program.cs:line 40", tail);
    }

    [Fact]
    public void AMonoThatCannotLoadItsNativeLibraryNamesIt()
    {
        var run = Run("", "Unhandled Exception:\nSystem.DllNotFoundException: System.Native\n  at (wrapper managed-to-native) Interop+Sys.Stat\n  at Program.RunDeserialize (System.Int32 n) [0x00010] in Program.cs:155\n");
        Assert.Equal("System.DllNotFoundException: System.Native", ProcessMatch.Cause(run));
        Assert.StartsWith("System.DllNotFoundException: System.Native | at (wrapper", ProcessMatch.Tail(run));
    }

    [Fact]
    public void OutputWithoutACauseKeepsItsTail() =>
        Assert.Equal("a | b | c", ProcessMatch.Tail(Run("", "z\na\nb\nc\n")));

    [Fact]
    public void ASilentRunSaysHowItEnded() =>
        Assert.Equal("no output; exit 1 after 1.00 s", ProcessMatch.Tail(Run("", " \n")));

    [Fact]
    public void AGlibcAbortIsACause() =>
        Assert.Equal("double free or corruption (!prev)", ProcessMatch.Cause(Run("", "free(): x\ndouble free or corruption (!prev)\n")));
}
