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

from . import comparison as _c
from . import plot as _p
from . import tables as _t
from . import units as _u
from .tables import summary_table

def _subtitle(run):
    """What the run is and how it was made. A run given --set options gets
    a description read from its resolved scenario (tables.describe), since
    the scenario file's own may no longer hold (a Dallas run of a file
    that says Frankfurt), and the options as typed; otherwise the file's
    description. Then the seed, version and file."""
    cal = run.calibrated
    marks = ("calibrated_keys", "calibration_overlay")
    given = [o for o in run.overrides or []
             if o.partition("=")[0] not in cal and
             o.partition("=")[0] not in marks]
    desc = run.scenario.get("description") if isinstance(
        run.scenario, dict) else None
    bits = []
    if given and "description" not in run.override_values():
        bits.append(_t.describe(run))
        bits.append("scenario %s with %s" % (run.name, " ".join(
            "--set " + o for o in given)))
    elif desc:
        bits.append(str(desc))
    if cal:
        # Fitted values apart from modelled ones (issue 26).
        bits.append("calibrated (fitted to a measurement by %s, not "
                    "modelled): %s" % (run.calibration_overlay, ", ".join(
                        "%s = %s" % (k, _short(v)) for k, v in cal.items())))
    meta = []
    if run.seed is not None:
        meta.append("seed %s" % run.seed)
    meta.append("aifsim %s" % run.version)
    meta.append(run.path.name)
    bits.append(", ".join(meta))
    return "\n".join(_wrap_parts(b, 130) for b in bits)


def _short(value):
    """A value as an overlay writes it ("9669.2808306293846 W") to six
    significant digits."""
    num, _, unit = str(value).partition(" ")
    try:
        return ("%.6g %s" % (float(num), unit)).strip()
    except ValueError:
        return str(value)


def _wrap_parts(text, width):
    """text wrapped at its ", " and " --set " boundaries only, so that no
    date, value or option is split across lines."""
    import re
    parts = re.split(r"(?<=,) | (?=--set )", text)
    lines, cur = [], ""
    for p in parts:
        if cur and len(cur) + 1 + len(p) > width:
            lines.append(cur)
            cur = p
        else:
            cur = p if not cur else cur + " " + p
    return "\n".join(lines + [cur])


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


def _cell_value(v, width=24):
    """A value short enough for its cell: a long text (a grid code's
    title and file) cut at a word with an ellipsis; the HTML report and
    the summary keep it whole."""
    if len(v) <= width:
        return v
    cut = v[:width - 1].rsplit(" ", 1)[0] if " " in v[:width - 1] else \
        v[:width - 1]
    return cut.rstrip(" ,(") + "\u2026"


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
            row += [m, _cell_value(v)]
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
    # Long names come from the file, so each column takes the width of
    # its longest entry rather than cutting it off.
    t.auto_set_column_width([0, 1, 2, 3])
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
    note = _t.absent_note(run)
    note = _wrap_parts(note, 150) if note else ""
    lines = note.count("\n") + 1 if note else 0
    # The note on its own line(s) under the title, above the table.
    ax.set_title("summary", fontsize=11, loc="left", fontweight="bold",
                 pad=6 + 12 * lines)
    if note:
        ax.annotate(note, xy=(0, 1), xycoords="axes fraction",
                    xytext=(0, 3), textcoords="offset points", ha="left",
                    va="bottom", fontsize=8.5, color="0.35")
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
    table_h = 0.27 * (_table_rows(run) + 1) + 0.5 + (
        0.3 if _t.absent_note(run) else 0.0)
    hr = [heights.get(n, 1.0) * 2.6 for n in names] + [table_h]
    sub = _subtitle(run)
    # The subtitle starts 0.55 in from the top, 0.15 in a line; the layout
    # below it also leaves room for the title (about 0.35 in).
    top_in = 0.3 + 0.15 * (sub.count("\n") + 1)
    # each panel's title and axis labels take about 0.75 in besides
    fig = Figure(figsize=(11, sum(hr) + 0.75 * len(names) + 1.1 + top_in),
                 dpi=dpi, layout="constrained")
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
    fig.text(0.5, 1.0 - 0.55 / fig.get_figheight(), sub,
             ha="center", va="top", fontsize=9, color="0.3")
    fig.get_layout_engine().set(h_pad=0.08, rect=(0, 0, 1,
                                1 - top_in / fig.get_figheight()))
    return fig


def _png_bytes(fig, dpi=None):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi or fig.dpi)
    return buf.getvalue()


def _img(fig):
    data = base64.b64encode(_png_bytes(fig)).decode("ascii")
    return '<img alt="%s" src="data:image/png;base64,%s">' % (
        html.escape(fig.axes[0].get_title() if fig.axes else "figure"), data)


