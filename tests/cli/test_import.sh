#!/usr/bin/env bash
# test_import.sh AIFSIM SOURCE_DIR - job-log replay end to end (docs/IMPORT.md):
# each sample of data/joblogs/ (sacct, SWF, Helios) imported as logged and
# run; the run's /jobs table holds the log's job count, GPU-hours and
# makespan, which Python reads from the raw log itself (not through the
# importer); re-scheduled, the jobs are conserved and a power cap stretches
# their work; bad logs and mapping files are refused with FILE:LINE:COLUMN
# and exit 2, leaving no scenario behind; a fleet smaller than the log's
# peak stops an as-logged run with the reason.
set -u
AIFSIM=$1
SRC=$2
NAME=import
. "$(dirname "$0")/lib.sh"
LOGS=$SRC/data/joblogs

# check_as_logged FORMAT LOG: import, run, compare with the raw log.
check_as_logged() {
  local fmt=$1 log=$2 base
  base=$TMP/$fmt
  if ! "$AIFSIM" import "$fmt" "$log" -o "$base.yaml" 2>"$base.err"; then
    not_ok "$fmt: import as logged" "$(head -c 600 "$base.err")"
    return
  fi
  if ! "$AIFSIM" run "$base.yaml" -o "$base.h5" -q >/dev/null 2>"$base.err"; then
    not_ok "$fmt: the imported scenario runs" "$(head -c 600 "$base.err")"
    return
  fi
  if /usr/bin/python3 "$(dirname "$0")/replay_matches_log.py" "$fmt" "$log" \
    "$base.h5" >"$base.py" 2>&1; then
    ok "$fmt: as logged, the run's jobs, GPU-hours and makespan are the log's ($(cat "$base.py"))"
  else
    not_ok "$fmt: as logged, the run's jobs, GPU-hours and makespan are the log's" \
      "$(tail -n 5 "$base.py")"
  fi
}

check_as_logged sacct "$LOGS/sacct-synthetic.txt"
check_as_logged swf "$LOGS/synthetic.swf"
check_as_logged helios "$LOGS/helios-readme-sample.csv"

# Re-scheduled with a mapping file: the jobs are conserved, and a cap that
# binds stretches the work-based jobs (their mean completion time rises).
cat >"$TMP/map.yaml" <<'YAML'
name: resched
racks: 4
extend: 6 h
rules:
  - {partition: train, activity: 90%, phases: {compute: 80%, comm: 15%, io: 5%}}
  - {partition: debug, activity: 40%, length: duration}
YAML
"$AIFSIM" import sacct "$LOGS/sacct-synthetic.txt" --map "$TMP/map.yaml" \
  --mode rescheduled -o "$TMP/r.yaml" 2>/dev/null
"$AIFSIM" run "$TMP/r.yaml" -o "$TMP/r.h5" -q >/dev/null 2>&1
"$AIFSIM" run "$TMP/r.yaml" -o "$TMP/rc.h5" -q --set power.cap=30kW \
  --set power.policy=uniform_floor >/dev/null 2>&1
if /usr/bin/python3 - "$TMP/r.h5" "$TMP/rc.h5" >"$TMP/r.py" 2>&1 <<'PY'; then
import sys
import h5py, numpy as np
def jct(p):
    f = h5py.File(p, "r")
    s, t = f["summary"].attrs, f["jobs"]
    assert s["jobs_arrived"] == s["jobs_done"] == 24, dict(s)
    assert "start" not in f["scenario"].attrs.get("text", "")
    g = np.array([k.decode() for k in t["kind"][:]]) == "gpu_job"
    return float((t["end_s"][g] - t["arrival_s"][g]).mean())
free, capped = jct(sys.argv[1]), jct(sys.argv[2])
assert capped > free * 1.02, (free, capped)
print(f"mean JCT {free:.0f} s free, {capped:.0f} s under 30 kW")
PY
  ok "re-scheduled: 24 jobs conserved, a cap stretches them ($(cat "$TMP/r.py"))"
