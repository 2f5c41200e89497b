"""Plots of a run, a comparison or a sweep: one call each.

Every function takes what it draws (a Run, a list of runs, a Sweep) and an
optional matplotlib Axes (or a list of them); without one it makes a new
figure with pyplot. Each returns the Axes it drew on. A plot that needs a
series the run does not have says "not in this run" on its axes instead of
failing; ``has_*`` functions tell beforehand.

Time runs along x as dates when the run's start is known, else in s, min,
h or d, with ticks chosen from the span, and bands (min, mean, max) of an
hour or a day over many samples (aifsim.timeaxis); powers in W, kW, MW or
GW, every label with its unit.
"""

from __future__ import annotations

import re

import numpy as np

from . import units as _u
from .timeaxis import (axis_for, axis_for_runs, draw,
                       edges as _edges, note_bands, resample)

CAP_COLOR = "#d62728"
BANDS = {  # facility power components, bottom to top
    "GPUs: inference": "#08519c",
    "GPUs: training": "#6a51a3",
    "GPUs: idle and background": "#6baed6",
    "GPUs": "#1f77b4",
    "other IT (CPUs, network, fans, PSUs)": "#c6dbef",
    "IT": "#1f77b4",
    "cooling": "#2ca02c",
    "losses": "#ff7f0e",
    "other facility": "#c7c7c7",
    "facility": "#9ecae1",
}
DR_COLOR = "#fdd835"
#: Runs and sweep lines differ by marker and line style as well as colour.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
LINESTYLES = ("-", "--", "-.", ":")

DEFER_COLOR = "#8c564b"


# -- helpers -------------------------------------------------------------

def _new_axes(ax, figsize=(10, 4)):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt
    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def start_time(run):
    """The wall-clock time of t = 0 (pandas Timestamp, UTC) or None."""
    return getattr(run, "start_utc", None)


def not_in_run(ax, what, title=None):
    """Mark `ax` as a plot of something the run does not have."""
    ax.text(0.5, 0.5, "%s: not in this run" % what, ha="center",
            va="center", transform=ax.transAxes, color="0.4", fontsize=11)
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title)
    return ax


def _legend_entries(*axes):
    """The legend handles and labels of `axes` (an axes and its twins, each
    counted once): a twin's lines belong in its host's legend."""
    handles, labels = [], []
    for a in dict.fromkeys(axes):
        h, lab = a.get_legend_handles_labels()
        handles += h
        labels += lab
    return handles, labels


def _legend(ax, outside=True, **kw):
    handles, labels = _legend_entries(ax)
    if not handles:
        return None
    if outside:
        kw.setdefault("loc", "upper left")
        kw.setdefault("bbox_to_anchor", (1.01, 1.0))
        kw.setdefault("borderaxespad", 0.0)
    kw.setdefault("frameon", False)
    kw.setdefault("fontsize", 9)
    return ax.legend(handles, labels, **kw)


def _legend_below(ax, twin):
    """Legend of `ax` and its `twin` under the axes, below the time label:
    for panels with a second y axis on the right, where an outside legend
    would sit on its tick labels. `twin` may be `ax` itself (no twin)."""
    from matplotlib.transforms import offset_copy
    handles, labels = _legend_entries(ax, twin)
    if not handles:
        return None
    tr = offset_copy(ax.transAxes, fig=ax.figure, x=0, y=-34,
                     units="points")
    return ax.legend(handles, labels, loc="upper center",
                     bbox_to_anchor=(0.5, 0.0), bbox_transform=tr,
                     ncol=min(4, len(handles)), frameon=False, fontsize=9)


def _windows(t_s, mask):
    """Contiguous intervals (start_s, end_s) where `mask` is true, from
    samples at interval ends."""
    e = _edges(t_s)
    out, start = [], None
    for i, m in enumerate(mask):
        if m and start is None:
            start = e[i]
        if not m and start is not None:
            out.append((start, e[i]))
            start = None
    if start is not None:
        out.append((start, e[-1]))
    return out


def _col(fr, *names):
    for n in names:
        if n in fr.columns:
            return fr[n].to_numpy(dtype=float)
    return None


def _signal(fr, *names):
    """Like _col, but None for a series that is all zero or NaN: a model
    that is not configured (no grid signal, no cooling) writes zeros."""
    for n in names:
        if n in fr.columns:
            v = fr[n].to_numpy(dtype=float)
            if len(v) and np.nanmax(np.abs(np.nan_to_num(v))) > 0:
                return v
    return None


def _cap_text(cap_w):
    cap_w = np.asarray(cap_w, dtype=float)
    if not np.isfinite(cap_w).any():  # no samples
        return "cap"
    if len(cap_w) and np.allclose(cap_w, cap_w[0]):
        return "cap %s" % _u.format_value(cap_w[0], "W")
    return "cap (%s to %s)" % (_u.format_value(np.nanmin(cap_w), "W"),
                               _u.format_value(np.nanmax(cap_w), "W"))


# -- questions -------------------------------------------------------------

