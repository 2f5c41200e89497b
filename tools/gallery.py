#!/usr/bin/python3
"""gallery.py - regenerate the headline numbers of scenarios/README.md
and README.md, and README.md's picture.

    /usr/bin/python3 tools/gallery.py BUILD_DIR            # `make gallery`
    /usr/bin/python3 tools/gallery.py --check BUILD_DIR    # ctest gallery_fresh
    /usr/bin/python3 tools/gallery.py --list               # the runs
    /usr/bin/python3 tools/gallery.py --dry BUILD_DIR      # fast runs, print
    /usr/bin/python3 tools/gallery.py --rewrite            # prose edits
    /usr/bin/python3 tools/gallery.py --picture BUILD_DIR  # `make picture`
    /usr/bin/python3 tools/gallery.py --runs ID,... BUILD_DIR  # a few runs
    /usr/bin/python3 tools/gallery.py --only N BUILD_DIR   # question N's
    /usr/bin/python3 tools/gallery.py --plots              # the figures

Every number of the what-if gallery (scenarios/README.md) and of the
front page (README.md: what `make run` made, the run `qs`) sits between
markers, an HTML comment `gallery:NAME` before it and `/gallery` after,
and comes from a run of the model: nothing is typed by hand. Each figure
has a marker in one of the two pages at least.

README.md's picture (docs/img/quickstart-report.png) is the report of
the run `make run` makes: quickstart.yaml as it is, drawn by the analysis package's
`report`. `make gallery` draws it again after the runs; `--picture` (make
picture) does only that. It is not checked for staleness (a PNG's bytes
follow matplotlib's version); look at it after a change to the report.

Regenerating (`make gallery`) runs every run in RUNS below at full size,
one after another (about ten minutes on 2 cores), with BUILD_DIR/aifsim,
into out/gallery/. Each FIGURE is a function of those runs' /summary
attributes (and, for a few, their /jobs and /loops tables or a bound
computed from their series), formatted as the README shows it. The
script rewrites the values between the markers and writes
scenarios/gallery.json: for every run its scenario, its --set options,
the SHA-256 of the scenario file (of the job log, for a run of an
imported log: question 15), the values the figures read of it and
its wall time; and every figure's text. A run whose options depend on an
earlier run (the demand charge's cap, 10% below the peak the
unconstrained run reached) records the options it was given. Rerunning
is all it takes after a change: nothing in the README needs editing by
hand unless the prose around a number no longer fits it.

Checking (`--check`, the ctest test gallery_fresh via
tests/cli/test_gallery.sh, label gallery) must fail when the README no
longer says what the model gives, yet cannot afford every full run. So
it checks, in order:
  1. the README's marked values equal gallery.json's figures, every
     marker names a known figure and every figure has a marker, and the
     figures follow from the values recorded for the runs (a hand edit,
     or a regeneration that was not committed, fails here);
  2. every run's scenario file still has the hash recorded in gallery.json
     (a scenario edited without regenerating fails here);
  3. the runs marked `check` (the fast ones: about a minute in all) are
     run again at full size with this build, from the recorded options,
     and every figure that depends only on them is recomputed and
     compared, as formatted, with gallery.json (a change of the model, of
     the random draws or of the data that moves a headline number fails
     here). A run is deterministic (same scenario, seed and binary: the
     same bytes), so any difference is a real change. The slow runs (the
     20 MW factory, the 54-day run, the day of serving, the saturated
     precision runs) are covered by 1 and 2 only, and by
     tests/cli/test_scenarios.sh, which runs every scenario's quick
     variant.
When the model changes on purpose, `make gallery` and commit the READMEs,
gallery.json and the picture together. `--runs ID,...` runs only those
runs (a run added to RUNS, say) and keeps the others' recorded results:
fine when nothing else changed, which `--check` then confirms. `--only N`
is `--runs` with question N's runs: those the figures marked in its
section (`## N.`) of scenarios/README.md read; with `--dry` it runs
that question's fast runs and prints their figures, writing nothing but
the runs (question 15's walk-through makes its meter so); with `--check`,
step 3 runs only that question's fast runs.

Plotting (`--plots`) draws the gallery's figures (PLOTS below: each
question's `compare` or `report`, as its section in the README runs it)
from the runs already in --out (`make gallery`, or `--dry` for the fast
ones) into OUT/plots/NAME.png, through the analysis package (analysis/),
the same code `python3 -m aifsim compare|report` runs. A figure whose runs
are missing is skipped with a note. Look at each after a change to the
plots: the figures are not committed.
"""
import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT_DIR, "analysis"))
import aifsim  # noqa: E402  (runs are read through the analysis package)
from aifsim import units as _u  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READMES = [os.path.join(ROOT, "scenarios", "README.md"),
           os.path.join(ROOT, "README.md")]
RECORD = os.path.join(ROOT, "scenarios", "gallery.json")
OUT = os.path.join(ROOT, "out", "gallery")
PICTURE = os.path.join(ROOT, "docs", "img", "quickstart-report.png")

# ---------------------------------------------------------------------------
# The runs: id -> (scenario file in scenarios/, --set options, check).
# Options may be a function of the results so far (id -> Result).
# ---------------------------------------------------------------------------
MOE = ["services.0.model=Mixtral-8x7B", "services.0.tp=2", "services.0.ep=2",
       "services.0.replicas=32"]
POLICIES = ["static", "proportional", "priority", "efficiency",
            "uniform_floor"]
REGIONS = [("ca", "carbon-aware.yaml"), ("tx", "grid-aware-texas.yaml"),
           ("pjm", "grid-aware-pjm.yaml"), ("de", "grid-aware-germany.yaml")]
CHECKPOINTS = ["10min", "20min", "30min", "1h", "2h"]
DALLAS = "grid.outdoor.file=../data/weather/US-TEX-ERCO_2023_weather.csv"
DALLAS_RH = "grid.humidity.file=../data/weather/US-TEX-ERCO_2023_weather.csv"
EVAP = "loops.0.heat_rejection=evaporative"


def demand_cap(res):
    """The cap 10% below the unconstrained run's peak facility power."""
    peak = res["dc-free"].s["peak_power_w"]
    return ["power.cap=%dkW" % math.floor(0.9 * peak / 1e3)]


SATURATE = "services.0.arrivals.rate=3000"
# 15. Calibrate to your meter ----------------------------------------------
# The walk-through starts from a job log: `aifsim import` of the shipped
# SWF sample (synthetic, docs/IMPORT.md; its clock is UTC, from its
# UnixStartTime) into a scenario, CAL_REPLAY, that the question's runs run.
# A run's scenario "import:FORMAT:LOG" (LOG relative to scenarios/, as the
# other runs' data paths are) is that log imported; gallery.json records
# the log's hash.
CAL_FORMAT, CAL_LOG = "swf", "../data/joblogs/synthetic.swf"
CAL_REPLAY = "import:%s:%s" % (CAL_FORMAT, CAL_LOG)
CAL_START = "2026-11-30T08:02:15Z"  # the log's first submission (t = 0)
# The meter's truth: the hosts' CPUs at 60% while their GPUs are busy (the
# catalog's DGX-H100 says 30%) and 3% of fixed facility load (1%).
CAL_PLANTED = {"racks.0.host_load": "60%", "electrical.fixed_load": "3%"}
CAL_NOISE = 0.01   # the meter's error, a share of each 1-min reading
CAL_HOLDOUT = 0.25  # the meter's last rows, held out of the fit
CAL_AIFSIM = None  # the binary, for cal_sets (run_all sets it)


