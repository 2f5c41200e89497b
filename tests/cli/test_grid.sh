#!/usr/bin/env bash
# test_grid.sh AIFSIM SOURCE_DIR - the grid feed end to end: a run on the
# real carbon, price and weather files of one region writes the signal
# columns, and h5py reproduces the carbon file's mean over the run window;
# bad signal files are refused with FILE:LINE: and the column, exit 2.
set -u
AIFSIM=$1
SRC=$2
NAME=grid
. "$(dirname "$0")/lib.sh"

# The real-data scenario reads the repository's data/ folder.
if "$AIFSIM" run "$SRC/scenarios/frankfurt-week.yaml" -o "$TMP/fw.h5" \
  >"$TMP/out" 2>"$TMP/err"; then
  ok "frankfurt-week runs on the real files"
else
  not_ok "frankfurt-week runs on the real files" "$(head -c 600 "$TMP/err")"
fi

if /usr/bin/python3 - "$TMP/fw.h5" \
  "$SRC/data/carbon/DE-LU_2023_hourly.csv" >"$TMP/py" 2>&1 <<'PY'
import csv, datetime as dt, sys
import h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
fac = f["facility"]
for col, unit in [("carbon_g_per_kwh", "gCO2/kWh"), ("price_per_mwh", "$/MWh"),
                  ("outdoor_c", "degC"), ("co2_kg", "kg"), ("cost", "$")]:
    assert fac[col].attrs["units"] == unit, (col, fac[col].attrs["units"])
t0 = dt.datetime(2023, 7, 1)
t1 = t0 + dt.timedelta(seconds=float(f["summary"].attrs["duration_s"]))
with open(sys.argv[2], encoding="utf-8") as fh:
    rows = list(csv.reader(fh))[1:]
# The default basis is life-cycle: the file's LCA column.
vals = [float(r[5]) for r in rows if t0 <= dt.datetime.fromisoformat(r[0]) < t1]
mean_file = np.mean(vals)
mean_run = fac["carbon_g_per_kwh"][:].mean()
assert abs(mean_run - mean_file) <= 1e-9 * mean_file, (mean_run, mean_file)
# CO2 and cost are the exact books: the last cumulative value is the summary.
s = f["summary"].attrs
assert abs(fac["co2_kg"][-1] / 1000 - s["co2_t"]) <= 1e-12 * s["co2_t"]
assert abs(fac["cost"][-1] - s["cost"]) <= 1e-12 * abs(s["cost"])
# The basis is named, and the bill adds up (no tariff: energy only).
basis = s["carbon_basis"]
assert (basis.decode() if isinstance(basis, bytes) else basis) == "lifecycle"
assert abs(s["cost_energy"] + s["cost_demand"] + s["cost_fees"] - s["cost"]) <= 1e-9 * abs(s["cost"])
# Energy-weighted carbon lies within the signal's range.
assert vals and min(vals) <= s["carbon_g_per_kwh"] <= max(vals)
print(f"mean carbon {mean_run:.6f} = file {mean_file:.6f} over {len(vals)} h")
PY
then
  ok "h5py reproduces the file's mean carbon intensity ($(tail -n1 "$TMP/py"))"
else
  not_ok "h5py reproduces the file's mean carbon intensity" "$(cat "$TMP/py")"
fi

# bad_csv NAME CSV EXPECT: a scenario drawing its price from CSV must fail
# with exit 2 and stderr starting with the CSV's path and EXPECT.
bad_csv() {
  printf '%b' "$2" >"$TMP/$1.csv"
  cat >"$TMP/$1.yaml" <<YAML
name: bad-csv
duration: 2 h
grid: {price: {file: $1.csv, time_column: time, value_column: price}}
power: {cap: 10 kW}
racks: [{name: r, count: 1, gpu: L4, gpus_per_rack: 8}]
YAML
  "$AIFSIM" check "$TMP/$1.yaml" >/dev/null 2>"$TMP/err"
  local rc=$? first
  first=$(head -n 1 "$TMP/err")
  if [ "$rc" -eq 2 ] && [[ "$first" == "$TMP/$1.csv:$3"* ]]; then
    ok "bad CSV ($1): exit 2, $3"
  else
    not_ok "bad CSV ($1): exit 2, $3" "exit $rc: $first"
  fi
}

H='time,price\n'
bad_csv missing-column 'time,cost\n2023-01-01 00:00,1\n' \
  "1:1: column 'price': no such column"
bad_csv bad-time "${H}2023-01-01 00:00,1\n01/01/2023 01:00,2\n" \
  "3:1: column 'time': not a time like"
bad_csv out-of-order "${H}2023-01-01 01:00,1\n2023-01-01 00:00,2\n" \
  "3:1: column 'time': time 2023-01-01 00:00 is earlier"
bad_csv duplicate "${H}2023-01-01 00:00,1\n2023-01-01 00:00,2\n" \
  "3:1: column 'time': time 2023-01-01 00:00 is the same"
bad_csv gap "${H}2023-01-01 00:00,1\n2023-01-01 06:00,2\n" \
  "3:1: column 'time': a gap of 21600 s"
bad_csv nan "${H}2023-01-01 00:00,1\n2023-01-01 01:00,NaN\n2023-01-01 02:00,1\n" \
  "3:18: column 'price': not a plain decimal number"

