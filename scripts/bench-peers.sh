#!/usr/bin/env bash
# Paired runs of rprof against HTA and the PyTorch Profiler TensorBoard
# plugin on one Kineto trace, each command in turn, ROUNDS rounds: wall s,
# user CPU s, system s, peak RSS kB per run (GNU time). PYTHON is a Python
# with HolisticTraceAnalysis and torch-tb-profiler installed
# (../shared/docs/peers.md). TRACE must be alone in its folder (HTA loads
# every trace of the folder); scripts/scale-kineto.py makes large traces.
#
#   scripts/bench-peers.sh RPROF PYTHON TRACE [ROUNDS]
#   scripts/bench-peers.sh target/release/rprof ~/peers/bin/python k25/rank3.json 3
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,10p' "$0" >&2
    exit 2
fi
rprof=$1 python=$2 file=$3 rounds=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(dirname "$file")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t() {
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$@" >/dev/null 2>&1 || echo "FAILED: $*" >&2
    cat "$tmp/t"
}
for ((r = 1; r <= rounds; r++)); do
    echo "round $r hta_load $(t "$python" "$here/peers/hta_load.py" "$dir")"
    echo "round $r hta_kernel_breakdown $(t "$python" "$here/peers/hta_load.py" "$dir" kernels)"
    echo "round $r tbplugin_load $(t "$python" "$here/peers/tb_load.py" "$file")"
    echo "round $r rprof_parse $(t "$rprof" parse -q "$file")"
    echo "round $r rprof_summary_kernel $(t "$rprof" summary -q --by kernel "$file")"
    echo "round $r rprof_steps $(t "$rprof" steps -q "$file")"
    echo "round $r rprof_gpu $(t "$rprof" gpu -q "$file")"
    echo "round $r rprof_report $(t "$rprof" report -q "$file" -o "$tmp/r.html")"
done
