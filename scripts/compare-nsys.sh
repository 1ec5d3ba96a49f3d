#!/usr/bin/env bash
# Every `rprof stats` report against NVIDIA's `nsys stats` on nsys SQLite
# exports: per file and report, the rows nsys printed, the rows rprof
# printed, and how many of nsys's rows rprof prints field for field in the
# same place (CSV, default units). Install nsys as ../shared/docs/peers.md
# says. Where the two are meant to differ: docs/stats.md, "Where rprof
# differs from nsys stats".
#
#   scripts/compare-nsys.sh NSYS RPROF FILE.sqlite...
#   scripts/compare-nsys.sh ~/nsys/.../target-linux-x64/nsys target/release/rprof a.sqlite b.sqlite
#
# Output, one line per file and report:
#   FILE REPORT nsys=N rprof=M equal=E     (N = M = E: the same rows)
#   FILE REPORT nsys=skipped rprof=M       (nsys printed nothing; M = -:
#                                           neither did rprof)
# and a last line with the totals. Exit 0 whatever the comparison finds.
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,20p' "$0" >&2
    exit 2
fi
nsys=$1 rprof=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
reports="cuda_gpu_kern_sum cuda_gpu_kern_gb_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum
cuda_gpu_sum cuda_api_sum cuda_kern_exec_sum nvtx_sum nvtx_pushpop_sum nvtx_startend_sum
nvtx_kern_sum nvtx_gpu_proj_sum osrt_sum um_sum cuda_gpu_trace cuda_api_trace
cuda_kern_exec_trace nvtx_gpu_proj_trace"
for f in "$@"; do
    for r in $reports; do
        rm -f "$tmp/n_$r.csv"
        "$nsys" stats --report "$r" --format csv -o "$tmp/n" --force-overwrite true "$f" \
            >"$tmp/nsys.log" 2>&1 || true
        "$rprof" stats -q -r "$r" --format csv "$f" >"$tmp/r.csv" 2>/dev/null || true
        python3 - "$f" "$r" "$tmp/n_$r.csv" "$tmp/r.csv" <<'PY'
import csv, os, sys
f, r, n, m = sys.argv[1:]
def rows(p):
    if not os.path.exists(p) or os.path.getsize(p) == 0:
        return None
    with open(p, newline="") as fh:
        return list(csv.reader(fh))
a, b = rows(n), rows(m)
mine = "-" if not b else len(b) - 1
if not a:
    print(f"{f} {r} nsys=skipped rprof={mine}")
else:
    same = 0
    if b and a[0] == b[0]:
        same = sum(1 for x, y in zip(a[1:], b[1:]) if x == y)
    print(f"{f} {r} nsys={len(a) - 1} rprof={mine} equal={same}")
PY
    done
done | tee "$tmp/out"
awk '$3 ~ /^nsys=[0-9]/ { split($3, n, "="); split($5, e, "="); t += n[2]; s += e[2] }
     END { printf "total: nsys printed %d rows, rprof printed %d of them equal and in place\n", t, s }' "$tmp/out"
