# Usage: gdb -q -batch -nx -x eventring.py [PROGRAM] CORE
#    or: python3 eventring.py RING_FILE   (the ring as eventring::WriteTo wrote it, where no core is written)
# Finds the event rings of harness/native/eventring/eventring.h in a core by their magic (no symbols needed:
# sanitizer builds, Windows programs under Wine), merges every thread's events by timestamp, and looks for lost
# updates: an exchange that wrote back the value its thread had read, over a different value that another thread
# had written in between. Prints the events around the first lost increment and the first delete.
import re, struct, sys

try:
    import gdb
except ImportError:
    gdb = None

MAGIC = b"EVENTRING/1\0"
HEADER = struct.Struct("<16sIIIIQ224s")
EVENT = struct.Struct("<QQQqqII")
CONTEXT = 12

if gdb is not None:
    inf = gdb.selected_inferior()
    crash = gdb.selected_thread()
    if crash is not None:
        print("crashing thread LWP %d" % crash.ptid[1])

    def ranges():
        text = gdb.execute("info files", to_string=True)
        for m in re.finditer(r"^\s*(0x[0-9a-f]+) - (0x[0-9a-f]+) is (\S+)", text, re.M):
            lo, hi = int(m.group(1), 16), int(m.group(2), 16)
            if 0 < hi - lo <= (1 << 30):
                yield lo, hi

    def search(lo, n, pattern):
        try:
            return inf.search_memory(lo, n, pattern)
        except gdb.error:
            return None

    def read(at, n):
        return bytes(inf.read_memory(at, n))
else:
    if len(sys.argv) != 2:
        sys.exit("usage: python3 eventring.py RING_FILE")
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    print("ring file %s, %d bytes" % (sys.argv[1], len(data)))

    def ranges():
        yield 0, len(data)

    def search(lo, n, pattern):
        at = data.find(pattern, lo, lo + n)
        return None if at < 0 else at

    def read(at, n):
        if at + n > len(data):
            sys.exit("the ring file ends at %d bytes, before %d" % (len(data), at + n))
        return data[at:at + n]

def find_ring():
    seen = set()
    for lo, hi in ranges():
        if (lo, hi) in seen:
            continue
        seen.add((lo, hi))
        start = lo
        while start < hi:
            at = search(start, hi - start, MAGIC)
            if at is None:
                break
            # The magic string itself sits in the program's constants too: a ring has a plausible header.
            _, threads, slots, esize, claimed, _, _ = HEADER.unpack(read(at, HEADER.size))
            if esize == EVENT.size and 0 < threads <= 4096 and slots and slots & (slots - 1) == 0 and claimed > 0:
                return at
            start = at + 1
    return None

at = find_ring()
if at is None:
    print("no event ring in this core")
    raise SystemExit
magic, threads, slots, esize, claimed, start_tsc, ops = HEADER.unpack(read(at, HEADER.size))
names = {}
for part in ops.split(b"\0")[0].decode().split(","):
    code, _, name = part.strip().partition(" ")
    if code:
        names[int(code)] = name
rings_at = at + HEADER.size
thread_size = 16 + slots * esize
events, recorded = [], 0
for t in range(min(claimed, threads)):
    base = rings_at + t * thread_size
    nxt, tid = struct.unpack("<QI", read(base, 12))
    recorded += nxt
    if nxt == 0:
        continue
    raw = read(base + 16, slots * esize)
    for seq in range(max(0, nxt - slots), nxt):
        tsc0, tsc, obj, seen_v, wrote, etid, op = EVENT.unpack_from(raw, (seq % slots) * esize)
        if etid == tid and op in names:
            events.append((tsc, tsc0, obj, seen_v, wrote, tid, names[op], seq))
events.sort()
print("eventring at 0x%x: %d threads, %d events recorded, %d kept" % (at, min(claimed, threads), recorded, len(events)))

def show(e, mark=""):
    tsc, tsc0, obj, seen_v, wrote, tid, op, seq = e
    print("    %+14d  LWP %-7d %-8s obj 0x%x  found %d, left %d%s" % (tsc - start_tsc, tid, op, obj, seen_v, wrote, mark))

lost = [e for e in events if e[6] == "xchg" and e[3] != e[4]]
deletes = [e for e in events if e[6] == "delete"]
print("lost updates: %d (%d increments, %d decrements overwritten)" % (
    len(lost), sum(e[3] - e[4] for e in lost if e[3] > e[4]), sum(e[4] - e[3] for e in lost if e[3] < e[4])))
first_delete = deletes[0] if deletes else None

def written_before(e, d):
    """An exchange is stamped after it wrote, so a thread preempted in between stamps it after later events (Wine
    under load: after the delete it caused). Its write precedes the delete d when the release that freed the object
    found what the exchange wrote, and the deleting thread's own update before that release had left what the
    exchange found: the change between the two is the exchange's, which read before the release. None otherwise."""
    tsc, tsc0, obj, found, wrote, tid = e[:6]
    own = [x for x in events if x[5] == d[5] and x[2] == obj and x[0] < d[0] and x[6] in ("addref", "release", "xchg")]
    if len(own) < 2:
        return None
    prev, release = own[-2], own[-1]
    if release[6] == "release" and release[4] == 0 and release[3] == wrote and prev[4] == found and tsc0 <= release[0]:
        return "LWP %d left %d, then its release found %d, the exchange's write" % (d[5], prev[4], release[3])
    return None

n = 0
for e in lost:
    tsc, tsc0, obj, found, wrote, tid, op, seq = e
    n += 1
    kind = "increment" if found > wrote else "decrement"
    on_deleted = first_delete is not None and first_delete[2] == obj
    by_value = on_deleted and tsc >= first_delete[0] and written_before(e, first_delete)
    before = on_deleted and (tsc < first_delete[0] or bool(by_value))
    print("lost update #%d: obj 0x%x LWP %d exchange read %d, found %d, wrote %d: %d %s%s overwritten%s" % (
        n, obj, tid, wrote, found, wrote, abs(found - wrote), kind, "s" if abs(found - wrote) > 1 else "",
        " (before the first delete)" if before else ""))
    if by_value:
        print("  stamped after the first delete, written before it: %s" % by_value)
    # Other threads' updates of the object between this thread's read (tsc0) and its exchange (tsc).
    between = [x for x in events if x[2] == obj and x[5] != tid and tsc0 <= x[0] <= tsc and x[6] in ("addref", "release", "xchg")]
    for x in between:
        print("  between its read and its write: LWP %d %s %d -> %d" % (x[5], x[6], x[3], x[4]))
    if n >= 20:
        print("  (more lost updates not listed)")
        break
for d in deletes[:4]:
    print("delete: obj 0x%x LWP %d" % (d[2], d[5]))
focus = next((e for e in lost if e[3] > e[4]), None)
for title, e in (("around the first overwritten increment", focus), ("around the first delete", first_delete)):
    if e is None:
        continue
    i = events.index(e)
    print("events %s (timestamps in TSC ticks from the start):" % title)
    for x in events[max(0, i - CONTEXT):i + CONTEXT]:
        show(x, "   <==" if x is e else "")
