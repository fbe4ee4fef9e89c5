// refcount-lost-update: the bug variant dies (forced and raced), the fix never drops early, and the ring shows
// the overwritten increment.
#include <gtest/gtest.h>
#include "refcount.h"

using namespace refcount;

namespace {
// The crash messages of an early delete: the write-up's pure virtual call, or glibc's heap checks. Or no message
// at all: a second delete calls through the vtable pointer free() overwrote and dies of SIGSEGV. Then the attempt's
// last line is a delete, with no next attempt after it (main's delete ends an attempt only when nothing died).
constexpr const char* kEarlyDeleteDeath =
    "pure virtual method called|double free|free\\(\\)|corrupted|malloc\\(\\)|"
    "attempt [0-9]+\n(DeleteObject called [^\n]*\n)+$";

void Use(Variant v, TraceMode t) {
    g.variant = v;
    g.trace = t;
    if (t == TraceMode::Ring) eventring::Start(kOpNames);
}

class RefCount : public ::testing::Test {
protected:
    void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};
}  // namespace

TEST_F(RefCount, ForcedInterleavingOfTheBugDiesOfThePureVirtualCall) {
    EXPECT_DEATH({
        Use(Variant::Bug, TraceMode::Ring);
        RunForced();
    }, "pure virtual method called");
}

TEST_F(RefCount, ForcedInterleavingOverwritesTheIncrementAndTheRingRecordsIt) {
    Use(Variant::Bug, TraceMode::Ring);
    Result r = RunForced(/*stopAfterWrite=*/true);
    // Main and B hold a reference each, but A's exchange wrote back the 1 it had read.
    EXPECT_EQ(1, r.countBeforeLastRelease);
    EXPECT_EQ(1, r.lostIncrements);
    int lost = 0;
    for (uint32_t t = 0; t < eventring::g_ring.claimed && t < EVENTRING_THREADS; t++) {
        const auto& th = eventring::g_ring.t[t];
        for (uint64_t i = 0; i < th.next; i++) {
            const auto& e = th.ev[i];
            if (e.op == OpXchg && e.seen == 2 && e.wrote == 1) lost++;
        }
    }
    EXPECT_EQ(1, lost) << "the ring must hold the exchange that found 2 and wrote 1";
}

#ifdef EVENTRING_PY
// Where no core is written (Windows), the crash handler writes the ring to a file; eventring.py must find the same
// overwritten increment there as in a core.
TEST_F(RefCount, RingFileShowsTheLostIncrementToTheReader) {
    Use(Variant::Bug, TraceMode::Ring);
    RunForced(/*stopAfterWrite=*/true);
    std::string file = ::testing::TempDir() + "refcount-ring.bin";
    ASSERT_TRUE(eventring::WriteTo(file.c_str()));
    std::string cmd = "python3 " EVENTRING_PY " " + file;
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(nullptr, p);
    std::string out;
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    EXPECT_EQ(0, pclose(p)) << out;
    std::remove(file.c_str());
    EXPECT_NE(std::string::npos, out.find("found 2, wrote 1: 1 increment overwritten")) << out;
}
#endif

TEST_F(RefCount, RacedBugDiesWithinAFewAttempts) {
    // Each attempt is the write-up's five threads; the first early delete kills the process.
    EXPECT_DEATH({
        Use(Variant::Bug, TraceMode::Ring);
        for (int attempt = 0; attempt < 50; attempt++) {
            std::fprintf(stderr, "attempt %d\n", attempt);
            RunRace(5, 200000);
        }
    }, kEarlyDeleteDeath);
}

TEST_F(RefCount, ForcedInterleavingOfTheFixKeepsTheCount) {
    Use(Variant::Fix, TraceMode::Ring);
    Result r = RunForced();
    EXPECT_EQ(1, r.countBeforeLastRelease);
    EXPECT_EQ(0, r.lostIncrements + r.lostDecrements);
    EXPECT_EQ(1, r.deletes);  // main's last release, and only that
}

TEST_F(RefCount, MoreHeldReferencesAreAllReleasedAtTheEnd) {
    Use(Variant::Fix, TraceMode::None);
    Result r = RunRace(5, 20000, /*held=*/1000);
    EXPECT_EQ(1, r.countBeforeLastRelease);
    EXPECT_EQ(1, r.deletes);  // main's last release, and only that
}

TEST_F(RefCount, StressedFixNeverDropsEarly) {
    Use(Variant::Fix, TraceMode::None);
    for (int attempt = 0; attempt < 20; attempt++) {
        Result r = RunRace(5, 200000);
        ASSERT_EQ(1, r.countBeforeLastRelease) << "attempt " << attempt;
        ASSERT_EQ(1, r.deletes) << "attempt " << attempt << ": deleted before main's last release";
    }
}
