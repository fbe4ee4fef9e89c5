/* freelog: LD_PRELOAD recorder for free() (capture aid for the suppressfinalize-shutdown-race repro).
 * Keeps the last RING frees in a global ring that a core dump carries: sequence number, thread id,
 * pointer, the return address into the caller, and up to DEPTH words found on the caller's stack
 * that point into Mono's JIT code region (a heuristic managed "stack scan", like SOS's !dso).
 * free() itself is glibc's __libc_free; the recorder adds a few dozen ns per call.
 * It also makes Mono's --jitmap file (/tmp/perf-PID.map) line-buffered, so an abort loses no names. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

extern void __libc_free(void *);

#define RING (1u << 18)
#define DEPTH 8
#define SCAN 64
struct rec { void *ptr; uint64_t seq; int32_t tid; int32_t depth; void *ret[DEPTH]; };
struct rec freelog_ring[RING];
volatile uint64_t freelog_next;
static __thread int32_t my_tid __attribute__((tls_model("initial-exec")));

/* Mono 6.8 on amd64 maps JIT code below 4 GB (observed at 0x40000000 and up). */
static inline int is_jit(uintptr_t a) { return a >= 0x40000000u && a < 0x100000000ull; }

__attribute__((noinline)) void free(void *p)
{
    if (p) {
        if (!my_tid) my_tid = (int32_t)syscall(SYS_gettid);
        uint64_t seq = __atomic_fetch_add(&freelog_next, 1, __ATOMIC_RELAXED);
        struct rec *r = &freelog_ring[seq & (RING - 1)];
        r->ptr = p; r->tid = my_tid; r->seq = seq;
        uintptr_t ret0 = (uintptr_t)__builtin_return_address(0);
        r->ret[0] = (void *)ret0;
        int d = 1;
        if (is_jit(ret0)) {
            /* Called from JIT code (Marshal.FreeHGlobal's wrapper): scan the managed frames above. */
            uintptr_t *sp = (uintptr_t *)__builtin_frame_address(0) + 2;
            for (int i = 0; i < SCAN && d < DEPTH; i++) {
                if (is_jit(sp[i])) r->ret[d++] = (void *)sp[i];
            }
        }
        r->depth = d;
    }
    __libc_free(p);
}

FILE *fopen(const char *path, const char *mode)
{
    static FILE *(*real_fopen)(const char *, const char *);
    if (!real_fopen) real_fopen = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
    FILE *f = real_fopen(path, mode);
    if (f && path && strncmp(path, "/tmp/perf-", 10) == 0) setvbuf(f, NULL, _IOLBF, 0);
    return f;
}
