using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Runner.Phases;

/// <summary>
/// What a run does differently on each operating system: the tools around its command, what is watched while it
/// runs, and what it leaves behind for the cell, returned to the run's launcher. <see cref="LinuxRuns"/> and
/// <see cref="WindowsRuns"/> are the two sides.
/// </summary>
public interface IRunPlatform
{
    /// <summary>The command as this system launches it (a crash capture's or a trace's tool around it), and a capture
    /// error when a tool it would put around the command is missing.</summary>
    (Launch Launch, string? CaptureError) Wrap(Launch launch, string workDir, string label);

    /// <summary>Called before the process starts; the scope learns the pid and ends with the run.</summary>
    IRunScope Begin();

    /// <summary>After the run: the crash files, dumps and traces it left, as captures.</summary>
    RunFindings Collect(RunResult run, int pid, string workDir, string label);

    public static IRunPlatform For(string root, IToolRunner tools, CaseSpec cs, Subject subject, string program, CellResult cell) =>
        OperatingSystem.IsWindows() ? new WindowsRuns(tools, cs, cell) : new LinuxRuns(root, tools, cs, subject, program);
}

/// <summary>What runs beside one process of the cell, from before it starts until the run is over.</summary>
public interface IRunScope : IDisposable
{
    void Started(int pid);
}
