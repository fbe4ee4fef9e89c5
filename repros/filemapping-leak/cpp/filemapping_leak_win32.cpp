// filemapping-leak: shared memory that is unmapped but whose mapping object stays open belongs to no process;
// write-up: docs/labs/filemapping-leak.md
//
// Windows program (the original setting): filemapping_leak_win32 <bug|fix> <count> <sizeMB> [holdSec]
// CreateFileMapping(INVALID_HANDLE_VALUE, ...) makes a page-file-backed section; MapViewOfFile, fill,
// UnmapViewOfFile. bug never calls CloseHandle on the section: the pages leave the working set and go to
// the Modified list, then to the page file (or the compression store). fix closes the handle.
// Look at it with RAMMap ("Shareable", "Modified") and with WinDbg: !handle 0 f Section.
// Built for Windows: with MSVC, or cross-built with mingw-w64 and run under Wine (docs/wine.md).
// Same protocol lines as the Linux program.
#include "filemapping_leak_win32.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int usage() {
    std::fprintf(stderr, "usage: filemapping_leak_win32 <bug|fix> <count> <sizeMB> [holdSec]\n");
    return 2;
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
        HANDLE section;
        try {
            section = fmlw::create_fill_unmap(bytes, i);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s\n", e.what());
            return 1;
        }
        if (variant == "bug")
            held.push_back(section);  // the leak: no CloseHandle
        else
            CloseHandle(section);
    }

    unsigned long long total = static_cast<unsigned long long>(held.size()) * bytes;
    std::printf("REPRO-REACHED leaked count=%zu bytes=%llu\n", held.size(), total);
    if (hold > 0) Sleep(static_cast<DWORD>(hold * 1000));
    // The Win32 counters beside the Linux evidence: neither the working set nor the commit charged to the process
    // (PrivateUsage, PagefileUsage) counts the held sections, on Windows or under Wine.
    fmlw::Counters c = fmlw::counters();
    std::printf("METRIC {\"count\":%zu,\"bytes\":%llu,\"rss_kb\":%llu,\"private_kb\":%llu,\"pagefile_kb\":%llu,"
                "\"created\":%lld}\n",
                held.size(), total, c.working_set_kb, c.private_kb, c.pagefile_kb, count);
    std::printf("REPRO-DONE\n");
    for (HANDLE h : held) CloseHandle(h);
    return 0;
}
