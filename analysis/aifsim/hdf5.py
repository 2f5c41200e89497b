"""Values out of h5py objects as plain Python: the small readers run.py
and sweep.py share (attributes decoded, strings as str), and the checks
that come before h5py reads a file at all (its seal)."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib

import h5py
import numpy as np

from .errors import DamagedRunError

#: Bytes aifsim appends to every file it writes, after HDF5's last: the
#: seal, a checksum of the whole file (sim/output/seal.h).
SEAL_BYTES = 64
_SEAL_MAGIC = b"aifsim-seal 1\n"
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _trailer(crc, size):
    text = b"%scrc32 %08x\nsize %d\n" % (_SEAL_MAGIC, crc, size)
    return text + b"\0" * (SEAL_BYTES - len(text))


def check_seal(path):
    """Check the seal aifsim puts on every file it writes, before h5py (or
    HDF5, which trusts the bytes it reads and can crash on damaged ones)
    opens it. True when the file is sealed and whole; False when it
    carries no seal (not written by this aifsim, or older than seals);
    DamagedRunError, naming the file, when it was changed since."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - SEAL_BYTES))
        found = f.read(SEAL_BYTES)
        if size < SEAL_BYTES or not found.startswith(_SEAL_MAGIC):
            if 0 < _hdf5_end(f) < size:
                raise DamagedRunError("%s: damaged: its seal is unreadable"
                                      % path)
            return False
        f.seek(0)
        crc, left = 0, size - SEAL_BYTES
        while left > 0:
            chunk = f.read(min(left, 1 << 20))
            if not chunk:
                break
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
    if found == _trailer(crc, size - SEAL_BYTES):
        return True
    sealed = _sealed_size(found)
    if sealed and sealed != size - SEAL_BYTES:
        raise DamagedRunError(
            "%s: damaged: %d bytes, but %d when aifsim wrote it (truncated "
            "or extended since)" % (path, size, sealed + SEAL_BYTES))
    raise DamagedRunError(
        "%s: damaged: its checksum does not match (changed after aifsim "
        "wrote it)%s" % (path, locate_damage(path)))


def _hdf5_end(f):
    """The end of the file HDF5's superblock (version 2 or 3) records, or
    0 when there is none."""
    f.seek(0)
    sb = f.read(36)
    if len(sb) < 36 or not sb.startswith(_HDF5_SIGNATURE) or \
            sb[8] not in (2, 3) or sb[9] != 8:
        return 0
    return int.from_bytes(sb[28:36], "little")


def _sealed_size(trailer):
    for line in trailer.split(b"\0", 1)[0].split(b"\n"):
        if line.startswith(b"size "):
            try:
                return int(line[5:])
            except ValueError:
                return 0
    return 0


_LOCATE = r"""
import sys, h5py
def visit(name, obj):
    where[0] = "/" + name
    for k in obj.attrs:
        obj.attrs[k]
    if isinstance(obj, h5py.Dataset):
        obj[()]
where = ["/"]
try:
    with h5py.File(sys.argv[1], "r") as f:
        for k in f.attrs:
            f.attrs[k]
        f.visititems(visit)
    where[0] = ""
except Exception as e:
    print("%s	%s" % (where[0], str(e).splitlines()[0] if str(e) else e))
"""


def locate_damage(path, timeout=120):
    """'; dataset /x fails ...' naming the first object of a damaged file
    that does not read back, or '' when every one does. The reading runs
    in a child process: HDF5 can crash on damage, and then says so."""
    try:
        out = subprocess.run([sys.executable, "-c", _LOCATE, os.fspath(path)],
                             capture_output=True, text=True, timeout=timeout,
                             env=dict(os.environ, PYTHONWARNINGS="ignore"))
    except subprocess.TimeoutExpired:
        return "; reading it back did not finish in %d s" % timeout
    if out.returncode < 0:
        return "; reading it back crashed HDF5 (signal %d)" % -out.returncode
    line = out.stdout.strip()
    if not line:
        return ""
    where, _, why = line.partition("\t")
    return "; %s cannot be read back (%s)" % (
        "object " + where if where else "the file", why)


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
    """A dataset's values; strings decoded to str. A dataset that fails
    its checksum (Fletcher32) or cannot be read is DamagedRunError naming
    the file and the dataset."""
    try:
        if h5py.check_string_dtype(ds.dtype) is not None:
            return np.asarray(ds.asstr()[()], dtype=object)
        return ds[()]
    except OSError as e:
        raise DamagedRunError("%s: damaged: dataset %s cannot be read (%s)"
                              % (ds.file.filename, ds.name,
                                 str(e).splitlines()[0])) from None


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
