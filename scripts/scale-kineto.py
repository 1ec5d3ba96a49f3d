#!/usr/bin/env python3
"""Replicate a PyTorch-profiler (Kineto) trace N times, one copy after the
other, for benchmarks on large traces (rprof-gen does the same for nsys
exports).

    scripts/scale-kineto.py IN.json[.gz] N OUT.json[.gz]

Each copy k (0-based) gets every timestamp shifted by k x (the trace's span
plus 1 ms), every correlation id, `External id` and flow id shifted by k x
(the largest id + 1), and `ProfilerStep#S` renamed `ProfilerStep#(S + k x
steps)`, so the copies are distinct steps whose kernels still find their
launches. Everything else (devices, distributedInfo, names, args) is kept.
The output is a synthetic trace made from a real one: say so when quoting
numbers on it. Standard library only.
"""
import gzip
import json
import re
import sys

ID_KEYS = ("correlation", "External id")
STEP = re.compile(r"^ProfilerStep#(\d+)$")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    src, copies, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if copies < 1:
        sys.stderr.write("scale-kineto: N must be at least 1\n")
        return 2
    trace = load(src)
    events = trace["traceEvents"]
    starts = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    ends = [e["ts"] + e.get("dur", 0) for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(ends) - min(starts) + 1000  # µs: span plus 1 ms
    max_id = 0
    steps = set()
    for e in events:
        if isinstance(e.get("id"), int):
            max_id = max(max_id, e["id"])
        for key in ID_KEYS:
            v = e.get("args", {}).get(key)
            if isinstance(v, int):
                max_id = max(max_id, v)
        m = STEP.match(e.get("name", ""))
        if m:
            steps.add(int(m.group(1)))
    id_shift = max_id + 1
    step_shift = (max(steps) - min(steps) + 1) if steps else 0
    out = []
    for k in range(copies):
        for e in events:
            if k == 0:
                out.append(e)
                continue
            # metadata events (no timestamp) once
            if not isinstance(e.get("ts"), (int, float)) or e.get("ph") == "M":
                continue
            c = dict(e)
            c["ts"] = e["ts"] + k * span
            if isinstance(e.get("id"), int):
                c["id"] = e["id"] + k * id_shift
            if "args" in e:
                a = dict(e["args"])
                for key in ID_KEYS:
                    if isinstance(a.get(key), int) and a[key] >= 0:
                        a[key] += k * id_shift
                c["args"] = a
            m = STEP.match(e.get("name", ""))
            if m:
                c["name"] = "ProfilerStep#%d" % (int(m.group(1)) + k * step_shift)
            out.append(c)
    trace["traceEvents"] = out
    opener = gzip.open if dst.endswith(".gz") else open
    with opener(dst, "wt", encoding="utf-8") as f:
        json.dump(trace, f, separators=(",", ":"))
    kernels = sum(1 for e in out if e.get("cat") == "kernel")
    sys.stderr.write("scale-kineto: %s: %d events, %d kernels\n" % (dst, len(out), kernels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
