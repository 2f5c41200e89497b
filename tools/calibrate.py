#!/usr/bin/python3
"""calibrate.py - every fitted constant of aifsim, fitted from its fit set.

Usage: calibrate.py BUILD_DIR [--check] [--root DIR]

Each fit below (FITS) reads only its fit set (FIT_SETS: a data file and the
rows of it that may be fitted to), fits its constants the way its method
says, and writes them, rounded to their stated resolution, into its
catalog between the lines "# calibrate:begin NAME" and
"# calibrate:end NAME", with a `fitted` list naming the fit set, the data,
the model, the method and the residual. Rerunning gives the same bytes.
`make calibrate` runs it; --check writes nothing and exits 1, showing the
difference, when the catalog is not what the fit gives (the ctest test
calibration_fresh). It configures and builds nothing: `make calibrate`
builds first.

Whatever was fitted to a fit set cannot be validated on it: a row of
docs/VALIDATION.md drawn from a fit set is calibration, and tools/
validate.py refuses a validation row that FitSet.drawn_from says comes
from one. HAND_SET lists the constants still set by hand against a
published figure (not refitted here), so that the report can name them.

To add a fitted constant: put the keys between calibrate markers in its
catalog (and its loader), declare its data in FIT_SETS if it is new, and
add a Fit to FITS with a function that returns the values and the
residual lines (docs/VALIDATION.md, "Adding a fitted constant").
"""
import argparse
import csv
import difflib
import io
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Error(Exception):
    pass


# ---------------------------------------------------------------------------
# Declarations
# ---------------------------------------------------------------------------

@dataclass
class FitSet:
    """Rows of a data file that constants may be fitted to."""
    name: str            # short id, used in the catalog and the report
    data: str            # the file, relative to the source tree
    source: str          # how the report's rows cite it (a prefix)
    definition: str      # which rows, in words
    held_out: str        # what of the same data is kept for validation
    select: Callable[[dict], bool]     # a CSV row (dict) -> in the fit set
    # A row of docs/VALIDATION.md (dict of its columns) -> drawn from this
    # fit set, so it may not be of kind validation.
    drawn_from: Callable[[dict], bool]


@dataclass
class Key:
    """One constant of a fit: its catalog key, unit and resolution."""
    key: str
    unit: str
    scale: float         # catalog unit per SI unit (1e6 for us)
    decimals: int        # written with this many decimals


@dataclass
class Fit:
    """Constants fitted together on one fit set, written as one block."""
    name: str            # the block's marker name
    catalog: str         # the catalog file, relative to the source tree
    keys: list           # [Key]
    fit_set: FitSet
    model: str           # what is fitted, in words
    method: str          # how, in words
    # (build dir, fit-set rows as dicts, header) -> (values in SI units by
    # key, residual lines): the fit itself.
    run: Callable


@dataclass
class HandSet:
    """A constant set by hand against a published figure: not refitted
    here; its rows are calibration."""
    what: str
    where: str
    against: str
    rows: str


MLENERGY_H100 = FitSet(
    name="mlenergy-h100",
    data="data/gpu_power/mlenergy_v3_llm_runs.csv",
    source="Chung et al., ML.ENERGY",
    definition="the ML.ENERGY v3 runs with gpu_model H100",
    held_out="every other run of the file (gpu_model B200)",
    select=lambda r: r["gpu_model"] == "H100",
    # ML.ENERGY rows name their GPU; a validation row must name only the
    # held-out one, so a row pooling both cannot pass as validation.
    drawn_from=lambda row: row["source"].startswith(
        "Chung et al., ML.ENERGY") and (
        "H100" in row["figure"] + row["conditions"]
        or "B200" not in row["figure"] + row["conditions"]),
)

FIT_SETS = [MLENERGY_H100]


