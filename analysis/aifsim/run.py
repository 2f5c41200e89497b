"""open_run: one aifsim run file as pandas DataFrames.

The readers are generic over the columns a group holds: a column the
simulator adds later shows up without a change here, and a group a run
does not have gives an empty frame. See analysis/README.md for the layout
and docs/OUTPUT.md for the contract.
"""

from __future__ import annotations

import functools
import html
import math
import os
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from .errors import (IncompleteRunError, NewerFormatError, NotARunError,
                     RunNotFoundError)
from . import metrics as _m
from . import units as _u
from .hdf5 import (attr_text, attr_value, check_seal, dimension_scale,
                   is_dimension_scale, read_values)

#: The newest file format this package reads (root attribute
#: ``format_version``; a file without it is version 1).
FORMAT_VERSION = 1

#: What aifsim writes in the root attribute ``format`` of a run file.
RUN_FORMAT = "aifsim-run"


class Frame(pd.DataFrame):
    """A DataFrame whose columns' units and long names live in
    ``frame.attrs["units"]`` and ``frame.attrs["long_names"]`` (pandas
    carries attrs through selections, and to the Series of a column).

    ``frame.units`` is ``frame.attrs["units"]``: ``frame.units["power_w"]
    == "W"``; for frames with two column levels (racks, loops, services)
    the keys are the variable names. ``units`` also holds the index's unit
    under its name (``"time": "s"``).
    """

    @property
    def _constructor(self):  # selections stay Frames, with .units
        return Frame

    @property
    def _constructor_sliced(self):
        return pd.Series

    @property
    def units(self):
        return self.attrs.setdefault("units", {})

    @property
    def long_names(self):
        return self.attrs.setdefault("long_names", {})


def _frame(data=None, index=None, columns=None, units=None, long_names=None):
    fr = Frame(data, index=index, columns=columns)
    fr.attrs["units"] = dict(units or {})
    fr.attrs["long_names"] = dict(long_names or {})
    return fr


def _empty(index_name="time"):
    fr = _frame(index=pd.Index([], dtype="float64", name=index_name))
    fr.units[index_name] = "s"
    return fr


class _Columns:
    """Columns of one group, collected before they become a frame."""

    def __init__(self):
        self.by_time = {}  # time-scale key -> (time values, {column: values})
        self.units = {}
        self.long_names = {}

    def add(self, key, values, time, var, attrs):
        tkey = (len(time), float(time[0]) if len(time) else 0.0,
                float(time[-1]) if len(time) else 0.0)
        self.by_time.setdefault(tkey, (time, {}))[1][key] = values
        if "units" in attrs:
            self.units.setdefault(var, attr_text(attrs["units"]))
        if "long_name" in attrs:
            self.long_names.setdefault(var, attr_text(attrs["long_name"]))

    def frame(self, multi, names):
        parts = []
        for time, cols in self.by_time.values():
            idx = pd.Index(np.asarray(time, dtype="float64"), name="time")
            keys = list(cols)
            df = pd.DataFrame({k: cols[k] for k in keys}, index=idx)
            df.columns = (pd.MultiIndex.from_tuples(keys, names=names)
                          if multi else pd.Index(keys))
            parts.append(df)
        if not parts:
            fr = _empty()
            if multi:
                fr.columns = pd.MultiIndex.from_tuples([], names=names)
        else:
            df = parts[0] if len(parts) == 1 else pd.concat(parts, axis=1)
            fr = _frame(df)
        fr.units.update(self.units)
        fr.units["time"] = "s"
        fr.long_names.update(self.long_names)
        return fr


def _time_of(ds, group, fallback):
    """The time values dimension 0 of `ds` runs along, or None."""
    sc = dimension_scale(ds, 0)
    if sc is not None and sc.ndim == 1 and sc.shape[0] == ds.shape[0]:
        return sc[()]
    for cand in (group.get("time"), fallback):
        shape = getattr(cand, "shape", None)
        if cand is not None and shape and shape[0] == ds.shape[0]:
            return cand[()]
    return None


def _labels(ds, dim, group):
    """Names along dimension `dim` of `ds` (rack names), as strings."""
    sc = dimension_scale(ds, dim)
    if sc is not None and sc.shape == (ds.shape[dim],):
        return [str(x) for x in read_values(sc)]
    return [str(i) for i in range(ds.shape[dim])]


