namespace Corpus.Harness.Capture;

/// <summary>
/// What the native trace backends (perf, Wine's WINEDEBUG channels, wpr) read out of their files: timed samples with
/// their stacks (cpu-clock, page faults) and ordered events (syscalls, Win32 calls). Times are seconds of the run, on
/// the clock its markers are stamped with (<see cref="Containment.ContainedProcess.Elapsed"/>).
/// </summary>
/// <param name="Frames">Leaf first.</param>
public sealed record NativeSample(double Seconds, int Pid, int Tid, string Event, long Weight, IReadOnlyList<string> Frames);

/// <param name="Name">The event: "sys_enter_munmap", "NtUserSetParent".</param>
/// <param name="Text">The rest of its line as the tool printed it.</param>
/// <param name="Fields">Named values parsed from the text ("addr", "len"; "ret" for a syscall's exit).</param>
/// <param name="Frames">The call stack when the tool recorded one, leaf first.</param>
public sealed record NativeEvent(double Seconds, int Pid, int Tid, string Name, string Text,
                                 IReadOnlyDictionary<string, string> Fields, IReadOnlyList<string> Frames);

public sealed record NativeTraceData(IReadOnlyList<NativeSample> Samples, IReadOnlyList<NativeEvent> Events)
{
    public static readonly NativeTraceData Empty = new([], []);
}

/// <summary>The trace kinds of a manifest's `capture.trace.kind`.</summary>
public enum NativeTraceKind { Cpu, Alloc, Faults, Api }
