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
# Whole runs: wall time and peak memory of the command on a ready scenario
# (DESIGN 11: the reference day in about 30 s and under 1 GB).
src="$(cd "$(dirname "$0")/.." && pwd)"
for scenario in "$src"/tests/bench/*.yaml; do
  echo "== aifsim run $(basename "$scenario")"
  /usr/bin/python3 - "$1/aifsim" "$scenario" <<'PY'
import resource, subprocess, sys, tempfile, time
exe, scenario = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as d:
    t0 = time.monotonic()
    out = subprocess.run([exe, "run", scenario, "-o", d + "/run.h5", "--quiet"],
                         check=True, capture_output=True, text=True).stdout
    wall = time.monotonic() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(out.strip())
print(f"wall {wall:.2f} s, peak memory {rss:.0f} MB")
PY
  echo
done
# Sweeps: points per second serially and over 1 and 2 MPI ranks.
for script in "$src"/tests/bench/bench_*.sh; do
  [ -f "$script" ] || continue
  echo "== $(basename "$script")"
  bash "$script" "$1/aifsim"
  echo
done
if [ "$found" -eq 0 ]; then
  echo "$0: no bench_* executables in $dir; build the 'benchmarks' target" >&2
  exit 1
fi
