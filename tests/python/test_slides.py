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
from matplotlib.backends.backend_agg import FigureCanvasAgg
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
    # every name whole inside its cell (long names come from the file)
    r = FigureCanvasAgg(fig).get_renderer()
    fig.draw(r)
    for cell in table.tables[0].get_celld().values():
        text = cell.get_text()
        if text.get_text():
            assert text.get_window_extent(r).width <= \
                cell.get_window_extent(r).width, text.get_text()


def test_power_stack_splits_the_gpus_by_work(mixed_h5, quick_h5):
    ax = plot.power_stack(aifsim.open_run(mixed_h5),
                          ax=Figure().add_subplot())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    for band in ("GPUs: inference", "GPUs: training",
                 "GPUs: idle and background",
                 "other IT (CPUs, network, fans, PSUs)"):
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
    titles = [a.get_title() or a.get_title(loc="left") for a in fig.axes]
    assert "Facility energy" in titles and "PUE" in titles
    assert "facility power" in titles
    bars = [a for a in fig.axes
            if a.get_title(loc="left") == "Facility energy"][0]
    assert len(bars.patches) == 2
    texts = [t.get_text() for t in bars.texts]
    assert any("%" in t for t in texts), texts  # the change, in %
    assert not any("nan" in t.lower() for t in texts)
    legends = [a.get_legend() for a in fig.axes if a.get_legend()]
    entries = [t.get_text() for lg in legends for t in lg.get_texts()]
    from aifsim.comparison import wrap
    labels = [wrap(lab) for lab in plot.run_labels(runs)]
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


# -- issue 27: plots that compare what differs, time that reads as time ----

import re  # noqa: E402

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from conftest import SRC, SMALL, cli, run_aifsim  # noqa: E402

#: A number printed to more digits than anyone typed (448800.00000000006).
RAW_FLOAT = re.compile(r"\d\.\d{6,}")


