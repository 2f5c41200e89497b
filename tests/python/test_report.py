"""Plots, reports and the commands. The report of the quickstart was checked
by eye (power stack under a red dashed cap line with its value, units on
every axis, per-rack heat map, summary table); these assertions keep what
made it readable."""

import math
import re

import matplotlib.image as mpimg
import numpy as np
import pytest
from matplotlib.figure import Figure

import aifsim
import synth
from aifsim import plot, reports
from conftest import cli

UNIT = re.compile(r"\((W|kW|MW|GW|h|min|s|d|%|ms|\u00b0C|gCO\u2082/kWh|"
                  r"\$/MWh|UTC|s, log)\)")


def _legend_texts(ax):
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg else []


def _by_title(fig, part):
    axs = [a for a in fig.axes
           if part in (a.get_title() + a.get_title(loc="left"))]
    assert axs, "no axes titled ...%s... in %s" % (
        part, [a.get_title() for a in fig.axes])
    return axs[0]


def _check_power_panel(fig, run):
    power = _by_title(fig, "facility power and cap")
    assert "quickstart" in power.get_title()
    assert power.get_ylabel() == "power (kW)"
    assert power.get_xlabel() == "time (h)"
    legend = _legend_texts(power)
    assert "cap 700 kW" in legend
    assert "facility power" in legend
    assert "GPUs" in legend
    # the cap is drawn inside the plotted range, above the power
    lo, hi = power.get_ylim()
    assert lo == 0 and hi > 700
    assert max(run.facility["power_w"]) / 1e3 < 700


def _check_clock_and_heat_panels(fig):
    clocks = _by_title(fig, "GPU clock")
    assert UNIT.search(clocks.get_ylabel())
    assert any("clock" in t for t in _legend_texts(clocks))

    heat = _by_title(fig, "per rack")
    assert heat.get_ylabel() == "rack"
    assert [t.get_text() for t in heat.get_yticklabels()][0] == "nvl72-0"
    colorbars = [a for a in heat.child_axes if "(kW)" in a.get_ylabel()]
    assert colorbars, "the heat map has a colour bar in kW"


def _check_summary_table(fig):
    table = _by_title(fig, "summary")
    texts = [c.get_text().get_text() for c in
             table.tables[0].get_celld().values()]
    assert "700 kW" in texts and "Facility energy" in texts
    # grouped, readable, nothing the quickstart does not use, no NaN
    assert {"Run", "Energy", "Power"} <= set(texts)
    assert "Work" not in texts and "Grid" not in texts
    assert not any("nan" in t.lower() for t in texts), texts
    assert not any(t in texts for t in ("dr", "stranded", "Battery, net",
                                        "Demand-response events"))
    assert "Stranded power (energy)" in texts
    # the note under the table's title
    assert any("Not in this run" in t.get_text() for t in table.texts)


def _check_axes(fig):
    # every plotting axes says what its axes are, with units
    for ax in fig.axes:
        if ax.get_xlabel():
            assert UNIT.search(ax.get_xlabel()), ax.get_xlabel()
        if ax.get_ylabel() and ax.get_ylabel() != "rack":
            assert UNIT.search(ax.get_ylabel()) or \
                ax.get_ylabel().startswith("PUE"), ax.get_ylabel()
    # no panel for what today's runs do not have
    titles = " ".join(a.get_title() for a in fig.axes)
    assert "PUE" not in titles and "services" not in titles


def test_report_figure_structure(day_h5):
    run = aifsim.open_run(day_h5)
    fig = reports.report_figure(run)
    assert "quickstart" in fig._suptitle.get_text()
    _check_power_panel(fig, run)
    _check_clock_and_heat_panels(fig)
    _check_summary_table(fig)
    _check_axes(fig)


def test_report_png_command(day_h5, tmp_path):
    out = tmp_path / "report.png"
    p = cli("report", day_h5, "--png", out)
    assert p.returncode == 0, p.stderr
    assert "Facility energy" in p.stdout and "wrote" in p.stdout
    img = mpimg.imread(out)
    h, w = img.shape[:2]
    assert w >= 1000 and h >= 1000  # a readable page, not a thumbnail
    assert img[..., :3].std() > 0.05  # not blank


def test_report_html_is_self_contained(day_h5, tmp_path):
    out = tmp_path / "report.html"
    p = cli("report", day_h5, "--html", out)
    assert p.returncode == 0, p.stderr
    page = out.read_text()
    assert page.count("data:image/png;base64,") >= 3
    assert "src=\"http" not in page and "<script" not in page
    assert "Facility energy" in page and "12.28 MWh" in page
    assert "<th colspan=\"2\">Energy</th>" in page
    assert "quickstart" in page and "power:" in page  # scenario YAML


