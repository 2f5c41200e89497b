"""The validation discipline's tools (tools/validate.py, tools/calibrate.py
and its tools/fitting.py): rows without a kind, validation rows drawn from
a fit set, the markers of quoted figures, the calibrate blocks of a
catalog, and the step-cost fit on data made with known costs. Pure functions: no build is needed."""

import math
import os
import sys

import numpy as np
import pytest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                     "tools")
sys.path.insert(0, os.path.abspath(TOOLS))

import calibrate  # noqa: E402
import fitting  # noqa: E402
import validate  # noqa: E402


def row(kind="validation", source="Chung et al., ML.ENERGY v3",
        figure="ML.ENERGY dense runs, B200: median tokens/J ratio",
        conditions="38 dense runs on B200 (held out)", **kw):
    r = dict(kind=kind, basis="held out", topic="serving", figure=figure,
             source=source, conditions=conditions, unit="x measured",
             published=1.0, model=1.1, lo=0.75, hi=1.33, band="+-25%")
    r.update(kw)
    return r


def rows_of(*rs):
    return {r["figure"]: r for r in rs}


def write_rows(tmp_path, lines):
    p = tmp_path / "rows.tsv"
    p.write_text("".join("\t".join(l) + "\n" for l in lines))
    return str(p)


FIELDS = ["serving", "f", "src", "cond", "x", "1", "1.1", "0.75", "1.33",
          "band"]


def test_a_row_without_a_kind_is_refused(tmp_path):
    path = write_rows(tmp_path, [["VALIDATE", "?", "why", *FIELDS]])
    with pytest.raises(validate.Error, match="f: no kind"):
        validate.parse_rows(path)


def test_a_row_without_a_basis_is_refused(tmp_path):
    path = write_rows(tmp_path, [["VALIDATE", "bar", " ", *FIELDS]])
    with pytest.raises(validate.Error, match="f: no basis"):
        validate.parse_rows(path)


def test_a_row_of_the_old_format_is_refused(tmp_path):
    path = write_rows(tmp_path, [["VALIDATE", *FIELDS]])
    with pytest.raises(validate.Error, match="not a validation row"):
        validate.parse_rows(path)


@pytest.mark.parametrize("figure, conditions", [
    ("ML.ENERGY dense runs, H100: median tokens/J ratio", "31 runs"),
    ("ML.ENERGY Llama-3.1-8B tokens/J", "1 x H100, lm-arena-chat"),
    # Pooling both GPUs names neither: it is drawn from the fit set too.
    ("ML.ENERGY dense runs: median tokens/J ratio", "69 dense runs"),
])
def test_no_validation_row_from_the_fit_set(figure, conditions):
    bad = row(figure=figure, conditions=conditions)
    with pytest.raises(validate.Error, match="drawn from a fit set"):
        validate.check_discipline(rows_of(bad))
    validate.check_discipline(rows_of(dict(bad, kind="calibration")))


def test_held_out_and_other_sources_may_be_validation():
    validate.check_discipline(rows_of(
        row(),
        row(figure="Splitwise prefill time A100 / H100",
            source="Patel et al., Splitwise", conditions="H100 and A100")))


def test_headline_counts_validation_rows_only():
    rs = rows_of(
        row(figure="a", model=1.2),
        row(figure="b", model=1.5),
        row(figure="c", kind="calibration", model=9.0),
        row(figure="d", kind="bar", model=0.1),
        row(figure="e", unit="share", published=0.9, model=0.8, lo=0.9,
            hi=1))
    text, failing = validate.headline(rs)
    assert text.startswith("3 validation rows")
    assert "1 within their band, 2 failing" in text
    # The share row is counted but not in the ratio spread.
    assert "over the 2 that compare a quantity, median x1.350" in text
    assert "worst x1.500 (b)" in text
    assert [r["figure"] for r in failing] == ["b", "e"]