def imported(aifsim, scenario, out_dir):
    """The scenario file a run runs: scenarios/SCENARIO, or, for
    "import:FORMAT:LOG", LOG imported by `aifsim import` (as the README
    shows it) into OUT_DIR/replay-FORMAT.yaml."""
    if not scenario.startswith("import:"):
        return os.path.join(ROOT, "scenarios", scenario)
    _i, fmt, log = scenario.split(":", 2)
    path = os.path.join(out_dir, "replay-%s.yaml" % fmt)
    cmd = [aifsim, "import", fmt, os.path.join(ROOT, "scenarios", log),
           "-o", path]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("gallery: %s failed: %s" % (" ".join(cmd), p.stderr))
    return path


def recorded_file(scenario):
    """The file whose hash gallery.json records for a run's scenario."""
    if scenario.startswith("import:"):
        return os.path.join(ROOT, "scenarios", scenario.split(":", 2)[2])
    return os.path.join(ROOT, "scenarios", scenario)


def cal_meter_csv(out_dir):
    """The meter: cal-meter's facility power, a row a minute from the
    log's first submission (CAL_START), with seeded relative noise, as a
    meter's CSV (docs/CALIBRATION.md)."""
    import pandas as pd
    run = aifsim.open_run(os.path.join(out_dir, "cal-meter.h5"))
    f = run.facility
    dt = float(f.index[1] - f.index[0])
    w = f["power_w"].to_numpy()
    w = w * (1 + CAL_NOISE * np.random.default_rng(2026).standard_normal(
        len(w)))
    ts = pd.Timestamp(CAL_START) + pd.to_timedelta(
        f.index.to_numpy() - dt, unit="s")
    path = os.path.join(out_dir, "cal-meter.csv")
    with open(path, "w") as fh:
        fh.write("timestamp,facility_kW\n")
        for t, v in zip(ts, w):
            fh.write("%s,%.3f\n" % (t.strftime("%Y-%m-%dT%H:%M:%SZ"), v / 1e3))
    return path


def cal_sets(res, out_dir):
    """Calibrates the imported replay to the meter (aifsim calibrate, the
    last CAL_HOLDOUT of the rows held out) and returns the rerun's
    options: the overlay."""
    csv = cal_meter_csv(out_dir)
    overlay = os.path.join(out_dir, "cal-overlay.yaml")
    cmd = [CAL_AIFSIM, "calibrate", imported(CAL_AIFSIM, CAL_REPLAY, out_dir),
           csv, "--holdout", "%g%%" % (100 * CAL_HOLDOUT), "-o", overlay,
           "--fit"] + list(CAL_PLANTED)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("gallery: %s failed: %s" % (" ".join(cmd), p.stderr))
    return ["--set-file=" + os.path.relpath(overlay, ROOT)]


cal_sets.always = True  # recalibrate whenever the rerun is made


def cal_extra(rid, out_dir):
    """What the question's figures read beyond /summary: the replay's jobs
    and GPU-hours (its /jobs table), the run against the meter (Guideline
    14's metrics hourly over the whole replay, and per 1-min reading over
    the rows `calibrate` holds out) and, for the calibrated run, the fit
    from the overlay."""
    from aifsim import measured as M
    run = aifsim.open_run(os.path.join(out_dir, rid + ".h5"))
    j = run.jobs
    j = j[j["kind"].astype(str) == "gpu_job"]  # not the idle, overhead rows
    out = {"cal_jobs": float(len(j)), "cal_gpu_hours": float(
        (j["gpus"] * (j["end_s"] - j["start_s"])).sum() / 3600)}
    both = M.align(M.read_measured(os.path.join(out_dir, "cal-meter.csv")),
                   run, "facility_kW")
    res = M.resolutions(both)
    rows = res["interval"]
    held = max(2, math.ceil(CAL_HOLDOUT * len(rows)))  # as calibrate does
    out["cal_hours"] = float(len(res["hourly"]))
    out["cal_held_rows"] = float(held)
    for span, h in (("all", res["hourly"]), ("held", rows[-held:])):
        x = M.metrics(h["measured"], h["simulated"])
        out["cal_%s_cv" % span] = float(x["cv_rmse"])
        out["cal_%s_nmbe" % span] = float(x["nmbe"])
    if rid == "cal-calibrated":
        import yaml
        with open(os.path.join(out_dir, "cal-overlay.yaml")) as f:
            keys = yaml.safe_load(f)["calibration"]["keys"]
        for k, v in keys.items():
            out["fit_" + k] = float(str(v["value"]).split()[0])
            out["se_" + k] = float(str(v["std_error"]).split()[0])
    return out


RUNS = [
    # What `make run` makes: README.md's first result and its picture.
    ("qs", "quickstart.yaml", [], True),
    ("prec-fp16", "precision.yaml", [], True),
    ("prec-fp8", "precision.yaml", ["services.0.precision=fp8"], True),
    ("prec-fp4", "precision.yaml", ["services.0.precision=fp4"], True),
    ("prec-sat-fp16", "precision.yaml", [SATURATE], False),
    ("prec-sat-fp8", "precision.yaml", [SATURATE, "services.0.precision=fp8"],
     False),
    ("prec-sat-fp4", "precision.yaml", [SATURATE, "services.0.precision=fp4"],
     False),
] + [
    ("ppw-" + p, "perf-per-watt-20mw.yaml", ["power.policy=" + p], False)
    for p in POLICIES
] + [
    ("st-on", "speed-tuning.yaml", [], True),
    ("st-off", "speed-tuning.yaml", ["training.0.speed_tuning=false"], True),
    ("dr", "grid-dr.yaml", [], True),
    ("dr-none", "grid-dr.yaml", ["grid.dr_events=[]"], True),
] + [
    run for key, f in REGIONS for run in (
        ("ga-%s-carbon" % key, f, [], True),
        ("ga-%s-none" % key, f, ["training.0.deferral=none"], True),
        ("ga-%s-price" % key, f, ["training.0.deferral_signal=price"], True))
] + [
    ("cool-fra-liquid", "liquid-vs-air.yaml", [], True),
    ("cool-fra-air", "liquid-vs-air.yaml", ["loops.0.kind=air"], True),
    ("cool-dal-liquid", "liquid-vs-air.yaml", [DALLAS], True),
    ("cool-dal-air", "liquid-vs-air.yaml", [DALLAS, "loops.0.kind=air"], True),
    ("cool-fra-evap", "liquid-vs-air.yaml", [EVAP], True),
    ("cool-dal-evap", "liquid-vs-air.yaml", [DALLAS, DALLAS_RH, EVAP], True),
    ("os-416", "oversubscription.yaml", [], True),
    ("os-320", "oversubscription.yaml",
     ["racks.0.count=10", "services.0.replicas=80",
      "services.0.arrivals.rate=692"], True),
    ("sm-off", "smoothing.yaml", [], True),
    ("sm-rack", "smoothing.yaml", ["smoothing.enabled=true"], True),
    ("sm-battery", "smoothing.yaml",
     ["battery.capacity=500kWh", "battery.threshold=75%"], True),
    ("ivt", "inference-vs-training.yaml", [], False),
] + [
    ("fail-" + c, "failures-16k.yaml", ["training.0.checkpoint_every=" + c],
     False) for c in CHECKPOINTS
] + [
    ("dc-free", "demand-charge.yaml", [], True),
    ("dc-cap", "demand-charge.yaml", demand_cap, True),
    ("md-dense-low", "moe-vs-dense.yaml", [], True),
    ("md-moe-low", "moe-vs-dense.yaml", MOE, True),
    ("md-dense-high", "moe-vs-dense.yaml", ["services.0.arrivals.rate=100"],
     True),
    ("md-moe-high", "moe-vs-dense.yaml",
     MOE + ["services.0.arrivals.rate=100"], True),
    ("vd", "grid-disturbance.yaml", [], False),
    ("vd-itic", "grid-disturbance.yaml",
     ["ride_through.trip=[]", "duration=6min"], False),
    ("vd-nogen", "grid-disturbance.yaml", ["ride_through.generator=false"],
     False),
    ("drs", "dr-stress.yaml", [], False),
    # 15. Calibrate to your meter, on the imported log: a synthetic meter
    # (the replay with planted values, plus seeded noise), the replay as
    # imported, and the replay with the overlay `aifsim calibrate` fits
    # (cal_sets). A few seconds in all: checked.
    ("cal-meter", CAL_REPLAY, [
        "%s=%s" % kv for kv in CAL_PLANTED.items()], True),
    ("cal-model", CAL_REPLAY, [], True),
    ("cal-calibrated", CAL_REPLAY, cal_sets, True),
]


