"""aifsim.Factory's wider observation and its actions on the workloads
and the plant (libaifsim, include/aifsim.h), on tests/lib/work.yaml: 128
H100s, a service on 8, a long job on 64 from the start and a short one on
16 arriving at 60 s, an air loop and a battery. Each action is checked
against what it must do; misuse raises SimulationError with the library's
message. The C side's own tests are tests/lib/test_aifsim_work.c."""

import math

import numpy as np
import pytest

from aifsim.errors import SimulationError
from aifsim.factory import JOB_PHASES, Factory, find_library
from conftest import SRC

WORK = SRC / "tests" / "lib" / "work.yaml"


@pytest.fixture(scope="module")
def lib(aifsim_bin):
    return find_library()


def test_observation_has_the_workloads_gpus_loops_and_battery(lib):
    with Factory(WORK, lib=lib) as f:
        assert f.services == ["chat"] and f.jobs == ["long", "short"]
        assert f.loops == ["air"]
        f.step(30)
        o = f.observe()
        for key, n in (("service_power_w", 1), ("service_slo_attainment", 1),
                       ("job_phase", 2), ("job_power_w", 2),
                       ("group_gpu_cap_mean_w", 1), ("loop_temp_c", 1)):
            assert isinstance(o[key], np.ndarray) and o[key].shape == (n,)
        assert [JOB_PHASES[p] for p in o["job_phase"]] == ["running",
                                                          "coming"]
        assert o["job_gpus"].tolist() == [64, 16]
        assert o["service_gpus"][0] == 8
        assert o["jobs_running"] == 1 and o["jobs_waiting"] == 0
        assert np.isclose(o["group_gpu_power_w"].sum(), o["gpu_power_w"],
                          rtol=1e-12)
        assert (o["service_power_w"].sum() + o["job_power_w"].sum()
                < o["gpu_power_w"])
        assert 0.1 <= o["battery_soc"] <= 0.9
        assert o["psu_loss_power_w"] > 0 and o["fan_power_w"] > 0
        assert o["outside_racks_power_w"] == 0
        assert o["loop_supply_min_c"][0] < o["loop_supply_c"][0] \
            <= o["loop_temp_c"][0]
        cap, clock = f.gpu_caps()
        assert cap.shape == clock.shape == (128,)
        assert np.isclose(cap.mean(), o["group_gpu_cap_mean_w"][0])
        # the keys the observation had before are all still there, and
        # wide=False gives those alone
        lean = f.observe(wide=False)
        assert "job_phase" not in lean and "battery_soc" not in lean
        assert set(lean) < set(o)
        for key in ("facility_power_w", "cap_w", "group_power_w",
                    "power_group_cap_w", "load_target_w", "dr_cap_w"):
            assert key in lean


def test_cap_series_steps_in_at_their_ticks(lib):
    with Factory("quickstart", set={"duration": "10min"}, lib=lib) as f:
        contracted = f.cap
        f.set_cap_series([60, 90.5], [400e3, None])
        f.step(59)
        assert f.cap == contracted
        f.step()
        assert f.cap == 400e3 and f.power <= 400e3
        f.run_to(90)
        assert f.cap == 400e3
        f.step()  # 91 s: the first tick at or after 90.5 s
        assert f.cap == contracted
        with pytest.raises(SimulationError, match="before now"):
            f.set_cap_series([10], [5e5])
        with pytest.raises(SimulationError, match="as many times"):
            f.set_cap_series([200, 300], [5e5])
        f.finish()
        assert f.summary("cap_violation_s") == 0


def test_budget_holds_a_jobs_power(lib):
    with Factory(WORK, lib=lib) as f:
        f.step(30)
        budget = 0.6 * f.job("long")["power_w"]
        f.set_job_budget("long", budget)
        for _ in range(20):
            f.step()
            assert f.job("long")["power_w"] <= budget * (1 + 1e-12)
        with pytest.raises(SimulationError, match="minimum caps"):
            f.set_service_budget("chat", 100)
        f.set_job_budget("long", None)
        assert math.isinf(f.job("long")["budget_w"])
        f.finish()


def test_held_job_starts_only_when_released(lib):
    with Factory(WORK, lib=lib) as f:
        f.hold_job("short")
        f.run_to(300)
        assert f.job("short")["phase"] == "waiting"
        assert f.queue()["jobs_held"] == 1
        f.release_job("short")
        assert f.job("short")["phase"] == "running"
        with pytest.raises(SimulationError, match="has started"):
            f.hold_job("long")
        with pytest.raises(SimulationError, match="no job is called"):
            f.hold_job("nope")
        f.finish()


def test_setpoint_warms_the_loop(lib):
    temps = []
    for sp in (None, 30):
        with Factory(WORK, lib=lib) as f:
            if sp is not None:
                f.set_supply("air", sp)
            f.step(600)
            temps.append(f.loop("air")["temp_c"])
    assert temps[1] > temps[0]
    with Factory(WORK, lib=lib) as f:
        with pytest.raises(SimulationError, match="range"):
            f.set_supply("air", 50)
        f.finish()
        with pytest.raises(SimulationError, match="finished"):
            f.set_supply("air", 25)
