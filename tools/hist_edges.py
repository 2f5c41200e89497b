#!/usr/bin/python3
"""hist_edges.py - the latency histograms' bin edges, as a C table.

Usage: hist_edges.py [--check]

Writes models/work/inference_hist_edges.c: edge[b], b = 0 .. HIST_BINS,
the smallest double x >= HIST_LO_S whose position log10(x / HIST_LO_S) x
HIST_PER_DECADE is at least b, and edge[HIST_BINS + 1] = +inf. Python's
math.log10 is the C library's log10 and its floats are the same IEEE
doubles, so the edges are those the C code's own log10 places (the test
tests/work/test_inference_hist.c holds every edge to it, and the doubles
either side). The simulator bins without a log10 from this table
(inf__hist_bin), the same table in every run and on every machine.
--check writes nothing and exits 1 when the file is stale.
"""
import argparse
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "models", "work", "inference_hist_edges.c")
LO, PER_DECADE, BINS = 1e-6, 100, 1000  # inference_internal.h's HIST_*


def pos(x):
    """inf__hist_pos: the bin position log10 gives x."""
    return math.log10(x / LO) * PER_DECADE


def edge(b):
    """The smallest x >= LO at position b or above, found by ulps from
    the edge's value (log10 is within an ulp or so of it)."""
    x = LO * math.pow(10, b / PER_DECADE)
    while pos(x) < b:
        x = math.nextafter(x, math.inf)
    y = math.nextafter(x, 0)
    while y >= LO and pos(y) >= b:
        x, y = y, math.nextafter(y, 0)
    return x


def text():
    edges = [LO] + [edge(b) for b in range(1, BINS + 1)]
    lines = [
        "/* inference_hist_edges.c - the latency histograms' bin edges,",
        " * written by tools/hist_edges.py: do not edit. edge[b] is the",
        " * smallest x >= HIST_LO_S that log10 places in bin b or above",
        " * (b = 0 .. HIST_BINS), edge[HIST_BINS + 1] +inf. */",
        '#include "inference_internal.h"',
        "",
        "#include <math.h>",
        "",
        "const double inf__hist_edge[HIST_BINS + 2] = {",
    ]
    for i in range(0, len(edges), 3):
        lines.append("    " + " ".join(e.hex() + "," for e in edges[i:i + 3]))
    lines += ["    INFINITY,", "};", ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    want = text()
    if args.check:
        with open(OUT) as f:
            if f.read() != want:
                print(f"{OUT} is stale: run tools/hist_edges.py",
                      file=sys.stderr)
                return 1
        return 0
    with open(OUT, "w") as f:
        f.write(want)
    return 0


if __name__ == "__main__":
    sys.exit(main())
