"""open_sweep: a sweep directory as one DataFrame, one row a point.

The layout (analysis/README.md, "Sweep directories"):

    DIR/point-0000.h5, point-0001.h5, ...   one run file per point
    DIR/summary.csv                         one row per point:
        point   the point's number (int)
        file    its run file, relative to DIR (optional: point-NNNN.h5)
        AXES    one column per swept key, named as --set takes it
                (power.cap, power.policy, racks.0.count, seed); values
                plain numbers in SI units or quantities with units ("650 kW")
        METRICS every /summary attribute, under its own name
    DIR/summary.h5                          the same table (read when there
                                            is no summary.csv)

With neither summary file, the point files themselves are read: the axes
are then the scenario keys whose values differ between points.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import AifsimError, RunNotFoundError
from .hdf5 import attr_text, check_seal, read_values
from .run import open_run
from . import metrics as _m
from . import units as _u

#: Columns of summary.csv that are neither axes nor metrics.
RESERVED = ("point", "file", "status", "complete", "error")

#: Top-level scenario keys with a scalar value: the only axis names without
#: a dot (power.cap, racks.0.count); a metric may share a name with a
#: top-level mapping or list (the "racks" count).
SCENARIO_KEYS = {"seed", "duration", "control_period", "sample_period",
                 "catalog"}

_POINT_FILE = re.compile(r"^point-(\d+)\.h5(\.partial)?$")


class Sweep(pd.DataFrame):
    """The summary table of a sweep: one row a point.

    - ``sweep.run(point)`` opens the point's run (a :class:`aifsim.Run`)
    - ``sweep.path(point)``: its file; ``sweep.runs()``: (point, run) pairs
    - ``sweep.axis_columns``: the swept keys; ``sweep.metrics``: the rest
    - ``sweep.units``: units of the columns (axes in SI: "power.cap": "W")
    - ``sweep.directory``: where the sweep lives

    These live in ``sweep.attrs``, which pandas carries through selections:
    a filtered sweep still opens its points.
    """

    @property
    def _constructor(self):
        return Sweep

    @property
    def _constructor_sliced(self):
        return pd.Series

    @property
    def units(self):
        return self.attrs.setdefault("units", {})

    @property
    def directory(self):
        return self.attrs.get("directory")

    @property
    def axis_columns(self):
        return self.attrs.get("axis_columns")

    @property
    def scenario_name(self):
        return self.attrs.get("scenario_name")

    @property
    def sweep_name(self):
        """The sweep file's name (summary.h5), or None."""
        return self.attrs.get("sweep_name")

    @property
    def metrics(self):
        skip = set(RESERVED) | set(self.axis_columns or [])
        return [c for c in self.columns if c not in skip]

    def _row(self, point):
        rows = self[self["point"] == point]
        if not len(rows):
            raise KeyError("no point %r in the sweep %s" % (point,
                                                              self.directory))
        return rows.iloc[0]

    def path(self, point):
        """The run file of a point."""
        row = self._row(point)
        f = row.get("file") if "file" in self.columns else None
        if not isinstance(f, str) or not f:
            f = "point-%04d.h5" % int(point)
        return Path(self.directory) / f

    def run(self, point, allow_incomplete=False):
        """Open one point's run."""
        return open_run(self.path(point), allow_incomplete=allow_incomplete)

    def runs(self):
        """(point, Run) for every complete point, in point order."""
        for p in self["point"]:
            path = self.path(p)
            if path.exists():
                yield int(p), open_run(path)


def _point_files(directory):
    """{point: file name} of the point-N.h5 files in a directory (the
    number has at least 4 digits, more in sweeps beyond 10,000 points)."""
    out = {}
    for entry in os.listdir(directory):
        m = _POINT_FILE.match(entry)
        if m and not m.group(2):
            out[int(m.group(1))] = entry
    return out


def _flatten(node, prefix="", out=None):
    out = {} if out is None else out
    if isinstance(node, dict):
        for k, v in node.items():
            _flatten(v, "%s%s." % (prefix, k), out)
    elif isinstance(node, list) and node and all(
            isinstance(x, (dict, list)) for x in node):
        for i, v in enumerate(node):
            _flatten(v, "%s%d." % (prefix, i), out)
    else:
        out[prefix[:-1]] = node if not isinstance(node, list) else str(node)
    return out


