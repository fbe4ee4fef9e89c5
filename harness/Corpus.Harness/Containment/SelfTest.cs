using System.Diagnostics;
using System.Runtime.InteropServices;

namespace Corpus.Harness.Containment;

/// <summary>
/// `corpus selftest`: the containment of this platform checked with real processes, in a published harness where no
/// test runner is (a win-x64 harness under Wine, from make test). Each check prints ok or FAIL; the exit code is the
/// number of failures (at most 1). The children are this harness again (`corpus selftest-child MODE`).
/// </summary>
public static class SelfTest
{
    /// <summary>The Windows side of containment is checked here (Job Objects, NTSTATUS), else the Linux side.</summary>
    private static bool Windows => IHost.Current.Platform == IHost.Windows;

    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(15);
    private const string RegHolderKey = @"HKCU\Software\CorpusSelftest\Fixture";

    public static async Task<int> RunAsync(string workDir, Capture.IToolRunner tools)
    {
        Directory.CreateDirectory(workDir);
        var wine = Windows ? WindowsNative.WineVersion() : null;
        Console.WriteLine($"selftest: {RuntimeInformation.OSDescription}{(wine is null ? "" : $" (under Wine {wine})")}, "
                          + $"{IHost.Current.Containment} containment");
        var failures = 0;
        async Task Check(string name, Func<Task<(bool Ok, string Detail)>> check)
        {
            var clock = Stopwatch.StartNew();
            (bool ok, string detail) r;
            try { r = await check(); }
            catch (Exception e) { r = (false, $"{e.GetType().Name}: {e.Message}"); }
            if (!r.ok) failures++;
            Console.WriteLine($"{(r.ok ? "ok  " : "FAIL")} {name}: {r.detail} ({clock.Elapsed.TotalSeconds:0.0} s)");
        }

        await Check("exit code and output lines", async () =>
        {
            var lines = 0;
            using var p = Start(workDir, "print", TimeSpan.FromSeconds(60), 512, (l, _, _) => { if (l == "selftest-hello") lines++; });
            var r = await p.WaitAsync();
            return (r.ExitCode == 7 && r.Stdout.Contains("selftest-hello") && lines == 1,
                    $"status {r.Status}, line seen {lines} time(s), containment: {r.Containment}");
        });

        await Check("wall-clock cap", async () =>
        {
            using var p = Start(workDir, "sleep", TimeSpan.FromSeconds(3), 512);
            var r = await p.WaitAsync();
            return (r.TimedOut && r.WallSeconds < 3 + Patience.TotalSeconds && !Alive(p.Pid),
                    $"status {r.Status} after {r.WallSeconds:0.0} s (cap 3 s), process {(Alive(p.Pid) ? "ALIVE" : "gone")}");
        });

        await Check("whole tree killed at the end", async () =>
        {
            var grandchild = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
            using var p = Start(workDir, "spawn", TimeSpan.FromSeconds(60), 512, (l, _, _) =>
            {
                if (l.StartsWith("grandchild ") && int.TryParse(l[11..], out var pid)) grandchild.TrySetResult(pid);
            });
            var gc = await grandchild.Task.WaitAsync(Patience * 2);
            var before = Alive(gc);
            var member = p.JobMembers is not { } members || members.Contains(gc);
            var r = await p.WaitAsync();   // the child exits at once, leaving the grandchild running
            p.Dispose();
            var gone = await Gone(gc);
            return (r.ExitCode == 0 && !r.TimedOut && before && gone && member,
                    $"child {r.Status}; grandchild {gc} {(before ? "running" : "ALREADY GONE")} when the child exited, "
                    + $"{(member ? "" : "NOT ")}in the job, {(gone ? "gone" : "STILL ALIVE")} after the run");
        });

        await Check("a dead harness takes its runs with it", async () =>
        {
            // A harness of its own runs a child that starts a grandchild; that harness is then killed outright.
            var psi = SelfStart("holder", workDir);
            psi.RedirectStandardOutput = true;
            using var holder = Process.Start(psi)!;
            int? child = null, gc = null;
            var until = DateTime.UtcNow + Patience * 3;
            while ((child is null || gc is null) && DateTime.UtcNow < until)
            {
                var line = await holder.StandardOutput.ReadLineAsync().WaitAsync(Patience * 3);
                if (line is null) break;
                if (line.StartsWith("holder-child ")) child = int.Parse(line[13..]);
                if (line.StartsWith("holder-grandchild ")) gc = int.Parse(line[18..]);
            }
            if (child is null || gc is null) return (false, "the holder never reported its run");
            if (!Alive(child.Value) || !Alive(gc.Value)) return (false, "the holder's child or grandchild ended before the kill");
            holder.Kill();   // TerminateProcess / SIGKILL: no handler of the holder runs
            holder.WaitForExit();
            var childGone = await Gone(child.Value);
            var gcGone = await Gone(gc.Value);
            return (childGone && gcGone, $"after the holder was killed: child {child} {(childGone ? "gone" : "ALIVE")}, "
                                         + $"grandchild {gc} {(gcGone ? "gone" : "ALIVE")}"
                                         + (Windows ? " (kill-on-job-close)" : " (supervisor)"));
        });

        await Check("a crash reads as it does on Linux", async () =>
        {
            using var p = Start(workDir, "crash", TimeSpan.FromSeconds(60), 512);
            var r = await p.WaitAsync();
            // .NET answers an access violation in native memory with a fail-fast: 0xC0000602 on Windows, SIGABRT on Linux.
            return (r.Signal == "SIGABRT" && !r.TimedOut, $"an access violation in the child: status {r.Status} after {r.WallSeconds:0.0} s");
        });

        await Check("memory cap", async () =>
        {
            const int capMB = 96, allocMB = 384;
            using var p = Start(workDir, "alloc", TimeSpan.FromSeconds(60), capMB);
            var limits = p.JobMemoryLimits;
            var r = await p.WaitAsync();
            var refused = r.MemoryCapped || r.Stdout.Contains("alloc-failed");
            var got = r.Stdout.Contains("allocated");
            var facts = $"child asked for {allocMB} MB under a {capMB} MB cap: {r.Status}, peak {r.PeakBytes >> 20} MB, "
                        + (refused ? "refused" : got ? "GOT IT" : "no answer")
                        + (limits is { } l ? $"; the job reports limits of {l.Process >> 20} MB per process, {l.Job >> 20} MB per job" : "");
            if (wine is null) return (refused && !got, facts);
            // Wine 8 accepts the limits, reads them back as 0 and does not enforce them. A Wine that starts enforcing fails
            // here, so that docs/wine.md and the smoke run's cap get revisited.
            return (got && !refused, $"{facts}; known gap under Wine {wine}: the limits are accepted, not enforced, "
                                     + "so the Linux cgroup around the Wine run is the real cap");
        });

        await Check("the run's memory is read while it runs", async () =>
        {
            // What a memoryMB capture trigger reads: the cgroup's usage on Linux, the Job Object's commit on Windows.
            const int heldMB = 128;
            var held = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            using var p = Start(workDir, "hold", TimeSpan.FromSeconds(60), 512, (l, _, _) => { if (l == "holding") held.TrySetResult(); });
            await held.Task.WaitAsync(Patience * 2);
            var read = p.MemoryNow();
            // Windows: what each member of the job reports, so a reading of 0 says which counter is missing.
            var counters = Windows
                ? "; per member (commit/working set/pagefile MB): " + string.Join(", ", (p.JobMembers ?? []).Select(pid =>
                      WindowsNative.Counters(pid) is { } c ? $"{pid} {c.Private >> 20}/{c.WorkingSet >> 20}/{c.Pagefile >> 20}" : $"{pid} unreadable"))
                : "";
            p.KillTree();
            await p.WaitAsync();
            var facts = $"a child holding {heldMB} MB reads as {read >> 20} MB{counters}";
            if (wine is null || read > 0) return (read >= (long)heldMB << 20, facts);
            // Wine 8 fills PagefileUsage, which the job's commit is read from; 0 would be a Wine that stopped doing so.
            return (false, $"{facts}: under Wine {wine} the job's processes report no commit");
        });

        if (Windows)
            await Check("a killed harness's registry fixture is rolled back by the next run", async () =>
            {
                // A harness of its own applies a fixture to HKCU and is killed before its restore; this harness, as the
                // next run, finds the dead harness's ledger and restores the key from the saved export.
                var psi = SelfStart("regholder", workDir);
                psi.RedirectStandardOutput = true;
                using var holder = Process.Start(psi)!;
                string? line;
                do line = await holder.StandardOutput.ReadLineAsync().WaitAsync(Patience * 3);
                while (line is not null && line != "regholder-applied");
                if (line is null) return (false, "the holder never applied its fixture: " + await holder.StandardOutput.ReadToEndAsync());
                var applied = tools.Run("reg.exe", ["query", RegHolderKey, "/v", "Value"], Patience).Stdout.Contains("REG_BINARY");
                holder.Kill();
                holder.WaitForExit();
                var left = Leftovers.Clean(Path.Combine(workDir, "ledger"), tools);
                var gone = tools.Run("reg.exe", ["query", RegHolderKey], Patience).ExitCode != 0;
                tools.Run("reg.exe", ["delete", @"HKCU\Software\CorpusSelftest", "/f"], Patience);
                return (applied && gone && left.Registry is [var one] && one.Contains("restored"),
                        $"applied and seen: {applied}; after the kill: {string.Join("; ", left.Registry ?? [])}; key {(gone ? "absent again" : "STILL THERE")}");
            });

        Console.WriteLine($"selftest: {(failures == 0 ? "all passed" : $"{failures} failed")}");
        return failures == 0 ? 0 : 1;
    }

