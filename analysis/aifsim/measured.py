"""Measured power beside a run: ASHRAE Guideline 14's error metrics and a
figure of measured over simulated with the residual beneath.

The measured file is a CSV (docs/CALIBRATION.md)::

    timestamp,facility_kW
    2026-07-01T00:00:00Z,612.3
    2026-07-01T00:15:00Z,618.9

``timestamp`` is ISO 8601 with its zone (``Z`` or ``+02:00``): a time
without one is refused, not guessed. Each other column is ``SCOPE_UNIT``:
the unit W, kW or MW; the scope ``facility`` (at the grid), ``it``,
``gpu``, ``cooling``, ``rack:NAME`` (one rack, e.g. ``rack:hgx-h100-3``, or
a rack group, the sum of its racks) or ``job:NAME`` (a job's power while it
runs; the run records a job's energy, not its series, so a job is compared
by its mean power over its run only). A row is the mean power over the
interval from its time to the next row's (a meter's interval data); the
last row's interval is as long as the one before.

Alignment: the run's t = 0 is its ``start_utc`` (written when the
scenario's signals give a clock), else ``start`` given by the caller, else
the first row's time. Both series are averaged onto common intervals (the
coarser of the meter's and the run's sample period) and the intervals both
cover whole are kept; from them, hourly means over the clock hours (UTC)
covered whole, and monthly means over the calendar months covered whole.

Metrics (Guideline 14, with p = 1 parameter in the denominators, as
``aifsim calibrate`` computes them): with m measured, s simulated, n
intervals and mean measured M, CV(RMSE) = sqrt(sum (m - s)^2 / (n - 1)) / M,
NMBE = sum (m - s) / ((n - 1) M) (positive: the model reads low), MAPE =
mean |m - s| / |m|. Guideline 14 calls a model calibrated at CV(RMSE) <= 30%
and |NMBE| <= 10% on hourly data, 15% and 5% on monthly.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import AifsimError

#: Guideline 14's thresholds: resolution -> (CV(RMSE), |NMBE|).
THRESHOLDS = {"hourly": (0.30, 0.10), "monthly": (0.15, 0.05)}

_UNITS = {"W": 1.0, "kW": 1e3, "MW": 1e6}
_RUN_COLUMNS = {"facility": "power_w", "it": "it_power_w",
                "gpu": "gpu_power_w", "cooling": "cooling_power_w"}
_ZONE = re.compile(r"[T ]\d\d:\d\d(:\d\d(\.\d+)?)?\s*(Z|[+-]\d\d:?\d\d)$")


def read_measured(path):
    """The CSV at path as a frame of W indexed by UTC timestamps (the
    start of each row's interval), with ``attrs["length_s"]`` the last
    row's interval. Raises AifsimError on a file that does not fit."""
    path = Path(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise AifsimError("%s: not a CSV of timestamps and power: %s"
                          % (path, e)) from None
    if len(raw.columns) < 2 or raw.columns[0] != "timestamp":
        raise AifsimError("%s:1:1: expected a header 'timestamp,SCOPE_UNIT"
                          "[,...]', e.g. timestamp,facility_kW" % path)
    if len(raw) < 2:
        raise AifsimError("%s: fewer than two rows of power" % path)
    for i, t in enumerate(raw["timestamp"]):
        if not _ZONE.search(t.strip()):
            raise AifsimError("%s:%d:1: not a time with its zone like "
                              "2026-07-01T00:00:00Z or 2026-07-01 02:00+02:00"
                              % (path, i + 2))
    idx = pd.DatetimeIndex(pd.to_datetime(raw["timestamp"].str.strip(),
                                          utc=True))
    if not idx.is_monotonic_increasing or idx.has_duplicates:
        raise AifsimError("%s: times must increase row by row" % path)
    out = pd.DataFrame(index=idx.rename("timestamp"))
    for c in raw.columns[1:]:
        scope, unit = _column(path, c)
        v = pd.to_numeric(raw[c].str.strip(), errors="coerce")
        bad = np.flatnonzero(~np.isfinite(v.to_numpy(dtype=float)))
        if len(bad):
            raise AifsimError("%s:%d: column %r: not a number"
                              % (path, bad[0] + 2, c))
        out[c] = v.to_numpy(dtype=float) * _UNITS[unit]
    out.attrs["length_s"] = (idx[-1] - idx[-2]).total_seconds()
    return out


def _column(path, name):
    scope, _, unit = name.rpartition("_")
    ok = unit in _UNITS and (scope in _RUN_COLUMNS or re.match(
        r"^(rack|job):.+", scope))
    if not ok:
        raise AifsimError("%s:1: column %r: a power column is named "
                          "SCOPE_UNIT: SCOPE facility, it, gpu, cooling, "
                          "rack:NAME or job:NAME; UNIT W, kW or MW (e.g. "
                          "facility_kW)" % (path, name))
    return scope, unit


def simulated(run, scope):
    """The run's power as the scope reads it: a Series of W indexed by
    seconds from the start at the start of each sample's interval."""
    f = run.facility
    dt = float(f.index[1] - f.index[0]) if len(f) > 1 else 0.0
    if scope in _RUN_COLUMNS:
        s = f[_RUN_COLUMNS[scope]]
    elif scope.startswith("rack:"):
        s = _rack_power(run, scope[5:])
    else:
        raise AifsimError("scope %r has no series in the run" % scope)
    s = pd.Series(np.asarray(s, dtype=float), index=np.asarray(s.index) - dt)
    s.attrs["sample_s"] = dt
    return s


def _rack_power(run, name):
    p = run.racks["power_w"]
    names = [str(c) for c in p.columns]
    if name in names:
        return p[name]
    group = [c for c in p.columns if re.fullmatch(re.escape(name) + r"-\d+",
                                                  str(c))]
    if not group and len(names) == 1 and name in str(run.racks.columns):
        group = list(p.columns)
    if not group:
        raise AifsimError("the run has no rack or rack group %r; racks: %s"
                          % (name, ", ".join(names[:12])))
    return p[group].sum(axis=1)


def _mean_on(series_t0, values, length_s, step_s):
    """Values over intervals [t, t + length) onto a grid of step_s: the
    time-weighted means of the grid's whole intervals (NaN elsewhere)."""
    t0 = np.asarray(series_t0, dtype=float)
    lo = np.floor(t0 / step_s) * step_s
    bins = pd.Series(np.asarray(values, dtype=float) * length_s, index=lo)
    cover = pd.Series(np.full(len(t0), float(length_s)), index=lo)
    e, c = bins.groupby(level=0).sum(), cover.groupby(level=0).sum()
    whole = c >= step_s - 1e-6
    return (e[whole] / c[whole])


def align(measured, run, column, start=None):
    """Measured and simulated on common intervals: a frame indexed by UTC
    timestamps with columns measured and simulated (W), and the start used
    (and where it came from)."""
    scope = column.rpartition("_")[0]
    sim = simulated(run, scope)
    if run.start_utc is not None:
        t0, origin = pd.Timestamp(run.start_utc), "the run's start_utc"
    elif start is not None:
        t0, origin = pd.Timestamp(start), "--start"
    else:
        t0, origin = measured.index[0], "the measured series' first row"
    if t0.tzinfo is None:
        t0 = t0.tz_localize("UTC")
    tm = (measured.index - t0).total_seconds().to_numpy()
    lm = np.diff(np.append(tm, tm[-1] + measured.attrs["length_s"]))
    step = max(float(np.median(lm)), sim.attrs["sample_s"])
    m = _mean_on(tm, measured[column].to_numpy(), np.median(lm), step)
    s = _mean_on(sim.index, sim.to_numpy(), sim.attrs["sample_s"], step)
    both = pd.concat({"measured": m, "simulated": s}, axis=1).dropna()
    if len(both) < 2:
        raise AifsimError(
            "the measured series and the run do not overlap (%d common "
            "intervals of %g s; t = 0 is %s from %s): check the zone of the "
            "times, --start and the scenario's duration"
            % (len(both), step, t0.isoformat(), origin))
    both.index = t0 + pd.to_timedelta(both.index, unit="s")
    both.attrs.update(step_s=step, start=t0, origin=origin)
    return both


def metrics(m, s):
    """CV(RMSE), NMBE and MAPE (fractions) and n, as the module says."""
    m, s = np.asarray(m, dtype=float), np.asarray(s, dtype=float)
    n = len(m)
    if n < 2:
        return {"n": n, "cv_rmse": np.nan, "nmbe": np.nan, "mape": np.nan}
    d, mean = m - s, m.mean()
    return {"n": n, "cv_rmse": np.sqrt((d * d).sum() / (n - 1)) / mean,
            "nmbe": d.sum() / ((n - 1) * mean),
            "mape": np.mean(np.abs(d) / np.abs(m))}


def _whole(both, rule, expect):
    g = both.resample(rule)
    mean, count = g.mean(), g.count()["measured"]
    return mean[count >= expect(mean.index)].dropna()


def resolutions(both):
    """The common intervals, their whole clock hours and whole months."""
    step = both.attrs["step_s"]
    out = {"interval": both}
    if step <= 3600:
        per_h = int(round(3600 / step))
        out["hourly"] = _whole(both, "1h", lambda i: per_h)
        days = lambda i: i.days_in_month * 86400 / step  # noqa: E731
        out["monthly"] = _whole(both, "MS", days)
    return out


def table(both):
    """One row per resolution: n, MAPE, CV(RMSE), NMBE (percent), and
    Guideline 14's verdict where it sets a threshold."""
    rows = []
    for res, frame in resolutions(both).items():
        x = metrics(frame["measured"], frame["simulated"])
        cv_max, nmbe_max = THRESHOLDS.get(res, (np.nan, np.nan))
        verdict = ""
        if res in THRESHOLDS:
            verdict = ("needs 2 whole %s" % ("hours" if res == "hourly"
                                             else "months")
                       if x["n"] < 2 else
                       "calibrated" if x["cv_rmse"] <= cv_max and
                       abs(x["nmbe"]) <= nmbe_max else "not calibrated")
        rows.append({"resolution": res, "n": x["n"],
                     "MAPE %": 100 * x["mape"],
                     "CV(RMSE) %": 100 * x["cv_rmse"],
                     "NMBE %": 100 * x["nmbe"],
                     "CV(RMSE) max %": 100 * cv_max,
                     "|NMBE| max %": 100 * nmbe_max,
                     "Guideline 14": verdict})
    return pd.DataFrame(rows)


def figure(both, column, title=None, dpi=110):
    """Measured over simulated, the residual (simulated - measured)
    beneath, on the common intervals."""
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(2, 1, figsize=(10, 5.6), sharex=True,
                               gridspec_kw={"height_ratios": [3, 1.4]},
                               dpi=dpi, constrained_layout=True)
    scale, unit = _scale(both["measured"].abs().max())
    t = both.index.tz_convert("UTC").tz_localize(None)
    a.plot(t, both["measured"] / scale, color="black", lw=1.4,
           label="measured")
    a.plot(t, both["simulated"] / scale, color="tab:orange", lw=1.2,
           label="simulated")
    a.set_ylabel("%s (%s)" % (column.rpartition("_")[0], unit))
    a.legend(loc="best", frameon=False)
    x = metrics(both["measured"], both["simulated"])
    a.set_title(title or "Measured and simulated %s, every %g min: CV(RMSE) "
                "%.1f%%, NMBE %+.1f%%" % (column.rpartition("_")[0],
                                          both.attrs["step_s"] / 60,
                                          100 * x["cv_rmse"],
                                          100 * x["nmbe"]), fontsize=10)
    r = (both["simulated"] - both["measured"]) / scale
    b.axhline(0, color="grey", lw=0.8)
    b.plot(t, r, color="tab:blue", lw=1.0)
    b.fill_between(t, 0, r, color="tab:blue", alpha=0.25, lw=0)
    b.set_ylabel("simulated -\nmeasured (%s)" % unit)
    b.set_xlabel("time (UTC)")
    from matplotlib import dates as mdates
    loc = mdates.AutoDateLocator()
    b.xaxis.set_major_locator(loc)
    b.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))
    for ax in (a, b):
        ax.grid(alpha=0.3)
    return fig