def _series(run, path):
    """A dataset of the run as numbers, or None when the file lacks it."""
    try:
        return np.asarray(run.read(path), dtype=float)
    except KeyError:
        return None


def window_bound(run, signal):
    """What the trace allows a window deferral to save on a run whose jobs
    started at once: each training job with a deadline, moved as a whole
    to the start in [its start, deadline - its run time] with the lowest
    mean signal (known perfectly, at the run's sample grid, at the job's
    own flat power, ignoring other jobs' GPUs); 1 - the moved jobs' summed
    mean signal over their summed mean at their actual start. Returns
    (that share, the sum over jobs of the mean signal over each job's
    actual run), or None when the run has no such jobs or signal."""
    jobs = run.jobs
    c, t = _series(run, "facility/" + signal), _series(run, "facility/time")
    if "deadline_s" not in jobs or c is None or t is None:
        return None
    if len(t) < 2:
        return None
    dt = t[1] - t[0]
    cum = np.concatenate([[0.0], np.cumsum(c)])
    at_once = best = 0.0
    for k, a, e, d in zip(jobs["kind"].astype(str), jobs["start_s"],
                          jobs["end_s"], jobs["deadline_s"]):
        if k != "training" or not (np.isfinite(a) and np.isfinite(e)
                                   and np.isfinite(d)):
            continue
        n = max(1, int(round((e - a) / dt)))
        i0 = int(round(a / dt))
        i1 = min(int(round((d - (e - a)) / dt)), len(c) - n)
        if i0 + n > len(c) or i1 < i0:
            continue
        means = (cum[i0 + n:i1 + n + 1] - cum[i0:i1 + 1]) / n
        at_once += means[0]
        best += means.min()
    return (1 - best / at_once, at_once) if at_once > 0 else None


class Used(dict):
    """A dict that remembers which keys were read."""

    def __init__(self, *a):
        super().__init__(*a)
        self.used = set()

    def __getitem__(self, k):
        self.used.add(k)
        return super().__getitem__(k)


class Result:
    """What a figure may read of a run: its summary, jobs and loops."""

    def __init__(self, s, jobs=None, loops=None, extra=None):
        self.s = Used(s)    # /summary attributes (floats and strings)
        self.jobs = Used({k: Used(v) for k, v in (jobs or {}).items()})
        self.loops = Used(loops or {})
        self.extra = Used(extra or {})  # computed from series (window_bound)

    @staticmethod
    def read(path):
        run = aifsim.open_run(path)
        s = {k: v if isinstance(v, str) else float(v)
             for k, v in run.summary.items()}
        jobs = {}
        if len(run.jobs):
            names = run.jobs["name"].astype(str)
            for col in ("energy_j", "work", "lost_gpu_hours", "gpus",
                        "failures", "co2_kg"):
                if col in run.jobs:
                    jobs[col] = {n: float(v) for n, v in
                                 zip(names, run.jobs[col])}
        extra = {}
        for sig in ("carbon_g_per_kwh", "price_per_mwh"):
            b = window_bound(run, sig)
            if b is not None:
                extra["window_bound_" + sig] = b[0]
                extra["jobs_signal_" + sig] = b[1]
        slow = _series(run, "demand_response/slowdown")
        if slow is not None:
            names = np.asarray(run.read("demand_response/name")).astype(str)
            for n, v in zip(names, slow):
                if not math.isnan(v):
                    extra["dr_slowdown_" + n] = float(v)
        loops = {}
        free = _series(run, "loops/free_share")
        if free is not None:
            dt = s["duration_s"] / max(1, free.shape[0])
            loops["free_hours"] = float(np.nansum(free) * dt / 3600)
        return Result(s, jobs, loops, extra)

    def to_json(self):
        """What the figures read of it (after compute), for the record."""
        return {
            "summary": {k: self.s[k] for k in sorted(self.s.used)},
            "jobs": {c: {n: self.jobs[c][n] for n in sorted(self.jobs[c].used)}
                     for c in sorted(self.jobs.used)},
            "loops": {k: self.loops[k] for k in sorted(self.loops.used)},
            "extra": {k: self.extra[k] for k in sorted(self.extra.used)}}

    @staticmethod
    def from_json(d):
        return Result(d["summary"], d["jobs"], d["loops"], d.get("extra"))


# ---------------------------------------------------------------------------
# Formatting.
# ---------------------------------------------------------------------------
# The numbers as the package formats them (aifsim.units).
num, cnt, pct, ratio = _u.significant, _u.whole, _u.percent, _u.times


def saving(base, new):
    """The share of base that new saves (positive: less)."""
    return 1 - new / base


# ---------------------------------------------------------------------------
# The figures: name -> (runs it reads, function of the results -> text).
# ---------------------------------------------------------------------------
FIGURES = {}


def figure(name, runs):
    def register(fn):
        FIGURES[name] = (list(runs), fn)
        return fn
    return register


def tokens_per_s(r):
    return r.s["tokens"] / r.s["duration_s"]


# README.md: what `make run` made ---------------------------------------------
figure("qs-gpus", ["qs"])(lambda r: cnt(r["qs"].s["gpus"]))
figure("qs-racks", ["qs"])(lambda r: cnt(r["qs"].s["racks"]))
figure("qs-hours", ["qs"])(lambda r: cnt(r["qs"].s["duration_s"] / 3600))
figure("qs-cap", ["qs"])(lambda r: cnt(r["qs"].s["cap_w"] / 1e3))
figure("qs-energy", ["qs"])(lambda r: num(r["qs"].s["energy_mwh"]))
figure("qs-peak", ["qs"])(lambda r: num(r["qs"].s["peak_power_w"] / 1e3))
figure("qs-violation", ["qs"])(lambda r: cnt(r["qs"].s["cap_violation_s"]))
figure("qs-pue", ["qs"])(lambda r: num(r["qs"].s["mean_pue"], 4))