def test_markers_are_filled_and_checked():
    used = set()
    text = ("a <!-- validation:x -->old<!-- /validation --> b "
            "<!-- validation:y --><!-- /validation -->")
    got = validate.fill_markers(text, {"x": "1.5", "y": "2"}, "R.md", used)
    assert got == ("a <!-- validation:x -->1.5<!-- /validation --> b "
                   "<!-- validation:y -->2<!-- /validation -->")
    assert used == {"x", "y"}
    with pytest.raises(validate.Error, match="unknown figure validation:z"):
        validate.fill_markers("<!-- validation:z -->1<!-- /validation -->",
                              {}, "R.md", set())
    with pytest.raises(validate.Error, match="not closed"):
        validate.fill_markers("<!-- validation:x -->1", {"x": "1"}, "R.md",
                              set())


CATALOG = """engines:
  - name: e
    # calibrate:begin demo
    seq_overhead: 1 us
    fitted:
      - "seq_overhead: hand"
    # calibrate:end demo
    sources: ['x: y']
"""


def test_a_calibrate_block_is_rewritten_in_place(tmp_path):
    fit = calibrate.Fit(name="demo", catalog="c.yaml",
                        keys=[calibrate.Key("seq_overhead", "us", 1e6, 1)],
                        fit_set=calibrate.MLENERGY_H100, model="m",
                        method="how", run=None)
    lines = calibrate.block_lines(fit, {"seq_overhead": 36.43e-6},
                                  ["rms 0.2"], 7)
    new = calibrate.rewrite(CATALOG, fit, lines, "c.yaml")
    assert "    seq_overhead: 36.4 us\n    fitted:\n" in new
    assert new.startswith("engines:\n  - name: e\n    # calibrate:begin")
    assert new.endswith("    # calibrate:end demo\n    sources: ['x: y']\n")
    (tmp_path / "c.yaml").write_text(new)
    values, fitted = calibrate.read_block(str(tmp_path), fit)
    assert values == {"seq_overhead": "36.4 us"}
    assert fitted[-1] == "seq_overhead: residual: rms 0.2"
    assert calibrate.rewrite(new, fit, lines, "c.yaml") == new
    with pytest.raises(calibrate.Error, match="calibrate:begin other"):
        calibrate.rewrite(CATALOG, calibrate.Fit(
            name="other", catalog="", keys=[], fit_set=None, model="",
            method="", run=None), [], "c.yaml")


def test_the_fit_recovers_known_figures():
    """Levenberg-Marquardt on a model whose measurements are its own output
    at known figures gives them back through the bounded axes, and the
    written values round as declared."""
    rng = np.random.default_rng(7)
    n = 40
    base = rng.uniform(5e-3, 40e-3, n)
    batch = rng.uniform(4, 256, n)
    share, seq = fitting.Bounded("eff_bw", 0.8, 0.3, 1.0, False), \
        fitting.Bounded("seq_overhead", 37e-6, 1e-7, 1e-3, True)

    def model(bw, s):
        return base / bw + batch * s

    measured = model(0.83, 40e-6)

    def res(x):
        return np.log(model(share.from_x(x[0]), seq.from_x(x[1])) /
                      measured)
    x = fitting.levenberg_marquardt(
        res, np.array([share.to_x(0.6), seq.to_x(10e-6)]), 1e-6)
    assert share.from_x(x[0]) == pytest.approx(0.83, rel=1e-6)
    assert seq.from_x(x[1]) == pytest.approx(40e-6, rel=1e-6)
    key = fitting.Key("seq_overhead", "us", 1e6, 1)
    assert fitting.fmt_value(key, fitting.round_to(key, 36.449e-6)) == \
        "36.4 us"
    assert math.isclose(fitting.round_to(key, 184.33e-6), 184.3e-6)
    pct = fitting.Key("eff_bw", "%", 100, 1)
    assert fitting.fmt_value(pct, fitting.round_to(pct, 0.8126)) == \
        "81.3%"
    pj = fitting.Key("pj_per_byte", "", 1, 0)
    assert fitting.fmt_value(pj, 129.6) == "130"


