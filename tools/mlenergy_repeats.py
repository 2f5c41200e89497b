#!/usr/bin/python3
"""mlenergy_repeats.py GIT_DIR > data/gpu_power/mlenergy_v3_request_repeats.csv

Copies, from a clone of github.com/ml-energy/benchmark (GIT_DIR, a bare
git directory; commit c1d6557 for the file in data/), how many unique
requests each vLLM run of ML.ENERGY v3 sent and how many times it sent
the list whole: one row per (task, model, GPU, GPUs, max_num_seqs) of every
configs/vllm/<task>/<org>/<model>/<gpu>/ folder, expanded from that
folder's sweeps.yaml or, when it has none, from the task's
benchmark.yaml sweep_defaults (the benchmark's own rule). num_requests is
the task's workload_defaults.num_requests (benchmark.yaml), which a
sweeps.yaml may override. mlenergy/benchmark/llm/workloads.py sends
`requests * num_request_repeats`: the list repeated whole, in order.
data/SOURCES.md describes the file; tests/validate/mlenergy_repeats.c
reads it.
"""
import csv
import itertools
import subprocess
import sys

import yaml


def git(gd, *args):
    return subprocess.run(["git", "--git-dir=" + gd, *args], check=True,
                          capture_output=True, text=True).stdout


def show(gd, path):
    return yaml.safe_load(git(gd, "show", "HEAD:" + path))


def expand(groups):
    """The (num_request_repeats, max_num_seqs, num_gpus) of a sweep list."""
    for g in groups:
        keys = sorted(g)
        for vals in itertools.product(*(g[k] for k in keys)):
            d = dict(zip(keys, vals))
            yield (d.get("num_request_repeats", 1), d["max_num_seqs"],
                   d.get("num_gpus", ""))


def main():
    gd = sys.argv[1]
    files = git(gd, "ls-tree", "-r", "--name-only", "HEAD",
                "configs/vllm").split("\n")
    tasks = {}
    for f in files:
        p = f.split("/")
        if len(p) == 4 and p[3] == "benchmark.yaml":
            tasks[p[2]] = show(gd, f)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["task", "model_id", "gpu_model", "num_gpus", "max_num_seqs",
                  "num_request_repeats", "num_requests", "from"])
    rows = []
    for f in files:
        p = f.split("/")
        if len(p) != 7 or p[6] != "num_gpus.txt":
            continue
        task, model, gpu = p[2], p[3] + "/" + p[4], p[5]
        folder = "/".join(p[:6])
        bench = tasks[task]
        n_req = bench["workload_defaults"]["num_requests"]
        if folder + "/sweeps.yaml" in files:
            sw = show(gd, folder + "/sweeps.yaml")
            n_req = (sw.get("workload_defaults") or {}).get("num_requests",
                                                            n_req)
            groups, src = sw["sweep"], "sweeps.yaml"
        else:
            groups, src = bench["sweep_defaults"], "benchmark.yaml"
        # num_gpus.txt lists the GPU counts the sweep runs at, one a
        # line; a sweep group's own num_gpus restricts it to those.
        counts = git(gd, "show", "HEAD:" + f).split()
        for rep, seqs, ng in expand(groups):
            for n in ([str(ng)] if ng != "" else counts):
                rows.append([task, model, gpu, n, seqs, rep, n_req, src])
    rows.sort(key=lambda r: (r[0], r[1], r[2], int(r[3]), int(r[4])))
    out.writerows(rows)


if __name__ == "__main__":
    main()