# 1. Precision -------------------------------------------------------------
PREC = ["prec-fp16", "prec-fp8", "prec-fp4"]
for _p in ("fp16", "fp8", "fp4"):
    _id = "prec-" + _p
    figure("prec-%s-tpj" % _p, [_id])(
        lambda r, i=_id: num(r[i].s["tokens_per_joule"]))
    figure("prec-%s-tpj-fac" % _p, [_id])(
        lambda r, i=_id: num(r[i].s["tokens_per_joule_facility"]))
    figure("prec-%s-tps" % _p, ["prec-sat-" + _p])(
        lambda r, p=_p: num(tokens_per_s(r["prec-sat-" + p]) / 1e3))
    figure("prec-%s-sat-tpj" % _p, ["prec-sat-" + _p])(
        lambda r, p=_p: num(r["prec-sat-" + p].s["tokens_per_joule"]))
    figure("prec-%s-cost" % _p, [_id])(
        lambda r, i=_id: num(r[i].s["cost"] / r[i].s["tokens"] * 1e6))
    figure("prec-%s-co2" % _p, [_id])(
        lambda r, i=_id: num(r[i].s["co2_t"] * 1e6 / r[i].s["tokens"] * 1e6))
    figure("prec-%s-slo" % _p, [_id])(
        lambda r, i=_id: pct(r[i].s["slo_attainment"]))
figure("prec-fp4-over-fp16", PREC)(
    lambda r: ratio(r["prec-fp4"].s["tokens_per_joule"]
                    / r["prec-fp16"].s["tokens_per_joule"]))
figure("prec-sat-fp4-over-fp16", ["prec-sat-fp4", "prec-sat-fp16"])(
    lambda r: ratio(r["prec-sat-fp4"].s["tokens_per_joule"]
                    / r["prec-sat-fp16"].s["tokens_per_joule"]))
figure("prec-fp8-over-fp16", PREC)(
    lambda r: ratio(r["prec-fp8"].s["tokens_per_joule"]
                    / r["prec-fp16"].s["tokens_per_joule"]))


# 2. Performance per watt under 20 MW ----------------------------------------
for _p in POLICIES:
    _id = "ppw-" + _p
    figure("ppw-%s-tokens" % _p, [_id])(
        lambda r, i=_id: num(r[i].s["tokens"] / 1e9))
    figure("ppw-%s-train" % _p, [_id])(
        lambda r, i=_id: num(r[i].s["training_tokens"] / 1e9))
    figure("ppw-%s-tpj" % _p, [_id])(
        lambda r, i=_id: num(r[i].s["tokens_per_joule"]))
    figure("ppw-%s-stranded" % _p, [_id])(
        lambda r, i=_id: num(r[i].s["stranded_mwh"]))
    figure("ppw-%s-mean" % _p, [_id])(
        lambda r, i=_id: num(r[i].s["mean_power_w"] / 1e6))
    figure("ppw-%s-viol" % _p, [_id])(
        lambda r, i=_id: num(r[i].s["cap_violation_s"]))
    figure("ppw-%s-train-gain" % _p, [_id, "ppw-static"])(
        lambda r, i=_id: pct(r[i].s["training_tokens"]
                             / r["ppw-static"].s["training_tokens"] - 1,
                             sign=True))
    figure("ppw-%s-stranded-gain" % _p, [_id, "ppw-static"])(
        lambda r, i=_id: pct(saving(r["ppw-static"].s["stranded_mwh"],
                                    r[i].s["stranded_mwh"])))


@figure("ppw-best", ["ppw-" + p for p in POLICIES])
def _ppw_best(r):
    """The policies within 0.1% of the most training tokens."""
    t = {p: r["ppw-" + p].s["training_tokens"] for p in POLICIES}
    top = max(t.values())
    return " and ".join(p for p in POLICIES if t[p] >= top * 0.999)


# 3. Speed tuning ----------------------------------------------------------
def job_j_per_work(r, name):
    return r.jobs["energy_j"][name] / r.jobs["work"][name]


figure("st-saving", ["st-on", "st-off"])(
    lambda r: pct(saving(job_j_per_work(r["st-off"], "pretrain-70b"),
                         job_j_per_work(r["st-on"], "pretrain-70b"))))
figure("st-progress", ["st-on", "st-off"])(
    lambda r: "%.4f" % (r["st-on"].jobs["work"]["pretrain-70b"]
                        / r["st-off"].jobs["work"]["pretrain-70b"]))
figure("st-facility", ["st-on", "st-off"])(
    lambda r: pct(saving(r["st-off"].s["energy_mwh"],
                         r["st-on"].s["energy_mwh"])))

# 4. Demand response -------------------------------------------------------
figure("dr-slo", ["dr"])(lambda r: pct(r["dr"].s["dr_slo_attainment"], 2))
figure("dr-slo-day", ["dr"])(lambda r: pct(r["dr"].s["slo_attainment"], 2))
figure("dr-cut", ["dr"])(lambda r: cnt(r["dr"].s["dr_time_to_cut_s"]))
figure("dr-above", ["dr"])(
    lambda r: num(r["dr"].s["dr_energy_above_j"] / 3.6e6))
figure("dr-violation", ["dr"])(lambda r: num(r["dr"].s["cap_violation_s"]))
figure("dr-train-cost", ["dr", "dr-none"])(
    lambda r: pct(saving(r["dr-none"].s["training_tokens"],
                         r["dr"].s["training_tokens"])))
figure("dr-late", ["dr"])(lambda r: cnt(r["dr"].s["jobs_late"]))
figure("dr-pauses", ["dr"])(lambda r: cnt(r["dr"].s["job_pauses"]))

# 5. Carbon- and price-aware training ----------------------------------------
for _k, _f in REGIONS:
    c, n, p = ("ga-%s-%s" % (_k, v) for v in ("carbon", "none", "price"))
    figure("ga-%s-co2" % _k, [c, n])(
        lambda r, c=c, n=n: pct(saving(r[n].s["training_co2_kg"],
                                       r[c].s["training_co2_kg"])))
    figure("ga-%s-co2-t" % _k, [n])(
        lambda r, n=n: num(r[n].s["training_co2_kg"] / 1e3))
    figure("ga-%s-cost" % _k, [p, n])(
        lambda r, p=p, n=n: pct(saving(r[n].s["cost"], r[p].s["cost"])))
    figure("ga-%s-jobprice" % _k, [p, n])(
        # The jobs' mean price over their runs, summed: their own bill at
        # a flat power.
        lambda r, p=p, n=n: pct(saving(r[n].extra["jobs_signal_price_per_mwh"],
                                       r[p].extra["jobs_signal_price_per_mwh"])))
    figure("ga-%s-late" % _k, [c, p])(
        lambda r, c=c, p=p: cnt(r[c].s["jobs_late"] + r[p].s["jobs_late"]))
    figure("ga-%s-co2-bound" % _k, [n])(
        lambda r, n=n: pct(r[n].extra["window_bound_carbon_g_per_kwh"]))
    figure("ga-%s-cost-bound" % _k, [n])(
        lambda r, n=n: pct(r[n].extra["window_bound_price_per_mwh"]))
    figure("ga-%s-ci" % _k, [n])(
        lambda r, n=n: num(r[n].s["carbon_g_per_kwh"]))