def test_the_uncertainty_is_least_squares_standard_errors():
    """On a problem linear in the fitted axes, the reported standard errors
    and correlation are the textbook s^2 (A'A)^-1's, taken through each
    axis's map (here exp) to the figure; a fit with no degree of freedom
    reports none."""
    rng = np.random.default_rng(11)
    a = np.column_stack([np.ones(6), rng.uniform(0, 2, 6)])
    b = a @ np.array([-1.0, 0.5]) + rng.normal(0, 0.05, 6)
    fits = [fitting.Bounded(k, 1.0, 1e-9, 1e9, True) for k in ("p", "q")]
    keys = [fitting.Key(k, "", 1, 4) for k in ("p", "q")]

    def res(x):
        return a @ x - b
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    r = res(x)
    cov = float(r @ r) / 4 * np.linalg.inv(a.T @ a)
    se = np.exp(x) * np.sqrt(np.diag(cov))
    corr = cov[0, 1] / math.sqrt(cov[0, 0] * cov[1, 1])
    want = (f"{fitting.UNCERTAINTY}one standard error p +-{se[0]:.4f}, "
            f"q +-{se[1]:.4f} (from the Jacobian at the answer, 4 degrees "
            f"of freedom); correlation {corr:+.2f}")
    assert fitting.uncertainty(res, x, 1e-6, fits, keys) == [want]
    assert fitting.uncertainty(lambda y: a[:2] @ y - b[:2], x, 1e-6,
                               fits, keys) == []


# A stand-in for validate_mlperf: each row's tokens/s follows eff_flops
# and seq_overhead by a known power law, times a seed's noise that the
# seeds 1-4 cancel in the mean of the logs (+e, -e, +2e, -2e).
FAKE_MLPERF = r'''#!/usr/bin/python3
import csv, math, sys
a = sys.argv[1:]
seed, sets = 1, {}
while a[0].startswith("--"):
    if a[0] == "--seed":
        seed = int(a[1])
    else:
        k, v = a[1].split("=")
        sets[k] = float(v)
    a = a[2:]
noise = {1: 0.01, 2: -0.01, 3: 0.02, 4: -0.02}[seed]
law = {"llama2-70b-99.9": (0.9, 0.2), "gptj-99": (0.4, 0.7)}
with open(a[0]) as f, open(a[1], "w") as o:
    w = csv.writer(o)
    w.writerow(["benchmark", "submitter", "gpu_limit_w",
                "measured_tokens_per_s", "model_tokens_per_s"])
    for r in csv.DictReader(f):
        p, q = law[r["benchmark"]]
        m = float(r["measured"])
        x = (p * math.log(sets["eff_flops"] / 0.7)
             - q * math.log(sets["seq_overhead"] / 23e-6) + noise)
        w.writerow([r["benchmark"], r["submitter"], 450, m, m * math.exp(x)])
'''


def test_the_trt_fit_fits_the_mean_over_its_seeds(tmp_path):
    """The served fit's residual is each row's mean over the seeds of
    ln(modelled / measured): with noise that the seeds cancel, it finds
    the planted figures; on any one seed it would not."""
    exe = tmp_path / "tests" / "validate_mlperf"
    exe.parent.mkdir()
    exe.write_text(FAKE_MLPERF)
    exe.chmod(0o755)
    rows = tmp_path / "rows.csv"
    rows.write_text("benchmark,submitter,measured\n"
                    "llama2-70b-99.9,NVIDIA,17000\ngptj-99,NVIDIA,12000\n"
                    "llama2-70b-99.9,Dell,17000\n")
    vals, errors, lines = calibrate.trt_fit(str(tmp_path), str(rows), {},
                                            {}, (1, 2, 3, 4), 0.03)
    assert vals["eff_flops"] == pytest.approx(0.7, rel=1e-5)
    assert vals["seq_overhead"] == pytest.approx(23e-6, rel=1e-5)
    assert errors["eff_flops"] < 1e-5 and lines[0].startswith(
        calibrate.UNCERTAINTY)
