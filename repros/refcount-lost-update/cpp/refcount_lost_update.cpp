// refcount-lost-update: the repro program. Protocol: flushed REPRO-REACHED lines, METRIC {json}, REPRO-DONE.
// usage: refcount_lost_update bug|fix [--threads N] [--iterations N] [--held N] [--trace ring|none|printf] [--forced]
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include "refcount.h"
#ifdef REFCOUNT_LTTNG
#include "refcount_tp.h"
#endif

static int Usage(const char* self) {
    std::fprintf(stderr, "usage: %s bug|fix [--threads N] [--iterations N] [--held N] [--trace ring|none|printf%s] [--forced]\n", self,
#ifdef REFCOUNT_LTTNG
                 "|lttng"
#else
                 ""
#endif
    );
    return 2;
}

#ifdef REFCOUNT_LTTNG
static void LttngTrace(uint32_t op, const void* obj, long seen, long wrote) {
    lttng_ust_tracepoint(refcount, counter, op, reinterpret_cast<uintptr_t>(obj), eventring::ThreadId(), seen, wrote);
}
#endif

#ifdef _WIN32
// Windows writes no core: the crash ends in the unhandled-exception filter (an access violation through the freed
// object's vtable) or in abort() (a pure virtual call). Both write the ring to a file first, as a flight recorder
// would, and then let the process die the Windows way.
static const char kRingFile[] = "eventring.bin";
static void WriteRing() {
    // Two threads often die of the same freed object. The first writes the ring; the others wait for it, because
    // the first to go on to the debugger (winedbg, WER) ends the process, ring or no ring (1 run in 13 under Wine).
    // The wait is bounded: a writer that dies itself must not turn the crash into a hang.
    static std::atomic<int> state{0};  // 0: not yet, 1: writing, 2: written
    int none = 0;
    if (!state.compare_exchange_strong(none, 1)) {
        for (int i = 0; i < 500 && state.load() != 2; i++) Sleep(10);
        return;
    }
    bool ok = eventring::WriteTo(kRingFile);
    // WriteFile, not stdio: no heap, no CRT lock that the dying thread might hold.
    char line[64];
    int n = std::snprintf(line, sizeof line, "%s the event ring to %s\n", ok ? "wrote" : "could not write", kRingFile);
    DWORD wrote = 0;
    WriteFile(GetStdHandle(STD_ERROR_HANDLE), line, static_cast<DWORD>(n), &wrote, nullptr);
    state.store(2);
}
static LONG WINAPI RingOnCrash(EXCEPTION_POINTERS*) {
    WriteRing();
    return EXCEPTION_CONTINUE_SEARCH;
}
static void RingOnAbort(int) { WriteRing(); }
#endif

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IONBF, 0);  // protocol lines must reach the harness before a crash
    if (argc < 2) return Usage(argv[0]);
    using namespace refcount;
    std::string variant = argv[1];
    if (variant == "bug") g.variant = Variant::Bug;
    else if (variant == "fix") g.variant = Variant::Fix;
    else return Usage(argv[0]);
    int threads = 5;
    long iterations = 200000;
    long held = 1;  // main's references
    bool forced = false;
    std::string trace = "ring";
    for (int i = 2; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--forced") forced = true;
        else if (i + 1 < argc && a == "--threads") threads = std::atoi(argv[++i]);
        else if (i + 1 < argc && a == "--iterations") iterations = std::atol(argv[++i]);
        else if (i + 1 < argc && a == "--held") held = std::atol(argv[++i]);
        else if (i + 1 < argc && a == "--trace") trace = argv[++i];
        else return Usage(argv[0]);
    }
    if (threads < 1 || iterations < 1 || held < 1) return Usage(argv[0]);
    if (trace == "ring") {
        g.trace = TraceMode::Ring;
        eventring::Start(kOpNames);
#ifdef _WIN32
        SetUnhandledExceptionFilter(RingOnCrash);
        std::signal(SIGABRT, RingOnAbort);
#endif
    } else if (trace == "none") g.trace = TraceMode::None;
    else if (trace == "printf") {
        // stdio with its lock and formatting, as printf tracing has them; /dev/null keeps the disk out of it.
        const char* out = std::getenv("REFCOUNT_PRINTF_FILE");
        g.printfOut = std::fopen(out ? out : "/dev/null", "w");
        if (!g.printfOut) { std::perror("printf trace file"); return 2; }
        g.trace = TraceMode::Printf;
    }
#ifdef REFCOUNT_LTTNG
    else if (trace == "lttng") {
        g.external = LttngTrace;
        g.trace = TraceMode::External;
    }
#endif
    else return Usage(argv[0]);

    std::printf("REPRO-REACHED start %s %s, trace %s\n", variant.c_str(), forced ? "forced" : "race", trace.c_str());
    auto t0 = std::chrono::steady_clock::now();
    Result r = forced ? RunForced() : RunRace(threads, iterations, held);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("count before main's release: %ld (1 when no update was lost)\n", r.countBeforeLastRelease);
    std::printf("METRIC {\"count_before_release\": %ld, \"lost_increments\": %ld, \"lost_decrements\": %ld, \"deletes\": %ld, "
                "\"workload_s\": %.4f}\n",
                r.countBeforeLastRelease, r.lostIncrements, r.lostDecrements, r.deletes, s);
    std::puts("REPRO-DONE");
    return 0;
}
