#!/usr/bin/env bash
# Paired runs of `rprof parse` (every kernel attributed to its NVTX ranges,
# every record written) against nsys-ai's cold start on the same nsys
# export (`nsys-ai warm`: its Parquet cache and NVTX kernel map, built from
# nothing each round), each in turn, ROUNDS rounds: wall s, user CPU s,
# system s, peak RSS kB (GNU time). nsys-ai writes a cache folder beside
# the profile, so FILE is copied to a temporary folder first. Install
# nsys-ai as ../shared/docs/peers.md says.
#
#   scripts/bench-nsysai.sh NSYS_AI RPROF FILE [ROUNDS]
#   scripts/bench-nsysai.sh ~/nsysai/bin/nsys-ai target/release/rprof mfu_x250.sqlite 3
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
nsysai=$1 rprof=$2 file=$3 rounds=${4:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$file" "$tmp/p.sqlite"
t() {
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$@" >/dev/null 2>&1 || echo "FAILED: $*" >&2
    cat "$tmp/t"
}
for ((r = 1; r <= rounds; r++)); do
    rm -rf "$tmp"/p.nsys-cache*
    echo "round $r nsysai_warm $(t "$nsysai" warm "$tmp/p.sqlite")"
    echo "round $r rprof_parse $(t "$rprof" parse -q "$tmp/p.sqlite")"
    echo "round $r rprof_summary_nvtx $(t "$rprof" summary -q --by nvtx "$tmp/p.sqlite")"
done
