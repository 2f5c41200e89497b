"""A factory as a reinforcement-learning environment, with the Gymnasium
API: aifsim.FactoryEnv.

    import aifsim
    env = aifsim.FactoryEnv("quickstart", set={"duration": "1h"})
    obs, info = env.reset(seed=1)
    done = False
    while not done:
        action = {"cap_w": 0.9 * obs["cap_w"]}      # any subset of the keys
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    info["summary"]["energy_mwh"]                     # the run's books
    env.close()

An episode is one run of the scenario through libaifsim (aifsim.Factory);
a step is one control period (or `periods` of them) of it.

Observation: a dict of every number aifsim.Factory.observe() gives (the
period that starts now: the facility's power and its parts, the cap in
force, the load target, the grid's signals, each rack group's and power
group's figures; their units are in the key, W, s, $/MWh, gCO2/kWh,
degC), each a float64 array: shape () for a scalar, (n,) for a per-group
figure. The space is built from the first observation, so keys the
binding gains appear here unchanged.

Action: a dict, any subset of the keys of ACTIONS (below; `actions`
chooses which the space offers), each applied before the step and in
force from the tick the step ends on, as aifsim.Factory's setters are. A
key left out changes nothing; NaN gives the scenario's value back. With
clip=True (the default) a value outside its range is clipped into it and
named in info["clipped"]; with clip=False the library refuses it
(SimulationError).

Reward, per step (`reward=` chooses the weights, or a callable): each
term of REWARD_TERMS summed over the periods the step ran, weighted:

    reward = sum_k weight_k * term_k

The default weights, {"gpu_energy_mj": 1, "over_limit_mj": -10}, pay for
the energy the GPUs turn into work (the GPUs' power tracks the work done
under a power cap, while the facility's overhead does not) and charge ten
times over for the energy above the limit in force (the lower of the cap
and the load target). Terms are evaluated on the power each period runs
at, which the action chose: the observation returned by the step is
that period's. A callable reward(obs, period_s) -> float is called once
a period in place of the weights.

With Gymnasium importable, FactoryEnv is a gymnasium.Env, its spaces
gymnasium.spaces, and importing this module registers it as
"aifsim/Factory-v0" (gymnasium.make("aifsim/Factory-v0",
scenario="quickstart")). Without it (Debian has no package) the spaces
are the small stand-ins Box and Dict below, with the same sample() and
contains().
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .errors import SimulationError
from .factory import Factory

try:  # pragma: no cover - Gymnasium is not on Debian
    import gymnasium as _gym
except ImportError:
    _gym = None

ENV_ID = "aifsim/Factory-v0"


# ---------------------------------------------------------------- spaces
class Box:
    """A stand-in for gymnasium.spaces.Box: float64 arrays of `shape`
    with each element in [low, high] (NaN is allowed: an action's
    'the scenario's again')."""

    def __init__(self, low, high, shape=(), dtype=np.float64, seed=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, self.dtype), self.shape)
        self.high = np.broadcast_to(np.asarray(high, self.dtype), self.shape)
        self._rng = np.random.default_rng(seed)

    def seed(self, seed=None):
        self._rng = np.random.default_rng(seed)

    def sample(self):
        """Uniform in [low, high] where both are finite; else drawn
        around the finite bound (or 0) on a unit scale."""
        lo = np.where(np.isfinite(self.low), self.low, np.nan)
        hi = np.where(np.isfinite(self.high), self.high, np.nan)
        u = self._rng.random(self.shape)
        both = lo + u * (hi - lo)
        only_lo = lo + self._rng.exponential(size=self.shape)
        only_hi = hi - self._rng.exponential(size=self.shape)
        free = self._rng.normal(size=self.shape)
        out = np.where(np.isnan(lo), np.where(np.isnan(hi), free, only_hi),
                       np.where(np.isnan(hi), only_lo, both))
        return np.asarray(out, self.dtype)

    def contains(self, x):
        x = np.asarray(x, dtype=self.dtype)
        if x.shape != self.shape:
            return False
        ok = np.isnan(x) | ((x >= self.low) & (x <= self.high))
        return bool(np.all(ok))

    __contains__ = contains

    def __repr__(self):
        return "Box(%s, %s, %s)" % (self.low.min(initial=np.inf),
                                    self.high.max(initial=-np.inf),
                                    self.shape)


