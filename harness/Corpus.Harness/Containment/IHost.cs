using System.Runtime.Versioning;

namespace Corpus.Harness.Containment;

/// <summary>
/// What differs between the operating systems the harness itself runs on, beside a run's containment
/// (<see cref="IRunSession"/>) and a run's platform side (<see cref="Runner.Phases.IRunPlatform"/>): one class a side,
/// <see cref="LinuxHost"/> and <see cref="WindowsHost"/>, chosen once (<see cref="Current"/>). Code elsewhere asks the
/// host, never the operating system.
/// </summary>
public interface IHost
{
    public const string Linux = "linux", Windows = "windows";

    /// <summary>"linux" or "windows": what a case's platforms and the native subjects name.</summary>
    string Platform { get; }

    /// <summary>A program's file name here ("dotnet", or "dotnet.exe" on Windows).</summary>
    string Executable(string name);

    /// <summary>
    /// Runs and tools lead their own session and are written in the ledger, so the supervisor and the next harness
    /// can take what a dead harness left (Linux); on Windows a run's Job Object dies with the harness instead.
    /// </summary>
    bool Ledgered { get; }

    /// <summary>This harness in the ledger: its pid and its start time, so a reused pid is never taken for it.</summary>
    string Owner { get; }

    /// <summary>artifacts/latest as a symbolic link (Windows grants one only with a privilege).</summary>
    bool LinksLatest { get; }

    /// <summary>Where the harness's tools keep their temp files when TMPDIR is unset: the corpus's own build/tmp on
    /// Linux (two empty folders per dotnet build, the sockets of killed CoreCLR runs); the user's on Windows.</summary>
    string? CorpusTemp(string root);

    /// <summary>The longest path of a Unix socket, where sockets are files; null where they are not.</summary>
    int? SocketPathMax { get; }

    /// <summary>Processes take Unix signals (a SIGQUIT thread dump, perf, a Wine around the program).</summary>
    [UnsupportedOSPlatformGuard("windows")]
    bool UnixSignals { get; }

    /// <summary>How a contained run is held: a process group and cgroup, or a Job Object.</summary>
    string Containment { get; }

    /// <summary>Where a .NET SDK installs its runtimes when no dotnet is on PATH.</summary>
    string DotnetRoot { get; }

    /// <summary>Creates a folder; false when it already exists, so two harnesses cannot both claim it.</summary>
    bool MakeDir(string path);

    /// <summary>A contained run's session on this host.</summary>
    internal IRunSession Session(ProcessSpec spec, Action<string?, bool> onLine);

    public static IHost Current { get; } = OperatingSystem.IsWindows() ? new WindowsHost() : new LinuxHost();
}
