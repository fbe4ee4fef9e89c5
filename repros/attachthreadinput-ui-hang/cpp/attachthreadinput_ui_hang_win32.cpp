// attachthreadinput-ui-hang: a window parented across threads attaches the threads' input queues; the UI thread
// then hangs in SetFocus until the other thread exits. Write-up: docs/labs/attachthreadinput-ui-hang.md
//
// attachthreadinput_ui_hang_win32 <bug|fix|control> <idleMs>
//   bug:     a worker thread creates a window and SetParent()s it into the UI thread's window, then idles for
//            idleMs without pumping messages and exits;
//   fix:     the UI thread creates and parents the window; the worker only idles;
//   control: the worker's window stays top-level (no parent, no attachment).
// Prints flushed marker lines with its own millisecond stamps; the harness judges them (the `hang` family):
//   REPRO-REACHED gui-info t_ms=… ui_focus=… ui_active=… worker_focus=… worker_active=…   GetGUIThreadInfo of both
//   REPRO-REACHED ui-call t_ms=… call=SetFocus      before the UI thread's call
//   REPRO-REACHED ui-return t_ms=… call=SetFocus    after it returned
//   REPRO-REACHED worker-exit t_ms=…                the worker's thread handle was signalled
#include "attachthreadinput_ui_hang_win32.h"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

int usage() {
    std::fprintf(stderr, "usage: attachthreadinput_ui_hang_win32 <bug|fix|control> <idleMs>\n");
    return 2;
}

unsigned long long h(HWND w) { return static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(w)); }

void say(const char* event, const char* fmt = "", ...) {
    char rest[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(rest, sizeof(rest), fmt, ap);
    va_end(ap);
    std::printf("REPRO-REACHED %s t_ms=%.1f%s%s\n", event, atih::now_ms(), *rest ? " " : "", rest);
    std::fflush(stdout);
}

// Waits on the worker's thread handle on its own thread: the UI thread may be the one that is stuck.
DWORD WINAPI watch(void* thread) {
    WaitForSingleObject(static_cast<HANDLE>(thread), INFINITE);
    say("worker-exit");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IONBF, 0);
    atih::Variant variant;
    if (argc != 3 || !atih::parse_variant(argv[1], variant)) return usage();
    long idle = std::atol(argv[2]);
    if (idle < 0) return usage();
    atih::now_ms();

    HWND main_window;
    try {
        main_window = atih::create_main_window();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s (is there a display?)\n", e.what());
        return 1;
    }
    atih::Worker worker;
    worker.variant = variant;
    worker.parent = main_window;
    worker.idle_ms = static_cast<DWORD>(idle);
    worker.ready = CreateEventW(nullptr, TRUE, FALSE, nullptr);
    DWORD worker_tid = 0;
    HANDLE thread = CreateThread(nullptr, 0, &atih::Worker::run, &worker, 0, &worker_tid);
    if (!thread) return std::fprintf(stderr, "CreateThread failed: %lu\n", GetLastError()), 1;
    // Pump while the worker parents its window: it sends WM_PARENTNOTIFY here and waits for the answer.
    if (!atih::pump_until(worker.ready, 30000)) return std::fprintf(stderr, "the worker never got ready\n"), 1;
    if (worker.error) return std::fprintf(stderr, "worker: window or SetParent failed: %lu\n", worker.error), 1;
    HWND second = worker.window;
    if (variant == atih::Variant::Fix) {
        second = atih::create_second_window();
        if (!second || !SetParent(second, main_window)) return std::fprintf(stderr, "fix: SetParent failed: %lu\n", GetLastError()), 1;
    }
    HANDLE watcher = CreateThread(nullptr, 0, watch, thread, 0, nullptr);
    say("windows", "main=0x%llx second=0x%llx worker_tid=%lu ui_tid=%lu", h(main_window), h(second), worker_tid,
        GetCurrentThreadId());
    atih::GuiInfo ui = atih::gui_info(GetCurrentThreadId()), wk = atih::gui_info(worker_tid);
    say("gui-info", "ui_focus=0x%llx ui_active=0x%llx worker_focus=0x%llx worker_active=0x%llx", h(ui.focus),
        h(ui.active), h(wk.focus), h(wk.active));

    // The write-up's hung call: focus back to the main window.
    say("ui-call", "call=SetFocus");
    SetFocus(main_window);
    say("ui-return", "call=SetFocus");

    if (variant == atih::Variant::Bug) {
        // The story ends when the worker is gone; the watcher prints when.
        WaitForSingleObject(thread, static_cast<DWORD>(idle) + 30000);
        WaitForSingleObject(watcher, 5000);
    }
    std::printf("REPRO-DONE\n");
    std::fflush(stdout);
    // Returning from main ends the process even while the worker still idles (fix, control).
    return 0;
}
