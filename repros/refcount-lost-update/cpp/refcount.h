// refcount-lost-update: the ref-count base class of the write-up ("MS Technical Summit 2016 at Darmstadt") and
// the workload that breaks it. OnlySingleUser() feeds a plain read of the counter into an atomic exchange: an
// increment or decrement by another thread between the two is overwritten. See docs/labs/refcount-lost-update.md.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include "eventring.h"

namespace refcount {

// Event codes of the trace (the ring, printf, LTTng); the ring names them for eventring.py.
enum Op : uint32_t { OpXchg = 1, OpLoad = 2, OpAddRef = 3, OpRelease = 4, OpDelete = 5 };
constexpr const char* kOpNames = "1 xchg,2 load,3 addref,4 release,5 delete";
inline const char* OpName(uint32_t op) {
    static const char* names[] = {"?", "xchg", "load", "addref", "release", "delete"};
    return op < 6 ? names[op] : "?";
}

enum class Variant { Bug, Fix };
enum class TraceMode { None, Ring, Printf, External };

struct Settings {
    Variant variant = Variant::Bug;
    TraceMode trace = TraceMode::Ring;
    FILE* printfOut = nullptr;                                   // printf tracing: stdio, with its lock
    void (*external)(uint32_t, const void*, long, long) = nullptr;  // LTTng tracepoints, set by that build
    void (*window)(const void*) = nullptr;                       // the yield point between read and write (forced case)
};
inline Settings g;
inline std::atomic<long> g_lostIncrements{0}, g_lostDecrements{0}, g_deletes{0};

inline void Trace(Op op, const void* obj, long seen, long wrote, uint64_t tsc0 = 0) {
    switch (g.trace) {
    case TraceMode::None: break;
    case TraceMode::Ring: eventring::Record(op, obj, seen, wrote, tsc0); break;
    case TraceMode::Printf:
        std::fprintf(g.printfOut, "%s obj %p thread %u seen %ld wrote %ld\n", OpName(op), obj, eventring::ThreadId(), seen, wrote);
        break;
    case TraceMode::External: g.external(op, obj, seen, wrote); break;
    }
}

// The atomics, as the write-up has them on Windows and their GCC builtins elsewhere.
#ifdef _WIN32
inline long AtomicIncrement(long* p) { return InterlockedIncrement(p); }
inline long AtomicDecrement(long* p) { return InterlockedDecrement(p); }
inline long AtomicExchange(long* p, long v) { return InterlockedExchange(p, v); }
inline long AtomicLoad(long* p) { return InterlockedCompareExchange(p, 0, 0); }
#else
inline long AtomicIncrement(long* p) { return __atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST); }
inline long AtomicDecrement(long* p) { return __atomic_sub_fetch(p, 1, __ATOMIC_SEQ_CST); }
inline long AtomicExchange(long* p, long v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
inline long AtomicLoad(long* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
#endif

// Thread safe refcounter base class (the write-up's, with its trace calls).
class CRefCounterBase {
public:
    CRefCounterBase() : m_Counter(0) {}
    CRefCounterBase(const CRefCounterBase&) = delete;
    CRefCounterBase& operator=(const CRefCounterBase&) = delete;
    virtual void DeleteObject() = 0;

    // Return new reference count incremented by one
    long AddReference() {
        long n = AtomicIncrement(&m_Counter);
        Trace(OpAddRef, this, n - 1, n);
        return n;
    }

    // Return new reference count decremented by one
    long ReleaseReference() {
        long n = AtomicDecrement(&m_Counter);
        Trace(OpRelease, this, n + 1, n);
        if (n == 0) {
            g_deletes.fetch_add(1, std::memory_order_relaxed);
            Trace(OpDelete, this, 0, 0);
            DeleteObject();
        }
        return n;
    }

    // Check if RefCount == 1. This can only be safely used when the threads using this object are
    // guaranteed to not change the refcount after this check has been made.
    bool OnlySingleUser() {
        uint64_t t0 = g.trace == TraceMode::Ring ? eventring::Now() : 0;
        if (g.variant == Variant::Fix) {
            // The fix: read the count atomically and write nothing.
            long now = AtomicLoad(&m_Counter);
            if (g.window) g.window(this);
            Trace(OpLoad, this, now, now, t0);
            return now == 1;
        }
        // The bug: InterlockedExchange(&m_Counter, m_Counter). The plain read and the exchange are two steps.
        long read = m_Counter;
        if (g.window) g.window(this);
        long found = AtomicExchange(&m_Counter, read);
        // Traced after the exchange, so tracing does not widen the window: found != read is a lost update.
        Trace(OpXchg, this, found, read, t0);
        if (found > read) g_lostIncrements.fetch_add(found - read, std::memory_order_relaxed);
        if (found < read) g_lostDecrements.fetch_add(read - found, std::memory_order_relaxed);
        return found == 1;
    }

    virtual ~CRefCounterBase() {
        m_Counter = 0;
#if defined(__GNUC__)
        // Keep the destructor's stores (the base vtable pointer, the zero count), as MSVC does: without this GCC's
        // lifetime dead-store elimination drops them, and a late caller would not find the pure virtual.
        asm volatile("" : : "r"(this) : "memory");
#endif
    }

    // For the program's report only: the count as it stands.
    long UseCount() { return AtomicLoad(&m_Counter); }

protected:
    long m_Counter;
};

// Something the real class carries before its counted base. Its 16 bytes take glibc's free-list pointers when the
// object is freed, so the counted part keeps its vtable pointer and zero count, as the Windows heap leaves them.
class Named {
public:
    virtual ~Named() = default;
    virtual const char* Name() const { return name; }
    char name[8] = "refobj";
};

/// Actual reference counted class
class RefCountedObject : public Named, public CRefCounterBase {
public:
    RefCountedObject() = default;
    ~RefCountedObject() override = default;
    void DeleteObject() override {
        std::fprintf(stderr, "DeleteObject called %p, thread %u\n", static_cast<void*>(static_cast<CRefCounterBase*>(this)),
                     eventring::ThreadId());
        delete this;
    }
};

// Using RefCounter from multiple threads in a balanced way which "works". `iterations` bounds the run.
inline void AsyncWorker(CRefCounterBase* counter, long iterations) {
    for (long i = 0; i < iterations; i++) {
        if (counter->OnlySingleUser()) {
            // some optimized code not shown in the write-up
        }
        counter->AddReference();
        counter->ReleaseReference();
    }
}

struct Result {
    long countBeforeLastRelease;  // 1 when no update was lost
    long lostIncrements, lostDecrements, deletes;
};

// The write-up's main: one reference held by main, five threads of balanced Add/ReleaseReference. With `held` > 1
// main holds more, so that lost updates cannot take the count to zero within the run.
inline Result RunRace(int threadsCount, long iterations, long held = 1) {
    g_lostIncrements = 0;
    g_lostDecrements = 0;
    g_deletes = 0;
    auto* pCounter = new RefCountedObject();
    CRefCounterBase* counter = pCounter;
    counter->AddReference();  // ensure that refcount does not drop to zero while other threads are working with it.
    for (long i = 1; i < held; i++) counter->AddReference();
    std::vector<std::thread> threads;
    for (int i = 0; i < threadsCount; i++) threads.emplace_back(AsyncWorker, counter, iterations);
    for (auto& th : threads) th.join();
    for (long i = 1; i < held; i++) counter->ReleaseReference();
    long before = counter->UseCount();
    counter->ReleaseReference();
    return {before, g_lostIncrements.load(), g_lostDecrements.load(), g_deletes.load()};
}

// For a debugger: the forced case's object, so a script finds the counter to watch.
inline CRefCounterBase* g_forcedObject = nullptr;

// Where a recorder (gdb's record full) starts: both threads of the forced case exist and wait.
__attribute__((noinline)) inline void ForcedGo() { asm volatile(""); }

// The forced interleaving: thread A stops at the yield point between its read and its write; thread B adds a
// reference there and releases it once A has written. Deterministic: the bug variant deletes the object under
// main's reference, then A's next Add/Release pair finds the deleted object. `stopAfterWrite` ends before that.
inline Result RunForced(bool stopAfterWrite = false) {
    g_lostIncrements = 0;
    g_lostDecrements = 0;
    g_deletes = 0;
    static std::atomic<int> stage;
    static std::atomic<bool> aDone;
    aDone = false;
    stage = -1;  // both threads exist before A starts: gdb's record full cannot follow clone3, so it starts at ForcedGo
    auto wait = [](int s) { while (stage.load() < s) std::this_thread::yield(); };
    g.window = [](const void*) {
        int expect = 0;
        if (stage.compare_exchange_strong(expect, 1)) while (stage.load() < 2) std::this_thread::yield();
    };
    auto* pCounter = new RefCountedObject();
    CRefCounterBase* counter = pCounter;
    g_forcedObject = counter;
    counter->AddReference();
    std::thread b([&] {
        wait(1);
        counter->AddReference();  // lands between A's read and A's write
        stage = 2;
        wait(3);
        if (!stopAfterWrite) counter->ReleaseReference();
        stage = 4;
    });
    std::thread a([&] {
        wait(0);
        counter->OnlySingleUser();
        stage = 3;
        wait(4);
        if (!stopAfterWrite) AsyncWorker(counter, 3);
        aDone = true;
    });
    ForcedGo();
    stage = 0;
    // Spin rather than block in join: under record full a blocking futex in one thread would stall the others.
    wait(4);
    while (!aDone.load()) std::this_thread::yield();
    a.join();
    b.join();
    g.window = nullptr;
    long before = counter->UseCount();
    if (!stopAfterWrite) counter->ReleaseReference();
    return {before, g_lostIncrements.load(), g_lostDecrements.load(), g_deletes.load()};
}

}  // namespace refcount