def _scan(directory):
    """The summary table built from the point files themselves."""
    files = {}
    for entry in sorted(os.listdir(directory)):
        m = _POINT_FILE.match(entry)
        if not m:
            continue
        n = int(m.group(1))
        if m.group(2) and n in files:  # a finished file wins over .partial
            continue
        files[n] = (entry[:-len(".partial")] if m.group(2) else entry,
                    not m.group(2))
    rows, scen = [], []
    for n, (name, done) in sorted(files.items()):
        row = {"point": n, "file": name, "complete": done}
        flat = {}
        if done:
            try:
                run = open_run(Path(directory) / name)
                row.update(run.summary)
                flat = _flatten(run.scenario)
            except AifsimError as e:
                row["complete"] = False
                row["error"] = str(e)
        rows.append(row)
        scen.append(flat)
    keys = sorted({k for s in scen for k in s})
    axes = []
    for k in keys:
        if k in ("name", "description"):
            continue
        vals = {repr(s.get(k)) for s in scen if s}
        if len(vals) > 1:
            axes.append(k)
    for row, s in zip(rows, scen):
        for k in axes:
            row[k] = s.get(k)
    df = pd.DataFrame(rows)
    if not len(df):
        df = pd.DataFrame(columns=["point", "file", "complete"])
    front = ["point"] + axes
    df = df[front + [c for c in df.columns if c not in front]]
    return df, axes


def _read_summary_h5(path):
    """summary.h5 as `aifsim sweep` writes it: 1-D datasets point, status,
    error at the root, axes/KEY (values as written), axis_values/KEY (the
    same in SI units, when every value is a quantity) and metrics/NAME.
    Also reads a compound dataset /summary or a group /summary of columns.
    Returns (table, axis keys, units of the axes)."""
    import h5py

    check_seal(path)  # before HDF5, which can crash on damage
    with h5py.File(path, "r") as f:
        obj = f.get("summary", f)
        if isinstance(obj, h5py.Dataset) and obj.dtype.names:
            arr = obj[()]
            cols = {}
            for n in obj.dtype.names:
                v = arr[n]
                if v.dtype.kind in "OS":
                    v = [x.decode() if isinstance(x, bytes) else x for x in v]
                cols[n] = v
            return pd.DataFrame(cols), None, {}
        cols, axes, units = {}, None, {}
        for k, v in obj.items():
            if isinstance(v, h5py.Dataset) and v.ndim == 1:
                cols[k] = read_values(v)
        if isinstance(obj.get("axes"), h5py.Group):
            axes = []
            values = obj.get("axis_values")
            for k, v in obj["axes"].items():
                axes.append(k)
                num = values.get(k) if isinstance(values, h5py.Group) \
                    else None
                if isinstance(num, h5py.Dataset):
                    cols[k] = num[()]
                    u = attr_text(num.attrs.get("units", ""))
                    units[k] = "" if u == "1" and k == "seed" else u
                else:
                    cols[k] = read_values(v)
        if isinstance(obj.get("metrics"), h5py.Group):
            for k, v in obj["metrics"].items():
                if isinstance(v, h5py.Dataset) and v.ndim == 1:
                    cols[k] = read_values(v)
        df = pd.DataFrame(cols)
        front = [c for c in ("point", "status") if c in df.columns] + (
            axes or [])
        df = df[front + [c for c in df.columns if c not in front]]
        return df, axes, units


def _is_axis(col):
    if col in RESERVED:
        return False
    return "." in col or col in SCENARIO_KEYS


