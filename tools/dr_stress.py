#!/usr/bin/python3
"""dr_stress.py - writes data/dr/emerald-stress.csv, the demand-response
targets of scenarios/dr-stress.yaml, in the shape of Emerald AI's trial
with National Grid (more than 200 events; cuts of 30% within about 30 s;
up to 40% held for 10 h): one 40% cut held 10 h from 1 h, then 199 cuts of
30% for 20 min every 40 min from 12 h. 200 events in all, as operator
targets (time_s, cut: a share of the contracted capacity; an empty cut
ends the event).

    /usr/bin/python3 tools/dr_stress.py    # rewrites the file
"""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "data", "dr", "emerald-stress.csv")


def rows():
    yield 3600, "0.40"
    yield 3600 + 10 * 3600, ""
    start = 12 * 3600
    for k in range(199):
        t = start + k * 2400
        yield t, "0.30"
        yield t + 1200, ""


def main():
    with open(OUT, "w") as f:
        f.write("time_s,cut\n")
        for t, cut in rows():
            f.write("%d,%s\n" % (t, cut))


if __name__ == "__main__":
    main()
