"""python3 -m aifsim report|compare|sweep: reports from the command line.

    python3 -m aifsim report RUN.h5 [--png OUT.png] [--html OUT.html]
                                    [--allow-incomplete]
    python3 -m aifsim compare A.h5 B.h5 ... [--png OUT.png] [--html OUT.html]
                                            [--csv OUT.csv] [--label TEXT]...
                                            [--allow-incomplete]
    python3 -m aifsim sweep DIR [--x COL] [--y COL]... [--by COL]
                                [--png OUT.png] [--html OUT.html]
    python3 -m aifsim compare-measured RUN.h5 MEASURED.csv [--column COL]
                                [--start TIME] [--png OUT.png] [--csv OUT.csv]

Exit status: 0 ok, 1 failure while writing (or a fault of this package:
one line, no traceback unless AIFSIM_DEBUG=1), 2 bad input (usage, a
missing, incomplete, damaged, foreign or newer-format file).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import matplotlib
import pandas as pd

matplotlib.use("Agg")  # files only, never a display

from . import open_run, open_sweep  # noqa: E402
from .errors import AifsimError, did_you_mean  # noqa: E402
from . import comparison as _c  # noqa: E402
from . import reports as _r  # noqa: E402


def _print_table(df):
    with pd.option_context(
            "display.max_rows", 500, "display.max_columns", 50,
            "display.width", 200, "display.max_colwidth", 40):
        print(df.to_string(index=False))


def cmd_report(a):
    run = open_run(a.run, allow_incomplete=a.allow_incomplete)
    png, htm = a.png, a.html
    if not png and not htm:
        png = str(Path(a.run).with_suffix(".png"))
    _print_table(_r.summary_table(run)[["group", "metric", "value"]])
    for p in _r.write_report(run, png=png, html_path=htm, dpi=a.dpi):
        print("wrote %s" % p)


def cmd_compare(a):
    runs = [open_run(p, allow_incomplete=a.allow_incomplete) for p in a.runs]
    if a.label and len(a.label) != len(runs):
        raise AifsimError("give --label once per run: %d labels for %d runs"
                          % (len(a.label), len(runs)))
    labels = a.label or None
    _print_table(_r.compare_table(runs, labels=labels))
    if a.csv:
        _r.compare_table(runs, formatted=False, labels=labels).to_csv(
            a.csv, index_label="metric")
        print("wrote %s" % a.csv)
    png = a.png
    if not png and not a.html and not a.csv:
        png = str(_c.default_png(a.runs))
    if png:
        _r.compare_figure(runs, dpi=a.dpi, labels=labels).savefig(png)
        print("wrote %s" % png)
    if a.html:
        Path(a.html).write_text(_r.compare_html(runs, labels=labels),
                                encoding="utf-8")
        print("wrote %s" % a.html)


def cmd_sweep(a):
    sw = open_sweep(a.dir)
    for c in [a.x, a.by] + (a.y or []):
        if c and c not in sw.columns:
            near = did_you_mean(c, sw.columns)
            raise AifsimError("no column %r in the sweep; %scolumns: %s"
                              % (c, "did you mean %r? " % near if near else "",
                                 ", ".join(map(str, sw.columns))))
    _print_table(_r.sweep_table(sw, a.y))
    png, htm = a.png, a.html
    if not png and not htm:
        png = str(Path(a.dir) / "frontier.png")
    if png:
        _r.sweep_figure(sw, a.x, a.y, a.by, dpi=a.dpi).savefig(png)
        print("wrote %s" % png)
    if htm:
        Path(htm).write_text(_r.sweep_html(sw, a.x, a.y, a.by),
                             encoding="utf-8")
        print("wrote %s" % htm)


def cmd_compare_measured(a):
    from . import measured as _m

    run = open_run(a.run, allow_incomplete=a.allow_incomplete)
    meter = _m.read_measured(a.measured)
    cols = [a.column] if a.column else list(meter.columns)
    if a.column and a.column not in meter.columns:
        raise AifsimError("no column %r in %s; columns: %s"
                          % (a.column, a.measured, ", ".join(meter.columns)))
    png = a.png or str(Path(a.measured).with_suffix(".png"))
    series = [c for c in cols if not c.startswith("job:")]
    for c in cols:
        if c.startswith("job:"):
            m, s = _m.job_means(meter, run, c, a.start)
            print("%s: mean over the job's run: measured %.6g W, simulated "
                  "%.6g W (%+.2f%%)" % (c, m, s, 100 * (s - m) / m))
    for i, c in enumerate(series):
        both = _m.align(meter, run, c, a.start)
        print("%s against the run's %s: %d common intervals of %g s, t = 0 "
              "at %s (%s)" % (c, c.rpartition("_")[0], len(both),
                              both.attrs["step_s"],
                              both.attrs["start"].isoformat(),
                              both.attrs["origin"]))
        _print_table(_m.table(both).round(3))
        out = png if i == 0 else str(Path(png).with_name(
            "%s-%s.png" % (Path(png).stem, c.replace(":", "-"))))
        _m.figure(both, c, dpi=a.dpi).savefig(out)
        print("wrote %s" % out)
        if a.csv and i == 0:
            both.to_csv(a.csv, index_label="timestamp")
            print("wrote %s" % a.csv)


def parser():
    p = argparse.ArgumentParser(
        prog="python3 -m aifsim",
        description="Reports from aifsim runs (HDF5) and sweeps.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    r = sub.add_parser("report", help="one run: a one-page PNG and/or a "
                       "self-contained HTML page")
    r.add_argument("run", metavar="RUN.h5")
    r.add_argument("--png", metavar="OUT.png",
                   help="one-page figure (default RUN.png without --html)")
    r.add_argument("--html", metavar="OUT.html",
                   help="figures and summary table in one HTML file")
    r.set_defaults(fn=cmd_report)

    c = sub.add_parser("compare", help="several runs: summary metrics side "
                       "by side and their power overlaid")
    c.add_argument("runs", nargs="+", metavar="RUN.h5")
    c.add_argument("--png", metavar="OUT.png",
                   help="the figure (default, without --html or --csv: "
                   "A-vs-B.png beside the first run)")
    c.add_argument("--label", action="append", metavar="TEXT",
                   help="a run's name in the legend, once per run in order "
                   "(default: the --set keys whose values differ)")
    c.add_argument("--html", metavar="OUT.html", help="table and figure")
    c.add_argument("--csv", metavar="OUT.csv", help="the table, raw numbers")
    c.set_defaults(fn=cmd_compare)

    s = sub.add_parser("sweep", help="a sweep directory: frontier plot and "
                       "table")
    s.add_argument("dir", metavar="DIR")
    s.add_argument("--x", help="column along x (default power.cap or the "
                   "first axis)")
    s.add_argument("--y", action="append",
                   help="metric along y (repeat for several panels)")
    s.add_argument("--by", help="one line per value of this column "
                   "(default power.policy when swept)")
    s.add_argument("--png", metavar="OUT.png",
                   help="frontier figure (default DIR/frontier.png)")
    s.add_argument("--html", metavar="OUT.html")
    s.set_defaults(fn=cmd_sweep)

    m = sub.add_parser("compare-measured", help="a run against a measured "
                       "power series: Guideline 14 metrics and a figure")
    m.add_argument("run", metavar="RUN.h5")
    m.add_argument("measured", metavar="MEASURED.csv",
                   help="timestamp,SCOPE_UNIT,... (docs/CALIBRATION.md)")
    m.add_argument("--column", help="one power column (default: every one)")
    m.add_argument("--start", metavar="TIME",
                   help="the run's t = 0 when it has no start_utc "
                   "(default: the first row's time)")
    m.add_argument("--png", metavar="OUT.png",
                   help="the figure (default MEASURED.png)")
    m.add_argument("--csv", metavar="OUT.csv",
                   help="the aligned series, W")
    m.set_defaults(fn=cmd_compare_measured)

    for sp in (r, c, s, m):
        sp.add_argument("--dpi", type=int, default=110,
                        help="resolution of PNG output (default 110)")
    for sp in (r, c, m):
        sp.add_argument("--allow-incomplete", action="store_true",
                        help="read a run that did not finish (OUT.partial "
                        "kept by aifsim run --keep-partial)")
    return p


def main(argv=None):
    a = parser().parse_args(argv)
    try:
        # Names (scenarios, racks, services) go into figure texts as they
        # are: a '$' in one is not mathtext.
        with matplotlib.rc_context({"text.parse_math": False}):
            a.fn(a)
    except AifsimError as e:
        print("aifsim: error: %s" % e, file=sys.stderr)
        return 2
    except OSError as e:
        print("aifsim: error: %s" % e, file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - a fault here, not in the input
        if os.environ.get("AIFSIM_DEBUG"):
            raise
        print("aifsim: error: %s failed on %s: %s: %s (a fault of the "
              "analysis package; AIFSIM_DEBUG=1 shows where)"
              % (a.command, " ".join(_inputs(a)), type(e).__name__, e),
              file=sys.stderr)
        return 1
    return 0


def _inputs(a):
    """The files or folder a command read, for its messages."""
    return [str(x) for x in (getattr(a, "runs", None) or
                             [getattr(a, "run", None) or
                              getattr(a, "dir", "")])]


if __name__ == "__main__":
    sys.exit(main())
