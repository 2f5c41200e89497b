"""Several runs compared in one figure: what differs between them.

``compare_figure(runs)`` draws, under one legend of the runs (each a colour
and a line style, labelled by ``--label`` or by the ``--set`` keys whose
values differ, in the user's units, rounded; the legend wraps and stays
inside the figure):

- the summary figures that differ between the runs as horizontal bars, the
  key ones first (tokens/J, training tokens, energy, PUE, cost, CO2, SLO
  attainment) then the rest by how much they change; each bar's value, and
  its change from the first run, is its row's label, so labels never
  overlap;
- the /facility series that differ, overlaid (facility power with the
  caps first; bands of each hour or day, min to max, over many samples);
- when the largest power ramp differs and the runs kept the power-quality
  window (/power_quality), the facility power at the window's rate around
  the largest swing, and the largest ramp in each second on a log scale:
  the smoothing question's plot.
"""

from __future__ import annotations

import html
import math
import textwrap
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from . import plot as _p
from . import tables as _t
from . import units as _u

#: The figures a comparison shows first, when they differ.
KEY_METRICS = ("tokens_per_joule", "training_tokens", "energy_mwh",
               "mean_pue", "cost", "co2_t", "slo_attainment")
#: Inputs rather than outcomes: the labels say them.
INPUTS = ("gpus", "racks", "duration_s", "cap_w")
#: At most this many bar panels, this many to a row.
MAX_BARS, BARS_PER_ROW = 8, 4
#: Legend labels wrap at this many characters.
WRAP = 48


def wrap(label, width=WRAP):
    """A legend label wrapped at its commas' spaces."""
    return textwrap.fill(label, width, break_on_hyphens=False,
                         break_long_words=False)


def _value(run, key):
    v = run.summary.get(key)
    try:
        v = float(v)
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) else math.nan


def _change(vals):
    """The largest relative change from the first run (inf from zero)."""
    a = vals[0]
    if not np.isfinite(a):
        return math.inf
    d = max((abs(v - a) for v in vals[1:] if np.isfinite(v)), default=0.0)
    return d / abs(a) if a != 0 else (math.inf if d > 0 else 0.0)


def compare_metrics(runs, limit=MAX_BARS):
    """The /summary keys a comparison draws as bars: those whose values, as
    the tables show them, differ between the runs (inputs such as GPUs and
    the cap left out: the labels say them); KEY_METRICS first, then the
    others by their largest relative change from the first run."""
    sums = [_t._summary(r) for r in runs]
    keys = _t._order({k for s in sums for k in s})
    differ = []
    for k in keys:
        if k in INPUTS or not any(_t._shown(k, s, r)
                                  for s, r in zip(sums, runs)):
            continue
        vals = [_value(r, k) for r in runs]
        if not any(np.isfinite(vals)) or isinstance(sums[0].get(k), str):
            continue
        if len({_t.format_metric(k, v) for v in vals}) > 1:
            differ.append(k)
    first = [k for k in KEY_METRICS if k in differ]
    rest = sorted((k for k in differ if k not in first),
                  key=lambda k: -_change([_value(r, k) for r in runs]))
    return (first + rest)[:limit]


