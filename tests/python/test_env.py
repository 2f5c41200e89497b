"""aifsim.FactoryEnv: the Gymnasium API over aifsim.Factory, without
Gymnasium (Debian has none; one test fakes it to check registration).
An episode stepped through the environment is the run aifsim.Factory
gives with the same actions (the same file, byte for byte); the reward is
its documented terms summed over the periods the actions chose."""

import importlib
import math
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import aifsim
import aifsim.env as env_module
from aifsim.env import ACTIONS, Action, FactoryEnv, register_action
from aifsim.factory import Factory, find_library

SHORT = {"duration": "10min"}
GROUPS = dict(SHORT, **{
    "power.policy": "priority",
    "power.groups": "[{name: liquid, racks: [nvl72], priority: 1}, "
                    "{name: air, racks: [hgx-h100]}]"})


@pytest.fixture(scope="module")
def lib(aifsim_bin):
    return find_library()


def episode(env, policy, seed=None):
    """Runs one episode; returns (rewards, observations, last info)."""
    obs, info = env.reset(seed=seed)
    rewards, seen = [], [obs]
    while True:
        obs, r, term, trunc, info = env.step(policy(obs))
        rewards.append(r)
        seen.append(obs)
        if term or trunc:
            return rewards, seen, info


def test_the_api_and_its_spaces(lib):
    env = FactoryEnv("quickstart", set=SHORT, lib=lib)
    assert aifsim.FactoryEnv is FactoryEnv
    obs, info = env.reset(seed=2)
    assert info == {"time_s": 0.0, "seed": 2}
    assert env.observation_space.contains(obs)
    assert obs["facility_power_w"].shape == ()
    assert obs["group_power_w"].shape == (len(env.factory.groups),)
    # no power groups, services or jobs: their actions are not offered
    assert env.action_keys == ["cap_w", "load_target_w", "supply_c"]
    cap = env.action_space["cap_w"]
    assert cap.high == env.scenario_cap_w == 700e3 and cap.low > 0
    rewards, seen, info = episode(env, lambda o: {})
    assert len(rewards) == 600 and seen[-1]["time_s"] == 600
    assert all(env.observation_space.contains(o) for o in seen)
    assert info["summary"]["cap_violation_s"] == 0
    with pytest.raises(aifsim.SimulationError, match="reset"):
        env.step({})
    env.close()


def test_the_reward_is_its_terms(lib):
    """The default reward: GPU energy (MJ) less ten times the energy
    above the limit, over each period the action chose; summed over the
    episode with the first period's (set at reset, before any action) it
    is the books' GPU energy when nothing goes over."""
    env = FactoryEnv("quickstart", set=SHORT, lib=lib)
    obs0, _ = env.reset()
    rewards, seen, info = episode(env, lambda o: {})
    gpu_mj = [float(o["gpu_power_w"]) * 1.0 / 1e6 for o in seen[1:-1]]
    assert rewards[:-1] == pytest.approx(gpu_mj, rel=1e-12)
    assert rewards[-1] == 0         # the period after the run's end
    total = sum(rewards) + float(obs0["gpu_power_w"]) / 1e6
    assert total == pytest.approx(info["summary"]["gpu_energy_mwh"] * 3600,
                                  rel=1e-3)


def test_over_limit_is_charged(lib):
    """A load target below the load: the facility is held under it (no
    charge) or the energy above it is charged at the weight given."""
    env = FactoryEnv("quickstart", set=SHORT, lib=lib,
                     reward={"over_limit_mj": -1.0, "over_limit_s": -1.0})
    env.reset()
    obs, r, *_ = env.step({"load_target_w": 1e3})  # far below: missed
    over_w = float(obs["facility_power_w"]) - 1e3
    assert float(obs["load_target_w"]) == 1e3 and over_w > 0
    assert r == pytest.approx(-(over_w / 1e6 + 1.0), rel=1e-12)
    env.close()


def test_it_is_the_factory_run(lib, tmp_path):
    """The same actions through FactoryEnv and through Factory write the
    same file."""
    a, b = tmp_path / "env.h5", tmp_path / "factory.h5"
    env = FactoryEnv("quickstart", set=SHORT, out=a, lib=lib)
    episode(env, lambda o: {"cap_w": 0.9 * float(o["facility_power_w"])},
            seed=5)
    env.close()
    with Factory("quickstart", set=SHORT, seed=5, out=b, lib=lib) as f:
        while not f.at_end:
            f.cap = 0.9 * f.power
            f.step()
        f.finish()
    assert a.read_bytes() == b.read_bytes()


def test_seeds(lib):
    env = FactoryEnv("quickstart", set=SHORT, lib=lib, max_steps=30)
    runs = [episode(env, lambda o: {}, seed=s)[1] for s in (7, 7, 8)]
    power = [[float(o["facility_power_w"]) for o in r] for r in runs]
    assert power[0] == power[1] and power[0] != power[2]
    env.reset(seed=7)
    later = [env.reset()[1]["seed"] for _ in range(2)]
    assert later[0] != later[1] and 7 not in later


def test_truncation_and_periods(lib):
    env = FactoryEnv("quickstart", set=SHORT, lib=lib, periods=60,
                     max_steps=3)
    env.reset()
    out = [env.step({}) for _ in range(3)]
    assert [o[4]["time_s"] for o in out] == [60, 120, 180]
    assert [o[3] for o in out] == [False, False, True]
    assert not any(o[2] for o in out)
    with pytest.raises(aifsim.SimulationError, match="periods"):
        FactoryEnv("quickstart", set=SHORT, lib=lib, periods=0)


