#!/usr/bin/env bash
# bench_sweep.sh - sweep throughput: points per second of a 16-point sweep
# (the quickstart factory over 4 caps x 4 seeds, 2 simulated days a point)
# run serially, and under mpirun with 1 and 2 ranks, each the best of
# REPEAT runs (default 3: on a shared machine one run alone says little).
# Prints figures and asserts nothing (a benchmark, not a test); the 2-rank
# run is also checked to give the same summary bytes as the serial one.
#
#   bash tests/bench/bench_sweep.sh AIFSIM_BINARY [MPIEXEC]
#
# Run by `make bench` (tools/bench.sh). Figures mean something only from
# a RelWithDebInfo or Release build on an otherwise idle machine.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: bash $0 AIFSIM_BINARY [MPIEXEC]" >&2
  exit 2
fi
AIFSIM=$(realpath "$1")
MPIEXEC=${2:-$(command -v mpiexec || true)}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
POINTS=16
REPEAT=${REPEAT:-3}
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/aifsim-bench-sweep.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/sweep.yaml" <<EOF
base: $SRC/scenarios/quickstart.yaml
set: [duration=2d]
axes:
  - key: power.cap
    values: [600kW, 650kW, 700kW, 750kW]
replicates: 4
EOF

# timed LABEL DIR COMMAND...: runs the sweep into DIR (fresh each time)
# REPEAT times, prints the best wall time and its points/s.
RATE=
timed() {
  local label=$1 dir=$2 best=
  shift 2
  for _ in $(seq "$REPEAT"); do
    rm -rf "$dir"
    local t0 t1
    t0=$(date +%s.%N)
    "$@" sweep "$TMP/sweep.yaml" -o "$dir" --quiet >/dev/null
    t1=$(date +%s.%N)
    best=$(awk -v a="$t0" -v b="$t1" -v m="$best" \
      'BEGIN { t = b - a; print (m == "" || t < m) ? t : m }')
  done
  RATE=$(awk -v n=$POINTS -v t="$best" 'BEGIN { printf "%.2f", n / t }')
  printf '%-22s %6.2f s  %6s points/s\n' "$label" "$best" "$RATE"
}

echo "sweep of $POINTS points (quickstart, 2 days each), $(nproc) cores," \
  "best of $REPEAT"
timed "serial" "$TMP/serial" "$AIFSIM"
serial=$RATE
if [ -z "$MPIEXEC" ] || [[ $(ldd "$AIFSIM") != *libmpi* ]]; then
  echo "mpirun: skipped (aifsim built without MPI, or no mpiexec)"
  exit 0
fi
timed "mpirun -np 1" "$TMP/np1" "$MPIEXEC" -np 1 "$AIFSIM"
one=$RATE
timed "mpirun -np 2" "$TMP/np2" "$MPIEXEC" -np 2 --oversubscribe "$AIFSIM"
two=$RATE
awk -v a="$two" -v b="$one" -v c="$serial" 'BEGIN {
  printf "speed-up, 2 ranks: %.2fx over 1 rank, %.2fx over serial\n", a / b, a / c }'
if cmp -s "$TMP/serial/summary.csv" "$TMP/np2/summary.csv" &&
  cmp -s "$TMP/serial/summary.h5" "$TMP/np2/summary.h5"; then
  echo "2 ranks and serial: the same summary bytes"
else
  echo "2 ranks and serial: summaries DIFFER"
fi
