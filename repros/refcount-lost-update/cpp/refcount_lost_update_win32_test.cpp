// refcount-lost-update, the Windows build (InterlockedExchange from windows.h), run under Wine through CTest: the
// forced interleaving overwrites the increment and the ring records it, the ring file holds it, and the fix never
// drops early.
#include <gtest/gtest.h>
#include <cstdio>
#include <string>
#include "refcount.h"

using namespace refcount;

namespace {
void Use(Variant v, TraceMode t) {
    g.variant = v;
    g.trace = t;
    if (t == TraceMode::Ring) eventring::Start(kOpNames);
}

int LostInRing(const eventring::Ring& ring) {
    int lost = 0;
    for (uint32_t t = 0; t < ring.claimed && t < EVENTRING_THREADS; t++)
        for (uint64_t i = 0; i < ring.t[t].next && i < EVENTRING_SLOTS; i++) {
            const auto& e = ring.t[t].ev[i];
            if (e.op == OpXchg && e.seen == 2 && e.wrote == 1) lost++;
        }
    return lost;
}
}  // namespace

TEST(RefCountWin32, ForcedInterleavingOverwritesTheIncrementWithInterlockedExchange) {
    Use(Variant::Bug, TraceMode::Ring);
    Result r = RunForced(/*stopAfterWrite=*/true);
    EXPECT_EQ(1, r.countBeforeLastRelease);
    EXPECT_EQ(1, r.lostIncrements);
    EXPECT_EQ(1, LostInRing(eventring::g_ring));
}

TEST(RefCountWin32, RingFileHoldsWhatTheRingHeld) {
    Use(Variant::Bug, TraceMode::Ring);
    RunForced(/*stopAfterWrite=*/true);
    const std::string file = "refcount-ring-test.bin";
    ASSERT_TRUE(eventring::WriteTo(file.c_str()));
    static eventring::Ring back;  // 3 MB: not on the stack
    std::FILE* f = std::fopen(file.c_str(), "rb");
    ASSERT_NE(nullptr, f);
    EXPECT_EQ(1u, std::fread(&back, sizeof back, 1, f));
    std::fclose(f);
    std::remove(file.c_str());
    EXPECT_EQ(0, std::memcmp(back.magic, "EVENTRING/1", 12));
    EXPECT_EQ(1, LostInRing(back));
}

TEST(RefCountWin32, StressedFixNeverDropsEarly) {
    Use(Variant::Fix, TraceMode::None);
    for (int attempt = 0; attempt < 10; attempt++) {
        Result r = RunRace(5, 200000);
        ASSERT_EQ(1, r.countBeforeLastRelease) << "attempt " << attempt;
        ASSERT_EQ(1, r.deletes) << "attempt " << attempt;
    }
}
