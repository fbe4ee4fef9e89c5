// @ID@: the repro program. Protocol: flushed REPRO-REACHED lines, METRIC {json}, REPRO-DONE.
#include <cstdio>
#include <cstring>
#include "@SNAKE@.h"

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IONBF, 0);  // protocol lines must reach the harness before a crash
    if (argc != 2 || (std::strcmp(argv[1], "bug") != 0 && std::strcmp(argv[1], "fix") != 0)) {
        std::fprintf(stderr, "usage: %s bug|fix\n", argv[0]);
        return 2;
    }
    std::puts("REPRO-REACHED start");
    int left = repro::run(argv[1]);
    std::printf("METRIC {\"left\": %d}\n", left);
    std::puts("REPRO-DONE");
    return 0;
}
