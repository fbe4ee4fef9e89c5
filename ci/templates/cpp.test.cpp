// @ID@: the bug variant dies, the fix variant does not.
#include <gtest/gtest.h>
#include "@SNAKE@.h"

TEST(Example, BugVariantAborts) {
    EXPECT_DEATH(repro::run("bug"), "count went negative");
}

TEST(Example, FixVariantLeavesNothing) {
    EXPECT_EQ(0, repro::run("fix"));
}
