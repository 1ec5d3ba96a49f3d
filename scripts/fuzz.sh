#!/usr/bin/env bash
# Long fuzz run: every target of tests/fuzz.rs for SECS seconds each
# (default 600), one after the other. See docs/fuzz.md.
#
#   scripts/fuzz.sh                 # all targets, 10 minutes each
#   scripts/fuzz.sh 120 nsys kineto # these targets, 2 minutes each
#   RPROF_FUZZ_SEED=7 scripts/fuzz.sh 600
#
# Debug build on purpose: integer overflow checks are on, so a wrapping
# product is a finding instead of a silent wrong number.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(nsys_sqlite nvprof_sqlite kineto_json records markers literals)
fi
cargo test --test integration --no-run --locked 2>/dev/null
status=0
for t in "${targets[@]}"; do
  case "$t" in
    nsys|nvprof) t="${t}_sqlite" ;;
    kineto) t="kineto_json" ;;
  esac
  RPROF_FUZZ_SECS="$secs" cargo test --test integration --locked --quiet "fuzz::fuzz_${t}" \
    -- --exact --nocapture 2>&1 | grep -E '^fuzz |panicked|FAILED' || status=1
done
if [ -n "$(ls -A target/fuzz-findings 2>/dev/null)" ]; then
  ls target/fuzz-findings
  echo "findings saved in target/fuzz-findings/"
fi
exit $status