def compare_bars(runs, key, ax, labels=None):
    """One summary figure of several runs as horizontal bars, the first run
    on top, told apart by colour (the figure's legend). Each row's value,
    and after the first its change from the first (in %, or the change
    itself from a value at or below zero), stands right of the axes, one
    line a row, so the labels line up as a column and never overlap;
    the layout makes room for them."""
    vals = np.array([_value(r, key) for r in runs])
    units = _t.metric_units(key)
    finite = vals[np.isfinite(vals)]
    mag = np.max(np.abs(finite)) if len(finite) else 1.0
    f = 1.0
    if units in ("", None) or (units == "1" and mag >= 100):  # counts
        f = next((d for d in (1e12, 1e9, 1e6) if mag >= d), 1.0)
    elif units not in ("$", "1"):
        f, _ = _u.display_scale(units, mag)
    n = len(runs)
    ys = np.arange(n)[::-1]
    colors = [_p._run_style(k)[0] for k in range(n)]
    ax.barh(ys, np.nan_to_num(vals) / f, color=colors, height=0.7,
            edgecolor="black", lw=0.6)
    tr = ax.get_yaxis_transform()  # x in axes fraction, y in data
    for k, v in enumerate(vals):
        text = _t.format_metric(key, v)
        if k > 0 and np.isfinite(v) and np.isfinite(vals[0]):
            change = (_t.percent_text(vals[0], v) if vals[0] > 0
                      else _t.delta_text(key, v - vals[0]))
            text += " (%s)" % change
        ax.text(1.03, ys[k], text, transform=tr, ha="left", va="center",
                fontsize=8.5, clip_on=False,
                fontweight="bold" if k > 0 else None)
    lo = min(0.0, np.nanmin(np.nan_to_num(vals)) / f)
    hi = max(0.0, np.nanmax(np.nan_to_num(vals)) / f)
    pad = 0.03 * (hi - lo if hi > lo else 1.0)
    ax.set_xlim(lo - (pad if lo < 0 else 0), hi + pad)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    ax.spines["left"].set_position(("data", 0))  # bars from zero
    ax.set_title(wrap(_t.label(key), 30), fontsize=9.5, loc="left")
    return ax


# -- the power-quality window -----------------------------------------------

def _moves_within_periods(run):
    """Whether the run's power-quality window moves within control periods
    (a training job's phases, or a smoothed feed's ramps): its power
    changes at most samples, not only where a period's power is set."""
    d = _pq(run)
    return d is not None and np.mean(np.diff(d[1]) != 0) > 0.1


def has_ramps(runs, metrics=None):
    """Whether the comparison shows the ramp panels: the largest ramp
    differs and some run's power-quality window moves within control
    periods (else its ramps are the periods' steps, and the bars say
    them)."""
    metrics = compare_metrics(runs) if metrics is None else metrics
    return "max_ramp_w_per_s" in metrics and any(
        _moves_within_periods(r) for r in runs)


def _pq(run):
    """(times, power, rate) of a run's power-quality window, or None."""
    pq = run.power_quality
    if len(pq) < 2 or "power_w" not in pq.columns:
        return None
    rate = float(pq.attrs.get("rate_hz") or 0) or \
        1.0 / float(np.median(np.diff(pq.index.to_numpy(dtype=float))))
    return pq.index.to_numpy(dtype=float), pq["power_w"].to_numpy(
        dtype=float), rate


def ramp_window(runs, ax, span_s=30.0):
    """Facility power at the window's rate for `span_s` around the largest
    swing of the run that swings most: what the feed sees inside a control
    period."""
    data = [_pq(r) for r in runs]
    have = [(k, d) for k, d in enumerate(data) if d is not None]
    if not have:
        return _p.not_in_run(ax, "the power-quality window")
    steps = [(np.max(np.abs(np.diff(d[1]))), k, d) for k, d in have]
    _, _k, (t, p, _rate) = max(steps, key=lambda s: s[0])
    i = int(np.argmax(np.abs(np.diff(p))))
    t0 = max(t[0] - 1.0 / _rate, t[i] - span_s / 2)
    t1 = min(t[-1], t0 + span_s)
    top = max(np.nanmax(d[1]) for _, d in have)
    pf, pu = _u.display_scale("W", top)
    for k, (tt, pp, rate) in have:
        m = (tt > t0) & (tt <= t1 + 0.5 / rate)
        color, ls = _p._run_style(k)
        ax.stairs(pp[m] / pf, np.concatenate([[tt[m][0] - 1.0 / rate],
                                              tt[m]]),
                  color=color, ls=ls, lw=1.2, baseline=None)
    ax.set_xlim(t0, t1)
    ax.set_xlabel("time since the start (s)")
    ax.set_ylabel("facility power (%s)" % pu)
    ax.set_title("facility power at %s, %g s around the largest swing"
                 % (_u.format_value(have[0][1][2], "Hz"), span_s))
    ax.grid(alpha=0.3)
    return ax


