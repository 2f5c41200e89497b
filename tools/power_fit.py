#!/usr/bin/python3
"""power_fit.py - the fits behind the GPU power model and the serving engines.

Usage: power_fit.py zeus          the Zeus cap-to-clock curves per family
       power_fit.py zeus --yaml   the Ampere curve as catalog lines (A100)
       power_fit.py vllm [--write]     vllm and the GPU power model
       power_fit.py trt-llm [--write]  trt-llm (after vllm: it keeps some)

Each fit reads only its fit set (data/, named below) and prints what it
fitted with its residual; tools/calibrate.py (make calibrate) runs the
fits that write catalog figures and checks them byte for byte.

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
import subprocess
import sys
import tempfile

import numpy as np

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


# ------------------------------------------------------------------
# vLLM and the GPU power model, on the ML.ENERGY v3 H100 fit set
# ------------------------------------------------------------------

RUNS = os.path.join(ROOT, "data", "gpu_power", "mlenergy_v3_llm_runs.csv")

# The fitted figures: name, start, lower and upper bound, how the fit
# moves it (log: a positive scale; lin: a bounded share).
VLLM_TIME = [("eff_bw", 0.8, 0.3, 1.0), ("seq_overhead", 37e-6, 1e-7, 1e-3),
             ("moe_layer_overhead", 185e-6, 1e-7, 2e-3),
             ("step_overhead", 1e-4, 1e-7, 2e-2)]
VLLM_POWER = [("act_fixed", 0.42, 0.0, 1.0), ("busy_share", 0.05, 0.0, 0.6),
              ("pj_per_byte", 165, 10, 500)]


def steady(build, sets):
    """The steady model at the measured batch with sets (validate_mlenergy
    --steady), the fit set's rows."""
    with tempfile.NamedTemporaryFile(suffix=".csv") as out:
        args = [os.path.join(build, "tests", "validate_mlenergy"), "--steady"]
        for k, v in sets.items():
            args += ["--set", f"{k}={v!r}"]
        subprocess.run(args + [RUNS, out.name], check=True)
        with open(out.name, newline="") as f:
            return [r for r in csv.DictReader(f) if r["set"] == "fit"]


def residuals(rows, what):
    """log(model / measured) of tokens/s or GPU power, each class weighted
    as a whole (dense and MoE count alike, whatever their run counts)."""
    col = {"time": ("steady_tokens_per_s", "measured_tokens_per_s"),
           "power": ("steady_power_w", "measured_power_w")}[what]
    n = {c: sum(r["class"] == c for r in rows) for c in ("dense", "MoE")}
    return np.array([math.log(float(r[col[0]]) / float(r[col[1]])) /
                     math.sqrt(n[r["class"]]) for r in rows])


def to_x(spec, vals):
    return np.array([math.log(vals[k]) if lo > 0 else
                     math.log((vals[k] - lo + 1e-9) / (hi - vals[k] + 1e-9))
                     for k, _, lo, hi in spec])


def from_x(spec, x):
    out = {}
    for (k, _, lo, hi), v in zip(spec, x):
        out[k] = (min(hi, max(lo, math.exp(v))) if lo > 0 else
                  lo + (hi - lo) / (1 + math.exp(-v)))
    return out


def lm_fit(build, spec, fixed, what, iters=30):
    """Levenberg-Marquardt on the residuals of `what` over spec's figures,
    the others held at fixed; a forward-difference Jacobian."""
    x = to_x(spec, {k: fixed.get(k, v0) for k, v0, _, _ in spec})
    lam = 1e-2

    def res(x):
        return residuals(steady(build, {**fixed, **from_x(spec, x)}), what)
    r = res(x)
    for _ in range(iters):
        jac = np.empty((len(r), len(x)))
        for i in range(len(x)):
            dx = np.zeros_like(x)
            dx[i] = 1e-4
            jac[:, i] = (res(x + dx) - r) / 1e-4
        a, g = jac.T @ jac, jac.T @ r
        step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-12), -g)
        r2 = res(x + step)
        if r2 @ r2 < r @ r:
            x, r, lam = x + step, r2, lam / 3
            if np.max(np.abs(step)) < 1e-5:
                break
        else:
            lam *= 5
    return from_x(spec, x), float(np.sqrt(r @ r / 2))


def fit_vllm(build):
    """Time, then power, then time again (the power limit couples them)."""
    vals = {k: v for k, v, _, _ in VLLM_TIME + VLLM_POWER}
    for _ in range(2):
        t, rt = lm_fit(build, VLLM_TIME, vals, "time")
        vals.update(t)
        p, rp = lm_fit(build, VLLM_POWER, vals, "power")
        vals.update(p)
    return vals, rt, rp


def sig3(x):
    """Three significant digits, as the catalog keeps fitted figures."""
    return float(f"{x:.3g}")


