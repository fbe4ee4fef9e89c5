# Usage: gdb -q -batch -nx -x freelog.py /usr/bin/mono-sgen CORE
# Reads the freelog ring out of a Mono core, finds the pointer the crashing free() was handed, and
# prints every recorded free of that pointer: thread, and the JIT addresses named from Mono's
# --jitmap perf map /tmp/perf-PID.map (freelog.so keeps that file line-buffered).
import gdb, os, bisect, struct

inf = gdb.selected_inferior()
pid = inf.pid
names = {}
path = "/tmp/perf-%d.map" % pid
if os.path.exists(path):
    for line in open(path, errors="replace"):
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) == 3:
            try:
                names[int(parts[0], 16)] = (int(parts[1], 16), parts[2])
            except ValueError:
                pass
spans = sorted((a, s, n) for a, (s, n) in names.items())
starts = [x[0] for x in spans]

def resolve(addr):
    i = bisect.bisect_right(starts, addr) - 1
    if i >= 0 and addr < spans[i][0] + spans[i][1]:
        return "%s +0x%x" % (spans[i][2], addr - spans[i][0])
    sym = gdb.execute("info symbol 0x%x" % addr, to_string=True).strip()
    return None if sym.startswith("No symbol") else sym

print("pid %d, JIT methods named: %d" % (pid, len(spans)))
crash_ptr = crash_tid = None
for th in inf.threads():
    th.switch()
    f = gdb.newest_frame()
    while f is not None and crash_ptr is None:
        if f.name() == "_int_free":
            crash_ptr = int(f.read_var("p")) + 16   # chunk header -> user pointer
            crash_tid = th.ptid[1]
        f = f.older()
def show_frames(depth, ret):
    seen = set()
    for k in range(depth):
        name = resolve(ret[k])
        key = name.rsplit(" +", 1)[0] if name else None
        if name and key not in seen:
            seen.add(key)
            print("      " + name)

# How far back the crashing thread's own frees are searched for a repeated one: glibc checks a chunk's neighbours
# and bins when it frees or allocates, so the damage of a double free shows within a few calls, not thousands.
LOOKBACK = 64

if crash_ptr is None:
    print("no thread is inside _int_free: not a double-free abort")
else:
    print("crashing thread LWP %d aborted in free(0x%x)" % (crash_tid, crash_ptr))
    ring = gdb.parse_and_eval("freelog_ring")
    n = int(gdb.parse_and_eval("freelog_next"))
    size = int(ring.type.range()[1]) + 1
    # struct rec { void *ptr; uint64_t seq; int32_t tid; int32_t depth; void *ret[8]; } (freelog.c), read at once.
    rec = struct.Struct("<QQii8Q")
    if int(gdb.parse_and_eval("sizeof(freelog_ring[0])")) != rec.size:
        raise gdb.GdbError("freelog_ring's records are not the 88 bytes this script reads")
    raw = bytes(inf.read_memory(int(ring.address), size * rec.size))
    recs = []
    for seq in range(max(0, n - size), n):
        ptr, s, tid, depth, *ret = rec.unpack_from(raw, (seq % size) * rec.size)
        if s == seq:
            recs.append((seq, ptr, tid, depth, ret))

    def show(ptr, marked, mark):
        hits = [r for r in recs if r[1] == ptr]
        print("frees of 0x%x: %d" % (ptr, len(hits)))
        for seq, _, tid, depth, ret in hits:
            print("  free #%d on LWP %d%s" % (seq, tid, mark if seq == marked else ""))
            show_frames(depth, ret)

    hits = [r for r in recs if r[1] == crash_ptr]
    print("frees recorded: %d; " % n, end="")
    show(crash_ptr, hits[-1][0] if hits and hits[-1][2] == crash_tid else None, "  <- the aborting free")
    if len(hits) < 2:
        # The block it aborted on was freed once: glibc may have found there the damage of an earlier double free.
        # The newest of the crashing thread's last frees whose block another thread had freed before it.
        last_by = {}
        found = None
        mine = 0
        for seq, ptr, tid, depth, ret in recs[:-1] if recs and recs[-1][1] == crash_ptr else recs:
            if tid == crash_tid and ptr in last_by and last_by[ptr][1] != crash_tid:
                found = (seq, ptr, last_by[ptr])
            last_by[ptr] = (seq, tid)
        if found is not None:
            before = sum(1 for r in recs if r[0] > found[0] and r[2] == crash_tid) - (1 if hits else 0)
            if before < LOOKBACK:
                seq, ptr, (prev_seq, prev_tid) = found
                print("glibc noticed at that free the damage of an earlier one: LWP %d freed 0x%x again at #%d, %d "
                      "free(s) of its own before the aborting one, after LWP %d had freed it at #%d"
                      % (crash_tid, ptr, seq, before, prev_tid, prev_seq))
                show(ptr, seq, "  <- the repeated free")