class Dict:
    """A stand-in for gymnasium.spaces.Dict: a dict of named spaces."""

    def __init__(self, spaces, seed=None):
        self.spaces = dict(spaces)
        if seed is not None:
            self.seed(seed)

    def seed(self, seed=None):
        for i, s in enumerate(self.spaces.values()):
            s.seed(None if seed is None else seed + i)

    def sample(self):
        return {k: s.sample() for k, s in self.spaces.items()}

    def contains(self, x):
        return (isinstance(x, dict) and x.keys() == self.spaces.keys()
                and all(s.contains(x[k]) for k, s in self.spaces.items()))

    __contains__ = contains

    def __getitem__(self, key):
        return self.spaces[key]

    def keys(self):
        return self.spaces.keys()

    def __repr__(self):
        return "Dict(%s)" % ", ".join("%s: %r" % kv
                                      for kv in self.spaces.items())


def _space_classes():
    """Gymnasium's Box and Dict when it is importable (and whole), else
    the stand-ins above."""
    spaces = getattr(_gym, "spaces", None)
    if spaces is not None and hasattr(spaces, "Box") and \
            hasattr(spaces, "Dict"):
        return spaces.Box, spaces.Dict
    return Box, Dict


# --------------------------------------------------------------- actions
@dataclass(frozen=True)
class Action:
    """One action: its key, how many values it takes in an environment
    (None: a scalar; an action of 0 values is not offered), their range there (functions of the FactoryEnv), and
    how it is applied to the episode's aifsim.Factory."""
    key: str
    doc: str
    size: Callable[["FactoryEnv"], int]
    low: Callable[["FactoryEnv"], float]
    high: Callable[["FactoryEnv"], float]
    apply: Callable[[Factory, np.ndarray], None]


def _set_group_caps(f, caps):
    for p, cap in enumerate(np.atleast_1d(caps)):
        f.set_group_cap(p, float(cap))


def _each(setter, values):
    """Applies a per-item setter to each value; NaN leaves that item as
    it is."""
    for i, v in enumerate(np.atleast_1d(values)):
        if not math.isnan(float(v)):
            setter(i, float(v))


def _loop_range(env, bound):
    """The loops' supply bounds, an array in loop order (the plant's own
    range, which does not change during a run)."""
    return np.array([env.factory.loop(i)[bound]
                     for i in range(len(env.factory.loops))], float)


# The actions, by key, in the order the action space lists them. A new
# setter of aifsim.Factory slots in as one more row (or through
# register_action); FactoryEnv(actions=...) picks among them.
ACTIONS = {a.key: a for a in (
    Action("cap_w", "the facility cap, W, in (0, the scenario's power.cap]",
           lambda e: None, lambda e: 1.0, lambda e: e.scenario_cap_w,
           lambda f, v: setattr(f, "cap", float(v))),
    Action("load_target_w", "the grid's load target, W (> 0; inf: none)",
           lambda e: None, lambda e: 1.0, lambda e: math.inf,
           lambda f, v: setattr(f, "load_target", float(v))),
    Action("power_group_cap_w", "each power group's cap, W, in the order "
           "of Factory.power_groups (> 0; inf: none)",
           lambda e: len(e.factory.power_groups), lambda e: 1.0,
           lambda e: math.inf,
           _set_group_caps),
    Action("supply_c", "each cooling loop's supply setpoint, degC, in the "
           "order of Factory.loops, within the range Factory.loop() gives",
           lambda e: len(e.factory.loops),
           lambda e: _loop_range(e, "supply_min_c"),
           lambda e: _loop_range(e, "supply_max_c"),
           lambda f, v: _each(f.set_supply, v)),
    Action("service_budget_w", "a power budget on each service's GPUs, W, "
           "in the order of Factory.services (inf: none); one below the "
           "GPUs' minimum caps is refused",
           lambda e: len(e.factory.services), lambda e: 0.0,
           lambda e: math.inf,
           lambda f, v: _each(f.set_service_budget, v)),
    Action("job_budget_w", "a power budget on each job's GPUs, W, in the "
           "order of Factory.jobs (inf: none); as service_budget_w",
           lambda e: len(e.factory.jobs), lambda e: 0.0, lambda e: math.inf,
           lambda f, v: _each(f.set_job_budget, v)),
)}


def register_action(action):
    """Adds (or replaces) an action row of ACTIONS."""
    ACTIONS[action.key] = action


