#!/usr/bin/env bash
# test_cli.sh - end-to-end tests of the aifsim command.
#
#   bash tests/cli/test_cli.sh AIFSIM_BINARY SOURCE_DIR
#
# What it holds the command to (docs/SCENARIOS.md, docs/OUTPUT.md):
#   a. every malformed scenario in tests/scenarios/bad/ gives exit 2 and a
#      FILE:LINE:COLUMN: message as listed in tests/scenarios/bad/EXPECT
#      (FILE<TAB>LINE:COLUMN<TAB>substring), from `check` and from `run`,
#      without a crash and without leaving an output file;
#   b. the same for inputs generated here (10 MB, binary garbage, deep
#      nesting, a NUL byte, ...), which are not committed;
#   c. usage errors and bad --set overrides give exit 2;
#   d. version, help and catalog work;
#   e. the same scenario and seed give the same bytes, --seed and --set
#      change them;
#   f. the HDF5 layout of section 6 (h5dump -H);
#   g. the numbers in it, read with /usr/bin/python3 and h5py: power under
#      the cap, the time scale, the summary, energy = mean power x duration;
#   h. an output directory that does not exist fails cleanly;
#   i. a run killed midway leaves nothing under the final name;
#   j. export --csv writes tidy CSV that reads back to the same numbers.
# One line per check ("ok - ..." / "not ok - ..."), then "N passed, M failed";
# the exit status is non-zero if any check failed.
set -u