else
  not_ok "re-scheduled: jobs conserved, a cap stretches them" "$(tail -n 5 "$TMP/r.py")"
fi

# refused NAME WANT CMD...: exit 2, a message holding WANT, no scenario.
refused() {
  local name=$1 want=$2
  shift 2
  rm -f "$TMP/bad.yaml"
  "$@" -o "$TMP/bad.yaml" >/dev/null 2>"$TMP/err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" "$TMP/err" && [ ! -e "$TMP/bad.yaml" ] &&
    [ ! -e "$TMP/bad.yaml.partial" ]; then
    ok "refused: $name"
  else
    not_ok "refused: $name (exit $rc)" "want: $want" "$(head -c 400 "$TMP/err")"
  fi
}
printf '1 0 10 100 4 -1 -1 4 3600 -1 1 5 2 -1 1 0 -1\n' >"$TMP/short.swf"
refused "an SWF line of 17 fields" "short.swf:1:" \
  "$AIFSIM" import swf "$TMP/short.swf"
printf '1 0 ten 100 4 -1 -1 4 3600 -1 1 5 2 -1 1 0 -1 -1\n' >"$TMP/word.swf"
refused "an SWF wait time that is a word" "word.swf:1:5: column '3 wait time'" \
  "$AIFSIM" import swf "$TMP/word.swf"
{
  head -n 1 "$LOGS/sacct-synthetic.txt"
  echo '7|j|train|2026-11-31T08:00:00|2026-11-30T08:00:00|2026-11-30T09:00:00|COMPLETED|gres/gpu=1|1:00:00'
} >"$TMP/date.txt"
refused "a sacct date that does not exist" "date.txt:2:11: column 'Submit'" \
  "$AIFSIM" import sacct "$TMP/date.txt"
printf 'JobID|State\n1|COMPLETED\n' >"$TMP/cols.txt"
refused "a sacct export without the columns" "cols.txt:1:1: a sacct --parsable2 header needs" \
  "$AIFSIM" import sacct "$TMP/cols.txt"
printf 'job_id,gpu_num,vc,state,submit_time,start_time,end_time\n1,2,v,COMPLETED,2020-01-01 00:10:00,2020-01-01 00:00:00,2020-01-01 01:00:00\n' >"$TMP/order.csv"
refused "a job that starts before its submission" "order.csv:2:" \
  "$AIFSIM" import helios "$TMP/order.csv"
printf 'rules:\n  - {partition: train, phases: {compute: 50%%}}\n' >"$TMP/badmap.yaml"
refused "a mapping rule whose phases are not a cycle" "badmap.yaml:2:33: the phases add to 50%" \
  "$AIFSIM" import sacct "$LOGS/sacct-synthetic.txt" --map "$TMP/badmap.yaml"
printf 'gpus_per_rak: 8\n' >"$TMP/typo.yaml"
refused "a misspelt mapping key" "typo.yaml:1:1:" \
  "$AIFSIM" import sacct "$LOGS/sacct-synthetic.txt" --map "$TMP/typo.yaml"
refused "an unknown format" "import reads sacct, swf or helios" \
  "$AIFSIM" import pbs "$LOGS/synthetic.swf"

# As logged on fewer GPUs than the log's peak: the run stops and says so.
printf 'racks: 2\n' >"$TMP/small.yaml"
"$AIFSIM" import swf "$LOGS/synthetic.swf" --map "$TMP/small.yaml" \
  -o "$TMP/small-run.yaml" 2>/dev/null
"$AIFSIM" run "$TMP/small-run.yaml" -o "$TMP/small.h5" -q >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "starts as logged at .* and only .* are free" "$TMP/err"; then
  ok "as logged on a fleet below the log's peak: the run stops with the reason (exit $rc)"
else
  not_ok "as logged on a small fleet stops (exit $rc)" "$(head -c 400 "$TMP/err")"
fi

finish
