#!/usr/bin/python3
"""validate.py - docs/VALIDATION.md: every published figure against the model.

Usage: validate.py BUILD_DIR [--out DIR] [--check]

Runs the test programs of BUILD_DIR that emit validation rows (they append
one line a case to the file named by AIFSIM_VALIDATE, see
tests/helpers/validate_row.h) and validate_mlenergy (the per-run ML.ENERGY
CSV and one row per model), then writes DIR/VALIDATION.md and
DIR/validation/mlenergy_runs.csv (DIR: the source tree's docs/). It
configures and builds nothing: `make validate` builds first.

--check writes into a temporary folder and compares with docs/: exit 1,
naming the first differing line, when they differ (the ctest test
validation_fresh). A case of EXPECTED with no row, or a figure emitted
twice, is an error naming it. Nothing run-dependent is written, so
regenerating gives the same bytes.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The programs that emit rows, under BUILD_DIR/tests.
PROGRAMS = ["test_gpu", "test_roofline", "test_inference", "test_mlenergy_all",
            "test_training", "test_arrivals", "test_cooling",
            "test_electrical", "test_grid", "test_factory", "test_work", "test_training_power",
            "test_system"]

TOPICS = ["seed tables", "serving", "training", "facility", "grid",
          "workloads"]

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
    "ML.ENERGY dense runs: median tokens/J ratio",
    "ML.ENERGY dense runs: share within 2x in tokens/J",
    "ML.ENERGY MoE runs: median tokens/J ratio",
    "ML.ENERGY MoE runs: share within 2x in tokens/J",
    "ML.ENERGY Llama-4-Maverick tokens/J",
    "NVFP4 / FP16 tokens/J of a service",
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
    "GB200 NVL72 training: rack peak power",
    # facility
    "annual site PUE, liquid, Frankfurt", "annual site PUE, air, Frankfurt",
    "annual site PUE, liquid, Dallas", "annual site PUE, air, Dallas",
    "PUE at 10% over PUE at 90% load, liquid",
    "PUE at 10% over PUE at 90% load, air",
    "annual PUE, default plant, GB200 NVL72 (liquid 85%)",
    "annual PUE, default plant, H100 HGX (air)",
    "POLCA oversubscription: requests served",
    "POLCA oversubscription: SLO attainment",
    "POLCA oversubscription: cap violation",
    "Largest ramp, 100 ms / 1 s control period",
    "0.1-20 Hz oscillation, 100 ms / 1 s control period",
    # grid
    "CO2 of a 10 MW year on coal", "CO2 of a factory run at a flat 400 g/kWh",
    "DR cut of 25% for 3 h: time to cut",
    "DR cut of 25% for 3 h: SLO attainment",
    # workloads
    "Azure conv trace: requests", "Azure conv trace: mean rate",
    "Azure conv trace: mean prompt", "Azure conv trace: mean output",
    "Poisson arrivals: KS statistic D",
]

CSV_NAME = "mlenergy_runs.csv"


class Error(Exception):
    pass


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
            if len(parts) != 11 or parts[0] != "VALIDATE":
                raise Error(f"{path}:{n}: not a validation row: {line!r}")
            _, topic, figure, source, cond, unit = parts[:6]
            published, model, lo, hi = (float(x) for x in parts[6:10])
            if topic not in TOPICS:
                raise Error(f"{figure}: unknown topic {topic!r}")
            if figure in rows:
                raise Error(f"case emitted twice: {figure}")
            rows[figure] = dict(topic=topic, figure=figure, source=source,
                                conditions=cond, unit=unit,
                                published=published, model=model, lo=lo,
                                hi=hi, band=parts[10])
    return rows


def mlenergy_model_ids(csv_path):
    with open(csv_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    return sorted({line.split(",", 1)[0] for line in lines[1:] if line})


def check_complete(rows, csv_path):
    want = list(EXPECTED)
    for mid in mlenergy_model_ids(csv_path):
        for what in ("tokens/J", "tokens/s"):
            want.append(f"ML.ENERGY {mid} {what} ratio, median")
    missing = [w for w in want if w not in rows]
    if missing:
        raise Error("no row for case(s):\n  " + "\n  ".join(missing))


def num(x):
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x != 0 and abs(x) >= 1000:
        return f"{x:,.0f}"
    s = f"{x:.4g}"
    return s


def natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s.lower())]


def cell(s):
    return s.replace("|", "\\|")


def within(r):
    m = r["model"]
    return not math.isnan(m) and r["lo"] <= m <= r["hi"]


def render(rows):
    ordered = sorted(rows.values(),
                     key=lambda r: (TOPICS.index(r["topic"]),
                                    natural(r["figure"])))
    failing = [r for r in ordered if not within(r)]
    out = [
        "# Validation: published figures against the model",
        "",
        "<!-- Generated by tools/validate.py: do not edit. "
        "Regenerate with `make validate`. -->",
        "",
        "Every published figure the tests hold the simulator to, one row a "
        "case, computed where the tests compute it (tests/helpers/"
        "validate_row.h). Generated by `make validate` (tools/validate.py); "
        "do not edit by hand. The test `validation_fresh` fails when "
        "regenerating would change this file. A band the model misses is "
        "shown failing, not widened.",
        "",
        "Columns: *published* is the figure of the source (for ML.ENERGY "
        "ratio rows, 1 = measured); *model* is the simulator's; *ratio* = "
        "model / published; *band* is what the model must meet; *within* "
        "says whether it does. The per-run ML.ENERGY list is "
        f"[validation/{CSV_NAME}](validation/{CSV_NAME}).",
        "",
        f"**{len(ordered)} cases: {len(ordered) - len(failing)} within "
        f"their band, {len(failing)} failing.**",
        "",
    ]
    if failing:
        out.append("Failing: " + "; ".join(cell(r["figure"])
                                           for r in failing) + ".")
        out.append("")
    for topic in TOPICS:
        group = [r for r in ordered if r["topic"] == topic]
        if not group:
            continue
        nfail = sum(not within(r) for r in group)
        out += [f"## {topic[0].upper() + topic[1:]} "
                f"({len(group)} cases, {nfail} failing)", "",
                "| figure | source | conditions | published | model | ratio "
                "| band | within |",
                "|---|---|---|---|---|---|---|---|"]
        for r in group:
            p, m = r["published"], r["model"]
            ratio = f"{m / p:.3f}" if p != 0 and not math.isnan(m) else "n/a"
            unit = f" {r['unit']}" if r["unit"] else ""
            out.append(
                f"| {cell(r['figure'])} | {cell(r['source'])} | "
                f"{cell(r['conditions'])} | {num(p)}{unit} | {num(m)}{unit} "
                f"| {ratio} | {cell(r['band'])} | "
                f"{'yes' if within(r) else '**NO**'} |")
        out.append("")
    return "\n".join(out)


def generate(build, out_dir):
    os.makedirs(os.path.join(out_dir, "validation"), exist_ok=True)
    csv_path = os.path.join(out_dir, "validation", CSV_NAME)
    with tempfile.TemporaryDirectory(prefix="aifsim-validate-") as tmp:
        rows_path = os.path.join(tmp, "rows.tsv")
        run_programs(build, tmp, rows_path, csv_path)
        if not os.path.exists(rows_path):
            raise Error("no validation rows were written")
        rows = parse_rows(rows_path)
    check_complete(rows, csv_path)
    with open(os.path.join(out_dir, "VALIDATION.md"), "w",
              encoding="utf-8") as f:
        f.write(render(rows))
    return rows


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    try:
        if not a.check:
            rows = generate(build, a.out)
            nfail = sum(not within(r) for r in rows.values())
            print(f"{os.path.join(a.out, 'VALIDATION.md')}: {len(rows)} "
                  f"cases, {nfail} failing")
            return 0
        with tempfile.TemporaryDirectory(prefix="aifsim-fresh-") as tmp:
            generate(build, tmp)
            docs = os.path.join(ROOT, "docs")
            for rel in ("VALIDATION.md", os.path.join("validation",
                                                      CSV_NAME)):
                diff = first_difference(os.path.join(docs, rel),
                                        os.path.join(tmp, rel))
                if diff:
                    print(f"{diff}\ndocs/VALIDATION.md is stale: run "
                          "`make validate` and commit the result",
                          file=sys.stderr)
                    return 1
        print("docs/VALIDATION.md and its CSV are up to date")
        return 0
    except Error as e:
        print(f"validate.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
