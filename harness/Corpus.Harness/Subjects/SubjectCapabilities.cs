using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>
/// What a subject can do. Manifest validation, selection and the runner ask these, never which kind a subject is.
/// A subject runs exactly one program type (ManagedProgram, NativePrograms or CompilerRunner).
/// </summary>
[Flags]
public enum SubjectCapabilities
{
    None = 0,
    /// <summary>Runs the repro's .NET/Mono build (program "main").</summary>
    ManagedProgram = 1 << 0,
    /// <summary>Runs a case's native program (program "cmake:TARGET").</summary>
    NativePrograms = 1 << 1,
    /// <summary>Runs the compiler runner against its compiler (program "roslyn").</summary>
    CompilerRunner = 1 << 2,
    /// <summary>Has a Windows registry that a registry fixture can go into.</summary>
    Registry = 1 << 3,
    /// <summary>Gives a program that makes windows a display (manifest `display`).</summary>
    Display = 1 << 4,
    /// <summary>Its timed snapshots can carry heap statistics (a heap signature is judged there).</summary>
    HeapFacts = 1 << 5,
    /// <summary>A reproduced run can be replayed backwards (capture.timeTravel: gdb record full).</summary>
    TimeTravel = 1 << 6,
    /// <summary>Runs on this Windows machine: Windows builds (MSVC), traced by wpr.</summary>
    WindowsHost = 1 << 7,
    /// <summary>Its Windows says it is Windows 10 (a Wine prefix set with winecfg /v win10); else Wine's default, Windows 7.</summary>
    Windows10 = 1 << 8,
}

/// <summary>What a case runs: its manifest `program`, as one of three types.</summary>
public enum ProgramType
{
    /// <summary>"main": the repro's .NET/Mono build.</summary>
    Managed,
    /// <summary>"cmake:TARGET": a native program of the repro's CMake build.</summary>
    Native,
    /// <summary>"roslyn": the shared compiler runner; nothing of the repro is built.</summary>
    CompilerRunner,
}

/// <summary>A case that a subject cannot run: the manifest field it concerns and why (without the case's id, so one reason serves many cases).</summary>
public sealed record Unrunnable(string Field, string Reason)
{
    public override string ToString() => Reason;
}

public static class ProgramTypes
{
    /// <summary>The values a manifest's `program` may take, for messages.</summary>
    public const string Written = "'main', 'roslyn' or 'cmake:TARGET'";

    /// <summary>The program type of a manifest's `program` value; null when it is none of <see cref="Written"/>.</summary>
    public static ProgramType? Of(string program) => program switch
    {
        "main" => ProgramType.Managed,
        "roslyn" => ProgramType.CompilerRunner,
        _ when program.StartsWith("cmake:") && program.Length > "cmake:".Length => ProgramType.Native,
        _ => null,
    };

    /// <summary>The capability a subject needs to run a program of this type.</summary>
    public static SubjectCapabilities Needs(ProgramType type) => type switch
    {
        ProgramType.Native => SubjectCapabilities.NativePrograms,
        ProgramType.CompilerRunner => SubjectCapabilities.CompilerRunner,
        _ => SubjectCapabilities.ManagedProgram,
    };

    /// <summary>The program type a subject with these capabilities runs; null for none.</summary>
    public static ProgramType? Runs(SubjectCapabilities caps) =>
        Enum.GetValues<ProgramType>().Cast<ProgramType?>().FirstOrDefault(t => caps.HasFlag(Needs(t!.Value)));

    public static string Describe(ProgramType type) => type switch
    {
        ProgramType.Native => "a native program (cmake:TARGET)",
        ProgramType.CompilerRunner => "the compiler runner (roslyn)",
        _ => "the .NET/Mono program (main)",
    };

    /// <summary>
    /// Null when a subject with these capabilities can run the case, otherwise the first thing it lacks, with the
    /// built-ins of <paramref name="kinds"/> that have it. Every kind's <see cref="ISubjectKind.Validate"/> is this
    /// unless the kind knows more.
    /// </summary>
    public static Unrunnable? Check(SubjectCapabilities caps, CaseSpec cs, string subject, SubjectKinds kinds)
    {
        var type = cs.ProgramType;
        if (!caps.HasFlag(Needs(type)))
            return new("program", $"{Describe(type)} runs on {kinds.Having(Needs(type))}, not on {subject}, which runs "
                                  + (Runs(caps) is { } own ? Describe(own) : "no program"));
        if (cs.Display && !caps.HasFlag(SubjectCapabilities.Display))
            return new("display", $"a case with 'display' runs on a subject with a display "
                                  + $"({kinds.Having(SubjectCapabilities.Display)}), not on {subject}");
        if (cs.Fixture is not null && !caps.HasFlag(SubjectCapabilities.Registry))
            return new("fixture", $"subject '{subject}' has no Windows registry for the case's registry fixture; "
                                  + $"subjects with one: {kinds.Having(SubjectCapabilities.Registry)}");
        if (cs.TimeTravel is { } tt && tt.Subjects.Contains(subject) && !caps.HasFlag(SubjectCapabilities.TimeTravel))
            return new("capture.timeTravel.subjects", $"subject '{subject}' cannot record a run for time travel; "
                                                      + $"subjects that can: {kinds.Having(SubjectCapabilities.TimeTravel)}");
        return null;
    }
}