def test_out_of_range_actions(lib):
    env = FactoryEnv("quickstart", set=SHORT, lib=lib)
    env.reset()
    obs, _, _, _, info = env.step({"cap_w": 1e12})
    assert info["clipped"] == ["cap_w"] and float(obs["cap_w"]) == 700e3
    obs, _, _, _, info = env.step({"cap_w": math.nan})  # the scenario's
    assert info["clipped"] == [] and float(obs["cap_w"]) == 700e3
    with pytest.raises(aifsim.SimulationError, match="no action"):
        env.step({"cooling_setpoint_c": 20})
    strict = FactoryEnv("quickstart", set=SHORT, lib=lib, clip=False)
    strict.reset()
    with pytest.raises(aifsim.SimulationError):
        strict.step({"cap_w": -5})
    with pytest.raises(aifsim.SimulationError, match="no reward term"):
        FactoryEnv("quickstart", set=SHORT, lib=lib, reward={"joy": 1})
    with pytest.raises(aifsim.SimulationError, match="no action"):
        FactoryEnv("quickstart", set=SHORT, lib=lib, actions=["joy"])


def test_power_group_caps(lib):
    env = FactoryEnv("quickstart", set=GROUPS, lib=lib)
    assert env.action_keys == ["cap_w", "load_target_w", "power_group_cap_w",
                               "supply_c"]
    obs, _ = env.reset()
    assert env.action_space["power_group_cap_w"].shape == (2,)
    for _ in range(30):
        obs, *_ = env.step({})
    cap = 0.5 * float(obs["power_group_own_w"][0])
    obs, *_ = env.step({"power_group_cap_w": [cap, math.inf]})
    assert float(obs["power_group_cap_w"][0]) == cap
    assert math.isnan(float(obs["power_group_cap_w"][1]))  # none
    env.close()


WORK = str(Path(__file__).resolve().parents[1] / "lib" / "work.yaml")


def test_setpoints_and_budgets(lib):
    """The loops' setpoints and a job's budget, through the environment,
    do what aifsim.Factory's setters do (tests/lib/test_aifsim_work.c
    holds those by hand): the setpoint is in force and reported, the
    budgeted job stays at or under its budget, NaN leaves an item be."""
    env = FactoryEnv(WORK, set={"duration": "5min"}, lib=lib)
    obs, _ = env.reset()
    assert env.action_keys == ["cap_w", "load_target_w", "supply_c",
                               "service_budget_w", "job_budget_w"]
    low = env.action_space["supply_c"].low
    for _ in range(30):
        obs, *_ = env.step({})
    budget = 0.6 * float(obs["job_power_w"][0])
    obs, _, _, _, info = env.step({"supply_c": low - 1,
                                   "job_budget_w": [budget, math.nan]})
    assert info["clipped"] == ["supply_c"]
    assert np.array_equal(obs["loop_supply_c"], low)
    assert float(obs["job_budget_w"][0]) == budget
    assert math.isinf(float(obs["job_budget_w"][1]))
    for _ in range(5):
        obs, *_ = env.step({})
        assert float(obs["job_power_w"][0]) <= budget * (1 + 1e-9)
    env.close()


def test_a_new_action_slots_in(lib):
    """ACTIONS is a table: a row added (as a new Factory setter would
    be) is offered and applied like the others."""
    calls = []
    register_action(Action("test_knob", "a test's knob", lambda e: None,
                           lambda e: 0.0, lambda e: 1.0,
                           lambda f, v: calls.append(v)))
    try:
        env = FactoryEnv("quickstart", set=SHORT, lib=lib,
                         actions=["cap_w", "test_knob"])
        env.reset()
        _, _, _, _, info = env.step({"test_knob": 2.0})
        assert calls == [1.0] and info["clipped"] == ["test_knob"]
        env.close()
    finally:
        del ACTIONS["test_knob"]


def test_a_custom_reward(lib):
    env = FactoryEnv("quickstart", set=SHORT, lib=lib,
                     reward=lambda o, dt: -float(o["facility_power_w"]) * dt)
    env.reset()
    obs, r, *_ = env.step({})
    assert r == -float(obs["facility_power_w"])
    assert env.step({})[4]["reward_terms"] == {}


def test_registers_with_gymnasium_when_importable(monkeypatch):
    """A fake gymnasium module: importing aifsim.env registers
    FactoryEnv with it, subclasses its Env and uses its spaces."""
    calls = []

    class Env:
        pass

    class Box(env_module.Box):
        pass

    class Dict(env_module.Dict):
        pass

    fake = types.ModuleType("gymnasium")
    fake.Env = Env
    fake.register = lambda **kw: calls.append(kw)
    fake.spaces = types.SimpleNamespace(Box=Box, Dict=Dict)
    monkeypatch.setitem(sys.modules, "gymnasium", fake)
    try:
        mod = importlib.reload(env_module)
        assert calls == [{"id": "aifsim/Factory-v0",
                          "entry_point": "aifsim.env:FactoryEnv"}]
        assert issubclass(mod.FactoryEnv, Env)
        assert mod._space_classes() == (Box, Dict)
        assert mod.register() and len(calls) == 2   # no registry to ask
    finally:
        monkeypatch.delitem(sys.modules, "gymnasium")
        mod = importlib.reload(env_module)
    assert mod._gym is None and mod.register() is False
    assert mod.FactoryEnv.__bases__ == (object,)


def test_stand_in_spaces():
    box = env_module.Box(1.0, np.inf, shape=(3,), seed=1)
    x = box.sample()
    assert x.shape == (3,) and np.all(x >= 1) and box.contains(x)
    assert not box.contains(np.zeros(3)) and not box.contains(np.ones(2))
    assert box.contains(np.array([np.nan, 2, 3]))   # NaN: the scenario's
    d = env_module.Dict({"a": env_module.Box(0, 1), "b": box}, seed=3)
    s = d.sample()
    assert d.contains(s) and not d.contains({"a": s["a"]})