# Liquid against air cooling on a real weather year: Frankfurt's annual
# PUE within 1.05-1.20 (liquid) and 1.25-1.6 (air: the surveys' band that
# scenarios/README.md and docs/VALIDATION.md give), Dallas worse for both.
# PUE counts the servers' power-supply losses and fans as IT (The Green
# Grid); the books add up with them inside it_energy_mwh, and ITUE x PUE
# is TUE.
DALLAS="grid.outdoor.file=../data/weather/US-TEX-ERCO_2023_weather.csv"
for site in frankfurt dallas; do
  for kind in liquid air; do
    set_site=()
    [ "$site" = dallas ] && set_site=(--set "$DALLAS")
    if "$AIFSIM" run "$SRC/scenarios/liquid-vs-air.yaml" -o "$TMP/$site-$kind.h5" \
      --set "loops.0.kind=$kind" "${set_site[@]}" >/dev/null 2>"$TMP/err"; then
      ok "liquid-vs-air: $site, $kind runs"
    else
      not_ok "liquid-vs-air: $site, $kind runs" "$(head -c 600 "$TMP/err")"
    fi
  done
done
if /usr/bin/python3 - "$TMP" >"$TMP/py" 2>&1 <<'PY'
import sys
import h5py
pue = {}
for site in ("frankfurt", "dallas"):
    for kind in ("liquid", "air"):
        with h5py.File(f"{sys.argv[1]}/{site}-{kind}.h5", "r") as f:
            s = f["summary"].attrs
            pue[site, kind] = float(s["mean_pue"])
            assert s["cap_violation_s"] == 0
            parts = s["it_energy_mwh"] + s["loss_energy_mwh"] + s["cooling_energy_mwh"]
            assert abs(parts - s["energy_mwh"]) <= 1e-9 * s["energy_mwh"]
            assert s["psu_loss_energy_mwh"] > 0 and s["fan_energy_mwh"] > 0
            assert abs(s["itue"] * s["mean_pue"] - s["tue"]) <= 1e-9 * s["tue"]
assert 1.05 <= pue["frankfurt", "liquid"] <= 1.20, pue
assert 1.25 <= pue["frankfurt", "air"] <= 1.60, pue
assert pue["dallas", "liquid"] > pue["frankfurt", "liquid"], pue
assert pue["dallas", "air"] > pue["frankfurt", "air"], pue
print(" ".join(f"{s}/{k} {v:.3f}" for (s, k), v in pue.items()))
PY
then
  ok "annual PUE in range, Dallas worse ($(tail -n1 "$TMP/py"))"
else
  not_ok "annual PUE in range, Dallas worse" "$(cat "$TMP/py")"
fi

# The same liquid loop with a cooling tower on Frankfurt's year: it reads
# the weather's humidity for the wet bulb, and its water adds up by
# source (evaporation, blowdown at 4 cycles of concentration, drift);
# WUE is site water over IT energy, and 0 with the dry plants above.
if "$AIFSIM" run "$SRC/scenarios/liquid-vs-air.yaml" -o "$TMP/evap.h5" \
  --set loops.0.heat_rejection=evaporative >"$TMP/out" 2>"$TMP/err" &&
  grep -q "^  water  *WUE" "$TMP/out"; then
  ok "liquid-vs-air: evaporative runs and prints its water"
else
  not_ok "liquid-vs-air: evaporative runs" "$(head -c 600 "$TMP/err")"
fi
if /usr/bin/python3 - "$TMP" >"$TMP/py" 2>&1 <<'PY'
import sys
import h5py
t = sys.argv[1]
with h5py.File(f"{t}/evap.h5", "r") as f:
    s = f["summary"].attrs
    parts = s["water_evaporation_m3"] + s["water_blowdown_m3"] + s["water_drift_m3"]
    assert abs(parts - s["water_m3"]) <= 1e-9 * s["water_m3"], dict(s)
    # Solids: make-up = 4 x (blowdown + drift).
    out = s["water_blowdown_m3"] + s["water_drift_m3"]
    assert abs(s["water_m3"] - 4 * out) <= 1e-9 * s["water_m3"]
    wue = s["water_m3"] * 1e3 / (s["it_energy_mwh"] * 1e3)
    assert abs(wue - s["wue_l_per_kwh"]) <= 1e-9 * wue
    # The tower rejects at least the racks' heat (IT): 1.316 L evaporated
    # per kWh of it at the least.
    assert s["water_evaporation_m3"] * 1e3 >= 1.316 * s["it_energy_mwh"] * 1e3
    evap = float(s["wue_l_per_kwh"])
for site in ("frankfurt", "dallas"):
    for kind in ("liquid", "air"):
        with h5py.File(f"{t}/{site}-{kind}.h5", "r") as f:
            assert f["summary"].attrs["wue_l_per_kwh"] == 0
            assert f["summary"].attrs["water_m3"] == 0
print(f"WUE {evap:.3f} L/kWh")
PY
then
  ok "evaporative water adds up, dry WUE 0 ($(tail -n1 "$TMP/py"))"
else
  not_ok "evaporative water adds up, dry WUE 0" "$(cat "$TMP/py")"
fi

# An evaporative loop without a humidity is refused at its place, exit 2.
"$AIFSIM" check "$SRC/scenarios/liquid-vs-air.yaml" \
  --set loops.0.heat_rejection=evaporative --set 'grid.humidity={}' \
  >/dev/null 2>"$TMP/err"
rc=$?
if [ "$rc" = 2 ] && grep -q "liquid-vs-air.yaml:[0-9]*:[0-9]*: loop 'main' is evaporative" "$TMP/err"; then
  ok "evaporative without humidity: exit 2 at the loop"
else
  not_ok "evaporative without humidity: exit 2 at the loop" "exit $rc: $(head -c 300 "$TMP/err")"
fi

finish