def open_sweep(directory):
    """Open a sweep directory: returns a :class:`Sweep` DataFrame, one row a
    point (``sweep.run(point)`` opens that point's run).

    Reads DIR/summary.csv, else DIR/summary.h5, else the point-NNNN.h5 files.
    Axis values written as quantities ("650 kW") become numbers in SI units.
    """
    d = Path(os.fspath(directory))
    if d.is_file() and d.name in ("summary.csv", "summary.h5"):
        d = d.parent
    if not d.exists():
        raise RunNotFoundError("%s: no such sweep directory" % d)
    if not d.is_dir():
        raise AifsimError("%s is not a directory (for one run use "
                          "aifsim.open_run)" % d)
    axes, units = None, {}
    if (d / "summary.csv").exists():
        df = pd.read_csv(d / "summary.csv", keep_default_na=False,
                         na_values=[""])
    elif (d / "summary.h5").exists():
        df, axes, units = _read_summary_h5(d / "summary.h5")
    else:
        df, axes = _scan(d)
        if not len(df):
            raise RunNotFoundError(
                "%s: not a sweep directory (no summary.csv, summary.h5 or "
                "point-NNNN.h5 files)" % d)
    if "point" not in df.columns:
        df.insert(0, "point", np.arange(len(df)))
    df["point"] = df["point"].astype(int)
    if "file" not in df.columns:
        found = _point_files(d)
        df.insert(1, "file", [found.get(p, "point-%04d.h5" % p)
                              for p in df["point"]])
    if axes is None:
        axes = [c for c in df.columns if _is_axis(str(c))]
    for c in axes:
        col = df[c]
        if col.dtype.kind == "f" and units.get(c, "") in ("", "1") and \
                col.notna().all() and (col == col.round()).all():
            df[c] = col.astype("int64")  # seeds, counts
            units[c] = ""
            continue
        if c in units:
            continue
        if col.dtype.kind in "OU":
            parsed = [_u.try_quantity(v) if isinstance(v, str) else None
                      for v in col]
            known = [p for p, v in zip(parsed, col)
                     if not (v is None or (isinstance(v, float)
                                           and math.isnan(v)))]
            if known and all(p is not None for p in known) and len(
                    {p[1] for p in known}) == 1:
                df[c] = [p[0] if p is not None else np.nan for p in parsed]
                units[c] = known[0][1]
            continue
        if c == "seed" or c.endswith(".count"):
            units[c] = ""
    for c in df.columns:
        if c not in units and c not in RESERVED and c not in axes:
            units[c] = _m.units(str(c)) or ""
    if "complete" not in df.columns:
        df["complete"] = [(d / f).exists() if isinstance(f, str) else False
                          for f in df["file"]]
    out = Sweep(df)
    out.attrs.update(units=units, directory=d, axis_columns=list(axes),
                     scenario_name=_first_name(d, df),
                     sweep_name=_sweep_name(d))
    return out


def _sweep_name(d):
    """The sweep file's name without .yaml (summary.h5's root attribute
    `sweep`), or None."""
    import h5py

    path = d / "summary.h5"
    if not path.exists():
        return None
    try:
        check_seal(path)
        with h5py.File(path, "r") as f:
            v = f.attrs.get("sweep")
    except (OSError, AifsimError):
        return None
    if v is None:
        return None
    v = Path(attr_text(v)).name
    for ext in (".yaml", ".yml"):
        if v.endswith(ext):
            v = v[:-len(ext)]
    return v or None


def _first_name(d, df):
    """The scenario name of the sweep's first readable point."""
    import h5py

    for f in df["file"]:
        try:
            check_seal(d / f)  # a damaged point is skipped, not read
            with h5py.File(d / f, "r") as h:
                v = h.attrs.get("scenario_name")
                return v.decode() if isinstance(v, bytes) else str(v)
        except (OSError, TypeError, AifsimError):
            continue
    return None


def write_summary(directory, axes=None):
    """Write DIR/summary.csv from the point files (the layout open_sweep
    reads). `axes`: {point: {key: value}} to record the swept values as
    given; by default they are the scenario keys that differ between
    points. Returns the table."""
    d = Path(directory)
    df, found = _scan(d)
    if axes:
        for p, vals in axes.items():
            for k, v in vals.items():
                if k not in df.columns:
                    df[k] = None
                df.loc[df["point"] == p, k] = v
        found = list(dict.fromkeys(list(next(iter(axes.values()))) + found))
    front = ["point"] + found + ["file"]
    df = df[[c for c in front if c in df.columns]
            + [c for c in df.columns if c not in front]]
    df.to_csv(d / "summary.csv", index=False)
    return df


__all__ = ["Sweep", "open_sweep", "write_summary"]
