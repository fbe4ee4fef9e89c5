using System.Diagnostics;
using System.Text.RegularExpressions;
using Corpus.Harness.Containment;

namespace Corpus.Harness.Capture;

/// <summary>
/// procdump -ma under Wine: winedbg, run in the target's own cell (its WINEPREFIX and TMPDIR, read from the target's
/// environment), writes a minidump of the Windows process and every thread's native stack. Managed frames of a
/// Windows .NET process are not named: the DAC does not cross from Linux to a Windows process.
/// </summary>
/// <param name="limitSec">How long one winedbg command may take. A hang holds still, so its snapshots may take longer
/// (a minidump of the hung .NET program took 7–11 s, 12 s for the C++ one at load 19, and 34 s and more than 45 s on
/// a VM with 2–3× slower page faults): there a killed winedbg, which kills the program it is attached to, would cost
/// more than a slow one.</param>
public sealed partial class WineDbgSnapshot(string wine, double limitSec = 20) : ICaptureBackend
{
    public string Name => "winedbg";
    // winedbg is started the way Wine starts its own programs, through the subject's loader (`wine winedbg`): a
    // build tree or a bare wine64 has no winedbg script beside it.
    public string? Unavailable => File.Exists(wine) ? null : $"no Wine loader at {wine} to run winedbg with";

    public async Task<CaptureRecord> SnapshotAsync(ContainedProcess target, string dir, int index, CancellationToken cancel)
    {
        var at = target.Elapsed;
        var env = CellEnvironment(target.Pid);
        var comm = File.ReadAllText($"/proc/{target.Pid}/comm").Trim();
        var clock = Stopwatch.StartNew();
        var list = await RunAsync(env, ["--command", "info process"]);
        var wpid = WindowsPid(list, comm)
                   ?? throw new InvalidOperationException($"winedbg lists no process named like '{comm}': {list.Trim()}");
        // "bt all" walks every process of the cell and hangs on one that exits meanwhile: attach to ours only. A
        // debugger session may still be detaching ("Can't attach process …: error 87"): try again a few times.
        IReadOnlyList<string> tids = [];
        var bt = "";
        var script = Path.Combine(dir, $"snapshot-{index}.winedbg");
        for (var attempt = 0; attempt < 5 && !target.HasExited; attempt++)
        {
            if (attempt > 0) await Task.Delay(300);
            tids = ThreadIds(await RunAsync(env, ["--command", "info thread"]), wpid);
            if (tids.Count == 0) continue;
            File.WriteAllLines(script, [$"attach 0x{wpid}", .. tids.Select(t => $"bt 0x{t}"), "detach", "quit"]);
            bt = await RunAsync(env, ["--file", script]);
            if (bt.Contains("Backtrace:")) break;
        }
        var threadsFile = Path.Combine(dir, $"snapshot-{index}.threads.txt");
        File.WriteAllText(threadsFile, bt);
        var threads = NameFrames(Threads(bt, tids));
        var walked = clock.Elapsed.TotalSeconds;
        // The minidump after the walk: its session does not detach before winedbg exits.
        var dump = Path.Combine(dir, $"snapshot-{index}.mdmp");
        string? failed = null;
        try { await RunAsync(env, ["--minidump", dump, $"0x{wpid}"], target); }
        catch (InvalidOperationException e) { failed = e.Message; }
        if (!File.Exists(dump)) failed ??= $"winedbg --minidump wrote no {dump}";
        var seconds = clock.Elapsed.TotalSeconds;
        const string note = "native stacks of every thread (winedbg bt; frames of Wine's DLLs without symbols named by the nearest "
                            + "export); managed frames are not named under Wine";
        // The stacks are kept when only the minidump failed: they are what a hang's evidence reads.
        if (failed is not null)
            return threads.Count > 0
                ? new CaptureRecord(Name, threadsFile, new FileInfo(threadsFile).Length, Math.Round(seconds, 3), Math.Round(at, 3), threads,
                                    $"{note}; stacks in {walked:0.0} s, but no minidump: {failed}")
                : throw new InvalidOperationException(failed);
        return new CaptureRecord(Name, dump, new FileInfo(dump).Length, Math.Round(seconds, 3), Math.Round(at, 3), threads,
                                 $"{note}; stacks in {walked:0.0} s, minidump in {seconds - walked:0.0} s");
    }

