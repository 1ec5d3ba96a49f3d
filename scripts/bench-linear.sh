#!/usr/bin/env bash
# Cost per kernel at several sizes (issue 17 target 5): parse, prof on the
# records, summary --by op on the profile, ROUNDS rounds each, in turn.
# Prints: copies round command wall_s user_s peak_RSS_KiB.
#
#   scripts/bench-linear.sh RPROF RPROF_GEN [ROUNDS]
#   scripts/bench-linear.sh target/release/rprof target/release/rprof-gen 2
# Generates mfu_x25/x250/x750.sqlite (100 k, 1 M, 3 M kernels; 2.5 GB in
# all) in $BENCH_DIR (default target/bench) when missing.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,9p' "$0" >&2
    exit 2
fi
rprof=$1 gen=$2 rounds=${3:-2}
dir=${BENCH_DIR:-target/bench}
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t() {
    /usr/bin/time -f "%e %U %M" -o "$tmp/t" "$@" >/dev/null 2>&1
    cat "$tmp/t"
}
for n in 25 250 750; do
    f=$dir/mfu_x$n.sqlite
    [ -f "$f" ] || "$gen" scale --copies "$n" -o "$f" >/dev/null
    "$rprof" parse -q "$f" -o "$tmp/r.jsonl"
    for ((r = 1; r <= rounds; r++)); do
        echo "$n $r parse $(t "$rprof" parse -q "$f")"
        echo "$n $r prof $(t "$rprof" prof --csv "$tmp/r.jsonl")"
        echo "$n $r summary-op $(t "$rprof" summary -q --by op "$f")"
    done
    rm -f "$tmp/r.jsonl" "$tmp/r.jsonl.meta.json"
done
