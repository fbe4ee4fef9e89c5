// @ID@: see docs/labs/@ID@.md
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

namespace repro {

// The example bug: one release too many. Replace with the write-up's code, keeping its shape.
inline int run(const std::string& variant) {
    int count = 1;
    count -= 1;
    if (variant == "bug") {
        std::puts("REPRO-REACHED bug");
        count -= 1;
    }
    if (count < 0) {
        std::fputs("example bug: count went negative\n", stderr);
        std::abort();
    }
    return count;
}

}  // namespace repro
