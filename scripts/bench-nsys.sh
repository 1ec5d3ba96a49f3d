#!/usr/bin/env bash
# Paired runs of rprof against NVIDIA's `nsys stats` on one nsys export,
# each command in turn, ROUNDS rounds: wall s, user CPU s, system s, peak
# RSS kB per run (GNU time). Install nsys as ../shared/docs/peers.md says.
#
#   scripts/bench-nsys.sh NSYS RPROF FILE [ROUNDS]
#   scripts/bench-nsys.sh ~/nsys/.../target-linux-x64/nsys target/release/rprof mfu_x250.sqlite 3
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,8p' "$0" >&2
    exit 2
fi
nsys=$1 rprof=$2 file=$3 rounds=${4:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t() {
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$@" >/dev/null 2>&1
    cat "$tmp/t"
}
for ((r = 1; r <= rounds; r++)); do
    echo "round $r nsys_cuda_gpu_kern_sum $(t "$nsys" stats --report cuda_gpu_kern_sum --format csv -o "$tmp/k" --force-overwrite true "$file")"
    echo "round $r rprof_stats_cuda_gpu_kern_sum $(t "$rprof" stats -q -r cuda_gpu_kern_sum --format csv "$file")"
    echo "round $r rprof_summary_kernel_no_models $(t "$rprof" summary -q --by kernel --no-models "$file")"
    echo "round $r rprof_parse $(t "$rprof" parse -q "$file")"
    echo "round $r nsys_nvtx_kern_sum $(t "$nsys" stats --report nvtx_kern_sum --format csv -o "$tmp/n" --force-overwrite true "$file")"
    echo "round $r rprof_stats_nvtx_kern_sum $(t "$rprof" stats -q -r nvtx_kern_sum --format csv "$file")"
done
