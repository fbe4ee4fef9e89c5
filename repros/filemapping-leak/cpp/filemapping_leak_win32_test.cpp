// filemapping-leak: shared memory that is unmapped but whose mapping object stays open belongs to no process;
// write-up: docs/labs/filemapping-leak.md
//
// The bug in Win32 terms: after UnmapViewOfFile the section's pages are in no working set, yet the section lives,
// with its data, as long as a handle is open; only CloseHandle of the last handle frees it. The process's own
// counters do not show it. Run on Windows, or cross-built and run under Wine (docs/wine.md); the Linux-side
// evidence under Wine (Shmem, the deleted tmpmap files) is measured outside, by the harness.
#include "filemapping_leak_win32.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr int kCount = 4;
constexpr std::uint64_t kSize = 16u << 20;
constexpr unsigned long long kTotalKb = kCount * (kSize >> 10);

std::wstring name_of(int i) {
    return L"Local\\filemapping-leak-test-" + std::to_wstring(GetCurrentProcessId()) + L"-" + std::to_wstring(i);
}

// True when the section's data is still what create_fill_unmap wrote: the pages were kept, not dropped.
bool still_holds_data(HANDLE section, long long index) {
    void* view = MapViewOfFile(section, FILE_MAP_READ, 0, 0, static_cast<SIZE_T>(kSize));
    if (view == nullptr) return false;
    auto* q = static_cast<const std::uint64_t*>(view);
    std::uint64_t x = fmlw::next(fmlw::seed_of(index));
    bool ok = q[0] == x;
    // The last word: the whole range was kept, not only the first page.
    std::uint64_t last = fmlw::seed_of(index);
    for (std::uint64_t i = 0; i < kSize / sizeof(std::uint64_t); ++i) last = fmlw::next(last);
    ok = ok && q[kSize / sizeof(std::uint64_t) - 1] == last;
    UnmapViewOfFile(view);
    return ok;
}

bool exists(const std::wstring& name) {
    HANDLE h = OpenFileMappingW(FILE_MAP_READ, FALSE, name.c_str());
    if (h == nullptr) return false;
    CloseHandle(h);
    return true;
}

}  // namespace

TEST(FilemappingLeakWin32, BugKeepsTheSectionAndItsDataAfterUnmap) {
    std::printf("  running on %s\n", fmlw::wine_version().empty() ? "Windows" : ("Wine " + fmlw::wine_version()).c_str());
    fmlw::Counters before = fmlw::counters();
    std::vector<HANDLE> held;
    for (int i = 1; i <= kCount; ++i) held.push_back(fmlw::create_fill_unmap(kSize, i, name_of(i).c_str()));
    fmlw::Counters after = fmlw::counters();
    std::printf("  %d x %llu MiB held: working set %+lld kB, PrivateUsage %+lld kB, PagefileUsage %+lld kB\n", kCount,
                static_cast<unsigned long long>(kSize >> 20),
                static_cast<long long>(after.working_set_kb) - static_cast<long long>(before.working_set_kb),
                static_cast<long long>(after.private_kb) - static_cast<long long>(before.private_kb),
                static_cast<long long>(after.pagefile_kb) - static_cast<long long>(before.pagefile_kb));
    for (int i = 1; i <= kCount; ++i) {
        EXPECT_TRUE(exists(name_of(i))) << "section " << i << " is gone though its handle is open";
        EXPECT_TRUE(still_holds_data(held[i - 1], i)) << "section " << i << " lost its data";
    }
    // The process's counters do not show the held sections: unmapped, and shareable rather than private.
    EXPECT_LT(after.working_set_kb, before.working_set_kb + kTotalKb / 4);
    EXPECT_LT(after.private_kb, before.private_kb + kTotalKb / 4);
    for (HANDLE h : held) CloseHandle(h);
}

TEST(FilemappingLeakWin32, FixFreesTheSectionOnClose) {
    for (int i = 1; i <= kCount; ++i) {
        HANDLE section = fmlw::create_fill_unmap(kSize, i, name_of(i).c_str());
        ASSERT_TRUE(exists(name_of(i)));
        CloseHandle(section);
        EXPECT_FALSE(exists(name_of(i))) << "section " << i << " outlived its last handle";
    }
}

TEST(FilemappingLeakWin32, UnnamedSectionCannotBeReachedOnceItsHandleIsClosed) {
    // The original's sections have no name: the handle is the only way to them, so dropping it without
    // CloseHandle loses them for good, while a duplicate handle keeps them alive.
    HANDLE section = fmlw::create_fill_unmap(kSize, 7);
    HANDLE dup = nullptr;
    ASSERT_TRUE(DuplicateHandle(GetCurrentProcess(), section, GetCurrentProcess(), &dup, 0, FALSE, DUPLICATE_SAME_ACCESS));
    CloseHandle(section);
    EXPECT_TRUE(still_holds_data(dup, 7)) << "closing one of two handles freed the section";
    CloseHandle(dup);
}

TEST(FilemappingLeakWin32, FillIsNotZero) {
    std::vector<std::uint64_t> buf(1024);
    fmlw::fill_random(buf.data(), buf.size() * sizeof(std::uint64_t), 1);
    std::size_t zeros = 0;
    for (auto v : buf) zeros += v == 0;
    EXPECT_EQ(zeros, 0u);
    EXPECT_NE(buf[0], buf[1]);
}