if [ $# -ne 2 ]; then
  echo "usage: bash $0 AIFSIM_BINARY SOURCE_DIR" >&2
  exit 2
fi
AIFSIM=$(realpath "$1")
SRC=$(realpath "$2")
BAD=$SRC/tests/scenarios/bad
QUICK=$SRC/scenarios/quickstart.yaml
PY=/usr/bin/python3

NAME=cli
. "$(dirname "$0")/lib.sh"

RUN_LIMIT=60 # s, a run's hang limit (lib.sh's run)

first_err_line() { head -n 1 "$TMP/err"; }

# ------------------------------------------------------------------------
# Malformed input: exit 2, FILE:LINE:COLUMN: prefix, substring, no crash,
# no output left behind.
# ------------------------------------------------------------------------

WORK=$TMP/work # the only place a run may write to; must stay empty
mkdir -p "$WORK"

# bad_input LABEL PATH POS SUBSTR: POS is LINE:COLUMN, or "" for any.
bad_input() {
  local label=$1 path=$2 pos=$3 substr=$4 mode problems prefix first
  for mode in check run; do
    problems=()
    rm -rf "${WORK:?}"/* "$WORK"/.[!.]* 2>/dev/null
    # In a subshell (for cd), so the status is taken from it directly.
    if [ "$mode" = check ]; then
      (cd "$WORK" && timeout -s KILL $((60 * SLOW)) "$AIFSIM" check "$path" \
        >"$TMP/out" 2>"$TMP/err" </dev/null)
    else
      (cd "$WORK" && timeout -s KILL $((60 * SLOW)) "$AIFSIM" run "$path" \
        -o "$WORK/x.h5" --quiet >"$TMP/out" 2>"$TMP/err" </dev/null)
    fi
    RC=$?
    first=$(first_err_line)
    if [ "$RC" -ge 128 ]; then
      problems+=("crashed or hung: exit $RC (signal $((RC - 128)))")
    elif [ "$RC" -ne 2 ]; then
      problems+=("exit $RC, expected 2")
    fi
    if [ -n "$pos" ]; then
      prefix="$path:$pos:"
      [[ $first == "$prefix"* ]] ||
        problems+=("stderr does not start with '$prefix'")
    else
      [[ $first =~ ^"$path":[0-9]+:[0-9]+:\  ]] ||
        problems+=("stderr does not start with '$path:LINE:COLUMN: '")
    fi
    if [ -n "$substr" ] && ! grep -qF -- "$substr" "$TMP/err"; then
      problems+=("stderr lacks '$substr'")
    fi
    [ -e "$WORK/x.h5" ] && problems+=("left $WORK/x.h5")
    [ -e "$WORK/x.h5.partial" ] && problems+=("left $WORK/x.h5.partial")
    if [ -n "$(ls -A "$WORK")" ]; then
      problems+=("left files: $(ls -A "$WORK" | tr '\n' ' ')")
    fi
    if [ ${#problems[@]} -eq 0 ]; then
      ok "$mode $label: exit 2, ${pos:-L:C}: names the problem"
    else
      not_ok "$mode $label" "${problems[@]}" "stderr: $(head -c 600 "$TMP/err")"
    fi
  done
}

echo "# a. malformed scenarios in tests/scenarios/bad"
if [ ! -f "$BAD/EXPECT" ]; then
  not_ok "tests/scenarios/bad/EXPECT exists"
else
  # Every file has an expectation and every expectation a file.
  missing=()
  for f in "$BAD"/*.yaml; do
    grep -q "^$(basename "$f")	" "$BAD/EXPECT" || missing+=("$(basename "$f")")
  done
  stale=()
  while IFS=$'\t' read -r name pos substr; do
    [ -z "$name" ] || [ -f "$BAD/$name" ] || stale+=("$name")
  done <"$BAD/EXPECT"
  if [ ${#missing[@]} -eq 0 ] && [ ${#stale[@]} -eq 0 ]; then
    ok "EXPECT covers every file in tests/scenarios/bad"
  else
    not_ok "EXPECT covers every file in tests/scenarios/bad" \
      "no expectation: ${missing[*]:-}" "no file: ${stale[*]:-}"
  fi
  bad_files=("$BAD"/*.yaml)
  nbad=${#bad_files[@]}
  if [ "$nbad" -ge 20 ]; then
    ok "at least 20 malformed scenarios ($nbad)"
  else
    not_ok "at least 20 malformed scenarios ($nbad)"
  fi
  while IFS=$'\t' read -r name pos substr; do
    [ -n "$name" ] || continue
    bad_input "bad/$name" "$BAD/$name" "$pos" "$substr"
  done <"$BAD/EXPECT"
fi

# ------------------------------------------------------------------------
echo "# b. generated malformed input"
# ------------------------------------------------------------------------
GEN=$TMP/gen
mkdir -p "$GEN"

base_scenario() {
  cat <<'EOF'
name: generated
duration: 1 h
power:
  cap: 200 kW
racks:
  - {name: hgx, count: 2, gpu: H100-SXM, gpus_per_rack: 32}
EOF
}

# 10 MB: a valid scenario padded with comments past the 1 MiB limit.
{
  base_scenario
  yes -- '# padding padding padding padding padding padding padding padding' |
    head -c $((10 * 1024 * 1024))
} >"$GEN/ten-megabytes.yaml"
bad_input "10 MB file" "$GEN/ten-megabytes.yaml" 1:1 "at most"

# Binary garbage from a seeded generator (reproducible), with NUL bytes
# (caught before parsing) and with every NUL replaced (reaches the parser).
"$PY" - "$GEN" <<'EOF'
import random, sys
d = sys.argv[1]
data = random.Random(20240601).randbytes(65536)
open(d + "/garbage.bin", "wb").write(data)
open(d + "/garbage-no-nul.bin", "wb").write(data.replace(b"\0", b"\xff"))
# Valid text up to one byte that is not UTF-8.
open(d + "/invalid-utf8.yaml", "wb").write(
    b"name: bad-\xff\xfe-example\nduration: 1 h\npower:\n  cap: 200 kW\n"
    b"racks:\n  - {name: hgx, count: 2, gpu: H100-SXM, gpus_per_rack: 32}\n")
EOF
first_nul=$("$PY" -c '
import sys
d = open(sys.argv[1], "rb").read()
i = d.index(b"\0")
print("%d:%d" % (d[:i].count(b"\n") + 1, i - (d.rfind(b"\n", 0, i) + 1) + 1))
' "$GEN/garbage.bin")
bad_input "binary garbage" "$GEN/garbage.bin" "$first_nul" "NUL byte"
# Its first byte, 0x9e, is not UTF-8: the message should say so there.
bad_input "binary garbage without NUL" "$GEN/garbage-no-nul.bin" 1:1 "UTF-8"
bad_input "invalid UTF-8" "$GEN/invalid-utf8.yaml" "" "UTF"

# A NUL byte inside an otherwise valid scenario: line 2, column 10.
{
  printf 'duration: 1 h\nname: bad\0example\n'
  base_scenario | tail -n +3
} >"$GEN/nul-byte.yaml"
bad_input "NUL byte" "$GEN/nul-byte.yaml" 2:10 "NUL byte"

# Deep nesting, flow and block: must be refused, not overflow the stack.
head -c 100000 /dev/zero | tr '\0' '[' >"$GEN/deep-flow-seq.yaml"
bad_input "100,000 '['" "$GEN/deep-flow-seq.yaml" "" "depth"
{
  printf 'name: '
  yes -- '{a: ' | head -n 100000 | tr -d '\n'
  echo
} >"$GEN/deep-flow-map.yaml"
bad_input "100,000 '{a: '" "$GEN/deep-flow-map.yaml" "" "depth"
yes -- '- ' | head -n 100000 | tr -d '\n' >"$GEN/deep-block-seq.yaml"
bad_input "100,000 '- '" "$GEN/deep-block-seq.yaml" "" "depth"
"$PY" -c '
import sys
with open(sys.argv[1], "w") as f:
    for i in range(1000):
        f.write(" " * i + "a:\n")
' "$GEN/deep-block-map.yaml"
bad_input "1,000 nested block mappings" "$GEN/deep-block-map.yaml" "" "depth"

# A value longer than the loader's limit.
{
  printf 'name: '
  head -c 100000 /dev/zero | tr '\0' a
  echo
  base_scenario | tail -n +2
} >"$GEN/long-value.yaml"
bad_input "a 100,000-character value" "$GEN/long-value.yaml" 1:7 "too long"

# ------------------------------------------------------------------------
echo "# c. usage errors"
# ------------------------------------------------------------------------

# usage LABEL EXPECTED-PREFIX-OR-EMPTY COMMAND...: exit 2, no crash.
usage() {
  local label=$1 prefix=$2
  shift 2
  run "$@"
  local problems=()
  [ "$RC" -eq 2 ] || problems+=("exit $RC, expected 2")
  [ -s "$TMP/err" ] || problems+=("no message on stderr")
  if [ -n "$prefix" ] && [[ $(first_err_line) != "$prefix"* ]]; then
    problems+=("stderr does not start with '$prefix'")
  fi
  if [ ${#problems[@]} -eq 0 ]; then
    ok "$label: exit 2"
  else
    not_ok "$label" "${problems[@]}" "$(last_run)"
  fi
}

usage "no command" "" "$AIFSIM"
usage "unknown command" "" "$AIFSIM" frobnicate
usage "unknown option" "" "$AIFSIM" check "$QUICK" --frobnicate
usage "check without a scenario" "" "$AIFSIM" check
usage "run without a scenario" "" "$AIFSIM" run
usage "two scenarios" "" "$AIFSIM" check "$QUICK" "$QUICK"
usage "--seed abc" "" "$AIFSIM" check "$QUICK" --seed abc
usage "--seed -1" "" "$AIFSIM" check "$QUICK" --seed -1
usage "--seed +7" "" "$AIFSIM" check "$QUICK" --seed +7
usage "--seed ' -1' (no wrap)" "" "$AIFSIM" check "$QUICK" --seed " -1"
usage "--seed without a value" "" "$AIFSIM" check "$QUICK" --seed
for bad in 0 -1 abc 2x "" 99999999999999999999; do
  usage "--threads '$bad'" "aifsim: --threads takes a whole number" \
    "$AIFSIM" run "$QUICK" -o "$TMP/threads.h5" --threads "$bad"
done
usage "--threads without a value" "" "$AIFSIM" run "$QUICK" --threads
usage "--threads outside run and sweep" "aifsim: --threads is an option" \
  "$AIFSIM" check "$QUICK" --threads 2
usage "--set without a value" "" "$AIFSIM" check "$QUICK" --set
usage "-o without a value" "" "$AIFSIM" run "$QUICK" -o
usage "--set without '='" "--set power.cap:1:" \
  "$AIFSIM" check "$QUICK" --set power.cap
usage "--set with an empty value" "--set power.cap=:1:" \
  "$AIFSIM" check "$QUICK" --set power.cap=
usage "--set with an unknown key" "--set power.cpa=650kW:1:" \
  "$AIFSIM" check "$QUICK" --set power.cpa=650kW
usage "--set with an unknown top-level key" "--set colour=blue:1:" \
  "$AIFSIM" check "$QUICK" --set colour=blue
usage "--set with a bad unit" "--set power.cap=3MWh:1:12:" \
  "$AIFSIM" check "$QUICK" --set power.cap=3MWh
usage "--set with a missing unit" "--set power.cap=650:1:" \
  "$AIFSIM" check "$QUICK" --set power.cap=650
usage "--set with a list index out of range" "--set racks.9.count=2:1:" \
  "$AIFSIM" check "$QUICK" --set racks.9.count=2
usage "--set with a value that is not YAML" "--set power.cap=[1:1:" \
  "$AIFSIM" check "$QUICK" --set 'power.cap=[1'
usage "nonexistent scenario (check)" "" \
  "$AIFSIM" check "$TMP/no-such-scenario.yaml"
usage "a directory as the scenario" "" "$AIFSIM" check "$SRC/scenarios"

# An option given without its value is one mistake: one message, one usage.
for opt in --seed --set; do
  run "$AIFSIM" check "$QUICK" "$opt"
  n=$(grep -c '^aifsim: ' "$TMP/err")
  if [ "$n" -eq 1 ]; then
    ok "$opt without a value: one error message"
  else
    not_ok "$opt without a value: one error message" \
      "$n error lines:" "$(grep '^aifsim: ' "$TMP/err")"
  fi
done

# A bad override on `run`, and a nonexistent scenario on `run`: exit 2 and
# no output file.
rm -rf "${WORK:?}"/*
(cd "$WORK" && timeout -s KILL $((60 * SLOW)) "$AIFSIM" run "$QUICK" -o "$WORK/x.h5" \
  --quiet --set power.cap=3MWh >/dev/null 2>"$TMP/err")
RC=$?
if [ "$RC" -eq 2 ] && [ -z "$(ls -A "$WORK")" ]; then
  ok "run with a bad --set: exit 2, nothing written"
else
  not_ok "run with a bad --set: exit 2, nothing written" "$(last_run)" \
    "files: $(ls -A "$WORK")"
fi
(cd "$WORK" && timeout -s KILL $((60 * SLOW)) "$AIFSIM" run "$TMP/no-such.yaml" \
  -o "$WORK/x.h5" --quiet >/dev/null 2>"$TMP/err")
RC=$?
if [ "$RC" -eq 2 ] && [ -z "$(ls -A "$WORK")" ] &&
  grep -qF "$TMP/no-such.yaml" "$TMP/err"; then
  ok "run with a nonexistent scenario: exit 2, names it, nothing written"
else
  not_ok "run with a nonexistent scenario: exit 2, names it, nothing written" \
    "$(last_run)" "files: $(ls -A "$WORK")"
fi

# ------------------------------------------------------------------------
echo "# d. version, help, catalog"
# ------------------------------------------------------------------------
run "$AIFSIM" version
if [ "$RC" -eq 0 ] && grep -qE '^aifsim [0-9]+\.[0-9]+' "$TMP/out"; then
  ok "version: exit 0, prints 'aifsim X.Y'"
else
  not_ok "version" "$(last_run)" "stdout: $(head -c 200 "$TMP/out")"
fi
run "$AIFSIM" help
if [ "$RC" -eq 0 ] && grep -q 'run' "$TMP/out" && grep -q 'check' "$TMP/out" &&
  grep -q 'catalog' "$TMP/out"; then
  ok "help: exit 0, lists run, check, catalog"
else
  not_ok "help" "$(last_run)"
fi
run "$AIFSIM" catalog
if [ "$RC" -eq 0 ]; then
  ok "catalog: exit 0"
  missing=()
  for g in H100-SXM H100-PCIe A100-SXM A100-PCIe L40S L4 RTX-4090 RTX-4080 \
    H200 B200 GB200 GB300; do
    grep -qE "^$g( |$)" "$TMP/out" || missing+=("$g")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    ok "catalog lists all 12 GPU types"
  else
    not_ok "catalog lists all 12 GPU types" "missing: ${missing[*]}"
  fi
  missing=()
  for s in DGX-H100 HGX-H100 HGX-H200 HGX-B200 GB200-NVL72 GB300-NVL72; do
    grep -qE "^$s " "$TMP/out" || missing+=("$s")
  done
  if [ ${#missing[@]} -eq 0 ] && grep -qE '^DGX-H100 .* 10\.2 +10\.2$' "$TMP/out"; then
    ok "catalog lists the 6 systems, DGX-H100 at its 10.2 kW"
  else
    not_ok "catalog lists the 6 systems" "missing: ${missing[*]}"
  fi
else
  not_ok "catalog: exit 0" "$(last_run)"
fi

# ------------------------------------------------------------------------
echo "# e. reproducibility"
# ------------------------------------------------------------------------
OUT=$TMP/out.d
mkdir -p "$OUT"

# quick_run LABEL FILE ARGS...: a successful quickstart run to FILE.
quick_run() {
  local label=$1 file=$2
  shift 2
  run "$AIFSIM" run "$QUICK" -o "$file" --quiet "$@"
  if [ "$RC" -eq 0 ] && [ -f "$file" ] && [ ! -e "$file.partial" ]; then
    ok "$label: exit 0, $(basename "$file") written, no .partial"
    return 0
  fi
  not_ok "$label" "$(last_run)"
  return 1
}

quick_run "quickstart run 1" "$OUT/a.h5"
quick_run "quickstart run 2" "$OUT/b.h5"
quick_run "quickstart --seed 7" "$OUT/seed7.h5" --seed 7
quick_run "quickstart --set power.cap=650kW" "$OUT/cap650.h5" \
  --set power.cap=650kW
if [ -f "$OUT/a.h5" ] && [ -f "$OUT/b.h5" ] && cmp -s "$OUT/a.h5" "$OUT/b.h5"
then
  ok "two runs of the quickstart are byte-identical"
else
  not_ok "two runs of the quickstart are byte-identical" \
    "$(cmp "$OUT/a.h5" "$OUT/b.h5" 2>&1)"
fi
if [ -f "$OUT/seed7.h5" ] && ! cmp -s "$OUT/a.h5" "$OUT/seed7.h5"; then
  ok "--seed 7 changes the output"
else
  not_ok "--seed 7 changes the output"
fi
if [ -f "$OUT/cap650.h5" ] && ! cmp -s "$OUT/a.h5" "$OUT/cap650.h5"; then
  ok "--set power.cap=650kW changes the output"
else
  not_ok "--set power.cap=650kW changes the output"
fi

# ------------------------------------------------------------------------
echo "# f. HDF5 layout (h5dump -H)"
# ------------------------------------------------------------------------
if ! command -v h5dump >/dev/null; then
  not_ok "h5dump is installed"
elif [ -f "$OUT/a.h5" ]; then
  h5dump -H "$OUT/a.h5" >"$TMP/h5h" 2>&1
  for want in 'GROUP "facility"' 'GROUP "racks"' 'GROUP "summary"' \
    'DATASET "scenario"' 'DATASET "time"' 'DATASET "power_w"' \
    'DATASET "cap_w"' 'ATTRIBUTE "complete"' 'ATTRIBUTE "aifsim_version"' \
    'ATTRIBUTE "scenario_name"' 'ATTRIBUTE "seed"'; do
    if grep -qF "$want" "$TMP/h5h"; then
      ok "h5dump -H shows $want"
    else
      not_ok "h5dump -H shows $want"
    fi
  done
  # units of the two datasets the issue names, and of the time scale
  for ds in /facility/power_w:W /facility/cap_w:W /facility/time:s \
    /racks/power_w:W; do
    path=${ds%:*} unit=${ds##*:}
    h5dump -H -d "$path" "$OUT/a.h5" >"$TMP/h5d" 2>&1
    u=$(h5dump -a "$path/units" "$OUT/a.h5" 2>/dev/null |
      sed -n 's/.*(0): "\(.*\)".*/\1/p')
    if grep -qF 'ATTRIBUTE "units"' "$TMP/h5d" && [ "$u" = "$unit" ]; then
      ok "$path has units \"$unit\""
    else
      not_ok "$path has units \"$unit\"" "units: '$u'"
    fi
  done
else
  not_ok "h5dump -H of the quickstart output" "no output file"
fi

# ------------------------------------------------------------------------
echo "# g. the numbers, read with $PY and h5py"
# ------------------------------------------------------------------------
if [ -f "$OUT/a.h5" ]; then
  "$PY" - "$OUT/a.h5" "$OUT/seed7.h5" "$OUT/cap650.h5" >"$TMP/py" 2>&1 <<'EOF'
import sys

def out(good, what, detail=""):
    print(("ok - " if good else "not ok - ") + what)
    if not good and detail:
        print("#   " + str(detail))

try:
    import h5py
    import numpy as np
except Exception as e:  # noqa: BLE001
    out(False, "import h5py and numpy", e)
    sys.exit(0)

def check(what, fn):
    try:
        r = fn()
        out(r is None or r is True, what, "" if r in (None, True) else r)
    except Exception as e:  # noqa: BLE001
        out(False, what, "%s: %s" % (type(e).__name__, e))

def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)

f = h5py.File(sys.argv[1], "r")
fac = f["facility"]
p = fac["power_w"][()]
pk = fac["peak_power_w"][()]
cap = fac["cap_w"][()]
t = fac["time"][()]
s = f["summary"].attrs

check("/facility/power_w, peak_power_w, cap_w, time: same length > 0",
      lambda: len(p) == len(pk) == len(cap) == len(t) > 0
      or "lengths %d %d %d %d" % (len(p), len(pk), len(cap), len(t)))
check("power_w is float64 seconds-indexed 1-D",
      lambda: fac["power_w"].dtype == np.float64 and fac["power_w"].ndim == 1
      and fac["time"].dtype == np.float64)
check("power_w never exceeds cap_w",
      lambda: bool(np.all(p <= cap)) or "max over: %g W"
      % float(np.max(p - cap)))
check("peak_power_w never exceeds cap_w",
      lambda: bool(np.all(pk <= cap)) or "max over: %g W"
      % float(np.max(pk - cap)))
check("power_w is no more than peak_power_w",
      lambda: bool(np.all(p <= pk * (1 + 1e-12))))
check("power_w is finite and positive",
      lambda: bool(np.all(np.isfinite(p)) and np.all(p > 0)))
check("cap_w is 700 kW throughout", lambda: bool(np.all(cap == 700e3)))
check("time is a dimension scale of power_w",
      lambda: h5py.h5ds.is_scale(fac["time"].id) and len(fac["power_w"].dims[0]) == 1
      and fac["power_w"].dims[0][0].name == "/facility/time")
check("time is increasing with equal steps",
      lambda: bool(np.all(np.diff(t) > 0)
                   and np.allclose(np.diff(t), t[1] - t[0])))
check("power_w has units and long_name",
      lambda: text(fac["power_w"].attrs["units"]) == "W"
      and len(text(fac["power_w"].attrs["long_name"])) > 0)
check("root attribute complete is 1",
      lambda: int(f.attrs["complete"]) == 1)
check("root attributes aifsim_version, scenario_name, seed",
      lambda: text(f.attrs["scenario_name"]) == "quickstart"
      and int(f.attrs["seed"]) == 42
      and len(text(f.attrs["aifsim_version"])) > 0)
want = ["energy_mwh", "mean_power_w", "peak_power_w", "cap_w",
        "cap_violation_s", "duration_s"]
check("/summary has " + ", ".join(want),
      lambda: all(k in s for k in want)
      or "missing: %s" % [k for k in want if k not in s])
check("/summary duration_s is 24 h and the last time stamp",
      lambda: float(s["duration_s"]) == 86400.0 and float(t[-1]) == 86400.0)
def energy():
    e = float(np.mean(p)) * float(s["duration_s"])
    e_sum = float(s["energy_mwh"]) * 3.6e9
    rel = abs(e - e_sum) / abs(e_sum)
    return rel <= 1e-9 or "mean(power_w) x duration = %.17g J, " \
        "energy_mwh x 3.6e9 = %.17g J (rel %.3g)" % (e, e_sum, rel)
check("mean(power_w) x duration = energy_mwh x 3.6e9 (1e-9 relative)", energy)
check("energy_j ends at energy_mwh x 3.6e9 (1e-9 relative)",
      lambda: abs(float(fac["energy_j"][-1]) - float(s["energy_mwh"]) * 3.6e9)
      <= 1e-9 * float(s["energy_mwh"]) * 3.6e9)
check("/summary peak_power_w is the highest peak, within the cap",
      lambda: float(s["peak_power_w"]) == float(np.max(pk))
      and float(s["peak_power_w"]) <= float(s["cap_w"]))
check("no cap violation reported", lambda: float(s["cap_violation_s"]) == 0)
check("/scenario is the resolved scenario as YAML text",
      lambda: "name: \"quickstart\"" in text(f["scenario"][()])
      and "cap: 700 kW" in text(f["scenario"][()]))

def other(path, fn):
    try:
        with h5py.File(path, "r") as g:
            return fn(g)
    except Exception as e:  # noqa: BLE001
        return "%s: %s" % (type(e).__name__, e)

check("--seed 7 output has seed 7 in / and in /scenario",
      lambda: other(sys.argv[2], lambda g: int(g.attrs["seed"]) == 7
                    and "seed: 7\n" in text(g["scenario"][()])))
check("--set power.cap=650kW: /scenario has 'cap: 650 kW', cap_w is 650 kW",
      lambda: other(sys.argv[3], lambda g:
                    "cap: 650 kW" in text(g["scenario"][()])
                    and bool(np.all(g["facility/cap_w"][()] == 650e3))
                    and bool(np.all(g["facility/power_w"][()] <= 650e3))))
EOF
  prc=$?
  while IFS= read -r line; do
    case $line in
    "ok - "*) echo "$line"; PASS=$((PASS + 1)) ;;
    "not ok - "*) echo "$line"; FAIL=$((FAIL + 1)) ;;
    *) echo "$line" ;;
    esac
  done <"$TMP/py"
  if [ "$prc" -ne 0 ]; then
    not_ok "the h5py checks ran to the end" "exit $prc"
  fi
