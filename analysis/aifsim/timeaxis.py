"""Time along x, chosen from the span: every plot of a run or of several
runs places its samples through a :class:`TimeAxis`.

With the run's wall-clock start known (``run.start_utc``), x is a
matplotlib date and the ticks follow the span: every few minutes for a
half-hour run ("14:05"), hours for a day ("06:00", midnight as "02 Jul"),
days for a week, months for a year ("Feb", January as the year), with the
date the ticks leave out at the axis's end. Without a start, x is time since
the start in s, min, h or d, whichever reads best.

A series of more than :data:`MAX_SAMPLES` samples is drawn as bands: each
hour's, day's or week's minimum to maximum shaded and its mean as the
line, the bin the smallest that leaves at most :data:`MAX_BINS` across the
span (a year of hourly samples: daily bands), rather than every sample,
which at a page's width is a solid block.
"""

from __future__ import annotations

import numpy as np

from . import units as _u

#: Series with more samples than this are drawn as bands (min, mean, max).
MAX_SAMPLES = 1500
#: Bands are the smallest of BINS that leave at most this many.
MAX_BINS = 800
DAY_S = 86400.0
#: The bins bands may take: (seconds, name).
BINS = ((3600.0, "hour"), (DAY_S, "day"), (7 * DAY_S, "week"))


def edges(t_s):
    """Sample times (the end of each interval) -> interval edges."""
    t = np.asarray(t_s, dtype=float)
    if len(t) == 0:
        return np.array([0.0])
    first = t[0] - (t[1] - t[0]) if len(t) > 1 else 0.0
    return np.concatenate([[first], t])


class TimeAxis:
    """Where seconds since the start of a run fall on an x axis, and how the
    axis reads (see the module's help)."""

    def __init__(self, span_s, start=None, nsamples=0):
        self.span_s = float(span_s) if np.isfinite(span_s) else 0.0
        self.start = start
        self.bin_s, self.bin_name = None, None
        if nsamples > MAX_SAMPLES:
            self.bin_s, self.bin_name = next(
                (b for b in BINS if self.span_s / b[0] <= MAX_BINS), BINS[-1])
        if start is not None:
            import pandas as pd
            from matplotlib import dates as mdates
            self.factor, self.unit = DAY_S, "d"
            self.offset = float(mdates.date2num(
                pd.Timestamp(start).to_pydatetime()))
        else:
            self.factor, self.unit = _u.time_scale(self.span_s)
            self.offset = 0.0

    @property
    def dated(self):
        return self.start is not None

    @property
    def banded(self):
        """Whether series are drawn as bands (min, mean, max a bin)."""
        return self.bin_s is not None

    def x(self, t_s):
        """Seconds since the start -> x."""
        return self.offset + np.asarray(t_s, dtype=float) / self.factor

    def apply(self, ax):
        """Ticks, their labels and the axis title of `ax`."""
        if not self.dated:
            ax.set_xlabel("time (%s)" % self.unit)
            return
        from matplotlib import dates as mdates
        loc = mdates.AutoDateLocator(minticks=4, maxticks=10)
        # Levels: years, months, days, hours, minutes, seconds. A tick at
        # the start of the next level up says that level ("02 Jul" at
        # midnight, "Jan" of a year of months as the year).
        fmt = mdates.ConciseDateFormatter(
            loc, formats=["%Y", "%b", "%d %b", "%H:%M", "%H:%M", "%H:%M:%S"],
            zero_formats=["", "%Y", "%d %b", "%d %b", "%H:%M", "%H:%M"],
            offset_formats=["", "%Y", "%b %Y", "%d %b %Y", "%d %b %Y",
                            "%d %b %Y %H:%M"])
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_major_formatter(fmt)
        ax.set_xlabel("date and time (UTC)")

    def bin_offset_s(self):
        """Seconds from the start of the bin the start falls in (UTC hours
        and days; weeks from Monday), so bands follow the calendar; 0
        without a start."""
        if not self.dated or self.bin_s is None:
            return 0.0
        import pandas as pd
        s = pd.Timestamp(self.start)
        origin = s.normalize() - pd.Timedelta(days=s.dayofweek) \
            if self.bin_s > DAY_S else s.normalize()
        return float(((s - origin) / pd.Timedelta(seconds=1)) % self.bin_s)


