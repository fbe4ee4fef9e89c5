# Time travel on Linux: gdb's process record ("record full") over a short failing run, then a scripted reverse
# execution from the early delete back to the store that lost the update.
# usage: gdb -q -batch -nx -x reverse_walk.py --args refcount_lost_update bug --forced --trace none
# The walk: run recorded until the first DeleteObject (the early delete), put a hardware watchpoint on the
# counter, then reverse-continue: every stop is a store to it, shown with its thread, old and new value and
# instruction, until the exchange that wrote back an older value (the lost update).
import gdb, re, time

MAX_INSNS = 3000000
MAX_STEPS = 40
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
crashed = None
failures = {}
for rnd in range(MAX_ROUNDS):
    for t in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
        if not t.is_valid():
            continue
        t.switch()
        try:
            run("stepi %d" % SLICE)
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
# Measured here: this hardware watchpoint never fires in the replay (reverse-continue runs to the start of the
# history); a software one (set can-use-hw-watchpoints 0) did not finish within 400 s over 12K instructions.
say(run("watch -l *(long *)0x%x" % counter).strip())
say(run("info watchpoints").strip())
say("reverse-continue over the stores to the counter:")
first_insn = None
for step in range(1, MAX_STEPS + 1):
    out = run("reverse-continue")
    if "No more reverse-execution history" in out or "watchpoint" not in out.lower():
        say("  end of the recorded history: %s" % out.strip().splitlines()[-1] if out.strip() else "  end of history")
        break
    old = re.search(r"Old value = (-?\d+)", out)
    new = re.search(r"New value = (-?\d+)", out)
    th = gdb.selected_thread()
    # Stopped in reverse right before the store: the instruction at pc is the one that wrote.
    insn = run("x/i $pc").split(":", 1)[-1].strip()
    fn = gdb.selected_frame().function()
    where = fn.print_name if fn else "?"
    pos = re.search(r"Current instruction number is (\d+)", run("info record"))
    # In reverse, gdb reports the value after the store as "Old" and the value before it as "New".
    before, after = (int(new.group(1)), int(old.group(1))) if old and new else (None, None)
    say("  #%d  LWP %d  %s  in %s: %s -> %s   (instruction %s)"
          % (step, th.ptid[1], insn, where, before, after, pos.group(1) if pos else "?"))
    if "xchg" in insn and before is not None and after is not None and after < before:
        say("LOST UPDATE: LWP %d's exchange in %s found %d and wrote back %d: an increment overwritten"
              % (th.ptid[1], where, before, after))
        say("  %d stores back from the delete" % step)
        say(run("bt 4").strip())
        break
