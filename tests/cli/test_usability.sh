#!/usr/bin/env bash
# test_usability.sh AIFSIM SOURCE_DIR - the first hour's traps (issue 27):
#   a. --quick applies a file's `# quick:` line (its --set options first,
#      the user's winning), and refuses a file without one, or a line with
#      anything else, with FILE:LINE:COLUMN;
#   b. names are suggested whatever their case, at every place that
#      refuses one: GPU types, models, precisions, policies, units, keys;
#   c. a scenario's GPU or LLM catalog adds to the built-in one, an entry
#      of a built-in name replacing it, unless it says `replace: true`;
#   d. the estimate guesses the wall time from a trial on this machine,
#      and the trial leaves outputs as they were;
#   e. on a terminal the progress line is drawn, and wiped at the end.
set -u
AIFSIM=$(realpath "$1")
SRC=$(realpath "$2")
PY=/usr/bin/python3
NAME=usability
. "$(dirname "$0")/lib.sh"
S=$SRC/scenarios
QUICK=$S/quickstart.yaml
MIXED=$S/mixed.yaml

RUN_LIMIT=120 # s, a run's hang limit (lib.sh's run, expect)

echo "# a. --quick"
run "$AIFSIM" run "$S/moe-vs-dense.yaml" --quick -o "$TMP/quick.h5" --quiet
expect "run --quick" 0
run "$AIFSIM" run "$S/moe-vs-dense.yaml" --set duration=5min \
  -o "$TMP/explicit.h5" --quiet
if cmp -s "$TMP/quick.h5" "$TMP/explicit.h5"; then
  ok "--quick is the line's --set duration=5min, byte for byte"
else
  not_ok "--quick is the line's --set duration=5min, byte for byte"
fi
"$AIFSIM" check "$S/precision.yaml" --resolved --quick --set duration=1min \
  >"$TMP/a.yaml" 2>&1
"$AIFSIM" check "$S/precision.yaml" --resolved --set duration=1min \
  >"$TMP/b.yaml" 2>&1
cmp -s "$TMP/a.yaml" "$TMP/b.yaml" && ok "a --set of the user's wins over the line" ||
  not_ok "a --set of the user's wins over the line" "$(diff "$TMP/a.yaml" "$TMP/b.yaml" | head -5)"
run "$AIFSIM" run "$QUICK" --quick -o "$TMP/x.h5"
expect "a file without a quick line: refused" 2 "quickstart.yaml: --quick: the file has no '# quick:' line"
[ ! -e "$TMP/x.h5" ] && ok "... and nothing written" || not_ok "... and nothing written"
{ echo "name: q"; echo "# quick: --seed 3"; tail -n +2 "$QUICK"; } >"$TMP/bad.yaml"
run "$AIFSIM" check "$TMP/bad.yaml" --quick
expect "a quick line with --seed: FILE:LINE:COLUMN" 2 "bad.yaml:2:10: the '# quick:' line holds only '--set KEY=VALUE'"
{ echo "# quick: --set duration"; cat "$QUICK"; } >"$TMP/bad2.yaml"
run "$AIFSIM" check "$TMP/bad2.yaml" --quick
expect "a --set without KEY=VALUE: FILE:LINE:COLUMN" 2 "bad2.yaml:1:16: '--set' on the '# quick:' line needs KEY=VALUE"
run "$AIFSIM" catalog --quick
expect "--quick is not an option of catalog" 2 "--quick is an option of run, check and sweep"
run "$AIFSIM" sweep "$S/sweep-powercap.yaml" --list --quick
grep -q '^# .*sweep-powercap.yaml: 30 points of .*quickstart.yaml --set duration=2h$' "$TMP/out" &&
  ok "sweep --quick: every point gets the sweep file's line" ||
  not_ok "sweep --quick: every point gets the sweep file's line" "$(head -2 "$TMP/out")"

echo "# b. suggestions ignore case"
# suggest LABEL SCENARIO SET WANTED: check refuses the --set and suggests.
suggest() {
  run "$AIFSIM" check "$2" --set "$3"
  expect "$1" 2 "did you mean '$4'\?"
}
suggest "h100 -> H100-SXM" "$QUICK" racks.1.gpu=h100 H100-SXM
suggest "gb200 -> GB200" "$QUICK" racks.0.gpu=gb200 GB200
suggest "Static -> static" "$QUICK" power.policy=Static static
suggest "llama-3.1-70b -> Llama-3.1-70B" "$MIXED" services.0.model=llama-3.1-70b Llama-3.1-70B
suggest "FP8 -> fp8" "$MIXED" services.0.precision=FP8 fp8
suggest "700kw -> kW" "$QUICK" power.cap=700kw kW
suggest "power.Cap -> cap" "$QUICK" power.Cap=700kW cap
suggest "a rack group's case" "$QUICK" loops.0.racks.0=NVL72 nvl72

echo "# c. catalogs of one's own"
# A new type: the built-in H100-SXM entry, renamed and held to 500 W.
"$PY" - "$SRC/scenarios/catalog/gpus.yaml" "$TMP" <<'PYEOF'
import copy, sys, yaml
cat = yaml.safe_load(open(sys.argv[1]))
h100 = next(g for g in cat["gpus"] if g["name"] == "H100-SXM")
new = dict(copy.deepcopy(h100), name="H100-SXM-500W", tdp="500 W",
           power_cap_max="500 W")