def axis_for(ax, t_s, run=None):
    """The TimeAxis of samples `t_s` of `run` (its start, if known), applied
    to `ax`."""
    e = edges(t_s)
    span = e[-1] - e[0] if len(e) > 1 else 0.0
    ta = TimeAxis(span, getattr(run, "start_utc", None)
                  if run is not None else None, len(e) - 1)
    ta.apply(ax)
    return ta


def axis_for_runs(ax, runs, spans):
    """One TimeAxis for several runs: dates when every run starts at the
    same known time, else time since the start."""
    starts = {getattr(r, "start_utc", None) for r in runs}
    start = starts.pop() if len(starts) == 1 else None
    n = max((len(r.facility) for r in runs), default=0)
    ta = TimeAxis(max(spans) if spans else 0.0, start, n)
    ta.apply(ax)
    return ta


def bands(t_s, v, bin_s=DAY_S, offset_s=0.0):
    """Samples `v` at interval ends `t_s` in bins of `bin_s` (the start
    `offset_s` into its first): (edges in s, min, mean, max) a bin; a
    bin's mean weighs each interval by its length."""
    e = edges(t_s)
    v = np.asarray(v, dtype=float)
    if len(v) == 0:
        return e, v, v, v
    day = np.floor((e[:-1] + offset_s) / bin_s + 1e-9).astype(np.int64)
    cut = np.flatnonzero(np.diff(day)) + 1
    starts = np.concatenate([[0], cut])
    w = np.diff(e)
    lo = np.fmin.reduceat(v, starts)
    hi = np.fmax.reduceat(v, starts)
    vw = np.where(np.isfinite(v), v, 0.0) * w
    ww = np.where(np.isfinite(v), w, 0.0)
    num, den = np.add.reduceat(vw, starts), np.add.reduceat(ww, starts)
    mean = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    day_edges = np.concatenate([e[starts], [e[-1]]])
    return day_edges, lo, mean, hi


def draw(ax, ta, t_s, v, color, label=None, lw=1.3, ls="-", band=True,
         **kw):
    """One series on `ax` as steps (each sample held over its interval),
    or, for many samples, as bands: each bin's min to max shaded (when
    `band`) and its mean as the line. Returns the line's artist."""
    if ta.banded:
        e, lo, mean, hi = bands(t_s, v, ta.bin_s, ta.bin_offset_s())
        x = ta.x(e)
        if band:
            ax.stairs(hi, x, baseline=lo, fill=True, color=color, alpha=0.2,
                      lw=0)
        return ax.stairs(mean, x, color=color, lw=lw, ls=ls, label=label,
                         baseline=None, **kw)
    return ax.stairs(v, ta.x(edges(t_s)), color=color, lw=lw, ls=ls,
                     label=label, baseline=None, **kw)


def resample(ta, t_s, v):
    """(interval edges in s, values) as the plot shows them: the samples,
    or each bin's mean."""
    if ta.banded:
        e, _lo, mean, _hi = bands(t_s, v, ta.bin_s, ta.bin_offset_s())
        return e, mean
    return edges(t_s), np.asarray(v, dtype=float)


def band_text(ta):
    """"hourly mean; shaded: the hour's min to max", or "" unbanded."""
    if not ta.banded:
        return ""
    adj = {"hour": "hourly", "day": "daily", "week": "weekly"}[ta.bin_name]
    return "%s mean; shaded or outlined: the %s's min to max" % (
        adj, ta.bin_name)


def note_bands(ax, ta):
    """Says on the axes that the lines are bins' means and the shading
    their range."""
    if ta.banded:
        ax.text(0.995, 0.01, band_text(ta), transform=ax.transAxes,
                ha="right", va="bottom", fontsize=7.5, color="0.35",
                bbox=dict(facecolor="white", alpha=0.7, edgecolor="none",
                          pad=1.0))