def ramp_rate(runs, ax):
    """The largest ramp |dP/dt| in each second (each few seconds of a long
    window: at most about 150 steps) of the power-quality window, per run,
    on a log scale (a smoothed feed ramps thousands of times more slowly
    than a swinging one)."""
    data = [_pq(r) for r in runs]
    have = [(k, d) for k, d in enumerate(data) if d is not None]
    if not have:
        return _p.not_in_run(ax, "the power-quality window")
    from .timeaxis import TimeAxis
    span = max(d[0][-1] for _, d in have)
    ta = TimeAxis(span)
    ta.apply(ax)
    step = max(1, int(round((span - min(d[0][0] for _, d in have)) / 150)))
    lo, hi = math.inf, 0.0
    for k, (t, p, rate) in have:
        r = np.abs(np.diff(p)) * rate
        sec = (np.floor(t[1:] / step - 1e-9) * step).astype(np.int64)
        cut = np.flatnonzero(np.diff(sec)) + 1
        starts = np.concatenate([[0], cut])
        peak = np.maximum.reduceat(r, starts)
        e = np.concatenate([sec[starts], [sec[-1] + step]]).astype(float)
        shown = np.where(peak > 0, peak, np.nan)
        if np.isfinite(shown).any():
            lo = min(lo, np.nanmin(shown))
            hi = max(hi, np.nanmax(shown))
        color, ls = _p._run_style(k)
        ax.stairs(shown / 1e3, ta.x(e), color=color, ls=ls, lw=1.2,
                  baseline=None)
    ax.set_yscale("log")
    if hi > 0:
        ax.set_ylim(max(lo, hi * 1e-6) / 2e3, hi * 3 / 1e3)
    ax.set_ylabel("largest ramp in each %s (kW/s, log)" % (
        "second" if step == 1 else "%d s" % step))
    ax.set_title("ramp rate at the feed over the power-quality window")
    ax.grid(alpha=0.3, which="major")
    return ax


# -- the figure ---------------------------------------------------------------

def _legend_handles(n):
    from matplotlib.lines import Line2D
    return [Line2D([0], [0], color=_p._run_style(k)[0],
                   ls=_p._run_style(k)[1], lw=2.0, marker="s", ms=10,
                   mfc=_p._run_style(k)[0], mec="black", mew=0.6)
            for k in range(n)]


def _legend_rows(labels):
    """(columns, text lines) the runs' legend takes."""
    wrapped = [wrap(lab) for lab in labels]
    ncol = 2 if len(labels) > 1 and max(len(w.split("\n")[0])
                                        for w in wrapped) <= 40 else 1
    ncol = min(ncol, len(labels))
    per_row = [max(w.count("\n") + 1 for w in wrapped[i:i + ncol])
               for i in range(0, len(wrapped), ncol)]
    return ncol, wrapped, sum(per_row)


def _subtitle(runs):
    """The files and what every run was given alike."""
    common = _t.common_overrides(runs)
    bits = ["runs: " + ", ".join(r.path.name for r in runs)]
    if common:
        bits.append("every run: " + " ".join("--set " + c for c in common))
    return "\n".join(wrap(b, 150) for b in bits)