else
  not_ok "h5py checks of the quickstart output" "no output file"
fi

# ------------------------------------------------------------------------
echo "# h. an output directory that does not exist"
# ------------------------------------------------------------------------
run "$AIFSIM" run "$QUICK" -o "$TMP/no-such-dir/x.h5" --quiet
if [ "$RC" -ne 0 ] && [ "$RC" -lt 128 ] && [ ! -e "$TMP/no-such-dir" ] &&
  [ -s "$TMP/err" ]; then
  ok "missing output directory: exit $RC with a message, nothing created"
else
  not_ok "missing output directory: fails cleanly" "$(last_run)" \
    "$(ls -la "$TMP/no-such-dir" 2>&1)"
fi

# ------------------------------------------------------------------------
echo "# i. runs stopped midway"
# ------------------------------------------------------------------------

# stop_midway FILE DURATION SIGNAL: starts a long run to FILE, waits until
# its .partial exists, sends SIGNAL; sets RC to the exit status, or to -1
# when the run finished before it could be stopped.
stop_midway() {
  local file=$1 duration=$2 sig=$3
  rm -f "$file" "$file.partial"
  # A background job of a script starts with SIGINT ignored, and aifsim
  # keeps a signal ignored from the start (as nohup needs): undo that.
  env --default-signal=INT "$AIFSIM" run "$QUICK" -o "$file" --quiet \
    --set "duration=$duration" >/dev/null 2>"$TMP/err" </dev/null &
  BG_PID=$!
  for _ in $(seq 100); do # up to 5 s for the file to appear
    [ -e "$file.partial" ] && break
    kill -0 "$BG_PID" 2>/dev/null || break
    sleep 0.05
  done
  sleep 0.3
  if kill -0 "$BG_PID" 2>/dev/null; then
    kill -"$sig" "$BG_PID"
    wait "$BG_PID" 2>/dev/null
    RC=$?
  else
    wait "$BG_PID" 2>/dev/null
    RC=-1
  fi
  BG_PID=
}

