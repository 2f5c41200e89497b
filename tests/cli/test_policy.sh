#!/usr/bin/env bash
# test_policy.sh AIFSIM SOURCE_DIR - `aifsim run --policy module:function`
# end to end: the Python priority policy (aifsim.policies) run by the
# command through the hook writes the file the C priority policy writes,
# byte for byte, from any directory and with PYTHONPATH and AIFSIM_LIB
# unset (the command sets them); --threads passed on; a policy in a
# file; a seed passed on; bad specs, a missing interpreter, a policy that
# raises; exit statuses as run's, and no output left behind a failure.
set -u
AIFSIM=$(realpath "$1")
SRC=$(realpath "$2")
NAME=policy
. "$(dirname "$0")/lib.sh"
SCN=$SRC/scenarios/powercap-policies.yaml
SHORT=(--set duration=20min --set power.policy=priority)
unset PYTHONPATH AIFSIM_LIB AIFSIM_BIN AIFSIM_PYTHON
cd "$TMP" || exit 1

run "$AIFSIM" run "$SCN" "${SHORT[@]}" -o c.h5 --quiet
expect "the C priority policy runs" 0
run "$AIFSIM" run "$SCN" "${SHORT[@]}" -o py.h5 \
  --policy aifsim.policies:priority
expect "run --policy aifsim.policies:priority runs" 0
if cmp -s c.h5 py.h5 && grep -q "output py.h5" "$TMP/out"; then
  ok "the Python policy's file is the C one's, byte for byte"
else
  not_ok "the Python policy's file is the C one's" "$(last_run)"
fi

# --threads N reaches the hook (an interpreter that notes its arguments),
# and the hook's run on 2 threads writes the same bytes.
cat >args-python <<'SH'
#!/bin/sh
echo "$@" >"${0%/*}/args"
SH
chmod +x args-python
AIFSIM_PYTHON=$TMP/args-python run "$AIFSIM" run "$SCN" "${SHORT[@]}" \
  -o x.h5 --policy aifsim.policies:priority --threads 3
expect "run --policy with --threads starts the hook" 0
grep -q -- " -o x.h5 --threads 3\$" args &&
  ok "--threads 3 is passed to the hook" ||
  not_ok "--threads 3 is passed to the hook" "$(cat args)"
rm -f args
AIFSIM_PYTHON=$TMP/args-python run "$AIFSIM" run "$SCN" "${SHORT[@]}" \
  -o x.h5 --policy aifsim.policies:priority
! grep -q -- "--threads" args && ok "and none without it" ||
  not_ok "and none without it" "$(cat args)"
rm -f x.h5
run "$AIFSIM" run "$SCN" "${SHORT[@]}" -o py.h5 --force --threads 2 \
  --policy aifsim.policies:priority
expect "run --policy on 2 threads runs" 0
cmp -s c.h5 py.h5 && ok "its file is the C one's, byte for byte" ||
  not_ok "its file on 2 threads is the C one's" "$(last_run)"

# A policy in a file, beside a --seed: even shares of the budget, within
# each unit's range (a policy the C registry does not have).
cat >even.py <<'PY'
import numpy as np
def share(units, budget_w):
    n = units["n"]
    return np.clip(budget_w / n.sum(), units["lo"], units["hi"])
PY
run "$AIFSIM" run "$SCN" "${SHORT[@]}" --seed 3 -o even.h5 \
  --policy even.py:share
expect "a policy in a file, with --seed, runs" 0
if /usr/bin/python3 -c '
import sys, h5py
a = h5py.File("even.h5", "r")
assert a.attrs["complete"] == 1 and a.attrs["seed"] == 3, dict(a.attrs)
' 2>"$TMP/py" && ! cmp -s even.h5 c.h5; then
  ok "its output is complete and not the priority policy's"
else
  not_ok "its output is complete and its own" "$(cat "$TMP/py")"
fi

# A controller (one argument: the observation each period) that holds
# the factory to 400 kW from t = 300 s: the file aifsim.Factory writes
# when a script does the same.
cat >hold.py <<'PY'
def hold(obs):
    return {"cap_w": 400e3} if obs["time_s"] >= 299 else {}
PY
run "$AIFSIM" run "$SCN" --set duration=10min --seed 4 -o held.h5 \
  --policy hold.py:hold
expect "a controller runs" 0
if PYTHONPATH=$SRC/analysis AIFSIM_LIB=$(dirname "$AIFSIM")/libaifsim.so \
  /usr/bin/python3 -c '
import sys, aifsim, h5py
f = aifsim.Factory(sys.argv[1], set={"duration": "10min"}, seed=4,
                   out="script.h5")
while not f.at_end:
    if f.time >= 299:
        f.cap = 400e3
    f.step()
f.finish()
cap = h5py.File("held.h5", "r")["facility"]["cap_w"][:]
assert cap.min() == 400e3 < cap.max(), (cap.min(), cap.max())
' "$SCN" 2>"$TMP/py" && cmp -s held.h5 script.h5; then
  ok "its file is the one a script stepping Factory writes"
else
  not_ok "its file is the one a script stepping Factory writes" \
    "$(cat "$TMP/py")"
fi
cat >badact.py <<'PY'
def act(obs):
    return {"fan_speed": 1}
PY
run "$AIFSIM" run "$SCN" --set duration=1min -o bad.h5 --policy badact.py:act
expect "a controller's unknown action fails the run (exit 1)" 1 \
  "'fan_speed' is not one of cap_w"

cat >raises.py <<'PY'
def boom(units, budget_w):
    raise ValueError("no plan")
PY
run "$AIFSIM" run "$SCN" "${SHORT[@]}" -o raised.h5 --policy raises.py:boom
expect "a policy that raises fails the run (exit 1)" 1 "policy raised.*no plan"
[ ! -e raised.h5 ] && [ ! -e raised.h5.partial ] &&
  ok "and leaves no output" || not_ok "and leaves no output" "$(ls)"

run "$AIFSIM" run "$SCN" "${SHORT[@]}" -o x.h5 --policy nosuch:fn
expect "an unknown module is bad input (exit 2)" 2 "cannot import nosuch"
run "$AIFSIM" run "$SCN" "${SHORT[@]}" -o x.h5 --policy aifsim.policies:nope
expect "an unknown function is bad input (exit 2)" 2 "has no function 'nope'"
run "$AIFSIM" run "$SCN" "${SHORT[@]}" -o x.h5 --policy priority
expect "a spec without ':' is bad input (exit 2)" 2 "module:function"
run "$AIFSIM" run "$SCN" --set duration=soon -o x.h5 \
  --policy aifsim.policies:priority
expect "a bad override is bad input, with its place (exit 2)" 2 \
  "duration=soon:1:10:"
AIFSIM_PYTHON=$TMP/no-python run "$AIFSIM" run "$SCN" "${SHORT[@]}" -o x.h5 \
  --policy aifsim.policies:priority
expect "a missing interpreter is named (exit 2)" 2 "cannot run .*AIFSIM_PYTHON"
run "$AIFSIM" check "$SCN" --policy aifsim.policies:priority
expect "--policy is an option of run only" 2 "option of run"
run "$AIFSIM" run "$SCN" --policy aifsim.policies:priority --metrics
expect "--metrics is refused with --policy" 2 "not options of run --policy"
[ ! -e x.h5 ] && [ ! -e x.h5.partial ] &&
  ok "failed runs leave no output" || not_ok "failed runs leave no output" "$(ls)"
finish
