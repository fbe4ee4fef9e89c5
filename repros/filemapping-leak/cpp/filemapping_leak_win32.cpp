// filemapping-leak: shared memory that is unmapped but whose mapping object stays open belongs to no process;
// write-up: docs/labs/filemapping-leak.md
//
// Windows program (the original setting): filemapping_leak_win32 <bug|fix> <count> <sizeMB> [holdSec]
// CreateFileMapping(INVALID_HANDLE_VALUE, ...) makes a page-file-backed section; MapViewOfFile, fill,
// UnmapViewOfFile. bug never calls CloseHandle on the section: the pages leave the working set and go to
// the Modified list, then to the page file (or the compression store). fix closes the handle.
// Look at it with RAMMap ("Shareable", "Modified") and with WinDbg: !handle 0 f Section.
// Built only on Windows (see CMakeLists.txt). Same protocol lines as the Linux program.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <psapi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int usage() {
    std::fprintf(stderr, "usage: filemapping_leak_win32 <bug|fix> <count> <sizeMB> [holdSec]\n");
    return 2;
}

void fill_random(void* p, std::uint64_t bytes, std::uint64_t seed) {
    std::uint64_t x = seed ? seed : 0x9E3779B97F4A7C15ull;
    auto* q = static_cast<std::uint64_t*>(p);
    std::uint64_t n = bytes / sizeof(std::uint64_t);
    for (std::uint64_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        q[i] = x;
    }
}

unsigned long long working_set_kb() {
    PROCESS_MEMORY_COUNTERS pmc{};
    pmc.cb = sizeof pmc;
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof pmc)) return 0;
    return static_cast<unsigned long long>(pmc.WorkingSetSize) / 1024u;
}

}  // namespace

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IONBF, 0);
    if (argc < 4 || argc > 5) return usage();
    std::string variant = argv[1];
    if (variant != "bug" && variant != "fix") return usage();
    long long count = std::atoll(argv[2]);
    long long size_mb = std::atoll(argv[3]);
    long long hold = argc == 5 ? std::atoll(argv[4]) : 0;
    if (count < 0 || size_mb < 1 || hold < 0) return usage();

    const std::uint64_t bytes = static_cast<std::uint64_t>(size_mb) << 20;
    std::vector<HANDLE> held;
    for (long long i = 1; i <= count; ++i) {
        HANDLE section = CreateFileMappingW(INVALID_HANDLE_VALUE, nullptr, PAGE_READWRITE,
                                           static_cast<DWORD>(bytes >> 32), static_cast<DWORD>(bytes), nullptr);
        if (section == nullptr) {
            std::fprintf(stderr, "CreateFileMapping failed: %lu\n", GetLastError());
            return 1;
        }
        void* view = MapViewOfFile(section, FILE_MAP_WRITE, 0, 0, static_cast<SIZE_T>(bytes));
        if (view == nullptr) {
            std::fprintf(stderr, "MapViewOfFile failed: %lu\n", GetLastError());
            return 1;
        }
        fill_random(view, bytes, 0x243F6A8885A308D3ull + static_cast<std::uint64_t>(i));
        UnmapViewOfFile(view);  // pages leave the working set: Modified list, later the page file
        if (variant == "bug")
            held.push_back(section);  // the leak: no CloseHandle
        else
            CloseHandle(section);
    }

    unsigned long long total = static_cast<unsigned long long>(held.size()) * bytes;
    std::printf("REPRO-REACHED leaked count=%zu bytes=%llu\n", held.size(), total);
    if (hold > 0) Sleep(static_cast<DWORD>(hold * 1000));
    std::printf("METRIC {\"count\":%zu,\"bytes\":%llu,\"rss_kb\":%llu,\"created\":%lld}\n", held.size(), total,
                working_set_kb(), count);
    std::printf("REPRO-DONE\n");
    for (HANDLE h : held) CloseHandle(h);
    return 0;
}
