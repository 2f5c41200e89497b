#!/usr/bin/env bash
# control-periods.sh AIFSIM [THREADS] - where the request day's time goes
# between its control ticks and its requests: bench-10k's whole request day
# at control periods of 1 (the benchmark's), 2, 5, 10, 30 and 60 s, and at
# 1 s with the static policy (no level search), each run once on THREADS
# threads (default 2), printing wall and user seconds and peak RSS a row.
# The requests are the same at every period, so the rows' differences are
# the ticks' cost (docs/PERFORMANCE.md, "What bounds it now"). A period of
# 30 s or more takes a sample period of 60 s (a sample period must be a
# multiple of the control period); at least 86,400 / 60 ticks remain in the
# long rows, so their wall is the requests' work and little else.
# Takes about 3 minutes on two cores; asserts nothing. HOLD="COMMAND" runs
# COMMAND before and after and prints its output on one line (the machine's
# pace, such as the hold model's figure: docs/PERFORMANCE.md, "Where it
# stands").
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 AIFSIM [THREADS]" >&2
  exit 2
fi
aifsim=$1
threads=${2:-2}
src=$(cd "$(dirname "$0")/.." && pwd)
scenario=$src/tests/bench/bench-10k.yaml
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

hold() {
  if [ -n "${HOLD:-}" ]; then
    echo "hold: $(bash -c "$HOLD" 2>&1 | tr '\n' ' ')($(date -u +%H:%M:%S))"
  fi
}

one() { # LABEL ARGS...: a row
  local label=$1
  shift
  local t
  t=$({ /usr/bin/time -f "%e %U %M" "$aifsim" run "$scenario" "$@" \
    --threads "$threads" -o "$out/day.h5" --quiet >/dev/null; } 2>&1 | tail -1)
  read -r wall user rss <<<"$t"
  printf '%-22s %8s %8s %8s\n' "$label" "$wall" "$user" "$((rss / 1024))"
}

hold
printf '%-22s %8s %8s %8s\n' "control period" "wall s" "user s" "RSS MB"
for p in 1 2 5 10 30 60; do
  sample=10s
  [ "$p" -ge 30 ] && sample=60s
  one "${p} s" --set control_period=${p}s --set sample_period=$sample
done
one "1 s, static policy" --set power.policy=static
hold