def test_report_default_png_name(quick_h5, tmp_path):
    import shutil
    src = tmp_path / "q.h5"
    shutil.copy(quick_h5, src)
    assert cli("report", src).returncode == 0
    assert (tmp_path / "q.png").exists()


def test_full_report_has_every_panel(synth_h5):
    run = aifsim.open_run(synth_h5)
    assert reports.panels(run) == ["power", "clocks", "racks", "pue",
                                   "grid", "tokens", "ttft", "tpot"]
    fig = reports.report_figure(run)
    power = _by_title(fig, "facility power")
    legend = _legend_texts(power)
    for entry in ("cooling", "losses", "demand response (cap lowered)",
                  "cap (975 kW to 1.3 MW)"):
        assert entry in legend, (entry, legend)
    assert any(t.startswith("over the cap") for t in legend)
    assert power.get_ylabel() == "power (MW)"

    pue = _by_title(fig, "PUE")
    assert _legend_texts(pue) == ["PUE", "outdoor temperature"]
    grid = _by_title(fig, "carbon")
    assert "carbon intensity (gCO\u2082/kWh)" == grid.get_ylabel()
    assert "deferred/paused job (arrival to start)" in _legend_texts(grid)
    ttft = [a for a in fig.axes if a.get_ylabel() == "TTFT (s, log)"][0]
    assert ttft.get_yscale() == "log"
    assert [t for t in _legend_texts(ttft) if "SLO" in t] == ["SLO 500 ms"]
    tpot = [a for a in fig.axes if a.get_ylabel() == "TPOT (s, log)"][0]
    assert [t for t in _legend_texts(tpot) if "SLO" in t] == ["SLO 50 ms"]


def test_report_with_real_grid_signals(frankfurt_h5):
    run = aifsim.open_run(frankfurt_h5)
    assert plot.has_grid(run)
    assert "grid" in reports.panels(run)
    fig = reports.report_figure(run)
    grid = _by_title(fig, "carbon intensity and price")
    assert grid.get_ylabel() == "carbon intensity (gCO\u2082/kWh)"
    assert _legend_texts(grid) == ["carbon intensity", "price"]
    # frankfurt-week is cooled: its weather shares the PUE panel
    temp = _by_title(fig, "PUE and outdoor temperature")
    assert temp.get_ylabel() == "PUE (facility / IT power)"
    # start_utc is known: the time axis shows wall-clock dates in UTC
    assert run.start_utc == __import__("pandas").Timestamp("2023-07-01")
    power = _by_title(fig, "facility power")
    assert power.get_xlabel() == "date and time (UTC)"
    fig.canvas.draw()
    ticks = [t.get_text() for t in power.get_xticklabels()]
    assert "01 Jul" in ticks and "02 Jul" in ticks and "12:00" in ticks
    assert grid.get_xlabel() == "date and time (UTC)"


def test_report_with_a_cooling_loop(liquid_h5):
    run = aifsim.open_run(liquid_h5)
    loops = run.loops
    assert loops.columns.names == ["variable", "loop"]
    # one loop: the writer drops the loop dimension; the name comes back
    # from the scenario
    assert set(loops.columns.get_level_values("loop")) == {"main"}
    assert loops.units["temp_c"] == "degC"
    fac = run.facility
    assert (fac["pue"] > 1.0).all()
    np.testing.assert_allclose(
        fac["power_w"], fac["it_power_w"] + fac["cooling_power_w"]
        + fac["loss_power_w"], rtol=1e-6)
    fig = reports.report_figure(run)
    legend = _legend_texts(_by_title(fig, "facility power"))
    assert "cooling" in legend and "losses" in legend
    pue = _by_title(fig, "PUE and outdoor temperature")
    assert pue.get_ylabel() == "PUE (facility / IT power)"
    assert run.to_xarray()["loops_temp_c"].dims == ("time", "loop")


def test_unconfigured_models_write_zeros_and_get_no_panel(tmp_path):
    """A run without grid signals or cooling may still carry their columns,
    all zero: they get no panel and the plots say "not in this run"."""
    import h5py
    p = synth.write_run(tmp_path / "z.h5", full=False)
    with h5py.File(p, "a") as f:
        t = f["facility/time"]
        for name in ("carbon_g_per_kwh", "price_per_mwh", "cooling_power_w",
                     "loss_power_w", "outdoor_c"):
            d = f["facility"].create_dataset(name, data=np.zeros(len(t)))
            d.dims[0].attach_scale(t)
        d = f["facility"].create_dataset("pue", data=np.ones(len(t)))
        d.dims[0].attach_scale(t)
    run = aifsim.open_run(p)
    assert reports.panels(run) == ["power", "clocks", "racks"]
    ax = plot.grid_signals(run, ax=Figure().add_subplot())
    assert any("not in this run" in t.get_text() for t in ax.texts)
    legend = _legend_texts(plot.power_stack(run, ax=Figure().add_subplot()))
    assert "cooling" not in legend and "losses" not in legend


