#!/usr/bin/python3
"""replay_matches_log.py FORMAT LOG RUN.h5 - an as-logged replay of LOG
(aifsim import FORMAT LOG, then aifsim run) holds the log's job count,
GPU-hours and makespan in its /jobs table. The log is read here from the
raw file, not through the importer. Prints "N jobs, G GPU-h, makespan S s";
an assertion fails otherwise. Used by test_import.sh and
test_gallery_import.sh."""
import csv, datetime as dt, sys
import h5py, numpy as np
fmt, path, run = sys.argv[1:4]

def t(s):
    return dt.datetime.fromisoformat(s.replace("T", " ")).timestamp()

jobs = []  # (submit, start, end, gpus) as the log says
if fmt == "sacct":
    for r in csv.DictReader(open(path), delimiter="|"):
        if "." in r["JobID"] or r["Start"] in ("None", "Unknown"):
            continue
        tres = dict(kv.split("=", 1) for kv in r["AllocTRES"].split(",") if kv)
        g = int(tres.get("gres/gpu", 0))
        if g:
            jobs.append((t(r["Submit"]), t(r["Start"]), t(r["End"]), g))
elif fmt == "swf":
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith(";"):
            continue
        sub, wait, run_s, procs = (float(x) for x in f[1:5])
        if wait < 0 or run_s < 0 or procs <= 0:
            continue
        jobs.append((sub, sub + wait, sub + wait + run_s, int(procs)))
else:
    for r in csv.DictReader(open(path)):
        if int(r["gpu_num"]) > 0:
            jobs.append((t(r["submit_time"]), t(r["start_time"]),
                         t(r["end_time"]), int(r["gpu_num"])))
j = np.array(jobs)
t0 = j[:, 0].min()
log_n, log_gpuh = len(j), float((j[:, 3] * (j[:, 2] - j[:, 1])).sum() / 3600)
log_span = float(j[:, 2].max() - t0)

f = h5py.File(run, "r")
tab = f["jobs"]
kind = np.array([k.decode() for k in tab["kind"][:]])
status = np.array([k.decode() for k in tab["status"][:]])
g = kind == "gpu_job"
assert g.sum() == log_n, (g.sum(), log_n)
assert (status[g] == "done").all(), status[g]
start, end, gpus = tab["start_s"][g], tab["end_s"][g], tab["gpus"][g]
gpuh = float((gpus * (end - start)).sum() / 3600)
span = float(end.max() - tab["arrival_s"][g].min())
assert abs(gpuh - log_gpuh) <= 1e-6 * log_gpuh, (gpuh, log_gpuh)
assert abs(span - log_span) <= 1e-6, (span, log_span)
s = f["summary"].attrs
assert s["jobs_arrived"] == log_n == s["jobs_done"]
print(f"{log_n} jobs, {gpuh:.6g} GPU-h, makespan {span:.0f} s")