    /// <summary>What a child of the selftest does; its exit code is the mode's.</summary>
    public static async Task<int> ChildAsync(string mode, string workDir, Capture.IToolRunner tools)
    {
        switch (mode)
        {
            case "print":
                Console.WriteLine("selftest-hello");
                return 7;
            case "sleep":
                await Task.Delay(TimeSpan.FromMinutes(2));
                return 0;
            case "spawn":
            {
                string[] cmd = Windows ? ["ping", "-n", "120", "127.0.0.1"] : ["sleep", "120"];
                // Windows: not redirected (ping writing to a pipe nobody reads could die on its own, and prove nothing).
                // Linux: redirected, since the run's end waits for its output pipes and sleep writes nothing.
                var linux = !Windows;
                var psi = new ProcessStartInfo(cmd[0]) { UseShellExecute = false, RedirectStandardOutput = linux, RedirectStandardError = linux };
                foreach (var a in cmd[1..]) psi.ArgumentList.Add(a);
                var gc = Process.Start(psi)!;
                Console.WriteLine($"grandchild {gc.Id}");
                if (Environment.GetEnvironmentVariable("CORPUS_SELFTEST_HOLD") == "1")
                    await Task.Delay(TimeSpan.FromMinutes(2));
                return 0;
            }
            case "crash":
                // An access violation far from null: .NET turns a fault near address 0 into a NullReferenceException instead.
                Marshal.WriteInt64(unchecked((nint)0x7ff0_dead_0000L), 1);
                return 0;
            case "alloc":
            {
                const int mb = 384;
                try
                {
                    var p = Marshal.AllocHGlobal((nint)mb << 20);
                    unsafe { for (long i = 0; i < (long)mb << 20; i += 4096) ((byte*)p)[i] = 1; }
                    Console.WriteLine("allocated");
                    return 0;
                }
                catch (OutOfMemoryException)
                {
                    Console.WriteLine("alloc-failed");
                    return 3;
                }
            }
            case "hold":
            {
                const int mb = 128;
                var p = Marshal.AllocHGlobal((nint)mb << 20);
                unsafe { for (long i = 0; i < (long)mb << 20; i += 4096) ((byte*)p)[i] = 1; }
                Console.WriteLine("holding");
                await Task.Delay(TimeSpan.FromMinutes(1));
                return 0;
            }
            case "tool":
            {
                // A long tool (sleep, standing for a gdb read) through ToolRunner; the test kills this harness meanwhile.
                var length = Environment.GetEnvironmentVariable("CORPUS_SELFTEST_SLEEP") ?? "120";
                Console.WriteLine("tool-starting");
                tools.Run("sleep", [length], TimeSpan.FromMinutes(3));
                return 0;
            }
            case "holder":
            {
                var spec = Spec(workDir, "spawn", TimeSpan.FromMinutes(2), 512, "holder-run");
                spec = spec with { Env = new Dictionary<string, string> { ["CORPUS_SELFTEST_HOLD"] = "1" } };
                using var p = new ContainedProcess(spec, (l, _, _) =>
                {
                    if (l.StartsWith("grandchild ")) Console.WriteLine($"holder-{l}");
                });
                Console.WriteLine($"holder-child {p.Pid}");
                await p.WaitAsync();
                return 0;
            }
            case "regholder":
            {
                var reg = Path.Combine(workDir, "selftest-fixture.reg");
                File.WriteAllText(reg, "Windows Registry Editor Version 5.00\r\n\r\n[HKEY_CURRENT_USER\\Software\\CorpusSelftest\\Fixture]\r\n"
                                       + "\"Value\"=hex:00,69,00,6f\r\n");
                Supervisor.UseLedger(Path.Combine(workDir, "ledger"));
                Fixtures.RegistryFixture.Apply(new Fixtures.WindowsRegistry(tools), [reg], Path.Combine(workDir, "regholder-state"));
                Console.WriteLine("regholder-applied");
                await Task.Delay(TimeSpan.FromMinutes(2));
                return 0;
            }
            default:
                throw new ArgumentException($"selftest-child: unknown mode '{mode}'");
        }
    }

