"""A synthetic meter for tests/cli/test_calibrate.sh: a run's facility
power (its HDF5) as a CSV of timestamps and kW, with seeded relative noise.

    synth.py RUN.h5 OUT.csv NOISE
"""
import sys

import numpy as np
import pandas as pd

import aifsim

run = aifsim.open_run(sys.argv[1])
f = run.facility
p = f["power_w"].to_numpy()
dt = float(f.index[1] - f.index[0])
t = f.index.to_numpy() - dt  # samples close their interval; rows open it
rng = np.random.default_rng(1)
m = p * (1 + float(sys.argv[3]) * rng.standard_normal(len(p)))
ts = pd.Timestamp("2026-07-01T00:00:00Z") + pd.to_timedelta(t, unit="s")
with open(sys.argv[2], "w") as fh:
    fh.write("timestamp,facility_kW\n")
    for a, b in zip(ts, m):
        fh.write("%s,%.4f\n" % (a.strftime("%Y-%m-%dT%H:%M:%SZ"), b / 1e3))