over = dict(copy.deepcopy(h100), tdp="600 W", power_cap_max="600 W")
out = sys.argv[2]
yaml.safe_dump({"gpus": [new]}, open(out + "/add.yaml", "w"))
yaml.safe_dump({"gpus": [over, new]}, open(out + "/over.yaml", "w"))
yaml.safe_dump({"replace": True, "gpus": [new]}, open(out + "/only.yaml", "w"))
m = yaml.safe_load(open(sys.argv[1].replace("gpus.yaml", "models.yaml")))
m8 = next(x for x in m["models"] if x["name"] == "Llama-3.1-8B")
yaml.safe_dump({"models": [dict(m8, name="My-8B")]},
               open(out + "/models.yaml", "w"))
fp8 = next(x for x in m["precisions"] if x["name"] == "fp8")
yaml.safe_dump({"replace": True, "models": [dict(m8, name="My-8B")],
                "precisions": [fp8]}, open(out + "/models-only.yaml", "w"))
PYEOF
run "$AIFSIM" catalog --catalog "$TMP/add.yaml"
n=$(grep -cE '^[ +*][A-Za-z0-9-]+ +[0-9]' "$TMP/out")
if [ "$RC" -eq 0 ] && [ "$n" -eq 13 ] && grep -q '^+H100-SXM-500W *500' "$TMP/out" &&
  grep -q '^ GB200 ' "$TMP/out"; then
  ok "catalog --catalog: the 12 built-in types and the file's new one, marked +"
else
  not_ok "catalog --catalog adds to the built-in types" "$n types; $(last_run)"
fi
run "$AIFSIM" check "$QUICK" --set "catalog=$TMP/add.yaml" \
  --set racks.1.gpu=H100-SXM-500W
expect "a scenario uses the added type beside a built-in one (GB200)" 0
run "$AIFSIM" catalog --catalog "$TMP/over.yaml"
n=$(grep -cE '^[ +*][A-Za-z0-9-]+ +[0-9]' "$TMP/out")
if [ "$n" -eq 13 ] && grep -q '^\*H100-SXM  *600' "$TMP/out"; then
  ok "an entry of a built-in name replaces it (H100-SXM at 600 W, marked *)"
else
  not_ok "an entry of a built-in name replaces it" "$(grep H100 "$TMP/out")"
fi
run "$AIFSIM" run "$QUICK" --set "catalog=$TMP/over.yaml" --set duration=1h \
  -o "$TMP/over.h5" --quiet
run "$AIFSIM" run "$QUICK" --set duration=1h -o "$TMP/base.h5" --quiet
if "$PY" - "$TMP/over.h5" "$TMP/base.h5" <<'PYEOF'; then
import sys, h5py
a, b = (h5py.File(p)["summary"].attrs["gpu_energy_mwh"] for p in sys.argv[1:])
sys.exit(0 if a != b else 1)
PYEOF
  ok "the replaced H100-SXM is the one the run uses (its GPU energy moves)"
else
  not_ok "the replaced H100-SXM is the one the run uses"
fi
run "$AIFSIM" check "$QUICK" --set "catalog=$TMP/only.yaml"
expect "replace: true: the built-in types are gone" 2 "unknown GPU type 'GB200'"
grep -q 'known types: H100-SXM-500W$' "$TMP/err" &&
  ok "... and the hint lists the file's types only" ||
  not_ok "... and the hint lists the file's types only" "$(last_run)"
run "$AIFSIM" check "$MIXED" --set "models=$TMP/models.yaml" \
  --set services.1.model=My-8B
expect "an LLM file of models alone adds to the built-in catalog" 0
run "$AIFSIM" check "$MIXED" --set "models=$TMP/models-only.yaml"
expect "an LLM file with replace: true needs fp16" 2 "the precisions must include fp16"

echo "# d. the estimate's wall-time guess"
run "$AIFSIM" check "$QUICK"
grep -qE '^estimate: about [0-9.]+ (s|min|h|d) of wall time on this machine \([0-9.e+]+ events/s in a [0-9.]+ s trial of this scenario\)$' "$TMP/out" &&
  ok "check prints the guess and how it was made" ||
  not_ok "check prints the guess and how it was made" "$(cat "$TMP/out")"
run "$AIFSIM" run "$QUICK" --set duration=2h -o "$TMP/trial.h5"
grep -q 'of wall time on this machine' "$TMP/err" &&
  ok "run prints the guess" || not_ok "run prints the guess" "$(last_run)"
run "$AIFSIM" run "$QUICK" --set duration=2h -o "$TMP/notrial.h5" --quiet
cmp -s "$TMP/trial.h5" "$TMP/notrial.h5" &&
  ok "a run after a trial writes the bytes of a run without one" ||
  not_ok "a run after a trial writes the bytes of a run without one"

echo "# e. the progress line"
# Under a pseudo-terminal, stderr is a terminal: the line is drawn (\r,
# "sim", "ETA") and wiped before the summary. Nothing is said of how
# often: that is wall-clock time (test_progress holds the slicing).
"$PY" - "$AIFSIM" "$QUICK" "$TMP/pty.h5" >"$TMP/pty" 2>&1 <<'PYEOF'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "run", sys.argv[2], "-o", sys.argv[3]])
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
text = out.decode("utf-8", "replace")
draws = text.count("\r  sim ")
print("status", os.waitstatus_to_exitcode(status), "draws", draws)
sys.exit(0 if os.waitstatus_to_exitcode(status) == 0 and draws >= 1
         and "ETA" in text and "quickstart: 1d 00:00:00 simulated" in text
         else 1)
PYEOF
[ $? -eq 0 ] && ok "on a terminal the line is drawn ($(cat "$TMP/pty"))" ||
  not_ok "on a terminal the line is drawn" "$(tail -c 600 "$TMP/pty")"
run "$AIFSIM" run "$QUICK" -o "$TMP/file.h5"
! grep -q $'\r' "$TMP/err" && ok "off a terminal it is not" ||
  not_ok "off a terminal it is not" "$(head -c 300 "$TMP/err")"
finish
