#!/usr/bin/env python3
"""Top frames of a speedscope profile (the file `dotnet-trace collect --format Speedscope` writes), as text.

usage: speedscope_top.py FILE [--top N] [--frame SUBSTRING ...]
Per thread profile: the N frames with the most self time, and for each --frame the self and total share of the
frames whose name contains SUBSTRING. Shares are of the profile's whole span (endValue - startValue). Profiles
shorter than 1% of the longest are left out (and counted).
"""
import json
import sys


def weights(profile, pseudo):
    """(self, total) per frame index; total counts a frame once per instant however deep it recurses."""
    self_w, total_w = {}, {}

    def add(stack, w):
        if not stack or w <= 0:
            return
        # TraceEvent ends each stack in a pseudo-frame (CPU_TIME, UNMANAGED_CODE_TIME): self time is its caller's.
        leaf = next((f for f in reversed(stack) if f not in pseudo), stack[-1])
        self_w[leaf] = self_w.get(leaf, 0) + w
        for f in set(stack):
            total_w[f] = total_w.get(f, 0) + w

    if profile["type"] == "evented":
        stack, last = [], profile["startValue"]
        for e in profile["events"]:
            add(stack, e["at"] - last)
            last = e["at"]
            if e["type"] == "O":
                stack.append(e["frame"])
            elif stack and stack[-1] == e["frame"]:
                stack.pop()
            else:
                sys.exit(f"speedscope_top: unbalanced close of frame {e['frame']} at {e['at']} in '{profile['name']}'")
        add(stack, profile["endValue"] - last)
    elif profile["type"] == "sampled":
        for stack, w in zip(profile["samples"], profile["weights"]):
            add(stack, w)
    else:
        sys.exit(f"speedscope_top: profile '{profile.get('name')}' has unknown type '{profile.get('type')}'")
    return self_w, total_w


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__.strip().splitlines()[2])
    path, top, patterns = argv[0], 10, []
    i = 1
    while i < len(argv):
        if argv[i] == "--top" and i + 1 < len(argv):
            top = int(argv[i + 1]); i += 2
        elif argv[i] == "--frame" and i + 1 < len(argv):
            patterns.append(argv[i + 1]); i += 2
        else:
            sys.exit(f"speedscope_top: unknown argument '{argv[i]}'")
    try:
        with open(path) as f:
            doc = json.load(f)
        # "Module!Namespace.Type.Method(args)": the module adds nothing to a method's name.
        frames = [fr["name"].split("!", 1)[-1] for fr in doc["shared"]["frames"]]
        pseudo = {i for i, n in enumerate(frames) if n.isupper() and " " not in n}
        profiles = doc["profiles"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"speedscope_top: {path}: not a speedscope file ({e})")
    longest = max((p["endValue"] - p["startValue"] for p in profiles), default=0)
    short = 0
    for p in profiles:
        span = p["endValue"] - p["startValue"]
        if span <= 0 or span < longest / 100:
            short += 1  # a thread that lived or ran for a moment (the finalizer, a pool thread) says nothing here
            continue
        self_w, total_w = weights(p, pseudo)
        print(f"{p['name']}: {span:.0f} {p.get('unit', '')}")
        print(f"  {'self %':>7} {'total %':>8}  frame")
        for f, w in sorted(self_w.items(), key=lambda kv: -kv[1])[:top]:
            print(f"  {100 * w / span:7.2f} {100 * total_w[f] / span:8.2f}  {frames[f][:110]}")
        for pat in patterns:
            hit = [f for f in total_w if pat in frames[f]]
            s = sum(self_w.get(f, 0) for f in hit)
            t = max((total_w[f] for f in hit), default=0)
            print(f"  frame '{pat}': self {100 * s / span:.2f}%, total {100 * t / span:.2f}% ({len(hit)} frame(s))")
    if short:
        print(f"({short} thread profile(s) shorter than 1% of the longest left out)")


if __name__ == "__main__":
    main(sys.argv[1:])
