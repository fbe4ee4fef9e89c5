namespace Corpus.Harness.Containment;

/// <summary>The harness on Linux: setsid, memory cgroups, the supervisor and its ledger.</summary>
public sealed class LinuxHost : IHost
{
    public string Platform => IHost.Linux;
    public string Executable(string name) => name;
    public bool Ledgered => true;
    public string Owner { get; } = $"{Environment.ProcessId}-{ProcStat.StartTime(Environment.ProcessId)}";
    public bool LinksLatest => true;
    public string? CorpusTemp(string root) => Path.Combine(root, "build", "tmp");
    public int? SocketPathMax => 107;
    public bool UnixSignals => true;
    public string Containment => "process group and cgroup";
    public string DotnetRoot => "/usr/share/dotnet";
    public bool MakeDir(string path) => Native.MakeDir(path);
    IRunSession IHost.Session(ProcessSpec spec, Action<string?, bool> onLine) => new CgroupSession(spec, onLine);
}