for sig in KILL TERM INT; do
  for duration in 30d 120d 366d; do
    stop_midway "$OUT/stopped.h5" "$duration" "$sig"
    [ "$RC" -ne -1 ] && break
  done
  if [ "$RC" -eq -1 ]; then
    not_ok "SIG$sig midway" "the 366-day run finished before it was stopped"
    continue
  fi
  if [ "$sig" = KILL ]; then
    if [ "$RC" -eq 137 ] && [ ! -e "$OUT/stopped.h5" ]; then
      ok "SIGKILL midway (duration $duration): nothing under the final name"
    else
      not_ok "SIGKILL midway (duration $duration): nothing under the final name" \
        "exit $RC; $(ls "$OUT" | tr '\n' ' ')"
    fi
  else
    # Caught: the run stops, says so, removes its partial file and lock,
    # and dies of the signal (exit 128 + N: 143, 130).
    want=$([ "$sig" = TERM ] && echo 143 || echo 130)
    if [ "$RC" -eq "$want" ] && [ ! -e "$OUT/stopped.h5" ] &&
      [ ! -e "$OUT/stopped.h5.partial" ] && [ ! -e "$OUT/stopped.h5.lock" ] &&
      grep -q "stopped by SIG$sig" "$TMP/err"; then
      ok "SIG$sig midway (duration $duration): exit $RC, no file left"
    else
      not_ok "SIG$sig midway (duration $duration): exit $want, no file left" \
        "exit $RC; files: $(ls "$OUT" | tr '\n' ' ')" \
        "stderr: $(head -c 300 "$TMP/err")"
    fi
  fi
