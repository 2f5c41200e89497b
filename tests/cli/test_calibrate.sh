#!/bin/bash
# test_calibrate.sh AIFSIM SRC - calibrate and --set-file end to end
# (issue 26): planted values recovered within 2% from a run plus seeded
# noise, the held-out span's CV(RMSE) printed and held, the overlay marked
# in /scenario, bad input refused with exit 2.
NAME=calibrate
. "$(dirname "$0")/lib.sh"
AIFSIM=$1
SRC=$2
S=$SRC/tests/cli/calibrate/meter.yaml
PY="env PYTHONPATH=$SRC/analysis /usr/bin/python3"

"$AIFSIM" run "$S" -q -o "$TMP/planted.h5" \
  --set racks.0.other_power_max=9.6kW --set loops.0.carnot_fraction=40% \
  >/dev/null || not_ok "planted run"
$PY "$SRC/tests/cli/calibrate/synth.py" "$TMP/planted.h5" "$TMP/m.csv" 0.002
out=$("$AIFSIM" calibrate "$S" "$TMP/m.csv" -o "$TMP/ov.yaml" \
  --fit racks.0.other_power_max loops.0.carnot_fraction 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
[ $rc -eq 0 ] && ok "calibrate exits 0" || not_ok "calibrate exits 0" "$out"

# The fitted values from the overlay's set mapping, against the planted.
check=$($PY - "$TMP/ov.yaml" <<'PYEOF'
import sys, yaml
ov = yaml.safe_load(open(sys.argv[1]))
got = {"racks.0.other_power_max": float(ov["set"]["racks.0.other_power_max"].split()[0]),
       "loops.0.carnot_fraction": float(ov["set"]["loops.0.carnot_fraction"])}
want = {"racks.0.other_power_max": 9600.0, "loops.0.carnot_fraction": 0.40}
bad = [k for k in want if abs(got[k] / want[k] - 1) > 0.02]
cv = float(ov["calibration"]["held_out"]["interval"]["cv_rmse"].rstrip("%"))
print("bad:%s cv:%g se:%s" % (",".join(bad), cv,
      ov["calibration"]["keys"]["loops.0.carnot_fraction"]["std_error"]))
PYEOF
)
echo "# $check"
case $check in
  "bad: "*) ok "planted values recovered within 2%" ;;
  *) not_ok "planted values recovered within 2%" "$check" ;;
esac
# The noise is 0.2% a row: the held-out span's error is that, not more.
cv=$(echo "$check" | sed -n 's/.*cv:\([0-9.e+-]*\).*/\1/p')
awk -v c="$cv" 'BEGIN { exit !(c > 0.1 && c < 0.4) }' &&
  ok "held-out CV(RMSE) ${cv}% near the noise" ||
  not_ok "held-out CV(RMSE) near the noise" "$cv"
echo "$out" | grep -q '^held out .*CV(RMSE)' && ok "held-out CV(RMSE) printed" ||
  not_ok "held-out CV(RMSE) printed" "$out"

# --set-file applies the overlay and marks the keys in /scenario.
"$AIFSIM" run "$S" -q --set-file "$TMP/ov.yaml" -o "$TMP/cal.h5" >/dev/null ||
  not_ok "run --set-file"
marks=$($PY -c "
import h5py, sys
s = h5py.File(sys.argv[1])['scenario'][()]
s = s.decode() if isinstance(s, bytes) else str(s)
print('calibrated_keys' in s and 'loops.0.carnot_fraction' in s and 'calibration_overlay' in s)" "$TMP/cal.h5")
[ "$marks" = True ] && ok "/scenario marks the calibrated keys" ||
  not_ok "/scenario marks the calibrated keys" "$marks"

# Bad input: exit 2 with a message.
bad() {
  local what=$1; shift
  msg=$("$AIFSIM" "$@" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] && [ -n "$msg" ] && ok "$what: exit 2" ||
    not_ok "$what: exit 2" "rc=$rc $msg"
}
bad "unknown key" calibrate "$S" "$TMP/m.csv" --fit racks.0.nosuch
bad "key not numeric" calibrate "$S" "$TMP/m.csv" --fit power.policy
bad "no overlap" calibrate "$S" "$TMP/m.csv" --fit racks.0.other_power_max \
  --start 2027-01-01T00:00Z
printf 'timestamp,facility_kW\n2026-07-01 00:00,1\n2026-07-01 00:01,1\n' \
  >"$TMP/nozone.csv"
bad "time without a zone" calibrate "$S" "$TMP/nozone.csv" \
  --fit racks.0.other_power_max
printf 'nope: 1\n' >"$TMP/bad.yaml"
bad "overlay without set" run "$S" --set-file "$TMP/bad.yaml"
[ ! -e "$TMP/m.overlay.yaml" ] && ok "no overlay left after a failure" ||
  not_ok "no overlay left after a failure"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
