# suppressfinalize-shutdown-race, lab step: who freed what, per thread, from the freelog ring in a Mono core.
# Usage: gdb -q -batch -nx -x ring_threads.py $(readlink -f /usr/bin/mono) CORE   (with /tmp/perf-PID.map present)
# freelog.py answers "who freed the crashing pointer"; this answers "how far had each thread got": per LWP the
# number of frees, how many came from Event:Dispose, and the sequence numbers of its first and last such free; then
# whether the aborting free (the ring's last record: freelog records a free before glibc sees it) freed again the
# block of another thread's last Event:Dispose free.
import gdb, os, bisect, struct

inf = gdb.selected_inferior()
spans = []
path = "/tmp/perf-%d.map" % inf.pid
if os.path.exists(path):
    for line in open(path, errors="replace"):
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) == 3:
            try:
                spans.append((int(parts[0], 16), int(parts[1], 16), parts[2]))
            except ValueError:
                pass
spans.sort()
starts = [s[0] for s in spans]

def jit_name(addr):
    i = bisect.bisect_right(starts, addr) - 1
    return spans[i][2] if i >= 0 and addr < spans[i][0] + spans[i][1] else None

# struct rec { void *ptr; uint64_t seq; int32_t tid; int32_t depth; void *ret[8]; } in freelog.c: 88 bytes.
ring = gdb.parse_and_eval("freelog_ring")
size = int(ring.type.range()[1]) + 1
total = int(gdb.parse_and_eval("freelog_next"))
rec = struct.Struct("<QQii8Q")
raw = bytes(inf.read_memory(int(ring.address), size * rec.size))
per = {}
for seq in range(max(0, total - size), total):
    ptr, s, tid, depth, *ret = rec.unpack_from(raw, (seq % size) * rec.size)
    if s != seq:
        continue
    t = per.setdefault(tid, {"frees": 0, "dispose": 0, "first": None, "last": None, "finalize": 0, "lastPtr": None})
    t["frees"] += 1
    names = [jit_name(a) or "" for a in ret[:depth]]
    if any(":Dispose" in n and "Event" in n for n in names):
        t["dispose"] += 1
        t["first"] = seq if t["first"] is None else t["first"]
        t["last"] = seq
        t["lastPtr"] = ptr
        if any("Event:Finalize" in n for n in names):
            t["finalize"] += 1
print("pid %d: %d frees recorded, %d JIT methods named" % (inf.pid, total, len(spans)))
print("%8s %8s %15s %15s %10s %10s" % ("LWP", "frees", "Event:Dispose", "...via Finalize", "first", "last"))
for tid, t in sorted(per.items(), key=lambda kv: -kv[1]["dispose"]):
    if t["dispose"]:
        print("%8d %8d %15d %15d %10s %10s" % (tid, t["frees"], t["dispose"], t["finalize"], "#%d" % t["first"], "#%d" % t["last"]))
others = sum(1 for t in per.values() if not t["dispose"])
print("(%d more threads freed memory, none of it through Event:Dispose)" % others)
last = total - 1
ptr, s, tid, depth, *ret = rec.unpack_from(raw, (last % size) * rec.size)
if total and s == last:
    print("the aborting free: #%d on LWP %d, of 0x%x" % (last, tid, ptr))
    for other, t in per.items():
        if other != tid and t["lastPtr"] == ptr:
            print("LWP %d's last free through Event:Dispose, #%d, was of the same block: it freed nothing through "
                  "Event:Dispose after it" % (other, t["last"]))
