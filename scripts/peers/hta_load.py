#!/usr/bin/env python3
"""Load a folder of Kineto traces with HTA (HolisticTraceAnalysis) and, with
`kernels`, compute its kernel breakdown; prints the kernel count it saw.
Used by scripts/bench-peers.sh.

    python hta_load.py DIR [kernels|temporal]
"""
import sys

from hta.trace_analysis import TraceAnalysis

analysis = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
what = sys.argv[2] if len(sys.argv) > 2 else ""
if what == "kernels":
    kernel_type, kernels = analysis.get_gpu_kernel_breakdown(visualize=False)
    print("hta kernel groups:", len(kernels))
elif what == "temporal":
    print(analysis.get_temporal_breakdown(visualize=False))
else:
    t = analysis.t
    print("hta ranks:", len(t.traces))
