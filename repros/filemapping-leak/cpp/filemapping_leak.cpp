// filemapping-leak: shared memory that is unmapped but whose mapping object stays open belongs to no process;
// write-up: docs/labs/filemapping-leak.md
//
// Linux program: filemapping_leak <memfd|shm> <bug|fix> <count> <sizeMB> [holdSec]
// For each of <count> objects: create (memfd_create, or shm_open + shm_unlink), ftruncate, mmap, fill, munmap.
// bug keeps every descriptor open, fix closes it. Protocol lines on stdout, each flushed:
//   REPRO-REACHED leaked count=<n> bytes=<total>   (objects still held; 0 for fix)
//   METRIC {"count":..,"bytes":..,"rss_kb":..,...}
//   REPRO-DONE
#include "filemapping_leak.h"

#include <chrono>
#include <cstdlib>
#include <thread>

namespace {

int usage() {
    std::fprintf(stderr, "usage: filemapping_leak <memfd|shm> <bug|fix> <count> <sizeMB> [holdSec]\n");
    return 2;
}

bool parse_int(const char* s, long long lo, long long& out) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != 0 || v < lo) return false;
    out = v;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc < 5 || argc > 6) return usage();
    fml::Kind kind;
    if (!fml::parse_kind(argv[1], kind)) return usage();
    std::string variant = argv[2];
    if (variant != "bug" && variant != "fix") return usage();
    long long count = 0, size_mb = 0, hold = 0;
    if (!parse_int(argv[3], 0, count) || !parse_int(argv[4], 1, size_mb)) return usage();
    if (argc == 6 && !parse_int(argv[5], 0, hold)) return usage();

    const std::size_t bytes = static_cast<std::size_t>(size_mb) << 20;
    std::vector<fml::Object> held;  // the bug's "list of mappings": nothing but descriptors
    try {
        for (long long i = 1; i <= count; ++i) {
            fml::Object o = fml::create_fill_unmap(kind, bytes, static_cast<int>(i));
            if (variant == "bug")
                held.push_back(o);
            else
                fml::release(o);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "filemapping_leak: %s\n", e.what());
        return 1;
    }

    unsigned long long total = static_cast<unsigned long long>(held.size()) * bytes;
    std::printf("REPRO-REACHED leaked count=%zu bytes=%llu\n", held.size(), total);
    std::fflush(stdout);
    if (hold > 0) std::this_thread::sleep_for(std::chrono::seconds(hold));

    std::printf("METRIC {\"count\":%zu,\"bytes\":%llu,\"rss_kb\":%lld,\"created\":%lld,\"kind\":\"%s\","
                "\"fds_deleted\":%zu,\"shmem_kb\":%lld}\n",
                held.size(), total, fml::self_rss_kb(), count, fml::kind_name(kind),
                fml::deleted_shared_fds().size(), fml::shmem_kb());
    std::printf("REPRO-DONE\n");
    std::fflush(stdout);
    for (auto& o : held) fml::release(o);
    return 0;
}
