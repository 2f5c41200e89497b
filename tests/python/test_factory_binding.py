"""aifsim.Factory, the ctypes binding of libaifsim: stepping, the power
and the cap between steps, a cap set from Python held from the next step,
and a run stepped period by period writing the file `aifsim run` writes,
byte for byte. The library comes from $AIFSIM_LIB (ctest sets it), else
beside $AIFSIM_BIN, else build/."""

import math
import subprocess

import numpy as np
import pytest

import aifsim
from aifsim.factory import Factory, find_library
from conftest import SRC

SHORT = {"duration": "10min"}


@pytest.fixture(scope="module")
def lib(aifsim_bin):
    # The binary's fixture builds build/ when needed; the library is
    # built with it.
    return find_library()


def test_steps_read_power_and_cap(lib):
    with Factory("quickstart", set=SHORT, lib=lib) as f:
        assert f.time == 0 and f.period == 1 and f.duration == 600
        assert f.step() == 1
        assert f.step(59) == 60
        obs = f.observe()
        assert obs["time_s"] == 60
        assert 0 < obs["it_power_w"] < f.power <= f.cap
        assert obs["group_power_w"].shape == (len(f.groups),)
        assert np.isclose(obs["group_power_w"].sum(), obs["it_power_w"],
                          rtol=1e-12)
        # quickstart: weather, no demand response.
        assert np.isfinite(obs["outdoor_c"]) and obs["dr_cap_w"] == f.cap
        parts = (obs["it_power_w"] + obs["loss_power_w"]
                 + obs["smoothing_power_w"] + obs["cooling_power_w"]
                 - obs["battery_power_w"])
        assert np.isclose(parts, obs["facility_power_w"], rtol=1e-12)


def test_cap_set_from_python_holds(lib):
    with Factory("quickstart", set=SHORT, lib=lib) as f:
        f.step(60)
        contracted, low = f.cap, 0.9 * f.power
        f.cap = low
        assert f.cap == contracted          # from the next step's tick on
        for _ in range(30):
            f.step()
            assert f.cap == low and f.power <= low
        f.cap = None                        # the scenario's cap again
        f.step()
        assert f.cap == contracted
        f.finish()
        assert f.summary("cap_violation_s") == 0
        assert f.summary("energy_mwh") > 0


def test_demand_response_is_observed(lib):
    # grid-dr: a 25% cut of 700 kW from 14:00 for 3 h.
    with Factory("grid-dr", set={"duration": "15h"}, lib=lib) as f:
        f.run_to(14 * 3600 - 1)
        obs = f.observe()
        assert obs["dr_cap_w"] == obs["cap_w"] == 700e3
        f.step(60)
        obs = f.observe()
        assert obs["dr_cap_w"] == obs["cap_w"] == 0.75 * 700e3
        assert obs["facility_power_w"] <= obs["cap_w"]


def test_errors_are_exceptions(lib):
    with pytest.raises(aifsim.SimulationError, match="power.cap"):
        Factory("quickstart", set={"power.cap": "-5 kW"}, lib=lib)
    with Factory("quickstart", set=SHORT, lib=lib) as f:
        with pytest.raises(aifsim.SimulationError, match="contracted"):
            f.cap = 1e30
        f.finish()
        with pytest.raises(aifsim.SimulationError, match="finished"):
            f.step()
        # quickstart serves no tokens: an absent figure is NaN.
        assert math.isnan(f.summary("tokens_per_joule"))


def test_stepping_writes_the_runs_file(lib, aifsim_bin, tmp_path):
    scenario = SRC / "scenarios" / "quickstart.yaml"
    ran = tmp_path / "run.h5"
    subprocess.run([str(aifsim_bin), "run", str(scenario), "-o", str(ran),
                    "--quiet", "--set", "duration=10min", "--seed", "7"],
                   check=True, capture_output=True)
    stepped = tmp_path / "stepped.h5"
    with Factory(scenario, set=SHORT, seed=7, out=stepped, lib=lib) as f:
        while not f.at_end:
            f.step()
        f.finish()
    assert stepped.read_bytes() == ran.read_bytes()


