using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;
using Corpus.Harness.Containment;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// The native trace backends. perf is real here: a small C program (built with the corpus's gcc) makes memfd mappings
/// and unmaps them, with or without closing the descriptor, inside a real ContainedProcess launched through perf. The
/// Wine channel parser reads lines cut from a real +win trace of attachthreadinput-ui-hang's cpp bug cell (Wine 8.0).
/// wpr.exe cannot exist here: a shell script stands in for it, as for procdump.exe in WindowsPathTests.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public class NativeTraceTests
{
    /// <summary>bug: N memfds mapped shared, filled, unmapped, kept open until after the marker; fix: closed after each munmap.</summary>
    private const string LeakProgram = """
        #define _GNU_SOURCE
        #include <stdio.h>
        #include <string.h>
        #include <sys/mman.h>
        #include <unistd.h>
        __attribute__((noinline)) static int leak_one(size_t bytes) {
            int fd = memfd_create("trace-test", MFD_CLOEXEC);
            if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) return -1;
            char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p == MAP_FAILED) return -1;
            memset(p, 7, bytes);
            munmap(p, bytes);
            return fd;
        }
        int main(int argc, char **argv) {
            int fix = argc > 1 && strcmp(argv[1], "fix") == 0, fds[3];
            void *priv = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            munmap(priv, 1 << 20);   /* an anonymous mapping: not a view of an object */
            for (int i = 0; i < 3; i++) {
                fds[i] = leak_one(4 << 20);
                if (fds[i] < 0) return 1;
                if (fix) close(fds[i]);
            }
            printf("REPRO-REACHED leaked\n");
            fflush(stdout);
            usleep(2000000);   /* the cut is when the harness read the marker: a CI host read it over 200 ms late */
            if (!fix) for (int i = 0; i < 3; i++) close(fds[i]);
            return 0;
        }
        """;

    private const string SpinProgram = """
        #include <stdio.h>
        volatile unsigned long sink;
        __attribute__((noinline)) static void spin_here(void) { for (unsigned long i = 0; i < 400000000UL; i++) sink += i; }
        int main(void) { spin_here(); printf("%lu\n", sink); return 0; }
        """;

    private static string Compile(string dir, string name, string source)
    {
        var c = Path.Combine(dir, name + ".c");
        File.WriteAllText(c, source);
        var exe = Path.Combine(dir, name);
        var r = ToolRunner.Instance.Run("gcc", ["-O1", "-g", "-o", exe, c], TimeSpan.FromMinutes(1));
        Assert.True(r.ExitCode == 0, r.Describe("gcc"));
        return exe;
    }

    /// <summary>One contained run of the program under perf; the cut is the marker's time in the run.</summary>
    private static async Task<(NativeTraceData Trace, double? Marker, RunResult Run, long Bytes)> Record(string dir, string exe, string[] args,
                                                                                                           IReadOnlyList<string> events, string? buffer = null)
    {
        var perf = new PerfTrace();
        Assert.Null(perf.Unavailable);
        var data = Path.Combine(dir, $"perf-{Guid.NewGuid():n}.data");
        var launch = perf.Wrap(new Launch(exe, args, new Dictionary<string, string>()), data, events, buffer);
        double? marker = null;
        using var p = new ContainedProcess(new ProcessSpec(launch.File, launch.Args, dir, data + ".out", data + ".err", TimeSpan.FromSeconds(60), 256L << 20),
                                           (line, _, t) => { if (line.StartsWith("REPRO-REACHED leaked")) marker ??= t; });
        var run = await p.WaitAsync();
        var trace = perf.Read(ToolRunner.Instance, data, data + ".txt", p.StartedMonotonic);
        return (trace, marker, run, new FileInfo(data).Length);
    }

    private static string[] TracefsMounts() =>
        [.. File.ReadLines("/proc/self/mountinfo").Where(l => l.Contains(" - tracefs ")).Select(l => l.Split(' ')[4])];

    [Fact]
    public async Task PerfSeesEveryMunmapWhoseDescriptorStaysOpenAtTheMarker()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-perf-").FullName;
        try
        {
            var exe = Compile(dir, "leak", LeakProgram);
            var events = PerfTrace.EventArgs(NativeTraceKind.Api);
            var tracefsBefore = TracefsMounts();
            var (bug, marker, run, bytes) = await Record(dir, exe, ["bug"], events);
            Assert.Equal("exit 0", run.Status);
            // perf mounted tracefs for the syscall tracepoints in the run's own mount namespace, not on the host.
            Assert.Equal(tracefsBefore, TracefsMounts());
            Assert.NotNull(marker);
            Assert.InRange(bytes, 1, 4 << 20);
            var leak = MappingLeakTrace.Find(bug, marker);
            // the anonymous private mapping is not a view
            Assert.True(leak.Views.Count == 3,
                        $"{leak.Views.Count} views in {string.Join(", ", bug.Events.GroupBy(e => e.Name).Select(g => $"{g.Key}×{g.Count()}"))}");
            Assert.True(leak.NotClosed.Count == 3,
                        $"marker at {marker:0.000} s of {run.WallSeconds:0.000} s; unmapped, closed at " +
                        string.Join(", ", leak.Views.Select(v => $"{v.UnmappedAt:0.000} {v.ClosedAt?.ToString("0.000") ?? "-"}")));
            Assert.Equal(3L * (4 << 20), leak.NotClosedBytes);
            Assert.All(leak.Views, v => Assert.Equal("memfd_create", v.Created));
            Assert.All(leak.Views, v => Assert.Contains(v.UnmapFrames, f => f.Contains("leak_one")));
            // On the run's clock: every munmap came before the marker, within the run.
            Assert.All(leak.Views, v => Assert.InRange(v.UnmappedAt, 0, marker!.Value));
            // Up to the end of the trace, the bug closes them all (after its hold): the cut is what makes it a leak.
            Assert.Empty(MappingLeakTrace.Find(bug).NotClosed);

            var (fix, fixMarker, _, _) = await Record(dir, exe, ["fix"], events);
            var closed = MappingLeakTrace.Find(fix, fixMarker);
            Assert.Equal(3, closed.Views.Count);
            Assert.Empty(closed.NotClosed);
        }
        finally { Directory.Delete(dir, true); }
    }

    /// <summary>The backend as the runner drives it: Wrap, a contained run, ReadAsync with the run's markers.</summary>
    [Fact]
    public async Task PerfBackendGivesTheEvidenceItsUnmappedOpenViewsAtTheMarker()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-perf-").FullName;
        try
        {
            var exe = Compile(dir, "leak", LeakProgram);
            var spec = new TraceCapture(TraceCapture.Api, [], null, null, [], [], [], null);
            foreach (var (variant, held) in new[] { ("bug", 3), ("fix", 0) })
            {
                var backend = new PerfTrace();
                var run = new TraceRun(spec, Path.Combine(dir, variant), Path.Combine(dir, variant, "tmp"), "trace", ToolRunner.Instance, dir)
                          { Analysers = [new MappingLeakAnalyser()] };
                Directory.CreateDirectory(run.Tmp);
                var launch = backend.Wrap(new Launch(exe, [variant], new Dictionary<string, string>()), run);
                var markers = new Dictionary<string, double>();
                using var p = new ContainedProcess(new ProcessSpec(launch.File, launch.Args, run.Dir, run.File("o"), run.File("e"), TimeSpan.FromSeconds(60), 256L << 20),
                                                   (line, _, t) => { if (line.StartsWith("REPRO-REACHED")) markers.TryAdd(line.Trim(), t); });
                var result = await p.WaitAsync();
                var model = await backend.ReadAsync(run with { Markers = markers }, result, CancellationToken.None);
                Assert.Equal([run.File("perf.data"), run.File("perf.script.txt")], model.Files);
                var count = TraceEvidence.Count(new TraceCountSpec("^unmapped-open at=leaked ", held, held), model);
                Assert.True(count.Holds, $"{variant}: {count.Count} unmapped-open at the marker: {string.Join(" | ", count.First)}");
                if (held > 0)
                    Assert.Matches(@"^t=\d+\.\d{3}s unmapped-open at=leaked fd=\d+ bytes=4194304 created=memfd_create unmapped=0\.\d{3}s by=leak_one$", count.First[0]);
                // Each syscall is one event with its return value, fds in decimal.
                Assert.Contains(model.Events, e => e.Name == "munmap" && e.Fields["ret"] == "0" && e.Fields["len"] == "4194304");
                var memfds = model.Events.Where(e => e.Name == "memfd_create").ToList();
                Assert.Equal(3, memfds.Count);
                Assert.True(TraceEvidence.Count(new TraceCountSpec($"^close fd={memfds[0].Fields["ret"]}( |$)", 1, null), model).Holds);
                Assert.Single(model.Events, e => e.Name == "marker" && e.Fields["line"] == "REPRO-REACHED leaked");
            }
        }
        finally { Directory.Delete(dir, true); }
    }

    /// <summary>A ring buffer too small for the run's records (16 KB: two syscalls with their 8 KB stacks) loses some, and
    /// reading that file is an error naming the loss, never a trace with the lost calls missing.</summary>
    [Fact]
    public async Task PerfRefusesAFileThatLostRecords()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-perf-").FullName;
        try
        {
            var exe = Compile(dir, "leak", LeakProgram);
            var e = await Assert.ThrowsAsync<InvalidOperationException>(() => Record(dir, exe, ["bug"], PerfTrace.EventArgs(NativeTraceKind.Api), "16K"));
            Assert.Matches(@"^perf lost records of .*perf-\w+\.data: Processed \d+ events and lost \d+ chunks", e.Message);
        }
        finally { Directory.Delete(dir, true); }
    }

    /// <summary>perf's records are on the kernel's clock, the run's markers on the harness's: a time namespace's offset
    /// between them is read from /proc (ci/unit.sh runs the perf tests again 1000 s ahead).</summary>
    [Fact]
    public void TheKernelClocksOffsetIsTheTimeNamespaces()
    {
        Assert.Equal(1000.5, PerfTrace.MonotonicOffset("monotonic        1000 500000000\nboottime            0         0\n"));
        Assert.Equal(-7, PerfTrace.MonotonicOffset("boottime 3 0\nmonotonic -7 0\n"));
        Assert.Equal(0, PerfTrace.MonotonicOffset(""));
        var r = ToolRunner.Instance.Run("unshare", ["--time", "--monotonic", "1000", "cat", "/proc/self/timens_offsets"], TimeSpan.FromSeconds(30));
        Assert.True(r.ExitCode == 0, r.Describe("unshare --time"));
        Assert.Equal(1000, PerfTrace.MonotonicOffset(r.Stdout));
    }

    [Fact]
    public void PerfScriptsLossWarningsAreRead()
    {
        const string warned = "Warning:\nProcessed 130 events and lost 19 chunks!\n\nCheck IO/CPU overload!\n\nWarning:\nProcessed 54 samples and lost 48.15%!\n";
        Assert.Equal("Processed 130 events and lost 19 chunks; Processed 54 samples and lost 48.15%", PerfTrace.Lost(warned));
        Assert.Null(PerfTrace.Lost(""));
        Assert.Null(PerfTrace.Lost("Warning:\nsome other warning!\n"));
    }

    [Fact]
    public async Task PerfCpuSamplesCarryTheProgramsStack()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-perf-").FullName;
        try
        {
            var exe = Compile(dir, "spin", SpinProgram);
            var (trace, _, run, _) = await Record(dir, exe, [], PerfTrace.EventArgs(NativeTraceKind.Cpu));
            Assert.Equal("exit 0", run.Status);
            Assert.NotEmpty(trace.Samples);
            Assert.All(trace.Samples, s => Assert.Equal("cpu-clock", s.Event));
            var inSpin = trace.Samples.Count(s => s.Frames.Count > 0 && s.Frames[0] == "spin_here");
            Assert.True(inSpin * 2 > trace.Samples.Count, $"{inSpin} of {trace.Samples.Count} samples in spin_here");
        }
        finally { Directory.Delete(dir, true); }
    }

    [Fact]
    public async Task PerfKeepsTheProgramsExitStatusAndSignal()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-perf-").FullName;
        try
        {
            var (_, _, three, _) = await Record(dir, "/bin/sh", ["-c", "exit 3"], PerfTrace.EventArgs(NativeTraceKind.Faults));
            Assert.Equal("exit 3", three.Status);
            var (_, _, segv, _) = await Record(dir, "/bin/sh", ["-c", "kill -SEGV $$"], PerfTrace.EventArgs(NativeTraceKind.Faults));
            Assert.Equal("SIGSEGV", segv.Status);
        }
        finally { Directory.Delete(dir, true); }
    }

    /// <summary>A run that hits its wall-clock cap takes perf with it (perf leads the run): no perf outlives it, and the
    /// half-written file is a TraceException with perf's reason, never an empty trace that passes.</summary>
    [Fact]
    public async Task PerfDiesWithARunAtItsCapAndItsTraceIsAnError()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-perf-").FullName;
        try
        {
            var spec = new TraceCapture(TraceCapture.Cpu, [], null, null, [], [], [], null);
            var backend = new PerfTrace();
            var run = new TraceRun(spec, dir, Path.Combine(dir, "tmp"), "trace", ToolRunner.Instance, dir);
            var launch = backend.Wrap(new Launch("/bin/sleep", ["30"], new Dictionary<string, string>()), run);
            using var p = new ContainedProcess(new ProcessSpec(launch.File, launch.Args, dir, run.File("o"), run.File("e"), TimeSpan.FromSeconds(2), 256L << 20));
            var perfPid = p.Pid;
            var result = await p.WaitAsync();
            Assert.Equal("timeout", result.Status);
            Assert.False(Directory.Exists($"/proc/{perfPid}") && !File.ReadAllText($"/proc/{perfPid}/stat").Contains(") Z "), "perf outlived its run");
            var e = await Assert.ThrowsAsync<TraceException>(() => backend.ReadAsync(run, result, CancellationToken.None));
            Assert.Contains("perf", e.Message);
        }
        finally { Directory.Delete(dir, true); }
    }

    /// <summary>Records as `perf script -F pid,tid,time,period,event,trace,ip,sym,dso` printed them for the repro's program.</summary>
    private const string Script = """
        10266/10266 22782.366414:          1       syscalls:sys_enter_munmap: addr: 0x7f1217209000, len: 0x0000a507
        	    7f121723ece7 munmap (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)

        10266/10266 22782.366577:          1 syscalls:sys_enter_memfd_create: uname: 0x55cb475a5eb0, flags: 0x00000001
        	    7f1216d28217 memfd_create (/usr/lib/x86_64-linux-gnu/libc.so.6)
        	    55cb4759f4b2 fml::create_fill_unmap (/b/filemapping_leak)

        10266/10266 22782.366588:          1  syscalls:sys_exit_memfd_create: 0x3
        	    7f1216d28217 memfd_create (/usr/lib/x86_64-linux-gnu/libc.so.6)

        10463/10463 22792.258635:         64 page-faults: 
        	            475a fml::create_fill_unmap (/b/filemapping_leak)
        	         4000000 [unknown] ([unknown])

        10347/10351 22786.941020:    1001001 cpu-clock: 
        	ffffffff82252b42 xas_load ([kernel.kallsyms])
        	            9997 _dl_lookup_symbol_x (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)

        """;

    [Fact]
    public void PerfScriptBecomesEventsAndSamples()
    {
        var t = PerfTrace.Parse(Script, origin: 22780);
        Assert.Equal(["sys_enter_munmap", "sys_enter_memfd_create", "sys_exit_memfd_create"], t.Events.Select(e => e.Name));
        var munmap = t.Events[0];
        Assert.Equal((10266, 10266, "0x7f1217209000", "0x0000a507"), (munmap.Pid, munmap.Tid, munmap.Fields["addr"], munmap.Fields["len"]));
        Assert.Equal(2.366414, munmap.Seconds, 6);
        Assert.Equal(["memfd_create", "fml::create_fill_unmap"], t.Events[1].Frames);
        Assert.Equal("0x3", t.Events[2].Fields["ret"]);
        Assert.Equal(2, t.Samples.Count);
        Assert.Equal(("page-faults", 64L, "fml::create_fill_unmap"), (t.Samples[0].Event, t.Samples[0].Weight, t.Samples[0].Frames[0]));
        Assert.Equal("[unknown] [unknown]", t.Samples[0].Frames[1]);
        Assert.Equal((10347, 10351, "xas_load"), (t.Samples[1].Pid, t.Samples[1].Tid, t.Samples[1].Frames[0]));
    }

    [Fact]
    public void PerfEventsPerKind()
    {
        Assert.Equal("-e cpu-clock -F 999 --call-graph dwarf", string.Join(' ', PerfTrace.EventArgs(NativeTraceKind.Cpu)));
        Assert.Equal("-e page-faults -c 16 --call-graph dwarf", string.Join(' ', PerfTrace.EventArgs(NativeTraceKind.Faults, period: 16)));
        Assert.Equal("-e syscalls:sys_enter_munmap,syscalls:sys_exit_munmap,syscalls:sys_enter_close,syscalls:sys_exit_close --call-graph dwarf",
                     string.Join(' ', PerfTrace.EventArgs(NativeTraceKind.Api, ["munmap", "close"])));
        Assert.Contains("syscalls:sys_enter_brk", PerfTrace.EventArgs(NativeTraceKind.Alloc)[1]);
        Assert.Equal("'munmap,close' is not a syscall name",
                     Assert.Throws<ArgumentException>(() => PerfTrace.EventArgs(NativeTraceKind.Api, ["munmap,close"])).Message);
        Assert.Equal("record -q -k CLOCK_MONOTONIC -o /r/perf.data -e cpu-clock -- /b/p bug 8",
                     string.Join(' ', PerfTrace.RecordArgs("/r/perf.data", ["-e", "cpu-clock"], "/b/p", ["bug", "8"])));
        Assert.Equal("record -q -k CLOCK_MONOTONIC -m 4M -o /r/perf.data -e cpu-clock -- /b/p",
                     string.Join(' ', PerfTrace.RecordArgs("/r/perf.data", ["-e", "cpu-clock"], "/b/p", [], PerfTrace.RootBuffer)));
    }

    [Fact]
    public void PerfIsUnavailableWithTheReason()
    {
        Assert.Equal("perf runs only on Linux", new PerfTrace(isLinux: false).Unavailable);
        Assert.Equal("CORPUS_PERF=/nonexistent/perf: no such file", new PerfTrace("/nonexistent/perf").Unavailable);
        var locked = new PerfTrace("/bin/sh", isLinux: true, paranoid: 3, isRoot: false);
        Assert.StartsWith("kernel.perf_event_paranoid is 3 and the harness is not root", locked.Unavailable);
        Assert.Equal("kernel.perf_event_paranoid is 3 and the harness is not root: perf may not trace (sysctl kernel.perf_event_paranoid=-1)",
                     Assert.Throws<PlatformNotSupportedException>(() => locked.Wrap(new Launch("p", [], new Dictionary<string, string>()), "d", [])).Message);
        Assert.Null(new PerfTrace("/bin/sh", isLinux: true, paranoid: 3, isRoot: true).Unavailable);
    }

    /// <summary>Cut from a real +timestamp,+pid,+win trace of the cpp bug cell: UI thread 00dc, worker 0118.</summary>
    private static readonly string[] WinTrace =
    [
        "it looks like wine32 is missing, you should install it.",
        "23076.528:00d8:00dc:trace:win:NtUserCreateWindowEx created window 0x10050",
        "23076.534:00d8:00dc:trace:win:NtUserCreateWindowEx created window 0x10048",
        "23076.537:00d8:00dc:trace:win:NtUserSetFocus 0x10048 prev (nil)",
        "23076.543:00d8:00dc:trace:win:NtUserSetFocus 0x10048 prev 0x10048",
        "23076.613:00d8:0118:trace:win:NtUserCreateWindowEx created window 0x2005c",
        "23076.622:00d8:0118:trace:win:NtUserCreateWindowEx created window 0x1005e",
        "23076.622:00d8:0118:trace:win:NtUserSetParent (0x1005e 0x10048)",
        "23076.622:00d8:0118:trace:win:show_window hwnd=0x1005e, cmd=0, was_visible 0",
        "23076.626:00d8:0118:trace:win:NtUserSetFocus 0x1005e prev 0x10048",
        "23076.629:00d8:00dc:trace:win:NtUserSetFocus 0x10048 prev 0x1005e",
        "23084.634:00d8:0118:trace:win:destroy_thread_windows destroying 0x7f36ac000b70",
        "23084.636:00d8:00dc:trace:win:nc_paint 0x10048 4",
        "23084.636:00d8:00dc:trace:win:NtUserSetFocus 0x10048 prev (nil)",
    ];

    [Fact]
    public void WineTraceShowsTheWorkersSetParentThenTheSharedQueue()
    {
        var trace = WineDebugTrace.Parse(WinTrace, origin: 23076);
        Assert.Equal(13, trace.Events.Count);   // Wine's own message to stderr is not a debug line
        var first = trace.Events[0];
        Assert.Equal((0xd8, 0xdc, "NtUserCreateWindowEx", "created window 0x10050", "win"),
                     (first.Pid, first.Tid, first.Name, first.Text, first.Fields["channel"]));
        Assert.Equal(0.528, first.Seconds, 3);
        var facts = SetParentAttachTrace.Find(trace);
        var sp = Assert.Single(facts.CrossThread);
        Assert.Equal((0x118, "0x1005e", "0x10048", 0xdc), (sp.Thread, sp.Child, sp.Parent, sp.ParentThread));
        // The UI thread's SetFocus finds the worker's window as its focus: one input queue for both threads.
        Assert.Equal((0xdc, "0x10048", "0x1005e", 0x118), (facts.Attach!.Thread, facts.Attach.Focus, facts.Attach.Previous, facts.Attach.OtherThread));
        Assert.True(facts.InOrder);
        Assert.Equal(8007, facts.UiBlockMs);   // the UI thread's next line came when the worker's windows were destroyed
    }

    [Fact]
    public void WineModelCarriesTheOrderTheEvidenceAsksFor()
    {
        var model = NativeTraceModel.FromWine(TraceCapture.Api, WineDebugTrace.Parse(WinTrace, origin: 23076),
                                              new Dictionary<string, double> { ["REPRO-REACHED ui-call t_ms=525.3 call=SetFocus"] = 0.628 }, ["/r/winedebug.log"],
                                              [new SetParentAttachAnalyser()]);
        Assert.Contains(model.Events, e => e.Text == "NtUserSetParent channel=win args=(0x1005e 0x10048)" && e.Thread == "00d8:0118");
        var seq = TraceEvidence.Sequence(new TraceSequenceSpec(["^CrossThreadSetParent ", "^marker line=REPRO-REACHED ui-call", "^InputQueueShared thread=00dc "], 1), model);
        Assert.True(seq.Holds, string.Join(" | ", seq.Found));
        Assert.Equal(["t=0.622s CrossThreadSetParent child=0x1005e parent=0x10048 thread=0118 parentThread=00dc",
                      "t=0.628s marker line=REPRO-REACHED ui-call t_ms=525.3 call=SetFocus",
                      "t=0.629s InputQueueShared thread=00dc focus=0x10048 previous=0x1005e otherThread=0118 silentMs=8007"], seq.Found);
        // The other order is not there: the queue is shared only after the SetParent.
        Assert.False(TraceEvidence.Sequence(new TraceSequenceSpec(["^InputQueueShared ", "^CrossThreadSetParent "], 1), model).Holds);
    }

    [Fact]
    public void WineTraceOfTheFixHasNoCrossThreadSetParent()
    {
        // fix: the UI thread creates and parents the second window itself.
        string[] fix =
        [
            "1.000:0020:0024:trace:win:NtUserCreateWindowEx created window 0x10048",
            "1.100:0020:0024:trace:win:NtUserCreateWindowEx created window 0x1005e",
            "1.101:0020:0024:trace:win:NtUserSetParent (0x1005e 0x10048)",
            "1.102:0020:0024:trace:win:NtUserSetFocus 0x10048 prev 0x1005e",
        ];
        var facts = SetParentAttachTrace.Find(WineDebugTrace.Parse(fix));
        Assert.Empty(facts.CrossThread);
        Assert.Null(facts.Attach);
        Assert.False(facts.InOrder);
        // A SetParent on another thread but no shared focus afterwards: not the order the bug needs.
        string[] noAttach = [fix[0], "1.100:0020:0030:trace:win:NtUserCreateWindowEx created window 0x1005e",
                             "1.101:0020:0030:trace:win:NtUserSetParent (0x1005e 0x10048)"];
        var half = SetParentAttachTrace.Find(WineDebugTrace.Parse(noAttach));
        Assert.Single(half.CrossThread);
        Assert.False(half.InOrder);
    }

    [Fact]
    public void WineChannelsBecomeWinedebug()
    {
        Assert.Equal("+timestamp,+pid,+win,+msg,warn+reg,-all", WineDebugTrace.Value(["win", "+msg", "win", "warn+reg", "-all"]));
        Assert.Equal("'+win,+msg' is not a WINEDEBUG channel setting such as '+win', '-all' or 'warn+msg'",
                     Assert.Throws<ArgumentException>(() => WineDebugTrace.Value(["+win,+msg"])).Message);
        Assert.Throws<ArgumentException>(() => WineDebugTrace.Value([]));
        var env = WineDebugTrace.Env(new Dictionary<string, string> { ["X"] = "1" }, ["win"], "/r/wine-trace.log");
        Assert.Equal(("1", "+timestamp,+pid,+win", "/r/wine-trace.log"), (env["X"], env["CORPUS_WINEDEBUG"], env["CORPUS_WINEDEBUG_LOG"]));
        // Wine's clock (CLOCK_MONOTONIC_RAW) is behind CLOCK_MONOTONIC by NTP's corrections: small, never a minute.
        Assert.InRange(WineDebugTrace.RawOffset(), -60, 60);
    }

    [Fact]
    public void WprIsUnavailableOffWindowsWithTheReason()
    {
        var wpr = new WprTrace(ToolRunner.Instance);
        Assert.Equal("wpr.exe runs only on Windows", wpr.Unavailable);
        Assert.Equal("wpr.exe runs only on Windows", Assert.Throws<PlatformNotSupportedException>(() => wpr.Start("CPU")).Message);
        var none = new WprTrace(ToolRunner.Instance, exe: "", isWindows: true, searchPath: "/nonexistent");
        Assert.StartsWith("wpr.exe is not on PATH and CORPUS_WPR is not set", none.Unavailable);
        Assert.Equal(("CPU", "VirtualAllocation", "Handle"),
                     (WprTrace.Profile(NativeTraceKind.Cpu), WprTrace.Profile(NativeTraceKind.Alloc), WprTrace.Profile(NativeTraceKind.Api)));
    }

    /// <summary>A stand-in wpr.exe: appends its arguments to a log, writes the .etl it is asked to stop into; fails when told to.</summary>
    private static string FakeWpr(string dir, bool failStop = false)
    {
        var exe = Path.Combine(dir, "wpr.exe");
        File.WriteAllText(exe, "#!/bin/sh\necho \"$@\" >> \"$(dirname \"$0\")/args\"\n"
                               + "if [ \"$1\" = -stop ]; then " + (failStop ? "echo 'no trace session' >&2; exit 1" : "printf ETLxx > \"$2\"") + "; fi\nexit 0\n");
        File.SetUnixFileMode(exe, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        return exe;
    }

    [Fact]
    public void WprStartsAndStopsAroundTheRunAndCancelsWhenTheStopFails()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-wpr-").FullName;
        try
        {
            FakeWpr(dir);
            var wpr = new WprTrace(ToolRunner.Instance, isWindows: true, searchPath: dir);
            Assert.Null(wpr.Unavailable);
            var etl = Path.Combine(dir, "trace.etl");
            wpr.Start(WprTrace.Profile(NativeTraceKind.Cpu));
            Assert.Equal(5, wpr.Stop(etl));
            Assert.Equal(["-start CPU -filemode", $"-stop {etl}"], File.ReadAllLines(Path.Combine(dir, "args")));

            File.Delete(Path.Combine(dir, "args"));
            FakeWpr(dir, failStop: true);
            var e = Assert.Throws<InvalidOperationException>(() => wpr.Stop(etl));
            Assert.StartsWith("wpr -stop exited 1: no trace session", e.Message);
            Assert.Equal([$"-stop {etl}", "-cancel"], File.ReadAllLines(Path.Combine(dir, "args")));
        }
        finally { Directory.Delete(dir, true); }
    }
}
