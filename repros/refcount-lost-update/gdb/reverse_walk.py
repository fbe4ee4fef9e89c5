# Time travel on Linux: gdb's process record ("record full") over a short failing run, then a scripted walk back
# through the recorded history from the crash to the store that lost the update.
# usage: gdb -q -batch -nx -x reverse_walk.py --args refcount_lost_update bug --forced --trace none
# The walk: record from ForcedGo to the crash, then move backwards through the history with `record goto`, reading
# the counter at each position: every change is a store, shown with its instruction number, thread, instruction
# and the values before and after, until the exchange that wrote back an older value (the lost update).
# Why not a watchpoint and reverse-continue: in this VM's replay a hardware watchpoint never fires and a software
# one (or a breakpoint on the exchange) crawls, over 400 s for 12K instructions; `record goto` takes milliseconds.
import gdb, re, time

MAX_INSNS = 3000000
STRIDE = 64
SLICE = 200
MAX_ROUNDS = 2000
def say(text):
    # The walk's own lines start with "| ": stepping prints the stop locations around them.
    for line in text.splitlines():
        print("| " + line)

def run(cmd):
    return gdb.execute(cmd, to_string=True)

run("set pagination off")
run("set confirm off")
run("set print thread-events off")
run("set record full insn-number-max %d" % MAX_INSNS)
# record full cannot decode AVX/EVEX instructions (glibc on its SSE2 string functions) nor the rseq syscall of a
# starting thread (glibc registers none with pthread.rseq=0).
# Lazy binding goes through _dl_runtime_resolve_xsavec, which record full cannot decode either: bind at load.
run("set environment LD_BIND_NOW=1")
run("set environment GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX2,-AVX,-EVEX,-BMI2,-FMA,-RTM:glibc.pthread.rseq=0")
run("break refcount::ForcedGo")
run("run")
t0 = time.time()
run("record full")
say("recording from ForcedGo (both threads waiting) (record full, at most %d instructions)" % MAX_INSNS)
obj = gdb.parse_and_eval("refcount::g_forcedObject")
counter = int(obj.dereference()["m_Counter"].address)
say("the counter of 0x%x is at 0x%x and holds %d" % (int(obj), counter, int(obj.dereference()["m_Counter"])))
# "continue" under record full hangs here: only the current thread is stepped, and it spins waiting for the
# others. So the script schedules: one thread at a time (scheduler-locking), a slice of instructions each, round
# robin, as rr runs threads one at a time on one core. The yield point makes the interleaving the same every time.
run("set scheduler-locking on")
stops = []
gdb.events.stop.connect(lambda e: stops.append(e))

def logged():
    m = re.search(r"Log contains (\d+) instructions", run("info record"))
    return int(m.group(1)) if m else 0

# record full logs instructions, not threads: the script notes which thread ran each slice of the log.
slices = []
crashed = None
failures = {}
exited = False
for rnd in range(MAX_ROUNDS):
    threads = gdb.selected_inferior().threads()
    if not threads:
        exited = True
        break
    for t in sorted(threads, key=lambda t: t.num):
        if not t.is_valid():
            continue
        t.switch()
        before = logged()
        try:
            run("stepi %d" % SLICE)
            slices.append((before + 1, logged(), t.ptid[1]))
            failures.pop(t.num, None)
        except gdb.error as e:
            # A thread caught inside a syscall when recording began cannot be recorded until it returns: retry.
            failures[t.num] = failures.get(t.num, 0) + 1
            if failures[t.num] > 20:
                say("stepping LWP %d keeps failing: %s (at %s, rax %s)" % (t.ptid[1], e, run("x/i $pc").strip(),
                                                                          int(gdb.parse_and_eval("$rax"))))
                raise SystemExit
            stops.clear()
            continue
        signals = [e.stop_signal for e in stops if isinstance(e, gdb.SignalEvent)]
        stops.clear()
        if signals:
            crashed = (t, signals[0])
            break
    if crashed:
        break
if exited:
    say("the program ended without a crash after %d rounds: nothing to walk back from" % rnd)
    raise SystemExit
if not crashed:
    say("no crash within %d rounds of %d instructions per thread" % (MAX_ROUNDS, SLICE))
    raise SystemExit
recorded = time.time() - t0
info = run("info record")
insns = re.search(r"Log contains (\d+) instructions", info)
say("LWP %d got %s after %d rounds, %.1f s after recording began; %s instructions recorded"
    % (crashed[0].ptid[1], crashed[1], rnd + 1, recorded, insns.group(1) if insns else "?"))
say(run("bt 6").strip())
run("set scheduler-locking off")
run("delete")
info = run("info record")
lo = int(re.search(r"Lowest recorded instruction number is (\d+)", info).group(1))
hi = int(re.search(r"Highest recorded instruction number is (\d+)", info).group(1))

def value_at(n):
    # The counter as it was just before instruction n ran.
    try:
        run("record goto %d" % n)
    except gdb.error as e:
        if "Already at target" not in str(e):
            raise
    return int(gdb.parse_and_eval("*(long *)0x%x" % counter))

def lwp_of(n):
    return next((lwp for a, b, lwp in slices if a <= n <= b), 0)

say("walking back from instruction %d (the crash) through the recorded history, %d instructions at a time:" % (hi, STRIDE))
t1 = time.time()
stores = 0
lost = None
overwritten = None
n, v = hi, value_at(hi)
while n > lo and overwritten is None:
    m = max(n - STRIDE, lo)
    if value_at(m) == v:
        n = m
        continue
    # A store between m and n: step back one instruction at a time to find it (and any others).
    for k in range(n - 1, m - 1, -1):
        before = value_at(k)
        if before == v:
            continue
        stores += 1
        insn = run("x/i $pc").split(":", 1)[-1].strip()
        fn = gdb.selected_frame().function()
        where = fn.print_name if fn else "?"
        say("  store %d back: instruction %d, LWP %d, %s in %s: %d -> %d" % (stores, k, lwp_of(k), insn, where, before, v))
        if lost is not None:
            # The store right before the lost exchange: the other thread's update it overwrote.
            overwritten = (k, lwp_of(k), where, before, v)
            break
        if "xchg" in insn and v < before:
            lost = (k, lwp_of(k), where, before, v)
        v = before
    n = m
walked = time.time() - t1
if lost:
    k, lwp, where, before, after = lost
    say("LOST UPDATE: LWP %d's exchange in %s found %d and wrote back %d: an increment overwritten" % (lwp, where, before, after))
    say("  %d instructions and %d stores back from the crash, found in %.1f s" % (hi - k, stores - (1 if overwritten else 0), walked))
    if overwritten:
        k2, lwp2, where2, b2, a2 = overwritten
        say("  it overwrote LWP %d's store at instruction %d in %s (%d -> %d), %d instructions earlier"
            % (lwp2, k2, where2, b2, a2, k - k2))
else:
    say("no exchange that wrote back an older value in %d instructions (%.1f s)" % (hi - lo, walked))
