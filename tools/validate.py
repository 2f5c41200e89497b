#!/usr/bin/python3
"""validate.py - docs/VALIDATION.md: every published figure against the model.

Usage: validate.py BUILD_DIR [--out DIR] [--check]

Runs the test programs of BUILD_DIR that emit validation rows (they append
one line a case to the file named by AIFSIM_VALIDATE, see
tests/helpers/validate_row.h) and validate_mlenergy (the per-run ML.ENERGY
CSV and one row per model and GPU), then writes DIR/VALIDATION.md and
DIR/validation/mlenergy_runs.csv (DIR: the source tree's docs/), and the
figures between `<!-- validation:NAME -->` and `<!-- /validation -->`
markers in README.md, scenarios/README.md and docs/*.md (FIGURES below).
It configures and builds nothing: `make validate` builds first.

Every row has a kind (identity, calibration, bar, validation; see
validate_row.h). The headline counts validation rows only. The report
opens with the split: the constants tools/calibrate.py fitted, on which
fit set, with their residuals (read from the catalog), the constants set
by hand against a figure, and the data held out. A validation row drawn
from a fit set (calibrate.FitSet.drawn_from) is an error.

--check writes into a temporary folder and compares with docs/, and checks
the markers: exit 1, naming the first difference, when anything is stale
(the ctest test validation_fresh). A case of EXPECTED with no row, a figure
emitted twice, a row without a kind or basis, an unknown marker or a
figure with no marker is an error naming it. Nothing run-dependent is
written, so regenerating gives the same bytes.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibrate  # noqa: E402  (the fit sets and fitted constants)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The programs that emit rows, under BUILD_DIR/tests.
PROGRAMS = ["test_gpu", "test_roofline", "test_inference_energy",
            "test_mlenergy_all", "test_training", "test_training_tuning",
            "test_arrivals", "test_cooling", "test_water",
            "test_electrical", "test_grid", "test_factory", "test_workloads",
            "test_training_power", "test_power_cap", "test_mlperf_server",
            "test_system"]

TOPICS = ["seed tables", "serving", "training", "facility", "grid",
          "workloads"]

# The kinds, in the order the report gives them, and what each means.
KINDS = {
    "validation": "a measurement nothing was fitted to, nor to the data it "
                  "comes from: the model could have missed it",
    "calibration": "a parameter was fitted or set to this figure, or to the "
                   "data it comes from (a fit set below, or a constant set "
                   "by hand against it)",
    "identity": "arithmetic, a formula the model implements, or data entry: "
                "it fails only if the code is wrong",
    "bar": "an issue's (or the seed's) own target, not a measurement",
}

# The ML.ENERGY GPUs: the fit set's and the held-out one (mlenergy_runs.h).
MLE_GPUS = ("H100", "B200")
MLE_CELL = ["median tokens/J ratio", "median tokens/s ratio",
            "share within 2x in tokens/J", "share within 2x in tokens/s",
            "median GPU power ratio"]

# Every case the table must hold (the figure column), besides the
# per-model ML.ENERGY rows, which are checked against the per-run CSV.
EXPECTED = [
    # seed tables
    *[f"TDP {g}" for g in ("H100-SXM", "H100-PCIe", "A100-SXM", "A100-PCIe",
                           "L40S", "L4", "RTX-4090", "RTX-4080")],
    *[f"7B decode tokens/s {g}" for g in ("H100-SXM", "A100-SXM", "L4",
                                          "RTX-4090")],
    "PUE of 12 MW at the meter over 10 MW of IT",
    "DGX H100 at full load, at the inlet",
    "HGX B200 (DGX B200) at full load, at the inlet",
    "GB200 NVL72 rack at full load, at the inlet",
    "GB300 NVL72 rack at full load, at the inlet",
    # serving
    "Splitwise prefill time A100 / H100",
    "ML.ENERGY Llama-3.1-8B tokens/J, roofline, max_num_seqs 8",
    "ML.ENERGY Llama-3.1-8B tokens/J, roofline, max_num_seqs 512",
    "ML.ENERGY Llama-3.1-8B tokens/J, service, max_num_seqs 8",
    "ML.ENERGY Llama-3.1-8B tokens/J, service, max_num_seqs 512",
    *[f"ML.ENERGY {c} runs, {g}: {w}"
      for g in (*MLE_GPUS, "H100 held-out families")
      for c in ("dense", "MoE") for w in MLE_CELL],
    *[f"ML.ENERGY Llama-4-Maverick {what}, batch {b}"
      for what in ("tokens/J", "tokens/s", "GPU power") for b in (8, 256)],
    "Power-capped DGX-H100: prefill time, capped / uncapped",
    "Power-capped DGX-H100: decode step, capped / uncapped",
    "8B service at a 200 W limit: tokens/s kept",
    "8B service at a 200 W limit: tokens/J",
    "MLPerf v4.0 Llama 2 70B server: tokens/s",
    "MLPerf v4.0 Llama 2 70B server: wall power",
    "NVFP4 / FP16 tokens/J of a service",
    "NVFP4 / FP16 tokens/J of a decode step",
    # training
    *[f"Zeus V100 slowdown under a cap, {w}, {m}"
      for w in ("resnet50 batch 256", "deepspeech2 batch 128",
                "deepspeech2 batch 192")
      for m in ("measured curve", "power law")],
    *[f"1F1B pipeline bubble share, p={p} m={m}"
      for p, m in ((1, 8), (2, 1), (4, 8), (8, 32), (16, 4), (3, 7))],
    *[f"Llama 3 interruptions in 54 days, seed {s}" for s in (1, 2, 3)],
    *[f"Perseus speed tuning {w}, m={m}"
      for w in ("energy saving per iteration", "iteration time")
      for m in (8, 16)],
    "Perseus speed tuning energy saving, factory",
    "Perseus speed tuning progress, factory",
    "H100 training: mean GPU power per GPU",
    "H100 training: node peak power",
    "H100 training: node mean power",
    "H100 training: node power, 25% / 55% MFU",
    "H100 training: node peak power, 55% MFU",
    "GB200 NVL72 training: rack peak power",
    # facility
    "annual site PUE, liquid, Frankfurt", "annual site PUE, air, Frankfurt",
    "annual site PUE, liquid, Dallas", "annual site PUE, air, Dallas",
    "PUE at 10% over PUE at 90% load, liquid",
    "PUE at 10% over PUE at 90% load, air",
    "PUE at 10% over PUE at 100% load", "PUE at 30% over PUE at 100% load",
    "annual PUE, default plant, GB200 NVL72 (liquid 85%)",
    "annual PUE, default plant, H100 HGX (air)",
    "POLCA oversubscription: requests served",
    "POLCA oversubscription: SLO attainment",
    "POLCA oversubscription: cap violation",
    "Largest ramp, 100 ms / 1 s control period",
    "0.1-20 Hz oscillation, 100 ms / 1 s control period",
    "Largest 1 s ramp, mixed.yaml, 200 Hz / 50 Hz window",
    "Largest 1 s ramp, training swing, 200 Hz / 50 Hz window",
    # grid
    "CO2 of a 10 MW year on coal", "CO2 of a factory run at a flat 400 g/kWh",
    "DR cut of 25% for 3 h: time to cut",
    "DR cut of 25% for 3 h: SLO attainment",
    # workloads
    "Azure conv trace: requests", "Azure conv trace: mean rate",
    "Azure conv trace: mean prompt", "Azure conv trace: mean output",
    "Poisson arrivals: KS statistic D",
    "Replayed generic job: GPU energy at 80% activity",
]

CSV_NAME = "mlenergy_runs.csv"
NFIELDS = 13


class Error(Exception):
    pass


# ---------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------

def run_programs(build, tmp, rows_path, csv_path):
    tests = os.path.join(build, "tests")
    jobs = [[os.path.join(tests, p)] for p in PROGRAMS]
    jobs.append([os.path.join(tests, "validate_mlenergy"), "", csv_path])
    for cmd in jobs:
        if not os.access(cmd[0], os.X_OK):
            raise Error(f"{cmd[0]}: not built (run `make validate`)")
    env = dict(os.environ, AIFSIM_VALIDATE=rows_path)

    def run(cmd):
        p = subprocess.run(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        return cmd[0], p.returncode, p.stdout.decode(errors="replace")

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, jobs))
    for prog, rc, out in results:
        if rc != 0:
            # Rows are emitted before the assertions that hold their bands,
            # so the table is still complete; say so, and go on.
            print(f"validate.py: note: {os.path.basename(prog)} exited {rc}",
                  file=sys.stderr)
            if os.path.basename(prog) == "validate_mlenergy":
                raise Error(f"validate_mlenergy failed:\n{out}")


def parse_rows(path):
    rows = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != NFIELDS or parts[0] != "VALIDATE":
                raise Error(f"{path}:{n}: not a validation row: {line!r}")
            _, kind, basis, topic, figure, source, cond, unit = parts[:8]
            published, model, lo, hi = (float(x) for x in parts[8:12])
            if kind not in KINDS:
                raise Error(f"{figure}: no kind (got {kind!r}; want one of "
                            f"{', '.join(KINDS)})")
            if not basis.strip():
                raise Error(f"{figure}: no basis for its kind {kind}")
            if topic not in TOPICS:
                raise Error(f"{figure}: unknown topic {topic!r}")
            if figure in rows:
                raise Error(f"case emitted twice: {figure}")
            rows[figure] = dict(kind=kind, basis=basis, topic=topic,
                                figure=figure, source=source,
                                conditions=cond, unit=unit,
                                published=published, model=model, lo=lo,
                                hi=hi, band=parts[12])
    return rows


def mlenergy_groups(csv_path):
    """The (model id, GPU) pairs of the per-run CSV, and its run count."""
    with open(csv_path, encoding="utf-8") as f:
        lines = [l for l in f.read().splitlines()[1:] if l]
    pairs = {(l.split(",")[0], l.split(",")[3]) for l in lines}
    return sorted(pairs), len(lines)


def check_complete(rows, csv_path):
    want = list(EXPECTED)
    for mid, gpu in mlenergy_groups(csv_path)[0]:
        for what in ("tokens/J", "tokens/s"):
            want.append(f"ML.ENERGY {mid} on {gpu} {what} ratio, median")
    missing = [w for w in want if w not in rows]
    if missing:
        raise Error("no row for case(s):\n  " + "\n  ".join(missing))


def check_discipline(rows):
    """No validation row may be drawn from a fit set."""
    bad = [f"{r['figure']} (fit set {fs.name})" for r in rows.values()
           for fs in calibrate.FIT_SETS
           if r["kind"] == "validation" and fs.drawn_from(r)]
    if bad:
        raise Error("validation rows drawn from a fit set (make them "
                    "calibration, or draw them from held-out data):\n  " +
                    "\n  ".join(bad))


# ---------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------

def num(x):
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x != 0 and abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s.lower())]


def cell(s):
    return s.replace("|", "\\|")


def within(r):
    m = r["model"]
    return not math.isnan(m) and r["lo"] <= m <= r["hi"]


def ratio(r):
    """model / published, or None where it is not defined."""
    p, m = r["published"], r["model"]
    if p == 0 or math.isnan(p) or math.isnan(m) or math.isinf(m):
        return None
    return m / p


def spread(rows):
    """Median and worst (furthest from 1 in log) model / published ratio
    over the rows that compare a quantity with its measurement (not the
    shares of runs within 2x, whose published figure is a threshold)."""
    pairs = [(ratio(r), r) for r in rows if r["unit"] != "share"]
    pairs = [(q, r) for q, r in pairs if q is not None and q > 0]
    if not pairs:
        return None, None, None, 0
    med = statistics.median(q for q, _ in pairs)
    q, worst = max(pairs, key=lambda p: (abs(math.log(p[0])),
                                         p[1]["figure"]))
    return med, q, worst, len(pairs)


def ordered(rows):
    return sorted(rows.values(), key=lambda r: (TOPICS.index(r["topic"]),
                                                natural(r["figure"])))


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------

def headline(rows):
    v = [r for r in ordered(rows) if r["kind"] == "validation"]
    failing = [r for r in v if not within(r)]
    med, q, worst, n = spread(v)
    text = (f"{len(v)} validation rows (measurements nothing was fitted "
            f"to): {len(v) - len(failing)} within their band, "
            f"{len(failing)} failing")
    if med is not None:
        text += (f"; model / published over the {n} that compare a "
                 f"quantity, median x{med:.3f}, worst x{q:.3f} "
                 f"({worst['figure']})")
    return text, failing


def render_headline(rows):
    text, failing = headline(rows)
    out = [f"**{text}.**", ""]
    if failing:
        out.append("Failing validation rows:")
        out.append("")
        for r in failing:
            q = ratio(r)
            out.append(f"- {cell(r['figure'])}: {num(r['model'])} against "
                       f"{num(r['published'])}"
                       f"{f' (x{q:.3f})' if q is not None else ''}, band "
                       f"{cell(r['band'])}")
        out.append("")
    counts = []
    for kind in ("identity", "calibration", "bar"):
        k = [r for r in rows.values() if r["kind"] == kind]
        nf = sum(not within(r) for r in k)
        counts.append(f"{len(k)} {kind} ({nf} failing)")
    out.append("Not counted above, as they cannot tell whether the model "
               "predicts: " + ", ".join(counts) + ". Failing among them: " +
               ("; ".join(cell(r["figure"]) for r in ordered(rows)
                          if r["kind"] != "validation" and not within(r))
                or "none") + ".")
    out.append("")
    return out


def render_split(root, rows):
    out = ["## The split: what was fitted, to what, and what is held out",
           "",
           "Constants fitted by `make calibrate` (tools/calibrate.py), "
           "each from its fit set alone; the values and residuals are read "
           "from the catalog it writes:",
           "",
           "| constant | value | catalog | fit set | held out | method "
           "| residual |",
           "|---|---|---|---|---|---|---|"]
    for fit in calibrate.FITS:
        values, fitted = calibrate.read_block(root, fit)
        u = calibrate.UNCERTAINTY
        residual = "; ".join(
            l.split("residual: ", 1)[1] if "residual: " in l
            else u + l.split(u, 1)[1]
            for l in fitted if "residual: " in l or u in l) \
            or "**none written**"
        fs = fit.fit_set
        for k in fit.keys:
            out.append(
                f"| {k.key} | {values.get(k.key, '**missing**')} | "
                f"{fit.catalog} ({fit.name}) | {fs.name}: {cell(fs.definition)}"
                f" in {fs.data} | {cell(fs.held_out)} | "
                f"{cell(fit.method)} | {cell(residual)} |")
    for fit in calibrate.FITS:
        if fit.note:
            out += ["", fit.note]
    out += ["",
            "Constants set by hand against a published figure, not "
            "refitted by the script; the rows of those figures are "
            "calibration:",
            "",
            "| constant | where | set against | rows |",
            "|---|---|---|---|"]
    for h in calibrate.HAND_SET:
        out.append(f"| {cell(h.what)} | {h.where} | {cell(h.against)} | "
                   f"{cell(h.rows)} |")
    out += ["", "Data and what it is used for:", ""]
    for fs in calibrate.FIT_SETS:
        fit_rows = [r for r in rows.values() if fs.drawn_from(r)]
        held = [r for r in rows.values() if r["kind"] == "validation"
                and r["source"].startswith(fs.source)]
        out.append(f"- {fs.data}: {fs.definition} fit "
                   + ", ".join(f"{k.key}" for f in calibrate.FITS
                               if f.fit_set is fs for k in f.keys)
                   + f" ({len(fit_rows)} rows drawn from them, all "
                   f"calibration); held out: {fs.held_out} "
                   f"({len(held)} validation rows). The report never "
                   "counts a row drawn from the fit set as validation "
                   "(tools/validate.py refuses one).")
    out.append("- Every other validation row compares the model with a "
               "measurement no constant was fitted to; its *why* column "
               "says what it is held against.")
    out += ["",
            "To add a fitted constant: [ARCHITECTURE.md, \"How to add a "
            "fitted constant\"](ARCHITECTURE.md#how-to-add-a-fitted-"
            "constant).", ""]
    return out


def render_kinds():
    out = ["## Kinds", ""]
    for k, text in KINDS.items():
        out.append(f"- **{k}**: {text}.")
    out += ["",
            "Each row states its kind where the test emits it "
            "(tests/helpers/validate_row.h), with the reason in the *why* "
            "column. A band a row misses is shown failing, never widened "
            "and never fixed by moving a constant.", ""]
    return out


def render_tables(rows):
    out = []
    for topic in TOPICS:
        group = [r for r in ordered(rows) if r["topic"] == topic]
        if not group:
            continue
        nv = sum(r["kind"] == "validation" for r in group)
        nfail = sum(not within(r) for r in group)
        out += [f"## {topic[0].upper() + topic[1:]} "
                f"({len(group)} cases, {nv} validation, {nfail} failing)", "",
                "| figure | kind | why | source | conditions | published "
                "| model | ratio | band | within |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for r in group:
            q = ratio(r)
            unit = f" {r['unit']}" if r["unit"] else ""
            out.append(
                f"| {cell(r['figure'])} | {r['kind']} | {cell(r['basis'])} "
                f"| {cell(r['source'])} | {cell(r['conditions'])} | "
                f"{num(r['published'])}{unit} | {num(r['model'])}{unit} | "
                f"{f'{q:.3f}' if q is not None else 'n/a'} | "
                f"{cell(r['band'])} | {'yes' if within(r) else '**NO**'} |")
        out.append("")
    return out


def render(root, rows):
    out = [
        "# Validation: published figures against the model",
        "",
        "<!-- Generated by tools/validate.py: do not edit. "
        "Regenerate with `make validate`. -->",
        "",
        "Every published figure the tests hold the simulator to, one row a "
        "case, computed where the tests compute it (tests/helpers/"
        "validate_row.h), each with its kind: only a **validation** row "
        "compares the model with a measurement it could have missed. "
        "Generated by `make validate` (tools/validate.py); do not edit by "
        "hand. The test `validation_fresh` fails when regenerating would "
        "change this file.",
        "",
        "Columns: *kind* and *why* (below); *published* is the figure of "
        "the source (for ML.ENERGY ratio rows, 1 = measured); *model* is "
        "the simulator's; *ratio* = model / published; *band* is what the "
        "model must meet; *within* says whether it does. The per-run "
        f"ML.ENERGY list is [validation/{CSV_NAME}](validation/{CSV_NAME}).",
        "",
    ]
    out += render_headline(rows)
    out += render_split(root, rows)
    out += render_kinds()
    out += render_tables(rows)
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Figures quoted in the READMEs and docs
# ---------------------------------------------------------------------------

def _row(rows, figure):
    if figure not in rows:
        raise Error(f"a marked figure reads a row that does not exist: "
                    f"{figure}")
    return rows[figure]


def _x(rows, figure, digits=2):
    return f"x{ratio(_row(rows, figure)):.{digits}f}"


def _pct(rows, figure):
    return f"{100 * (ratio(_row(rows, figure)) - 1):+.0f}%"


def _model(rows, figure, fmt):
    return format(_row(rows, figure)["model"], fmt)


def _worst_error(rows, prefix):
    errs = [abs(ratio(r) - 1) for f, r in rows.items() if f.startswith(prefix)]
    return f"{100 * max(errs):.0f}%"


def _cell(rows, gpu, cls, what, fmt):
    return format(_row(rows, f"ML.ENERGY {cls} runs, {gpu}: {what}")["model"],
                  fmt)


def figures(rows, nruns):
    """Every marked figure: name -> text."""
    mle = "ML.ENERGY Llama-3.1-8B tokens/J, "
    f = {
        "headline": headline(rows)[0],
        "zeus-curve-worst": _worst_error(
            {k: v for k, v in rows.items() if k.endswith("measured curve")},
            "Zeus"),
        "zeus-law-worst": _worst_error(
            {k: v for k, v in rows.items() if k.endswith("power law")},
            "Zeus"),
        "splitwise": _pct(rows, "Splitwise prefill time A100 / H100"),
        "mle-8b-roofline-8": _x(rows, mle + "roofline, max_num_seqs 8"),
        "mle-8b-roofline-512": _x(rows, mle + "roofline, max_num_seqs 512"),
        "mle-8b-service-8": _x(rows, mle + "service, max_num_seqs 8"),
        "mle-8b-service-512": _x(rows, mle + "service, max_num_seqs 512"),
        "nvfp4-step": "x" + _model(
            rows, "NVFP4 / FP16 tokens/J of a decode step", ".1f"),
        "nvfp4-service": "x" + _model(
            rows, "NVFP4 / FP16 tokens/J of a service", ".2f"),
        "mle-runs": f"{nruns}",
        "mle-maverick": _x(rows, "ML.ENERGY Llama-4-Maverick tokens/J, batch 256"),
        "mle-maverick-published": format(
            _row(rows, "ML.ENERGY Llama-4-Maverick tokens/J, batch 256")["published"],
            ".2f"),
        "trace-requests": _model(rows, "Azure conv trace: requests", ",.0f"),
        "trace-rate": _model(rows, "Azure conv trace: mean rate", ".2f"),
        "trace-prompt": _model(rows, "Azure conv trace: mean prompt", ",.0f"),
        "trace-output": _model(rows, "Azure conv trace: mean output", ".0f"),
        "train-h100-gpu": _model(rows, "H100 training: mean GPU power per "
                                       "GPU", ".0f"),
        "train-h100-node-mean": format(_row(
            rows, "H100 training: node mean power")["model"] / 1e3, ".2f"),
        "train-h100-node-peak": format(_row(
            rows, "H100 training: node peak power")["model"] / 1e3, ".2f"),
        "train-nvl72-peak": format(_row(
            rows, "GB200 NVL72 training: rack peak power")["model"] / 1e3,
            ".1f"),
        "sys-dgx-h100-full": format(_row(
            rows, "DGX H100 at full load, at the inlet")["model"] / 1e3,
            ".1f"),
        "sys-hgx-b200-full": format(_row(
            rows, "HGX B200 (DGX B200) at full load, at the inlet")["model"]
            / 1e3, ".1f"),
        "sys-gb200-nvl72-full": format(_row(
            rows, "GB200 NVL72 rack at full load, at the inlet")["model"]
            / 1e3, ".1f"),
        "sys-gb300-nvl72-full": format(_row(
            rows, "GB300 NVL72 rack at full load, at the inlet")["model"]
            / 1e3, ".1f"),
        "pue-part-load-liquid": _model(
            rows, "PUE at 10% over PUE at 90% load, liquid", ".3f"),
        "pue-part-load-air": _model(
            rows, "PUE at 10% over PUE at 90% load, air", ".3f"),
        "pue-annual-liquid": _model(
            rows, "annual PUE, default plant, GB200 NVL72 (liquid 85%)",
            ".3f"),
        "pue-annual-air": _model(
            rows, "annual PUE, default plant, H100 HGX (air)", ".3f"),
        "chiller-iplv": _model(
            rows, "air-cooled chiller IPLV over full-load efficiency", ".3f"),
        "wue-evap": _model(
            rows, "annual WUE, evaporative warm-water liquid plant", ".2f"),
        "pue-10-50-liquid": _model(
            rows, "PUE at 10% minus PUE at 50% load, liquid", ".3f"),
        "pue-100-50-liquid": _model(
            rows, "PUE at 100% minus PUE at 50% load, liquid", ".3f"),
        "pue-10-50-air": _model(
            rows, "PUE at 10% minus PUE at 50% load, air", ".3f"),
        "pue-100-50-air": _model(
            rows, "PUE at 100% minus PUE at 50% load, air", ".3f"),
        "pue-wp113-10": _model(
            rows, "PUE at 10% over PUE at 100% load", ".3f"),
        "pue-wp113-30": _model(
            rows, "PUE at 30% over PUE at 100% load", ".3f"),
    }
    served = _row(rows, "POLCA oversubscription: requests served")["model"]
    f["polca-served"] = f"{100 * (served - 1):.0f}%"
    saving = _row(rows, "Perseus speed tuning energy saving, factory")
    f["perseus-factory"] = f"{100 * saving['model']:.1f}%"
    for g in ("H100-SXM", "A100-SXM", "L4", "RTX-4090"):
        f[f"seed-7b-{g}"] = _pct(rows, f"7B decode tokens/s {g}")
    for s in (1, 2, 3):
        f[f"llama3-seed-{s}"] = _model(
            rows, f"Llama 3 interruptions in 54 days, seed {s}", ".0f")
    for gpu in MLE_GPUS:
        for cls in ("dense", "MoE"):
            key = f"mle-{gpu.lower()}-{cls.lower()}"
            f[key + "-tpj"] = _cell(rows, gpu, cls, MLE_CELL[0], ".2f")
            f[key + "-within2"] = format(
                100 * _row(rows, f"ML.ENERGY {cls} runs, {gpu}: "
                                 f"{MLE_CELL[2]}")["model"], ".0f") + "%"
    return f


OPEN = re.compile(r"<!-- validation:([A-Za-z0-9_.-]+) -->")
CLOSE = "<!-- /validation -->"


def marked_files(root):
    names = ["README.md", os.path.join("scenarios", "README.md")]
    docs = os.path.join(root, "docs")
    names += sorted(os.path.join("docs", n) for n in os.listdir(docs)
                    if n.endswith(".md") and n != "VALIDATION.md")
    return [n for n in names if os.path.exists(os.path.join(root, n))]


def fill_markers(text, figs, path, used):
    """text with every marker's value replaced from figs."""
    out, pos = [], 0
    for m in OPEN.finditer(text):
        if m.start() < pos:
            continue
        end = text.find(CLOSE, m.end())
        if end < 0:
            raise Error(f"{path}: marker validation:{m.group(1)} is not "
                        "closed")
        name = m.group(1)
        if name not in figs:
            raise Error(f"{path}: unknown figure validation:{name}")
        used.add(name)
        out += [text[pos:m.end()], figs[name], CLOSE]
        pos = end + len(CLOSE)
    out.append(text[pos:])
    return "".join(out)