def compare_figure(runs, dpi=110, labels=None):
    """The figure of several runs (see the module's help). `labels`: one
    per run, else :func:`aifsim.tables.run_labels`."""
    runs = list(runs)
    labels = list(labels) if labels else _t.run_labels(runs)
    keys = compare_metrics(runs)
    overlays = _p.differing_series(runs) or [_p.OVERLAYS[0]]
    ramps = has_ramps(runs, keys)
    ncol, wrapped, lines = _legend_rows(labels)
    n = len(runs)
    per_row = min(max(len(keys), 1), BARS_PER_ROW)
    bar_rows = int(math.ceil(len(keys) / float(per_row))) if keys else 1
    bar_h = 0.3 * n + 0.75
    heights = ([0.25 + 0.2 * lines] + [bar_h] * bar_rows
               + [3.0] * len(overlays) + [2.8, 2.8] * ramps)
    subtitle = _subtitle(runs)
    # The subtitle starts 0.5 in from the top, 0.15 in a line; the layout
    # below it leaves room for the title too.
    top_in = 0.3 + 0.15 * (subtitle.count("\n") + 1)
    fig = Figure(figsize=(12, sum(heights) + 0.45 * len(heights) + top_in),
                 dpi=dpi, layout="constrained")
    gs = fig.add_gridspec(len(heights), 1, height_ratios=heights)
    if keys:
        # Each row of bars its own grid, so its columns' margins (the
        # value labels) are its own, not the overlays' below.
        for r in range(bar_rows):
            sub = gs[1 + r, 0].subgridspec(1, per_row, wspace=0.08)
            for i, k in enumerate(keys[r * per_row:(r + 1) * per_row]):
                compare_bars(runs, k, fig.add_subplot(sub[0, i]), labels)
    else:
        ax = fig.add_subplot(gs[1, :])
        ax.axis("off")
        ax.text(0.5, 0.5, "no summary figure differs between the runs",
                ha="center", va="center", color="0.4", fontsize=11)
    row = 1 + bar_rows
    for j, (col, what, units) in enumerate(overlays):
        ax = fig.add_subplot(gs[row + j, 0])
        if col == "power_w":
            _p.compare_power(runs, ax=ax, labels=labels, legend=False,
                             title="facility power")
        else:
            _p.compare_series(runs, col, what, units, ax=ax, labels=labels,
                              legend=False)
    if ramps:
        row += len(overlays)
        ramp_window(runs, fig.add_subplot(gs[row, 0]))
        ramp_rate(runs, fig.add_subplot(gs[row + 1, 0]))
    lax = fig.add_subplot(gs[0, 0])
    lax.axis("off")
    lax.legend(_legend_handles(n), wrapped, loc="center", ncol=ncol,
               frameon=False, fontsize=10.5, handlelength=3.0,
               columnspacing=2.0)
    fig.suptitle("aifsim comparison: " + " vs ".join(
        dict.fromkeys(r.name for r in runs)), fontsize=14,
        fontweight="bold")
    fig.text(0.5, 1.0 - 0.5 / fig.get_figheight(), subtitle, ha="center",
             va="top", fontsize=8.5, color="0.35")
    fig.get_layout_engine().set(rect=(0, 0, 1, 1 - top_in /
                                      fig.get_figheight()))
    return fig


def default_png(paths):
    """Where `compare` writes its PNG without --png: beside the first run,
    named by the runs ("os-320-vs-os-416.png"; "a-vs-4-runs.png" for more
    than three)."""
    paths = [Path(p) for p in paths]
    stems = [p.stem for p in paths]
    name = "-vs-".join(stems) if len(stems) <= 3 else "%s-vs-%d-runs" % (
        stems[0], len(stems) - 1)
    return paths[0].with_name(name[:200] + ".png")


def compare_html(runs, labels=None, img=None, page=None, table=None):
    """A self-contained page: the files, the table and the figure."""
    labels = list(labels) if labels else _t.run_labels(runs)
    body = ["<h1>aifsim comparison</h1>",
            "<p class=\"meta\">%s</p>" % "<br>".join(
                html.escape("%s: %s" % (lab, r.path)) for lab, r in
                zip(labels, runs)),
            table(runs, labels).to_html(index=False, border=0),
            "<p>%s</p>" % img(compare_figure(runs, dpi=100, labels=labels))]
    return page("aifsim comparison", "\n".join(body))
