// filemapping-leak: shared memory that is unmapped but whose mapping object stays open belongs to no process;
// write-up: docs/labs/filemapping-leak.md
//
// Linux core shared by the program (filemapping_leak.cpp) and the tests (filemapping_leak_test.cpp).
// The Windows original (CreateFileMapping on the page file, MapViewOfFile, UnmapViewOfFile, no CloseHandle)
// maps onto Linux as: memfd_create or shm_open+shm_unlink, ftruncate, mmap, munmap, no close.
#pragma once

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fml {

enum class Kind { Memfd, Shm };

inline const char* kind_name(Kind k) { return k == Kind::Memfd ? "memfd" : "shm"; }

inline bool parse_kind(const std::string& s, Kind& out) {
    if (s == "memfd") { out = Kind::Memfd; return true; }
    if (s == "shm") { out = Kind::Shm; return true; }
    return false;
}

[[noreturn]] inline void fail(const std::string& what) {
    throw std::runtime_error(what + ": " + std::strerror(errno));
}

// One shared memory object that was created, mapped, filled and unmapped. Only the descriptor is left.
struct Object {
    int fd = -1;
    std::size_t bytes = 0;
    std::string name;  // memfd name or the (already unlinked) shm name
};

// xorshift64: fast and incompressible enough that neither zswap nor zram can shrink the pages.
inline void fill_random(void* p, std::size_t bytes, std::uint64_t seed) {
    std::uint64_t x = seed ? seed : 0x9E3779B97F4A7C15ull;
    auto* q = static_cast<std::uint64_t*>(p);
    std::size_t n = bytes / sizeof(std::uint64_t);
    for (std::size_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        q[i] = x;
    }
}

// Create an anonymous shared memory object of `bytes`, map it, write every page, unmap it.
// Returns the object with its descriptor still open: this is the state the bug leaves behind.
inline Object create_fill_unmap(Kind kind, std::size_t bytes, int index) {
    Object o;
    o.bytes = bytes;
    o.name = "filemapping-leak-" + std::to_string(getpid()) + "-" + std::to_string(index);
    if (kind == Kind::Memfd) {
        o.fd = memfd_create(o.name.c_str(), MFD_CLOEXEC);
        if (o.fd < 0) fail("memfd_create");
    } else {
        std::string path = "/" + o.name;
        o.fd = shm_open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (o.fd < 0) fail("shm_open " + path);
        // Like .NET 8's MemoryMappedFile.CreateNew(null, ...): the name goes at once, the object stays.
        if (shm_unlink(path.c_str()) != 0) fail("shm_unlink " + path);
    }
    if (ftruncate(o.fd, static_cast<off_t>(bytes)) != 0) fail("ftruncate");
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, o.fd, 0);
    if (p == MAP_FAILED) fail("mmap");
    fill_random(p, bytes, 0x243F6A8885A308D3ull + static_cast<std::uint64_t>(index));
    if (munmap(p, bytes) != 0) fail("munmap");  // the process working set drops here...
    return o;                                    // ...but the pages live on as long as fd is open.
}

inline void release(Object& o) {
    if (o.fd >= 0) close(o.fd);
    o.fd = -1;
}

// Bytes the object really has resident (tmpfs allocates per page as it is written).
inline std::uint64_t allocated_bytes(const Object& o) {
    struct stat st {};
    if (fstat(o.fd, &st) != 0) fail("fstat");
    return static_cast<std::uint64_t>(st.st_blocks) * 512u;
}

// A "Key:   123 kB" line from /proc/meminfo or /proc/<pid>/status; -1 when absent.
inline long long proc_kb(const char* file, const char* key) {
    std::ifstream in(file);
    std::string line;
    std::size_t klen = std::strlen(key);
    while (std::getline(in, line)) {
        if (line.compare(0, klen, key) == 0 && line.size() > klen && line[klen] == ':') {
            std::istringstream rest(line.substr(klen + 1));
            long long v = -1;
            rest >> v;
            return v;
        }
    }
    return -1;
}

inline long long shmem_kb() { return proc_kb("/proc/meminfo", "Shmem"); }
inline long long self_rss_kb() { return proc_kb("/proc/self/status", "VmRSS"); }
inline long long self_rss_shmem_kb() { return proc_kb("/proc/self/status", "RssShmem"); }

// Descriptors of this process that point at deleted shm or memfd objects, as readlink shows them.
inline std::vector<std::string> deleted_shared_fds() {
    std::vector<std::string> out;
    DIR* d = opendir("/proc/self/fd");
    if (!d) return out;
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::string link = std::string("/proc/self/fd/") + e->d_name;
        char buf[4096];
        ssize_t n = readlink(link.c_str(), buf, sizeof buf - 1);
        if (n <= 0) continue;
        buf[n] = 0;
        std::string t(buf);
        bool deleted = t.size() > 10 && t.compare(t.size() - 10, 10, " (deleted)") == 0;
        bool shared = t.rfind("/memfd:", 0) == 0 || t.rfind("/dev/shm/", 0) == 0;
        if (deleted && shared) out.push_back(t);
    }
    closedir(d);
    return out;
}

}  // namespace fml
