#!/usr/bin/python3
"""calibrate_spread.py - how far the trt-llm fit of tools/calibrate.py
moves with its seeds: the fit repeated on disjoint sets of K seeds
(1..K, K+1..2K, ...), unrounded, each with its stated standard errors,
then the constants' standard deviation across the sets beside the mean
stated error. What chose the fit's K and difference step
(docs/VALIDATION.md, "The trt-llm fit's seeds"); also how the fit moves
between two builds' draw sequences (run it on each).

Usage: calibrate_spread.py BUILD [--k K] [--sets N] [--first S]
                           [--step H]
"""
import argparse
import os
import statistics
import sys
import tempfile

import calibrate


def fit_sets(build, k, sets, first, step):
    """[(seeds, {key: value}, {key: standard error})] for each set."""
    kept, power = calibrate.trt_inputs(build)
    rows, header = calibrate.read_fit_set(calibrate.ROOT,
                                          calibrate.MLPERF_V40)
    out = []
    with tempfile.TemporaryDirectory(prefix="aifsim-spread-") as tmp:
        path = os.path.join(tmp, "fit_set.csv")
        calibrate.write_rows(path, rows, header)
        for j in range(sets):
            seeds = tuple(range(first + j * k, first + (j + 1) * k))
            vals, errors, _ = calibrate.trt_fit(build, path, kept, power,
                                                seeds, step)
            out.append((seeds, vals, errors))
            print(f"{calibrate._seed_range(seeds)}: " + ", ".join(
                f"{key} {SHOW[key](v)} +-{SHOW[key](errors[key])}"
                for key, v in vals.items()), flush=True)
    return out


SHOW = {"eff_flops": lambda v: f"{100 * v:.3f}%",
        "seq_overhead": lambda v: f"{1e6 * v:.3f} us"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--k", type=int, default=len(calibrate.TRT_SEEDS))
    ap.add_argument("--sets", type=int, default=4)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--step", type=float, default=calibrate.TRT_STEP)
    a = ap.parse_args()
    try:
        found = fit_sets(os.path.abspath(a.build), a.k, a.sets, a.first,
                         a.step)
    except calibrate.Error as e:
        print(f"calibrate_spread.py: {e}", file=sys.stderr)
        return 1
    if len(found) < 2:
        return 0
    for key in found[0][1]:
        sd = statistics.stdev(v[key] for _, v, _ in found)
        se = statistics.mean(e[key] for _, _, e in found)
        print(f"K {a.k}, step {a.step:g}, {len(found)} sets: {key} "
              f"standard deviation across the sets {SHOW[key](sd)}, "
              f"{sd / se:.2f} of the stated error (mean {SHOW[key](se)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
