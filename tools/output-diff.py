#!/usr/bin/python3
"""output-diff.py BEFORE AFTER [--by-kind] - how far two aifsim outputs
differ, value for value: for every numeric dataset (and numeric attribute)
the largest relative difference |a - b| / max(|a|, |b|) over its elements
(0 where both are equal, NaN alike included), and for every other one
whether it is the same. BEFORE and AFTER are HDF5 files or folders of them
(NAME.h5 matched by name). Prints one line per dataset that differs, or
with --by-kind the largest difference per top-level group and per
dataset name across files. Exit 0 when every non-numeric object is the
same and every file is in both; the numeric differences are reported,
not judged (a deliberate change of last bits shows as 1e-16 to 1e-13).
"""
import os
import sys

import h5py
import numpy as np


# Dimension scales' attributes: object references, which differ between
# any two files; the datasets they join are compared themselves.
REFERENCES = ("DIMENSION_LIST", "REFERENCE_LIST")


def rel(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    a = a.astype(float)
    b = b.astype(float)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    scale = np.maximum(np.abs(a), np.abs(b))
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(same, 0.0, np.abs(a - b) / scale)
    d = np.where(np.isnan(d), np.inf, d)
    return float(d.max())


def numeric(x):
    return isinstance(x, (np.ndarray, np.generic, int, float)) and \
        np.asarray(x).dtype.kind in "biuf"


def compare(fa, fb, report):
    """Calls report(name, diff): diff a float, or None when not numeric
    and different."""
    names = set()
    fa.visit(names.add)
    other = set()
    fb.visit(other.add)
    for n in sorted(names ^ other):
        report(n, None)
    for n in sorted(names & other):
        oa, ob = fa[n], fb[n]
        for k in set(oa.attrs) | set(ob.attrs):
            if k in REFERENCES:
                continue
            if k not in oa.attrs or k not in ob.attrs:
                report(n + "@" + k, None)
                continue
            va, vb = oa.attrs[k], ob.attrs[k]
            if numeric(va) and numeric(vb):
                report(n + "@" + k, rel(va, vb))
            elif not np.array_equal(np.asarray(va), np.asarray(vb)):
                report(n + "@" + k, None)
        if not isinstance(oa, h5py.Dataset):
            continue
        va, vb = oa[()], ob[()]
        if numeric(va) and numeric(vb):
            report(n, rel(va, vb))
        elif not np.array_equal(np.asarray(va), np.asarray(vb)):
            report(n, None)


def pairs(a, b):
    if os.path.isfile(a):
        return [(os.path.basename(a), a, b)]
    out = []
    for n in sorted(set(os.listdir(a)) | set(os.listdir(b))):
        if n.endswith(".h5"):
            out.append((n, os.path.join(a, n), os.path.join(b, n)))
    return out


def main():
    args = [x for x in sys.argv[1:] if not x.startswith("--")]
    by_kind = "--by-kind" in sys.argv
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    bad = 0
    kinds, files = {}, {}
    for name, pa, pb in pairs(*args):
        if not (os.path.exists(pa) and os.path.exists(pb)):
            print(f"{name}: only in one")
            bad += 1
            continue
        worst = [0.0]

        def report(n, d, name=name, worst=worst):
            nonlocal bad
            if d is None:
                print(f"{name}: {n}: not the same")
                bad += 1
                return
            worst[0] = max(worst[0], d)
            kind = n.split("/")[0].split("@")[0]
            kinds[kind] = max(kinds.get(kind, 0.0), d)
            if d > 0 and not by_kind:
                print(f"{name}: {n}: {d:.3g}")

        with h5py.File(pa, "r") as fa, h5py.File(pb, "r") as fb:
            compare(fa, fb, report)
        files[name] = worst[0]
    print("largest relative difference per file:")
    for n, d in files.items():
        print(f"  {n}: {d:.3g}")
    print("largest relative difference per output kind (top-level group):")
    for k in sorted(kinds):
        print(f"  {k}: {kinds[k]:.3g}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
