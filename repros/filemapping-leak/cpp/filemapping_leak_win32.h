// filemapping-leak: shared memory that is unmapped but whose mapping object stays open belongs to no process;
// write-up: docs/labs/filemapping-leak.md
//
// Win32 core shared by the program (filemapping_leak_win32.cpp) and its tests (filemapping_leak_win32_test.cpp):
// CreateFileMapping(INVALID_HANDLE_VALUE, ...) makes a page-file-backed section; MapViewOfFile, fill,
// UnmapViewOfFile. The bug keeps the section handle; the fix closes it.
#pragma once

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <psapi.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace fmlw {

[[noreturn]] inline void fail(const std::string& what) {
    throw std::runtime_error(what + " failed: error " + std::to_string(GetLastError()));
}

// xorshift64, as in the Linux core: incompressible, so neither the compression store nor zswap shrinks it.
inline std::uint64_t next(std::uint64_t x) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

inline void fill_random(void* p, std::uint64_t bytes, std::uint64_t seed) {
    std::uint64_t x = seed ? seed : 0x9E3779B97F4A7C15ull;
    auto* q = static_cast<std::uint64_t*>(p);
    std::uint64_t n = bytes / sizeof(std::uint64_t);
    for (std::uint64_t i = 0; i < n; ++i) q[i] = x = next(x);
}

inline std::uint64_t seed_of(long long index) { return 0x243F6A8885A308D3ull + static_cast<std::uint64_t>(index); }

// A page-file-backed section of `bytes` (named when `name` is not empty), mapped, filled, unmapped.
// Returns the section handle still open: the state the bug leaves behind.
inline HANDLE create_fill_unmap(std::uint64_t bytes, long long index, const wchar_t* name = nullptr) {
    HANDLE section = CreateFileMappingW(INVALID_HANDLE_VALUE, nullptr, PAGE_READWRITE, static_cast<DWORD>(bytes >> 32),
                                        static_cast<DWORD>(bytes), name);
    if (section == nullptr) fail("CreateFileMapping");
    void* view = MapViewOfFile(section, FILE_MAP_WRITE, 0, 0, static_cast<SIZE_T>(bytes));
    if (view == nullptr) fail("MapViewOfFile");
    fill_random(view, bytes, seed_of(index));
    UnmapViewOfFile(view);  // pages leave the working set: Modified list, later the page file
    return section;
}

// The process's own counters, in KiB: what Task Manager and most monitoring show.
struct Counters {
    unsigned long long working_set_kb = 0;
    unsigned long long private_kb = 0;   // PrivateUsage: commit charged to the process
    unsigned long long pagefile_kb = 0;  // PagefileUsage
};

inline Counters counters() {
    PROCESS_MEMORY_COUNTERS_EX pmc{};
    pmc.cb = sizeof pmc;
    Counters c;
    if (!GetProcessMemoryInfo(GetCurrentProcess(), reinterpret_cast<PROCESS_MEMORY_COUNTERS*>(&pmc), sizeof pmc)) return c;
    c.working_set_kb = pmc.WorkingSetSize / 1024u;
    c.private_kb = pmc.PrivateUsage / 1024u;
    c.pagefile_kb = pmc.PagefileUsage / 1024u;
    return c;
}

// The Wine version when running under Wine (ntdll exports wine_get_version), else empty.
inline std::string wine_version() {
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    if (!ntdll) return {};
    using Fn = const char*(__cdecl*)();
    auto fn = reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(ntdll, "wine_get_version")));
    return fn ? fn() : "";
}

}  // namespace fmlw