# ---------------------------------------------------------------- reward
def _limit_w(obs):
    target = float(obs["load_target_w"])
    cap = float(obs["cap_w"])
    return min(cap, target) if not math.isnan(target) else cap


# Reward terms, per period of period_s seconds, from the observation of
# that period (the power it runs at).
REWARD_TERMS = {
    "gpu_energy_mj": lambda o, dt: float(o["gpu_power_w"]) * dt / 1e6,
    "it_energy_mj": lambda o, dt: float(o["it_power_w"]) * dt / 1e6,
    "facility_energy_mj":
        lambda o, dt: float(o["facility_power_w"]) * dt / 1e6,
    "over_limit_mj": lambda o, dt: max(
        0.0, float(o["facility_power_w"]) - _limit_w(o)) * dt / 1e6,
    "over_limit_s": lambda o, dt: dt if float(o["facility_power_w"]) >
        _limit_w(o) * (1 + 1e-9) else 0.0,
    "cost": lambda o, dt: (float(o["price_per_mwh"]) * float(
        o["facility_power_w"]) * dt / 3.6e9
        if not math.isnan(float(o["price_per_mwh"])) else 0.0),
}

DEFAULT_REWARD = {"gpu_energy_mj": 1.0, "over_limit_mj": -10.0}

# The run's books put in info["summary"] when an episode ends
# (docs/OUTPUT.md).
SUMMARY_KEYS = ("energy_mwh", "gpu_energy_mwh", "mean_power_w",
                "cap_violation_s", "cap_violation_j", "tokens",
                "tokens_per_joule", "slo_attainment", "load_target_over_s",
                "load_target_over_mwh", "training_tokens")


def _summary(f):
    """SUMMARY_KEYS the finished run's /summary has."""
    out = {}
    for k in SUMMARY_KEYS:
        try:
            out[k] = f.summary(k)
        except SimulationError:   # a key this run's books do not hold
            pass
    return out


def _base():
    env = getattr(_gym, "Env", None)
    return env if isinstance(env, type) else object