    private static ProcessStartInfo SelfStart(string mode, string workDir)
    {
        var (file, args) = Self(mode, workDir);
        var psi = new ProcessStartInfo(file) { UseShellExecute = false };
        foreach (var a in args) psi.ArgumentList.Add(a);
        return psi;
    }

    /// <summary>This harness: corpus.exe itself, or `dotnet corpus.dll` where it runs through the host.</summary>
    private static (string File, IReadOnlyList<string> Args) Self(string mode, string workDir)
    {
        var host = Environment.ProcessPath ?? throw new InvalidOperationException("no process path");
        IReadOnlyList<string> args = ["selftest-child", "--mode", mode, "--dir", workDir];
        return Path.GetFileNameWithoutExtension(host) == "dotnet" ? (host, [typeof(SelfTest).Assembly.Location, .. args]) : (host, args);
    }

    private static ProcessSpec Spec(string workDir, string mode, TimeSpan timeout, int memoryMB, string? label = null)
    {
        var (file, args) = Self(mode, workDir);
        var name = label ?? mode;
        return new ProcessSpec(file, args, workDir, Path.Combine(workDir, $"{name}.stdout"), Path.Combine(workDir, $"{name}.stderr"),
                               timeout, (long)memoryMB << 20);
    }

    private static ContainedProcess Start(string workDir, string mode, TimeSpan timeout, int memoryMB,
                                          Action<string, bool, double>? onLine = null) =>
        new(Spec(workDir, mode, timeout, memoryMB), onLine);

    private static async Task<bool> Gone(int pid)
    {
        var until = DateTime.UtcNow + Patience;
        while (Alive(pid) && DateTime.UtcNow < until) await Task.Delay(50);
        return !Alive(pid);
    }

    private static bool Alive(int pid)
    {
        if (!Windows) return ProcStat.StartTime(pid) is { } start && ProcStat.Alive(pid, start);
        try
        {
            using var p = Process.GetProcessById(pid);
            return !p.HasExited;
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException) { return false; }
    }
}