done

# ------------------------------------------------------------------------
echo "# j. export to tidy CSV"
# ------------------------------------------------------------------------
if [ -f "$OUT/a.h5" ]; then
  run "$AIFSIM" export "$OUT/a.h5" --csv "$OUT/csv"
  if [ "$RC" -eq 0 ] && [ -f "$OUT/csv/facility.csv" ] &&
    [ -f "$OUT/csv/racks.csv" ] && [ -f "$OUT/csv/summary.csv" ] &&
    [ -f "$OUT/csv/run.csv" ] && [ -f "$OUT/csv/scenario.yaml" ] &&
    [ -z "$(ls "$OUT/csv" | grep partial)" ]; then
    ok "export --csv: exit 0, a file per group, no .partial"
  else
    not_ok "export --csv writes a file per group" "$(last_run)" \
      "$(ls "$OUT/csv" 2>&1 | tr '\n' ' ')"
  fi
  "$PY" - "$OUT/a.h5" "$OUT/csv" >"$TMP/py" 2>&1 <<'EOF'
import json
import sys

import h5py
import numpy as np
import pandas as pd

run, d = sys.argv[1], sys.argv[2]
f = h5py.File(run, "r")

def out(good, what, detail=""):
    print(("ok - " if good else "not ok - ") + what)
    if not good:
        print("#   " + str(detail))