def _drawn(fig):
    """The figure drawn, with its renderer."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _texts(fig):
    """Every visible text of the figure: titles, labels, ticks, legends."""
    out = []
    for t in fig.findobj(lambda a: hasattr(a, "get_text")
                         and hasattr(a, "get_window_extent")):
        if t.get_visible() and t.get_text().strip():
            out.append(t)
    return out


def _inside(bb, box, tol=1.0):
    return (bb.x0 >= box.x0 - tol and bb.x1 <= box.x1 + tol
            and bb.y0 >= box.y0 - tol and bb.y1 <= box.y1 + tol)


@pytest.fixture(scope="session")
def racks3_h5(aifsim_bin, tmp_path_factory):
    """quickstart with one rack fewer: the loops' capacity, derived from
    the racks, resolves to a float nobody typed."""
    d = tmp_path_factory.mktemp("racks3")
    return run_aifsim(aifsim_bin, d / "racks3.h5", *SMALL,
                      "--set", "racks.0.count=3")


@pytest.fixture(scope="session")
def plain_h5(aifsim_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("plain")
    return run_aifsim(aifsim_bin, d / "plain.h5", *SMALL)


@pytest.fixture(scope="session")
def smoothing_h5s(aifsim_bin, tmp_path_factory):
    """The smoothing question, short: off, in-rack smoothing, a battery."""
    d = tmp_path_factory.mktemp("smoothing")
    quick = ["--set", "duration=2min", "--set", "power_quality.window=1min"]
    scen = SRC / "scenarios" / "smoothing.yaml"
    return [run_aifsim(aifsim_bin, d / (n + ".h5"), *quick, *extra,
                       scenario=scen)
            for n, extra in (("off", []),
                             ("rack", ["--set", "smoothing.enabled=true"]),
                             ("battery", ["--set", "battery.capacity=500kWh",
                                          "--set",
                                          "battery.threshold=75%"]))]


def test_labels_are_the_overrides_that_differ_rounded(plain_h5, racks3_h5):
    runs = [aifsim.open_run(plain_h5), aifsim.open_run(racks3_h5)]
    assert runs[1].overrides == ["duration=2h", "racks.0.count=3"]
    # duration is given to both alike: not a difference; the loops'
    # derived capacity was not given: not a label
    assert plot.run_labels(runs) == ["racks.0.count=4", "racks.0.count=3"]
    assert tables.common_overrides(runs) == ["duration=2h"]
    # without recorded overrides, resolved values are rounded and in a
    # readable unit
    assert tables.value_text("448800.00000000006 W") == "448.8 kW"
    assert tables.value_text("0 J", like="500kWh") == "0 kWh"
    assert tables.value_text("0.75", like="75%") == "0.75"
    assert tables.value_text("1", like="75%") == "1"
    assert tables.value_text("100%", like="75%") == "100%"
    assert tables.value_text("../data/weather/US-TEX-ERCO_2023_weather.csv") \
        == "US-TEX-ERCO_2023_weather.csv"


def test_compare_legend_fits_inside_the_figure(plain_h5, racks3_h5,
                                               quick_h5, cap500_h5):
    runs = [aifsim.open_run(p) for p in (plain_h5, racks3_h5, quick_h5,
                                         cap500_h5)]
    fig = reports.compare_figure(runs)
    renderer = _drawn(fig)
    legends = [a.get_legend() for a in fig.axes if a.get_legend()]
    assert legends, "the runs' legend"
    for lg in legends:
        assert _inside(lg.get_window_extent(renderer), fig.bbox), \
            (lg.get_window_extent(renderer), fig.bbox)
    # nothing drawn spills over the figure's edge (titles, tick labels,
    # the bars' values), and no raw floats anywhere
    tight = fig.get_tightbbox(renderer)
    box = fig.bbox_inches
    assert tight.x0 >= box.x0 - 0.02 and tight.x1 <= box.x1 + 0.02 and \
        tight.y0 >= box.y0 - 0.02 and tight.y1 <= box.y1 + 0.02, tight
    for t in _texts(fig):
        assert not RAW_FLOAT.search(t.get_text()), t.get_text()


def test_compare_bars_show_what_differs_and_labels_never_overlap(
        quick_h5, cap500_h5):
    runs = [aifsim.open_run(quick_h5), aifsim.open_run(cap500_h5)]
    keys = reports.compare_metrics(runs)
    assert keys and "cap_w" not in keys and "gpus" not in keys
    for k in keys:  # each differs as the table shows it
        vals = {tables.format_metric(k, r.summary.get(k)) for r in runs}
        assert len(vals) == 2, k
    fig = reports.compare_figure(runs)
    renderer = _drawn(fig)
    bars = [a for a in fig.axes if a.patches and a.get_title(loc="left")]
    assert len(bars) == len(keys)
    for ax in bars:
        boxes = [t.get_window_extent(renderer) for t in ax.texts]
        assert len(boxes) == len(runs)
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert not a.overlaps(b), ax.get_title(loc="left")
    # the same run twice: nothing differs, and the figure says so
    same = reports.compare_figure([runs[0], runs[0]])
    assert reports.compare_metrics([runs[0], runs[0]]) == []
    assert any("no summary figure differs" in t.get_text()
               for t in _texts(same))


def test_compare_writes_a_png_by_default_with_labels(quick_h5, cap500_h5,
                                                     tmp_path):
    import shutil
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    shutil.copy(quick_h5, a)
    shutil.copy(cap500_h5, b)
    p = cli("compare", a, b)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "a-vs-b.png").exists()
    p = cli("compare", a, b, "--label", "bare 700 kW", "--label", "500 kW",
            "--png", tmp_path / "l.png")
    assert p.returncode == 0, p.stderr
    assert "bare 700 kW" in p.stdout
    p = cli("compare", a, b, "--label", "only one")
    assert p.returncode == 2 and "once per run" in p.stderr


def test_smoothing_comparison_plots_its_ramp(smoothing_h5s):
    runs = [aifsim.open_run(p) for p in smoothing_h5s]
    pq = runs[0].power_quality
    assert pq.attrs["rate_hz"] == 50 and len(pq) == 3000  # 1 min at 50 Hz
    # the series the summary's largest ramp is computed from
    step = np.max(np.abs(np.diff(pq["power_w"].to_numpy()))) * 50
    np.testing.assert_allclose(step, runs[0].summary["max_ramp_w_per_s"])
    assert comparison_has_ramps(runs)
    fig = reports.compare_figure(runs)
    titles = [a.get_title() for a in fig.axes]
    assert any("at 50 Hz" in t for t in titles), titles
    rate = [a for a in fig.axes if a.get_title().startswith("ramp rate")][0]
    assert rate.get_yscale() == "log"
    assert len([p for p in rate.patches]) == 3  # a line per run
    keys = reports.compare_metrics(runs)
    assert "max_ramp_w_per_s" in keys


def comparison_has_ramps(runs):
    from aifsim import comparison
    return comparison.has_ramps(runs)


def _run_at(start):
    class R:  # what the time axis reads of a run
        start_utc = start
    return R()


def _ticks(ax):
    ax.figure.canvas.draw()
    return [t.get_text() for t in ax.get_xticklabels() if t.get_text()]


def test_time_axes_follow_the_span():
    import pandas as pd

    from aifsim import timeaxis
    start = pd.Timestamp("2023-07-18 20:00")
    # a 30-minute run with a date: ticks every few minutes
    ax = Figure().add_subplot()
    FigureCanvasAgg(ax.figure)
    t = np.arange(1, 31) * 60.0
    ta = timeaxis.axis_for(ax, t, _run_at(start))
    ax.plot(ta.x(t), t)
    ticks = _ticks(ax)
    assert len(ticks) >= 4 and ("20:05" in ticks or "20:10" in ticks), ticks
    # without a date: minutes
    ax = Figure().add_subplot()
    FigureCanvasAgg(ax.figure)
    timeaxis.axis_for(ax, t)
    assert ax.get_xlabel() == "time (min)"
    # a year: months, labels that do not overlap, daily bands
    ax = Figure(figsize=(10, 3)).add_subplot()
    FigureCanvasAgg(ax.figure)
    t = np.arange(1, 8761) * 3600.0
    ta = timeaxis.axis_for(ax, t, _run_at(pd.Timestamp("2023-01-01")))
    assert ta.banded and ta.bin_name == "day"
    line = timeaxis.draw(ax, ta, t, np.sin(t / 86400.0), "C0")
    assert len(line.get_data().values) == 365
    ticks = _ticks(ax)
    assert {"Mar", "May", "Jul"} <= set(ticks), ticks
    r = ax.figure.canvas.get_renderer()
    boxes = [lab.get_window_extent(r) for lab in ax.get_xticklabels()
             if lab.get_text()]
    for a, b in zip(boxes, boxes[1:]):
        assert not a.overlaps(b)


def test_bands_are_min_mean_max_of_each_day():
    from aifsim import timeaxis
    t = np.arange(1, 73) * 3600.0  # three days of hourly samples
    v = np.arange(72, dtype=float)
    e, lo, mean, hi = timeaxis.bands(t, v)
    np.testing.assert_array_equal(e, [0, 86400, 172800, 259200])
    np.testing.assert_array_equal(lo, [0, 24, 48])
    np.testing.assert_array_equal(hi, [23, 47, 71])
    np.testing.assert_array_equal(mean, [11.5, 35.5, 59.5])


@pytest.fixture(scope="session")
def dallas_h5(aifsim_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("dallas")
    return run_aifsim(
        aifsim_bin, d / "dal.h5", "--set", "duration=2d", "--set",
        "grid.outdoor.file=../data/weather/US-TEX-ERCO_2023_weather.csv",
        scenario=SRC / "scenarios" / "liquid-vs-air.yaml")


def test_report_subtitle_states_the_overrides(dallas_h5, liquid_h5):
    run = aifsim.open_run(dallas_h5)
    sub = reports._subtitle(run)
    assert "Frankfurt" not in sub and "DE-LU" not in sub
    assert "US-TEX-ERCO_2023_weather" in sub
    assert "--set grid.outdoor.file=../data/weather/" \
           "US-TEX-ERCO_2023_weather.csv" in sub
    assert "2 d" in sub
    fig = reports.report_figure(run)
    assert any("--set duration=2d" in t.get_text() for t in fig.texts)


def test_time_coordinates_decode_to_dates(frankfurt_h5, quick_h5, mixed_h5):
    import xarray as xr
    with xr.open_dataset(frankfurt_h5, group="facility") as ds:
        assert np.issubdtype(ds["time"].dtype, np.datetime64)
        assert str(ds["time"].values[0]).startswith("2023-07-01T00:")
    for group in ("racks", "loops"):
        with xr.open_dataset(frankfurt_h5, group=group) as ds:
            assert np.issubdtype(ds["time"].dtype, np.datetime64), group
    # no date: seconds, and the attribute says why
    run = aifsim.open_run(quick_h5)
    assert run.time_attrs()["units"] == "s"
    assert "no start date" in run.attributes("/facility/time")["comment"]
    with xr.open_dataset(quick_h5, group="facility") as ds:
        assert ds["time"].dtype == np.float64
    # /jobs has its row axis: no phony dimensions
    with xr.open_dataset(mixed_h5, group="jobs") as ds:
        assert ds["energy_j"].dims == ("job",)
        assert list(ds["job"].values) == list(range(ds.sizes["job"]))
    # the package's own table does not grow a column
    assert "job" not in aifsim.open_run(mixed_h5).jobs.columns
