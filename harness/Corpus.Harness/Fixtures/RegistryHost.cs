using Corpus.Harness.Containment;
using Corpus.Harness.Capture;

namespace Corpus.Harness.Fixtures;

/// <summary>A Windows registry that reg.exe can export, import and delete in: this Windows machine, or a Wine prefix.</summary>
public interface IRegistryHost
{
    /// <summary>For the report: "Wine prefix …" or "this Windows machine".</summary>
    string Describe { get; }

    /// <summary>reg.exe with these arguments, against this registry.</summary>
    ToolResult Reg(IReadOnlyList<string> args);

    /// <summary>How reg.exe names one of our files.</summary>
    string FileArg(string path);

    /// <summary>What the ledger keeps so that a later harness can reach the same registry: kind and its details.</summary>
    IReadOnlyDictionary<string, string> Spec { get; }

    /// <summary>Each reg step that never reached reg.exe and was started again, as said.</summary>
    IReadOnlyList<string> Retried => [];
}

public static class RegistryHosts
{
    public static readonly TimeSpan Patience = TimeSpan.FromMinutes(2);

    /// <summary>
    /// The registry a cell's fixture goes into: the one its isolation brings (a Wine prefix's), else, for a subject
    /// with a registry on Windows, this machine's.
    /// </summary>
    public static IRegistryHost For(Model.Subject subject, Subjects.CellIsolation isolation, IToolRunner tools, Model.Budget budget) =>
        isolation is IRegistryCell cell ? cell.OpenRegistry(subject, budget)
        : subject.Capabilities.HasFlag(Subjects.SubjectCapabilities.Registry) && IHost.Current.Platform == IHost.Windows ? new WindowsRegistry(tools)
        : throw new FixtureException($"subject {subject.Name} has no Windows registry for a fixture");

    /// <summary>The host a ledger entry names, or null with the reason when it is gone (a Wine prefix taken down).</summary>
    public static (IRegistryHost? Host, string? Gone) FromSpec(IReadOnlyDictionary<string, string> spec, IToolRunner tools) =>
        spec.GetValueOrDefault("kind") switch
        {
            "windows" => IHost.Current.Platform == IHost.Windows ? (new WindowsRegistry(tools), null)
                : (null, "a Windows registry, and this harness is not on Windows"),
            "wine" when spec.TryGetValue("env", out var env) && spec.TryGetValue("wine", out var wine) =>
                File.Exists(env) ? (new WineRegistry(wine, env, tools), null)
                : (null, $"its Wine prefix is gone with the cell ({Path.GetDirectoryName(env)} was taken down)"),
            var k => (null, $"unknown registry kind '{k}'"),
        };
}

/// <summary>A cell isolation with a registry of its own (a Wine cell's prefix), kept for all of the cell's runs.</summary>
public interface IRegistryCell
{
    IRegistryHost OpenRegistry(Model.Subject subject, Model.Budget budget);

    /// <summary>What each attempt to bring the registry's cell up said when it failed before one came up.</summary>
    IReadOnlyList<string> Retried { get; }
}

/// <summary>reg.exe of this Windows machine: the real registry, so the fixture's ledger matters most here.</summary>
public sealed class WindowsRegistry(IToolRunner tools) : IRegistryHost
{
    public string Describe => "this Windows machine's registry";
    public ToolResult Reg(IReadOnlyList<string> args) => tools.Run("reg.exe", args, RegistryHosts.Patience);
    public string FileArg(string path) => Path.GetFullPath(path);
    public IReadOnlyDictionary<string, string> Spec => new Dictionary<string, string> { ["kind"] = "windows" };
}

/// <summary>
/// Wine's reg.exe in a cell's prefix: the environment of harness/wine/cell.sh's env file (WINEPREFIX, TMPDIR, …), so
/// it talks to that prefix's own wineserver, which holds the registry in memory (it writes system.reg when it exits).
/// </summary>
public sealed class WineRegistry(string wine, string envFile, IToolRunner tools) : IRegistryHost
{
    public string Describe => $"Wine prefix of {Path.GetDirectoryName(envFile)}";

    private readonly List<string> _retried = [];
    public IReadOnlyList<string> Retried { get { lock (_retried) return [.. _retried]; } }

    /// <summary>
    /// reg.exe in the prefix. A step that never reached reg.exe is started again, at most
    /// <see cref="Runner.RunLauncher.LaunchAttempts"/> times in all, and each such attempt is kept in <see cref="Retried"/>:
    /// every reg step here is idempotent, and reg.exe itself always says why it fails.
    /// </summary>
    public ToolResult Reg(IReadOnlyList<string> args)
    {
        var env = File.ReadAllLines(envFile).Where(l => l.Contains('=')).ToList();
        for (var attempt = 1; ; attempt++)
        {
            var r = tools.Run("env", [.. env, wine, "reg", .. args], RegistryHosts.Patience);
            if (NeverReached(r) is not { } why || attempt == Runner.RunLauncher.LaunchAttempts) return r;
            lock (_retried)
                _retried.Add($"reg {string.Join(' ', args.Take(2))}: attempt {attempt} of {Runner.RunLauncher.LaunchAttempts} never reached reg.exe: {why}");
            Thread.Sleep(500);
        }
    }

    /// <summary>
    /// Why a reg run never reached reg.exe, or null: exit non-zero with not a word (seen once in about 30 fixture cells
    /// with other Wine cells alongside), or start.exe's "ShellExecuteEx failed: Internal error": reg.exe died before it
    /// finished starting (Wine's STATUS_INTERNAL_ERROR; 2 of 430 fixture cells in two loops side by side, 2026-11-28).
    /// </summary>
    public static string? NeverReached(ToolResult r) =>
        r.TimedOut ? null
        : r.ExitCode != 0 && r.Stdout.Trim().Length == 0 && r.Stderr.Trim().Length == 0 ? $"exit {r.ExitCode} with no output"
        : (r.Stdout + r.Stderr).Contains("ShellExecuteEx failed: Internal error", StringComparison.Ordinal)
            ? $"exit {r.ExitCode}: start.exe's \"ShellExecuteEx failed: Internal error\" (reg.exe died before it finished starting)"
        : null;

    /// <summary>Wine maps the Linux root to drive Z:.</summary>
    public string FileArg(string path) => "Z:" + Path.GetFullPath(path).Replace('/', '\\');

    public IReadOnlyDictionary<string, string> Spec =>
        new Dictionary<string, string> { ["kind"] = "wine", ["wine"] = wine, ["env"] = envFile };
}