def test_dr_windows(tmp_path):
    run = aifsim.open_run(synth.write_run(tmp_path / "a.h5"))
    assert plot.dr_windows(run) == [(17 * 3600.0, 20 * 3600.0)]
    run = aifsim.open_run(synth.write_run(tmp_path / "b.h5",
                                          dr_active=True))
    assert plot.dr_windows(run) == [(17 * 3600.0, 20 * 3600.0)]
    assert len(plot.deferred_jobs(run)) == 2


def test_missing_series_say_so(quick_h5):
    run = aifsim.open_run(quick_h5)
    fig = Figure()
    for fn in (plot.pue_temperature, plot.grid_signals):
        ax = fn(run, ax=fig.add_subplot())
        assert any("not in this run" in t.get_text() for t in ax.texts)
    axs = plot.services(run, axes=[fig.add_subplot() for _ in range(3)])
    assert all(any("not in this run" in t.get_text() for t in a.texts)
               for a in axs)
    ax = plot.rack_heatmap(run, var="inlet_c", ax=fig.add_subplot())
    assert any("not in this run" in t.get_text() for t in ax.texts)


def test_compare_command(quick_h5, cap500_h5, tmp_path):
    png, csv = tmp_path / "cmp.png", tmp_path / "cmp.csv"
    p = cli("compare", quick_h5, cap500_h5, "--png", png, "--csv", csv,
            "--html", tmp_path / "cmp.html")
    assert p.returncode == 0, p.stderr
    # the runs are named by what differs between their scenarios, not by
    # their files
    assert "power.cap=700 kW" in p.stdout and "power.cap=500 kW" in p.stdout
    assert "quick.h5" not in p.stdout and "cap500.h5" not in p.stdout
    assert "Power cap" in p.stdout and "500 kW" in p.stdout
    assert "change %" in p.stdout and "-28.6%" in p.stdout
    assert png.exists() and csv.exists()
    assert "data:image/png" in (tmp_path / "cmp.html").read_text()
    runs = [aifsim.open_run(quick_h5), aifsim.open_run(cap500_h5)]
    labels = plot.run_labels(runs)
    assert labels[0].startswith("power.cap=700 kW")
    assert labels[1].startswith("power.cap=500 kW")
    ax = plot.compare_power(runs, ax=Figure().add_subplot())
    legend = _legend_texts(ax)
    assert labels[0] in legend and "cap 500 kW" in legend
    assert ax.get_ylabel() == "facility power (kW)"
    raw = reports.compare_table(runs, formatted=False)
    assert raw.loc["cap_w", labels[1]] == 500e3


def test_open_sweep(cap_sweep):
    sw = aifsim.open_sweep(cap_sweep)
    assert len(sw) == 3
    assert sw.axis_columns == ["power.cap", "power.policy"]
    assert list(sw["power.cap"]) == [480e3, 500e3, 700e3]
    assert sw.units["power.cap"] == "W"
    assert sw.units["energy_mwh"] == "MWh"
    assert "energy_mwh" in sw.metrics and "power.cap" not in sw.metrics
    assert sw["complete"].all()
    assert sw.scenario_name == "quickstart"
    run = sw.run(1)
    assert run.summary["cap_w"] == 500e3
    assert [p for p, _ in sw.runs()] == [0, 1, 2]
    assert (sw["peak_power_w"] <= sw["power.cap"] + 1e-6).all()
    assert sw.attrs["units"] is sw.units
    sub = sw[sw["power.cap"] < 500e3]  # still a Sweep after filtering
    assert sub.run(0).summary["cap_w"] == 480e3
    assert sub.units["power.cap"] == "W" and sub.axis_columns == \
        sw.axis_columns


def test_open_sweep_without_summary(cap_sweep, tmp_path):
    import shutil
    for f in cap_sweep.glob("point-*.h5"):
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(tmp_path / "point-0002.h5", tmp_path / "point-0003.h5.partial")
    sw = aifsim.open_sweep(tmp_path)
    assert sw.axis_columns == ["power.cap"]  # the key that differs
    assert list(sw["power.cap"][:3]) == [480e3, 500e3, 700e3]
    assert list(sw["complete"]) == [True, True, True, False]
    written = aifsim.write_summary(tmp_path)
    assert (tmp_path / "summary.csv").exists() and len(written) == 4
    again = aifsim.open_sweep(tmp_path)
    assert list(again["power.cap"][:3]) == [480e3, 500e3, 700e3]


