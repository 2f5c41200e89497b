#!/usr/bin/env bash
# bench.sh BUILD_DIR - runs every benchmark executable built in
# BUILD_DIR/tests/bench (named bench_*) and prints its output. Build them
# first: cmake --build BUILD_DIR --target benchmarks.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
dir="$1/tests/bench"
found=0
for exe in "$dir"/bench_*; do
  [ -f "$exe" ] && [ -x "$exe" ] || continue
  found=1
  echo "== $(basename "$exe")"
  "$exe"
  echo
done
if [ "$found" -eq 0 ]; then
  echo "$0: no bench_* executables in $dir; build the 'benchmarks' target" >&2
  exit 1
fi
