"""Drive a run from Python: a factory held open in libaifsim
(include/aifsim.h), stepped a control period at a time, with its power and
cap read and its cap set between steps, its power groups' caps and
lending and the grid's load target set as well; its services', jobs',
GPUs', cooling loops' and battery's state read, and a cap series, job and
service budgets, held jobs and loop setpoints set.

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


class _ItParts(ctypes.Structure):
    # aifsim_it_parts, in its order.
    _fields_ = [(name, ctypes.c_double) for name in
                ("psu_loss_w", "fan_w", "outside_racks_w")]


class _Service(ctypes.Structure):
    # aifsim_service, in its order.
    _fields_ = [(name, ctypes.c_double) for name in
                ("power_w", "gpus", "budget_w", "queued", "in_batch",
                 "ended", "slo_attainment")]


class _Job(ctypes.Structure):
    # aifsim_job, in its order.
    _fields_ = [("phase", ctypes.c_int), ("held", ctypes.c_int)] + [
        (name, ctypes.c_double) for name in ("gpus", "power_w", "budget_w")]


class _Queue(ctypes.Structure):
    # aifsim_queue, in its order.
    _fields_ = [(name, ctypes.c_double) for name in
                ("jobs_waiting", "jobs_held", "jobs_running",
                 "requests_queued")]


class _Gpus(ctypes.Structure):
    # aifsim_gpus, in its order.
    _fields_ = [(name, ctypes.c_double) for name in
                ("n", "cap_mean_w", "cap_min_w", "cap_max_w", "clock_mean",
                 "clock_min", "power_w")]


class _Loop(ctypes.Structure):
    # aifsim_loop, in its order.
    _fields_ = [(name, ctypes.c_double) for name in
                ("temp_c", "supply_c", "supply_min_c", "supply_max_c",
                 "heat_w", "power_w")]


class _Options(ctypes.Structure):
    # aifsim_options, in its order: what aifsim_open_opts takes.
    _fields_ = [("keep_partial", ctypes.c_int), ("stop", ctypes.c_void_p),
                ("sweep_point", ctypes.c_longlong),
                ("threads", ctypes.c_uint)]


# A job's phase (aifsim_job.phase: AIFSIM_JOB_*), by its number.
JOB_PHASES = ("coming", "waiting", "running", "done")

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
        "aifsim_open_opts": (ctypes.c_int, [ctypes.c_char_p,
                                            ctypes.POINTER(ctypes.c_char_p),
                                            s, ctypes.c_char_p,
                                            ctypes.POINTER(_Options),
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
        "aifsim_nservices": (s, [h]),
        "aifsim_service_name": (ctypes.c_char_p, [h, s]),
        "aifsim_njobs": (s, [h]),
        "aifsim_job_name": (ctypes.c_char_p, [h, s]),
        "aifsim_service_now": (ctypes.c_int, [h, s, ctypes.POINTER(_Service)]),
        "aifsim_job_now": (ctypes.c_int, [h, s, ctypes.POINTER(_Job)]),
        "aifsim_queue_now": (ctypes.c_int, [h, ctypes.POINTER(_Queue)]),
        "aifsim_group_gpus": (ctypes.c_int, [h, s, ctypes.POINTER(_Gpus)]),
        "aifsim_ngpus": (s, [h]),
        "aifsim_gpu_caps": (ctypes.c_int, [h, ctypes.POINTER(d),
                                           ctypes.POINTER(d), s]),
        "aifsim_nloops": (s, [h]),
        "aifsim_loop_name": (ctypes.c_char_p, [h, s]),
        "aifsim_loop_now": (ctypes.c_int, [h, s, ctypes.POINTER(_Loop)]),
        "aifsim_battery_soc": (d, [h]),
        "aifsim_it_parts_now": (ctypes.c_int, [h, ctypes.POINTER(_ItParts)]),
        "aifsim_set_cap_series": (ctypes.c_int, [h, ctypes.POINTER(d),
                                                 ctypes.POINTER(d), s]),
        "aifsim_set_service_budget": (ctypes.c_int, [h, s, d]),
        "aifsim_set_job_budget": (ctypes.c_int, [h, s, d]),
        "aifsim_hold_job": (ctypes.c_int, [h, s, ctypes.c_int]),
        "aifsim_set_supply": (ctypes.c_int, [h, s, d]),
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


def _threads(threads):
    """aifsim_options' threads for Factory's `threads`: 0 for None."""
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, int) or \
            not 1 <= threads <= 1024:
        raise SimulationError("threads must be a whole number from 1 to "
                              "1024, not %r" % (threads,))
    return threads


class Factory:
    """A run of `scenario` (a path, or a name in scenarios/) with the
    overrides `set` ({key: value}, as ``aifsim run --set key=value``) and
    `seed` (as ``--seed``, after them), held open in libaifsim. With `out` the run is written there as ``aifsim run
    -o out`` writes it, once finish() closes the books. `threads` (a
    whole number from 1; None: the library's default) runs the services'
    requests on that many threads, as ``aifsim run --threads``: how the
    run is executed, never what it computes. Raises SimulationError with
    the library's message when a call fails."""

    def __init__(self, scenario, set=None, seed=None, out=None, lib=None,
                 policy=None, threads=None):
        self._c = _load(lib)
        self._h = ctypes.c_void_p()
        self._policy, self._policy_fn, self._policy_error = None, None, None
        sets = ["%s=%s" % (k, v) for k, v in (set or {}).items()]
        if seed is not None:
            sets.append("seed=%d" % seed)
        arr = (ctypes.c_char_p * max(len(sets), 1))(
            *[x.encode() for x in sets])
        # Zeroed but for sweep_point -1 (none), the options are
        # aifsim_open's; a threads of 0 is the library's default.
        opts = _Options(sweep_point=-1, threads=_threads(threads))
        rc = self._c.aifsim_open_opts(
            str(_scenario_path(scenario)).encode(), arr, len(sets),
            str(out).encode() if out is not None else None,
            ctypes.byref(opts), ctypes.byref(self._h))
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
        self.services = self._names("aifsim_nservices", "aifsim_service_name")
        self.jobs = self._names("aifsim_njobs", "aifsim_job_name")
        self.loops = self._names("aifsim_nloops", "aifsim_loop_name")
        self.period = self._c.aifsim_period(self._h)
        self.duration = self._c.aifsim_duration(self._h)
        self.finished = False
        if policy is not None:
            self.policy = policy

    def _names(self, count, name):
        n = getattr(self._c, count)(self._h)
        return [getattr(self._c, name)(self._h, k).decode() for k in range(n)]

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

    def observe(self, wide=True):
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
        its GPUs' demand and their power, W.

        Then numpy arrays in the order of .services (service_*: its
        GPUs' power_w, its gpus, its budget_w (inf: none), requests
        queued and in_batch now, requests ended so far and the
        slo_attainment of those, NaN while none has ended), of .jobs
        (job_phase: an index into JOB_PHASES; job_held; job_gpus asked
        for; job_power_w; job_budget_w, inf: none), of .groups
        (group_gpu_*: n, cap_mean_w, cap_min_w, cap_max_w, clock_mean and
        clock_min as shares of the full clock, power_w: per rack group,
        not per GPU; gpu_caps() gives every GPU's) and of .loops (loop_*:
        temp_c, supply_c and the range the plant allows it, supply_min_c
        and supply_max_c, degC; heat_w and power_w over the last plant
        step, W); the queues (jobs_waiting, held ones included,
        jobs_held, jobs_running, requests_queued over the services);
        battery_soc ([0, 1], NaN: no battery); and inside the IT, the
        racks' psu_loss_power_w and fan_power_w and the
        outside_racks_power_w of models outside them (the fabric), W. wide=False leaves these
        out: they read every GPU (about 1.5 ms at 10,000 GPUs, against
        tens of microseconds for the rest)."""
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
                "power_group_gpu_power_w": col["gpu_w"],
                **(self._observe_work() if wide else {})}

    def _observe_work(self):
        """observe()'s keys for the workloads, the GPUs, the loops and the
        battery."""
        obs = {}
        sv = [self.service(k) for k in range(len(self.services))]
        for k in _Service._fields_:
            obs["service_" + k[0]] = np.array([s[k[0]] for s in sv], float)
        jb = [self.job(j) for j in range(len(self.jobs))]
        obs["job_phase"] = np.array(
            [JOB_PHASES.index(j["phase"]) for j in jb], dtype=np.int64)
        obs["job_held"] = np.array([j["held"] for j in jb], dtype=bool)
        for k in ("gpus", "power_w", "budget_w"):
            obs["job_" + k] = np.array([j[k] for j in jb], float)
        obs.update(self.queue())
        gp = [self.gpus(g) for g in range(len(self.groups))]
        for k, _ in _Gpus._fields_:
            obs["group_gpu_" + k] = np.array([g[k] for g in gp], float)
        lp = [self.loop(l) for l in range(len(self.loops))]
        for k, _ in _Loop._fields_:
            obs["loop_" + k] = np.array([x[k] for x in lp], float)
        obs["battery_soc"] = self.battery_soc
        it = _ItParts()
        self._check(self._c.aifsim_it_parts_now(self._h, ctypes.byref(it)))
        obs["psu_loss_power_w"] = it.psu_loss_w
        obs["fan_power_w"] = it.fan_w
        obs["outside_racks_power_w"] = it.outside_racks_w
        return obs

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

    def _index(self, names, what, item):
        """An index into `names` from a name or an index."""
        if isinstance(item, str):
            if item not in names:
                raise SimulationError(
                    "no %s is called %r (the scenario has %s)"
                    % (what, item, ", ".join(names) or "none"))
            return names.index(item)
        return int(item)

    def service(self, service):
        """Service `service` (its name or index) now: a dict of its GPUs'
        power_w, its gpus, its budget_w (inf: none), requests queued and
        in_batch, requests ended so far and their slo_attainment (NaN
        while none has ended)."""
        s = _Service()
        self._check(self._c.aifsim_service_now(
            self._open(), self._index(self.services, "service", service),
            ctypes.byref(s)))
        return {k: getattr(s, k) for k, _ in _Service._fields_}

    def job(self, job):
        """Job `job` (its name or index) now: a dict of its phase (one of
        JOB_PHASES), whether the client holds it, the gpus it asks for,
        its GPUs' power_w (0 unless running) and its budget_w (inf:
        none)."""
        j = _Job()
        self._check(self._c.aifsim_job_now(
            self._open(), self._index(self.jobs, "job", job), ctypes.byref(j)))
        return {"phase": JOB_PHASES[j.phase], "held": bool(j.held),
                "gpus": j.gpus, "power_w": j.power_w, "budget_w": j.budget_w}

    def queue(self):
        """The queues now: jobs_waiting (held ones included), jobs_held,
        jobs_running, and requests_queued over every service."""
        q = _Queue()
        self._check(self._c.aifsim_queue_now(self._open(), ctypes.byref(q)))
        return {k: getattr(q, k) for k, _ in _Queue._fields_}

    def gpus(self, group):
        """Rack group `group`'s GPUs (its name or index) now: a dict of n,
        their caps in force (cap_mean_w, cap_min_w, cap_max_w), their
        clocks as shares of the full clock (clock_mean, clock_min) and
        their power_w."""
        g = _Gpus()
        self._check(self._c.aifsim_group_gpus(
            self._open(), self._index(self.groups, "rack group", group),
            ctypes.byref(g)))
        return {k: getattr(g, k) for k, _ in _Gpus._fields_}

    def gpu_caps(self):
        """Every GPU's cap in force (W) and clock share, two numpy arrays
        in the fleet's order (rack group by rack group)."""
        n = self._c.aifsim_ngpus(self._open())
        cap, clock = np.zeros(n), np.zeros(n)
        ptr = ctypes.POINTER(ctypes.c_double)
        self._check(self._c.aifsim_gpu_caps(
            self._h, cap.ctypes.data_as(ptr), clock.ctypes.data_as(ptr), n))
        return cap, clock

    def loop(self, loop):
        """Cooling loop `loop` (its name or index) now: a dict of its
        temp_c, its supply setpoint supply_c and the range the plant
        allows it (supply_min_c, supply_max_c), degC, and the heat_w it
        removes and its cooling power_w over the last plant step, W."""
        x = _Loop()
        self._check(self._c.aifsim_loop_now(
            self._open(), self._index(self.loops, "cooling loop", loop),
            ctypes.byref(x)))
        return {k: getattr(x, k) for k, _ in _Loop._fields_}

    @property
    def battery_soc(self):
        """The battery's state of charge now, [0, 1]; NaN without one."""
        return self._c.aifsim_battery_soc(self._open())

    def set_cap_series(self, times_s, caps_w):
        """The facility cap as steps: caps_w[i] (W; None or NaN: the
        scenario's) from times_s[i] (s from the start, increasing, none
        before now) until the next, each in force from the first tick at
        or after its time. Replaces the steps of an earlier series not yet
        in force; setting .cap does too. Empty lists: no steps."""
        t = np.ascontiguousarray(times_s, dtype=float)
        c = np.ascontiguousarray(
            [math.nan if x is None else x for x in caps_w], dtype=float)
        if t.shape != c.shape or t.ndim != 1:
            raise SimulationError("set_cap_series: as many times as caps, "
                                  "in two lists")
        ptr = ctypes.POINTER(ctypes.c_double)
        self._check(self._c.aifsim_set_cap_series(
            self._open(), t.ctypes.data_as(ptr), c.ctypes.data_as(ptr),
            len(t)))

    def set_service_budget(self, service, budget_w):
        """A budget on service `service`'s GPUs' caps, W, from the next
        allocation on: its power stays at or under it (at least its GPUs'
        minimum caps; None, NaN or math.inf: none)."""
        v = math.inf if budget_w is None else float(budget_w)
        self._check(self._c.aifsim_set_service_budget(
            self._open(), self._index(self.services, "service", service), v))

    def set_job_budget(self, job, budget_w):
        """A budget on job `job`'s GPUs' caps, W, as set_service_budget."""
        v = math.inf if budget_w is None else float(budget_w)
        self._check(self._c.aifsim_set_job_budget(
            self._open(), self._index(self.jobs, "job", job), v))

    def hold_job(self, job, hold=True):
        """Holds job `job` (its name or index) back: it does not start,
        though it arrives and is counted as waiting. Only a job not
        started can be held."""
        self._check(self._c.aifsim_hold_job(
            self._open(), self._index(self.jobs, "job", job), int(bool(hold))))

    def release_job(self, job):
        """Releases a held job: it is queued again with its arrival time
        and starts when it fits, in the queue's order (a pass runs at
        once)."""
        self.hold_job(job, False)

    def set_supply(self, loop, supply_c):
        """Cooling loop `loop`'s supply setpoint, degC, from the next
        step on, within the range loop() gives."""
        self._check(self._c.aifsim_set_supply(
            self._open(), self._index(self.loops, "cooling loop", loop),
            float(supply_c)))

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