class FactoryEnv(_base()):
    """`scenario` (a path, or a name in scenarios/) with overrides `set`
    and `seed` as aifsim.Factory takes them, as an environment.

    periods: control periods a step runs (1: every period).
    actions: the keys of ACTIONS the action space offers (default all;
        power_group_cap_w only where the scenario has power groups).
    reward: weights of REWARD_TERMS, or a callable(obs, period_s).
    max_steps: steps after which an episode is truncated (None: the run's
        end terminates it).
    clip: clip actions into their ranges (True) or let the library
        refuse them (False).
    out: a path each episode's run is written to, as `aifsim run -o`.
    """

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, scenario="quickstart", set=None, seed=None,
                 periods=1, actions=None, reward=None, max_steps=None,
                 clip=True, out=None, lib=None):
        if int(periods) < 1:
            raise SimulationError("periods must be 1 or more, not %r"
                                  % periods)
        self.scenario, self.set, self.seed = scenario, dict(set or {}), seed
        self.periods, self.max_steps, self.clip = int(periods), max_steps, clip
        self.out, self.lib = out, lib
        self.reward_weights = None if callable(reward) else \
            dict(DEFAULT_REWARD if reward is None else reward)
        self.reward_fn = reward if callable(reward) else None
        for k in self.reward_weights or {}:
            if k not in REWARD_TERMS:
                raise SimulationError("no reward term %r (terms: %s)"
                                      % (k, ", ".join(REWARD_TERMS)))
        unknown = [k for k in (actions or ()) if k not in ACTIONS]
        if unknown:
            raise SimulationError("no action %r (actions: %s)"
                                  % (unknown[0], ", ".join(ACTIONS)))
        self._asked = list(actions) if actions is not None else None
        self._rng = None
        self.factory = None
        self._open(self.seed, {})   # the spaces need a factory
        self._make_spaces()

    # The episode's factory.
    def _open(self, seed, extra):
        if self.factory is not None:
            self.factory.close()
        sets = dict(self.set, **extra)
        self.factory = Factory(self.scenario, set=sets, seed=seed,
                               out=self.out, lib=self.lib)
        self._steps = 0
        self._obs = self._observe()
        # The cap at t = 0 is the scenario's power.cap, unless a
        # demand-response event is already under way: then dr_cap_w is.
        self.scenario_cap_w = max(float(self._obs["cap_w"]),
                                  float(self._obs["dr_cap_w"]))
        return self._obs

    def _observe(self):
        return {k: np.asarray(v, dtype=np.float64)
                for k, v in self.factory.observe().items()
                if np.asarray(v).dtype.kind in "fiub"}

    def _make_spaces(self):
        box, dct = _space_classes()
        e = self
        self.observation_space = dct({
            k: box(-np.inf, np.inf, shape=v.shape, dtype=np.float64)
            for k, v in self._obs.items()})
        keys = self._asked if self._asked is not None else list(ACTIONS)
        shapes = {k: () if ACTIONS[k].size(e) is None else
                  (ACTIONS[k].size(e),) for k in keys}
        self.action_keys = [k for k in keys if shapes[k] != (0,)]
        self.action_space = dct({
            k: box(ACTIONS[k].low(e), ACTIONS[k].high(e), shape=shapes[k],
                   dtype=np.float64) for k in self.action_keys})

    def reset(self, seed=None, options=None):
        """A new episode: the scenario from t = 0. seed (as `aifsim run
        --seed`) makes it and the episodes after it reproducible: reset()
        without one then draws each episode's seed from it; with no seed
        ever given, every episode runs at the scenario's own seed (or the
        constructor's). options: {"set": {key: value}} overrides for
        this episode on top of the constructor's. Returns (obs, info)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            run_seed = int(seed)
        elif self._rng is not None:
            run_seed = int(self._rng.integers(0, 2**31 - 1))
        else:
            run_seed = self.seed
        extra = dict((options or {}).get("set", {}))
        obs = self._open(run_seed, extra)
        return obs, {"time_s": self.factory.time, "seed": run_seed}

    def _apply(self, action):
        clipped = []
        for k, v in (action or {}).items():
            if k not in self.action_keys:
                raise SimulationError("no action %r in this environment "
                                      "(actions: %s)"
                                      % (k, ", ".join(self.action_keys)))
            space = self.action_space[k]
            v = np.asarray(v, dtype=np.float64).reshape(space.shape)
            if self.clip:
                c = np.clip(v, space.low, space.high)   # NaN stays NaN
                if not np.array_equal(c, v, equal_nan=True):
                    clipped.append(k)
                v = c
            ACTIONS[k].apply(self.factory, v if v.shape else float(v))
        return clipped

    def _reward(self, obs, dt):
        if self.reward_fn is not None:
            return float(self.reward_fn(obs, dt))
        return sum(w * REWARD_TERMS[k](obs, dt)
                   for k, w in self.reward_weights.items())

    def step(self, action):
        """Applies `action`, runs `periods` control periods and returns
        (obs, reward, terminated, truncated, info): terminated when the
        run reaches its end (its books are then closed: info["summary"]
        holds SUMMARY_KEYS), truncated after max_steps steps."""
        f = self.factory
        if f is None or f.finished:
            raise SimulationError("step() after the episode ended: call "
                                  "reset()")
        clipped = self._apply(action)
        obs, reward = self._obs, 0.0
        terms = dict.fromkeys(self.reward_weights or {}, 0.0)
        for _ in range(self.periods):
            if f.at_end:
                break
            f.step()
            obs = self._observe()
            if f.time < f.duration:   # a period of the run, not after it
                reward += self._reward(obs, f.period)
                for k in terms:
                    terms[k] += REWARD_TERMS[k](obs, f.period)
        self._obs, self._steps = obs, self._steps + 1
        terminated = f.at_end
        truncated = (not terminated and self.max_steps is not None
                     and self._steps >= self.max_steps)
        info = {"time_s": f.time, "clipped": clipped, "reward_terms": terms}
        if terminated:
            f.finish()
            info["summary"] = _summary(f)
        return obs, reward, terminated, truncated, info

    def render(self):
        return None

    def close(self):
        if self.factory is not None:
            self.factory.close()
            self.factory = None


def register():
    """Registers FactoryEnv with Gymnasium as ENV_ID, once; False when
    Gymnasium is not importable."""
    if _gym is None or not hasattr(_gym, "register"):
        return False
    registry = getattr(getattr(_gym, "envs", None), "registry", None)
    if registry is not None and ENV_ID in registry:
        return True
    _gym.register(id=ENV_ID, entry_point="aifsim.env:FactoryEnv")
    return True


register()
