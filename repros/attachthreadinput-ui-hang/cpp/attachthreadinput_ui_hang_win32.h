// attachthreadinput-ui-hang: a window parented across threads attaches the threads' input queues; the UI
// thread then hangs in focus calls until the other thread exits. Write-up: docs/labs/attachthreadinput-ui-hang.md
//
// The shared core of the Win32 program and its GoogleTest tests. Plain Win32 and C++17: builds with MSVC and with
// mingw-w64 (run under Wine with a display, docs/wine.md).
#pragma once

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace atih {

enum class Variant { Bug, Fix, Control };

inline bool parse_variant(const std::string& s, Variant& v) {
    if (s == "bug") v = Variant::Bug;
    else if (s == "fix") v = Variant::Fix;
    else if (s == "control") v = Variant::Control;
    else return false;
    return true;
}

// Milliseconds since the first call, on one monotonic clock for every thread.
inline double now_ms() {
    static LARGE_INTEGER freq{}, start{};
    if (freq.QuadPart == 0) {
        QueryPerformanceFrequency(&freq);
        QueryPerformanceCounter(&start);
    }
    LARGE_INTEGER t;
    QueryPerformanceCounter(&t);
    return static_cast<double>(t.QuadPart - start.QuadPart) * 1000.0 / static_cast<double>(freq.QuadPart);
}

// The class's window procedure is user32's own: no application code runs on a thread that never pumps.
inline const wchar_t* window_class() {
    static const wchar_t* name = L"CorpusAttachThreadInputHang";
    static bool registered = false;
    if (!registered) {
        WNDCLASSEXW wc{};
        wc.cbSize = sizeof(wc);
        wc.lpfnWndProc = DefWindowProcW;
        wc.hInstance = GetModuleHandleW(nullptr);
        wc.lpszClassName = name;
        if (!RegisterClassExW(&wc) && GetLastError() != ERROR_CLASS_ALREADY_EXISTS)
            throw std::runtime_error("RegisterClassExW failed: " + std::to_string(GetLastError()));
        registered = true;
    }
    return name;
}

// The UI thread's main window: active and focused, and visible unless `show` is false.
inline HWND create_main_window(bool show = true) {
    HWND w = CreateWindowExW(0, window_class(), L"main", WS_OVERLAPPEDWINDOW, 10, 10, 400, 300, nullptr, nullptr,
                             GetModuleHandleW(nullptr), nullptr);
    if (!w) throw std::runtime_error("CreateWindowExW(main) failed: " + std::to_string(GetLastError()));
    if (show) ShowWindow(w, SW_SHOW);
    SetForegroundWindow(w);
    SetFocus(w);
    return w;
}

// The second window: hidden and top-level, as a form is before it is shown. Null on failure.
inline HWND create_second_window() {
    return CreateWindowExW(0, window_class(), L"second", WS_OVERLAPPEDWINDOW, 20, 20, 200, 100, nullptr, nullptr,
                           GetModuleHandleW(nullptr), nullptr);
}

// Pumps the calling thread's queue until `h` is signalled: a thread that parents a window into ours sends it
// messages (WM_PARENTNOTIFY and others) and waits for them to be handled.
inline bool pump_until(HANDLE h, DWORD timeout_ms) {
    const ULONGLONG end = GetTickCount64() + timeout_ms;
    for (;;) {
        ULONGLONG now = GetTickCount64();
        if (now >= end) return false;
        DWORD r = MsgWaitForMultipleObjects(1, &h, FALSE, static_cast<DWORD>(end - now), QS_ALLINPUT);
        if (r == WAIT_OBJECT_0) return true;
        if (r != WAIT_OBJECT_0 + 1) return false;
        MSG m;
        while (PeekMessageW(&m, nullptr, 0, 0, PM_REMOVE)) {
            TranslateMessage(&m);
            DispatchMessageW(&m);
        }
    }
}

// What a thread's input state says: with attached queues two threads see the same focus and active window.
struct GuiInfo {
    HWND focus = nullptr;
    HWND active = nullptr;
};

inline GuiInfo gui_info(DWORD tid) {
    GUITHREADINFO g{};
    g.cbSize = sizeof(g);
    GuiInfo r;
    if (GetGUIThreadInfo(tid, &g)) {
        r.focus = g.hwndFocus;
        r.active = g.hwndActive;
    }
    return r;
}

// Attached: both threads report the same non-null focus or active window.
inline bool shares_input_state(const GuiInfo& a, const GuiInfo& b) {
    return (a.focus && a.focus == b.focus) || (a.active && a.active == b.active);
}

// The worker: makes the window (bug: parented into the UI thread's window; control: left top-level), tells the
// UI thread, then idles without pumping for idle_ms and exits. Its windows die with it.
struct Worker {
    Variant variant = Variant::Bug;
    HWND parent = nullptr;
    DWORD idle_ms = 0;
    HANDLE ready = nullptr;  // set once the window exists (and is parented)
    HANDLE go = nullptr;     // optional: the worker waits for it before its idle time starts
    HWND window = nullptr;
    DWORD error = 0;

    static DWORD WINAPI run(void* p) {
        auto* w = static_cast<Worker*>(p);
        if (w->variant != Variant::Fix) {
            w->window = create_second_window();
            if (!w->window) w->error = GetLastError();
            else if (w->variant == Variant::Bug && !SetParent(w->window, w->parent)) w->error = GetLastError();
        }
        SetEvent(w->ready);
        if (w->go) WaitForSingleObject(w->go, INFINITE);
        Sleep(w->idle_ms);  // idle, no message loop: nobody answers what is sent to this thread's windows
        return 0;
    }
};

}  // namespace atih
