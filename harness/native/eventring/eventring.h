// eventring: a low-overhead event recorder whose buffers a core dump carries (the in-process counterpart of
// ETW's per-CPU buffers). Each thread writes its own ring, so recording takes no lock and no shared atomic:
// a timestamp (TSC) and five stores. The header starts with a magic string, so eventring.py finds the rings in
// a core without symbols (a sanitizer build, a Windows program under Wine). Header-only C++.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#ifdef _WIN32
#include <windows.h>
#include <intrin.h>
#else
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>
#endif

// mingw keeps an inline variable's COMDAT in .data, so on Windows the ring is in the .exe file: fewer threads there.
#ifndef EVENTRING_THREADS
#ifdef _WIN32
#define EVENTRING_THREADS 8
#else
#define EVENTRING_THREADS 32
#endif
#endif
#ifndef EVENTRING_SLOTS
#ifdef _WIN32
// 1 << 13 lost the overwritten increment in a raced Wine run: it lay more than 8192 of its thread's events before
// the crash. As on Linux, then: 8 x 64K x 48 bytes, 25 MB of the static .exe.
#define EVENTRING_SLOTS (1u << 16)
#else
#define EVENTRING_SLOTS (1u << 16)  // per thread; a power of two
#endif
#endif

namespace eventring {

// tsc0: taken before the operation when it has two steps (a read, then a write), else 0; tsc: after it.
struct Event {
    uint64_t tsc0, tsc, obj;
    int64_t seen, wrote;  // the value the operation found, the value it left
    uint32_t tid, op;
};
static_assert(sizeof(Event) == 48, "eventring.py reads 48-byte events");

struct Thread {
    uint64_t next;  // events written so far; slot = next % EVENTRING_SLOTS
    uint32_t tid, pad;
    Event ev[EVENTRING_SLOTS];
};

struct Ring {
    char magic[16];  // "EVENTRING/1", written by Start()
    uint32_t threads, slots, eventSize, claimed;
    uint64_t startTsc;
    char ops[224];  // "1 read,2 xchg,…": names of the op codes, for the reader
    Thread t[EVENTRING_THREADS];
};

inline Ring g_ring;                   // zero-initialized (.bss): only the threads that record touch their pages
inline std::atomic<bool> g_on{false};
inline thread_local Thread* t_mine = nullptr;

inline uint32_t ThreadId() {
#ifdef _WIN32
    return GetCurrentThreadId();
#else
    return static_cast<uint32_t>(syscall(SYS_gettid));
#endif
}

inline uint64_t Now() { return __rdtsc(); }

// Names the op codes (e.g. "1 read,2 xchg") and starts recording.
inline void Start(const char* ops) {
    std::strncpy(g_ring.ops, ops, sizeof g_ring.ops - 1);
    g_ring.threads = EVENTRING_THREADS;
    g_ring.slots = EVENTRING_SLOTS;
    g_ring.eventSize = sizeof(Event);
    g_ring.startTsc = Now();
    std::memcpy(g_ring.magic, "EVENTRING/1", 12);
    g_on.store(true, std::memory_order_release);
}

inline Thread* Mine() {
    if (t_mine) return t_mine;
    uint32_t i = __atomic_fetch_add(&g_ring.claimed, 1u, __ATOMIC_RELAXED);
    if (i >= EVENTRING_THREADS) return nullptr;  // more threads than rings: the rest go unrecorded
    g_ring.t[i].tid = ThreadId();
    return t_mine = &g_ring.t[i];
}

inline void Record(uint32_t op, const void* obj, int64_t seen, int64_t wrote, uint64_t tsc0 = 0) {
    if (!g_on.load(std::memory_order_relaxed)) return;
    Thread* t = Mine();
    if (!t) return;
    uint64_t n = t->next;
    Event& e = t->ev[n & (EVENTRING_SLOTS - 1)];
    e.tsc0 = tsc0;
    e.tsc = Now();
    e.obj = reinterpret_cast<uintptr_t>(obj);
    e.seen = seen;
    e.wrote = wrote;
    e.tid = t->tid;
    e.op = op;
    // Release: a reader of `next` (the core, or a test on a live ring) sees the event complete.
    __atomic_store_n(&t->next, n + 1, __ATOMIC_RELEASE);
}

// Where no core is written (a Windows program dies through its own exception handling, also under Wine), a crash
// handler writes the ring to a file instead: header and every thread's ring, as they sit in memory, so
// eventring.py reads the file as it reads a core. No heap: it runs in a dying process whose heap the bug may have
// corrupted (fopen allocates its FILE and buffer there).
inline bool WriteTo(const char* path) {
#ifdef _WIN32
    HANDLE h = CreateFileA(path, GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) return false;
    DWORD wrote = 0;
    bool ok = WriteFile(h, &g_ring, sizeof g_ring, &wrote, nullptr) && wrote == sizeof g_ring;
    return CloseHandle(h) && ok;
#else
    std::FILE* f = std::fopen(path, "wb");
    if (!f) return false;
    bool ok = std::fwrite(&g_ring, sizeof g_ring, 1, f) == 1;
    return std::fclose(f) == 0 && ok;
#endif
}

}  // namespace eventring
