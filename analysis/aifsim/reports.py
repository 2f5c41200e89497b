"""Reports: a one-page figure of a run (PNG), the same as a self-contained
HTML page with the summary table, comparisons of runs and sweep frontiers.

Figures here are built on matplotlib.figure.Figure directly (no pyplot), so
they need no display and leave no global state behind.
"""

from __future__ import annotations

import base64
import html
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import plot as _p
from . import tables as _t
from . import units as _u
from .tables import summary_table

#: How the summary table names the metrics.
METRIC_LABELS = _t.LABELS


def _subtitle(run):
    bits = []
    desc = run.scenario.get("description") if isinstance(
        run.scenario, dict) else None
    if desc:
        bits.append(str(desc))
    meta = []
    if run.seed is not None:
        meta.append("seed %s" % run.seed)
    meta.append("aifsim %s" % run.version)
    meta.append(run.path.name)
    bits.append(", ".join(meta))
    return "\n".join(bits)


def _table_columns(tab, ncols=2):
    """The summary table's rows in `ncols` columns, each group kept whole
    under its name: [[(kind, metric, value)], ...] with kind "group" or
    "row"; groups go to the shortest column, in order."""
    groups = []
    for g, sub in tab.groupby("group", sort=False):
        groups.append([("group", g, "")] + [
            ("row", m, v) for m, v in zip(sub["metric"], sub["value"])])
    import itertools

    best = None  # the contiguous split whose longest column is shortest
    for cuts in itertools.combinations(range(1, len(groups)),
                                       min(ncols - 1, max(len(groups) - 1,
                                                          0))):
        bounds = (0,) + cuts + (len(groups),)
        cols = [sum(groups[a:b], []) for a, b in zip(bounds, bounds[1:])]
        worst = max(len(c) for c in cols)
        if best is None or worst < best[0]:
            best = (worst, cols)
    cols = best[1] if best else [sum(groups, [])]
    return cols + [[] for _ in range(ncols - len(cols))]


def _table_rows(run):
    return max((len(c) for c in _table_columns(summary_table(run))),
               default=0)


def _table_axes(ax, run):
    """The summary table, grouped, in two columns of metric and value."""
    tab = summary_table(run)
    ax.axis("off")
    cols = _table_columns(tab)
    n = max((len(c) for c in cols), default=0)
    cells, kinds = [], []
    for i in range(n):
        row, kind = [], []
        for c in cols:
            k, m, v = c[i] if i < len(c) else ("pad", "", "")
            row += [m, v]
            kind += [k, k]
        cells.append(row)
        kinds.append(kind)
    if not cells:
        return not_in_table(ax)
    t = ax.table(cellText=cells, loc="upper center", cellLoc="left",
                 colWidths=[0.31, 0.17, 0.31, 0.17])
    t.auto_set_font_size(False)
    t.set_fontsize(9.5)
    t.scale(1, 1.3)
    for (r, c), cell in t.get_celld().items():
        kind = kinds[r][c]
        cell.set_edgecolor("0.85")
        if kind == "group":
            cell.set_facecolor("#eef2f7")
            cell.set_text_props(fontweight="bold")
        elif kind == "pad":
            cell.set_edgecolor("white")
        if kind == "row" and c % 2 == 1:
            cell.set_text_props(ha="right")
            cell._loc = "right"
    ax.set_title("summary", fontsize=11, loc="left", fontweight="bold")
    note = _t.absent_note(run)
    if note:
        ax.set_title(note, fontsize=8.5, loc="right", color="0.35")
    return ax


def not_in_table(ax):
    ax.text(0.5, 0.5, "no summary in this run", ha="center", va="center",
            transform=ax.transAxes, color="0.4")
    return ax


def panels(run):
    """The panels a report of this run has: names of what it can draw
    (none for a run with no samples: one stopped before its first)."""
    if not len(run.facility):
        return []
    out = ["power", "clocks", "racks"]
    if _p.has_pue(run):
        out.append("pue")
    if _p.has_grid(run) or len(_p.deferred_jobs(run)):
        out.append("grid")
    if _p.has_services(run):
        out += ["tokens", "ttft", "tpot"]
    return out


def _draw(name, run, ax, axes_by_name):
    if name == "power":
        _p.power_stack(run, ax=ax)
    elif name == "clocks":
        _p.clocks(run, ax=ax)
    elif name == "racks":
        _p.rack_heatmap(run, ax=ax)
    elif name == "pue":
        _p.pue_temperature(run, ax=ax)
    elif name == "grid":
        _p.grid_signals(run, ax=ax)
    elif name == "tokens":
        _p.services(run, axes=[axes_by_name["tokens"], axes_by_name["ttft"],
                               axes_by_name["tpot"]])


