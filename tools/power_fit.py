#!/usr/bin/python3
"""power_fit.py - the GPU families' cap-to-clock curves from Zeus's data.

Usage: power_fit.py zeus          the curves and power-law fits per family
       power_fit.py zeus --yaml   the Ampere curve as catalog lines (A100)

The fitted constants of the power model and the serving engines are
tools/calibrate.py's (make calibrate); this script derives the measured
curves the catalog carries and the table of docs/MODELS.md.

Zeus (You, Chung, Chowdhury, NSDI 2023; data/gpu_power/summary_power_*.csv):
one-epoch time and mean board power of five training workloads at power
limits in 25 W steps. Under a limit a compute-bound workload's speed is the
clock share phi (time at the top limit / time at this one) and its dynamic
power (P - idle) / (P_top - idle) is d(phi). A family's curve is the median
over the workloads that reach 60% of the top limit, per limit, made
monotone; the power law phi^gamma is fitted by least squares on
log d = gamma log phi over every workload's points.
"""
import argparse
import csv
import math
import os
import statistics
import sys


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Board power with no work, W: the lightest Zeus runs (NCF) draw 36-39 W
# on the V100, 30-40 W on the A40, 30-35 W on the P100, 20-70 W on the RTX
# 6000 (its NCF runs hold the GPU at a high clock); the floor taken.
ZEUS = {
    "v100": {"family": "Volta", "idle": 35, "clock_mhz": 1380},
    "a40": {"family": "Ampere (GA102)", "idle": 30, "clock_mhz": 1740},
    "p100": {"family": "Pascal", "idle": 30, "clock_mhz": 1329},
    "rtx6000": {"family": "Turing", "idle": 20, "clock_mhz": 1770},
}


def zeus_rows(gpu):
    path = os.path.join(ROOT, "data", "gpu_power", f"summary_power_{gpu}.csv")
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f)]


def zeus_points(gpu):
    """(limit, phi, d) of every power-bound workload below its top limit."""
    idle = ZEUS[gpu]["idle"]
    runs = {}
    for r in zeus_rows(gpu):
        key = (r["network"], r["batch_size"])
        runs.setdefault(key, []).append(
            (float(r["power_limit"]), float(r["time_per_epoch"]),
             float(r["average_power"])))
    pts = []
    for key in sorted(runs):
        rows = sorted(runs[key])
        top = rows[-1]
        if top[2] < 0.6 * top[0]:
            continue
        for lim, t, p in rows[:-1]:
            phi, d = top[1] / t, (p - idle) / (top[2] - idle)
            if 0 < phi < 0.999 and d > 0:
                pts.append((lim, phi, d, key))
    return pts


def zeus_curve(pts):
    """Median (phi, d) per limit, monotone, ending at (1, 1)."""
    by = {}
    for lim, phi, d, _ in pts:
        by.setdefault(lim, []).append((phi, d))
    curve, last = [], (0, 0)
    for lim in sorted(by):
        phi = statistics.median(p for p, _ in by[lim])
        d = statistics.median(x for _, x in by[lim])
        if phi > last[0] and d >= last[1] and phi < 1 and d < 1:
            curve.append((phi, d))
            last = (phi, d)
    curve.append((1.0, 1.0))
    return curve


def interp(curve, d):
    """phi at dynamic share d on the curve (linear between points)."""
    if d <= curve[0][1]:
        return curve[0][0] * d / curve[0][1]
    for (p0, d0), (p1, d1) in zip(curve, curve[1:]):
        if d <= d1:
            return p0 + (p1 - p0) * (d - d0) / (d1 - d0)
    return 1.0


def zeus_report(gpu):
    pts = zeus_points(gpu)
    num = sum(math.log(d) * math.log(phi) for _, phi, d, _ in pts)
    den = sum(math.log(phi) ** 2 for _, phi, _, _ in pts)
    gamma = num / den
    curve = zeus_curve(pts)
    errs = {"2.5": [], "fit": [], "curve": []}
    for _, phi, d, _ in pts:
        errs["2.5"].append(abs(d ** (1 / 2.5) / phi - 1))
        errs["fit"].append(abs(d ** (1 / gamma) / phi - 1))
        errs["curve"].append(abs(interp(curve, d) / phi - 1))
    return pts, gamma, curve, errs


def cmd_zeus(args):
    if args.yaml:
        _, _, curve, _ = zeus_report("a40")
        print("    power_curve:")
        for phi, d in curve:
            mhz = args.clock_max * phi if phi < 1 else args.clock_max
            print(f"      - {{clock: {mhz:.0f} MHz, power: {100 * d:.1f}%}}")
        return 0
    print("| GPU | family | points | gamma fit | speed error, phi^2.5 "
          "(median / worst) | phi^gamma fit | measured curve |")
    print("|---|---|---|---|---|---|---|")
    for gpu in ZEUS:
        pts, gamma, _, e = zeus_report(gpu)
        cells = [f"{100 * statistics.median(e[k]):.1f}% / "
                 f"{100 * max(e[k]):.0f}%" for k in ("2.5", "fit", "curve")]
        print(f"| {gpu.upper()} | {ZEUS[gpu]['family']} | {len(pts)} | "
              f"{gamma:.2f} | " + " | ".join(cells) + " |")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    z = sub.add_parser("zeus")
    z.add_argument("--yaml", action="store_true",
                   help="the Ampere (A40) curve for a type of this clock_max")
    z.add_argument("--clock-max", type=float, default=1410,
                   help="MHz (default: the A100's 1410)")
    args = ap.parse_args()
    return {"zeus": cmd_zeus}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