def test_unfinished_run_leaves_no_file(lib, tmp_path):
    out = tmp_path / "left.h5"
    f = Factory("quickstart", set=SHORT, out=out, lib=lib)
    f.step(10)
    assert (tmp_path / "left.h5.partial").exists()
    f.close()
    assert list(tmp_path.iterdir()) == []


def test_example_drives_a_cap(lib, tmp_path):
    proc = subprocess.run(
        ["/usr/bin/python3", str(SRC / "examples" / "cap_from_python.py"),
         "--duration", "20min", "-o", str(tmp_path / "capped.h5")],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "cap violation 0 s" in proc.stdout
    run = aifsim.open_run(tmp_path / "capped.h5")
    cap = run.facility["cap_w"]     # at each sample's end
    assert cap.min() < cap.max()


GROUPS = dict(SHORT, **{
    "power.policy": "priority",
    "power.groups": "[{name: liquid, racks: [nvl72], priority: 1}, "
                    "{name: air, racks: [hgx-h100]}]"})


def test_power_groups_from_python(lib):
    with Factory("quickstart", set=GROUPS, lib=lib) as f:
        assert f.power_groups == ["liquid", "air"]
        f.step(60)
        obs = f.observe()
        assert obs["power_group_budget_w"].shape == (2,)
        assert np.all(np.isnan(obs["power_group_cap_w"]))
        assert np.all(obs["power_group_gpu_power_w"]
                      <= obs["power_group_budget_w"] * (1 + 1e-12))
        assert (obs["power_group_budget_w"].sum()
                <= obs["power_group_own_w"].sum() * (1 + 1e-12))
        cap = 0.5 * f.power_group("liquid")["own_w"]
        f.set_group_cap("liquid", cap)
        f.set_group_lending("liquid", borrow=False)
        f.step()
        g = f.power_group(0)
        assert g["cap_w"] == cap and np.isclose(g["budget_w"], cap,
                                                rtol=1e-12)
        assert g["gpu_w"] <= cap * (1 + 1e-12)
        f.set_group_cap("liquid", None)      # the scenario's: none
        f.step()
        assert math.isnan(f.power_group("liquid")["cap_w"])
        with pytest.raises(aifsim.SimulationError, match="no power group"):
            f.set_group_cap("gpu", 1e3)
        with pytest.raises(aifsim.SimulationError, match="above 0"):
            f.set_group_cap("air", 0)
        f.finish()
        assert f.summary("power_group_borrowed_mwh") >= 0


def test_load_target_from_python(lib):
    with Factory("quickstart", set=SHORT, lib=lib) as f:
        assert math.isnan(f.load_target) and f.power_groups == []
        f.step(60)
        target = 0.9 * f.power
        f.load_target = target
        for _ in range(30):
            f.step()
            assert f.load_target == target and f.power <= target
        f.load_target = math.inf             # none
        f.step()
        assert math.isnan(f.observe()["load_target_w"])
        with pytest.raises(aifsim.SimulationError, match="above 0"):
            f.load_target = -1
        f.finish()
        assert f.summary("load_target_s") == 30
        assert f.summary("load_target_over_s") == 0
        assert f.summary("cap_violation_s") == 0


def test_example_follows_a_load_target(lib, tmp_path):
    proc = subprocess.run(
        ["/usr/bin/python3", str(SRC / "examples" / "load_target_from_csv.py"),
         "--duration", "1h", "-o", str(tmp_path / "target.h5")],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    short = [float(x.split("mean shortfall ")[1].split(" kW")[0])
             for x in lines]
    assert len(short) == 2 and 0 <= short[1] < short[0]
    assert all("cap violation 0 s" in x for x in lines)
    run = aifsim.open_run(tmp_path / "target.h5")
    assert run.summary["load_target_s"] > 0
