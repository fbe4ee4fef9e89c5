// attachthreadinput-ui-hang: GoogleTest of the Win32 core, run under Wine with a display (harness/wine/ctest.sh) or
// on Windows. The test thread plays the UI thread. No test calls SetFocus while the queues are attached: that is
// the hang itself, which the harness measures (the `hang` family).
#include "attachthreadinput_ui_hang_win32.h"

#include <gtest/gtest.h>

namespace {

struct Scene {
    atih::Worker worker;
    HANDLE thread = nullptr;
    DWORD tid = 0;
    HWND main = nullptr;
    HWND second = nullptr;  // fix: made and parented by the UI thread

    explicit Scene(atih::Variant v) {
        // Not shown: under Wine without a window manager (Xvfb), a mapped window's destruction, at the latest when the
        // process exits, waits 2 s for a withdrawal that never comes. Queues attach all the same.
        main = atih::create_main_window(false);
        worker.variant = v;
        worker.parent = main;
        worker.ready = CreateEventW(nullptr, TRUE, FALSE, nullptr);
        worker.go = CreateEventW(nullptr, TRUE, FALSE, nullptr);
        thread = CreateThread(nullptr, 0, &atih::Worker::run, &worker, 0, &tid);
    }

    // The worker's window is parented while this thread pumps: it sends WM_PARENTNOTIFY here.
    bool ready() {
        if (!thread || !atih::pump_until(worker.ready, 10000) || worker.error) return false;
        if (worker.variant == atih::Variant::Fix) {
            second = atih::create_second_window();
            return second && SetParent(second, main);
        }
        return true;
    }

    bool attached() const { return atih::shares_input_state(atih::gui_info(GetCurrentThreadId()), atih::gui_info(tid)); }

    // Lets the worker idle for 0 ms and exit, and waits for it.
    bool finish() {
        SetEvent(worker.go);
        return atih::pump_until(thread, 10000);
    }

    ~Scene() {
        if (thread) {
            SetEvent(worker.go);
            atih::pump_until(thread, 10000);  // pumping: the worker's exit may send this thread messages
            CloseHandle(thread);
        }
        if (second) DestroyWindow(second);
        DestroyWindow(main);
        CloseHandle(worker.ready);
        CloseHandle(worker.go);
    }
};

TEST(AttachThreadInput, SetParentAcrossThreadsSharesTheInputState) {
    Scene r(atih::Variant::Bug);
    ASSERT_TRUE(r.ready());
    ASSERT_NE(r.worker.window, nullptr);
    EXPECT_EQ(GetAncestor(r.worker.window, GA_PARENT), r.main);  // GetParent() names parents of WS_CHILD windows only
    atih::GuiInfo worker = atih::gui_info(r.tid), ui = atih::gui_info(GetCurrentThreadId());
    EXPECT_TRUE(r.attached()) << "worker focus " << worker.focus << " active " << worker.active << ", ui focus " << ui.focus
                              << " active " << ui.active;
    // The worker pumps nothing, yet GetGUIThreadInfo reports a focus window for it: the UI thread's queue state.
    EXPECT_NE(worker.focus, nullptr);
}

TEST(AttachThreadInput, ControlTopLevelWindowDoesNotAttach) {
    Scene r(atih::Variant::Control);
    ASSERT_TRUE(r.ready());
    ASSERT_NE(r.worker.window, nullptr);
    EXPECT_EQ(GetAncestor(r.worker.window, GA_PARENT), GetDesktopWindow());
    EXPECT_FALSE(r.attached());
    EXPECT_EQ(atih::gui_info(r.tid).focus, nullptr);
}

TEST(AttachThreadInput, FixWindowOnTheUiThreadDoesNotAttach) {
    Scene r(atih::Variant::Fix);
    ASSERT_TRUE(r.ready());
    EXPECT_EQ(GetAncestor(r.second, GA_PARENT), r.main);
    EXPECT_EQ(GetWindowThreadProcessId(r.second, nullptr), GetCurrentThreadId());
    EXPECT_FALSE(r.attached());
}

TEST(AttachThreadInput, TheWorkersExitEndsTheAttachmentAndItsWindow) {
    Scene r(atih::Variant::Bug);
    ASSERT_TRUE(r.ready());
    ASSERT_TRUE(r.attached());
    HWND window = r.worker.window;
    ASSERT_TRUE(r.finish());
    EXPECT_FALSE(IsWindow(window)) << "a thread's windows are destroyed when it exits";
    EXPECT_FALSE(r.attached());
    double t0 = atih::now_ms();
    SetFocus(r.main);
    EXPECT_LT(atih::now_ms() - t0, 200.0) << "nothing is left to wait for";
    EXPECT_EQ(GetFocus(), r.main);
}

}  // namespace