# 6. Cooling ---------------------------------------------------------------
for _site in ("fra", "dal"):
    for _kind in ("liquid", "air"):
        _id = "cool-%s-%s" % (_site, _kind)
        figure(_id + "-pue", [_id])(lambda r, i=_id: "%.3f" % r[i].s["mean_pue"])
        figure(_id + "-itue", [_id])(lambda r, i=_id: "%.3f" % r[i].s["itue"])
        figure(_id + "-tue", [_id])(lambda r, i=_id: "%.3f" % r[i].s["tue"])
        figure(_id + "-cool", [_id])(
            lambda r, i=_id: num(r[i].s["cooling_energy_mwh"]))
        figure(_id + "-free", [_id])(
            lambda r, i=_id: num(r[i].loops["free_hours"]))
        figure(_id + "-wue", [_id])(
            lambda r, i=_id: "%.2f" % r[i].s["wue_l_per_kwh"])
    _id = "cool-%s-evap" % _site
    figure(_id + "-pue", [_id])(lambda r, i=_id: "%.3f" % r[i].s["mean_pue"])
    figure(_id + "-wue", [_id])(
        lambda r, i=_id: "%.2f" % r[i].s["wue_l_per_kwh"])
    figure(_id + "-cool", [_id])(
        lambda r, i=_id: num(r[i].s["cooling_energy_mwh"]))
    figure(_id + "-water", [_id])(lambda r, i=_id: num(r[i].s["water_m3"]))
    figure(_id + "-evap", [_id])(
        lambda r, i=_id: pct(r[i].s["water_evaporation_m3"]
                             / r[i].s["water_m3"]))
    figure(_id + "-free", [_id])(
        lambda r, i=_id: num(r[i].loops["free_hours"]))

# 7. Oversubscription ------------------------------------------------------
figure("os-served", ["os-416", "os-320"])(
    lambda r: ratio(r["os-416"].s["requests_completed"]
                    / r["os-320"].s["requests_completed"]))
figure("os-slo-416", ["os-416"])(lambda r: pct(r["os-416"].s["slo_attainment"], 2))
figure("os-slo-320", ["os-320"])(lambda r: pct(r["os-320"].s["slo_attainment"], 2))
figure("os-viol", ["os-416"])(lambda r: num(r["os-416"].s["cap_violation_s"]))
figure("os-peak", ["os-416"])(
    lambda r: pct(r["os-416"].s["peak_power_w"] / r["os-416"].s["cap_w"]))

# 8. Smoothing -------------------------------------------------------------
for _v in ("off", "rack", "battery"):
    _id = "sm-" + _v
    figure(_id + "-ramp", [_id])(
        lambda r, i=_id: num(r[i].s["max_ramp_w_per_s"] / 1e3))
    figure(_id + "-osc", [_id])(
        lambda r, i=_id: num(r[i].s["oscillation_j"] / 1e6))
    figure(_id + "-energy", [_id, "sm-off"])(
        lambda r, i=_id: pct(r[i].s["energy_mwh"]
                             / r["sm-off"].s["energy_mwh"] - 1, sign=True))
figure("sm-llama3-mw", ["sm-off"])(
    # The 0.1-20 Hz band's RMS, scaled per GPU to Llama 3's 16,384.
    lambda r: num(r["sm-off"].s["oscillation_w_rms"] / r["sm-off"].s["gpus"]
                  * 16384 / 1e6, 2))
figure("sm-llama3-pp", ["sm-off"])(
    # Peak to peak of a square wave of that RMS: twice it.
    lambda r: num(2 * r["sm-off"].s["oscillation_w_rms"]
                  / r["sm-off"].s["gpus"] * 16384 / 1e6, 2))

# 9. Inference vs training -------------------------------------------------
LLAMA3_TOKENS = 15e12  # Llama 3: pre-trained on over 15T tokens


def ivt(r):
    x = r["ivt"]
    j_train = x.jobs["energy_j"]["pretrain-8b"] / x.s["training_tokens"]
    j_serve = x.s["inference_energy_mwh"] * 3.6e9 / x.s["tokens"]
    served_per_day = x.s["tokens"] / (x.s["duration_s"] / 86400)
    cross_tokens = LLAMA3_TOKENS * j_train / j_serve
    return j_train, j_serve, served_per_day, cross_tokens


figure("ivt-jtrain", ["ivt"])(lambda r: num(ivt(r)[0], 3))
figure("ivt-jserve", ["ivt"])(lambda r: num(ivt(r)[1], 3))
figure("ivt-ratio", ["ivt"])(lambda r: num(ivt(r)[1] / ivt(r)[0], 3))
figure("ivt-tps", ["ivt"])(lambda r: num(ivt(r)[2] / 86400 / 1e3))
figure("ivt-cross-t", ["ivt"])(lambda r: num(ivt(r)[3] / 1e12))
figure("ivt-cross-days", ["ivt"])(
    lambda r: num(ivt(r)[3] / ivt(r)[2]))
figure("ivt-year-tps", ["ivt"])(
    # The serving rate at which inference passes training in 365 days.
    lambda r: num(ivt(r)[3] / (365 * 86400) / 1e6))
figure("ivt-tpj", ["ivt"])(lambda r: num(r["ivt"].s["tokens_per_joule"]))

# 10. Failures -------------------------------------------------------------
FAIL = ["fail-" + c for c in CHECKPOINTS]


def fail_lost_mwh(x):
    """Lost GPU-hours at the job's mean GPU power (GPU energy only)."""
    j = "llama3-405b"
    mean_w = x.jobs["energy_j"][j] / (x.jobs["gpus"][j] * x.s["duration_s"])
    return x.jobs["lost_gpu_hours"][j] * mean_w / 1e6


for _c in CHECKPOINTS:
    _id = "fail-" + _c
    figure(_id + "-n", [_id])(lambda r, i=_id: cnt(r[i].s["job_failures"]))
    figure(_id + "-lost", [_id])(
        lambda r, i=_id: num(r[i].s["lost_gpu_hours"] / 1e3))
    figure(_id + "-lost-share", [_id])(
        lambda r, i=_id: pct(r[i].s["lost_gpu_hours"]
                             / (r[i].s["gpus"] * r[i].s["duration_s"] / 3600)))
    figure(_id + "-mwh", [_id])(lambda r, i=_id: num(fail_lost_mwh(r[i])))
    figure(_id + "-tokens", [_id])(
        lambda r, i=_id: num(r[i].s["training_tokens"] / 1e12))
figure("fail-best", FAIL)(
    lambda r: max(CHECKPOINTS, key=lambda c: r["fail-" + c].s["training_tokens"]))
figure("fail-young", [])(
    # Young's first-order optimum sqrt(2 x checkpoint time x job MTBF),
    # with the scenario's 1 min checkpoint and 54 d / 419 for the MTBF.
    lambda r: num(math.sqrt(2 * 60 * 54 * 86400 / 419) / 60, 2))

# 11. Demand charge --------------------------------------------------------
DC = ["dc-free", "dc-cap"]
figure("dc-peak", ["dc-free"])(lambda r: num(r["dc-free"].s["peak_power_w"] / 1e3))
figure("dc-cap", ["dc-cap"])(lambda r: num(r["dc-cap"].s["cap_w"] / 1e3))
figure("dc-bill", ["dc-free"])(lambda r: num(r["dc-free"].s["cost"]))
figure("dc-demand-share", ["dc-free"])(
    lambda r: pct(r["dc-free"].s["cost_demand"] / r["dc-free"].s["cost"]))
figure("dc-bill-cap", ["dc-cap"])(lambda r: num(r["dc-cap"].s["cost"]))
figure("dc-saving", DC)(
    lambda r: num(r["dc-free"].s["cost"] - r["dc-cap"].s["cost"]))
