/* A planted host for the time-travel tests, preloaded behind the xstate shim into gdb.
 * XSTATE_PLANT=large: the kernel's XSAVE area looks 11008 bytes long (a CPU with AMX tile data), with the kernel's
 *   rules: a read is clipped to the area, a write of any other size is refused with EFAULT. What lies past the real
 *   area reads as zeros and is dropped on a write.
 * XSTATE_PLANT=refuse: every write of the extended state is refused with EFAULT (a host that cannot take them). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

#define PLANTED_SIZE 11008

typedef long (*ptrace_fn)(int, pid_t, void *, void *);

static long real(int request, pid_t pid, void *addr, void *data)
{
    static ptrace_fn next;
    if (!next) next = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
    return next(request, pid, addr, data);
}

static long planted_read(pid_t pid, struct iovec *iov)
{
    static char area[PLANTED_SIZE];
    struct iovec whole = { area, sizeof area };
    memset(area, 0, sizeof area);
    long r = real(PTRACE_GETREGSET, pid, (void *)(long)NT_X86_XSTATE, &whole);
    if (r < 0) return r;
    size_t n = iov->iov_len < PLANTED_SIZE ? iov->iov_len : PLANTED_SIZE;
    memcpy(iov->iov_base, area, n);
    iov->iov_len = n;
    return 0;
}

static size_t real_size(pid_t pid)
{
    static char probe[PLANTED_SIZE];
    struct iovec iov = { probe, sizeof probe };
    return real(PTRACE_GETREGSET, pid, (void *)(long)NT_X86_XSTATE, &iov) < 0 ? 0 : iov.iov_len;
}

long ptrace(enum __ptrace_request request, ...)
{
    va_list ap;
    va_start(ap, request);
    pid_t pid = va_arg(ap, pid_t);
    void *addr = va_arg(ap, void *);
    void *data = va_arg(ap, void *);
    va_end(ap);
    const char *mode = getenv("XSTATE_PLANT");
    if (mode && (long)addr == NT_X86_XSTATE && data) {
        struct iovec *iov = data;
        if (request == PTRACE_SETREGSET && strcmp(mode, "refuse") == 0) { errno = EFAULT; return -1; }
        if (strcmp(mode, "large") == 0) {
            if (request == PTRACE_GETREGSET) return planted_read(pid, iov);
            if (request == PTRACE_SETREGSET) {
                if (iov->iov_len < PLANTED_SIZE) { errno = EFAULT; return -1; }
                struct iovec head = { iov->iov_base, real_size(pid) };
                return real(PTRACE_SETREGSET, pid, addr, &head);
            }
        }
    }
    return real(request, pid, addr, data);
}
