#!/usr/bin/env bash
# Whole-command benchmarks of rprof on scaled real nsys exports (issue #5).
# Results and how to read them: BENCHMARKS.md.
#
#   scripts/bench.sh [--quick] [--runs N] [--source SRC.sqlite] [--regen]
#
# 1. Builds rprof and rprof-gen with --release (honours CARGO_TARGET_DIR).
# 2. Generates its inputs with `rprof-gen scale` into BENCH_DIR (default
#    $CARGO_TARGET_DIR/bench, else target/bench): 250 and 750 copies of
#    nsys-ai/mfu_2gpu_before.sqlite (~1 M kernels / 4.8 M NVTX rows and
#    ~3 M kernels / 14 M NVTX rows). Existing files are kept (--regen redoes
#    them).
# 3. Measures with hyperfine, per file, in interleaved rounds (each round
#    runs every command once; one warm-up round; warm page cache; medians):
#    - floor-sum:  sqlite3 reading every column rprof reads (same tables,
#                  columns and WHERE clauses as crates/trace/src/read/nsys.rs)
#                  and aggregating them, printing nothing: the physical floor
#    - floor-rows: the same SELECTs printed by sqlite3 into /dev/null
#    - parse, parse with RAYON_NUM_THREADS=1 and =2
#    - parse | prof --csv, prof --csv on a .dict, prof | head -1 (time to the
#      first row); skipped while `rprof prof --csv` does not work
#    and peak RSS (/usr/bin/time) of parse and of the floor.
# 4. Prints a summary with the issue's ratios; keeps every run's times
#    (times-x*.tsv) and the summary (summary.txt) in BENCH_DIR.
#
# Options:
#   --quick          only the ~1 M-kernel file (same as --copies 250) and
#                    the 8-rank dist case
#   --copies "N..."  scale factors to measure (default "250 750"; "" measures
#                    only the dist case)
#   --runs N         rounds, i.e. runs per command (default 5; plus 1 warm-up)
#   --source FILE    the nsys export to scale (default: rprof-gen's default,
#                    fixtures/nsys-ai/mfu_2gpu_before.sqlite or the corpus)
#   --regen          regenerate the scaled files
#   --dist "N..."    rank counts of the `rprof dist` case (default "8 64"; ""
#                    skips it): N rank files of ~125 k kernels each (31
#                    copies of the source; each file is one export holding
#                    its two processes), against `rprof parse` on the ~1 M
#                    kernel file (250 copies); wall time and peak RSS
#   --rprof BIN      measure this rprof binary (e.g. a saved build of another
#                    commit) instead of the one built here
#   --nice N         run the measured commands under `nice -n N` (e.g. -10 as
#                    root, so that other work on a shared machine disturbs
#                    the timings less)
# Issue 17's other targets (each adds a section to the summary; none runs
# unless asked for):
#   --views N        every command on each scaled file, N rounds in turn
#                    (scripts/bench-views.sh): wall and peak RSS, and each
#                    command's time over `parse`'s (targets 3 and 7)
#   --linear N       parse, prof and summary at 100 k, 1 M and 3 M kernels,
#                    N rounds (scripts/bench-linear.sh; target 5)
#   --nsys NSYS      against `nsys stats` on the ~1 M-kernel file, $runs
#                    rounds (scripts/bench-nsys.sh; targets 2 and 6)
#   --nsys-ai BIN    against nsys-ai's cold start on the ~1 M-kernel file
#                    (scripts/bench-nsysai.sh; target 6)
#   --peers PYTHON   against HTA and the TensorBoard plugin on a 214 k-kernel
#                    Kineto trace made by scripts/scale-kineto.py from the
#                    corpus's trace_diff_control (scripts/bench-peers.sh;
#                    target 6); PYTHON has both installed (peers.md)
#   --perf           where `parse` spends its CPU on the ~1 M-kernel file:
#                    perf samples per thread and the top functions (target 8)
# Needs: cargo, hyperfine, sqlite3, GNU time (apt-get installs the last three
# when missing and running as root).
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

