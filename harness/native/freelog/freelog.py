# Usage: gdb -q -batch -nx -x freelog.py /usr/bin/mono-sgen CORE
# Reads the freelog ring out of a Mono core, finds the pointer the crashing free() was handed, and
# prints every recorded free of that pointer: thread, and the JIT addresses named from Mono's
# --jitmap perf map /tmp/perf-PID.map (freelog.so keeps that file line-buffered).
import gdb, os, bisect

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
if crash_ptr is None:
    print("no thread is inside _int_free: not a double-free abort")
else:
    print("crashing thread LWP %d aborted in free(0x%x)" % (crash_tid, crash_ptr))
    ring = gdb.parse_and_eval("freelog_ring")
    n = int(gdb.parse_and_eval("freelog_next"))
    size = int(ring.type.range()[1]) + 1
    hits = []
    for seq in range(max(0, n - size), n):
        r = ring[seq % size]
        if int(r["seq"]) == seq and int(r["ptr"]) == crash_ptr:
            hits.append(r)
    print("frees recorded: %d; frees of 0x%x: %d" % (n, crash_ptr, len(hits)))
    for r in hits:
        tid = int(r["tid"])
        print("  free #%d on LWP %d%s" % (int(r["seq"]), tid, "  <- the aborting free" if tid == crash_tid else ""))
        seen = set()
        for k in range(int(r["depth"])):
            name = resolve(int(r["ret"][k]))
            key = name.rsplit(" +", 1)[0] if name else None
            if name and key not in seen:
                seen.add(key)
                print("      " + name)