def has_pue(run):
    """Whether the run has cooling (a PUE that is not just 1) or an outdoor
    temperature: series a run without those models writes as zeros."""
    fac = run.facility
    return (_signal(fac, "cooling_power_w", "loss_power_w") is not None
            or _signal(fac, "outdoor_c") is not None)


def has_grid(run):
    fac = run.facility
    return _signal(fac, "carbon_g_per_kwh", "price_per_mwh") is not None


def has_services(run):
    return len(run.services.columns) > 0


def dr_windows(run):
    """Demand-response windows as [(start_s, end_s)]: where /facility has a
    ``dr_active`` series, where it is non-zero; otherwise where the cap is
    below its highest value (a DR event lowers the cap)."""
    fac = run.facility
    if fac.empty:
        return []
    t = fac.index.to_numpy()
    active = _col(fac, "dr_active", "dr")
    if active is not None:
        return _windows(t, np.nan_to_num(active) > 0)
    cap = _col(fac, "cap_w")
    if cap is None or not len(cap):
        return []
    top = np.nanmax(cap)
    return _windows(t, cap < top * (1 - 1e-9))


def deferred_jobs(run):
    """The jobs the scheduler held back (deferred or paused): the rows of
    run.jobs with a deferral or pause, or a status saying so."""
    j = run.jobs
    if j.empty:
        return j
    mask = np.zeros(len(j), dtype=bool)
    for c in ("deferred_s", "deferral_s", "paused_s", "pause_s"):
        if c in j.columns:
            mask |= np.nan_to_num(j[c].to_numpy(dtype=float)) > 0
    for c in ("deferred", "paused"):
        if c in j.columns:
            mask |= j[c].astype(bool).to_numpy()
    if "status" in j.columns:
        mask |= j["status"].astype(str).str.contains(
            "defer|pause", case=False).to_numpy()
    return j[mask]


# -- run plots -------------------------------------------------------------

def power_stack(run, ax=None, legend=True, title=None):
    """Facility power stacked by component (GPUs, other IT, cooling,
    losses) with the facility power line, the cap, cap violations and
    demand-response windows shaded."""
    ax = _new_axes(ax)
    fac = run.facility
    title = title or "%s: facility power and cap" % run.name
    power = _col(fac, "power_w")
    if power is None or not len(power):
        return not_in_run(ax, "facility power", title)
    t = fac.index.to_numpy(dtype=float)
    ta = axis_for(ax, t, run)
    cap = _col(fac, "cap_w")
    peak = _col(fac, "peak_power_w")
    top = max(np.nanmax(power), np.nanmax(cap) if cap is not None else 0,
              np.nanmax(peak) if peak is not None else 0)
    pf, pu = _u.display_scale("W", top)

    it, gpu = _col(fac, "it_power_w"), _col(fac, "gpu_power_w")
    bands = []
    if it is not None and gpu is not None:
        bands += gpu_bands(fac, gpu)
        bands.append(("other IT (CPUs, network, fans, PSUs)", it - gpu))
    elif it is not None:
        bands.append(("IT", it))
    for name, col in (("cooling", "cooling_power_w"),
                      ("losses", "loss_power_w")):
        v = _signal(fac, col)
        if v is not None:
            bands.append((name, v))
    if bands:
        rest = power - sum(b[1] for b in bands)
        if np.nanmax(rest) > 1e-6 * max(top, 1.0):
            bands.append(("other facility", np.clip(rest, 0, None)))
    else:
        bands.append(("facility", power))
    # With many samples the bands are each bin's means, and the facility's
    # range in a bin is outlined (timeaxis).
    base = None
    for name, v in bands:
        e, v = resample(ta, t, np.nan_to_num(v))
        base = np.zeros_like(v) if base is None else base
        ax.stairs((base + v) / pf, ta.x(e), baseline=base / pf, fill=True,
                  color=BANDS[name], alpha=0.9, label=name, lw=0)
        base = base + v
    draw(ax, ta, t, power / pf, "black", lw=1.0,
         label="facility power" + (" (%s mean)" % {
             "hour": "hourly", "day": "daily", "week": "weekly"}.get(
                 ta.bin_name) if ta.banded else ""), band=False)
    if ta.banded:
        from .timeaxis import bands as _bands
        e, lo, _m, hi = _bands(t, power, ta.bin_s, ta.bin_offset_s())
        ax.stairs(hi / pf, ta.x(e), baseline=lo / pf, fill=False,
                  color="black", lw=0.5, alpha=0.6)

    for i, (a, b) in enumerate(dr_windows(run)):
        ax.axvspan(ta.x(a), ta.x(b), color=DR_COLOR, alpha=0.35, lw=0,
                   label="demand response (cap lowered)" if i == 0 else None,
                   zorder=0)
    x = ta.x(_edges(t))
    if cap is not None:
        ax.stairs(cap / pf, x, color=CAP_COLOR, lw=2.2, ls="--",
                  label=_cap_text(cap), zorder=5, baseline=None)
        ax.annotate(_cap_text(cap), xy=(x[-1], cap[-1] / pf),
                    xytext=(-4, 4), textcoords="offset points", ha="right",
                    va="bottom", color=CAP_COLOR, fontsize=9,
                    fontweight="bold", zorder=6)
        if peak is not None:
            over = peak > cap * (1 + 1e-9)
            if over.any():
                ax.plot(ta.x(t[over]), peak[over] / pf, "v", color=CAP_COLOR,
                        ms=5, zorder=6,
                        label="over the cap (%d intervals)" % over.sum())
    ax.set_xlim(x[0], x[-1])
    ax.set_ylim(0, top / pf * 1.15)
    note_bands(ax, ta)
    ax.set_ylabel("power (%s)" % pu)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if legend:
        _legend(ax)
    return ax