def report_figure(run, dpi=110):
    """The one-page report of a run as a matplotlib Figure: power stack with
    the cap, clocks, per-rack heat map, and whichever of PUE, grid signals
    and services the run has, then the summary table."""
    names = panels(run)
    heights = {"power": 1.35, "racks": 1.1}
    table_h = 0.27 * (_table_rows(run) + 1) + 0.5
    hr = [heights.get(n, 1.0) * 2.6 for n in names] + [table_h]
    # each panel's title and axis labels take about 0.75 in besides
    fig = Figure(figsize=(11, sum(hr) + 0.75 * len(names) + 1.4), dpi=dpi,
                 layout="constrained")
    gs = fig.add_gridspec(len(hr), 1, height_ratios=hr)
    axes = {}
    for i, n in enumerate(names):
        axes[n] = fig.add_subplot(gs[i, 0])
    for n in names:
        _draw(n, run, axes[n], axes)
    tax = _table_axes(fig.add_subplot(gs[len(names), 0]), run)
    if not names:
        tax.text(0.5, 0.95, "no samples in this run: it stopped before its "
                 "first sample", ha="center", va="top",
                 transform=tax.transAxes, color="0.3", fontsize=11)
    fig.suptitle("aifsim report: %s" % run.name, fontsize=15,
                 fontweight="bold")
    fig.text(0.5, 1.0 - 0.55 / fig.get_figheight(), _subtitle(run),
             ha="center", va="top", fontsize=9, color="0.3")
    fig.get_layout_engine().set(h_pad=0.08, rect=(0, 0, 1,
                                1 - 0.55 / fig.get_figheight()))
    return fig


def _png_bytes(fig, dpi=None):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi or fig.dpi)
    return buf.getvalue()


def _img(fig):
    data = base64.b64encode(_png_bytes(fig)).decode("ascii")
    return '<img alt="%s" src="data:image/png;base64,%s">' % (
        html.escape(fig.axes[0].get_title() if fig.axes else "figure"), data)


_CSS = """body{font-family:sans-serif;max-width:1150px;margin:2em auto;
color:#222}table{border-collapse:collapse;margin:1em 0}td,th{padding:3px 10px;
border-bottom:1px solid #ddd;text-align:left}th{background:#f4f4f4}
img{max-width:100%}pre{background:#f6f6f6;padding:1em;overflow-x:auto}
.meta{color:#555}"""


def _page(title, body):
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            "<title>%s</title><style>%s</style></head><body>%s</body></html>"
            "\n" % (html.escape(title), _CSS, body))


def _summary_html(run):
    """The grouped summary table as HTML: one header row a group."""
    tab = summary_table(run)
    rows = []
    for g, sub in tab.groupby("group", sort=False):
        rows.append('<tr><th colspan="2">%s</th></tr>' % html.escape(g))
        rows += ["<tr><td>%s</td><td>%s</td></tr>" % (
            html.escape(m), html.escape(v))
            for m, v in zip(sub["metric"], sub["value"])]
    note = _t.absent_note(run)
    return "<table>%s</table>%s" % ("".join(rows), (
        '<p class="meta">%s</p>' % html.escape(note)) if note else "")


def report_html(run, dpi=100):
    """A self-contained HTML page (figures inline as PNG data): the run's
    figures, its summary table and its scenario."""
    parts = ["<h1>aifsim report: %s</h1>" % html.escape(run.name),
             '<p class="meta">%s</p>' % html.escape(_subtitle(run)).replace(
                 "\n", "<br>"),
             "<h2>Summary</h2>",
             _summary_html(run)]
    names = panels(run)
    parts.append("<h2>Figures</h2>")
    for n in names:
        if n in ("ttft", "tpot"):
            continue
        if n == "tokens":
            fig = Figure(figsize=(11, 8), dpi=dpi, layout="constrained")
            axs = fig.subplots(3, 1, sharex=True)
            _p.services(run, axes=list(axs))
        else:
            fig = Figure(figsize=(11, 4), dpi=dpi, layout="constrained")
            _draw(n, run, fig.add_subplot(), {})
        parts.append("<p>%s</p>" % _img(fig))
    parts.append("<h2>Scenario (resolved)</h2><pre>%s</pre>"
                 % html.escape(run.scenario_text))
    return _page("aifsim report: %s" % run.name, "\n".join(parts))