def _sweep_like_aifsim(tmp_path):
    """A directory as `aifsim sweep` writes it (sim/sweep/sweep_run.c): points
    0, 1 and 3 done, 2 failed; summary.csv with point, status, the axis
    columns as written, the metrics sorted, error; summary.h5 with the
    same as point/status/error, axes/KEY, axis_values/KEY and metrics/NAME."""
    import h5py
    caps, seeds = ["550kW", "550kW", "600kW", "600kW"], [42, 43, 42, 43]
    for p in (0, 1, 3):
        synth.write_run(tmp_path / ("point-%04d.h5" % p), full=False)
    (tmp_path / "point-0002.error").write_text("it failed")
    lines = ["point,status,power.cap,seed,energy_mwh,peak_power_w,error"]
    for p in range(4):
        ok = p != 2
        lines.append("%d,%s,%s,%d,%s,%s,%s" % (
            p, "ok" if ok else "failed", caps[p], seeds[p],
            "1.5" if ok else "", "5e5" if ok else "",
            "" if ok else '"run failed: x, y"'))
    (tmp_path / "summary.csv").write_text("\n".join(lines) + "\n")
    with h5py.File(tmp_path / "summary.h5", "w") as f:
        f["point"] = np.arange(4)
        f.create_dataset("status", data=["ok", "ok", "failed", "ok"],
                         dtype=h5py.string_dtype())
        f.create_dataset("error", data=["", "", "run failed", ""],
                         dtype=h5py.string_dtype())
        f.create_dataset("axes/power.cap", data=caps,
                         dtype=h5py.string_dtype())
        f.create_dataset("axes/seed", data=[str(x) for x in seeds],
                         dtype=h5py.string_dtype())
        v = f.create_dataset("axis_values/power.cap",
                             data=[550e3, 550e3, 600e3, 600e3])
        v.attrs["units"] = "W"
        f.create_dataset("axis_values/seed", data=np.array(seeds, float))
        f["metrics/energy_mwh"] = [1.5, 1.5, np.nan, 1.5]
        f["metrics/peak_power_w"] = [5e5, 5e5, np.nan, 5e5]
    return tmp_path


def test_open_sweep_as_aifsim_sweep_writes_it(tmp_path):
    d = _sweep_like_aifsim(tmp_path)
    for source in ("csv", "h5"):
        if source == "h5":
            (d / "summary.csv").unlink()
        sw = aifsim.open_sweep(d)
        assert sw.axis_columns == ["power.cap", "seed"], source
        assert list(sw["power.cap"]) == [550e3, 550e3, 600e3, 600e3]
        assert sw.units["power.cap"] == "W"
        assert list(sw["status"]) == ["ok", "ok", "failed", "ok"]
        assert list(sw["complete"]) == [True, True, False, True]
        assert sw.metrics == ["energy_mwh", "peak_power_w"], source
        assert np.isnan(sw["energy_mwh"][2])
        assert sw.path(3).name == "point-0003.h5"
        assert sw.run(3).name == "synthetic"
        assert [p for p, _ in sw.runs()] == [0, 1, 3]
        ax = plot.frontier(sw, y="energy_mwh", ax=Figure().add_subplot())
        assert ax.get_xlabel() == "power.cap (kW)"
        # replicate seeds are averaged, not drawn as lines
        assert _legend_texts(ax) == []
        assert any("mean of 2 replicates" in t.get_text() for t in ax.texts)
        ax = plot.frontier(sw, y="energy_mwh", by="seed",
                           ax=Figure().add_subplot())
        assert _legend_texts(ax) == ["seed = 42", "seed = 43"]