figure("dc-saving-pct", DC)(
    lambda r: pct(saving(r["dc-free"].s["cost"], r["dc-cap"].s["cost"])))
figure("dc-demand-saving", DC)(
    lambda r: num(r["dc-free"].s["cost_demand"] - r["dc-cap"].s["cost_demand"]))
figure("dc-tokens", DC)(
    lambda r: pct(saving(r["dc-free"].s["training_tokens"],
                         r["dc-cap"].s["training_tokens"])))
figure("dc-per-mtok", DC)(
    # Dollars saved per million training tokens given up.
    lambda r: num((r["dc-free"].s["cost"] - r["dc-cap"].s["cost"])
                  / ((r["dc-free"].s["training_tokens"]
                      - r["dc-cap"].s["training_tokens"]) / 1e6)))

# 12. MoE vs dense ---------------------------------------------------------
for _id in ("md-dense-low", "md-moe-low", "md-dense-high", "md-moe-high"):
    figure(_id + "-tpj", [_id])(lambda r, i=_id: num(r[i].s["tokens_per_joule"]))
    figure(_id + "-slo", [_id])(lambda r, i=_id: pct(r[i].s["slo_attainment"]))
figure("md-low-ratio", ["md-dense-low", "md-moe-low"])(
    lambda r: ratio(r["md-moe-low"].s["tokens_per_joule"]
                    / r["md-dense-low"].s["tokens_per_joule"]))
figure("md-high-ratio", ["md-dense-high", "md-moe-high"])(
    lambda r: ratio(r["md-moe-high"].s["tokens_per_joule"]
                    / r["md-dense-high"].s["tokens_per_joule"]))

# 15. Calibrate to your meter ----------------------------------------------
# Every figure reads the meter (cal-meter's CSV) as well as its run.
CAL_RUNS = ["cal-meter", "cal-model", "cal-calibrated"]
figure("cal-jobs", CAL_RUNS[:2])(
    lambda r: cnt(r["cal-model"].extra["cal_jobs"]))
figure("cal-gpuh", CAL_RUNS[:2])(
    lambda r: num(r["cal-model"].extra["cal_gpu_hours"]))
figure("cal-hours", CAL_RUNS[:2])(
    lambda r: cnt(r["cal-model"].extra["cal_hours"]))
figure("cal-held-rows", CAL_RUNS[:2])(
    lambda r: cnt(r["cal-model"].extra["cal_held_rows"]))
for _run in CAL_RUNS[1:]:
    for _span in ("all", "held"):
        figure("%s-%s-cv" % (_run, _span), ["cal-meter", _run])(
            lambda r, i=_run, s=_span: pct(r[i].extra["cal_%s_cv" % s], 2))
        figure("%s-%s-nmbe" % (_run, _span), ["cal-meter", _run])(
            lambda r, i=_run, s=_span: pct(r[i].extra["cal_%s_nmbe" % s], 2,
                                           sign=True))
for _key in CAL_PLANTED:
    _short = _key.split(".")[-1]
    figure("cal-fit-" + _short, CAL_RUNS)(
        lambda r, k=_key: pct(r["cal-calibrated"].extra["fit_" + k], 2))
    figure("cal-se-" + _short, CAL_RUNS)(
        lambda r, k=_key: pct(r["cal-calibrated"].extra["se_" + k], 2))
    figure("cal-err-" + _short, CAL_RUNS)(
        lambda r, k=_key: pct(r["cal-calibrated"].extra["fit_" + k] / float(
            CAL_PLANTED[k].rstrip("%")) * 100 - 1, 1, sign=True))



# 13. A Virginia-2024-like disturbance on a 1 GW campus ----------------------
figure("vd-peak", ["vd"])(lambda r: cnt(r["vd"].s["peak_power_w"] / 1e6))
figure("vd-lost", ["vd"])(lambda r: cnt(r["vd"].s["grid_lost_w"] / 1e6))
figure("vd-off", ["vd"])(lambda r: cnt(r["vd"].s["grid_off_s"] / 60))
figure("vd-backup", ["vd"])(lambda r: cnt(r["vd"].s["backup_mwh"]))
figure("vd-met", ["vd"])(lambda r: pct(r["vd"].s["ride_through_met"]))
figure("vd-ramp", ["vd"])(
    lambda r: cnt(r["vd"].s["max_ramp_1s_w_per_s"] / 1e6))
figure("vd-dark", ["vd"])(lambda r: cnt(r["vd"].s["it_dark_s"]))
figure("vd-itic-met", ["vd-itic"])(
    lambda r: pct(r["vd-itic"].s["ride_through_met"]))
figure("vd-itic-trips", ["vd-itic"])(
    lambda r: cnt(r["vd-itic"].s["disturbance_trips"]))
figure("vd-nogen-dark", ["vd-nogen"])(
    lambda r: cnt(r["vd-nogen"].s["it_dark_s"] / 60))
figure("vd-nogen-gpuh", ["vd-nogen"])(
    lambda r: cnt(r["vd-nogen"].s["it_dark_gpu_hours"]))
figure("vd-nogen-lost", ["vd-nogen"])(
    lambda r: cnt(r["vd-nogen"].s["fault_lost_gpu_hours"]))


# 14. Demand response as an operator runs it: 200 events ----------------------
figure("drs-events", ["drs"])(lambda r: cnt(r["drs"].s["dr_events"]))
figure("drs-hours", ["drs"])(lambda r: num(r["drs"].s["dr_s"] / 3600))
figure("drs-align", ["drs"])(lambda r: pct(r["drs"].s["dr_alignment"], 2))
figure("drs-cut", ["drs"])(lambda r: cnt(r["drs"].s["dr_time_to_cut_s"]))
figure("drs-slo", ["drs"])(
    lambda r: pct(r["drs"].s["dr_slo_attainment"], 2))
figure("drs-pretrain-slow", ["drs"])(
    lambda r: pct(r["drs"].extra["dr_slowdown_pretrain-70b"]))
figure("drs-ft-slow", ["drs"])(
    lambda r: pct(r["drs"].extra["dr_slowdown_finetune-8b"]))

# ---------------------------------------------------------------------------
# Running.
# ---------------------------------------------------------------------------
def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def run_one(aifsim, rid, scenario, sets, out_dir):
    out = os.path.join(out_dir, rid + ".h5")
    cmd = [aifsim, "run", imported(aifsim, scenario, out_dir),
           "-o", out, "--quiet", "--force"]
    for s in sets:
        if s.startswith("--set-file="):
            cmd += ["--set-file", os.path.join(ROOT, s.split("=", 1)[1])]
        else:
            cmd += ["--set", s]
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    wall = time.time() - t0
    if p.returncode != 0:
        sys.exit("gallery: %s failed (exit %d): %s\n%s" % (
            rid, p.returncode, " ".join(cmd), p.stderr[-2000:]))
    return Result.read(out), wall