def write_report(run, png=None, html_path=None, dpi=110):
    """Write the report as PNG and/or HTML; returns the paths written."""
    written = []
    if png:
        fig = report_figure(run, dpi=dpi)
        Path(png).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(png, dpi=dpi)
        written.append(Path(png))
    if html_path:
        Path(html_path).parent.mkdir(parents=True, exist_ok=True)
        Path(html_path).write_text(report_html(run), encoding="utf-8")
        written.append(Path(html_path))
    return written


# -- several runs ------------------------------------------------------------

def compare_table(runs, formatted=True):
    """Summary figures of several runs side by side, with each run's change
    from the first (tables.compare_table). `formatted=False` gives the raw
    numbers, indexed by key."""
    return _t.compare_table(runs, formatted=formatted)


#: The figures a comparison draws as bars, when some run has them.
KEY_METRICS = ("tokens_per_joule", "training_tokens", "energy_mwh",
               "mean_pue", "cost", "co2_t", "slo_attainment")
#: Added when fewer than four of those are there.
MORE_METRICS = ("peak_power_w", "stranded_mwh", "cap_violation_s",
                "jct_mean_s")


def compare_metrics(runs):
    """The /summary keys a comparison draws as bars: KEY_METRICS some run
    has (a number, not zero in every run), then MORE_METRICS up to four."""
    def there(k):
        v = [r.summary.get(k) for r in runs]
        v = [float(x) for x in v if isinstance(x, (int, float, np.number))
             and math.isfinite(float(x))]
        return bool(v) and any(x != 0 for x in v)
    keys = [k for k in KEY_METRICS if there(k)]
    for k in MORE_METRICS:
        if len(keys) >= 4:
            break
        if there(k):
            keys.append(k)
    return keys


def compare_bars(runs, key, ax, labels=None):
    """One figure of several runs as bars, each labelled with its value and,
    after the first, its change from the first in %."""
    labels = labels or _p.run_labels(runs)
    vals = np.array([float(r.summary.get(key, np.nan)) for r in runs])
    units = _t.metric_units(key)
    f = 1.0
    finite = vals[np.isfinite(vals)]
    mag = np.max(np.abs(finite)) if len(finite) else 1.0
    if units in ("", None):
        f = next((d for d in (1e12, 1e9, 1e6) if mag >= d), 1.0)
    elif units not in ("$", "1"):
        f, _ = _u.display_scale(units, mag)
    xs = np.arange(len(runs))
    colors = ["C%d" % (k % 10) for k in range(len(runs))]
    ax.bar(xs, np.nan_to_num(vals) / f, color=colors, width=0.7,
           edgecolor="black", lw=0.6)
    top = np.nanmax(np.abs(np.nan_to_num(vals))) / f if len(vals) else 1.0
    for k, v in enumerate(vals):
        text = _t.format_metric(key, v)
        if k > 0 and np.isfinite(v) and np.isfinite(vals[0]):
            # a % of a value at or below zero (a negative bill) says
            # nothing: the change itself then
            text += "\n" + (_t.percent_text(vals[0], v) if vals[0] > 0
                            else _t.delta_text(key, v - vals[0]))
        y = np.nan_to_num(v) / f
        below = y < 0  # a negative bar: its label under it
        ax.text(k, y - 0.03 * top if below else y + 0.03 * top, text,
                ha="center", va="top" if below else "bottom",
                fontsize=8.5, fontweight="bold" if k > 0 else None)
    low = np.nanmin(np.nan_to_num(vals)) / f
    ax.set_ylim(min(0, low - 0.35 * top) if low < 0 else 0,
                max(top * 1.45, 1e-12))
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.spines["bottom"].set_position(("data", 0))  # bars from zero
    ax.set_title(_t.label(key), fontsize=10)
    return ax


