#!/bin/bash
# test_validate_mlperf.sh VALIDATE_MLPERF SRC - validate_mlperf's --seed:
# the calibration evaluates each candidate on the same few seeds (tools/
# calibrate.py, fit trt-llm), so the seed must reach every row's service,
# the default must stay the one seed it always ran (1), a seed must give
# the same bytes each time, and a seed that is not a decimal count is
# refused.
NAME=validate_mlperf
. "$(dirname "$0")/../cli/lib.sh"
EXE=$1
ROWS=$2/data/mlperf/mlperf_inference_power_fitset.csv

served() { # OUT [ARGS...]: the rows served, into $TMP/OUT
  local out=$1
  shift
  run "$EXE" "$@" "$ROWS" "$TMP/$out"
  [ "$RC" -eq 0 ] || not_ok "validate_mlperf $* runs" "$(last_run)"
}
served default
served seed1 --seed 1
served seed2 --seed 2
served seed2again --seed 2

cmp -s "$TMP/default" "$TMP/seed1" && ok "no --seed is --seed 1" ||
  not_ok "no --seed is --seed 1" "$(diff "$TMP/default" "$TMP/seed1")"
cmp -s "$TMP/seed2" "$TMP/seed2again" && ok "a seed gives the same bytes" ||
  not_ok "a seed gives the same bytes"

# Every row's modelled tokens/s moves with the seed (column 8), and only
# the model's columns do: the rows and their measured figures are the same.
moved=$(paste -d '\n' "$TMP/seed1" "$TMP/seed2" | awk -F, '
  NR > 2 && NR % 2 == 1 { a = $8; key = $1 $2 $4 $5 $6 $7 }
  NR > 2 && NR % 2 == 0 { n++; if ($8 != a && $1 $2 $4 $5 $6 $7 == key) m++ }
  END { print m + 0 "/" n + 0 }')
[ "$moved" = "3/3" ] && ok "seed 2 moves every row's tokens/s ($moved)" ||
  not_ok "seed 2 moves every row's tokens/s" "$moved of the rows"

for bad in -1 x 1x "" 18446744073709551616; do
  run "$EXE" --seed "$bad" "$ROWS" "$TMP/bad"
  expect "--seed '$bad' refused" 1 "bad --seed"
done

finish