def gpu_bands(fac, gpu):
    """The GPUs' power split by the work it served: [(name, series)],
    inference and training from /facility's per-work series when the run
    has them, the rest idle or background load; one "GPUs" band
    otherwise."""
    inf = _signal(fac, "inference_power_w")
    train = _signal(fac, "training_power_w")
    if inf is None and train is None:
        return [("GPUs", gpu)]
    out, rest = [], np.array(gpu, dtype=float)
    for name, v in (("GPUs: inference", inf), ("GPUs: training", train)):
        if v is not None:
            v = np.nan_to_num(v)
            out.append((name, v))
            rest = rest - v
    out.append(("GPUs: idle and background", np.clip(rest, 0, None)))
    return out


def pue_temperature(run, ax=None, legend=True, title=None):
    """PUE (left) and outdoor temperature (right) over time."""
    ax = _new_axes(ax)
    fac = run.facility
    given_title = title
    pue = _col(fac, "pue")
    if _signal(fac, "cooling_power_w", "loss_power_w") is None:
        pue = None  # no cooling model: PUE is 1 by construction
    elif pue is None and "it_power_w" in fac.columns:
        pue = _col(fac, "power_w") / _col(fac, "it_power_w")
    temp = _signal(fac, "outdoor_c", "outdoor_temperature_c")
    title = given_title or "%s: %s" % (run.name, (
        "PUE and outdoor temperature" if pue is not None and temp is not None
        else "PUE" if pue is not None else "outdoor temperature"))
    if pue is None and temp is None:
        return not_in_run(ax, "PUE and outdoor temperature", title)
    t = fac.index.to_numpy(dtype=float)
    ta = axis_for(ax, t, run)
    x = ta.x(_edges(t))
    if pue is not None:
        draw(ax, ta, t, pue, "#2ca02c", lw=1.5, label="PUE")
        lo, hi = np.nanmin(pue), np.nanmax(pue)
        pad = max(0.02, 0.1 * (hi - lo))
        ax.set_ylim(min(1.0, lo - pad), hi + pad)
        ax.set_ylabel("PUE (facility / IT power)")
    temp_ax = ax  # the right-hand axis when the PUE takes the left
    if temp is not None:
        temp_ax = ax.twinx() if pue is not None else ax
        draw(temp_ax, ta, t, temp, "#ff7f0e", lw=1.2,
             label="outdoor temperature")
        temp_ax.set_ylabel(_u.label("outdoor temperature", fac.units.get(
            "outdoor_c", "degC")))
    ax.set_xlim(x[0], x[-1])
    ax.set_title(title)
    ax.grid(alpha=0.3)
    note_bands(ax, ta)
    if legend:
        _legend_below(ax, temp_ax)
    return ax


def grid_signals(run, ax=None, legend=True, title=None):
    """Carbon intensity (left) and electricity price (right), with the jobs
    the scheduler deferred or paused marked from arrival to start."""
    ax = _new_axes(ax)
    fac = run.facility
    title = title or "%s: grid carbon intensity and price" % run.name
    carbon = _signal(fac, "carbon_g_per_kwh")
    price = _signal(fac, "price_per_mwh")
    if carbon is None and price is None:
        return not_in_run(ax, "carbon intensity and price", title)
    t = fac.index.to_numpy(dtype=float)
    ta = axis_for(ax, t, run)
    x = ta.x(_edges(t))
    held = deferred_jobs(run)
    room = 1.0 + (0.25 if len(held) else 0.08)
    if carbon is not None:
        draw(ax, ta, t, carbon, "#7f7f7f", lw=1.5, label="carbon intensity")
        ax.set_ylabel(_u.label("carbon intensity", fac.units.get(
            "carbon_g_per_kwh", "gCO2/kWh")), color="#555555")
        ax.set_ylim(0, np.nanmax(carbon) * room)
    else:
        ax.set_yticks([])
    price_ax = ax  # a right-hand axis when there is a price
    if price is not None:
        price_ax = ax.twinx()
        draw(price_ax, ta, t, price, "#9467bd", lw=1.2, label="price")
        cur = run.facility.units.get("price_per_mwh", "$/MWh")
        price_ax.set_ylabel(_u.label("electricity price", cur),
                            color="#9467bd")
        lo = min(0.0, np.nanmin(price))
        hi = max(np.nanmax(price), 0.0)
        lo = lo - 0.04 * (hi - lo) if lo < 0 else lo
        price_ax.set_ylim(lo, lo + (hi - lo) * room)
    if len(held) and "arrival_s" in held.columns:
        tr = ax.get_xaxis_transform()
        start = held["start_s"].to_numpy(dtype=float) \
            if "start_s" in held.columns else held["arrival_s"].to_numpy()
        for i, (a, b) in enumerate(zip(held["arrival_s"].to_numpy(float),
                                       start)):
            y = 0.97 - 0.03 * (i % 6)
            b = a if not np.isfinite(b) else b
            ax.plot(ta.x([a, b]), [y, y], color=DEFER_COLOR, lw=2,
                    transform=tr, solid_capstyle="butt",
                    label=("deferred/paused job (arrival to start)"
                           if i == 0 else None))
            ax.plot(ta.x([b]), [y], ">", color=DEFER_COLOR, ms=4,
                    transform=tr)
    ax.set_xlim(x[0], x[-1])
    ax.set_title(title)
    ax.grid(alpha=0.3)
    note_bands(ax, ta)
    if legend:
        _legend_below(ax, price_ax)
    return ax