copies_list="250 750"
dist_list="8 64"
runs=5
regen=0
source=""
nice_n=""
rprof_bin=""
views_rounds=""
linear_rounds=""
nsys_bin=""
nsysai_bin=""
peers_python=""
do_perf=0
while [ $# -gt 0 ]; do
    case $1 in
        --quick) copies_list=250; dist_list=8 ;;
        --dist) dist_list=${2?--dist needs a list}; shift ;;
        --copies) copies_list=${2?--copies needs a list}; shift ;;
        --runs) runs=${2:?--runs needs a number}; shift ;;
        --source) source=${2:?--source needs a file}; shift ;;
        --regen) regen=1 ;;
        --nice) nice_n=${2:?--nice needs a number}; shift ;;
        --rprof) rprof_bin=${2:?--rprof needs a binary}; shift ;;
        --views) views_rounds=${2:?--views needs a number of rounds}; shift ;;
        --linear) linear_rounds=${2:?--linear needs a number of rounds}; shift ;;
        --nsys) nsys_bin=${2:?--nsys needs the nsys binary}; shift ;;
        --nsys-ai) nsysai_bin=${2:?--nsys-ai needs the nsys-ai binary}; shift ;;
        --peers) peers_python=${2:?--peers needs a Python}; shift ;;
        --perf) do_perf=1 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