def test_open_sweep_of_aifsim_sweep(aifsim_bin, tmp_path):
    """The real thing: a sweep written by `aifsim sweep`."""
    import subprocess
    from conftest import SRC
    (tmp_path / "s.yaml").write_text(
        "base: %s\nset: [duration=1h]\naxes:\n  - key: power.cap\n"
        "    values: [480kW, 700kW]\nreplicates: 2\n"
        % (SRC / "scenarios" / "quickstart.yaml"))
    p = subprocess.run([str(aifsim_bin), "sweep", str(tmp_path / "s.yaml"),
                        "-o", str(tmp_path / "out"), "--quiet"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    for source in ("csv", "h5"):
        if source == "h5":
            (tmp_path / "out" / "summary.csv").unlink()
        sw = aifsim.open_sweep(tmp_path / "out")
        assert sw.axis_columns == ["power.cap", "seed"], source
        assert list(sw["power.cap"]) == [480e3, 480e3, 700e3, 700e3]
        assert list(sw["seed"]) == [42, 43, 42, 43]
        assert sw["complete"].all() and (sw["status"] == "ok").all()
        for p_, run in sw.runs():
            assert run.summary["cap_w"] == sw["power.cap"][p_]
            assert math.isclose(run.summary["energy_mwh"],
                                sw["energy_mwh"][p_], rel_tol=1e-12)
        x, ys, by = plot.default_frontier(sw)
        assert x == "power.cap" and by is None and ys
    c = cli("sweep", tmp_path / "out", "--png", tmp_path / "f.png")
    assert c.returncode == 0, c.stderr


def test_open_sweep_errors(tmp_path):
    with pytest.raises(aifsim.RunNotFoundError):
        aifsim.open_sweep(tmp_path / "nope")
    with pytest.raises(aifsim.RunNotFoundError, match="not a sweep"):
        aifsim.open_sweep(tmp_path)


def test_frontier(cap_sweep):
    sw = aifsim.open_sweep(cap_sweep)
    ax = plot.frontier(sw, y="peak_power_w", ax=Figure().add_subplot())
    assert ax.get_xlabel() == "power.cap (kW)"
    assert ax.get_ylabel() == "Peak facility power (kW)"
    assert _legend_texts(ax) == ["power.policy = static"]
    assert "quickstart" in ax.get_title()
    x, y = ax.get_lines()[0].get_data()
    np.testing.assert_allclose(x, [480, 500, 700])


def test_sweep_command(cap_sweep, tmp_path):
    p = cli("sweep", cap_sweep, "--png", tmp_path / "f.png", "--html",
            tmp_path / "f.html", "--y", "energy_mwh", "--y", "peak_power_w")
    assert p.returncode == 0, p.stderr
    assert "power.cap" in p.stdout and "energy_mwh" in p.stdout
    assert (tmp_path / "f.png").exists()
    assert "data:image/png" in (tmp_path / "f.html").read_text()
    bad = cli("sweep", cap_sweep, "--y", "no_such_metric")
    assert bad.returncode == 2 and "no column" in bad.stderr


def test_command_errors(quick_h5, tmp_path):
    p = cli("report", tmp_path / "missing.h5")
    assert p.returncode == 2 and "no such run file" in p.stderr
    assert "Traceback" not in p.stderr
    import shutil
    shutil.copy(quick_h5, tmp_path / "k.h5.partial")
    p = cli("report", tmp_path / "k.h5")
    assert p.returncode == 2 and "incomplete" in p.stderr
    p = cli("report", synth.write_run(tmp_path / "v9.h5", format_version=9))
    assert p.returncode == 2 and "format version 9" in p.stderr
    p = cli("frobnicate")
    assert p.returncode == 2
    p = cli("--help")
    assert p.returncode == 0 and "report" in p.stdout


def test_report_shows_timed_out_requests(aifsim_bin, tmp_path):
    """mixed.yaml for 5 min with its chat service offered 1000 req/s at
    the diurnal peak (about 300 at night), batches of 16, and a 20 s client
    timeout: several times what its 8 replicas serve, so that
    the summary table and the services' attributes show the requests that
    timed out, next to the rejected ones, and they lower the attainment."""
    from conftest import SRC, run_aifsim
    p = run_aifsim(aifsim_bin, tmp_path / "over.h5", "--set", "duration=5min",
                   "--set", "services[1].arrivals.rate=1000",
                   "--set", "services[1].max_batch=16",
                   "--set", "services[1].timeout=20s",
                   scenario=SRC / "scenarios" / "mixed.yaml")
    run = aifsim.open_run(p)
    s = run.summary
    assert s["requests_timed_out"] > 0
    info = run.service_info
    assert info.loc["chat", "requests_timed_out"] == s["requests_timed_out"]
    assert info.loc["conversation", "requests_timed_out"] == 0
    served = s["requests_completed"] + s["requests_rejected"] + \
        s["requests_timed_out"] + s["requests_dropped"]
    assert served <= s["requests_arrived"]
    assert s["slo_attainment"] <= s["requests_completed"] / served + 1e-12
    tab = reports.summary_table(run)
    keys = list(tab["key"])
    assert "requests_timed_out" in keys and "requests_rejected" in keys
    row = tab[tab["key"] == "requests_timed_out"].iloc[0]
    assert row["metric"] == "Requests timed out"
    assert "Requests timed out" in reports.report_html(run)