_LAT = re.compile(r"^(ttft|tpot|e2e|latency)_p(\d+(?:\.\d+)?)(?:_s)?$")


def _slo(run, service, metric):
    """The SLO of `metric` (ttft, tpot) for a service, in s, or None."""
    info = run.service_info
    if service in info.index:
        for c in ("slo_%s_s" % metric, "%s_slo_s" % metric,
                  "slo_%s" % metric):
            if c in info.columns:
                v = info.loc[service, c]
                try:
                    v = float(v)
                except (TypeError, ValueError):
                    continue
                if np.isfinite(v):
                    return v
    for svc in run.scenario.get("services") or []:
        if isinstance(svc, dict) and str(svc.get("name")) == service:
            slo = svc.get("slo") or {}
            v = slo.get(metric) if isinstance(slo, dict) else None
            if v is None:  # aifsim's own keys: ttft_slo, tpot_slo
                v = svc.get("%s_slo" % metric)
            q = _u.try_quantity(v) if v is not None else None
            if q is not None:
                return q[0]
    return None


def services(run, axes=None, legend=True):
    """Per-service tokens/s, and TTFT and TPOT percentiles on log axes (p50
    and p99 of the same service share its colour, p99 dashed) with each
    SLO drawn once: one red line when the services share it, else one per
    distinct value. `axes`: three Axes (tokens/s, TTFT, TPOT), or None for a
    new figure."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    svc = run.services
    if axes is None:
        import matplotlib.pyplot as plt
        _, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True,
                               layout="constrained")
    ax_tok, ax_ttft, ax_tpot = axes
    if not len(svc.columns):
        for ax, what in zip(axes, ("tokens/s", "TTFT", "TPOT")):
            not_in_run(ax, "services (%s)" % what)
        return axes
    names = list(dict.fromkeys(svc.columns.get_level_values(0)))
    t = svc.index.to_numpy(dtype=float)
    colors = ["C%d" % i for i in range(10)]
    for ax in axes:
        ta = axis_for(ax, t, run)
    styles = ["-", "--", ":", "-."]
    for k, name in enumerate(names):
        sub = svc[name]
        tok = [c for c in sub.columns if c.startswith("tokens_per_s")]
        if tok:
            draw(ax_tok, ta, t,
                 np.nan_to_num(sub[tok[0]].to_numpy(dtype=float)),
                 colors[k % 10], lw=1.2, label=name)
    for metric, ax in (("ttft", ax_ttft), ("tpot", ax_tpot)):
        lo, hi, drew = np.inf, 0.0, False
        slos = {}
        for k, name in enumerate(names):
            sub = svc[name]
            cols = sorted([(float(_LAT.match(c).group(2)), c)
                           for c in sub.columns if _LAT.match(c)
                           and _LAT.match(c).group(1) == metric])
            for j, (pct, c) in enumerate(cols):
                v = sub[c].to_numpy(dtype=float)
                v = np.where(v > 0, v, np.nan)  # log axis; no completions
                if not np.isfinite(v).any():
                    continue
                lo, hi = min(lo, np.nanmin(v)), max(hi, np.nanmax(v))
                draw(ax, ta, t, v, colors[k % 10], lw=1.2, band=False,
                     ls=styles[j % len(styles)],
                     label="%s p%g" % (name, pct))
                drew = True
            slo = _slo(run, name, metric)
            if slo is not None:
                slos.setdefault(round(slo, 12), []).append(name)
        if not drew:
            not_in_run(ax, "%s percentiles" % metric.upper())
            continue
        for value, who in slos.items():
            lo, hi = min(lo, value), max(hi, value)
            text = "SLO %s" % _u.format_value(value, "s")
            if len(slos) > 1:
                text += " (%s)" % ", ".join(who)
            ax.axhline(value, color=CAP_COLOR, ls="--", lw=1.8, alpha=0.9,
                       label=text, zorder=5)
        ax.set_yscale("log")
        ax.set_ylim(lo / 2.0, hi * 2.0)
        ax.yaxis.set_major_locator(LogLocator(base=10))
        ax.yaxis.set_major_formatter(FuncFormatter(
            lambda v, _p: _u.format_value(v, "s") if v < 1 else
            "%g s" % v))
        ax.set_ylabel("%s (s, log)" % metric.upper())
    ax_tok.set_ylabel("output tokens/s")
    ax_tok.set_ylim(bottom=0)
    ax_tok.set_title("%s: inference services" % run.name)
    span = ta.x(_edges(t))
    note_bands(ax_tok, ta)
    for ax in axes:
        ax.set_xlim(span[0], span[-1])
        ax.grid(alpha=0.3, which="major")
        if legend:
            _legend(ax)
    return axes


def rack_heatmap(run, var="power_w", ax=None, title=None):
    """One row per rack, colour = `var` (rack IT power by default)."""
    ax = _new_axes(ax, figsize=(10, 4))
    racks = run.racks
    title = title or "%s: %s, per rack" % (
        run.name, racks.long_names.get(var, var).split(",")[0])
    if not len(racks.columns) or var not in racks.columns.get_level_values(0):
        return not_in_run(ax, "per-rack %s" % var, title)
    sub = racks[var]
    t = sub.index.to_numpy(dtype=float)
    x = axis_for(ax, t, run).x(_edges(t))
    v = sub.to_numpy(dtype=float)
    units = racks.units.get(var, "")
    if units == "1":
        v, shown = v * 100.0, "%"
    else:
        f, shown = _u.display_scale(units, np.nanmax(np.abs(v)))
        v = v / f
    names = [str(c) for c in sub.columns]
    mesh = ax.pcolormesh(x, np.arange(len(names) + 1), v.T, cmap="viridis",
                         shading="flat", rasterized=True)
    step = max(1, int(np.ceil(len(names) / 24)))
    ax.set_yticks(np.arange(0, len(names), step) + 0.5)
    ax.set_yticklabels(names[::step], fontsize=8)
    ax.invert_yaxis()
    ax.set_ylabel("rack")
    cax = ax.inset_axes([1.01, 0.0, 0.018, 1.0])
    cb = ax.figure.colorbar(mesh, cax=cax)
    name = racks.long_names.get(var, var).split(",")[0]
    cb.set_label(_u.label(name, shown), fontsize=9)
    ax.set_title(title)
    return ax


def clocks(run, ax=None, legend=True, title=None):
    """Mean SM clock (solid) and GPU activity (dashed) per rack group, in %
    of the maximum: what the cap costs in speed."""
    ax = _new_axes(ax)
    racks = run.racks
    title = title or "%s: GPU clock and activity by rack group" % run.name
    lv = racks.columns.get_level_values(0) if len(racks.columns) else []
    if "clock_ratio" not in lv and "activity" not in lv:
        return not_in_run(ax, "per-rack clock and activity", title)
    groups = run.rack_groups()
    t = racks.index.to_numpy(dtype=float)
    ta = axis_for(ax, t, run)
    x = ta.x(_edges(t))
    for k, g in enumerate(dict.fromkeys(groups.values())):
        members = [r for r, gg in groups.items() if gg == g]
        color = "C%d" % (k % 10)
        if "clock_ratio" in lv:
            draw(ax, ta, t, 100 * racks["clock_ratio"][members].mean(axis=1),
                 color, lw=1.5, label="%s clock" % g, band=False)
        if "activity" in lv:
            draw(ax, ta, t, 100 * racks["activity"][members].mean(axis=1),
                 color, lw=1.0, ls="--", label="%s activity" % g,
                 band=False)
    ax.set_ylim(0, 105)
    ax.set_xlim(x[0], x[-1])
    ax.set_ylabel("share of maximum (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if legend:
        _legend(ax)
    return ax


# -- several runs ----------------------------------------------------------

def run_labels(runs):
    """Legend labels of runs: the scenario names and what differs between
    their resolved scenarios (`quickstart, power.cap=650 kW`), never the
    file names unless nothing else tells them apart (tables.run_labels)."""
    from .tables import run_labels as labels
    return labels(runs)


#: Series of /facility a comparison overlays when they differ between the
#: runs: (column, what, units).
OVERLAYS = (("power_w", "facility power", "W"),
            ("tokens_per_s", "output tokens/s", "tokens/s"),
            ("training_power_w", "training GPU power", "W"),
            ("inference_power_w", "inference GPU power", "W"),
            ("pue", "PUE", "1"))


def differing_series(runs, candidates=OVERLAYS, rtol=0.01):
    """The candidates (column, what, units) whose series differ between the
    runs, on average over time, by more than `rtol` of their largest value
    (or differ in length); a series all zero or missing in every run is
    skipped."""
    out = []
    for col, what, units in candidates:
        vals = []
        for r in runs:
            v = _col(r.facility, col)
            vals.append(None if v is None else np.nan_to_num(v))
        have = [v for v in vals if v is not None]
        if not have or all(np.max(np.abs(v)) == 0 if len(v) else True
                           for v in have):
            continue
        if len(have) < len(vals) or len({len(v) for v in have}) > 1:
            out.append((col, what, units))
            continue
        scale = max(np.max(np.abs(v)) for v in have)
        if max(np.mean(np.abs(v - have[0])) for v in have[1:]) > \
                rtol * scale:
            out.append((col, what, units))
    return out


def _run_style(k):
    """Colour and line style of the k-th run of a comparison: the bars, the
    lines and the legend all use them."""
    return "C%d" % (k % 10), LINESTYLES[k % len(LINESTYLES)]


def compare_series(runs, col, what, units, ax=None, labels=None,
                   legend=True, title=None):
    """One /facility series of several runs overlaid (bands, min to max an
    hour or a day, over many samples)."""
    ax = _new_axes(ax)
    labels = labels or run_labels(runs)
    spans, tops = [], []
    for r in runs:
        v = _col(r.facility, col)
        if v is not None and len(v):
            spans.append(r.facility.index[-1])
            tops.append(np.nanmax(np.abs(v)))
    if not spans:
        return not_in_run(ax, what, title)
    ta = axis_for_runs(ax, runs, spans)
    f, shown = _u.display_scale(units, max(tops))
    for k, (r, lab) in enumerate(zip(runs, labels)):
        v = _col(r.facility, col)
        if v is None or not len(v):  # a run with no samples: nothing
            continue
        color, ls = _run_style(k)
        draw(ax, ta, r.facility.index.to_numpy(dtype=float), v / f, color,
             ls=ls, lw=1.3, label=lab)
    if units == "1":  # a ratio (PUE): its own range, not from zero
        vals = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in (
            _col(r.facility, col) for r in runs) if v is not None])
        if len(vals):
            lo, hi = np.min(vals), np.max(vals)
            pad = max(0.02, 0.1 * (hi - lo))
            ax.set_ylim(min(1.0, lo - pad), hi + pad)
    # "output tokens/s" says its unit already
    ax.set_ylabel(what if what.endswith(shown) else _u.label(what, shown))
    ax.set_xlim(ta.x(0), ta.x(max(spans)))
    ax.set_title(title or what)
    ax.grid(alpha=0.3)
    note_bands(ax, ta)
    if legend:
        _legend(ax)
    return ax


def compare_power(runs, ax=None, labels=None, legend=True, title=None):
    """Facility power of several runs overlaid, with their caps: one red
    line when they share it, else each run's in its colour, dashed; each
    cap's value is written on its line."""
    ax = _new_axes(ax)
    labels = labels or run_labels(runs)
    tops, spans = [], []
    for r in runs:
        fac = r.facility
        if "power_w" in fac.columns and len(fac):
            tops.append(np.nanmax(fac["power_w"]))
            if "cap_w" in fac.columns:
                tops.append(np.nanmax(fac["cap_w"]))
            spans.append(fac.index[-1])
    if not tops:
        return not_in_run(ax, "facility power", title)
    top = max(tops)
    pf, pu = _u.display_scale("W", top)
    ta = axis_for_runs(ax, runs, spans)
    caps = [tuple(np.round(r.facility["cap_w"].to_numpy(), 3))
            if "cap_w" in r.facility.columns else None for r in runs]
    same_cap = len(set(caps)) == 1 and caps[0] is not None
    for k, (r, lab) in enumerate(zip(runs, labels)):
        fac = r.facility
        if "power_w" not in fac.columns or not len(fac):
            continue
        color, ls = _run_style(k)
        t = fac.index.to_numpy(dtype=float)
        draw(ax, ta, t, fac["power_w"].to_numpy(dtype=float) / pf, color,
             ls=ls, lw=1.3, label=lab)
        if "cap_w" in fac.columns and not same_cap:
            _cap_line(ax, ta, t, fac["cap_w"].to_numpy(dtype=float), pf,
                      color, 1.5)
    if same_cap:
        fac = runs[0].facility
        _cap_line(ax, ta, fac.index.to_numpy(dtype=float),
                  fac["cap_w"].to_numpy(dtype=float), pf, CAP_COLOR, 2.2)
    ax.set_ylabel("facility power (%s)" % pu)
    ax.set_ylim(0, top / pf * 1.15)
    ax.set_xlim(ta.x(0), ta.x(max(spans)))
    ax.set_title(title or "facility power")
    ax.grid(alpha=0.3)
    note_bands(ax, ta)
    if legend:
        _legend(ax)
    return ax