def _collect(group, cols, fallback_time, prefix=None, flatten=False):
    """Add the time series of `group` (not its subgroups) to `cols`.

    1-D series become column `var`, 2-D [time, n] series become (var,
    label) columns (or "var/label" when `flatten`). `prefix` puts an outer
    level in front: (prefix, var)."""
    for name, obj in group.items():
        if not isinstance(obj, h5py.Dataset) or is_dimension_scale(obj):
            continue
        if obj.ndim not in (1, 2) or obj.dtype.names is not None:
            continue
        time = _time_of(obj, group, fallback_time)
        if time is None:
            continue
        values = read_values(obj)
        if obj.ndim == 1:
            key = name if prefix is None else (prefix, name)
            cols.add(key, values, time, name, obj.attrs)
            continue
        for j, lab in enumerate(_labels(obj, 1, group)):
            if flatten:
                key = "%s/%s" % (name, lab)
                key = key if prefix is None else (prefix, key)
            else:
                key = (name, lab) if prefix is None else (prefix, name, lab)
            cols.add(key, values[:, j], time, name, obj.attrs)


class Run:
    """One aifsim run. Open it with :func:`open_run`.

    Attributes read lazily from the file and cached:

    - ``facility``: Frame indexed by time (s), one column per /facility series
    - ``racks``, ``loops``: Frame with columns (variable, name), e.g.
      ``run.racks["power_w"]`` is a time x rack frame
    - ``services``: Frame with columns (service, variable), e.g.
      ``run.services["chat"]["ttft_p99"]``; ``service_info``: the
      services' group attributes (requests_arrived, ...), one row each
    - ``jobs``: the /jobs table (one row a job)
    - ``power_quality``: the power-quality window's facility power at its
      high rate (``power_w``; the rate in ``.attrs["rate_hz"]``), empty
      for a run without one
    - ``overrides``: the ``--set`` options the run was given, as typed
    - ``summary``: dict of the /summary metrics; ``metrics``: their units,
      long names and groups as the file declares them (aifsim.metrics)
    - ``scenario``: the resolved scenario as a dict; ``scenario_text``: YAML
    - ``name``, ``seed``, ``version``, ``format_version``, ``path``
    """

    def __init__(self, path, attrs):
        self.path = Path(path)
        self.attrs = attrs
        self.name = attr_text(attrs.get("scenario_name"), self.path.stem)
        self.seed = attr_value(attrs.get("seed"))
        self.version = attr_text(attrs.get("aifsim_version"), "?")
        self.format_version = int(attr_value(attrs.get("format_version", 1)))
        self.complete = attr_value(attrs.get("complete", 0)) == 1

    # -- plumbing ---------------------------------------------------------
    def _open(self):
        return h5py.File(self.path, "r")

    def __repr__(self):
        s = self.summary
        bits = [self.name]
        if self.seed is not None:
            bits.append("seed %s" % self.seed)
        if "duration_s" in s:
            bits.append(_u.duration_text(s["duration_s"]))
        if "energy_mwh" in s:
            bits.append(_u.format_value(s["energy_mwh"], "MWh"))
        if "mean_power_w" in s:
            bits.append("mean " + _u.format_value(s["mean_power_w"], "W"))
        if "cap_w" in s:
            bits.append("cap " + _u.format_value(s["cap_w"], "W"))
        return "<aifsim run %s: %s>" % (self.path, ", ".join(bits))

    def _repr_html_(self):
        head = "<b>aifsim run</b> <code>%s</code> &mdash; %s" % (
            html.escape(str(self.path)), html.escape(self.name))
        return head + summary_table(self)[["group", "metric", "value"]] \
            .to_html(index=False, border=0)

    def read(self, path):
        """Any dataset of the file as a numpy array (strings decoded)."""
        with self._open() as f:
            return read_values(f[path])

    def attributes(self, path="/"):
        """The attributes of any group or dataset, as a dict."""
        with self._open() as f:
            return {k: attr_value(v) for k, v in f[path].attrs.items()
                    if k not in ("DIMENSION_LIST", "REFERENCE_LIST", "CLASS",
                                 "NAME")}

    def groups(self):
        """The top-level groups and datasets the file holds."""
        with self._open() as f:
            return sorted(f.keys())

    # -- the data ---------------------------------------------------------
    @functools.cached_property
    def facility(self):
        with self._open() as f:
            g = f.get("facility")
            if not isinstance(g, h5py.Group):
                return _empty()
            cols = _Columns()
            _collect(g, cols, None, flatten=True)
            return cols.frame(False, None)

    def _entities(self, name, entity_first, level_names, single=""):
        """A group of per-entity series: 2-D [time, entity] datasets and/or
        one subgroup per entity. 1-D series directly in the group belong to
        the entity `single` (the writer drops the entity dimension of a
        group of one: one loop, one rack)."""
        with self._open() as f:
            g = f.get(name)
            fallback = f.get("facility/time")
            cols = _Columns()
            if isinstance(g, h5py.Group):
                for key, obj in g.items():
                    if isinstance(obj, h5py.Group):
                        _collect(obj, cols, obj.get("time", fallback),
                                 prefix=key, flatten=True)
                _collect(g, cols, fallback)
            if not cols.by_time:
                fr = cols.frame(True, level_names)
                return fr
            # Normalise every key to two levels in the requested order.
            for tkey, (time, c) in list(cols.by_time.items()):
                fixed = {}
                for key, v in c.items():
                    if isinstance(key, str):  # 1-D series directly in group
                        key = (single, key) if entity_first else (key, single)
                    elif len(key) == 2 and key[0] in g and isinstance(
                            g[key[0]], h5py.Group):  # (entity, var)
                        key = key if entity_first else (key[1], key[0])
                    else:  # (var, entity) from a 2-D dataset
                        key = (key[1], key[0]) if entity_first else key
                    fixed[key] = v
                cols.by_time[tkey] = (time, fixed)
            return cols.frame(True, level_names)

    def _only_name(self, kind):
        """The name of the only rack or loop of the scenario, or ""."""
        items = [x for x in (self.scenario.get(kind) or [])
                 if isinstance(x, dict)]
        if kind == "racks":
            if len(items) == 1 and str(items[0].get("count", 1)) == "1":
                return "%s-0" % items[0].get("name", "rack")
        elif len(items) == 1:
            return str(items[0].get("name", ""))
        return ""

    @functools.cached_property
    def racks(self):
        return self._entities("racks", False, ["variable", "rack"],
                              self._only_name("racks"))

    @functools.cached_property
    def loops(self):
        return self._entities("loops", False, ["variable", "loop"],
                              self._only_name("loops"))

    @functools.cached_property
    def services(self):
        return self._entities("services", True, ["service", "variable"])

    @functools.cached_property
    def service_info(self):
        """The attributes of each /services/NAME group, one row a service."""
        with self._open() as f:
            g = f.get("services")
            rows = {}
            if isinstance(g, h5py.Group):
                for key, obj in g.items():
                    if isinstance(obj, h5py.Group):
                        rows[key] = {k: attr_value(v)
                                     for k, v in obj.attrs.items()}
            df = pd.DataFrame.from_dict(rows, orient="index")
            df.index.name = "service"
            return df

    @functools.cached_property
    def power_quality(self):
        """/power_quality: facility power sampled at the power-quality
        window's rate (50 Hz by default), indexed by time (s, each sample at
        the end of its 1/rate interval); the window's rate_hz,
        window_start_s, band_low_hz and band_high_hz in ``.attrs``. Empty
        for a run without a window (or written before aifsim kept it)."""
        with self._open() as f:
            g = f.get("power_quality")
            cols = _Columns()
            info = {}
            if isinstance(g, h5py.Group):
                _collect(g, cols, None)
                info = {k: attr_value(v) for k, v in g.attrs.items()}
            fr = cols.frame(False, None)
            fr.attrs.update(info)
            return fr

    @property
    def overrides(self):
        """The ``--set`` options the run was given (``--seed`` as
        ``seed=N``), as typed, in order: ``["loops.0.kind=air"]``; [] for
        none; None for a file written before aifsim recorded them."""
        v = self.attrs.get("overrides")
        if v is None:
            return None
        return [line for line in attr_text(v).split("\n") if line]

    def override_values(self):
        """{key: value as typed} of :attr:`overrides` (the last of a key
        given twice wins); {} when there are none."""
        out = {}
        for item in self.overrides or []:
            key, _, value = item.partition("=")
            out[key.strip()] = value.strip()
        return out

    @functools.cached_property
    def jobs(self):
        with self._open() as f:
            obj = f.get("jobs")
            return _table(obj)

    @functools.cached_property
    def grid_connection(self):
        """/grid_connection: a row per figure (metric, value, units,
        long_name, limit_min, limit_max, result, source), the grid code's
        limit and PASS/FAIL/UNKNOWN on the rows it bounds; summary's
        grid_code, grid_class and grid_verdict name the code and the
        verdict. Empty for files written before it existed."""
        with self._open() as f:
            return _table(f.get("grid_connection"))

    @functools.cached_property
    def summary(self):
        return self._summary_attrs[0]

    @functools.cached_property
    def metrics(self):
        """{key: aifsim.metrics.Metric}: each /summary metric's units, long
        name and group as the file declares them; {} for a file written
        before it did (the tables then name metrics after their keys)."""
        return self._summary_attrs[1]

    @functools.cached_property
    def _summary_attrs(self):
        with self._open() as f:
            g = f.get("summary")
            if g is None:
                return {}, {}
            attrs = {k: attr_value(v) for k, v in g.attrs.items()}
            out = {k: v for k, v in attrs.items() if k not in _m.META}
            if isinstance(g, h5py.Group):  # metrics written as datasets
                for k, ds in g.items():
                    if isinstance(ds, h5py.Dataset) and ds.shape == ():
                        out.setdefault(k, attr_value(ds[()]))
            return out, _m.read(attrs)

    @functools.cached_property
    def scenario_text(self):
        with self._open() as f:
            if "scenario" not in f:
                return ""
            v = f["scenario"]
            return attr_text(v.asstr()[()]
                             if h5py.check_string_dtype(v.dtype) else v[()])

    @functools.cached_property
    def scenario(self):
        text = self.scenario_text
        if not text:
            return {}
        import yaml  # python3-yaml
        return yaml.safe_load(text) or {}

    @property
    def units(self):
        """Units of every column, keyed "group/column"
        ("facility/power_w": "W")."""
        out = {}
        for gname in ("facility", "racks", "loops", "services", "jobs"):
            fr = getattr(self, gname)
            for k, v in fr.units.items():
                out["%s/%s" % (gname, k)] = v
        return out

    @property
    def calibrated(self):
        """{key: value} of the scenario keys a calibration overlay set
        (``aifsim calibrate``, applied with ``--set-file``): fitted to a
        measurement, not modelled. The resolved scenario marks them
        (``calibrated_keys``); {} for a run without an overlay."""
        keys = self.scenario.get("calibrated_keys") or [] if isinstance(
            self.scenario, dict) else []
        given = self.override_values()
        return {k: given.get(k, self.scenario_value(k)) for k in keys}

    @property
    def calibration_overlay(self):
        """The path of the overlay those values came from, or None."""
        sc = self.scenario if isinstance(self.scenario, dict) else {}
        return sc.get("calibration_overlay")

    def scenario_value(self, key, default=None):
        """A scenario value by its --set key ("power.cap", "racks.0.gpu")."""
        node = self.scenario
        for part in key.split("."):
            if isinstance(node, list):
                try:
                    node = node[int(part)]
                except (ValueError, IndexError):
                    return default
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                return default
        return node

    @property
    def duration_s(self):
        s = self.summary
        if "duration_s" in s:
            return float(s["duration_s"])
        t = self.facility.index
        return float(t[-1]) if len(t) else 0.0

    @property
    def start_utc(self):
        """The wall-clock UTC time of t = 0 (a pandas Timestamp), from the
        root attribute ``start_utc`` the simulator writes when the
        scenario's signals give one; None otherwise."""
        text = attr_text(self.attrs.get("start_utc"), "")
        if not text:
            return None
        try:
            ts = pd.Timestamp(text)
        except (ValueError, TypeError):
            return None
        return ts.tz_convert(None) if ts.tzinfo is not None else ts

    def time_attrs(self):
        """The attributes of the file's time coordinates: units ("s", or
        "seconds since 2023-07-01T00:00:00Z" for a run with a date), calendar
        (with a date) and long_name."""
        return _time_attrs(self.path)

    def rack_groups(self):
        """{rack name: rack group name} from the scenario's racks list
        (racks are named GROUP-INDEX)."""
        names = list(self.racks.columns.get_level_values("rack").unique()) \
            if len(self.racks.columns) else []
        groups = [r.get("name") for r in (self.scenario.get("racks") or [])
                  if isinstance(r, dict)]
        out = {}
        for n in names:
            best = None
            for gname in groups:
                if gname and n.startswith(str(gname) + "-") and (
                        best is None or len(gname) > len(best)):
                    best = gname
            out[n] = best if best is not None else n.rsplit("-", 1)[0]
        return out

    # -- conversions ------------------------------------------------------
    def to_xarray(self, group=None):
        """The run as an xarray Dataset with a ``time`` coordinate in
        seconds and ``units``/``long_name`` attributes on every variable.

        ``group=None`` gives /facility plus the per-rack, per-loop and
        per-service series (named ``racks_power_w``, ``loops_...``,
        ``services_...``, with dimensions (time, rack) etc.);
        ``group="racks"`` gives one group with the file's own names.
        """
        import xarray as xr

        def one(name):
            if name == "facility":
                fr = self.facility
                ds = xr.Dataset(coords={"time": fr.index.values})
                for c in fr.columns:
                    ds[c] = ("time", fr[c].values,
                             _xarray_attrs(fr, c.split("/")[0]))
                return ds
            fr = getattr(self, name)
            dim = {"racks": "rack", "loops": "loop",
                   "services": "service"}[name]
            ds = xr.Dataset(coords={"time": fr.index.values})
            if not len(fr.columns):
                return ds
            if name == "services":
                fr = fr.swaplevel(axis=1)
            for var in fr.columns.get_level_values(0).unique():
                sub = fr[var]
                ds[var] = (("time", dim), sub.values, _xarray_attrs(fr, var))
                ds = ds.assign_coords({dim: [str(c) for c in sub.columns]})
            return ds

        def tidy(ds):
            # The file's own time units: "seconds since 2023-07-01T00:00:00Z"
            # with a calendar when the run has a date, so xr.decode_cf(ds)
            # gives datetime64; "s" otherwise.
            ds["time"].attrs.update(self.time_attrs())
            ds.attrs.update({k: v for k, v in (
                ("scenario_name", self.name), ("seed", self.seed),
                ("aifsim_version", self.version),
                ("source", str(self.path))) if v is not None})
            return ds

        if group is not None:
            if group not in ("facility", "racks", "loops", "services"):
                raise ValueError("group must be facility, racks, loops or "
                                 "services, not %r" % (group,))
            return tidy(one(group))
        ds = one("facility")
        for name in ("racks", "loops", "services"):
            sub = one(name)
            if not sub.data_vars:
                continue
            sub = sub.rename({v: "%s_%s" % (name, v) for v in sub.data_vars})
            ds = xr.merge([ds, sub], join="outer",
                          combine_attrs="drop_conflicts")
        return tidy(ds)


