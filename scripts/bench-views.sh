#!/usr/bin/env bash
# Paired timings of every command on one profile, for BENCHMARKS.md:
# each round runs every command once, in turn (so that load on a shared
# machine hits all of them alike); medians of wall time and peak RSS.
#
#   scripts/bench-views.sh FILE [OLD_RPROF] [ROUNDS]
#
# FILE: a profile (scripts/bench.sh generates the 1 M-kernel one with
# rprof-gen). OLD_RPROF: a build of an earlier commit, measured beside
# this one for the commands both have. ROUNDS: default 3.
# Prints one line per command: name, median wall s, median peak RSS MB (10^6
# bytes), and the ratio to `parse` of the same binary. BENCH_ONLY="prof|parse"
# runs only the commands so named (and their old- twins).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
file=${1:?usage: scripts/bench-views.sh FILE [OLD_RPROF] [ROUNDS]}
old=${2:-}
rounds=${3:-3}
new=${RPROF:-target/release/rprof}
[ -x "$new" ] || cargo build --release --locked -q -p rprof
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$new" parse -q "$file" -o "$tmp/new.jsonl"
"$new" parse -q --format parquet "$file" -o "$tmp/new.parquet"
if [ -n "$old" ]; then
    "$old" parse -q "$file" > "$tmp/old.dict"
    "$old" parse -q --format parquet "$file" -o "$tmp/old.parquet"
fi

declare -a names cmds
add() { names+=("$1"); cmds+=("$2"); }
add parse "$new parse -q $file > /dev/null"
add prof "$new prof --csv $tmp/new.jsonl > /dev/null"
add summary-op "$new summary -q --by op $file > /dev/null"
add summary-kernel "$new summary -q --by kernel $file > /dev/null"
add gpu "$new gpu -q $file > /dev/null"
add export "$new export -q --chrome $file -o $tmp/t.json"
add report "$new report -q $file -o $tmp/r.html"
add mem "$new mem $file > /dev/null 2>&1"
add steps "$new steps -q $file > /dev/null"
# the benchmark export has no ProfilerStep#N range: its FSDP post_forward
# ranges (one per block and pass) stand in as steps, so that the step
# view's categories are computed
add steps-fsdp "$new steps -q --step post_forward $file > /dev/null"
add idle "$new idle -q $file > /dev/null"
add launch "$new launch -q $file > /dev/null"
add dist "$new dist -q $file > /dev/null"
add stats-kern "$new stats --report cuda_gpu_kern_sum $file > /dev/null"
add stats-default "$new stats -q $file > /dev/null"
add stats-nvtx "$new stats -q --report nvtx_sum $file > /dev/null"
add stats-proj "$new stats -q --report nvtx_gpu_proj_sum $file > /dev/null"
add stats-kern-nvtx "$new stats -q --report nvtx_kern_sum $file > /dev/null"
add stats-proj-trace "$new stats -q --report nvtx_gpu_proj_trace $file > /dev/null"
add summary-nvtx "$new summary -q --by nvtx $file > /dev/null"
add diff-self "$new diff -q $file $file > /dev/null"
# the commands that read records: mimalloc there (crates/cli/alloc.rs)
add summary-records "$new summary -q --by op $tmp/new.jsonl > /dev/null"
add gpu-records "$new gpu -q $tmp/new.jsonl > /dev/null"
add diff-records "$new diff -q $tmp/new.jsonl $tmp/new.jsonl > /dev/null"
# Parquet records: written by `parse`, read by the commands that read records
add parse-parquet "$new parse -q --format parquet $file -o $tmp/p.parquet"
add prof-parquet "$new prof --csv $tmp/new.parquet > /dev/null"
add summary-parquet "$new summary -q --by op $tmp/new.parquet > /dev/null"
if [ -n "$old" ]; then
    add old-parse "$old parse -q $file > /dev/null"
    add old-prof "$old prof --csv $tmp/old.dict > /dev/null"
    add old-summary-op "$old summary -q --by op $file > /dev/null"
    add old-summary-kernel "$old summary -q --by kernel $file > /dev/null"
    add old-gpu "$old gpu -q $file > /dev/null"
    add old-export "$old export --chrome $file -o $tmp/t.json"
    add old-mem "$old mem $file > /dev/null 2>&1"
    add old-launch "$old launch -q $file > /dev/null"
    add old-steps "$old steps -q $file > /dev/null"
    add old-steps-fsdp "$old steps -q --step post_forward $file > /dev/null"
    add old-idle "$old idle -q $file > /dev/null"
    add old-report "$old report -q $file -o $tmp/r-old.html"
    add old-stats-default "$old stats -q $file > /dev/null"
    add old-stats-nvtx "$old stats -q --report nvtx_sum $file > /dev/null"
    add old-stats-proj "$old stats -q --report nvtx_gpu_proj_sum $file > /dev/null"
    add old-stats-kern-nvtx "$old stats -q --report nvtx_kern_sum $file > /dev/null"
    add old-stats-proj-trace "$old stats -q --report nvtx_gpu_proj_trace $file > /dev/null"
    add old-summary-records "$old summary -q --by op $tmp/old.dict > /dev/null"
    add old-gpu-records "$old gpu -q $tmp/old.dict > /dev/null"
    add old-diff-records "$old diff -q $tmp/old.dict $tmp/old.dict > /dev/null"
    add old-parse-parquet "$old parse -q --format parquet $file -o $tmp/p-old.parquet"
    add old-prof-parquet "$old prof --csv $tmp/old.parquet > /dev/null"
    add old-summary-parquet "$old summary -q --by op $tmp/old.parquet > /dev/null"
fi
for ((r = 0; r < rounds; r++)); do
    for i in "${!names[@]}"; do
        # BENCH_ONLY: an extended regular expression; only the commands
        # whose names (old- taken off) match it are run
        if [ -n "${BENCH_ONLY:-}" ] && ! [[ ${names[$i]#old-} =~ ^(${BENCH_ONLY})$ ]]; then
            continue
        fi
        /usr/bin/time -f "%e %M" -o "$tmp/t" bash -c "${cmds[$i]}" || echo "failed: ${names[$i]}" >&2
        echo "${names[$i]} $(cat "$tmp/t")" >> "$tmp/all"
    done
done
# every run, for the record
cp "$tmp/all" "${BENCH_RUNS:-/tmp/bench-views-runs.txt}"
if [ -f "$tmp/r.html" ]; then
    ls -l "$tmp/r.html" | awk '{ printf "report size: %.1f MB\n", $5 / 1e6 }'
fi
awk '
{ t[$1] = t[$1] " " $2; m[$1] = m[$1] " " $3; if (!($1 in seen)) { seen[$1] = 1; name[++n] = $1 } }
function median(s,   a, k, i, j, x) { k = split(s, a, " "); for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }; return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
END {
    pn = median(t["parse"]); po = ("old-parse" in t) ? median(t["old-parse"]) : 0
    printf "%-20s %9s %9s %9s\n", "command", "wall s", "RSS MB", "x parse"  # MB = 10^6 bytes
    for (i = 1; i <= n; i++) { c = name[i]; w = median(t[c]); base = (c ~ /^old-/) ? po : pn
        printf "%-20s %9.2f %9.0f %9.2f\n", c, w, median(m[c]) * 1024 / 1e6, (base > 0 ? w / base : 0) }
}' "$tmp/all"
