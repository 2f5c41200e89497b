"""Drive a run from Python: a factory held open in libaifsim
(include/aifsim.h), stepped a control period at a time, with its power and
cap read and its cap set between steps, its power groups' caps and
lending and the grid's load target set as well.

    import aifsim
    f = aifsim.Factory("quickstart", set={"duration": "1h"})
    for _ in range(60):
        f.step()
        if f.power > 0.9 * f.cap:
            f.cap = 0.95 * f.cap      # in force from the next step
    f.finish()                         # the books closed, as `aifsim run`
    f.summary("cap_violation_s")
    f.close()

The library is found at `lib`, else $AIFSIM_LIB, else beside $AIFSIM_BIN,
else build/libaifsim.so in the source tree. It is loaded with ctypes from
the standard library: nothing to build here.
"""

from __future__ import annotations

import ctypes
import math
import os
from pathlib import Path

import numpy as np

from .errors import SimulationError
from .sim import SOURCE_DIR

LIBNAME = "libaifsim.so"


def find_library(lib=None):
    """The path of libaifsim: `lib`, else $AIFSIM_LIB, else beside
    $AIFSIM_BIN, else build/libaifsim.so in the source tree."""
    binary = os.environ.get("AIFSIM_BIN")
    cands = [lib, os.environ.get("AIFSIM_LIB"),
             Path(binary).parent / LIBNAME if binary else None,
             SOURCE_DIR / "build" / LIBNAME]
    for c in cands:
        if c and Path(c).is_file():
            return Path(c)
    raise SimulationError(
        "cannot find %s: build it with `make` in %s, or set AIFSIM_LIB to "
        "its path" % (LIBNAME, SOURCE_DIR))


class _Power(ctypes.Structure):
    # aifsim_power, in its order.
    _fields_ = [(name, ctypes.c_double) for name in
                ("facility_w", "it_w", "gpu_w", "cooling_w", "cap_w",
                 "loss_w", "smoothing_w", "battery_w")]


class _Grid(ctypes.Structure):
    # aifsim_grid, in its order.
    _fields_ = [(name, ctypes.c_double) for name in
                ("price_per_mwh", "carbon_g_per_kwh", "outdoor_c",
                 "dr_cap_w")]


class _PowerGroup(ctypes.Structure):
    # aifsim_power_group, in its order.
    _fields_ = [(name, ctypes.c_double) for name in
                ("cap_w", "own_w", "budget_w", "want_w", "gpu_w")]


# aifsim_unit's fields, in their order (all doubles).
UNIT_FIELDS = ("n", "lo", "hi", "demand", "cls", "priority", "weight", "c",
               "idle", "span", "activity", "gamma", "phi_min")

_POLICY_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                              ctypes.POINTER(ctypes.c_double), ctypes.c_size_t,
                              ctypes.c_double, ctypes.POINTER(ctypes.c_double))

_LIBS = {}


def _load(lib=None):
    """The library at find_library(lib), with its calls' types, loaded
    once per path."""
    path = str(find_library(lib))
    if path in _LIBS:
        return _LIBS[path]
    c = ctypes.CDLL(path)
    h, d, s = ctypes.c_void_p, ctypes.c_double, ctypes.c_size_t
    sig = {
        "aifsim_open": (ctypes.c_int, [ctypes.c_char_p,
                                       ctypes.POINTER(ctypes.c_char_p), s,
                                       ctypes.c_char_p,
                                       ctypes.POINTER(h)]),
        "aifsim_step": (ctypes.c_int, [h, ctypes.c_ulong]),
        "aifsim_run_to": (ctypes.c_int, [h, d]),
        "aifsim_time": (d, [h]),
        "aifsim_period": (d, [h]),
        "aifsim_duration": (d, [h]),
        "aifsim_at_end": (ctypes.c_int, [h]),
        "aifsim_power_now": (ctypes.c_int, [h, ctypes.POINTER(_Power)]),
        "aifsim_grid_now": (ctypes.c_int, [h, ctypes.POINTER(_Grid)]),
        "aifsim_ngroups": (s, [h]),
        "aifsim_group_name": (ctypes.c_char_p, [h, s]),
        "aifsim_group_power": (ctypes.c_int, [h, ctypes.POINTER(d), s]),
        "aifsim_set_cap": (ctypes.c_int, [h, d]),
        "aifsim_npower_groups": (s, [h]),
        "aifsim_power_group_name": (ctypes.c_char_p, [h, s]),
        "aifsim_power_group_now": (ctypes.c_int,
                                   [h, s, ctypes.POINTER(_PowerGroup)]),
        "aifsim_set_group_cap": (ctypes.c_int, [h, s, d]),
        "aifsim_set_group_lending": (ctypes.c_int,
                                     [h, s, ctypes.c_int, ctypes.c_int]),
        "aifsim_set_load_target": (ctypes.c_int, [h, d]),
        "aifsim_load_target": (d, [h]),
        "aifsim_set_policy": (ctypes.c_int, [h, _POLICY_FN, h]),
        "aifsim_finish": (ctypes.c_int, [h]),
        "aifsim_summary": (ctypes.c_int, [h, ctypes.c_char_p,
                                          ctypes.POINTER(d)]),
        "aifsim_errcode": (ctypes.c_int, [h]),
        "aifsim_errmsg": (ctypes.c_char_p, [h]),
        "aifsim_close": (None, [h]),
    }
    for name, (res, args) in sig.items():
        fn = getattr(c, name)
        fn.restype, fn.argtypes = res, args
    _LIBS[path] = c
    return c