def _scale(peak):
    for s, u in ((1e6, "MW"), (1e3, "kW")):
        if peak >= s:
            return s, u
    return 1.0, "W"


def job_means(measured, run, column, start=None):
    """A job column: the job's mean power over its run, measured (the rows
    within it) and simulated (its energy over its time)."""
    name = column.rpartition("_")[0][4:]
    jobs = run.jobs
    row = jobs[jobs["name"].astype(str) == name] if len(jobs) else jobs
    if len(row) == 0:
        raise AifsimError("the run has no job %r" % name)
    j = row.iloc[0]
    t0 = pd.Timestamp(run.start_utc) if run.start_utc is not None else (
        pd.Timestamp(start) if start is not None else measured.index[0])
    if t0.tzinfo is None:
        t0 = t0.tz_localize("UTC")
    a = t0 + pd.to_timedelta(float(j["start_s"]), unit="s")
    b = t0 + pd.to_timedelta(float(j["end_s"]), unit="s")
    inside = measured[column][(measured.index >= a) & (measured.index < b)]
    if len(inside) == 0:
        raise AifsimError("no measured row of %r falls within job %r's run"
                          % (column, name))
    sim = float(j["energy_j"]) / max(float(j["end_s"] - j["start_s"]), 1e-9)
    return float(inside.mean()), sim