# round_trip: pandas' default parser is fast but not correctly rounded
fac = pd.read_csv(d + "/facility.csv", float_precision="round_trip")
out(list(fac.columns[:1]) == ["time [s]"] and "power_w [W]" in fac.columns
    and "pue [1]" in fac.columns, "facility.csv: units in the header",
    list(fac.columns))
out(len(fac) == len(f["facility/time"]), "facility.csv: a row per sample",
    len(fac))
out(np.array_equal(fac["power_w [W]"].to_numpy(), f["facility/power_w"][()])
    and np.array_equal(fac["time [s]"].to_numpy(), f["facility/time"][()]),
    "facility.csv: the numbers read back to the same doubles")
racks = pd.read_csv(d + "/racks.csv", float_precision="round_trip")
names = [x.decode() for x in f["racks/rack"][()]]
out(list(racks.columns[:2]) == ["time [s]", "rack"]
    and len(racks) == len(f["racks/time"]) * len(names),
    "racks.csv: tidy, a row per sample and rack", racks.shape)
out(np.array_equal(racks["power_w [W]"].to_numpy(),
                   f["racks/power_w"][()].reshape(-1))
    and list(racks["rack"][:len(names)]) == names,
    "racks.csv: time-major, rack names in the rack column")
s = pd.read_csv(d + "/summary.csv", index_col="metric")
out(s.loc["energy_mwh", "units"] == "MWh"
    and float(s.loc["energy_mwh", "value"]) ==
    float(f["summary"].attrs["energy_mwh"]),
    "summary.csv: metric, value, units", s.loc["energy_mwh"].tolist())
