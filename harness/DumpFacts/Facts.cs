namespace Corpus.DumpFacts;

public sealed record Options
{
    public bool Heap { get; init; } = true;
    /// <summary>How many types the heap histogram keeps (largest by bytes).</summary>
    public int Top { get; init; } = 50;
    /// <summary>How many managed method names go into <see cref="ThreadFacts.TopFrames"/>.</summary>
    public int TopFrames { get; init; } = 5;
    /// <summary>Explicit libmscordaccore.so; by default the one next to the dumped libcoreclr.so.</summary>
    public string? DacPath { get; init; }
}

/// <param name="Runtime">Product version of the dumped runtime, e.g. "8.0.33".</param>
/// <param name="RuntimeDirectory">Where the dumped process loaded libcoreclr.so from.</param>
public sealed record Facts(
    string Dump, string Runtime, string? RuntimeDirectory, IReadOnlyList<ThreadFacts> Threads, HeapFacts? Heap);

public sealed record ThreadFacts(
    int ManagedThreadId,
    uint OsThreadId,
    string? Name,
    bool IsFinalizer,
    bool IsAlive,
    IReadOnlyList<string> Frames,
    IReadOnlyList<string> TopFrames,
    ExceptionFacts? Exception);

public sealed record ExceptionFacts(string Type, string? Message, int HResult);

public sealed record HeapFacts(long TotalObjects, long TotalBytes, IReadOnlyList<TypeCount> Types);

public sealed record TypeCount(string Type, long Count, long Bytes);

/// <summary>The dump cannot be read at all (missing file, not a core dump, no CLR, no DAC).</summary>
public sealed class DumpOpenException(string message, Exception? inner = null) : Exception(message, inner);
