#!/usr/bin/env bash
# test_threads.sh - the tick's team (sim/core/team.h, `aifsim run
# --threads`): the output is the same bytes with one, two and three lanes,
# at both granularities and under faults and training; bad values are
# usage errors.
#
#   bash tests/cli/test_threads.sh AIFSIM_BINARY SOURCE_DIR
#
# One line per check ("ok - ..." / "not ok - ..."), then "N passed, M failed".
set -u

if [ $# -ne 2 ]; then
  echo "usage: bash $0 AIFSIM_BINARY SOURCE_DIR" >&2
  exit 2
fi
AIFSIM=$(realpath "$1")
SRC=$(realpath "$2")
BENCH=$SRC/tests/bench/bench-10k.yaml

NAME=threads
. "$(dirname "$0")/lib.sh"
RUN_LIMIT=120

# same_bytes LABEL SCENARIO ARGS...: the run with --threads 1, 2, 3 and
# auto (and AIFSIM_THREADS=2 with no flag) gives one file.
same_bytes() {
  local label=$1 scenario=$2 n
  shift 2
  for n in 1 2 3 auto; do
    run "$AIFSIM" run "$scenario" -o "$TMP/t$n.h5" --quiet --threads "$n" "$@"
    if [ "$RC" -ne 0 ]; then
      not_ok "$label: --threads $n exits 0" "$(last_run)"
      return
    fi
  done
  run env AIFSIM_THREADS=2 "$AIFSIM" run "$scenario" -o "$TMP/env.h5" \
    --quiet "$@"
  local bad=
  for f in t2 t3 tauto env; do
    cmp -s "$TMP/t1.h5" "$TMP/$f.h5" || bad="$bad $f"
  done
  if [ -z "$bad" ]; then
    ok "$label: the same bytes with 1, 2, 3 and auto lanes"
  else
    not_ok "$label: the same bytes with 1, 2, 3 and auto lanes" "differ:$bad"
  fi
}

echo "# the same bytes"
same_bytes "bench-10k fluid, 20 min" "$BENCH" --set duration=20min \
  --set inference.granularity=fluid
same_bytes "bench-10k requests, 4 min" "$BENCH" --set duration=4min
same_bytes "bench-10k requests at the peak, 32 min" "$BENCH" \
  --set duration=32min --set services.0.arrivals.peak_at=30min \
  --set services.1.arrivals.peak_at=30min \
  --set services.2.arrivals.peak_at=30min \
  --set grid.dr_events.0.start=25min
same_bytes "faults" "$SRC/scenarios/faults.yaml" --set duration=2h
same_bytes "mixed" "$SRC/scenarios/mixed.yaml" --set duration=2h

echo "# bad values"
for v in 0 9 -1 x 2x ""; do
  run "$AIFSIM" run "$SRC/scenarios/quickstart.yaml" -o "$TMP/bad.h5" \
    --threads "$v"
  if [ "$RC" -eq 2 ] && grep -q -- "--threads takes auto or 1 to 8" \
    "$TMP/err" && [ ! -e "$TMP/bad.h5" ]; then
    ok "--threads '$v': exit 2, the range named, no file"
  else
    not_ok "--threads '$v': exit 2, the range named, no file" "$(last_run)"
  fi
done
run env AIFSIM_THREADS=many "$AIFSIM" run "$SRC/scenarios/quickstart.yaml" \
  -o "$TMP/bad.h5"
if [ "$RC" -eq 2 ] && grep -q "AIFSIM_THREADS takes" "$TMP/err"; then
  ok "AIFSIM_THREADS=many: exit 2 naming the variable"
else
  not_ok "AIFSIM_THREADS=many: exit 2 naming the variable" "$(last_run)"
fi
run "$AIFSIM" check "$SRC/scenarios/quickstart.yaml" --threads 2
if [ "$RC" -eq 2 ] && grep -q -- "--threads is an option of run" "$TMP/err"
then
  ok "check --threads: exit 2, an option of run"
else
  not_ok "check --threads: exit 2, an option of run" "$(last_run)"
fi

finish