def _time_attrs(path):
    """units, calendar (when dated) and long_name of /facility/time."""
    out = {"units": "s",
           "long_name": "simulated time at the end of the sample interval"}
    with h5py.File(path, "r") as f:
        t = f.get("facility/time")
        if t is not None:
            for k in ("units", "calendar", "long_name"):
                if k in t.attrs:
                    out[k] = attr_text(t.attrs[k])
    return out


def _xarray_attrs(fr, var):
    out = {}
    if var in fr.units:
        out["units"] = fr.units[var]
    if var in fr.long_names:
        out["long_name"] = fr.long_names[var]
    return out


def _table(obj):
    """/jobs: a compound dataset or a group of equal-length 1-D columns."""
    if obj is None:
        return _frame(index=pd.RangeIndex(0))
    units, long_names, cols = {}, {}, {}
    if isinstance(obj, h5py.Dataset) and obj.dtype.names:
        arr = obj[()]
        for name in obj.dtype.names:
            v = arr[name]
            if v.dtype.kind in "OS":
                v = [x.decode("utf-8", "replace") if isinstance(x, bytes)
                     else x for x in v]
            cols[name] = v
        u = obj.attrs.get("units")
        if u is not None and np.ndim(u) == 1 and len(u) == len(
                obj.dtype.names):
            units = {n: attr_text(x) for n, x in zip(obj.dtype.names, u)}
        for n in obj.dtype.names:  # or one attribute per field: id_units
            if n + "_units" in obj.attrs:
                units[n] = attr_text(obj.attrs[n + "_units"])
    elif isinstance(obj, h5py.Group):
        n = None
        for name, ds in obj.items():
            # the row axis (/jobs/job, a dimension scale) numbers the rows
            if not isinstance(ds, h5py.Dataset) or ds.ndim != 1 or \
                    is_dimension_scale(ds):
                continue
            if n is not None and ds.shape[0] != n:
                continue
            n = ds.shape[0]
            cols[name] = read_values(ds)
            if "units" in ds.attrs:
                units[name] = attr_text(ds.attrs["units"])
            if "long_name" in ds.attrs:
                long_names[name] = attr_text(ds.attrs["long_name"])
    return _frame(pd.DataFrame(cols), units=units, long_names=long_names)