    /// <summary>Names "module+0xOFF" frames of Wine's own DLLs by their export table (see <see cref="PeExports"/>).</summary>
    private IReadOnlyList<ThreadStack> NameFrames(IReadOnlyList<ThreadStack> threads)
    {
        var dllDir = WineDllDirectory(wine);
        if (dllDir is null) return threads;
        var tables = new Dictionary<string, PeExports?>();
        return threads.Select(t => t with { Frames = t.Frames.Select(f => NameFrame(f, m =>
        {
            if (!tables.TryGetValue(m, out var table))
            {
                var file = Path.Combine(dllDir, m + ".dll");
                tables[m] = table = File.Exists(file) ? PeExports.Read(file) : null;
            }
            return table;
        })).ToList() }).ToList();
    }

    public static string NameFrame(string frame, Func<string, PeExports?> exports)
    {
        if (UnnamedFrame().Match(frame) is not { Success: true } m || exports(m.Groups[1].Value) is not { } table) return frame;
        var name = table.Nearest(Convert.ToUInt32(m.Groups[2].Value, 16));
        return name is null ? frame : $"{m.Groups[1].Value}!{name}";
    }

    /// <summary>
    /// Wine's 64-bit PE DLLs for a loader: Debian's layout from /usr/bin/wine or /usr/lib/wine/wine64, an install
    /// prefix's, or a build tree's (none there: its winedbg names frames from the build's own symbols).
    /// </summary>
    public static string? WineDllDirectory(string wine)
    {
        var bin = Path.GetDirectoryName(Path.GetFullPath(wine))!;
        return new[] { Path.Combine(bin, "..", "lib", "x86_64-linux-gnu", "wine", "x86_64-windows"),
                       Path.Combine(bin, "..", "x86_64-linux-gnu", "wine", "x86_64-windows"),
                       Path.Combine(bin, "..", "lib", "wine", "x86_64-windows"), Path.Combine(bin, "..", "lib64", "wine", "x86_64-windows") }
            .Select(Path.GetFullPath).FirstOrDefault(Directory.Exists);
    }

    /// <summary>The Wine variables of the target's own environment, so winedbg talks to the cell's wineserver.</summary>
    private static Dictionary<string, string> CellEnvironment(int pid)
    {
        var env = new Dictionary<string, string>();
        foreach (var entry in File.ReadAllText($"/proc/{pid}/environ").Split('\0'))
            if (entry.IndexOf('=') is var eq and > 0 && entry[..eq] is "WINEPREFIX" or "TMPDIR" or "HOME" or "WINESERVER" or "DISPLAY")
                env[entry[..eq]] = entry[(eq + 1)..];
        if (!env.ContainsKey("WINEPREFIX")) throw new InvalidOperationException($"process {pid} has no WINEPREFIX: not a Wine process");
        env["WINEDEBUG"] = "-all";
        return env;
    }