def update_markers(root, rows, nruns, check):
    """Rewrites (or, with check, compares) the marked figures; returns the
    stale files."""
    figs = figures(rows, nruns)
    used, stale = set(), {}
    for rel in marked_files(root):
        path = os.path.join(root, rel)
        with open(path, encoding="utf-8") as f:
            old = f.read()
        new = fill_markers(old, figs, rel, used)
        if new != old:
            stale[rel] = new
    unused = sorted(set(figs) - used)
    if unused:
        raise Error("figures with no marker in " +
                    ", ".join(marked_files(root)) + ": " + ", ".join(unused))
    for rel, new in stale.items() if not check else ():
        path = os.path.join(root, rel)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(new)
        os.replace(path + ".tmp", path)
    return sorted(stale)


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def generate(build, out_dir, root):
    os.makedirs(os.path.join(out_dir, "validation"), exist_ok=True)
    csv_path = os.path.join(out_dir, "validation", CSV_NAME)
    with tempfile.TemporaryDirectory(prefix="aifsim-validate-") as tmp:
        rows_path = os.path.join(tmp, "rows.tsv")
        run_programs(build, tmp, rows_path, csv_path)
        if not os.path.exists(rows_path):
            raise Error("no validation rows were written")
        rows = parse_rows(rows_path)
    check_complete(rows, csv_path)
    check_discipline(rows)
    with open(os.path.join(out_dir, "VALIDATION.md"), "w",
              encoding="utf-8") as f:
        f.write(render(root, rows))
    return rows, mlenergy_groups(csv_path)[1]


