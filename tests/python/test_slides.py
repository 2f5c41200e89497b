"""Plots fit for slides (issue 16): the grouped summary table, compare's
bars with their changes, the services' log-scale latencies, the power
stack split by work, wall-clock dates, and sweep plots that show the
outputs that matter with markers that keep overlapping lines visible.
Each was checked by eye on mixed, grid-dr and frankfurt-week, a compare of
two powercap-policies policies and a sweep of sweep-powercap; these
assertions keep what made them readable."""

import h5py
import numpy as np
import pytest
from matplotlib.figure import Figure

import aifsim
from aifsim import plot, reports, tables


def _cells(ax):
    return [c.get_text().get_text() for c in
            ax.tables[0].get_celld().values()]


def test_summary_table_is_grouped_and_has_no_nan(mixed_h5, frankfurt_h5,
                                                 quick_h5):
    for path in (mixed_h5, frankfurt_h5, quick_h5):
        run = aifsim.open_run(path)
        tab = tables.summary_table(run)
        assert set(tab["group"]) <= set(tables.GROUPS)
        # groups in order, each once and whole
        seen = list(dict.fromkeys(tab["group"]))
        assert seen == [g for g in tables.GROUPS if g in seen]
        assert not tab["value"].str.contains("nan", case=False).any()
        assert "absent" not in set(tab["key"])
        # readable names: capitalised, no raw keys
        assert all(m[0].isupper() for m in tab["metric"]), list(tab["metric"])
        assert not set(tab["metric"]) & set(run.summary)
    mixed = tables.summary_table(aifsim.open_run(mixed_h5))
    keys = set(mixed["key"])
    # services and training: their rows; no DR, battery, smoothing, cost
    assert {"tokens_per_joule", "training_tokens", "slo_attainment",
            "inference_energy_mwh", "training_energy_mwh"} <= keys
    assert not keys & {"dr_events", "dr_s", "battery_net_mwh",
                       "smoothing_energy_mwh", "cost", "co2_t"}
    note = tables.absent_note(aifsim.open_run(mixed_h5))
    assert "cost (no price signal or tariff)" in note
    fra = tables.summary_table(aifsim.open_run(frankfurt_h5))
    grid = fra[fra["group"] == "Grid"]
    assert {"cost", "co2_t", "carbon_g_per_kwh"} <= set(grid["key"])
    assert "Work" not in set(fra["group"])  # no services, no training


def test_summary_table_in_the_report_figure(mixed_h5):
    run = aifsim.open_run(mixed_h5)
    fig = reports.report_figure(run)
    table = [a for a in fig.axes if a.get_title(loc="left") == "summary"][0]
    texts = _cells(table)
    for g in ("Run", "Energy", "Power", "Work", "Reliability"):
        assert g in texts
    assert "Tokens per joule (GPU)" in texts and "Training tokens" in texts
    assert not any("nan" in t.lower() for t in texts)
    assert "Demand response" not in texts


def test_power_stack_splits_the_gpus_by_work(mixed_h5, quick_h5):
    ax = plot.power_stack(aifsim.open_run(mixed_h5),
                          ax=Figure().add_subplot())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    for band in ("GPUs: inference", "GPUs: training",
                 "GPUs: idle and background",
                 "other IT (CPUs, network, fans)"):
        assert band in legend, legend
    assert "GPUs" not in legend
    # the quickstart has no work: one GPU band
    ax = plot.power_stack(aifsim.open_run(quick_h5),
                          ax=Figure().add_subplot())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "GPUs" in legend and "GPUs: inference" not in legend


def test_services_latency_is_log_with_one_slo_per_value(mixed_h5):
    run = aifsim.open_run(mixed_h5)
    fig = Figure()
    axs = plot.services(run, axes=[fig.add_subplot(3, 1, i + 1)
                                   for i in range(3)])
    for ax in axs[1:]:
        assert ax.get_yscale() == "log"
        slo = [ln for ln in ax.get_lines() if "SLO" in ln.get_label()]
        assert len(slo) == 1
        # the percentiles and the SLO both inside the axes
        lo, hi = ax.get_ylim()
        y = slo[0].get_ydata()[0]
        assert lo < y < hi


def test_compare_figure_bars_and_overlays(quick_h5, cap500_h5):
    runs = [aifsim.open_run(quick_h5), aifsim.open_run(cap500_h5)]
    fig = reports.compare_figure(runs)
    titles = [a.get_title() for a in fig.axes]
    assert "Facility energy" in titles and "PUE" in titles
    assert "facility power" in titles
    bars = [a for a in fig.axes if a.get_title() == "Facility energy"][0]
    assert len(bars.patches) == 2
    texts = [t.get_text() for t in bars.texts]
    assert any("%" in t for t in texts), texts  # the change, in %
    assert not any("nan" in t.lower() for t in texts)
    legends = [a.get_legend() for a in fig.axes if a.get_legend()]
    entries = [t.get_text() for lg in legends for t in lg.get_texts()]
    labels = plot.run_labels(runs)
    assert labels[0] in entries and labels[1] in entries
    assert not any(".h5" in e for e in entries)
    # the change column of the table
    tab = reports.compare_table(runs)
    row = tab[tab["metric"] == "Power cap"].iloc[0]
    assert row["change %"] == "-28.6%" and row["change"] == "-200 kW"


def test_compare_overlays_only_what_differs(quick_h5):
    run = aifsim.open_run(quick_h5)
    assert plot.differing_series([run, run]) == []
    fig = reports.compare_figure([run, run])  # power, though nothing differs
    assert "facility power" in [a.get_title() for a in fig.axes]