def run_all(aifsim, out_dir, only=None, recorded=None, log=print):
    """Runs RUNS (or those in `only`); returns id -> (Result, sets, wall)."""
    global CAL_AIFSIM
    CAL_AIFSIM = aifsim
    os.makedirs(out_dir, exist_ok=True)
    res, meta = {}, {}
    for rid, scenario, sets, _check in RUNS:
        if only is not None and rid not in only:
            continue
        if callable(sets):
            if getattr(sets, "always", False):
                sets = sets(res, out_dir)
            elif recorded is not None:  # the options the record was made with
                sets = recorded[rid]["sets"]
            else:
                sets = sets(res)
        r, wall = run_one(aifsim, rid, scenario, sets, out_dir)
        if rid == "cal-meter":
            cal_meter_csv(out_dir)
        elif rid.startswith("cal-"):
            r.extra.update(cal_extra(rid, out_dir))
        res[rid] = r
        meta[rid] = {"scenario": scenario, "sets": list(sets), "wall_s": wall}
        log("  %-16s %6.1f s  %s %s" % (rid, wall, scenario, " ".join(
            s.replace("=", " ", 1) if s.startswith("--set-file=")
            else "--set " + s for s in sets)))
    return res, meta


def compute(res, only_complete=False):
    """Every figure whose runs are all in res (all of them, unless
    only_complete): name -> text."""
    figs = {}
    for name, (runs, fn) in FIGURES.items():
        if any(r not in res for r in runs):
            if only_complete:
                continue
            raise KeyError("figure %s needs runs %s" % (name, runs))
        figs[name] = fn(res)
    return figs


# ---------------------------------------------------------------------------
# The README's markers.
# ---------------------------------------------------------------------------
OPEN, CLOSE = "<!-- gallery:", "<!-- /gallery -->"


def markers(text):
    """[(name, value, start, end)] of every marker in text."""
    out, i = [], 0
    while True:
        a = text.find(OPEN, i)
        if a < 0:
            return out
        b = text.find("-->", a)
        name = text[a + len(OPEN):b].strip()
        c = text.find(CLOSE, b)
        if c < 0:
            sys.exit("gallery: README: marker %s is not closed" % name)
        out.append((name, text[b + 3:c], a, c + len(CLOSE)))
        i = c + len(CLOSE)


def rewrite(text, figs):
    parts, last = [], 0
    unknown = []
    for name, _value, a, b in markers(text):
        if name not in figs:
            unknown.append(name)
            continue
        parts.append(text[last:a])
        parts.append("%s%s -->%s%s" % (OPEN, name, figs[name], CLOSE))
        last = b
    parts.append(text[last:])
    if unknown:
        sys.exit("gallery: README names unknown figures: " + ", ".join(unknown))
    return "".join(parts)


def check_readmes(texts, figs):
    """Problems of the pages {path: text} against the figures: a marker
    of no figure or with another value, a figure with no marker."""
    problems = []
    seen = set()
    for path, text in texts.items():
        where = os.path.relpath(path, ROOT)
        for name, value, _a, _b in markers(text):
            seen.add(name)
            if name not in figs:
                problems.append("%s marker %s: no such figure" % (where, name))
            elif value != figs[name]:
                problems.append("%s %s: '%s', the record says '%s'" % (
                    where, name, value, figs[name]))
    for name in sorted(set(figs) - seen):
        problems.append("figure %s has no marker in %s" % (
            name, " or ".join(os.path.relpath(p, ROOT) for p in texts)))
    return problems


def read_readmes(paths):
    texts = {}
    for path in paths:
        with open(path) as f:
            texts[path] = f.read()
    return texts


def write_readmes(paths, figs):
    """Rewrites the markers of every page; the pages as written."""
    texts = {}
    for path, text in read_readmes(paths).items():
        texts[path] = rewrite(text, figs)
        with open(path, "w") as f:
            f.write(texts[path])
    return texts


def picture(aifsim, out_dir):
    """README.md's picture: the report of quickstart.yaml as `make run`
    runs it, into a file of the name `make run` gives (the report's
    subtitle shows it)."""
    run = os.path.join(out_dir, "picture", "quickstart.h5")
    os.makedirs(os.path.dirname(run), exist_ok=True)
    cmd = [aifsim, "run", os.path.join(ROOT, "scenarios", "quickstart.yaml"),
           "-o", run, "--quiet", "--force"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("gallery: %s failed: %s" % (" ".join(cmd), p.stderr))
    os.makedirs(os.path.dirname(PICTURE), exist_ok=True)
    cmd = [os.path.join(ROOT, "tools", "aifsim-py"), "report", run,
           "--png", PICTURE]
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, MPLBACKEND="Agg"))
    if p.returncode != 0:
        sys.exit("gallery: %s failed: %s" % (" ".join(cmd), p.stderr))
    print("gallery: drew %s (%s)" % (os.path.relpath(PICTURE, ROOT),
                                    " ".join(os.path.relpath(c, ROOT)
                                             if c.startswith(ROOT) else c
                                             for c in cmd)))


def record_of(res, meta, old=None):
    """gallery.json's content from results and metadata (after compute)."""
    runs = dict((old or {}).get("runs", {}))
    checks = {rid: check for rid, _s, _o, check in RUNS}
    for rid in res:
        runs[rid] = dict(meta[rid], scenario_sha256=sha256(
            recorded_file(meta[rid]["scenario"])),
            check=checks[rid], result=res[rid].to_json())
    return {
        "about": "written by tools/gallery.py (make gallery): the runs "
                 "behind the numbers of scenarios/README.md and README.md; "
                 "do not edit",
        "runs": {rid: runs[rid] for rid, _s, _o, _c in RUNS},
        "figures": {},
    }


def question_runs(n, readme=READMES[0]):
    """The runs behind question N: those the figures marked in its section
    of scenarios/README.md (from `## N.` to the next `## `) read."""
    with open(readme) as f:
        text = f.read()
    head = "\n## %d. " % n
    a = text.find(head)
    if a < 0:
        sys.exit("gallery: %s has no question %d" % (
            os.path.relpath(readme, ROOT), n))
    b = text.find("\n## ", a + len(head))
    section = text[a:b if b >= 0 else len(text)]
    return {rid for name, _v, _a, _b in markers(section) if name in FIGURES
            for rid in FIGURES[name][0]}