def first_difference(want_path, got_path):
    try:
        with open(want_path, encoding="utf-8") as f:
            want = f.read().splitlines()
    except FileNotFoundError:
        return f"{want_path}: missing"
    with open(got_path, encoding="utf-8") as f:
        got = f.read().splitlines()
    for i, (a, b) in enumerate(zip(want, got), 1):
        if a != b:
            return (f"{want_path}:{i}: differs\n  committed:   {a}\n"
                    f"  regenerated: {b}")
    if len(want) != len(got):
        i = min(len(want), len(got)) + 1
        return (f"{want_path}:{i}: committed has {len(want)} lines, "
                f"regenerated {len(got)}")
    return None


def check(build):
    with tempfile.TemporaryDirectory(prefix="aifsim-fresh-") as tmp:
        rows, nruns = generate(build, tmp, ROOT)
        docs = os.path.join(ROOT, "docs")
        for rel in ("VALIDATION.md", os.path.join("validation", CSV_NAME)):
            diff = first_difference(os.path.join(docs, rel),
                                    os.path.join(tmp, rel))
            if diff:
                print(f"{diff}\ndocs/VALIDATION.md is stale: run "
                      "`make validate` and commit the result",
                      file=sys.stderr)
                return 1
    stale = update_markers(ROOT, rows, nruns, check=True)
    if stale:
        print("validation figures between markers are stale in " +
              ", ".join(stale) + ": run `make validate` and commit the "
              "result", file=sys.stderr)
        return 1
    print("docs/VALIDATION.md, its CSV and the marked figures are up to date")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    try:
        if a.check:
            return check(build)
        rows, nruns = generate(build, a.out, ROOT)
        for rel in update_markers(ROOT, rows, nruns, check=False):
            print(f"{rel}: marked figures rewritten")
        print(f"{os.path.join(a.out, 'VALIDATION.md')}: "
              f"{headline(rows)[0]}")
        return 0
    except Error as e:
        print(f"validate.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