# The page takes the window's width: figures two abreast on a wide screen
# (one on a narrow one), the summary's groups side by side, the scenario
# folded away.
_CSS = """body{font-family:sans-serif;margin:1.2em 2vw;color:#222}
h1{margin:0 0 .2em}h2{margin:1.2em 0 .4em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:3px 10px;
border-bottom:1px solid #ddd;text-align:left}th{background:#f4f4f4}
td.v{text-align:right;white-space:nowrap}
img{width:100%;height:auto;display:block}
pre{background:#f6f6f6;padding:1em;overflow-x:auto}
.meta{color:#555}
.figs{display:grid;grid-template-columns:repeat(auto-fit,minmax(620px,1fr));
gap:1em 2em}
.figs .wide{grid-column:1/-1}
.groups{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));
gap:0 2em;align-items:start}
.groups table{width:100%}"""


def _page(title, body):
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            "<title>%s</title><style>%s</style></head><body>%s</body></html>"
            "\n" % (html.escape(title), _CSS, body))


def _summary_html(run):
    """The grouped summary as HTML: a table a group, side by side."""
    tab = summary_table(run)
    tables = []
    for g, sub in tab.groupby("group", sort=False):
        rows = ['<tr><th colspan="2">%s</th></tr>' % html.escape(g)]
        rows += ['<tr><td>%s</td><td class="v">%s</td></tr>' % (
            html.escape(m), html.escape(v))
            for m, v in zip(sub["metric"], sub["value"])]
        tables.append("<table>%s</table>" % "".join(rows))
    note = _t.absent_note(run)
    return '<div class="groups">%s</div>%s' % ("".join(tables), (
        '<p class="meta">%s</p>' % html.escape(note)) if note else "")


def _grid_html(run):
    """The grid connection: the verdict against the scenario's grid code
    and the figures, each with its limit and result where the code has
    one (docs/OUTPUT.md, /grid_connection)."""
    tab = run.grid_connection
    if len(tab) == 0:
        return ""
    s = run.summary
    head = "Grid code %s: verdict %s, class %s." % (
        s.get("grid_code", "none"), s.get("grid_verdict", "none"),
        s.get("grid_class", "none"))
    rows = ["<tr><th>figure</th><th>value</th><th>limit</th>"
            "<th>result</th></tr>"]
    def shown(v, units):  # shares in percent, the rest scaled
        if not np.isfinite(v):
            return "n/a"
        return "%.3g%%" % (100 * v) if units == "1" else \
            _u.format_value(v, units)
    for _, r in tab.iterrows():
        lim = ["%s %s" % (side, shown(r[key], r["units"]))
               for side, key in (("min", "limit_min"), ("max", "limit_max"))
               if np.isfinite(r[key])]
        rows.append("<tr><td>%s</td><td class=\"v\">%s</td><td>%s</td>"
                    "<td>%s</td></tr>" % (
                        html.escape(r["long_name"]),
                        html.escape(shown(r["value"], r["units"])),
                        html.escape(", ".join(lim)), html.escape(r["result"])))
    return '<p class="meta">%s</p><table>%s</table>' % (
        html.escape(head), "".join(rows))


def report_html(run, dpi=100):
    """A self-contained HTML page (figures inline as PNG data) that uses
    the window's width: the run's summary, its figures two abreast on a
    wide screen (the power stack and the services across), and its
    resolved scenario, folded."""
    parts = ["<h1>aifsim report: %s</h1>" % html.escape(run.name),
             '<p class="meta">%s</p>' % html.escape(_subtitle(run)).replace(
                 "\n", "<br>"),
             "<h2>Summary</h2>",
             _summary_html(run), "<h2>Grid connection</h2>", _grid_html(run),
             "<h2>Figures</h2>", '<div class="figs">']
    for n in panels(run):
        if n in ("ttft", "tpot"):
            continue
        wide = n in ("power", "tokens")
        if n == "tokens":
            fig = Figure(figsize=(14, 8), dpi=dpi, layout="constrained")
            axs = fig.subplots(3, 1, sharex=True)
            _p.services(run, axes=list(axs))
        else:
            fig = Figure(figsize=(14, 4.5) if wide else (9, 4), dpi=dpi,
                         layout="constrained")
            _draw(n, run, fig.add_subplot(), {})
        parts.append('<div%s>%s</div>' % (' class="wide"' if wide else "",
                                          _img(fig)))
    parts.append("</div>")
    parts.append("<h2>Scenario (resolved)</h2><details><summary>the "
                 "scenario with every default filled in</summary><pre>%s"
                 "</pre></details>" % html.escape(run.scenario_text))
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

def compare_table(runs, formatted=True, labels=None):
    """Summary figures of several runs side by side, with each run's change
    from the first (tables.compare_table). `formatted=False` gives the raw
    numbers, indexed by key."""
    return _t.compare_table(runs, formatted=formatted, labels=labels)


# The comparison figure lives in aifsim.comparison; these names stay here.
KEY_METRICS = _c.KEY_METRICS
compare_metrics = _c.compare_metrics
compare_bars = _c.compare_bars
compare_figure = _c.compare_figure


def compare_html(runs, labels=None):
    """A self-contained HTML page of several runs: files, table, figure."""
    return _c.compare_html(runs, labels=labels, img=_img, page=_page,
                           table=lambda rs, labs: compare_table(
                               rs, labels=labs))


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