def _scenario_path(scenario):
    """A path, or the name of a scenario in scenarios/ ("quickstart"), as
    aifsim.simulate takes it."""
    p = Path(scenario)
    if not p.suffix and len(p.parts) == 1:
        p = SOURCE_DIR / "scenarios" / (p.name + ".yaml")
    return p


class Factory:
    """A run of `scenario` (a path, or a name in scenarios/) with the
    overrides `set` ({key: value}, as ``aifsim run --set key=value``) and
    `seed` (as ``--seed``, after them), held open in libaifsim. With `out` the run is written there as ``aifsim run
    -o out`` writes it, once finish() closes the books. Raises
    SimulationError with the library's message when a call fails."""

    def __init__(self, scenario, set=None, seed=None, out=None, lib=None,
                 policy=None):
        self._c = _load(lib)
        self._h = ctypes.c_void_p()
        self._policy, self._policy_fn, self._policy_error = None, None, None
        sets = ["%s=%s" % (k, v) for k, v in (set or {}).items()]
        if seed is not None:
            sets.append("seed=%d" % seed)
        arr = (ctypes.c_char_p * max(len(sets), 1))(
            *[x.encode() for x in sets])
        rc = self._c.aifsim_open(str(_scenario_path(scenario)).encode(), arr,
                                 len(sets),
                                 str(out).encode() if out is not None else None,
                                 ctypes.byref(self._h))
        if rc != 0:
            msg = self._message()
            self.close()
            raise SimulationError(msg)
        n = self._c.aifsim_ngroups(self._h)
        self.groups = [self._c.aifsim_group_name(self._h, g).decode()
                       for g in range(n)]
        n = self._c.aifsim_npower_groups(self._h)
        self.power_groups = [
            self._c.aifsim_power_group_name(self._h, p).decode()
            for p in range(n)]
        self.period = self._c.aifsim_period(self._h)
        self.duration = self._c.aifsim_duration(self._h)
        self.finished = False
        if policy is not None:
            self.policy = policy

    def _message(self):
        if not self._h:
            return "libaifsim: out of memory"
        return self._c.aifsim_errmsg(self._h).decode(errors="replace")

    def _check(self, rc):
        if self._policy_error is not None:
            err, self._policy_error = self._policy_error, None
            raise SimulationError("the policy raised %r" % err) from err
        if rc != 0:
            raise SimulationError(self._message())

    def _open(self):
        if not self._h:
            raise SimulationError("the factory is closed")
        return self._h

    def step(self, n=1):
        """Runs n control periods (as many as are left); returns the time
        now, s."""
        self._check(self._c.aifsim_step(self._open(), int(n)))
        return self.time

    def run_to(self, t_s):
        """Runs to t_s seconds from the start (every event up to it)."""
        self._check(self._c.aifsim_run_to(self._open(), float(t_s)))
        return self.time

    @property
    def time(self):
        """Seconds from the start."""
        return self._c.aifsim_time(self._open())

    @property
    def at_end(self):
        """Whether the run has reached its duration."""
        return bool(self._c.aifsim_at_end(self._open()))

    def _power_now(self):
        p = _Power()
        self._check(self._c.aifsim_power_now(self._open(), ctypes.byref(p)))
        return p

    def observe(self):
        """The period that starts now: a dict of the time (s), the
        facility's, IT's, GPUs' and cooling's power, the cap in force, the
        power chain's losses, smoothing's draw beyond the racks' load and
        the battery's delivery (negative: charging), all W; each rack
        group's power (W, a numpy array in the order of .groups); and the
        grid over the period: its price ($/MWh), carbon intensity
        (gCO2/kWh) and outdoor temperature (degC), NaN where the scenario
        gives none, the cap demand response holds the facility to (W),
        and the grid's load target (W, NaN: none); and per power group
        (numpy arrays in the order of .power_groups, power_group_*): its
        cap (NaN: none), own budget, budget after borrowing and lending,
        its GPUs' demand and their power, W."""
        p = self._power_now()
        g = _Grid()
        self._check(self._c.aifsim_grid_now(self._h, ctypes.byref(g)))
        w = np.zeros(len(self.groups))
        self._check(self._c.aifsim_group_power(
            self._h, w.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
            len(self.groups)))
        pg = [self.power_group(p) for p in range(len(self.power_groups))]
        col = {k: np.array([g[k] for g in pg])
               for k in ("cap_w", "own_w", "budget_w", "want_w", "gpu_w")}
        return {"time_s": self.time, "facility_power_w": p.facility_w,
                "it_power_w": p.it_w, "gpu_power_w": p.gpu_w,
                "cooling_power_w": p.cooling_w, "cap_w": p.cap_w,
                "loss_power_w": p.loss_w, "smoothing_power_w": p.smoothing_w,
                "battery_power_w": p.battery_w, "group_power_w": w,
                "price_per_mwh": g.price_per_mwh,
                "carbon_g_per_kwh": g.carbon_g_per_kwh,
                "outdoor_c": g.outdoor_c, "dr_cap_w": g.dr_cap_w,
                "load_target_w": self.load_target,
                "power_group_cap_w": col["cap_w"],
                "power_group_own_w": col["own_w"],
                "power_group_budget_w": col["budget_w"],
                "power_group_want_w": col["want_w"],
                "power_group_gpu_power_w": col["gpu_w"]}

    @property
    def power(self):
        """The facility's power at the grid over the period that starts
        now, W."""
        return self._power_now().facility_w

    @property
    def cap(self):
        """The facility cap in force over the period that starts now, W.
        Setting it holds the factory to a new cap from the next step's
        tick on (0 < cap <= the scenario's power.cap; None or NaN gives the
        scenario's back); demand response and feed faults still lower
        it."""
        return self._power_now().cap_w

    @cap.setter
    def cap(self, cap_w):
        v = math.nan if cap_w is None else float(cap_w)
        self._check(self._c.aifsim_set_cap(self._open(), v))

    def _group_index(self, group):
        """A power group's index from its name or index."""
        if isinstance(group, str):
            if group not in self.power_groups:
                raise SimulationError(
                    "no power group is called %r (the scenario has %s)"
                    % (group, ", ".join(self.power_groups) or "none"))
            return self.power_groups.index(group)
        return int(group)

    def power_group(self, group):
        """Power group `group` (its name or index) at the last
        allocation: a dict of its cap in force (NaN: none), its own
        budget, its budget after borrowing and lending, its GPUs' demand
        within their ranges and their power, all W."""
        g = _PowerGroup()
        self._check(self._c.aifsim_power_group_now(
            self._open(), self._group_index(group), ctypes.byref(g)))
        return {"cap_w": g.cap_w, "own_w": g.own_w, "budget_w": g.budget_w,
                "want_w": g.want_w, "gpu_w": g.gpu_w}

    def set_group_cap(self, group, cap_w):
        """Power group `group`'s cap from the next step's tick on, W (> 0;
        math.inf: none; None or NaN: the scenario's again)."""
        v = math.nan if cap_w is None else float(cap_w)
        self._check(self._c.aifsim_set_group_cap(
            self._open(), self._group_index(group), v))

    def set_group_lending(self, group, borrow=True, lend=True):
        """Whether power group `group` borrows and lends, from the next
        step's tick on."""
        self._check(self._c.aifsim_set_group_lending(
            self._open(), self._group_index(group), int(bool(borrow)),
            int(bool(lend))))

    @property
    def load_target(self):
        """The grid's load target over the period that starts now, W (NaN:
        none). Setting it holds the facility under it, as under the cap,
        from the next step's tick on (> 0; math.inf: none; None or NaN:
        the scenario's power.load_target again)."""
        return self._c.aifsim_load_target(self._open())

    @load_target.setter
    def load_target(self, target_w):
        v = math.nan if target_w is None else float(target_w)
        self._check(self._c.aifsim_set_load_target(self._open(), v))

    @property
    def policy(self):
        """The power policy written in Python (None: the scenario's
        power.policy): a callable policy(units, budget_w) -> caps
        (aifsim.policies), called every allocation for each rack group's
        budget, from the next step's tick on. An exception it raises stops
        the run and is raised again by the step."""
        return self._policy

    @policy.setter
    def policy(self, fn):
        def call(ctx, units, n, budget_w, cap):
            try:
                rows = np.ctypeslib.as_array(units, shape=(n, len(UNIT_FIELDS)))
                u = {k: rows[:, i] for i, k in enumerate(UNIT_FIELDS)}
                out = np.ctypeslib.as_array(cap, shape=(n,))
                out[:] = np.asarray(fn(u, budget_w), dtype=float)
                return 0
            except Exception as e:  # noqa: BLE001: raised again by step
                self._policy_error = e
                return -1
        cb = _POLICY_FN(call) if fn is not None else _POLICY_FN()
        self._check(self._c.aifsim_set_policy(self._open(), cb, None))
        self._policy, self._policy_fn = fn, cb

    def finish(self):
        """Runs to the end, closes the books (the invariants `aifsim run`
        checks) and writes the file, if there is one."""
        self._check(self._c.aifsim_finish(self._open()))
        self.finished = True

    def summary(self, key):
        """A /summary figure of the finished run by key (docs/OUTPUT.md);
        NaN where the run cannot give it."""
        v = ctypes.c_double()
        self._check(self._c.aifsim_summary(self._open(), key.encode(),
                                           ctypes.byref(v)))
        return v.value

    def close(self):
        """Frees the run; one not finished leaves no file."""
        if self._h:
            self._c.aifsim_close(self._h)
            self._h = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_h", None):
            self.close()
