#!/usr/bin/env bash
# callgrind-periods.sh AIFSIM OUTDIR [f|r|fr|peak] - the instruction counts of
# docs/PERFORMANCE.md ("How to measure"): callgrind runs of bench-10k whose
# difference is a number of ticks or periods, each thread in its own file
# (the simulation thread's is NAME.out-01).
#   f    the fluid mode, 5 and 15 minutes (f5, f15: 600 ticks between);
#   r    the request level, 2 and 6 minutes (r2, r6: 240 periods between);
#   fr   both (the default);
#   peak the request level at its diurnal peak under the demand-response
#        cut: every service's peak at 1 h and the cut from 30 min, 40 and
#        44 minutes (named r2, r6: 240 periods between).
# Then tools/callgrind-diff.py OUTDIR s|i f|r N. The runs of a pair go on
# both cores at once; each takes minutes under valgrind.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 AIFSIM OUTDIR [f|r|fr|peak]" >&2
  exit 2
fi
BIN=$(readlink -f "$1")
OUT=$2
WHICH=${3:-fr}
SCN=$(readlink -f "$(dirname "$0")/../tests/bench/bench-10k.yaml")
PEAK=(--set services.0.arrivals.peak_at=1h --set services.1.arrivals.peak_at=1h
  --set services.2.arrivals.peak_at=1h --set grid.dr_events.0.start=30min)
mkdir -p "$OUT"
cd "$OUT"
# run NAME DURATION [--set ...]: one counted run; --quiet, or the
# estimate's trial of 0.25 s wall would make two counts differ
run() {
  local name=$1 duration=$2
  shift 2
  valgrind --tool=callgrind --separate-threads=yes \
    --callgrind-out-file="$name.out" "$BIN" run "$SCN" --set duration="$duration" \
    "$@" -o "$name.h5" --quiet >/dev/null 2>"$name.err"
}
pair() { # NAME1 DURATION1 NAME2 DURATION2 [--set ...]
  local a=$1 da=$2 b=$3 db=$4
  shift 4
  run "$a" "$da" "$@" &
  local pa=$!
  run "$b" "$db" "$@"
  wait "$pa"
}
case $WHICH in
f) pair f5 5min f15 15min --set inference.granularity=fluid ;;
r) pair r2 2min r6 6min ;;
fr)
  pair f5 5min f15 15min --set inference.granularity=fluid
  pair r2 2min r6 6min
  ;;
peak) pair r2 40min r6 44min "${PEAK[@]}" --force ;;
*)
  echo "$0: f, r, fr or peak, not $WHICH" >&2
  exit 2
  ;;
esac