def open_run(path, allow_incomplete=False):
    """Open one run file; returns a :class:`Run`.

    Raises RunNotFoundError (no such file), IncompleteRunError (only
    ``PATH.partial`` exists, or the file is not marked complete; pass
    ``allow_incomplete=True`` to read what a killed run left),
    NewerFormatError (``format_version`` above what this package reads) and
    NotARunError (not HDF5, or no /facility).
    """
    p = Path(os.fspath(path))
    if p.is_dir():
        raise NotARunError(
            "%s is a directory, not a run file (for a sweep directory use "
            "aifsim.open_sweep)" % p)
    if not p.exists():
        partial = p.with_name(p.name + ".partial")
        if partial.exists() and not allow_incomplete:
            raise IncompleteRunError(
                "%s: the run is incomplete: only %s exists (the run is still "
                "going, or it was killed or failed before it finished; run it "
                "again, or pass allow_incomplete=True to read what is there)"
                % (p, partial.name))
        if partial.exists():
            p = partial
        else:
            raise RunNotFoundError(
                "%s: no such run file (write one with: aifsim run SCENARIO "
                "-o %s)" % (p, p))
    if p.name.endswith(".partial") and not allow_incomplete:
        raise IncompleteRunError(
            "%s is an incomplete run (a .partial file: still being written, "
            "or left by a run that was killed); pass allow_incomplete=True to "
            "read it anyway" % p)
    sealed = check_seal(p)  # before HDF5, which can crash on damage
    try:
        f = h5py.File(p, "r")
    except OSError as e:
        if p.name.endswith(".partial"):
            raise IncompleteRunError("%s: cannot open the incomplete run (%s)"
                                     % (p, e)) from e
        raise NotARunError("%s is not an HDF5 file (%s)" % (p, e)) from e
    with f:
        attrs = {k: attr_value(v) for k, v in f.attrs.items()}
        _check_written_by_aifsim(p, attrs, sealed)
        fv = attrs.get("format_version", 1)
        try:
            fv = int(fv)
        except (TypeError, ValueError):
            raise NotARunError("%s: root attribute format_version is %r, not "
                               "an integer" % (p, fv)) from None
        if fv > FORMAT_VERSION:
            raise NewerFormatError(
                "%s uses file format version %d (written by aifsim %s); this "
                "analysis package (format %d) is older: update it from the "
                "same aifsim source as the simulator"
                % (p, fv, attrs.get("aifsim_version", "?"), FORMAT_VERSION))
        if "facility" not in f:
            raise NotARunError("%s has no /facility group: not an aifsim run"
                               % p)
        if attrs.get("complete") != 1 and not allow_incomplete:
            raise IncompleteRunError(
                "%s is not marked complete (root attribute complete=%r): the "
                "run did not finish; pass allow_incomplete=True to read it "
                "anyway" % (p, attrs.get("complete")))
    return Run(p, attrs)


