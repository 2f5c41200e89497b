#!/usr/bin/python3
"""cap_from_python.py - a facility cap driven from Python, a control period
at a time, through libaifsim (aifsim.Factory).

The controller sheds load for a window (a demand-response call, here from
10 to 20 minutes into the run, or the middle third of a shorter one): it
reads the facility's power every period, and for the window holds the
quickstart factory to 90% of what it drew over the minute before, then
gives the scenario's cap back. The factory's own power control shares the
cap among the GPUs. At the end it prints the mean power before, inside and
after the window and the books' cap violation, and writes the run as
`aifsim run` would.

    PYTHONPATH=analysis /usr/bin/python3 examples/cap_from_python.py \\
        --duration 1h -o out/capped.h5
"""

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "analysis"))

import aifsim  # noqa: E402


def parse_duration(text):
    """"20min", "1h", "90s" or seconds, as seconds."""
    for suffix, scale in (("min", 60), ("h", 3600), ("s", 1)):
        if text.endswith(suffix):
            return float(text[:-len(suffix)]) * scale
    return float(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="quickstart")
    ap.add_argument("--duration", default="1h")
    ap.add_argument("--share", type=float, default=0.9,
                    help="the cap in the window, as a share of the power "
                    "drawn over the minute before it")
    ap.add_argument("-o", "--out", default=None)
    args = ap.parse_args()
    duration = parse_duration(args.duration)
    start, end = duration / 3, 2 * duration / 3
    if duration >= 1800:
        start, end = 600, 1200
    f = aifsim.Factory(args.scenario, set={"duration": args.duration},
                       out=args.out)
    drawn = {"before": [], "inside": [], "after": []}
    cap = None
    while not f.at_end:
        # Set before the step: in force from the tick the step ends on.
        t_next = f.time + f.period
        if start <= t_next < end and cap is None:
            last_minute = drawn["before"][-int(60 / f.period):]
            cap = args.share * sum(last_minute) / len(last_minute)
        f.cap = cap if start <= t_next < end else None
        f.step()
        part = ("before" if f.time < start else
                "inside" if f.time < end else "after")
        drawn[part].append(f.power)
    f.finish()
    print("cap %.1f kW over [%.0f s, %.0f s)" % (cap / 1e3, start, end))
    print("mean power %s" % ", ".join(
        "%s %.1f kW" % (k, sum(v) / len(v) / 1e3) for k, v in drawn.items()))
    print("cap violation %.0f s" % f.summary("cap_violation_s"))
    f.close()


if __name__ == "__main__":
    main()