def vllm_lines(vals, rows, rt, rp):
    """The catalog lines between the calibrate markers of models.yaml and
    gpus.yaml, with their provenance."""
    n = {c: sum(r["class"] == c for r in rows) for c in ("dense", "MoE")}
    prov = (f"fit set: ML.ENERGY v3 H100 BF16 runs of lm-arena-chat and "
            f"gpqa ({n['dense']} dense, {n['MoE']} MoE); rms log residual "
            f"per class: tokens/s {rt:.3f}, power {rp:.3f}")
    eng = [f"    # {prov}",
           f"    eff_bw: {100 * sig3(vals['eff_bw']):.3g}%",
           f"    act_fixed: {100 * sig3(vals['act_fixed']):.3g}%",
           f"    seq_overhead: {1e6 * sig3(vals['seq_overhead']):.3g} us",
           f"    moe_layer_overhead: "
           f"{1e6 * sig3(vals['moe_layer_overhead']):.3g} us",
           f"    step_overhead: {1e6 * sig3(vals['step_overhead']):.3g} us"]
    gpu = [f"  # {prov}",
           f"  busy_share: {100 * sig3(vals['busy_share']):.3g}%",
           f"  pj_per_byte: {sig3(vals['pj_per_byte']):.3g}"]
    return eng, gpu


def replace_block(path, name, lines):
    """Replaces the lines between '# calibrate: NAME begin' and '... end'."""
    with open(path) as f:
        text = f.read().split("\n")
    mark = ("/* calibrate: {} {} */" if path.endswith(".c")
            else "# calibrate: {} {}")
    i = next(k for k, l in enumerate(text)
             if l.strip() == mark.format(name, "begin"))
    j = next(k for k, l in enumerate(text)
             if l.strip() == mark.format(name, "end"))
    text[i + 1:j] = lines
    with open(path, "w") as f:
        f.write("\n".join(text))


def cmd_vllm(args):
    vals, rt, rp = fit_vllm(args.build)
    vals = {k: sig3(v) for k, v in vals.items()}
    rows = steady(args.build, vals)
    for what in ("time", "power"):
        for c in ("dense", "MoE"):
            col = ("steady_tokens_per_s", "measured_tokens_per_s") \
                if what == "time" else ("steady_power_w", "measured_power_w")
            q = [float(r[col[0]]) / float(r[col[1]]) for r in rows
                 if r["class"] == c]
            print(f"{what} {c}: {len(q)} runs, median ratio "
                  f"{statistics.median(q):.3f}")
    print(f"rms of log ratio per class: time {rt:.4f}, power {rp:.4f}")
    eng, gpu = vllm_lines(vals, rows, rt, rp)
    print("\n".join(eng + gpu))
    if args.write:
        replace_block(os.path.join(ROOT, "scenarios", "catalog",
                                   "models.yaml"), "vllm", eng)
        replace_block(os.path.join(ROOT, "scenarios", "catalog", "gpus.yaml"),
                      "gpu-power", gpu)
        share = f"{100 * sig3(vals['busy_share']):.3g}%"
        pj = f"{sig3(vals['pj_per_byte']):.3g}"
        replace_block(os.path.join(ROOT, "models", "hardware", "gpu.c"),
                      "gpu-power-defaults",
                      [f'#define GPU_DEFAULT_BUSY_SHARE "{share}"',
                       f'#define GPU_DEFAULT_PJ_PER_BYTE "{pj}"'])
    return 0


# ------------------------------------------------------------------
# TensorRT-LLM, on the MLPerf Inference v3.1 and v4.0 power results
# ------------------------------------------------------------------

MLPERF = os.path.join(ROOT, "data", "mlperf", "mlperf_inference_power_fitset.csv")

# What the fit set can tell apart: GPT-J's Offline run is prefill-bound
# (960-token inputs, 69-token outputs), Llama 2 70B's decode-bound with
# large batches; two figures. The engine's bandwidth share, fixed step
# cost and fixed-cost activity are not identified by them and stay at
# vllm's (the catalog says so).
TRT_FIT = [("eff_flops", 0.6, 0.2, 1.0), ("seq_overhead", 37e-6, 1e-8, 1e-3)]
TRT_KEPT = ("eff_bw", "step_overhead", "act_fixed", "moe_layer_overhead")


def mlperf(build, sets):
    with tempfile.NamedTemporaryFile(suffix=".csv") as out:
        args = [os.path.join(build, "tests", "validate_mlperf")]
        for k, v in sets.items():
            args += ["--set", f"{k}={v!r}"]
        subprocess.run(args + [MLPERF, out.name], check=True)
        with open(out.name, newline="") as f:
            return list(csv.DictReader(f))


