#!/usr/bin/env bash
# test_scenarios.sh AIFSIM SOURCE_DIR - every file in scenarios/ works from
# the checkout alone: each scenario passes `aifsim check` and `aifsim run`
# exits 0 on it; each sweep file lists its points and runs them. A file
# may shorten its run with one header line `# quick: --set KEY=VALUE...`
# (the same line the gallery documents); such a file is run here with
# `--quick`, which applies it, so every `# quick:` line works as the
# gallery promises. A new scenario with a broken data path or key fails
# the suite.
set -u
AIFSIM=$1
SRC=$2
NAME=scenarios
. "$(dirname "$0")/lib.sh"

# --quick if the file has a "# quick:" line, one word a line; else nothing.
quick_args() {
  grep -q '^# quick:' "$1" && echo --quick
}

is_sweep() {
  grep -q '^base:' "$1"
}

check_scenario() {
  local f=$1 name=$2
  if "$AIFSIM" check "$f" >"$TMP/out" 2>"$TMP/err"; then
    ok "$name: check"
  else
    not_ok "$name: check" "$(head -c 600 "$TMP/err")"
  fi
  local args
  mapfile -t args < <(quick_args "$f")
  if "$AIFSIM" run "$f" -o "$TMP/$name.h5" --quiet "${args[@]}" \
    >"$TMP/out" 2>"$TMP/err"; then
    ok "$name: run ${args[*]}"
  else
    not_ok "$name: run ${args[*]}" "$(head -c 600 "$TMP/err")"
  fi
  check_pue "$TMP/$name.h5" "$name"
  check_no_nan "$TMP/$name.h5" "$name"
}

# Every /summary figure is defined or absent, never NaN (issue #15, 3).
check_no_nan() {
  local h5=$1 name=$2 nan
  nan=$(/usr/bin/python3 -c '
import math, sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    s = f["summary"].attrs
    print(" ".join(k for k, v in s.items()
                   if not isinstance(v, (str, bytes)) and math.isnan(v)))
' "$h5" 2>&1)
  if [ -z "$nan" ]; then
    ok "$name: no NaN in /summary"
  else
    not_ok "$name: no NaN in /summary" "NaN: $nan"
  fi
}

# Every scenario's facility carries an overhead: cooling (its own loops
# or the default plant) and the power chain's losses, so its mean PUE is
# above 1.01 (a run printing PUE 1.000 has neither).
check_pue() {
  local h5=$1 name=$2 pue
  pue=$(/usr/bin/python3 -c 'import sys, h5py
print("%.4f" % h5py.File(sys.argv[1], "r")["summary"].attrs["mean_pue"])' \
    "$h5" 2>"$TMP/err") || {
    not_ok "$name: mean_pue" "$(head -c 300 "$TMP/err")"
    return
  }
  if /usr/bin/python3 -c 'import sys; sys.exit(float(sys.argv[1]) <= 1.01)' \
    "$pue"; then
    ok "$name: mean_pue $pue > 1.01"
  else
    not_ok "$name: mean_pue $pue > 1.01" ""
  fi
}

check_sweep() {
  local f=$1 name=$2
  if "$AIFSIM" sweep "$f" --list >"$TMP/out" 2>"$TMP/err"; then
    ok "$name: sweep --list"
  else
    not_ok "$name: sweep --list" "$(head -c 600 "$TMP/err")"
  fi
  local args
  mapfile -t args < <(quick_args "$f")
  if "$AIFSIM" sweep "$f" -o "$TMP/$name" --quiet "${args[@]}" \
    >"$TMP/out" 2>"$TMP/err"; then
    ok "$name: sweep ${args[*]}"
  else
    not_ok "$name: sweep ${args[*]}" "$(head -c 600 "$TMP/err")"
  fi
}

count=0
for f in "$SRC"/scenarios/*.yaml; do
  name=$(basename "$f" .yaml)
  count=$((count + 1))
  if is_sweep "$f"; then
    check_sweep "$f" "$name"
  else
    check_scenario "$f" "$name"
  fi
done
[ "$count" -gt 0 ] && ok "found $count files in scenarios/" ||
  not_ok "found no file in $SRC/scenarios"
finish
