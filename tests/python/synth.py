"""Synthetic run files in the documented layout, with the groups the
simulator does not write yet (cooling, grid signals, loops, services, jobs),
so the readers and plots are held to them before they exist.

write_run(path, ...) writes one; the numbers are made up but consistent
(power = IT + cooling + losses, energy = integral of power).
"""

import h5py
import numpy as np

STR = h5py.string_dtype("utf-8")


def _series(g, name, values, time, units, long_name, labels=None):
    ds = g.create_dataset(name, data=np.asarray(values, dtype="f8"))
    ds.attrs["units"] = units
    ds.attrs["long_name"] = long_name
    ds.dims[0].attach_scale(time)
    if labels is not None:
        ds.dims[1].attach_scale(labels)
    return ds


def _time(g, n, dt):
    t = g.create_dataset("time", data=dt * np.arange(1, n + 1, dtype="f8"))
    t.attrs["units"] = "s"
    t.attrs["long_name"] = "simulated time at the end of the sample interval"
    t.make_scale("time")
    return t


def _curves(n, dt, full):
    """The made-up series: power = IT + cooling + losses, held under the
    cap (lowered in a demand-response window) when `full`."""
    rng = np.random.default_rng(7)
    hours = dt * np.arange(1, n + 1) / 3600.0
    gpu = 6e5 + 2e5 * np.sin(2 * np.pi * (hours - 8) / 24) \
        + 1e4 * rng.standard_normal(n)
    it = gpu + 2.5e5
    cooling = 0.12 * it if full else np.zeros(n)
    loss = 0.03 * it if full else np.zeros(n)
    power = it + cooling + loss
    cap = np.full(n, 1.3e6)
    dr = (hours > 17) & (hours <= 20)
    if full:
        cap[dr] = 0.75 * 1.3e6
        scale = np.minimum(1.0, (cap - 1.0) / power)  # the cap holds
        gpu, it, cooling, loss = (v * scale for v in (gpu, it, cooling,
                                                      loss))
        power = it + cooling + loss
    peak = power * 1.01
    if full and n > 10:
        peak[10] = cap[10] * 1.02  # one interval over the cap
    return dict(hours=hours, gpu=gpu, it=it, cooling=cooling, loss=loss,
                power=power, cap=cap, dr=dr, peak=peak)


def _header(f, n, dt, complete, format_version, name, full):
    f.attrs["format"] = "aifsim-run"  # what aifsim's run files say
    f.attrs["aifsim_version"] = "9.9.9-test"
    f.attrs["scenario_name"] = name
    f.attrs["seed"] = np.int64(3)
    f.attrs["complete"] = np.int64(complete)
    if format_version is not None:
        f.attrs["format_version"] = np.int64(format_version)
    scen = ("name: %s\ndescription: made up by tests/python/synth.py\n"
            "seed: 3\nduration: %g s\npower:\n  cap: 1.3 MW\n"
            "  policy: static\nracks:\n  - name: a\n    count: 2\n"
            "  - name: b\n    count: 1\n" % (name, n * dt))
    if full:
        scen += ("services:\n  - name: chat\n    slo:\n      ttft: 500 ms"
                 "\n      tpot: 50 ms\n  - name: code\n")
    f.create_dataset("scenario", data=scen, dtype=STR)


def _facility(f, c, n, dt, full, dr_active):
    fac = f.create_group("facility")
    t = _time(fac, n, dt)
    power, it, gpu, hours = c["power"], c["it"], c["gpu"], c["hours"]
    _series(fac, "power_w", power, t, "W", "facility power")
    _series(fac, "it_power_w", it, t, "W", "IT power")
    _series(fac, "gpu_power_w", gpu, t, "W", "GPU power")
    _series(fac, "cap_w", c["cap"], t, "W", "facility power cap")
    _series(fac, "peak_power_w", c["peak"], t, "W", "peak power")
    _series(fac, "energy_j", np.cumsum(power * dt), t, "J", "energy")
    _series(fac, "activity", gpu / 9e5, t, "1", "mean GPU activity")
    if not full:
        return
    _series(fac, "cooling_power_w", c["cooling"], t, "W", "cooling power")
    _series(fac, "loss_power_w", c["loss"], t, "W", "electrical losses")
    _series(fac, "pue", power / it, t, "1", "PUE")
    _series(fac, "outdoor_c", 15 + 8 * np.sin(
        2 * np.pi * (hours - 9) / 24), t, "degC", "outdoor temp")
    _series(fac, "carbon_g_per_kwh", 250 - 120 * np.sin(
        2 * np.pi * (hours - 7) / 24), t, "gCO2/kWh", "carbon")
    _series(fac, "price_per_mwh", 60 + 30 * np.sin(
        2 * np.pi * (hours - 12) / 24), t, "$/MWh", "price")
    _series(fac, "tokens_per_s", 5e4 + 1e4 * np.sin(hours), t,
            "1/s", "output tokens per second")
    if dr_active:
        _series(fac, "dr_active", c["dr"].astype(float), t, "1",
                "demand response in force")