def update_runs(aifsim, a, ids):
    """--runs: runs ids, keeps the other runs' recorded results."""
    unknown = ids - {rid for rid, _s, _o, _c in RUNS}
    if unknown:
        sys.exit("gallery: no such runs: " + ", ".join(sorted(unknown)))
    with open(a.record) as f:
        old = json.load(f)
    res, meta = run_all(aifsim, a.out, only=ids, recorded=old["runs"])
    stored = {rid: Result.from_json(r["result"])
              for rid, r in old["runs"].items() if rid not in ids}
    figs = compute({**stored, **res})
    record = record_of(res, meta, old)
    record["figures"] = figs
    with open(a.record, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    new = write_readmes(a.readme, figs)
    for m in check_readmes(new, figs):
        print("gallery: note: " + m)
    print("gallery: ran %s; wrote %s and %s" % (
        ", ".join(sorted(ids)), ", ".join(os.path.relpath(p, ROOT)
                                          for p in a.readme),
        os.path.relpath(a.record, ROOT)))
    return 0


# ---------------------------------------------------------------------------
# The figures: name -> ("compare" or "report", the runs, in order).
# ---------------------------------------------------------------------------
PLOTS = [
    ("precision-compare", "compare", ["prec-fp16", "prec-fp4"]),
    ("ppw-compare", "compare", ["ppw-static", "ppw-efficiency"]),
    ("speed-tuning-compare", "compare", ["st-off", "st-on"]),
    ("dr-report", "report", ["dr"]),
    ("carbon-aware-report", "report", ["ga-ca-carbon"]),
    ("cooling-compare", "compare", ["cool-fra-liquid", "cool-fra-air",
                                    "cool-dal-liquid", "cool-dal-air"]),
    ("cooling-report", "report", ["cool-dal-air"]),
    ("os-compare", "compare", ["os-320", "os-416"]),
    ("smoothing-compare", "compare", ["sm-off", "sm-rack", "sm-battery"]),
    ("ivt-report", "report", ["ivt"]),
    ("failures-report", "report", ["fail-30min"]),
    ("demand-charge-compare", "compare", ["dc-free", "dc-cap"]),
    ("moe-compare", "compare", ["md-dense-high", "md-moe-high"]),
    ("calibrated-report", "report", ["cal-calibrated"]),
]


def draw_plots(out):
    """PLOTS from the runs in `out` into out/plots/, with the analysis
    package. Returns the number of figures drawn."""
    import matplotlib
    matplotlib.use("Agg")
    from aifsim import reports
    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    drawn = 0
    for name, kind, rids in PLOTS:
        paths = [os.path.join(out, rid + ".h5") for rid in rids]
        missing = [p for p in paths if not os.path.exists(p)]
        if missing:
            print("gallery: %s: skipped, no %s" % (name, ", ".join(
                os.path.relpath(p, ROOT) for p in missing)))
            continue
        png = os.path.join(out, "plots", name + ".png")
        runs = [aifsim.open_run(p) for p in paths]
        if kind == "report":
            reports.write_report(runs[0], png=png)
        else:
            reports.compare_figure(runs).savefig(png)
        print("gallery: wrote %s" % os.path.relpath(png, ROOT))
        drawn += 1
    return drawn


# ---------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", help="the build directory (aifsim)")
    ap.add_argument("--check", action="store_true",
                    help="fail when the README or gallery.json is stale")
    ap.add_argument("--no-run", action="store_true",
                    help="with --check: steps 1 and 2 only")
    ap.add_argument("--readme", action="append",
                    help="a page with markers (repeat; default: "
                    "scenarios/README.md and README.md)")
    ap.add_argument("--runs", help="with BUILD_DIR: run only these runs "
                    "(comma-separated ids) and keep the others' recorded "
                    "results")
    ap.add_argument("--only", type=int, metavar="N",
                    help="with BUILD_DIR: only question N's runs (the runs "
                    "its section's figures read), as --runs; with --dry or "
                    "--check, only its fast runs are run")
    ap.add_argument("--picture", action="store_true",
                    help="only draw README.md's picture (docs/img/)")
    ap.add_argument("--record", default=RECORD)
    ap.add_argument("--out", default=OUT, help="where the runs go")
    ap.add_argument("--list", action="store_true", help="list the runs")
    ap.add_argument("--rewrite", action="store_true",
                    help="no runs: rewrite the README from gallery.json's "
                    "stored results (after editing its prose or a figure's "
                    "format)")
    ap.add_argument("--plots", action="store_true",
                    help="draw the gallery's figures from the runs in --out "
                    "into OUT/plots/ (no runs)")
    ap.add_argument("--dry", action="store_true",
                    help="run the fast runs only and print their figures "
                    "(writes nothing; for trying a change)")
    a = ap.parse_args()
    a.readme = a.readme or READMES

    if a.list:
        for rid, scenario, sets, check in RUNS:
            print("%-16s %-28s %s%s" % (rid, scenario, "(from dc-free) "
                                        if callable(sets) else
                                        " ".join("--set " + s for s in sets),
                                        " [check]" if check else ""))
        return 0
    if a.plots:
        return 0 if draw_plots(a.out) else 1
    if a.rewrite:
        with open(a.record) as f:
            record = json.load(f)
        stored = {rid: Result.from_json(r["result"])
                  for rid, r in record["runs"].items()}
        record["figures"] = compute(stored)
        with open(a.record, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
        new = write_readmes(a.readme, record["figures"])
        for m in check_readmes(new, record["figures"]):
            print("gallery: note: " + m)
        print("gallery: rewrote %s from %s" % (", ".join(a.readme), a.record))
        return 0
    if not a.build and not (a.check and a.no_run):
        ap.error("give the build directory")
    aifsim = os.path.join(a.build, "aifsim") if a.build else None
    if a.picture:
        picture(aifsim, a.out)
        return 0
    only = question_runs(a.only) if a.only is not None else None
    if a.runs or (only and not a.dry and not a.check):
        return update_runs(aifsim, a, set(a.runs.split(",")) if a.runs
                           else only)

    if a.dry:
        fast = {rid for rid, _s, _o, check in RUNS if check
                and (only is None or rid in only)}
        res, _meta = run_all(aifsim, a.out, only=fast)
        for name, value in sorted(compute(res, only_complete=True).items()):
            if only is None or FIGURES[name][0]:  # --only: none of no run
                print("%-28s %s" % (name, value))
        return 0
    if not a.check:
        print("gallery: %d runs with %s into %s" % (len(RUNS), aifsim, a.out))
        res, meta = run_all(aifsim, a.out)
        figs = compute(res)
        record = record_of(res, meta)
        record["figures"] = figs
        with open(a.record, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
        new = write_readmes(a.readme, figs)
        for m in check_readmes(new, figs):
            print("gallery: note: " + m)
        print("gallery: %d figures from %d runs (%.0f s of runs); wrote %s and %s"
              % (len(figs), len(res), sum(m["wall_s"] for m in meta.values()),
                 ", ".join(os.path.relpath(p, ROOT) for p in a.readme),
                 os.path.relpath(a.record, ROOT)))
        picture(aifsim, a.out)
        return 0

    # --check
    with open(a.record) as f:
        record = json.load(f)
    figs = record["figures"]
    problems = check_readmes(read_readmes(a.readme), figs)
    # The record itself is consistent: its stored results give its figures.
    stored = {rid: Result.from_json(r["result"])
              for rid, r in record["runs"].items()}
    for name, value in compute(stored).items():
        if figs.get(name) != value:
            problems.append("gallery.json %s: '%s', its runs give '%s'" % (
                name, figs.get(name), value))
    for rid, scenario, _sets, _check in RUNS:
        r = record["runs"].get(rid)
        if r is None:
            problems.append("run %s is not in gallery.json" % rid)
            continue
        h = sha256(recorded_file(scenario))
        if r["scenario"] != scenario or r["scenario_sha256"] != h:
            problems.append("%s changed since gallery.json was written "
                            "(run %s)" % (os.path.relpath(
                                recorded_file(scenario), ROOT), rid))
    print("gallery: README markers and scenario hashes: %s" % (
        "%d problems" % len(problems) if problems else "ok"))
    if not a.no_run and not problems:
        fast = {rid for rid, _s, _o, check in RUNS if check
                and (only is None or rid in only)}
        print("gallery: running the %d fast runs again" % len(fast))
        res, _meta = run_all(aifsim, a.out, only=fast,
                             recorded=record["runs"])
        for name, value in compute(res, only_complete=True).items():
            if figs.get(name) != value:
                problems.append("%s: the model now gives '%s', the README "
                                "says '%s'" % (name, value, figs.get(name)))
    for p in problems:
        print("gallery: STALE: " + p)
    if problems:
        print("gallery: stale; regenerate with `make gallery` and commit "
              "scenarios/README.md and scenarios/gallery.json")
        return 1
    print("gallery: fresh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
