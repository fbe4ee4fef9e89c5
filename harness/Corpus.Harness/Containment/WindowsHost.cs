using System.Diagnostics;

namespace Corpus.Harness.Containment;

/// <summary>The harness on Windows: a Job Object per run, whose handle dies with the harness; no ledger for runs.</summary>
public sealed class WindowsHost : IHost
{
    public string Platform => IHost.Windows;
    public string Executable(string name) => name.EndsWith(".exe", StringComparison.OrdinalIgnoreCase) ? name : name + ".exe";
    public bool Ledgered => false;
    public string Owner { get; } = $"{Environment.ProcessId}-{Process.GetCurrentProcess().StartTime.ToUniversalTime().Ticks}";
    public bool LinksLatest => false;
    public string? CorpusTemp(string root) => null;
    public int? SocketPathMax => null;
    public bool UnixSignals => false;
    public string Containment => "Job Object";
    public string DotnetRoot => Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.ProgramFiles), "dotnet");

    public bool MakeDir(string path)
    {
        if (WindowsNative.CreateDirectory(path, 0)) return true;
        var error = System.Runtime.InteropServices.Marshal.GetLastPInvokeError();
        if (error == 183 /* ERROR_ALREADY_EXISTS */) return false;
        throw new Win32Failure($"CreateDirectory({path})", error);
    }
    IRunSession IHost.Session(ProcessSpec spec, Action<string?, bool> onLine) => new WindowsJob(spec, onLine);
}