target=${CARGO_TARGET_DIR:-target}
case $target in /*) ;; *) target=$PWD/$target ;; esac
bench=${BENCH_DIR:-$target/bench}
mkdir -p "$bench"

log() { printf 'bench: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# need COMMAND DEBIAN-PACKAGE
need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "installing $2 with apt-get"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq "$2" >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null && apt-get install -y -qq "$2" >/dev/null; }
    fi
    command -v "$1" >/dev/null 2>&1 || die "needs $1 (Debian package $2)"
}
need hyperfine hyperfine
need sqlite3 sqlite3
need /usr/bin/time time
need awk gawk

if [ -n "$source" ] && [ ! -f "$source" ]; then
    die "source trace $source not found"
fi
free_gb=$(df -Pk "$bench" | awk 'NR == 2 { printf "%d", $4 / 1048576 }')
if [ "$free_gb" -lt 8 ]; then
    log "warning: only ${free_gb} GB free under $bench (the inputs and .dict files take ~7 GB)"
fi

if [ -n "$rprof_bin" ]; then
    log "building rprof-gen (release) into $target"
    cargo build --release --locked -q -p rprof-gen
else
    log "building rprof and rprof-gen (release) into $target"
    cargo build --release --locked -q -p rprof -p rprof-gen
fi
rprof=${rprof_bin:-$target/release/rprof}
[ -x "$rprof" ] || die "$rprof is not an executable"
gen=$target/release/rprof-gen
src_args=()
if [ -n "$source" ]; then src_args=(--source "$source"); fi

read -r -a copies <<<"$copies_list"
nice_cmd=()
if [ -n "$nice_n" ]; then nice_cmd=(nice -n "$nice_n"); fi

# generate FILE COPIES
generate() {
    if [ -f "$1" ] && [ "$regen" = 0 ]; then
        log "using existing $1"
        return
    fi
    log "generating $1 ($2 copies)"
    "$gen" scale "${src_args[@]}" --copies "$2" -o "$1" --force
}

# --- the physical floor: what crates/trace/src/read/nsys.rs reads ----------
# Keep in step with nsys.rs: StringIds, the kernel columns (KERNEL_COLS), the
# launch calls (eventClass 0/1), the NVTX rows (event types 59, 60, 70, 71,
# 75, compared one by one as nsys.rs does: SQLite searches a temporary index
# for an IN list of more than two values). total() touches every value
# without integer overflow.
cat >"$bench/floor-sum.sql" <<'EOF'
SELECT total(id), total(length(value)) FROM StringIds;
SELECT total(start), total("end"), total(deviceId), total(contextId), total(streamId),
       total(correlationId), total(globalPid), total(demangledName), total(shortName),
       total(mangledName), total(gridX), total(gridY), total(gridZ), total(blockX),
       total(blockY), total(blockZ), total(registersPerThread), total(staticSharedMemory),
       total(dynamicSharedMemory), total(graphId), total(graphNodeId)
  FROM CUPTI_ACTIVITY_KIND_KERNEL;
SELECT total(start), total("end"), total(globalTid), total(correlationId), total(nameId),
       total(eventClass)
  FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass IN (0, 1);
SELECT total(start), total("end"), total(globalTid), total(eventType), total(length(text)),
       total(textId), total(domainId), total(endGlobalTid)
  FROM NVTX_EVENTS
 WHERE (eventType = 59 OR eventType = 60 OR eventType = 70 OR eventType = 71 OR eventType = 75);
EOF
cat >"$bench/floor-rows.sql" <<'EOF'
SELECT id, value FROM StringIds;
SELECT start, "end", deviceId, contextId, streamId, correlationId, globalPid, demangledName,
       shortName, mangledName, gridX, gridY, gridZ, blockX, blockY, blockZ,
       registersPerThread, staticSharedMemory, dynamicSharedMemory, graphId, graphNodeId
  FROM CUPTI_ACTIVITY_KIND_KERNEL;
SELECT start, "end", globalTid, correlationId, nameId, eventClass
  FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass IN (0, 1);
SELECT start, "end", globalTid, eventType, text, textId, domainId, endGlobalTid
  FROM NVTX_EVENTS
 WHERE (eventType = 59 OR eventType = 60 OR eventType = 70 OR eventType = 71 OR eventType = 75);
EOF

# --- does `rprof prof --csv` work yet? --------------------------------------
small=$bench/mfu_x1.sqlite
generate "$small" 1
have_prof=0
if ! "$rprof" prof --help >/dev/null 2>&1; then
    log "rprof prof --help fails: skipping the prof measurements"
elif "$rprof" parse -q "$small" | "$rprof" prof --csv >/dev/null 2>"$bench/prof-check.err"; then
    have_prof=1
else
    log "rprof prof --csv does not work yet ($(head -1 "$bench/prof-check.err")): skipping the prof measurements"
fi

q() { printf '%q' "$1"; }

# rounds TSV NAME CMD [NAME CMD]...: one warm-up round, then $runs rounds;
# each round runs every command once with hyperfine, one after the other,
# so that load from other work on the machine spreads over all commands
# instead of hitting one. Appends "name<TAB>wall<TAB>user<TAB>sys" (s) to TSV.
rounds() {
    local tsv=$1 r i
    shift
    local -a args=("$@")
    for ((r = 0; r <= runs; r++)); do
        for ((i = 0; i < ${#args[@]}; i += 2)); do
            "${nice_cmd[@]}" hyperfine --runs 1 --style none --export-csv "$bench/one.csv" \
                -n "${args[i]}" "${args[i + 1]}" >/dev/null
            if [ "$r" -gt 0 ]; then
                awk -F, 'NR == 2 { printf "%s\t%s\t%s\t%s\n", $1, $2, $5, $6 }' "$bench/one.csv" >>"$tsv"
            fi
        done
        log "  round $r/$runs done"
    done
}
# stats TSV NAME COLUMN: "median min max" of a column (2 wall, 3 user, 4 sys)
stats() {
    awk -F'\t' -v n="$2" -v c="$3" '$1 == n { print $c }' "$1" | sort -g |
        awk '{ v[NR] = $1 } END {
            if (NR == 0) { print "nan nan nan"; exit }
            m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.4f %.4f %.4f\n", m, v[1], v[NR] }'
}
med() { stats "$1" "$2" 2 | cut -d' ' -f1; }
# peak_rss_mb RUNS COMMAND...: median peak RSS (MB) of RUNS runs, output discarded
peak_rss_mb() {
    local n=$1 i
    shift
    for ((i = 0; i < n; i++)); do
        "${nice_cmd[@]}" /usr/bin/time -f '%M' -o "$bench/time.out" "$@" >/dev/null 2>/dev/null
        tail -1 "$bench/time.out"
    done | sort -n | awk '{ v[NR] = $1 } END { printf "%.0f", v[int((NR + 1) / 2)] * 1024 / 1e6 }'
}

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
machine="nproc $(nproc), $mem, $cpu; sqlite3 $(sqlite3 --version | cut -d' ' -f1), $(hyperfine --version)"
git_rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$({ git status --porcelain --untracked-files=no 2>/dev/null || true; } | wc -l)

report=$bench/summary.txt
: >"$report"
say() { printf '%s\n' "$*" | tee -a "$report"; }
say "rprof benchmarks, $(date -u +%Y-%m-%dT%H:%MZ), commit $git_rev ($dirty files modified)"
if [ -n "$rprof_bin" ]; then say "binary: $rprof_bin"; fi
say "machine: $machine"
say "$runs interleaved rounds after 1 warm-up round; wall/user/sys in s (hyperfine), peak RSS in MB (10^6 B, GNU time)"
if [ -n "$nice_n" ]; then say "measured commands run under nice -n $nice_n"; fi

for n in "${copies[@]}"; do
    f=$bench/mfu_x$n.sqlite
    generate "$f" "$n"
    kernels=$(sqlite3 -readonly "$f" 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')
    nvtx=$(sqlite3 -readonly "$f" 'SELECT count(*) FROM NVTX_EVENTS')
    size_mb=$(($(stat -c %s "$f") / 1000000))
    tsv=$bench/times-x$n.tsv
    dict=$bench/mfu_x$n.dict
    : >"$tsv"

    cmds=(
        floor-sum "sqlite3 -readonly $(q "$f") < $(q "$bench/floor-sum.sql") > /dev/null"
        floor-rows "sqlite3 -readonly $(q "$f") < $(q "$bench/floor-rows.sql") > /dev/null"
        parse "$(q "$rprof") parse -q $(q "$f") > /dev/null"
        parse-rayon1 "RAYON_NUM_THREADS=1 $(q "$rprof") parse -q $(q "$f") > /dev/null"
        parse-rayon2 "RAYON_NUM_THREADS=2 $(q "$rprof") parse -q $(q "$f") > /dev/null"
    )
    if [ "$have_prof" = 1 ]; then
        "$rprof" parse -q "$f" >"$dict"
        cmds+=(
            parse-prof "$(q "$rprof") parse -q $(q "$f") | $(q "$rprof") prof --csv > /dev/null"
            prof "$(q "$rprof") prof --csv $(q "$dict") > /dev/null"
        )
    fi
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    log "measuring mfu_x$n.sqlite: $kernels kernels, $nvtx NVTX rows, $size_mb MB"
    rounds "$tsv" "${cmds[@]}"
    if [ "$have_prof" = 1 ]; then
        # time to the first row: short, so many runs of its own
        "${nice_cmd[@]}" hyperfine --warmup 3 --runs 20 --style none --export-csv "$bench/one.csv" \
            -n prof-first-row "$(q "$rprof") prof $(q "$dict") | head -1 > /dev/null" >/dev/null
        awk -F, 'NR == 2 { printf "%s\t%s\t%s\t%s\n", $1, $4, $5, $6 }' "$bench/one.csv" >>"$tsv"
    fi
    load_after=$(cut -d' ' -f1-3 /proc/loadavg)
    rss_parse=$(peak_rss_mb 3 "$rprof" parse -q "$f")
    rss_floor=$(peak_rss_mb 1 sqlite3 -readonly "$f" ".read $bench/floor-sum.sql")

    # issue #5: < 1 GB at ~1 M kernels, < 2 GB at ~3 M
    rss_target=$((kernels <= 1500000 ? 1000 : 2000))
    say ""
    say "== mfu_x$n.sqlite: $kernels kernels, $nvtx NVTX rows, $size_mb MB; load average $load_before before, $load_after after =="
    for ((i = 0; i < ${#cmds[@]}; i += 2)); do
        name=${cmds[i]}
        read -r wm wmin wmax < <(stats "$tsv" "$name" 2)
        read -r um _ _ < <(stats "$tsv" "$name" 3)
        read -r sm _ _ < <(stats "$tsv" "$name" 4)
        printf '  %-15s wall median %8.3f  min %8.3f  max %8.3f   user %7.3f  sys %6.3f\n' \
            "$name" "$wm" "$wmin" "$wmax" "$um" "$sm" | tee -a "$report"
    done
    if [ "$have_prof" = 1 ]; then
        read -r wm wmin wmax < <(stats "$tsv" prof-first-row 2)
        printf '  %-15s wall median %8.3f  min %8.3f  max %8.3f   (20 runs)\n' \
            prof-first-row "$wm" "$wmin" "$wmax" | tee -a "$report"
    fi
    read -r floor floor_min _ < <(stats "$tsv" floor-sum 2)
    read -r parse parse_min _ < <(stats "$tsv" parse 2)
    awk -v p="$parse" -v pm="$parse_min" -v f="$floor" -v fm="$floor_min" \
        -v r="$(med "$tsv" floor-rows)" -v r1="$(med "$tsv" parse-rayon1)" -v r2="$(med "$tsv" parse-rayon2)" \
        -v k="$kernels" -v rss="$rss_parse" -v rssf="$rss_floor" -v rt="$rss_target" 'BEGIN {
        ratio = p / f
        printf "  parse / floor-sum   %.2fx of medians (%.2fx of minima)  target <= 1.5x: %s; issue 17 <= 1.0x: %s\n", ratio, pm / fm,
            (ratio <= 1.5 ? "met" : sprintf("missed, %.2fx over", ratio / 1.5)),
            (ratio <= 1.0 ? "met" : sprintf("missed, %.2fx over", ratio))
        printf "  parse / floor-rows  %.2fx\n", p / r
        printf "  parse throughput    %.0f kernels/s\n", k / p
        printf "  RAYON_NUM_THREADS   1: %.3f s, 2: %.3f s (speed-up %.2fx)\n", r1, r2, r1 / r2
        printf "  peak RSS parse      %d MB (target < %d MB: %s); floor-sum %d MB\n", rss, rt,
            (rss < rt ? "met" : sprintf("missed by %d MB", rss - rt)), rssf
    }' | tee -a "$report"
    if [ "$have_prof" = 1 ]; then
        rss_prof=$(peak_rss_mb 1 "$rprof" prof --csv "$dict")
        awk -v p="$(med "$tsv" prof)" -v fr="$(med "$tsv" prof-first-row)" -v pp="$(med "$tsv" parse-prof)" \
            -v k="$kernels" -v rss="$rss_prof" 'BEGIN {
            rate = k / p
            printf "  prof --csv          %.0f records/s (target >= 1000000: %s); peak RSS %d MB\n", rate,
                (rate >= 1e6 ? "met" : sprintf("missed, %.2fx short", 1e6 / rate)), rss
            printf "  prof first row      %.1f ms (target <= 50 ms: %s)\n", fr * 1000,
                (fr <= 0.05 ? "met" : sprintf("missed, %.1fx over", fr / 0.05))
            printf "  parse | prof --csv  %.3f s (%.0f kernels/s)\n", pp, k / pp
        }' | tee -a "$report"
    else
        say "  prof: not measured (rprof prof --csv does not work in this build)"
    fi
done
# --- rprof dist: N rank files of ~125 k kernels vs parse of ~1 M -----------
# Issue #11: 8 files (1 M kernels in all) in at most 1.2x the time of
# `rprof parse` on one 1 M-kernel file, peak RSS < 1 GB; 64 files (8 M
# kernels), peak RSS < 2 GB. The rank files are symbolic links to one
# 31-copy export (the page cache holds it once, as it would hold a
# job's files after the first read).
read -r -a dists <<<"$dist_list"
if [ "${#dists[@]}" -gt 0 ]; then
    rankfile=$bench/mfu_x31.sqlite
    generate "$rankfile" 31
    big=$bench/mfu_x250.sqlite
    generate "$big" 250
    rk=$(sqlite3 -readonly "$rankfile" 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')
    for n in "${dists[@]}"; do
        d=$bench/dist$n
        mkdir -p "$d"
        files=()
        for ((i = 0; i < n; i++)); do
            ln -sf "$rankfile" "$d/rank$i.sqlite"
            files+=("$(q "$d/rank$i.sqlite")")
        done
        tsv=$bench/times-dist$n.tsv
        : >"$tsv"
        log "measuring rprof dist on $n rank files of $rk kernels"
        rounds "$tsv" \
            parse-1M "$(q "$rprof") parse -q $(q "$big") > /dev/null" \
            dist "$(q "$rprof") dist -q ${files[*]} > /dev/null" \
            dist-json "$(q "$rprof") dist -q --json ${files[*]} > /dev/null"
        rss_dist=$(peak_rss_mb 1 "$rprof" dist -q "${d}"/rank*.sqlite)
        say ""
        say "== rprof dist: $n rank files x $rk kernels ($((n * rk)) kernels) =="
        for name in parse-1M dist dist-json; do
            read -r wm wmin wmax < <(stats "$tsv" "$name" 2)
            printf '  %-15s wall median %8.3f  min %8.3f  max %8.3f\n' "$name" "$wm" "$wmin" "$wmax" |
                tee -a "$report"
        done
        rt=$((n <= 8 ? 1000 : 2000))
        awk -v d="$(med "$tsv" dist)" -v p="$(med "$tsv" parse-1M)" -v n="$n" -v rss="$rss_dist" -v rt="$rt" 'BEGIN {
            r = d / p
            if (n <= 8) printf "  dist / parse-1M     %.2fx (target <= 1.2x: %s)\n", r, (r <= 1.2 ? "met" : "missed")
            else printf "  dist / parse-1M     %.2fx\n", r
            printf "  peak RSS dist       %d MB (target < %d MB: %s)\n", rss, rt, (rss < rt ? "met" : "missed")
        }' | tee -a "$report"
    done
fi
# --- issue 17's other targets ---------------------------------------------
here=$PWD/scripts
one_m=$bench/mfu_x250.sqlite
if [ -n "$views_rounds" ]; then
    for n in "${copies[@]}"; do
        f=$bench/mfu_x$n.sqlite
        generate "$f" "$n"
        log "every command on mfu_x$n.sqlite, $views_rounds rounds"
        say ""
        say "== every command on mfu_x$n.sqlite ($views_rounds rounds; targets 3 and 7) =="
        RPROF=$rprof BENCH_RUNS=$bench/views-x$n.txt "${nice_cmd[@]}" \
            bash "$here/bench-views.sh" "$f" "" "$views_rounds" | tee -a "$report"
    done
fi
if [ -n "$linear_rounds" ]; then
    log "cost per kernel at 100 k, 1 M and 3 M kernels, $linear_rounds rounds"
    say ""
    say "== cost per kernel (target 5): copies round command wall_s user_s peak_RSS_KiB =="
    BENCH_DIR=$bench bash "$here/bench-linear.sh" "$rprof" "$gen" "$linear_rounds" | tee -a "$report"
fi
# against_peer SCRIPT BIN WHAT TARGETS: a peer side by side on the ~1 M-kernel file
against_peer() {
    generate "$one_m" 250
    log "against $3 on mfu_x250.sqlite, $runs rounds"
    say ""
    say "== against $3, mfu_x250.sqlite ($4): round command wall_s user_s sys_s peak_RSS_KiB =="
    bash "$here/$1" "$2" "$rprof" "$one_m" "$runs" | tee -a "$report"
}
if [ -n "$nsys_bin" ]; then against_peer bench-nsys.sh "$nsys_bin" "nsys stats" "targets 2 and 6"; fi
if [ -n "$nsysai_bin" ]; then against_peer bench-nsysai.sh "$nsysai_bin" "nsys-ai's cold start" "target 6"; fi
if [ -n "$peers_python" ]; then
    src=../shared/corpus/kineto-hta/trace_diff_control.json.gz
    [ -f "$src" ] || die "--peers needs $src (the shared corpus beside this checkout)"
    k25=$bench/k25/rank3.json
    mkdir -p "$bench/k25"
    if [ ! -f "$k25" ] || [ "$regen" = 1 ]; then
        log "making $k25 (25 copies of trace_diff_control)"
        python3 "$here/scale-kineto.py" "$src" 25 "$k25"
    fi
    log "against HTA and the TensorBoard plugin on $k25, $runs rounds"
    say ""
    say "== against HTA and the TensorBoard plugin, k25/rank3.json (target 6): round command wall_s user_s sys_s peak_RSS_KiB =="
    bash "$here/bench-peers.sh" "$rprof" "$peers_python" "$k25" "$runs" | tee -a "$report"
fi
if [ "$do_perf" = 1 ]; then
    need perf linux-perf
    generate "$one_m" 250
    log "perf samples of parse on mfu_x250.sqlite"
    perf record -q -F 499 -g -o "$bench/parse.perf" "$rprof" parse -q "$one_m" >/dev/null 2>&1
    say ""
    say "== where parse spends its CPU, mfu_x250.sqlite (target 8): samples per thread, then per thread and function =="
    perf report -i "$bench/parse.perf" --no-children -g none --sort pid 2>/dev/null |
        grep '%' | head -8 | tee -a "$report"
    perf report -i "$bench/parse.perf" --no-children -g none --sort pid,sym 2>/dev/null |
        grep '%' | head -40 | tee -a "$report"
fi
log "summary: $report; every run: $bench/times-x*.tsv, times-dist*.tsv"