def fit_trt(build, kept):
    """Levenberg-Marquardt on log(model / measured tokens/s) of the
    modelled rows, each benchmark weighted as a whole."""
    def res(x):
        rows = mlperf(build, {**kept, **from_x(TRT_FIT, x)})
        n = {b: sum(r["benchmark"] == b for r in rows) for b in
             {r["benchmark"] for r in rows}}
        return np.array([math.log(float(r["model_tokens_per_s"]) /
                                  float(r["measured_tokens_per_s"])) /
                         math.sqrt(n[r["benchmark"]]) for r in rows])
    x = to_x(TRT_FIT, {k: v for k, v, _, _ in TRT_FIT})
    lam, r = 1e-2, res(x)
    # The served runs are event simulations: a residual moves in small
    # steps as an event crosses a window's edge, so the difference step is
    # wide (3% of a figure) where the steady model's is narrow.
    h = 0.03
    for _ in range(30):
        jac = np.empty((len(r), len(x)))
        for i in range(len(x)):
            dx = np.zeros_like(x)
            dx[i] = h
            jac[:, i] = (res(x + dx) - r) / h
        a, g = jac.T @ jac, jac.T @ r
        step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-12), -g)
        r2 = res(x + step)
        if r2 @ r2 < r @ r:
            x, r, lam = x + step, r2, lam / 3
            if np.max(np.abs(step)) < 1e-5:
                break
        else:
            lam *= 5
    return from_x(TRT_FIT, x), float(np.sqrt(r @ r / 2))


def catalog_engine(name):
    """The figures of engine name as models.yaml has them, in SI."""
    with open(os.path.join(ROOT, "scenarios", "catalog", "models.yaml")) as f:
        text = f.read()
    block = text[text.index(f"  - name: {name}\n"):]
    block = block[:block.find("\n  - name:", 1) + 1 or None]
    out = {}
    for line in block.splitlines():
        k, _, v = line.strip().partition(": ")
        if k in ("eff_bw", "eff_flops", "act_fixed") and v.endswith("%"):
            out[k] = float(v[:-1]) / 100
        elif k in ("seq_overhead", "moe_layer_overhead", "step_overhead"):
            num, unit = v.split()
            out[k] = float(num) * {"us": 1e-6, "ms": 1e-3, "s": 1}[unit]
    return out


def cmd_trt(args):
    vllm = catalog_engine("vllm")
    kept = {k: vllm[k] for k in TRT_KEPT}
    vals, rms = fit_trt(args.build, kept)
    vals = {k: sig3(v) for k, v in vals.items()}
    rows = mlperf(args.build, {**kept, **vals})
    for r in rows:
        print(f"{r['benchmark']} {r['submitter']}: model "
              f"{float(r['model_tokens_per_s']):.0f} tokens/s against "
              f"{float(r['measured_tokens_per_s']):.0f}")
    prov = (f"fit set: MLPerf Inference v4.0 Offline, 8 x H100-SXM at "
            f"their stated GPU limits ({len(rows)} rows: "
            f"{', '.join(sorted({r['benchmark'] for r in rows}))}); rms log "
            f"residual of tokens/s per benchmark {rms:.3f}; eff_bw, "
            f"act_fixed, step_overhead, moe_layer_overhead: vllm's")
    lines = [f"    # {prov}",
             f"    eff_bw: {100 * kept['eff_bw']:.3g}%",
             f"    eff_flops: {100 * vals['eff_flops']:.3g}%",
             f"    act_fixed: {100 * kept['act_fixed']:.3g}%",
             f"    seq_overhead: {1e6 * vals['seq_overhead']:.3g} us",
             f"    moe_layer_overhead: "
             f"{1e6 * kept['moe_layer_overhead']:.3g} us",
             f"    step_overhead: {1e6 * kept['step_overhead']:.3g} us"]
    print("\n".join(lines))
    if args.write:
        replace_block(os.path.join(ROOT, "scenarios", "catalog",
                                   "models.yaml"), "trt-llm", lines)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    z = sub.add_parser("zeus")
    z.add_argument("--yaml", action="store_true",
                   help="the Ampere (A40) curve for a type of this clock_max")
    z.add_argument("--clock-max", type=float, default=1410,
                   help="MHz (default: the A100's 1410)")
    v = sub.add_parser("vllm")
    v.add_argument("--build", default=os.path.join(ROOT, "build"))
    v.add_argument("--write", action="store_true",
                   help="write the figures into the catalogs")
    t = sub.add_parser("trt-llm")
    t.add_argument("--build", default=os.path.join(ROOT, "build"))
    t.add_argument("--write", action="store_true",
                   help="write the figures into the catalog")
    args = ap.parse_args()
    return {"zeus": cmd_zeus, "vllm": cmd_vllm,
            "trt-llm": cmd_trt}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