declared = json.loads(f["summary"].attrs["units"])
out(all(str(s.loc[k, "units"]) == u for k, u in declared.items() if k in s.index)
    and not {"units", "long_names", "groups"} & set(s.index),
    "summary.csv: the units /summary declares, without the declarations",
    s.loc["gpus"].tolist())
r = pd.read_csv(d + "/run.csv", index_col="key")
out(r.loc["scenario_name", "value"] == "quickstart", "run.csv: the root "
    "attributes")
EOF
  while IFS= read -r line; do
    case $line in
    "ok - "*) echo "$line"; PASS=$((PASS + 1)) ;;
    "not ok - "*) echo "$line"; FAIL=$((FAIL + 1)) ;;
    *) echo "$line" ;;
    esac
  done <"$TMP/py"
fi
# The registry of /summary metrics: listed without a run, and printed
# after one with the values the run wrote.
run "$AIFSIM" metrics
if [ "$RC" -eq 0 ] && grep -Eq '^energy_mwh +MWh +Energy +Facility energy$' "$TMP/out" &&
  grep -Eq '^carbon_basis +- +Grid +Carbon basis$' "$TMP/out"; then
  ok "aifsim metrics: key, units, group and long name of every metric"
else
  not_ok "aifsim metrics lists the registry" "$(last_run)"
