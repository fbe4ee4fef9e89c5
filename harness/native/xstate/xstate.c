/* xstate: LD_PRELOAD for the gdb that records time travel (capture.timeTravel).
 *
 * gdb 13 (Debian 12) reads and writes a thread's extended state (NT_X86_XSTATE) through a buffer of fixed size,
 * 2696 bytes: x87, SSE, AVX, AVX-512 and PKRU. The kernel accepts a short read, but refuses a write (EFAULT, "Bad
 * address") unless the buffer is its whole XSAVE area, which is larger where the CPU has more state: 11008 bytes
 * with AMX's tile data. A reverse step writes back the vector registers an instruction changed, so on such a host
 * `record goto` dies at the first step back: "Couldn't write extended state status: Bad address".
 *
 * This shim completes a short write: it reads the thread's whole area, lays gdb's bytes over its start and writes
 * the whole area back, so the state gdb does not know (the tile data) keeps its value. Writes of the full size, and
 * every other ptrace request, pass through unchanged.
 *
 * CORPUS_XSTATE_REPORT=FILE: at exit, a process that wrote extended state appends one line: the kernel's size,
 * gdb's size, and its writes passed through, completed and failed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef long (*ptrace_fn)(int, pid_t, void *, void *);

static ptrace_fn real_ptrace;
static size_t kernel_size;  /* the kernel's XSAVE area, learned on the first xstate write */
static size_t caller_size;  /* the size the caller (gdb) wrote with */
static unsigned long direct, completed, failed;

static long call(int request, pid_t pid, void *addr, void *data)
{
    if (!real_ptrace) real_ptrace = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
    return real_ptrace(request, pid, addr, data);
}

/* The kernel clips a read to its area and says how much it wrote: ask with more than any CPU has. */
static size_t area_size(pid_t pid)
{
    static char probe[1 << 17];
    struct iovec iov = { probe, sizeof probe };
    int saved = errno;
    long r = call(PTRACE_GETREGSET, pid, (void *)(long)NT_X86_XSTATE, &iov);
    errno = saved;
    return r < 0 ? 0 : iov.iov_len;
}

static long complete_write(pid_t pid, const struct iovec *short_iov)
{
    char *whole = malloc(kernel_size);
    if (!whole) { errno = ENOMEM; return -1; }
    struct iovec iov = { whole, kernel_size };
    long r = call(PTRACE_GETREGSET, pid, (void *)(long)NT_X86_XSTATE, &iov);
    if (r == 0 && iov.iov_len == kernel_size) {
        memcpy(whole, short_iov->iov_base, short_iov->iov_len);
        r = call(PTRACE_SETREGSET, pid, (void *)(long)NT_X86_XSTATE, &iov);
    } else if (r == 0) {
        errno = EFAULT;
        r = -1;
    }
    int saved = errno;
    free(whole);
    errno = saved;
    if (r == 0) completed++; else failed++;
    return r;
}

long ptrace(enum __ptrace_request request, ...)
{
    va_list ap;
    va_start(ap, request);
    pid_t pid = va_arg(ap, pid_t);
    void *addr = va_arg(ap, void *);
    void *data = va_arg(ap, void *);
    va_end(ap);
    if (request == PTRACE_SETREGSET && (long)addr == NT_X86_XSTATE && data) {
        const struct iovec *iov = data;
        if (!kernel_size) kernel_size = area_size(pid);
        caller_size = iov->iov_len;
        if (kernel_size && iov->iov_len < kernel_size) return complete_write(pid, iov);
        long r = call(request, pid, addr, data);
        if (r == 0) direct++; else failed++;
        return r;
    }
    return call(request, pid, addr, data);
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("CORPUS_XSTATE_REPORT");
    /* gdb's helper processes inherit the shim too: only a process that wrote extended state reports. */
    if (!path || !*path || !caller_size) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "xstate: kernel %zu bytes, gdb %zu bytes; writes: %lu direct, %lu completed, %lu failed\n",
            kernel_size, caller_size, direct, completed, failed);
    fclose(f);
}