def _read_features(build, rows, header, seq_s, moe_s):
    """The C harness's parts of each fit-set run (calibrate_mlenergy)."""
    prog = os.path.join(build, "tests", "calibrate_mlenergy")
    if not os.access(prog, os.X_OK):
        raise Error(f"{prog}: not built (run `make calibrate`)")
    with tempfile.TemporaryDirectory(prefix="aifsim-calibrate-") as tmp:
        path = os.path.join(tmp, "fit_set.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        p = subprocess.run([prog, path, repr(seq_s), repr(moe_s)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    if p.returncode != 0:
        raise Error(f"calibrate_mlenergy failed:\n{p.stderr}")
    runs = list(csv.DictReader(io.StringIO(p.stdout)))
    cols = ("dp", "step_batch", "moe_layers", "base_step_s", "prefill_s",
            "output_len", "measured_tokens_per_s", "model_tokens_per_s")
    a = {c: np.array([float(r[c]) for r in runs]) for c in cols}
    a["moe"] = np.array([r["class"] == "MoE" for r in runs])
    return a


def _model_tps(a, seq_s, moe_s):
    """Modelled tokens/s: dp / (step / B + prefill / output), with the
    step base + B seq + L moe (calibrate_mlenergy.c)."""
    B = a["step_batch"]
    step = a["base_step_s"] + B * seq_s + a["moe_layers"] * moe_s
    return a["dp"] / (step / B + a["prefill_s"] / a["output_len"])


def _gauss_newton(a, w):
    """Weighted least squares of ln(modelled / measured tokens/s) over
    (seq_s, moe_s), from a start inside the basin; deterministic."""
    x = np.array([50e-6, 150e-6])
    B, L = a["step_batch"], a["moe_layers"]
    for _ in range(100):
        t = a["dp"] / _model_tps(a, *x)
        r = np.log(_model_tps(a, *x) / a["measured_tokens_per_s"])
        jac = np.stack([-1 / t, -(L / B) / t], axis=1)
        sw = np.sqrt(w)
        dx = np.linalg.lstsq(jac * sw[:, None], -r * sw, rcond=None)[0]
        x = x + dx
        if np.all(np.abs(dx) < 1e-15):
            return x
    raise Error("the step-cost fit did not converge in 100 iterations")


def _rms(r, w):
    return math.sqrt(float(np.sum(w * r * r) / np.sum(w)))


def fit_vllm_step_costs(build, rows, header, keys):
    """seq_overhead and moe_layer_overhead on the fit set."""
    a = _read_features(build, rows, header, 0.0, 0.0)
    moe = a["moe"]
    n_moe, n_dense = int(moe.sum()), int((~moe).sum())
    if n_moe == 0 or n_dense == 0:
        raise Error("the fit set needs dense and MoE runs")
    w = np.where(moe, 0.5 / n_moe, 0.5 / n_dense)
    x = _gauss_newton(a, w)
    seq_s, moe_s = (round_to(k, v) for k, v in zip(keys, x))
    # The harness's own tokens/s at the written values must be the linear
    # model's: else the harness changed and this fit must follow it.
    at = _read_features(build, rows, header, seq_s, moe_s)
    mine = _model_tps(a, seq_s, moe_s)
    worst = float(np.max(np.abs(mine / at["model_tokens_per_s"] - 1)))
    if worst > 1e-9:
        raise Error("calibrate_mlenergy's tokens/s differ from the linear "
                    f"step model by {worst:.3g}: update fit_vllm_step_costs")
    r = np.log(mine / a["measured_tokens_per_s"])
    ratio = mine / a["measured_tokens_per_s"]
    residual = [
        f"rms of ln(modelled / measured tokens/s) {_rms(r, w):.3f} "
        f"(dense {_rms(r[~moe], w[~moe]):.3f} over {n_dense} runs, "
        f"MoE {_rms(r[moe], w[moe]):.3f} over {n_moe})",
        f"median modelled / measured tokens/s: dense "
        f"{np.median(ratio[~moe]):.3f}, MoE {np.median(ratio[moe]):.3f}",
    ]
    return {"seq_overhead": seq_s, "moe_layer_overhead": moe_s}, residual


US = 1e6

FITS = [
    Fit(
        name="vllm-step-costs",
        catalog="scenarios/catalog/engines.yaml",
        keys=[Key("seq_overhead", "us", US, 1),
              Key("moe_layer_overhead", "us", US, 1)],
        fit_set=MLENERGY_H100,
        model="each run's modelled tokens/s, dp / (step / B + prefill / "
              "output), with the decode step the roofline's plus B x "
              "seq_overhead + L_moe x moe_layer_overhead "
              "(tests/validate/mlenergy_runs.c: measured batch B, prompt "
              "512 tokens assumed)",
        method="weighted least squares of ln(modelled / measured "
               "tokens/s), dense and MoE runs weighted equally in all, by "
               "Gauss-Newton; rounded to 0.1 us",
        run=fit_vllm_step_costs,
    ),
]

HAND_SET = [
    HandSet(
        what="training phase activities: act_compute 100%, act_comm 50%, "
             "comm_share 10%",
        where="models/work/training_scn.c",
        against="Latif et al. (8.4 kW node peak), Newkirk et al. (76% of "
                "10.2 kW), GB200 NVL72 120-132 kW a rack",
        rows="H100 training: *; GB200 NVL72 training: rack peak power"),
    HandSet(
        what="H100 node host power: other_power_idle 2.3 kW, "
             "other_power_max 2.8 kW",
        where="tests/validate/test_training_power.c",
        against="Latif et al.'s 8.4 kW peak less 8 x 700 W",
        rows="H100 training: node peak power"),
    HandSet(
        what="NVL72 rack rest: other_power_idle 16.8 kW, other_power_max "
             "35 kW",
        where="tests/validate/test_training_power.c",
        against="Supermicro's breakdown of the 120-132 kW rack",
        rows="GB200 NVL72 training: rack peak power"),
    HandSet(
        what="per-GPU MTBF of the Llama 3 job: 54 d x 24 h x 16,384 / 419",
        where="tests/work/test_training.c",
        against="Llama 3's 419 interruptions in 54 days",
        rows="Llama 3 interruptions in 54 days, seed *"),
    HandSet(
        what="memory-bound activity act_mem 0.6",
        where="models/work/roofline.h (rl_config)",
        against="Splitwise's decode power at batch 1 "
                "(data/gpu_power/perf_model.csv)",
        rows="none: the Splitwise row is prefill time, which act_mem "
             "does not move"),
    HandSet(
        what="the V100 power curve of the Zeus rows",
        where="tests/hardware/test_gpu.c",
        against="Zeus's resnet50 batch 128 runs "
                "(data/gpu_power/summary_power_v100.csv)",
        rows="none: the rows are the other workloads, held out"),
    HandSet(
        what="UPS losses: 1% no-load, 2% proportional, 1% square-law",
        where="models/facility/electrical.c",
        against="quoted UPS efficiencies, 94-97% from 25% to full load "
                "(APC/Schneider)",
        rows="none (the PUE rows are the issues' bars)"),
]


# ---------------------------------------------------------------------------
# Reading the fit set and writing the catalog
# ---------------------------------------------------------------------------

def round_to(key, si):
    """si rounded to the key's resolution, in SI units."""
    return round(si * key.scale, key.decimals) / key.scale


def fmt_value(key, si):
    return f"{si * key.scale:.{key.decimals}f} {key.unit}"


def read_fit_set(root, fs):
    path = os.path.join(root, fs.data)
    with open(path, newline="", encoding="utf-8") as f:
        rd = csv.DictReader(f)
        rows = [r for r in rd if fs.select(r)]
        header = rd.fieldnames
    if not rows:
        raise Error(f"{fs.data}: the fit set {fs.name} is empty")
    return rows, header


def quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def block_lines(fit, values, residual, nrows):
    keys = ", ".join(k.key for k in fit.keys)
    fs = fit.fit_set
    lines = [f"{k.key}: {fmt_value(k, values[k.key])}" for k in fit.keys]
    lines.append("fitted:")
    for text in (
            f"fit set {fs.name}: {fs.definition} ({nrows} rows of "
            f"{fs.data}); held out: {fs.held_out}",
            f"by tools/calibrate.py, fit {fit.name} (`make calibrate`); "
            "do not edit by hand",
            f"model: {fit.model}",
            f"method: {fit.method}",
            *(f"residual: {r}" for r in residual)):
        lines.append(f"  - {quote(keys + ': ' + text)}")
    return lines


def find_block(text, name, path):
    """(start, end) line indices of the lines between the markers, and the
    indentation of the begin marker."""
    lines = text.split("\n")
    begin = f"# calibrate:begin {name}"
    end = f"# calibrate:end {name}"
    b = [i for i, l in enumerate(lines) if l.strip() == begin]
    e = [i for i, l in enumerate(lines) if l.strip() == end]
    if len(b) != 1 or len(e) != 1 or e[0] < b[0]:
        raise Error(f"{path}: want one '{begin}' line and one '{end}' "
                    "line after it")
    indent = lines[b[0]][:len(lines[b[0]]) - len(lines[b[0]].lstrip())]
    return lines, b[0] + 1, e[0], indent


def rewrite(text, fit, new_lines, path):
    lines, s, e, indent = find_block(text, fit.name, path)
    return "\n".join(lines[:s] + [indent + l for l in new_lines] +
                     lines[e:])


def read_block(root, fit):
    """The values (catalog text) and the fitted lines now in the catalog,
    for the report: ({key: "36.4 us"}, [line, ...])."""
    path = os.path.join(root, fit.catalog)
    with open(path, encoding="utf-8") as f:
        lines, s, e, _ = find_block(f.read(), fit.name, path)
    values, fitted = {}, []
    for l in lines[s:e]:
        t = l.strip()
        for k in fit.keys:
            if t.startswith(k.key + ":"):
                values[k.key] = t.split(":", 1)[1].strip()
        if t.startswith("- "):
            fitted.append(t[2:].strip().strip('"').replace('\\"', '"'))
    return values, fitted


def calibrate(build, root):
    """{catalog path: new text} for every fit."""
    texts = {}
    for fit in FITS:
        rows, header = read_fit_set(root, fit.fit_set)
        values, residual = fit.run(build, rows, header, fit.keys)
        path = os.path.join(root, fit.catalog)
        if path not in texts:
            with open(path, encoding="utf-8") as f:
                texts[path] = f.read()
        texts[path] = rewrite(texts[path], fit,
                              block_lines(fit, values, residual, len(rows)),
                              fit.catalog)
        print(f"{fit.catalog}: {fit.name}: " +
              ", ".join(f"{k.key} {fmt_value(k, values[k.key])}"
                        for k in fit.keys), file=sys.stderr)
    return texts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--root", default=ROOT)
    a = ap.parse_args()
    try:
        texts = calibrate(os.path.abspath(a.build), a.root)
    except Error as e:
        print(f"calibrate.py: {e}", file=sys.stderr)
        return 1
    stale = False
    for path, new in sorted(texts.items()):
        with open(path, encoding="utf-8") as f:
            old = f.read()
        if old == new:
            continue
        if a.check:
            stale = True
            sys.stderr.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True),
                path + " (committed)", path + " (calibrated)"))
        else:
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(new)
            os.replace(tmp, path)
            print(f"{os.path.relpath(path, a.root)}: rewritten")
    if stale:
        print("the catalog is not what `make calibrate` writes: run it and "
              "commit the result (then `make validate`)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
