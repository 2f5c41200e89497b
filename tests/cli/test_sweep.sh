#!/usr/bin/env bash
# test_sweep.sh - `aifsim sweep` end to end (docs/SWEEPS.md).
#
#   bash tests/cli/test_sweep.sh AIFSIM_BINARY SOURCE_DIR [MPIEXEC]
#
# On scenarios/sweep-powercap.yaml reduced to 2 simulated hours a point
# (30 points, --set duration=1h):
#   a. --list prints every point with its index and overrides;
#   b. bad axes (unknown key, value or range step of the wrong unit) exit 2
#      with FILE:LINE:COLUMN: of the offending axis, before anything runs;
#   c. a serial run writes 30 complete point files and the summary;
#   d. mpirun -np 2 --oversubscribe (when MPIEXEC is given) gives the same
#      summary.csv and summary.h5 bytes, and the same point files;
#   e. three shards (--shard, and Slurm's array variables) and --collect
#      give the same summary again;
#   f. a sweep killed with SIGKILL midway and run again completes every
#      point, recomputes none (modification times unchanged) and gives the
#      summary of an uninterrupted run;
#   g. a point that fails is recorded in the summary with its error, the
#      others go on, the exit status is 1, and a rerun runs that one only;
#   h. point files of another sweep in the directory are refused (exit 2),
#      and a point another process is running (its lock held) is left to
#      it: exit 1, and a rerun after runs that point only;
#   i. the summary's layout and numbers, read with h5py;
#   j. usage errors exit 2.
# One line per check ("ok - ..." / "not ok - ..."), then "N passed, M failed".
set -u