def test_run_labels_from_the_scenarios(mixed_h5, quick_h5):
    a, b = aifsim.open_run(mixed_h5), aifsim.open_run(quick_h5)
    assert plot.run_labels([a, b]) == ["mixed", "quickstart"]
    assert tables.scenario_differences([a, a]) == [{}, {}]


def _policy_sweep(tmp_path):
    """A sweep directory with two policies whose PUE differs by 0.003 and
    whose lines coincide for one output; tokens/J absent everywhere."""
    rows = ["point,status,power.cap,power.policy,mean_pue,energy_mwh,"
            "tokens_per_joule,training_tokens,cap_violation_s"]
    p = 0
    for policy in ("static", "efficiency"):
        for cap in ("500kW", "600kW", "700kW"):
            pue = 1.150 + (0.003 if cap == "700kW" else 0.0)
            rows.append("%d,ok,%s,%s,%r,10.0,,%d,0" % (
                p, cap, policy, pue, 1e9 * (1 + p % 3)))
            p += 1
    (tmp_path / "summary.csv").write_text("\n".join(rows) + "\n")
    with h5py.File(tmp_path / "summary.h5", "w") as f:
        f.attrs["sweep"] = "sweep-policies.yaml"
    return aifsim.open_sweep(tmp_path)


def test_sweep_defaults_to_the_outputs_that_matter(tmp_path):
    sw = _policy_sweep(tmp_path)
    x, ys, by = plot.default_frontier(sw)
    assert x == "power.cap" and by == "power.policy"
    # tokens/J is absent everywhere and violations are all zero: skipped
    assert ys[0] == "training_tokens"
    assert "tokens_per_joule" not in ys and "cap_violation_s" not in ys
    fig = reports.sweep_figure(sw)
    assert fig._suptitle.get_text().startswith("sweep-policies")
    assert str(tmp_path.name) not in fig._suptitle.get_text()


def test_sweep_lines_have_distinct_markers(tmp_path):
    sw = _policy_sweep(tmp_path)
    ax = plot.frontier(sw, y="training_tokens", ax=Figure().add_subplot())
    lines = [ln for ln in ax.get_lines() if ln.get_label().startswith(
        "power.policy")]
    assert len(lines) == 2
    assert len({ln.get_marker() for ln in lines}) == 2
    assert len({ln.get_linestyle() for ln in lines}) == 2
    # the lines coincide; the one underneath has larger, hollow markers
    assert lines[0].get_markersize() > lines[1].get_markersize()
    assert "sweep-policies" in ax.get_title()


def test_sweep_does_not_magnify_a_small_change(tmp_path):
    sw = _policy_sweep(tmp_path)
    ax = plot.frontier(sw, y="mean_pue", ax=Figure().add_subplot())
    lo, hi = ax.get_ylim()
    assert hi - lo >= 0.2 * 1.15 - 1e-9  # 0.003 of 1.15 stays small


def test_frontier_of_an_absent_metric_says_so(tmp_path):
    sw = _policy_sweep(tmp_path)
    with pytest.warns(UserWarning, match="absent"):
        ax = plot.frontier(sw, y="tokens_per_joule",
                           ax=Figure().add_subplot())
    assert any("absent" in t.get_text() for t in ax.texts)


def test_grid_panel_has_a_legend_and_dates(frankfurt_h5):
    run = aifsim.open_run(frankfurt_h5)
    ax = plot.grid_signals(run, ax=Figure().add_subplot())
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "carbon intensity", "price"]
    assert ax.get_xlabel() == "date and time (UTC)"
    ax.figure.canvas.draw()
    assert "01 Jul" in [t.get_text() for t in ax.get_xticklabels()]
    np.testing.assert_equal(run.start_utc.year, 2023)


def test_changes_of_values_at_or_below_zero():
    # a % of a negative bill says nothing: the table shows '-', bars the
    # change itself
    assert tables.percent_text(-6.69, 22.99) == "-"
    assert tables.percent_text(2.0, 2.5) == "+25.0%"
    assert tables.percent_text(0.0, 0.0) == "0%"
    assert tables.delta_text("cost", 29.68) == "+$29.68"
    assert tables.format_metric("co2_t", float("nan")) == "-"


def test_host_power_note_and_itue(aifsim_bin, tmp_path, quick_h5):
    """A rack group with neither a system nor host power: aifsim warns on
    stderr and the report's note says its IT excludes the host. With the
    systems the scenarios name, ITUE and TUE are rows and there is no
    note."""
    import subprocess

    from conftest import SRC, SMALL
    out = tmp_path / "nohost.h5"
    proc = subprocess.run(
        [str(aifsim_bin), "run", str(SRC / "scenarios" / "quickstart.yaml"),
         "-o", str(out), "--quiet", *SMALL, "--set",
         "racks.1={name: hgx-h100, count: 8, gpu: H100-SXM, "
         "gpus_per_rack: 32}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "warning" in proc.stderr and "hgx-h100" in proc.stderr
    note = tables.absent_note(aifsim.open_run(out))
    assert note.startswith("IT excludes host power:") and "hgx-h100" in note
    assert "nvl72" not in note
    run = aifsim.open_run(quick_h5)
    assert "host_power_note" not in run.summary
    assert not tables.absent_note(run).startswith("IT excludes")
    tab = tables.summary_table(run)
    rows = dict(zip(tab["key"], tab["metric"]))
    assert rows["itue"] == "ITUE" and rows["tue"] == "TUE"
    s = run.summary
    assert abs(s["itue"] * s["mean_pue"] - s["tue"]) <= 1e-9 * s["tue"]