def _cap_line(ax, ta, t, cap, pf, color, lw):
    """A cap as a dashed line with its value written at its right end."""
    x = ta.x(_edges(t))
    ax.stairs(cap / pf, x, color=color, lw=lw, ls="--", label=_cap_text(cap),
              zorder=5, baseline=None)
    ax.annotate(_cap_text(cap), xy=(x[-1], cap[-1] / pf), xytext=(-4, 3),
                textcoords="offset points", ha="right", va="bottom",
                color=color, fontsize=8.5, fontweight="bold", zorder=6,
                bbox=dict(facecolor="white", alpha=0.8, edgecolor="none",
                          pad=1.0))


# -- sweeps ----------------------------------------------------------------

#: The outputs a sweep is run for, in the order its figure shows them:
#: tokens/J, training tokens, cost, CO2, cap violations; a metric absent
#: (NaN) in every point, or zero in every point, is skipped.
PREFERRED_Y = ("tokens_per_joule", "training_tokens", "cost", "co2_t",
               "slo_attainment", "cap_violation_s")
#: When fewer than two of those are there: what the sweep changed most.
FALLBACK_Y = ("energy_mwh", "stranded_mwh", "mean_pue", "peak_power_w",
              "mean_power_w", "jct_mean_s")


def _informative(sweep, col):
    """Whether a metric has a number other than zero in some point."""
    if col not in sweep.columns:
        return False
    v = sweep[col]
    if v.dtype.kind not in "fi":
        v = v.apply(lambda x: _to_float(x))
    v = v.to_numpy(dtype=float)
    return bool(np.isfinite(v).any() and np.nanmax(np.abs(v)) > 0)


