#!/usr/bin/env python3
"""joblog_samples.py - writes the synthetic job-log samples of data/joblogs/
(data/SOURCES.md says why they are synthetic): a Slurm `sacct --parsable2`
export and a Standard Workload Format log, both of the same small invented
GPU cluster (two partitions, 32 GPUs), with the cases a reader must handle.
Deterministic (seeded); run it from the repository's root."""
import datetime as dt
import random

rng = random.Random(26)
T0 = dt.datetime(2026, 11, 30, 8, 0, 0)


def jobs(n):
    """n jobs: submit, wait, run (s), GPUs, partition, state."""
    t = 0
    for k in range(n):
        t += int(rng.expovariate(1 / 420))
        gpus = rng.choice([1, 1, 2, 4, 8, 8, 16])
        part = "train" if gpus >= 8 else "debug"
        run = int(rng.lognormvariate(7.6 if part == "train" else 6.3, 0.8))
        wait = int(rng.expovariate(1 / 300))
        state = rng.choices(["COMPLETED", "FAILED", "TIMEOUT", "CANCELLED"],
                            [80, 10, 4, 6])[0]
        yield k, t, wait, run, gpus, part, state


def stamp(s):
    return (T0 + dt.timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S")


def sacct(path):
    cols = "JobID|JobName|Partition|Submit|Start|End|State|AllocTRES|Elapsed"
    lines = [cols]
    for k, t, wait, run, gpus, part, state in jobs(24):
        jid = str(4100 + k)
        tres = f"billing={gpus},cpu={4 * gpus},gres/gpu={gpus},mem={16 * gpus}G,node={max(1, gpus // 8)}"
        if k % 5 == 0:  # a typed GPU as well as the count
            tres = tres.replace(f"gres/gpu={gpus}", f"gres/gpu={gpus},gres/gpu:h100={gpus}")
        st = "CANCELLED by 1000" if state == "CANCELLED" else state
        el = str(dt.timedelta(seconds=run))
        lines.append(f"{jid}|job{k}|{part}|{stamp(t)}|{stamp(t + wait)}|{stamp(t + wait + run)}|{st}|{tres}|{el}")
        lines.append(f"{jid}.batch|batch||{stamp(t + wait)}|{stamp(t + wait)}|{stamp(t + wait + run)}|{state}|cpu=4,mem={16 * gpus}G,node=1|{el}")
        lines.append(f"{jid}.extern|extern||{stamp(t + wait)}|{stamp(t + wait)}|{stamp(t + wait + run)}|COMPLETED|billing={gpus},cpu={4 * gpus},node=1|{el}")
    # Never started (cancelled while pending), and a CPU-only job.
    lines.append(f"4200|pending|train|{stamp(600)}|None|{stamp(900)}|CANCELLED by 1000||00:00:00")
    lines.append(f"4201|prep|debug|{stamp(700)}|{stamp(760)}|{stamp(1300)}|COMPLETED|billing=8,cpu=8,mem=32G,node=1|00:09:00")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def swf(path):
    head = """; Version: 2.2
; Computer: synthetic GPU cluster (aifsim's tools/joblog_samples.py)
; Installation: none: an invented log in the Parallel Workloads Archive's
;   Standard Workload Format, for aifsim import's tests and examples
; MaxJobs: 30
; MaxRecords: 31
; Preemption: No
; UnixStartTime: 1796025600
; TimeZoneString: UTC
; MaxNodes: 4
; MaxProcs: 32
; Note: processors are GPUs (procs_per_gpu: 1); queue 1 train, 2 debug
; Note: status 1 completed, 0 failed, 5 cancelled
"""
    status = {"COMPLETED": 1, "FAILED": 0, "TIMEOUT": 0, "CANCELLED": 5}
    rows = []
    for k, t, wait, run, gpus, part, state in jobs(30):
        q = 1 if part == "train" else 2
        rows.append(f"{k + 1:5d} {t:7d} {wait:6d} {run:6d} {gpus:3d} {run * 0.9:9.2f} -1 {gpus:3d} {4 * run:7d} -1 {status[state]} {k % 7 + 1:3d} 1 -1 {q} 1 -1 -1")
    # The log does not know this one's wait and run time (-1).
    rows.append("   31   18000     -1     -1  -1     -1 -1   8   7200 -1 5   2 1 -1 1 1 -1 -1")
    with open(path, "w") as f:
        f.write(head + "\n".join(rows) + "\n")


sacct("data/joblogs/sacct-synthetic.txt")
swf("data/joblogs/synthetic.swf")
