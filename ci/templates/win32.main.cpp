// @ID@: the repro program for Windows. Protocol: flushed REPRO-REACHED lines, METRIC {json}, REPRO-DONE.
#include <windows.h>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IONBF, 0);  // protocol lines must reach the harness before a crash
    if (argc != 2 || (std::strcmp(argv[1], "bug") != 0 && std::strcmp(argv[1], "fix") != 0)) {
        std::fprintf(stderr, "usage: %s bug|fix\n", argv[0]);
        return 2;
    }
    std::puts("REPRO-REACHED start");
    HANDLE h = CreateEventW(nullptr, TRUE, FALSE, nullptr);
    CloseHandle(h);
    if (std::strcmp(argv[1], "bug") == 0) {
        // The example bug: a handle used after it was closed. Replace with the write-up's code.
        std::puts("REPRO-REACHED bug");
        if (!SetEvent(h) && GetLastError() == ERROR_INVALID_HANDLE) {
            std::puts("ERROR_INVALID_HANDLE");
            return 1;
        }
    }
    std::puts("REPRO-DONE");
    return 0;
}
