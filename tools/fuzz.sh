#!/usr/bin/env bash
# tools/fuzz.sh BUILD SECONDS: runs each libFuzzer target of BUILD (built
# with -DSIM_FUZZ=ON) for SECONDS, seeded from scenarios/, tests/scenarios/
# and the first lines of data/'s CSVs, plus the regression inputs. Fails
# on any finding: a crash, a leak, a sanitizer report, a hang (an input
# over 10 s) or memory beyond 2 GiB. Findings land in BUILD/fuzz-artifacts.
set -euo pipefail
build=$(cd "${1:?build folder}" && pwd)
seconds=${2:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
work="$build/fuzz-work"
rm -rf "$work"
mkdir -p "$work" "$build/fuzz-artifacts"

seed() { # seed TARGET FILE...
  mkdir -p "$work/seeds/$1"
  local t=$1; shift
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$work/seeds/$t/"; done
  return 0
}
seed fuzz_scenario "$src"/scenarios/*.yaml "$src"/tests/scenarios/bad/*.yaml \
  "$src"/tests/fuzz/regressions/fuzz_scenario/*
seed fuzz_sweep $(grep -l '^axes:' "$src"/scenarios/*.yaml) \
  "$src"/tests/fuzz/regressions/fuzz_sweep/*
seed fuzz_csv "$src"/tests/fuzz/regressions/fuzz_csv/*
# fuzz_csv's first byte picks the reader: 0 price, 1 carbon, 2 temperature,
# 3 trace. Twenty lines of each file are enough to start from.
n=0
for pair in 0:price 1:carbon 2:weather 3:traces; do
  for f in "$src"/data/"${pair#*:}"/*.csv; do
    n=$((n + 1))
    { printf "\\x3${pair%%:*}"; head -n 20 "$f"; } > "$work/seeds/fuzz_csv/data$n"
  done
done

# Leaks libfyaml has fixed upstream and Debian's still has are suppressed by
# function name, which needs whole stacks on malloc (tests/fuzz/lsan.supp).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$src/tests/fuzz/lsan.supp"

status=0
for t in fuzz_scenario fuzz_sweep fuzz_csv; do
  bin="$build/tests/fuzz/$t"
  mkdir -p "$work/corpus/$t"
  echo "== $t: ${seconds} s"
  if ! (cd "$work" && "$bin" -max_total_time="$seconds" -timeout=10 \
          -rss_limit_mb=2048 -print_final_stats=1 \
          -artifact_prefix="$build/fuzz-artifacts/$t-" \
          "corpus/$t" "seeds/$t") > "$work/$t.log" 2>&1; then
    echo "$t: FAILED (see $work/$t.log, artifacts in $build/fuzz-artifacts):"
    grep -E 'ERROR|SUMMARY|==[0-9]+==' "$work/$t.log" | head -20
    status=1
  fi
  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs' \
    "$work/$t.log" || true
done
exit $status
