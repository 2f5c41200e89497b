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
from . import units as _u
from .run import summary_table

#: How the summary table names the metrics (units.METRIC_LABELS).
METRIC_LABELS = _u.METRIC_LABELS


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


def _table_axes(ax, run):
    tab = summary_table(run)
    ax.axis("off")
    n = len(tab)
    half = int(math.ceil(n / 2.0))
    cells = []
    for i in range(half):
        left = tab.iloc[i]
        row = [left["metric"], left["value"]]
        if i + half < n:
            right = tab.iloc[i + half]
            row += [right["metric"], right["value"]]
        else:
            row += ["", ""]
        cells.append(row)
    t = ax.table(cellText=cells, colLabels=["metric", "value"] * 2,
                 loc="upper center", cellLoc="left", colLoc="left",
                 colWidths=[0.3, 0.17, 0.3, 0.17])
    t.auto_set_font_size(False)
    t.set_fontsize(9)
    t.scale(1, 1.25)
    for (r, _c), cell in t.get_celld().items():
        cell.set_edgecolor("0.85")
        if r == 0:
            cell.set_text_props(fontweight="bold")
    ax.set_title("summary (/summary)", fontsize=11, loc="left")
    return ax


def panels(run):
    """The panels a report of this run has: names of what it can draw."""
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
    nsum = len(summary_table(run))
    table_h = 0.25 * (math.ceil(nsum / 2.0) + 1) + 0.3
    hr = [heights.get(n, 1.0) * 2.6 for n in names] + [table_h]
    fig = Figure(figsize=(11, sum(hr) + 1.1), dpi=dpi, layout="constrained")
    gs = fig.add_gridspec(len(hr), 1, height_ratios=hr)
    axes = {}
    for i, n in enumerate(names):
        axes[n] = fig.add_subplot(gs[i, 0])
    for n in names:
        _draw(n, run, axes[n], axes)
    _table_axes(fig.add_subplot(gs[len(names), 0]), run)
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


def report_html(run, dpi=100):
    """A self-contained HTML page (figures inline as PNG data): the run's
    figures, its summary table and its scenario."""
    parts = ["<h1>aifsim report: %s</h1>" % html.escape(run.name),
             '<p class="meta">%s</p>' % html.escape(_subtitle(run)).replace(
                 "\n", "<br>"),
             "<h2>Summary</h2>",
             summary_table(run).to_html(index=False, border=0)]
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
    """Summary metrics of several runs side by side: one row a metric, one
    column a run. `formatted=False` gives the raw numbers (key index)."""
    labels = _p.run_labels(runs)
    keys = _u.metric_order(list(dict.fromkeys(
        k for r in runs for k in r.summary)))
    if not formatted:
        return pd.DataFrame({lab: [r.summary.get(k, np.nan) for k in keys]
                             for lab, r in zip(labels, runs)}, index=keys)
    data = {"metric": [_u.metric_label(k) for k in keys]}
    for lab, r in zip(labels, runs):
        data[lab] = [_u.format_metric(k, r.summary[k])
                     if k in r.summary else "-" for k in keys]
    return pd.DataFrame(data)


def compare_figure(runs, dpi=110):
    fig = Figure(figsize=(11, 4.5), dpi=dpi, layout="constrained")
    _p.compare_power(runs, ax=fig.add_subplot())
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
    dx, dys, dby = _p.default_frontier(sweep)
    ys = ys or dys or [None]
    fig = Figure(figsize=(5.2 * len(ys), 4.4), dpi=dpi, layout="constrained")
    axs = fig.subplots(1, len(ys), squeeze=False)[0]
    for ax, y in zip(axs, ys):
        _p.frontier(sweep, x=x or dx, y=y, by=by if by is not None else dby,
                    ax=ax)
    if sweep.scenario_name:
        fig.suptitle("sweep of %s (%d points, %s)" % (
            sweep.scenario_name, len(sweep), Path(sweep.directory).name),
            fontsize=12)
    return fig


def sweep_html(sweep, x=None, ys=None, by=None):
    body = ["<h1>aifsim sweep: %s</h1>" % html.escape(
                str(sweep.scenario_name or sweep.directory)),
            "<p class=\"meta\">%s</p>" % html.escape(str(sweep.directory)),
            "<p>%s</p>" % _img(sweep_figure(sweep, x, ys, by, dpi=100)),
            sweep_table(sweep, ys).to_html(index=False, border=0)]
    return _page("aifsim sweep", "\n".join(body))
