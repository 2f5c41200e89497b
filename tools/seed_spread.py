#!/usr/bin/python3
"""seed_spread.py [--seeds N] [--first S] [--set K=V ...] [--keep DIR]
                  SCENARIO BEFORE [AFTER]

The seed-to-seed spread of a scenario's figures, and whether a change
keeps them within it: the check behind a change that moves random draws
(issue 24: "show the figures staying within their seed-to-seed spread"),
where tools/same-output.sh cannot pass by construction.

BEFORE and AFTER are each an aifsim binary (run on SCENARIO with seeds S,
S + 1, ..., S + N - 1, each with --set seed=K and every --set given) or a
folder of outputs an earlier call kept (seedK.h5). --keep DIR keeps the
runs' outputs in DIR/before and DIR/after.

The figures are /summary's numeric attributes and each service's
(/services/NAME's requests, tokens and latency quantiles). For each one
it prints the mean, the standard deviation over the seeds and the range,
before and after. A figure is within its spread when the two means
differ by at most three standard errors of their difference,
sqrt(sd_before^2 / N + sd_after^2 / N) (Welch's, unpaired: the same seed
before and after is not the same draw once draws moved); a figure that
does not vary with the seed must stay equal. Three, not two: with some
hundred figures, two standard errors would flag a few by chance alone.
The latency quantiles come from histogram bins: one can sit in the same
bin for every seed, and a move of one bin is then flagged, to be judged.

Exit 0 when every figure is within its spread (or only BEFORE was given),
1 when one is not, 2 on bad arguments or a failed run.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

# How many standard errors of the difference of the means a figure may
# move (see the module's comment).
SIGMAS = 3.0


def figures(path):
    """{name: value} of one output's numeric summary figures."""
    out = {}
    with h5py.File(path, "r") as f:
        groups = [("", f["summary"])]
        if "services" in f:
            groups += [(name + "/", f["services"][name])
                       for name in f["services"]]
        for prefix, g in groups:
            for k, v in g.attrs.items():
                if isinstance(v, (int, float, np.integer, np.floating)):
                    out[prefix + k] = float(v)
    return out


def spread(values):
    """(mean, sample standard deviation, min, max) of values."""
    a = np.asarray(values, dtype=float)
    sd = float(a.std(ddof=1)) if a.size > 1 else 0.0
    return float(a.mean()), sd, float(a.min()), float(a.max())


def compare(before, after):
    """Rows (name, spread before, spread after, z, verdict) for every
    figure in both, before and after being {name: [value per seed]}.
    z is the difference of the means in standard errors (inf when the
    figure does not vary and moved); verdict is "same", "within" or
    "OUTSIDE"."""
    rows = []
    for name in sorted(set(before) & set(after)):
        b, a = before[name], after[name]
        if any(math.isnan(x) for x in b + a):
            continue  # a figure the run cannot give (NaN): nothing to say
        sb, sa = spread(b), spread(a)
        se = math.sqrt(sb[1] ** 2 / len(b) + sa[1] ** 2 / len(a))
        diff = abs(sa[0] - sb[0])
        if se == 0:
            z = 0.0 if diff == 0 else math.inf
        else:
            z = diff / se
        verdict = ("same" if b == a else
                   "within" if z <= SIGMAS else "OUTSIDE")
        rows.append((name, sb, sa, z, verdict))
    return rows


def run_seeds(binary, scenario, seeds, sets, folder):
    """Runs binary on scenario once a seed; returns the outputs' paths."""
    paths = []
    for k in seeds:
        out = os.path.join(folder, "seed%d.h5" % k)
        cmd = [binary, "run", scenario, "-o", out, "--quiet",
               "--set", "seed=%d" % k]
        for kv in sets:
            cmd += ["--set", kv]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print("seed_spread: %s failed (%d): %s"
                  % (" ".join(cmd), proc.returncode, proc.stderr.strip()),
                  file=sys.stderr)
            sys.exit(2)
        paths.append(out)
    return paths


def collect(source, scenario, seeds, sets, folder):
    """{name: [value per seed]} of a binary's runs or a kept folder."""
    if os.path.isdir(source):
        paths = [os.path.join(source, "seed%d.h5" % k) for k in seeds]
        missing = [p for p in paths if not os.path.isfile(p)]
        if missing:
            print("seed_spread: missing %s" % ", ".join(missing),
                  file=sys.stderr)
            sys.exit(2)
    else:
        os.makedirs(folder, exist_ok=True)
        paths = run_seeds(source, scenario, seeds, sets, folder)
    per_seed = [figures(p) for p in paths]
    names = set.intersection(*(set(d) for d in per_seed))
    return {n: [d[n] for d in per_seed] for n in names}


def fmt(s):
    mean, sd, lo, hi = s
    return "%.6g +- %.3g [%.6g, %.6g]" % (mean, sd, lo, hi)


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("scenario")
    p.add_argument("before")
    p.add_argument("after", nargs="?")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--first", type=int, default=1)
    p.add_argument("--set", action="append", default=[], dest="sets")
    p.add_argument("--keep")
    args = p.parse_args(argv)
    if args.seeds < 2:
        p.error("--seeds must be at least 2 (a spread needs two)")
    seeds = range(args.first, args.first + args.seeds)
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or tmp
        before = collect(args.before, args.scenario, seeds, args.sets,
                         os.path.join(base, "before"))
        if args.after is None:
            for name in sorted(before):
                print("%-40s %s" % (name, fmt(spread(before[name]))))
            return 0
        after = collect(args.after, args.scenario, seeds, args.sets,
                        os.path.join(base, "after"))
    rows = compare(before, after)
    bad = 0
    for name, sb, sa, z, verdict in rows:
        bad += verdict == "OUTSIDE"
        print("%-8s %-36s %s -> %s (%.2f se)"
              % (verdict, name, fmt(sb), fmt(sa), z))
    print("%d figures over %d seeds: %d outside their spread (%g se)"
          % (len(rows), args.seeds, bad, SIGMAS))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