if [ $# -lt 2 ]; then
  echo "usage: bash $0 AIFSIM_BINARY SOURCE_DIR [MPIEXEC]" >&2
  exit 2
fi
AIFSIM=$(realpath "$1")
SRC=$(realpath "$2")
MPIEXEC=${3:-}
SWEEP=$SRC/scenarios/sweep-powercap.yaml
QUICK=$SRC/scenarios/quickstart.yaml
PY=/usr/bin/python3
NPOINTS=30
RED=(--set duration=1h) # the reduced sweep

# A sweep must not take its shard from the environment this test runs in.
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_STEP \
  SLURM_ARRAY_TASK_COUNT OMPI_COMM_WORLD_SIZE PMI_SIZE PMIX_RANK \
  MPI_LOCALNRANKS
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

NAME=sweep
. "$(dirname "$0")/lib.sh"
# Under `make asan`: full stacks on malloc, so that LSan names OpenMPI's
# frames and tests/asan/lsan.supp matches them (the fast unwinder loses
# frames in libraries built without frame pointers).
if [ -n "${ASAN_OPTIONS:-}" ]; then
  export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
fi

RUN_LIMIT=400 # s, a run's hang limit (lib.sh's run)

# check LABEL CONDITION-COMMAND...: ok if the command succeeds.
check() {
  local label=$1
  shift
  if "$@"; then ok "$label"; else not_ok "$label" "$(last_run)"; fi
}

count_points() { find "$1" -maxdepth 1 -name 'point-*.h5' | wc -l; }
no_partials() { [ -z "$(find "$1" -name '*.partial')" ]; }
same_summary() {
  cmp -s "$1/summary.csv" "$2/summary.csv" && cmp -s "$1/summary.h5" "$2/summary.h5"
}

# ------------------------------------------------------------------------
echo "# a. --list"
# ------------------------------------------------------------------------
run "$AIFSIM" sweep "$SWEEP" --list "${RED[@]}"
check "--list: exit 0" [ "$RC" -eq 0 ]
check "--list: a header and $NPOINTS points" \
  [ "$(grep -c '^[0-9]' "$TMP/out")" -eq "$NPOINTS" ]
check "--list: the header names the base and the fixed overrides" \
  grep -q "^# .*sweep-powercap.yaml: $NPOINTS points of .*quickstart.yaml --set duration=1h$" "$TMP/out"
check "--list: point 0 is 550 kW, static, seed 42" \
  grep -qx '0 power.cap=550kW power.policy=static seed=42' "$TMP/out"
check "--list: point 3 is 550 kW, proportional, seed 43 (seed innermost)" \
  grep -qx '3 power.cap=550kW power.policy=proportional seed=43' "$TMP/out"
check "--list: point 10 is 650 kW, static, seed 42" \
  grep -qx '10 power.cap=650kW power.policy=static seed=42' "$TMP/out"
check "--list: point 29 is 750 kW, uniform_floor, seed 43" \
  grep -qx '29 power.cap=750kW power.policy=uniform_floor seed=43' "$TMP/out"

# ------------------------------------------------------------------------
echo "# b. bad axes: exit 2 with the position, nothing run"
# ------------------------------------------------------------------------
BAD=$TMP/bad
mkdir -p "$BAD"
# bad_sweep LABEL POS SUBSTR: the sweep in $BAD/s.yaml must fail so.
bad_sweep() {
  local label=$1 pos=$2 substr=$3 problems=()
  run "$AIFSIM" sweep "$BAD/s.yaml" -o "$BAD/out" "${RED[@]}"
  [ "$RC" -eq 2 ] || problems+=("exit $RC, expected 2")
  [[ $(head -n 1 "$TMP/err") == "$BAD/s.yaml:$pos: "* ]] ||
    problems+=("stderr does not start with '$BAD/s.yaml:$pos: '")
  grep -qF -- "$substr" "$TMP/err" || problems+=("stderr lacks '$substr'")
  [ -e "$BAD/out" ] && problems+=("made $BAD/out")
  if [ ${#problems[@]} -eq 0 ]; then
    ok "$label: exit 2 at $pos, nothing run"
  else
    not_ok "$label" "${problems[@]}" "stderr: $(head -c 600 "$TMP/err")"
  fi
}
cat >"$BAD/s.yaml" <<EOF
base: $QUICK
axes:
  - key: power.cap
    values: [600kW, 700kW]
  - key: power.polcy
    values: [static]
EOF
bad_sweep "unknown key" 5:10 "unknown key 'polcy' in power"
cat >"$BAD/s.yaml" <<EOF
base: $QUICK
axes:
  - key: power.cap
    values: [600kW, 2h, 700kW]
EOF
bad_sweep "value of the wrong unit" 4:21 "'h' is a unit of time; expected power"
cat >"$BAD/s.yaml" <<EOF
base: $QUICK
axes:
  - key: power.cap
    range: {from: 600kW, to: 700kW, step: 10min}
EOF
bad_sweep "range step of the wrong unit" 4:43 "is a unit of time"
cat >"$BAD/s.yaml" <<EOF
base: $QUICK
axes:
  - key: racks.0.count
    values: [4, 400]
EOF
bad_sweep "a value the scenario cannot hold" 4:17 "point 1 (racks.0.count=400): "

# ------------------------------------------------------------------------
echo "# c. serial"
# ------------------------------------------------------------------------
SER=$TMP/serial
run "$AIFSIM" sweep "$SWEEP" -o "$SER" "${RED[@]}"
check "serial: exit 0" [ "$RC" -eq 0 ]
check "serial: $NPOINTS point files" [ "$(count_points "$SER")" -eq "$NPOINTS" ]
check "serial: summary.csv has a header and $NPOINTS rows" \
  [ "$(wc -l <"$SER/summary.csv")" -eq $((NPOINTS + 1)) ]
check "serial: every row ok" \
  [ "$(grep -c '^[0-9]*,ok,' "$SER/summary.csv")" -eq "$NPOINTS" ]
check "serial: summary.h5 written" [ -f "$SER/summary.h5" ]
check "serial: no partial files left" no_partials "$SER"
check "serial: prints what it did" \
  grep -q "$NPOINTS points: $NPOINTS run, 0 already complete, 0 failed" "$TMP/out"
run "$AIFSIM" sweep "$SWEEP" -o "$TMP/serial2" "${RED[@]}"
check "serial twice: the same summary bytes" same_summary "$SER" "$TMP/serial2"

# ------------------------------------------------------------------------
echo "# d. mpirun -np 2"
# ------------------------------------------------------------------------
if [ -z "$MPIEXEC" ]; then
  ok "# SKIP mpirun: aifsim built without MPI"
else
  MPI=$TMP/mpi
  # Under AddressSanitizer, OpenMPI's own allocations (in plugins it loads)
  # show up as leaks at exit: leak checks stay for the serial runs.
  MPI_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  run env ASAN_OPTIONS="$MPI_ASAN" "$MPIEXEC" -np 2 --oversubscribe "$AIFSIM" sweep "$SWEEP" -o "$MPI" \
    "${RED[@]}"
  check "mpirun -np 2: exit 0" [ "$RC" -eq 0 ]
  check "mpirun -np 2: one summary line (rank 0 prints)" \
    [ "$(grep -c 'points:' "$TMP/out")" -eq 1 ]
  check "mpirun -np 2: summary.csv and summary.h5 identical to serial" \
    same_summary "$SER" "$MPI"
  same_points=1
  for f in "$SER"/point-*.h5; do
    cmp -s "$f" "$MPI/$(basename "$f")" || same_points=0
  done
  check "mpirun -np 2: every point file identical to serial" \
    [ "$same_points" -eq 1 ]
  run env ASAN_OPTIONS="$MPI_ASAN" "$MPIEXEC" -np 2 --oversubscribe "$AIFSIM" sweep "$SWEEP" -o "$MPI" \
    "${RED[@]}"
  check "mpirun -np 2 again: nothing recomputed" \
    grep -q "0 run, $NPOINTS already complete" "$TMP/out"
fi

# ------------------------------------------------------------------------
echo "# e. three shards and --collect"
# ------------------------------------------------------------------------
SH=$TMP/shards
run "$AIFSIM" sweep "$SWEEP" -o "$SH" "${RED[@]}" --shard 0/3
check "shard 0/3: exit 0, $((NPOINTS / 3)) points" \
  grep -q "shard 0/3: $((NPOINTS / 3)) of $NPOINTS points: $((NPOINTS / 3)) run" "$TMP/out"
check "shard 0/3: no summary yet" [ ! -e "$SH/summary.csv" ]
# The other two as Slurm array tasks 1-2 of an array 0-2, and 2-3 of 1-3.
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=3 \
  run "$AIFSIM" sweep "$SWEEP" -o "$SH" "${RED[@]}"
check "Slurm task 1 of 0-2: shard 1/3" grep -q "shard 1/3: $((NPOINTS / 3)) of" "$TMP/out"
SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 \
  run "$AIFSIM" sweep "$SWEEP" -o "$SH" "${RED[@]}"
check "Slurm task 3 of 1-3: shard 2/3" grep -q "shard 2/3: $((NPOINTS / 3)) of" "$TMP/out"
check "shards: $NPOINTS point files" [ "$(count_points "$SH")" -eq "$NPOINTS" ]
run "$AIFSIM" sweep "$SWEEP" "${RED[@]}" --collect "$SH"
check "--collect: exit 0" [ "$RC" -eq 0 ]
check "--collect: summary identical to serial" same_summary "$SER" "$SH"
# Collect before every shard ran: missing rows, exit 1, summary still made.
PART=$TMP/part
run "$AIFSIM" sweep "$SWEEP" -o "$PART" "${RED[@]}" --shard 2/3
run "$AIFSIM" sweep "$SWEEP" "${RED[@]}" --collect "$PART"
check "--collect of one shard of three: exit 1, $((NPOINTS * 2 / 3)) missing" \
  grep -q "$((NPOINTS / 3)) ok, 0 failed, $((NPOINTS * 2 / 3)) missing" "$TMP/out"
check "--collect of one shard: rows say missing" \
  [ "$(grep -c '^[0-9]*,missing,' "$PART/summary.csv")" -eq $((NPOINTS * 2 / 3)) ]

# ------------------------------------------------------------------------
echo "# f. killed midway, then resumed"
# ------------------------------------------------------------------------
LONG=(--set duration=6h) # long enough to kill midway
REF=$TMP/uninterrupted
run "$AIFSIM" sweep "$SWEEP" -o "$REF" "${LONG[@]}"
check "uninterrupted run: exit 0" [ "$RC" -eq 0 ]
KILLED=$TMP/killed
# Started directly (not under timeout), so the kill reaches the sweep.
"$AIFSIM" sweep "$SWEEP" -o "$KILLED" "${LONG[@]}" >/dev/null 2>&1 </dev/null &
BG_PID=$!
for _ in $(seq 1 2400); do
  [ -d "$KILLED" ] && [ "$(count_points "$KILLED")" -ge 3 ] && break
  kill -0 "$BG_PID" 2>/dev/null || break
  sleep 0.02
done
kill -KILL "$BG_PID" 2>/dev/null
wait "$BG_PID" 2>/dev/null
BG_PID=
done_before=$(count_points "$KILLED")
if [ "$done_before" -ge 1 ] && [ "$done_before" -lt "$NPOINTS" ] &&
  [ ! -e "$KILLED/summary.csv" ]; then
  ok "SIGKILL midway: $done_before of $NPOINTS points complete, no summary"
else
  not_ok "SIGKILL midway" "$done_before points complete; summary: $(ls "$KILLED")"
fi
(cd "$KILLED" && stat -c '%n %y' point-*.h5) >"$TMP/mtimes-before"
run "$AIFSIM" sweep "$SWEEP" -o "$KILLED" "${LONG[@]}"
check "rerun: exit 0" [ "$RC" -eq 0 ]
check "rerun: runs only the rest ($((NPOINTS - done_before)) run, $done_before already complete)" \
  grep -q "$((NPOINTS - done_before)) run, $done_before already complete" "$TMP/out"
check "rerun: every point complete" \
  [ "$(count_points "$KILLED")" -eq "$NPOINTS" ]
(cd "$KILLED" && stat -c '%n %y' $(awk '{print $1}' "$TMP/mtimes-before")) \
  >"$TMP/mtimes-after"
if cmp -s "$TMP/mtimes-before" "$TMP/mtimes-after"; then
  ok "rerun: no complete point recomputed (modification times unchanged)"
else
  not_ok "rerun: no complete point recomputed" \
    "$(diff "$TMP/mtimes-before" "$TMP/mtimes-after")"
fi
check "rerun: no partial files left" no_partials "$KILLED"
check "rerun: summary identical to the uninterrupted run's" \
  same_summary "$REF" "$KILLED"

# ------------------------------------------------------------------------
echo "# g. a failing point"
# ------------------------------------------------------------------------
FAILD=$TMP/failing
mkdir -p "$FAILD/point-0004.h5.partial" # the point cannot write its file
run "$AIFSIM" sweep "$SWEEP" -o "$FAILD" "${RED[@]}"
check "a failing point: exit 1" [ "$RC" -eq 1 ]
check "a failing point: named on stderr" grep -q '^aifsim: point 4 failed: ' "$TMP/err"
check "a failing point: the others complete" \
  [ "$(count_points "$FAILD")" -eq $((NPOINTS - 1)) ]
check "a failing point: its row says failed, with the error" \
  grep -q '^4,failed,550kW,priority,42,,.*cannot write the output' "$FAILD/summary.csv"
check "a failing point: its error file" [ -s "$FAILD/point-0004.error" ]
rmdir "$FAILD/point-0004.h5.partial"
run "$AIFSIM" sweep "$SWEEP" -o "$FAILD" "${RED[@]}"
check "fixed and rerun: exit 0, that point only" \
  grep -q "1 run, $((NPOINTS - 1)) already complete, 0 failed" "$TMP/out"
check "fixed and rerun: error file gone" [ ! -e "$FAILD/point-0004.error" ]
check "fixed and rerun: summary identical to serial" same_summary "$SER" "$FAILD"

# ------------------------------------------------------------------------
echo "# h. point files of another sweep"
# ------------------------------------------------------------------------
run "$AIFSIM" sweep "$SWEEP" -o "$SER" --set duration=3h
check "another sweep's files: exit 2" [ "$RC" -eq 2 ]
check "another sweep's files: says so" grep -q 'holds another scenario' "$TMP/err"

# ------------------------------------------------------------------------
echo "# h2. a point another process is running"
# ------------------------------------------------------------------------
LOCKD=$TMP/locked
mkdir -p "$LOCKD"
"$PY" -c '
import fcntl, sys, time
f = open(sys.argv[1], "w")
fcntl.lockf(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(120)
' "$LOCKD/point-0002.lock" "$TMP/lock-held" &
BG_PID=$!
for _ in $(seq 1 500); do
  [ -e "$TMP/lock-held" ] && break
  sleep 0.02
done
run "$AIFSIM" sweep "$SWEEP" -o "$LOCKD" "${RED[@]}"
check "a locked point: exit 1" [ "$RC" -eq 1 ]
check "a locked point: left to its holder, said so" \
  grep -q '^aifsim: point 2 skipped: another process is running it' "$TMP/err"
check "a locked point: the others complete, that one not" \
  [ "$(count_points "$LOCKD")" -eq $((NPOINTS - 1)) ] && [ ! -e "$LOCKD/point-0002.h5" ]
check "a locked point: its row says missing" \
  grep -q '^2,missing,' "$LOCKD/summary.csv"
kill -KILL "$BG_PID" 2>/dev/null
wait "$BG_PID" 2>/dev/null
BG_PID=
run "$AIFSIM" sweep "$SWEEP" -o "$LOCKD" "${RED[@]}"
check "released and rerun: that point only, no lock files left" \
  grep -q "1 run, $((NPOINTS - 1)) already complete, 0 failed" "$TMP/out"
check "released and rerun: no lock files left" \
  [ -z "$(find "$LOCKD" -name '*.lock')" ]
check "released and rerun: summary identical to serial" same_summary "$SER" "$LOCKD"

# ------------------------------------------------------------------------
echo "# i. the summary's layout and numbers"
# ------------------------------------------------------------------------
if "$PY" - "$SER" "$NPOINTS" >"$TMP/py" 2>&1 <<'EOF'; then
import csv, math, sys
import h5py
d, n = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(open(d + "/summary.csv")))
assert len(rows) == n, len(rows)
with h5py.File(d + "/summary.h5") as f:
    assert f.attrs["complete"] == 1
    assert f.attrs["sweep"] == "sweep-powercap.yaml", f.attrs["sweep"]
    assert list(f["point"][:]) == list(range(n))
    assert [s.decode() for s in f["status"][:]] == ["ok"] * n
    assert f["axes/power.cap"][0].decode() == "550kW"
    caps = f["axis_values/power.cap"][:]
    assert f["axis_values/power.cap"].attrs["units"] == "W"
    assert list(caps[::10]) == [550e3, 650e3, 750e3]
    assert [s.decode() for s in f["axes/power.policy"][:10:2]] == [
        "static", "proportional", "priority", "efficiency", "uniform_floor"]
    assert list(f["axis_values/seed"][:3]) == [42, 43, 42]
    metrics = sorted(f["metrics"].keys())
    assert "energy_mwh" in metrics and "peak_power_w" in metrics, metrics
    for p in (0, 7, n - 1):
        with h5py.File("%s/point-%04d.h5" % (d, p)) as run:
            assert run.attrs["sweep_point"] == p
            assert run.attrs["complete"] == 1
            assert b"duration: 1 h" in run["scenario"][()]
            for m in metrics:  # NaN (a metric without data) is "" in CSV
                want = float(run["summary"].attrs[m])
                got = f["metrics/" + m][p]
                assert got == want or (math.isnan(got) and math.isnan(want)), (
                    p, m)
                text = rows[p][m]
                assert (text == "" and math.isnan(want)) or \
                    float(text) == want, (p, m, text)
            assert float(run["summary"].attrs["cap_w"]) == caps[p]
print("ok")
EOF
  ok "summary: columns, axis values with units, metrics equal the point files'"
else
  not_ok "summary: layout and numbers" "$(tail -n 5 "$TMP/py")"
fi

# ------------------------------------------------------------------------
echo "# j. usage errors"
# ------------------------------------------------------------------------
usage() {
  local label=$1
  shift
  run "$@"
  if [ "$RC" -eq 2 ] && [ -s "$TMP/err" ]; then
    ok "$label: exit 2"
  else
    not_ok "$label" "$(last_run)"
  fi
}
usage "sweep without a file" "$AIFSIM" sweep
usage "a sweep file that does not exist" "$AIFSIM" sweep "$TMP/none.yaml"
usage "--shard 3/3" "$AIFSIM" sweep "$SWEEP" --shard 3/3 -o "$TMP/u"
usage "--shard x" "$AIFSIM" sweep "$SWEEP" --shard x -o "$TMP/u"
usage "--list and --collect" "$AIFSIM" sweep "$SWEEP" --list --collect "$SER"
usage "--list on run" "$AIFSIM" run "$QUICK" --list
usage "an --set that is an axis" "$AIFSIM" sweep "$SWEEP" --list \
  --set power.cap=1MW
SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=3 \
  usage "a Slurm task beyond its array" "$AIFSIM" sweep "$SWEEP" -o "$TMP/u"
check "no output made by usage errors" [ ! -e "$TMP/u" ]

finish