def _check_written_by_aifsim(p, attrs, sealed):
    """A run file aifsim wrote says so: the root attribute format is
    RUN_FORMAT (and the file is sealed). Files from before that attribute
    carry format_version and aifsim_version. Anything else is refused,
    whatever groups it has: an HDF5 file with a /facility and complete=1
    is not a run."""
    fmt = attrs.get("format")
    if fmt == RUN_FORMAT:
        return
    if fmt is not None:
        what = "an aifsim sweep summary (open its folder with " \
            "aifsim.open_sweep)" if fmt == "aifsim-sweep-summary" else \
            "a file of format %r" % (fmt,)
        raise NotARunError("%s is %s, not an aifsim run" % (p, what))
    if not sealed and "format_version" in attrs and "aifsim_version" in attrs:
        return  # written by an aifsim older than the format attribute
    raise NotARunError(
        "%s was not written by aifsim (no root attribute format = %r); "
        "aifsim run writes run files" % (p, RUN_FORMAT))


def summary_table(run):
    """The run's /summary as a table: group, metric, value (with units),
    key; rows of features the run does not use are left out (see
    aifsim.tables)."""
    from .tables import summary_table as table
    return table(run)


def mean_power_w(run):
    """Mean facility power over the run from the /facility samples (equal
    intervals, so the plain mean)."""
    p = run.facility["power_w"].to_numpy()
    return float(np.mean(p)) if len(p) else math.nan
