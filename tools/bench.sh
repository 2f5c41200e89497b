#!/usr/bin/env bash
# bench.sh BUILD_DIR - the benchmarks (`make bench`): figures, never
# assertions on time, never part of `make test`.
#
# 1. The machine: a line naming it, so figures are read against it.
# 2. Every bench_* executable built in BUILD_DIR/tests/bench (the engine's
#    hold model, 1e3 to 1e6 pending; the crew's round trip; the power
#    policy's splits on two threads; a libaifsim client's step at 10k
#    GPUs), then tests/bench/bench_step.py (the same through Python).
#    Build them first: cmake --build BUILD_DIR --target benchmarks.
# 3. Whole runs of the benchmark scenarios (tests/bench/bench-10k.yaml,
#    bench-100k.yaml and bench-1m.yaml by default), each in each
#    inference mode (bench-1m in the fluid mode only): wall
#    seconds as the median of BENCH_REPS runs with their spread, events
#    and events/s, peak RSS, output MB, and the share of the wall spent
#    writing HDF5.
# 4. Sweep throughput (tests/bench/bench_sweep.sh).
#
# Environment:
#   BENCH_SCENARIOS  scenario files (default: bench-10k, bench-100k, bench-1m)
#   BENCH_MODES      inference granularities (default: "request fluid")
#   BENCH_REPS       runs of each (default 3; bench-100k and bench-1m once)
#   BENCH_SET        extra --set KEY=VALUE for every run, e.g. duration=2h
#   BENCH_ONLY       "runs" to skip the hold model and the sweeps
#   BENCH_1M_DURATION  bench-1m's simulated span (default 1h: its whole day
#                    takes hours of CPU here; docs/PERFORMANCE.md scales it)
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build=$1
src="$(cd "$(dirname "$0")/.." && pwd)"
py=/usr/bin/python3

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')
mem=$(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo)
echo "== machine: ${cpu:-unknown CPU}, $(nproc) cores, $mem, $(uname -sr)," \
  "load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)," \
  "aifsim $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?')"
# The build measured: its type (`make bench` makes a Release build; the
# default build's figures are a few percent slower).
cache_value() {
  sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt" 2>/dev/null
}
type=$(cache_value CMAKE_BUILD_TYPE)
echo "== build: $build, ${type:-RelWithDebInfo (the default)}," \
  "LTO $(cache_value SIM_LTO)," \
  "$(cache_value CMAKE_C_COMPILER)"
echo

if [ "${BENCH_ONLY:-}" != runs ]; then
  found=0
  for exe in "$build"/tests/bench/bench_*; do
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    found=1
    echo "== $(basename "$exe")"
    "$exe"
    echo
  done
  if [ "$found" -eq 0 ]; then
    echo "$0: no bench_* executables in $build/tests/bench; build the" \
      "'benchmarks' target" >&2
    exit 1
  fi
  # bench_step's twin through Python (aifsim.Factory, aifsim.FactoryEnv).
  echo "== bench_step.py"
  AIFSIM_LIB="$build/libaifsim.so" $py "$src/tests/bench/bench_step.py"
  echo
fi

scenarios=${BENCH_SCENARIOS:-"$src/tests/bench/bench-10k.yaml $src/tests/bench/bench-100k.yaml $src/tests/bench/bench-1m.yaml"}
echo "== whole runs (wall: median of the runs, [min, max])"
# shellcheck disable=SC2086
$py - "$build/aifsim" "${BENCH_MODES:-request fluid}" "${BENCH_REPS:-3}" \
  "${BENCH_SET:-}" "${BENCH_1M_DURATION:-1h}" $scenarios <<'PY'
import os, re, statistics, subprocess, sys, tempfile, time

exe, modes, reps, extra = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), sys.argv[4]
span_1m = sys.argv[5]
sets = [a for kv in extra.split() for a in ("--set", kv)]

def run_once(scenario, mode, d):
    out = os.path.join(d, "run.h5")
    argv = [exe, "run", scenario, "-o", out, "--quiet", "--force"] + sets
    if "1m" in os.path.basename(scenario):
        argv += ["--set", f"duration={span_1m}"]
    if mode != "request":  # the default, and the only mode of older builds
        argv += ["--set", f"inference.granularity={mode}"]
    t0 = time.monotonic()
    with tempfile.TemporaryFile("w+") as so, tempfile.TemporaryFile("w+") as se:
        p = subprocess.Popen(argv, stdout=so, stderr=se, text=True)
        _, status, usage = os.wait4(p.pid, 0)  # this run's own peak RSS
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        so.seek(0), se.seek(0)
        stdout, stderr = so.read(), se.read()
    if p.returncode != 0:
        return None, stderr.strip().splitlines()[0] if stderr else "failed"
    rss = usage.ru_maxrss / 1024
    m = re.search(r"\((\d+) events", stdout)
    h = re.search(r"HDF5 writing ([\d.]+) s", stdout)
    return dict(wall=wall, events=int(m.group(1)) if m else 0,
                hdf5=float(h.group(1)) if h else float("nan"), rss=rss,
                mb=os.path.getsize(out) / 1e6), None

print(f"{'scenario':<12} {'mode':<8} {'wall s':>22} {'events':>12} "
      f"{'events/s':>10} {'peak RSS':>9} {'output':>9} {'HDF5':>6}")
for scenario in sys.argv[6:]:
    name = os.path.basename(scenario).removesuffix(".yaml")
    if "1m" in name:
        name += f" {span_1m}"
    n = 1 if "100k" in name or "1m" in name else reps
    for mode in modes:
        if "1m" in name and mode == "request":
            continue  # 100,000 requests/s a day: hours; fluid only
        runs, why = [], None
        with tempfile.TemporaryDirectory() as d:
            for _ in range(n):
                r, why = run_once(scenario, mode, d)
                if r is None:
                    break
                runs.append(r)
        if not runs:
            print(f"{name:<12} {mode:<8} not run: {why}")
            continue
        walls = sorted(r["wall"] for r in runs)
        med = statistics.median(walls)
        last = runs[-1]
        spread = f"{med:.1f} [{walls[0]:.1f}, {walls[-1]:.1f}]"
        print(f"{name:<12} {mode:<8} {spread:>22} {last['events']:>12} "
              f"{last['events'] / med:>10.3g} {last['rss']:>6.0f} MB "
              f"{last['mb']:>6.1f} MB {100 * last['hdf5'] / last['wall']:>5.1f}%",
              flush=True)
PY
echo

if [ "${BENCH_ONLY:-}" != runs ]; then
  for script in "$src"/tests/bench/bench_*.sh; do
    [ -f "$script" ] || continue
    echo "== $(basename "$script")"
    bash "$script" "$build/aifsim"
    echo
  done
fi