fi
run "$AIFSIM" run "$QUICK" --set duration=10min -o "$OUT/metrics.h5" --quiet --metrics
if [ "$RC" -eq 0 ] && grep -Eq '^      Facility energy +[0-9.e-]+ MWh +energy_mwh$' "$TMP/out" &&
  grep -Eq '^      Electricity cost +- +cost$' "$TMP/out"; then
  ok "run --metrics: every metric by group, units as declared, absent as -"
else
  not_ok "run --metrics prints the registry's metrics" "$(last_run); $(head -c 300 "$TMP/out")"
fi
run "$AIFSIM" check "$QUICK" --metrics
if [ "$RC" -eq 2 ] && grep -q "option of run" "$TMP/err"; then
  ok "--metrics is refused outside run"
else
  not_ok "--metrics outside run: exit 2" "$(last_run)"
fi
run "$AIFSIM" export "$QUICK" --csv "$OUT/not-a-run"
if [ "$RC" -eq 2 ] && [ ! -e "$OUT/not-a-run" ] &&
  grep -q "not an aifsim run file" "$TMP/err"; then
  ok "export of a file that is not a run: exit 2, nothing written"
else
  not_ok "export of a file that is not a run: exit 2" "$(last_run)"
fi
run "$AIFSIM" export "$OUT/a.h5"
if [ "$RC" -eq 2 ] && grep -q "needs --csv" "$TMP/err"; then
  ok "export without --csv: exit 2 with a usage message"
else
  not_ok "export without --csv: exit 2" "$(last_run)"
fi

finish
