"""compare-measured (analysis/aifsim/measured.py): a meter's CSV beside a
run, Guideline 14's metrics by hand on a known offset, the figure, bad
input."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from conftest import ANALYSIS, run_aifsim

import aifsim
from aifsim import measured as M
from aifsim.errors import AifsimError


@pytest.fixture(scope="module")
def run(aifsim_bin, tmp_path_factory):
    out = tmp_path_factory.mktemp("measured") / "q.h5"
    return aifsim.open_run(run_aifsim(aifsim_bin, out, "--set",
                                      "duration=3h"))


def meter(run, path, factor=1.0, zone="Z", shift_h=0):
    """The run's facility power times factor, at its sample period, from
    2026-07-01 00:00 in zone (rows open their interval)."""
    f = run.facility
    dt = float(f.index[1] - f.index[0])
    t0 = pd.Timestamp("2026-07-01T00:00:00") + pd.Timedelta(hours=shift_h)
    ts = t0 + pd.to_timedelta(f.index.to_numpy() - dt, unit="s")
    with open(path, "w") as fh:
        fh.write("timestamp,facility_kW\n")
        for a, v in zip(ts, f["power_w"].to_numpy() * factor / 1e3):
            fh.write("%s%s,%.6f\n" % (a.strftime("%Y-%m-%dT%H:%M:%S"),
                                      zone, v))
    return path


def test_known_bias_gives_its_metrics(run, tmp_path):
    """Measured 10% above the run everywhere: MAPE 1/11, NMBE and CV(RMSE)
    from their formulas with n - 1, and Guideline 14's verdicts."""
    both = M.align(M.read_measured(meter(run, tmp_path / "m.csv", 1.1)),
                   run, "facility_kW")
    assert len(both) == 180  # 3 h of 1-min intervals, all common
    tab = M.table(both).set_index("resolution")
    n = 3
    want_nmbe = 100 * (n / (n - 1)) * (0.1 / 1.1)
    assert tab.loc["interval", "MAPE %"] == pytest.approx(100 / 11, rel=1e-6)
    assert tab.loc["hourly", "n"] == 3
    assert tab.loc["hourly", "NMBE %"] == pytest.approx(want_nmbe, rel=1e-3)
    assert tab.loc["hourly", "Guideline 14"] == "not calibrated"
    assert tab.loc["monthly", "Guideline 14"] == "needs 2 whole months"
    exact = M.table(M.align(M.read_measured(
        meter(run, tmp_path / "e.csv")), run, "facility_kW"))
    assert exact.set_index("resolution").loc["hourly", "CV(RMSE) %"] < 1e-6


def test_zone_is_honoured(run, tmp_path):
    """The same clock times an hour later at +01:00 are the same instants:
    the same metrics; without a zone the file is refused."""
    a = M.align(M.read_measured(meter(run, tmp_path / "a.csv", 1.05)), run,
                "facility_kW")
    b = M.align(M.read_measured(meter(run, tmp_path / "b.csv", 1.05,
                                      "+01:00", 1)), run, "facility_kW")
    assert np.allclose(a["measured"], b["measured"])
    with pytest.raises(AifsimError, match="zone"):
        M.read_measured(meter(run, tmp_path / "c.csv", 1, ""))


def test_no_overlap_and_bad_columns(run, tmp_path):
    m = M.read_measured(meter(run, tmp_path / "m.csv"))
    with pytest.raises(AifsimError, match="do not overlap"):
        M.align(m, run, "facility_kW", start="2027-01-01T00:00Z")
    (tmp_path / "x.csv").write_text("timestamp,power\n2026-07-01T00:00Z,1\n"
                                    "2026-07-01T00:01Z,1\n")
    with pytest.raises(AifsimError, match="SCOPE_UNIT"):
        M.read_measured(tmp_path / "x.csv")


def test_command_prints_metrics_and_draws(run, tmp_path):
    csv = meter(run, tmp_path / "m.csv", 1.02)
    png = tmp_path / "m.png"
    p = subprocess.run([sys.executable, "-m", "aifsim", "compare-measured",
                        str(run.path), str(csv), "--png", str(png)],
                       capture_output=True, text=True,
                       env={"PYTHONPATH": str(ANALYSIS)})
    assert p.returncode == 0, p.stderr
    assert "CV(RMSE)" in p.stdout and "hourly" in p.stdout
    assert png.stat().st_size > 10000
    bad = subprocess.run([sys.executable, "-m", "aifsim", "compare-measured",
                          str(run.path), str(csv), "--start",
                          "2027-01-01T00:00Z"], capture_output=True,
                         text=True, env={"PYTHONPATH": str(ANALYSIS)})
    assert bad.returncode == 2 and "overlap" in bad.stderr


def test_calibrated_values_marked_apart(aifsim_bin, tmp_path):
    """A run made with --set-file: Run.calibrated names the overlay's keys
    and values, and the report's subtitle lists them apart from --set."""
    ov = tmp_path / "ov.yaml"
    ov.write_text("set:\n  electrical.fixed_load: 0.02\n"
                  "calibration: {note: not read}\n")
    out = tmp_path / "c.h5"
    p = subprocess.run([str(aifsim_bin), "run",
                        str(ANALYSIS.parent / "scenarios" / "quickstart.yaml"),
                        "-o", str(out), "--quiet", "--set", "duration=1h",
                        "--set-file", str(ov)], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    run = aifsim.open_run(out)
    assert run.calibrated == {"electrical.fixed_load": "0.02"}
    assert run.calibration_overlay == str(ov)
    assert run.scenario_value("electrical.fixed_load") == "2%"
    from aifsim import reports
    sub = reports._subtitle(run)
    assert "calibrated (fitted to a measurement by %s" % ov in sub
    assert "electrical.fixed_load = 0.02" in sub
    assert "--set duration=1h" in sub and "--set electrical" not in sub