    internal async Task<string> RunAsync(Dictionary<string, string> env, string[] args, ContainedProcess? target = null)
    {
        // In a process group of its own (setsid execs in place: the pid is the group's), so that whatever it leaves
        // behind can be ended with it.
        var psi = new ProcessStartInfo("setsid") { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
        psi.ArgumentList.Add(wine);
        psi.ArgumentList.Add("winedbg");
        foreach (var a in args) psi.ArgumentList.Add(a);
        foreach (var kv in env) psi.Environment[kv.Key] = kv.Value;
        using var p = Process.Start(psi)!;
        p.StandardInput.Close();
        var output = p.StandardOutput.ReadToEndAsync();
        var errors = p.StandardError.ReadToEndAsync();
        // An attach to a process that exits meanwhile hangs winedbg: do not wait long for it.
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(limitSec));
        using var done = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token);
        // Nor after the target has gone: a minidump of an exited process never finishes.
        var gone = target is null ? Task.Delay(Timeout.Infinite, done.Token)
            : Task.Run(async () => { while (!target.HasExited) await Task.Delay(100, done.Token); }, done.Token);
        await Task.WhenAny(p.WaitForExitAsync(timeout.Token), gone);
        done.Cancel();
        try { await gone; }
        catch (OperationCanceledException) { }
        if (!p.HasExited)
        {
            Native.Kill(-p.Id, Native.SIGKILL);
            p.Kill(entireProcessTree: true);
            throw new InvalidOperationException(target is { HasExited: true }
                ? $"winedbg {string.Join(' ', args)} stopped: the process exited meanwhile"
                : $"winedbg {string.Join(' ', args)} took more than {limitSec} s (the process may have been exiting)");
        }
        // winedbg can end while a process of its own lives on, reparented and holding the output pipes: a minidump of
        // a program that was exiting, still waiting 8 minutes later, held a harness in this read. Its group ends it.
        var both = Task.WhenAll(output, errors);
        if (await Task.WhenAny(both, Task.Delay(TimeSpan.FromSeconds(2))) != both)
        {
            Native.Kill(-p.Id, Native.SIGKILL);
            if (await Task.WhenAny(both, Task.Delay(TimeSpan.FromSeconds(5))) != both)
                throw new InvalidOperationException($"winedbg {string.Join(' ', args)} ended, but a process it left holds its output");
            throw new InvalidOperationException($"winedbg {string.Join(' ', args)} ended and left a process behind, killed: "
                                                + (output.Result + errors.Result).Trim());
        }
        return output.Result + errors.Result;
    }

    /// <summary>The hex Windows pid of the process whose executable starts with the Linux comm (15 characters of it).</summary>
    public static string? WindowsPid(string infoProcess, string comm)
    {
        foreach (Match m in ProcessLine().Matches(infoProcess))
            if (m.Groups[2].Value.StartsWith(comm, StringComparison.OrdinalIgnoreCase)) return m.Groups[1].Value;
        return null;
    }

    /// <summary>The thread ids winedbg's `info thread` lists under one process.</summary>
    public static IReadOnlyList<string> ThreadIds(string infoThread, string wpid)
    {
        var ids = new List<string>();
        var ours = false;
        foreach (var line in infoThread.Split('\n'))
        {
            if (ThreadOwner().Match(line) is { Success: true } owner)
                ours = Convert.ToInt64(owner.Groups[1].Value, 16) == Convert.ToInt64(wpid, 16);
            else if (ours && ThreadLine().Match(line) is { Success: true } t) ids.Add(t.Groups[1].Value);
        }
        return ids;
    }

    /// <summary>One "Backtrace:" block per thread asked for, in order; frames as module!function (or module+offset).</summary>
    public static IReadOnlyList<ThreadStack> Threads(string bt, IReadOnlyList<string> tids)
    {
        var threads = new List<ThreadStack>();
        List<string>? frames = null;
        foreach (var line in bt.Split('\n'))
        {
            if (line.StartsWith("Backtrace:"))
            {
                frames = [];
                threads.Add(new ThreadStack($"thread 0x{(threads.Count < tids.Count ? tids[threads.Count] : "?")}", frames));
                continue;
            }
            if (frames is null || Frame().Match(line) is not { Success: true } f) continue;
            var what = f.Groups[1].Value;
            var module = Module().Match(what) is { Success: true } mm ? mm.Groups[1].Value : "?";
            frames.Add(what.StartsWith("in ") ? $"{module}{Offset().Match(what).Groups[1].Value}"
                       : $"{module}!{what[..(what.IndexOfAny(['(', ' ', '[']) is var i and >= 0 ? i : what.Length)]}");
        }
        return threads;
    }

    [GeneratedRegex(@"^\s*=?(?:0x)?([0-9a-f]{8})\s+\d+\s+(?:\\_ )?'([^']+)'", RegexOptions.Multiline)]
    private static partial Regex ProcessLine();

    [GeneratedRegex(@"^([0-9a-f]{8}) ")]
    private static partial Regex ThreadOwner();

    [GeneratedRegex(@"^\t([0-9a-f]{8})\s")]
    private static partial Regex ThreadLine();

    [GeneratedRegex(@"^\s*(?:=>)?\s*\d+ 0x[0-9a-f]+ (.*)$")]
    private static partial Regex Frame();

    [GeneratedRegex(@"(?:^| )in ([\w.\-]+) \(")]
    private static partial Regex Module();

    [GeneratedRegex(@"\((\+0x[0-9a-f]+)\)")]
    private static partial Regex Offset();

    [GeneratedRegex(@"^([\w.\-]+)\+0x([0-9a-f]+)$")]
    private static partial Regex UnnamedFrame();
}