def _racks(f, c, n, dt):
    racks = f.create_group("racks")
    rt = _time(racks, n, dt)
    names = ["a-0", "a-1", "b-0"]
    lab = racks.create_dataset("rack", data=names, dtype=STR)
    lab.make_scale("rack")
    share = np.array([0.4, 0.35, 0.25])
    gpu = c["gpu"]
    _series(racks, "power_w", np.outer(c["it"], share), rt, "W",
            "rack IT power, mean over the interval", lab)
    _series(racks, "clock_ratio", np.clip(
        np.outer(1 - gpu / 4e6, [1, 1, 0.9]), 0, 1), rt, "1",
        "SM clock share", lab)
    _series(racks, "activity", np.outer(gpu / 9e5, [1, 0.9, 0.8]), rt,
            "1", "activity", lab)


def _summary(f, c, n, dt, full):
    s = f.create_group("summary")
    power, peak = c["power"], c["peak"]
    e = float(np.sum(power) * dt)
    s.attrs.update({
        "energy_mwh": e / 3.6e9,
        "mean_power_w": float(np.mean(power)) if n else 0.0,
        "peak_power_w": float(peak.max()) if n else 0.0, "cap_w": 1.3e6,
        "duration_s": n * dt, "cap_violation_s": dt if full else 0.0,
        "gpus": 100.0, "racks": 3.0,
    })
    if full:
        s.attrs.update({
            "mean_pue": float(np.mean(power / c["it"])) if n else 1.0,
            "tokens_per_joule": 0.08, "co2_t": 1.2,
            "cost": 1500.0, "slo_attainment": 0.97})


def _loops(f, c, n, dt):
    loops = f.create_group("loops")
    lt = _time(loops, n, dt)
    ln = loops.create_dataset("loop", data=["liquid", "air"], dtype=STR)
    ln.make_scale("loop")
    _series(loops, "supply_c", np.outer(np.ones(n), [32.0, 22.0]), lt,
            "degC", "supply temperature", ln)
    _series(loops, "heat_w", np.outer(c["it"], [0.8, 0.2]), lt, "W",
            "heat removed", ln)


def _services(f, c, n, dt):
    svc = f.create_group("services")
    hours = c["hours"]
    for k, sname in enumerate(["chat", "code"]):
        g = svc.create_group(sname)
        st = _time(g, n, dt)
        base = 0.2 + 0.1 * k
        _series(g, "tokens_per_s", (2 + k) * 1e4 + 5e3 * np.sin(hours),
                st, "1/s", "output tokens per second")
        _series(g, "ttft_p50", base + 0.05 * np.sin(hours), st, "s",
                "TTFT median")
        _series(g, "ttft_p99", 2 * base + 0.1 * np.sin(hours), st, "s",
                "TTFT 99th percentile")
        _series(g, "tpot_p50", 0.02 + 0.005 * k + 0 * hours, st, "s",
                "TPOT median")
        _series(g, "tpot_p99", 0.04 + 0.005 * k + 0 * hours, st, "s",
                "TPOT 99th percentile")
        g.attrs["requests_arrived"] = np.int64(1000 + k)
        g.attrs["requests_done"] = np.int64(990 + k)
        if sname == "chat":
            g.attrs["slo_ttft_s"] = 0.5
            g.attrs["slo_tpot_s"] = 0.05


def _jobs(f):
    jt = np.dtype([("id", "i8"), ("kind", STR), ("name", STR),
                   ("arrival_s", "f8"), ("start_s", "f8"),
                   ("end_s", "f8"), ("gpus", "i8"), ("energy_j", "f8"),
                   ("status", STR), ("deferred_s", "f8")])
    rows = [(1, "training", "llm-a", 0.0, 0.0, 20000.0, 64, 1e9, "done",
             0.0),
            (2, "training", "llm-b", 3600.0, 7 * 3600.0, 40000.0, 32,
             5e8, "deferred", 6 * 3600.0),
            (3, "training", "ft-c", 60000.0, 65000.0, 80000.0, 8, 1e8,
             "paused", 5000.0)]
    jobs = f.create_dataset("jobs", data=np.array(rows, dtype=jt))
    jobs.attrs["units"] = np.array(["1", "", "", "s", "s", "s", "1", "J",
                                    "", "s"], dtype=object).astype(STR)


def write_run(path, n=96, dt=900.0, complete=1, format_version=None,
              name="synthetic", full=True, dr_active=False):
    """A run of `n` samples of `dt` seconds. `full=False` gives today's
    layout (no cooling, grid, loops, services, jobs)."""
    c = _curves(n, dt, full)
    with h5py.File(path, "w") as f:
        _header(f, n, dt, complete, format_version, name, full)
        _facility(f, c, n, dt, full, dr_active)
        _racks(f, c, n, dt)
        _summary(f, c, n, dt, full)
        if full:
            _loops(f, c, n, dt)
            _services(f, c, n, dt)
            _jobs(f)
    return path
