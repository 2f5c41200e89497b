#!/usr/bin/python3
"""load_target_from_csv.py - a controller that follows a grid load target
read from a CSV, with a demand-response event, through libaifsim
(aifsim.Factory).

The target steps come from a CSV (time_s, target_kw; by default
examples/load_target.csv, synthetic). The simulator holds the facility
under the limit it is given, at its worst-case reserve, so handing it the
target alone leaves the facility well below it. The controller here
closes the loop: every control period it reads the facility's power and
moves the limit it hands the simulator (aifsim's load target) by an
integral step on the shortfall from the target less a margin, never
above the cap and never below the target itself; a target at or above
the cap asks nothing. A demand-response event (the middle sixth of the run, 80% of
the cap) lowers the cap on top. At the end it prints the mean shortfall
and the time above the target, with and without the loop, and writes the
run as `aifsim run` would.

    PYTHONPATH=analysis /usr/bin/python3 examples/load_target_from_csv.py \\
        --duration 2h -o out/target.h5
"""

import argparse
import csv
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "analysis"))

import aifsim  # noqa: E402


def read_steps(path):
    """[(t_s, target_w)] from a CSV with time_s and target_kw columns
    ('#' lines are comments)."""
    with open(path, newline="") as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return [(float(r["time_s"]), 1e3 * float(r["target_kw"]))
                for r in rows]


def target_at(steps, t):
    """The step in force at t (NaN before the first)."""
    w = math.nan
    for t0, v in steps:
        if t0 <= t:
            w = v
    return w


def run(scenario, duration, steps, gain, margin, out=None):
    """One run; gain 0 hands the simulator the target as it is, else the
    loop aims at the target less margin (a share). Returns
    (mean shortfall W, seconds above the target, the cap violation)."""
    f = aifsim.Factory(scenario, set={"duration": duration}, out=out)
    cap0 = f.cap
    dr = (f.duration * 5 / 12, f.duration * 7 / 12)
    limit, short, above, n = None, 0.0, 0.0, 0
    while not f.at_end:
        t_next = f.time + f.period
        target = target_at(steps, t_next)
        f.cap = 0.8 * cap0 if dr[0] <= t_next < dr[1] else None
        cap = 0.8 * cap0 if dr[0] <= t_next < dr[1] else cap0
        if limit is None or gain == 0 or not target < cap:
            limit = target
        else:  # the integral step on the last period's shortfall, held
            aim = (1 - margin) * target  # in [target, cap]: no wind-up
            limit = min(cap, max(target, limit + gain * (aim - f.power)))
        f.load_target = limit if target < cap else math.inf
        f.step()
        if target < cap and f.power < cap:
            short += target - f.power
            above += f.period if f.power > target else 0
            n += 1
    f.finish()
    result = (short / max(n, 1), above, f.summary("cap_violation_s"))
    f.close()
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="quickstart")
    ap.add_argument("--duration", default="2h")
    ap.add_argument("--csv", default=str(HERE / "load_target.csv"))
    ap.add_argument("--gain", type=float, default=0.2,
                    help="the integral step, per period, on the shortfall")
    ap.add_argument("--margin", type=float, default=0.02,
                    help="the loop aims this share under the target")
    ap.add_argument("-o", "--out", default=None)
    args = ap.parse_args()
    steps = read_steps(args.csv)
    for label, gain, out in (("target as given", 0.0, None),
                             ("closed loop", args.gain, args.out)):
        short, above, violation = run(args.scenario, args.duration, steps,
                                      gain, args.margin, out)
        print("%-16s mean shortfall %.1f kW, above the target %.0f s, "
              "cap violation %.0f s" % (label, short / 1e3, above, violation))


if __name__ == "__main__":
    main()