def compare_figure(runs, dpi=110):
    """Key figures of the runs as bars with their changes from the first
    run, then the /facility series that differ between them overlaid
    (facility power with the caps first)."""
    labels = _p.run_labels(runs)
    keys = compare_metrics(runs)
    overlays = _p.differing_series(runs) or [_p.OVERLAYS[0]]
    per_row = min(max(len(keys), 1), 5)
    bar_rows = int(math.ceil(len(keys) / float(per_row))) if keys else 0
    legend_h = 0.3 + 0.25 * int(math.ceil(len(runs) / 2.0))
    heights = [legend_h] + [2.3] * bar_rows + [3.2] * len(overlays)
    fig = Figure(figsize=(11, sum(heights) + 0.6 * (bar_rows + len(
        overlays)) + 0.8), dpi=dpi, layout="constrained")
    gs = fig.add_gridspec(len(heights), per_row, height_ratios=heights)
    for i, k in enumerate(keys):
        compare_bars(runs, k, fig.add_subplot(gs[1 + i // per_row,
                                                 i % per_row]), labels)
    for j, (col, what, units) in enumerate(overlays):
        ax = fig.add_subplot(gs[1 + bar_rows + j, :])
        if col == "power_w":
            _p.compare_power(runs, ax=ax, labels=labels, legend=False,
                             title="facility power")
        else:
            _p.compare_series(runs, col, what, units, ax=ax, labels=labels,
                              legend=False)
        handles, names = ax.get_legend_handles_labels()
        if handles:  # the runs' line styles and the caps
            ax.legend(handles, names, loc="lower right", fontsize=8.5,
                      ncol=min(len(handles), 3), framealpha=0.9)
    # one legend for every panel: the runs, in their colours
    from matplotlib.patches import Patch
    lax = fig.add_subplot(gs[0, :])
    lax.axis("off")
    lax.legend([Patch(facecolor="C%d" % (k % 10), edgecolor="black")
                for k in range(len(runs))], labels, loc="center",
               ncol=min(len(runs), 2), frameon=False, fontsize=11)
    fig.suptitle("aifsim comparison: " + " vs ".join(
        dict.fromkeys(r.name for r in runs)), fontsize=14,
        fontweight="bold")
    return fig


def compare_html(runs):
    body = ["<h1>aifsim comparison</h1>",
            "<p class=\"meta\">%s</p>" % "<br>".join(
                html.escape("%s: %s" % (lab, r.path)) for lab, r in
                zip(_p.run_labels(runs), runs)),
            compare_table(runs).to_html(index=False, border=0),
            "<p>%s</p>" % _img(compare_figure(runs, dpi=100))]
    return _page("aifsim comparison", "\n".join(body))


# -- sweeps ------------------------------------------------------------------

def sweep_table(sweep, ys=None):
    """The columns a sweep report shows: point, axes, the frontier metrics."""
    x, dys, by = _p.default_frontier(sweep)
    ys = ys or dys
    cols = ["point"] + list(sweep.axis_columns or []) + [
        y for y in ys if y in sweep.columns]
    if "complete" in sweep.columns:
        cols.append("complete")
    return pd.DataFrame(sweep[list(dict.fromkeys(cols))])


def sweep_figure(sweep, x=None, ys=None, by=None, dpi=110):
    """The sweep's outputs (default: the ones that matter, _p.PREFERRED_Y)
    against its axis, one panel each, one legend for the figure."""
    dx, dys, dby = _p.default_frontier(sweep)
    ys = ys or dys or [None]
    ncol = len(ys) if len(ys) <= 3 else int(math.ceil(len(ys) / 2.0))
    nrow = int(math.ceil(len(ys) / float(ncol)))
    fig = Figure(figsize=(max(5.2 * ncol, 7), 3.9 * nrow + 1.5), dpi=dpi,
                 layout="constrained")
    gs = fig.add_gridspec(nrow + 1, ncol, height_ratios=[3.9] * nrow
                          + [0.45])
    axs = [fig.add_subplot(gs[i // ncol, i % ncol])
           for i in range(len(ys))]
    for ax, y in zip(axs, ys):
        _p.frontier(sweep, x=x or dx, y=y, by=by if by is not None else dby,
                    ax=ax, legend=False, title=(_t.label(y) if y else None))
    # one legend for every panel, under them
    handles, labels = axs[0].get_legend_handles_labels()
    lax = fig.add_subplot(gs[nrow, :])
    lax.axis("off")
    if handles:
        lax.legend(handles, labels, loc="center", ncol=min(len(handles), 5),
                   frameon=False, fontsize=10)
    name, scen = sweep.attrs.get("sweep_name"), sweep.scenario_name
    if name:
        title = "%s: %s%d points" % (name, (scen + ", ") if scen and
                                     scen not in name else "", len(sweep))
    else:
        title = "sweep of %s: %d points" % (
            scen or Path(str(sweep.directory)).name, len(sweep))
    fig.suptitle(title, fontsize=13, fontweight="bold")
    return fig


def sweep_html(sweep, x=None, ys=None, by=None):
    body = ["<h1>aifsim sweep: %s</h1>" % html.escape(
                _p.sweep_title(sweep) or str(sweep.directory)),
            "<p class=\"meta\">%s</p>" % html.escape(str(sweep.directory)),
            "<p>%s</p>" % _img(sweep_figure(sweep, x, ys, by, dpi=100)),
            sweep_table(sweep, ys).to_html(index=False, border=0)]
    return _page("aifsim sweep", "\n".join(body))
