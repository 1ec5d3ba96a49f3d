#!/usr/bin/env python3
"""Load one Kineto trace with the PyTorch Profiler TensorBoard plugin's own
parser and run generator (what the plugin does per worker file before it
serves any page), without TensorBoard or torch. Used by
scripts/bench-peers.sh.

    python tb_load.py FILE.pt.trace.json
"""
import os
import sys
import tempfile

from torch_tb_profiler.profiler.data import RunProfileData
from torch_tb_profiler.profiler.run_generator import RunGenerator

path = sys.argv[1]
with tempfile.TemporaryDirectory() as cache:
    data = RunProfileData.parse("worker0", None, path, cache)
    profile = RunGenerator("worker0", None, data).generate_run_profile()
    print("tb-plugin views:", sorted(profile.views and [v.display_name for v in profile.views]))
