#!/usr/bin/env bash
# test_gallery_import.sh AIFSIM SOURCE_DIR - the gallery's question 15,
# "Calibrate to your meter" (scenarios/README.md), walks through import,
# run, compare, calibrate and rerun as written:
#   a. its shell block runs as a user pastes it, from a fresh folder laid
#      out like the repository (build/aifsim this build);
#   b. the imported log reaches the runs: the README's run of the replay
#      and the gallery's own hold the log's job count, GPU-hours and
#      makespan, read from the raw log (replay_matches_log.py);
#   c. the figures the block's `gallery.py --dry --only 15` printed are
#      gallery.json's (question 15 only: gallery_fresh checks them all),
#      and the job count and GPU-hours figures are the raw log's.
set -u
AIFSIM=$(realpath "$1")
SRC=$(realpath "$2")
NAME=gallery-import
. "$(dirname "$0")/lib.sh"
LOG=data/joblogs/synthetic.swf

echo "# a. the walk-through runs as written"
mkdir -p "$TMP/repo/build"
for d in scenarios data analysis tools docs; do ln -s "$SRC/$d" "$TMP/repo/$d"; done
ln -s "$AIFSIM" "$TMP/repo/build/aifsim"
# The first fenced block of the section "## 15." is the walk-through.
awk '/^## 15\./ {q = 1} q && /^```/ {if (b) exit; b = 1; next} q && b' \
  "$SRC/scenarios/README.md" >"$TMP/walk.sh"
if ! grep -q "aifsim import" "$TMP/walk.sh"; then
  not_ok "question 15's block starts from aifsim import" "$(cat "$TMP/walk.sh")"
elif (cd "$TMP/repo" && MPLBACKEND=Agg timeout -s KILL $((300 * SLOW)) \
        bash -e -o pipefail "$TMP/walk.sh") >"$TMP/walk.out" 2>&1; then
  ok "question 15's block runs ($(grep -c . "$TMP/walk.sh") lines)"
else
  not_ok "question 15's block runs" "$(tail -n 15 "$TMP/walk.out")"
fi

echo "# b. the imported log reaches the runs"
for run in out/model.h5 out/calibrated.h5 out/gallery/cal-model.h5; do
  if /usr/bin/python3 "$(dirname "$0")/replay_matches_log.py" swf \
    "$SRC/$LOG" "$TMP/repo/$run" >"$TMP/m" 2>&1; then
    ok "$run holds the log's $(cat "$TMP/m")"
  else
    not_ok "$run holds the log's jobs, GPU-hours and makespan" "$(tail -n 5 "$TMP/m")"
  fi
done

echo "# c. the figures printed are gallery.json's, and the log's"
if /usr/bin/python3 - "$SRC" "$TMP/walk.out" "$SRC/$LOG" >"$TMP/c" 2>&1 <<'PY'; then
import json, sys
src, out, log = sys.argv[1:4]
sys.path.insert(0, src + "/analysis")
from aifsim import units
fig = json.load(open(src + "/scenarios/gallery.json"))["figures"]
printed = dict(l.split(None, 1) for l in open(out)
               if l.startswith("cal-") and len(l.split(None, 1)) == 2)
printed = {k: v.strip() for k, v in printed.items()}
assert len(printed) >= 10, printed
stale = {k: (v, fig.get(k)) for k, v in printed.items() if fig.get(k) != v}
assert not stale, "printed vs gallery.json: %s" % stale
n, gpuh = 0, 0.0
for line in open(log):
    f = line.split()
    if f and not f[0].startswith(";"):
        wait, run_s, procs = (float(x) for x in f[2:5])
        if wait >= 0 and run_s >= 0 and procs > 0:
            n, gpuh = n + 1, gpuh + procs * run_s / 3600
assert printed["cal-jobs"] == units.whole(n), (printed["cal-jobs"], n)
assert printed["cal-gpuh"] == units.significant(gpuh), (printed["cal-gpuh"], gpuh)
print("%d figures; cal-jobs %s, cal-gpuh %s" % (len(printed), n, printed["cal-gpuh"]))
PY
  ok "question 15's figures: $(cat "$TMP/c")"
else
  not_ok "question 15's figures are gallery.json's and the log's" "$(tail -n 5 "$TMP/c")"
fi

finish
