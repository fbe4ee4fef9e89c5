// attachthreadinput-ui-hang: a window made on a thread-pool thread and parented into the UI thread's window attaches
// the two threads' input queues. The pool thread returns to the pool and never pumps; the UI thread's SetFocus
// then waits for it until the pool retires the idle thread (ThreadTimeoutMs, 20 s by default) and its window dies.
// Write-up: docs/labs/attachthreadinput-ui-hang.md
//
// AttachThreadInputHang <bug|fix|control> [managed-wndproc]
//   bug:     a pool work item creates a hidden top-level window, SetParent()s it into the main window, returns;
//   fix:     the main (UI) thread creates and parents that window; the work item creates none;
//   control: the work item's window stays top-level: no parent, no attachment.
// Every window class uses user32's native DefWindowProcW: a managed WndProc on a pool thread that retires with a
// sent message pending kills the process with a CLR assert (the lab's pitfall), which is another bug. The option
// managed-wndproc gives the second window such a procedure, to show that crash.
// Marker lines (flushed, stamped in ms since start) are facts for the harness's `hang` family; it judges them.
using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Threading;
using static Corpus.Repros.AttachThreadInputHang.Native;

namespace Corpus.Repros.AttachThreadInputHang;

public static class Program
{
    private const string ClassName = "CorpusAttachThreadInputHang";
    private const string ManagedClassName = "CorpusAttachThreadInputHangManaged";
    // Kept alive for the life of the process: user32 holds only the function pointer.
    private static readonly WndProc Managed = (h, m, w, l) => DefWindowProcW(h, m, w, l);
    private static readonly Stopwatch Clock = Stopwatch.StartNew();
    private static readonly object Gate = new();

    private static void Say(string evt, string rest = "")
    {
        lock (Gate)
        {
            Console.Out.WriteLine(Marker.Line(evt, Clock.Elapsed.TotalMilliseconds, rest));
            Console.Out.Flush();
        }
    }

    public static int Main(string[] args)
    {
        if (Options.Parse(args) is not { } options)
        {
            Console.Error.WriteLine(Options.Usage);
            return 2;
        }
        if (!OperatingSystem.IsWindows())
        {
            Console.Error.WriteLine("AttachThreadInputHang needs Windows (or Wine): it drives user32");
            return 3;
        }
        var variant = options.Variant;
        RegisterClass(ClassName, GetProcAddress(GetModuleHandleW("user32.dll"), "DefWindowProcW"));
        RegisterClass(ManagedClassName, Marshal.GetFunctionPointerForDelegate(Managed));
        var secondClass = options.ManagedWndProc ? ManagedClassName : ClassName;
        var main = NewWindow("main");
        ShowWindow(main, SW_SHOW);
        SetForegroundWindow(main);
        SetFocus(main);

        var ready = new ManualResetEvent(false);
        IntPtr second = IntPtr.Zero, poolThread = IntPtr.Zero;
        uint poolTid = 0;
        ThreadPool.UnsafeQueueUserWorkItem(_ =>
        {
            poolTid = GetCurrentThreadId();
            poolThread = OpenThread(SYNCHRONIZE, false, poolTid);
            if (variant != Variant.Fix)
            {
                second = NewWindow("second", secondClass);
                if (variant == Variant.Bug && SetParent(second, main) == IntPtr.Zero)
                    Console.Error.WriteLine($"SetParent failed: {Marshal.GetLastWin32Error()}");
            }
            ready.Set();
            Say("work-item-done", $"pool_tid={poolTid}");
            // Back to the pool: the thread now idles in the pool's wait and pumps no messages.
        }, null);
        // Pump while the pool thread parents its window: it sends WM_PARENTNOTIFY here and waits for the answer.
        if (!PumpUntil(ready.SafeWaitHandle.DangerousGetHandle(), 30_000))
        {
            Console.Error.WriteLine("the work item never finished");
            return 1;
        }
        if (variant == Variant.Fix)
        {
            second = NewWindow("second", secondClass);
            SetParent(second, main);
        }
        var watcher = new Thread(() =>
        {
            WaitForSingleObject(poolThread, INFINITE);
            Say("worker-exit", $"pool_tid={poolTid}");
        }) { IsBackground = true, Name = "pool-thread watcher" };
        watcher.Start();
        Say("windows", $"main={Marker.Hwnd(main)} second={Marker.Hwnd(second)} worker_tid={poolTid} ui_tid={GetCurrentThreadId()} "
                       + $"pool_timeout_ms={PoolTimeout.Configured(Environment.GetEnvironmentVariables())}");
        var ui = State(GetCurrentThreadId());
        var pool = State(poolTid);
        Say("gui-info", $"ui_focus={Marker.Hwnd(ui.Focus)} ui_active={Marker.Hwnd(ui.Active)} "
                        + $"worker_focus={Marker.Hwnd(pool.Focus)} worker_active={Marker.Hwnd(pool.Active)}");

        // The write-up's hung call: focus back to the main window.
        Say("ui-call", "call=SetFocus");
        SetFocus(main);
        Say("ui-return", "call=SetFocus");

        // bug: the story ends when the pool has retired the thread; the watcher prints when.
        if (variant == Variant.Bug) watcher.Join(PoolTimeout.Configured(Environment.GetEnvironmentVariables()) + 30_000);
        Console.Out.WriteLine("REPRO-DONE");
        Console.Out.Flush();
        return 0;
    }

    /// <summary>The main class uses user32's own DefWindowProcW: no managed code runs for its windows.</summary>
    private static void RegisterClass(string name, IntPtr wndProc)
    {
        var wc = new WNDCLASSEXW
        {
            cbSize = (uint)Marshal.SizeOf<WNDCLASSEXW>(),
            lpfnWndProc = wndProc,
            hInstance = GetModuleHandleW(null),
            lpszClassName = name,
        };
        if (RegisterClassExW(ref wc) == 0) throw new InvalidOperationException($"RegisterClassExW: {Marshal.GetLastWin32Error()}");
    }

    private static IntPtr NewWindow(string title, string className = ClassName)
    {
        var w = CreateWindowExW(0, className, title, WS_OVERLAPPEDWINDOW, 10, 10, 300, 200, IntPtr.Zero, IntPtr.Zero,
                                GetModuleHandleW(null), IntPtr.Zero);
        return w != IntPtr.Zero ? w : throw new InvalidOperationException($"CreateWindowExW({title}): {Marshal.GetLastWin32Error()} (is there a display?)");
    }

    private static InputState State(uint tid)
    {
        var g = new GUITHREADINFO { cbSize = (uint)Marshal.SizeOf<GUITHREADINFO>() };
        return GetGUIThreadInfo(tid, ref g) ? new InputState(g.hwndFocus, g.hwndActive) : default;
    }

    private static bool PumpUntil(IntPtr handle, int timeoutMs)
    {
        var until = Environment.TickCount64 + timeoutMs;
        var handles = new[] { handle };
        while (Environment.TickCount64 < until)
        {
            var r = MsgWaitForMultipleObjects(1, handles, false, (uint)Math.Max(0, until - Environment.TickCount64), QS_ALLINPUT);
            if (r == WAIT_OBJECT_0) return true;
            if (r != WAIT_OBJECT_0 + 1) return false;
            while (PeekMessageW(out var m, IntPtr.Zero, 0, 0, PM_REMOVE))
            {
                TranslateMessage(ref m);
                DispatchMessageW(ref m);
            }
        }
        return false;
    }
}
