"""Values out of h5py objects as plain Python: the small readers run.py
and sweep.py share (attributes decoded, strings as str)."""

from __future__ import annotations

import h5py
import numpy as np


def attr_value(v):
    """An HDF5 attribute value as plain Python."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray):
        if v.shape == () or (v.size == 1 and v.ndim <= 1
                             and v.dtype.kind != "O"):
            return attr_value(v.reshape(-1)[0]) if v.size else None
        return [attr_value(x) for x in v.tolist()]
    if isinstance(v, np.generic):
        return v.item()  # floats stay floats ("gpus" is written as 544.0)
    return v


def attr_text(v, default=""):
    """An attribute value as str (`default` when it is missing)."""
    v = attr_value(v)
    return default if v is None else str(v)


def read_values(ds):
    """A dataset's values; strings decoded to str."""
    if h5py.check_string_dtype(ds.dtype) is not None:
        return np.asarray(ds.asstr()[()], dtype=object)
    return ds[()]


def is_dimension_scale(ds):
    try:
        return bool(h5py.h5ds.is_scale(ds.id))
    except Exception:  # noqa: BLE001 - not a dimension scale
        return False


def dimension_scale(ds, dim):
    """The dataset attached as dimension scale `dim` of `ds`, or None."""
    try:
        scales = ds.dims[dim]
        if len(scales):
            return scales[0]
    except Exception:  # noqa: BLE001 - no DIMENSION_LIST, broken reference
        pass
    return None