def _to_float(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return np.nan


def default_frontier(sweep):
    """(x, [y...], by) a sweep's frontier plot shows by default: the outputs
    that matter (PREFERRED_Y) that some point has, against the cap or the
    first numeric axis, one line per policy or per the next axis."""
    axes = list(sweep.axis_columns or [])
    numeric = [a for a in axes if sweep[a].dtype.kind in "fi" and a != "seed"]
    x = "power.cap" if "power.cap" in axes else (numeric[0] if numeric
                                                 else (axes[0] if axes
                                                       else "point"))
    by = None
    for cand in ("power.policy", "policy"):
        if cand in sweep.columns and cand != x:
            by = cand
            break
    if by is None:
        rest = [a for a in axes if a not in (x, "seed")]
        by = rest[0] if rest else None
    ys = [c for c in PREFERRED_Y if _informative(sweep, c)]
    if len(ys) < 2:
        varying = [c for c in FALLBACK_Y if _informative(sweep, c)
                   and sweep[c].nunique(dropna=True) > 1]
        ys += varying[:3 - len(ys)]
    return x, ys, by


def sweep_title(sweep):
    """The sweep's name (its sweep file's, from summary.h5), else its base
    scenario's."""
    name = getattr(sweep, "attrs", {}).get("sweep_name")
    scen = getattr(sweep, "scenario_name", None)
    if name and scen and scen not in name:
        return "%s (%s)" % (name, scen)
    return name or scen or ""


def _axis_label(sweep, col, values):
    from .tables import label, metric_units
    units = (sweep.units or {}).get(col, "") or (
        "" if col in (sweep.axis_columns or []) else metric_units(col))
    name = col if col in (sweep.axis_columns or []) else label(col)
    mag = np.nanmax(np.abs(values)) if len(values) and \
        np.isfinite(values).any() else 1.0
    # A dimensionless metric within 0-1 is a share, shown in percent;
    # one beyond it a count or a ratio (the file says "1" for all three).
    if units == "1" and "pue" not in col and mag <= 1:
        return 0.01, _name_unit(name, "%")
    if units == "1":
        units = ""
    if units in ("", None) and col not in (sweep.axis_columns or []):
        for div, word in ((1e12, "trillions"), (1e9, "billions"),
                          (1e6, "millions")):
            if mag >= div:
                return div, "%s (%s)" % (name, word)
    f, shown = _u.display_scale(units, mag)
    if units in ("MWh",) and mag < 1:
        f, shown = 1e-3, "kWh"
    if units == "kg" and mag >= 1e3:
        f, shown = 1e3, "t"
    return f, _name_unit(name, shown)


def _name_unit(name, units):
    """'Stranded power (energy, kWh)': the unit joins a name's own
    parenthesis; a name that says its unit (tokens per joule) keeps it."""
    u = _u.pretty(units)
    if not u or u in ("tokens/J",):
        return name
    if name.endswith(")"):
        return "%s, %s)" % (name[:-1], u)
    return "%s (%s)" % (name, u)


def _key_text(value, units):
    """A value of a grouping column as a legend shows it: 550 kW, 42."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer() \
            and units in ("", "1", None):
        return "%d" % value
    if isinstance(value, (int, float, np.number)) and units:
        return _u.format_value(value, units)
    return str(value)


def _sensible_ylim(ax, lo, hi, top=None):
    """Keep a small relative change small: the y range spans at least 20%
    of the values' magnitude (a 0.003 change of a PUE of 1.15 stays flat),
    from zero for values that are all zero."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return
    mag = max(abs(lo), abs(hi))
    if mag == 0:
        ax.set_ylim(-0.05, 1.0)
        return
    if hi - lo < 0.2 * mag:
        mid, half = (lo + hi) / 2.0, 0.1 * mag + (hi - lo) / 2.0
        bottom, upper = mid - half, mid + half
        if lo >= 0 and bottom < 0:
            bottom = 0.0
        if top is not None and hi <= top and upper > top:
            bottom, upper = bottom - (upper - top), top + 0.03 * (top - bottom)
        ax.set_ylim(bottom, upper)


def _categorical(df, x):
    """An axis of names (power.policy) or of mappings ("{value: 20 degC}")
    has no numeric order: its values become positions 0, 1, ... in the
    order they first come, the labels their text. Returns (frame, labels),
    labels None when the axis is numeric already."""
    if df[x].dtype.kind in "fiub":
        return df, None
    labels = list(dict.fromkeys(str(v) for v in df[x]))
    at = {v: float(i) for i, v in enumerate(labels)}
    df = df.copy()
    df[x] = [at[str(v)] for v in df[x]]
    return df, labels


def frontier(sweep, x=None, y=None, by=None, ax=None, legend=True,
             title=None):
    """`y` against `x` over the sweep's points, one line per value of `by`
    (the policy by default), each with its own marker and line style so
    lines that coincide stay visible: e.g. tokens/J against the cap.
    A metric no point has (NaN everywhere: tokens/J of a sweep without
    services) says so on the axes and warns."""
    import warnings

    from .tables import label as metric_name

    dx, dys, dby = default_frontier(sweep)
    x = x or dx
    y = y or (dys[0] if dys else None)
    by = dby if by is None else (by or None)
    ax = _new_axes(ax, figsize=(7, 4.5))
    if y is None or y not in sweep.columns or x not in sweep.columns:
        what = "%s against %s" % (y or "an output", x)
        warnings.warn("frontier: %s: no such column in the sweep" % what,
                      stacklevel=2)
        return not_in_run(ax, what, title)
    df = sweep[sweep[y].notna()]
    if not len(df):
        warnings.warn("frontier: %s is absent (NaN) in every point of the "
                      "sweep; nothing to draw" % y, stacklevel=2)
        ax = not_in_run(ax, "%s (absent in every point)" % metric_name(y),
                        title)
        return ax
    df, categories = _categorical(df, x)
    fx, xl = _axis_label(sweep, x, df[x].to_numpy(dtype=float))
    fy, yl = _axis_label(sweep, y, df[y].to_numpy(dtype=float))
    groups = [(None, df)] if by is None else list(df.groupby(by, sort=True))
    replicated = False
    lo, hi = np.inf, -np.inf
    n = len(groups)
    for k, (key, g) in enumerate(groups):
        # replicates (seeds) at one x: their mean, and their spread as bars
        stats = g.groupby(x, sort=True)[y].agg(["mean", "min", "max",
                                                 "count"])
        lab = None if key is None else "%s = %s" % (
            by, _key_text(key, (sweep.units or {}).get(by, "")))
        color = "C%d" % (k % 10)
        xs = stats.index.to_numpy(dtype=float) / fx
        # earlier lines drawn larger and hollow, so a later line on top of
        # them leaves their markers visible
        ms = 5 + 1.6 * (n - 1 - k) if n > 1 else 6
        ax.plot(xs, stats["mean"] / fy, marker=MARKERS[k % len(MARKERS)],
                ls=LINESTYLES[k % len(LINESTYLES)], color=color, lw=1.6,
                ms=ms, mfc="none" if k % 2 == 0 and n > 1 else color,
                mew=1.5, label=lab, zorder=2 + k)
        lo = min(lo, np.nanmin(stats["min"] / fy))
        hi = max(hi, np.nanmax(stats["max"] / fy))
        if (stats["count"] > 1).any():
            replicated = True
            ax.errorbar(xs, stats["mean"] / fy, yerr=[
                (stats["mean"] - stats["min"]) / fy,
                (stats["max"] - stats["mean"]) / fy], fmt="none",
                ecolor=color, elinewidth=1, capsize=3, zorder=2 + k)
    if replicated:
        m = int(df.groupby([c for c in (by, x) if c])[y].count().max())
        ax.text(0.99, 0.01, "mean of %d replicates, bars: min to max" % m,
                transform=ax.transAxes, ha="right", va="bottom",
                fontsize=8, color="0.35")
    share = fy == 0.01  # a share shown in %: at most 100
    _sensible_ylim(ax, lo, hi, top=100.0 if share else None)
    if categories is not None:
        ax.set_xticks(np.arange(len(categories)) / fx)
        ax.set_xticklabels(categories, rotation=20 if max(
            len(c) for c in categories) > 8 else 0, ha="right" if max(
            len(c) for c in categories) > 8 else "center")
        ax.set_xlim(-0.5 / fx, (len(categories) - 0.5) / fx)
    ax.set_xlabel(xl)
    ax.set_ylabel(yl)
    name = sweep_title(sweep)
    ax.set_title(title or "%s%s" % ((name + ": ") if name else "",
                                    y if y in (sweep.axis_columns or [])
                                    else metric_name(y)))
    ax.grid(alpha=0.3)
    if legend and by is not None:
        _legend(ax, outside=False, loc="best")
    return ax
