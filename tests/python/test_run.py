"""open_run on real runs of today's simulator and on synthetic files with
the groups it will write later; the errors for missing, incomplete and
newer-format files."""

import math
import shutil

import h5py
import numpy as np
import pandas as pd
import pytest

import aifsim
import synth
from aifsim import (IncompleteRunError, NewerFormatError, NotARunError,
                    RunNotFoundError)


# -- a real run --------------------------------------------------------------

def test_facility_frame(quick_h5):
    run = aifsim.open_run(quick_h5)
    fac = run.facility
    assert isinstance(fac, pd.DataFrame)
    assert fac.index.name == "time"
    assert len(fac) == 120  # 2 h of 1 min samples
    assert fac.index[0] == 60.0 and fac.index[-1] == 7200.0
    for col in ("power_w", "it_power_w", "gpu_power_w", "cap_w",
                "peak_power_w", "energy_j", "activity"):
        assert col in fac.columns, col
    assert fac.units["power_w"] == "W"
    assert fac.units["energy_j"] == "J"
    assert fac.units["time"] == "s"
    assert "mean" in fac.long_names["power_w"]
    # units live in pandas' attrs and survive selections, to a column too
    assert fac.attrs["units"] is fac.units
    assert fac.attrs["long_names"] is fac.long_names
    assert fac[["power_w", "cap_w"]].units["cap_w"] == "W"
    assert fac["power_w"].attrs["units"]["power_w"] == "W"
    assert run.units["facility/power_w"] == "W"


def test_mean_power_equals_summary_energy_over_duration(quick_h5, day_h5):
    """The issue's bar: mean facility power from .facility equals /summary
    energy divided by duration to 1e-9 relative."""
    for path in (quick_h5, day_h5):
        run = aifsim.open_run(path)
        mean = run.facility["power_w"].mean()
        s = run.summary
        expect = s["energy_mwh"] * 3.6e9 / s["duration_s"]
        assert math.isclose(mean, expect, rel_tol=1e-9), (mean, expect)
        assert math.isclose(mean, s["mean_power_w"], rel_tol=1e-9)
        assert math.isclose(run.facility["energy_j"].iloc[-1],
                            s["energy_mwh"] * 3.6e9, rel_tol=1e-9)


def test_racks_frame(quick_h5):
    run = aifsim.open_run(quick_h5)
    racks = run.racks
    assert racks.columns.names == ["variable", "rack"]
    p = racks["power_w"]
    assert p.shape == (120, 12)
    assert list(p.columns[:2]) == ["nvl72-0", "nvl72-1"]
    assert p.columns[-1] == "hgx-h100-7"
    assert racks.units["power_w"] == "W"
    assert racks.units["clock_ratio"] == "1"
    # racks add up to the facility's IT power
    np.testing.assert_allclose(p.sum(axis=1), run.facility["it_power_w"],
                               rtol=1e-9)
    groups = run.rack_groups()
    assert groups["nvl72-3"] == "nvl72" and groups["hgx-h100-0"] == \
        "hgx-h100"


def test_absent_groups_are_empty(quick_h5):
    run = aifsim.open_run(quick_h5)
    for name in ("loops", "services"):
        fr = getattr(run, name)
        assert isinstance(fr, pd.DataFrame) and fr.empty, name
    assert run.service_info.empty


def test_jobs_without_workloads_hold_idle_and_overhead(quick_h5):
    # No services or jobs: /jobs still books the IT energy, to idle GPUs
    # (here running the synthetic load) and the racks' other IT power.
    run = aifsim.open_run(quick_h5)
    jobs = run.jobs
    assert list(jobs["kind"]) == ["idle", "overhead"]
    assert jobs.units["energy_j"] == "J"
    it_j = run.summary["it_energy_mwh"] * 3.6e9
    assert abs(jobs["energy_j"].sum() - it_j) <= 1e-9 * it_j


def test_workloads_read_in_one_line(mixed_h5):
    run = aifsim.open_run(mixed_h5)
    jobs = run.jobs
    assert set(jobs["kind"]) == {"inference", "training", "idle", "overhead"}
    it_j = run.summary["it_energy_mwh"] * 3.6e9
    assert abs(jobs["energy_j"].sum() - it_j) <= 1e-9 * it_j
    assert jobs.units["energy_j"] == "J"
    chat = run.services["chat"]
    assert {"tokens_per_s", "ttft_p99", "tpot_p50", "slo_attainment"} <= \
        set(chat.columns)
    info = run.service_info
    assert set(info.index) == {"chat", "conversation"}
    assert (info["requests_arrived"] >= info["requests_completed"]).all()
    assert info.loc["chat", "tpot_slo_s"] == pytest.approx(0.1)
    # the facility's tokens are the services' tokens
    np.testing.assert_allclose(
        run.facility["tokens_per_s"],
        run.services["chat"]["tokens_per_s"] +
        run.services["conversation"]["tokens_per_s"], rtol=1e-12)


def test_services_plot_draws_the_slos(mixed_h5):
    import matplotlib.pyplot as plt

    from aifsim import plot
    run = aifsim.open_run(mixed_h5)
    fig = plt.figure()
    axs = plot.services(run, axes=[fig.add_subplot(3, 1, i + 1)
                                   for i in range(3)])
    for ax, slo in ((axs[1], "SLO 2 s"), (axs[2], "SLO 100 ms")):
        labels = ax.get_legend_handles_labels()[1]
        # both services share the SLO: one line, not one per service
        assert [lab for lab in labels if "SLO" in lab] == [slo], labels
        assert ax.get_yscale() == "log"
        assert "chat p50" in labels and "conversation p99" in labels
        # p50 and p99 inside the axes, not squashed under the SLO: the
        # axis spans less than 20 decades around them
        lo, hi = ax.get_ylim()
        assert 0 < lo < hi and hi / lo < 1e20
    plt.close(fig)


def test_summary_scenario_and_attributes(quick_h5):
    run = aifsim.open_run(quick_h5)
    s = run.summary
    for k in ("energy_mwh", "mean_power_w", "peak_power_w", "cap_w",
              "duration_s", "gpus", "racks"):
        assert k in s, k
    assert s["duration_s"] == 7200.0 and s["cap_w"] == 700e3
    assert run.name == "quickstart" and run.seed == 42
    assert run.version == "0.1.0" and run.format_version == 1
    assert run.scenario["name"] == "quickstart"
    assert run.scenario["power"]["cap"] == "700 kW"
    assert run.scenario_value("racks.1.gpu") == "H100-SXM"
    assert run.scenario_value("no.such.key", 5) == 5
    assert run.scenario_text.startswith("name:")
    assert "quickstart" in repr(run)
    assert "Facility energy" in run._repr_html_()


def test_to_xarray(quick_h5):
    import xarray as xr
    run = aifsim.open_run(quick_h5)
    ds = run.to_xarray()
    assert isinstance(ds, xr.Dataset)
    assert ds["time"].attrs["units"] == "s"
    assert float(ds["time"][0]) == 60.0
    assert ds["power_w"].attrs["units"] == "W"
    assert ds["power_w"].dims == ("time",)
    assert ds["racks_power_w"].dims == ("time", "rack")
    assert ds["racks_power_w"].attrs["units"] == "W"
    assert ds.attrs["scenario_name"] == "quickstart"
    racks = run.to_xarray("racks")
    assert racks["power_w"].sizes == {"time": 120, "rack": 12}
    assert str(racks["rack"].values[0]) == "nvl72-0"


def test_xarray_opens_the_file_directly(quick_h5):
    """The layout is a public interface: plain xarray reads a group."""
    import xarray as xr
    import h5netcdf  # noqa: F401
    with xr.open_dataset(quick_h5, group="facility", engine="h5netcdf") as ds:
        assert "time" in ds.coords
        assert ds["time"].attrs["units"] == "s"
        assert ds["power_w"].attrs["units"] == "W"
        np.testing.assert_allclose(
            ds["power_w"].values,
            aifsim.open_run(quick_h5).facility["power_w"].values)
    with xr.open_dataset(quick_h5, group="racks", engine="h5netcdf") as ds:
        assert ds["power_w"].dims == ("time", "rack")


# -- errors ------------------------------------------------------------------

def test_missing_file(tmp_path):
    with pytest.raises(RunNotFoundError, match="no such run file"):
        aifsim.open_run(tmp_path / "nope.h5")
    with pytest.raises(FileNotFoundError):
        aifsim.open_run(tmp_path / "nope.h5")


def test_partial_run(quick_h5, tmp_path):
    partial = tmp_path / "x.h5.partial"
    shutil.copy(quick_h5, partial)
    with pytest.raises(IncompleteRunError, match="incomplete.*x.h5.partial"):
        aifsim.open_run(tmp_path / "x.h5")
    with pytest.raises(IncompleteRunError, match="incomplete"):
        aifsim.open_run(partial)
    assert aifsim.open_run(tmp_path / "x.h5", allow_incomplete=True) \
        .facility.shape[0] == 120


def test_not_marked_complete(tmp_path):
    p = synth.write_run(tmp_path / "c0.h5", complete=0, full=False)
    with pytest.raises(IncompleteRunError, match="not marked complete"):
        aifsim.open_run(p)
    assert len(aifsim.open_run(p, allow_incomplete=True).facility) == 96


def test_newer_format(tmp_path):
    p = synth.write_run(tmp_path / "v2.h5", format_version=2)
    with pytest.raises(NewerFormatError, match="format version 2"):
        aifsim.open_run(p)
    ok = synth.write_run(tmp_path / "v1.h5", format_version=1)
    assert aifsim.open_run(ok).format_version == 1
    assert aifsim.FORMAT_VERSION == 1


def test_not_a_run(tmp_path):
    junk = tmp_path / "junk.h5"
    junk.write_text("not hdf5")
    with pytest.raises(NotARunError, match="not an HDF5 file"):
        aifsim.open_run(junk)
    with h5py.File(tmp_path / "empty.h5", "w") as f:
        f.attrs["complete"] = 1
    with pytest.raises(NotARunError, match="not written by aifsim"):
        aifsim.open_run(tmp_path / "empty.h5")
    with h5py.File(tmp_path / "nofacility.h5", "w") as f:
        f.attrs["format"] = "aifsim-run"
        f.attrs["complete"] = 1
    with pytest.raises(NotARunError, match="/facility"):
        aifsim.open_run(tmp_path / "nofacility.h5")
    with pytest.raises(NotARunError, match="directory"):
        aifsim.open_run(tmp_path)


# -- the groups to come ------------------------------------------------------

def test_full_layout(synth_h5):
    run = aifsim.open_run(synth_h5)
    fac = run.facility
    for c in ("cooling_power_w", "loss_power_w", "pue", "carbon_g_per_kwh",
              "price_per_mwh", "outdoor_c", "tokens_per_s"):
        assert c in fac.columns, c
    assert fac.units["outdoor_c"] == "degC"
    np.testing.assert_allclose(
        fac["power_w"], fac["it_power_w"] + fac["cooling_power_w"]
        + fac["loss_power_w"], rtol=1e-3)

    loops = run.loops
    assert loops.columns.names == ["variable", "loop"]
    assert list(loops["supply_c"].columns) == ["liquid", "air"]
    assert loops.units["supply_c"] == "degC"

    svc = run.services
    assert svc.columns.names == ["service", "variable"]
    assert set(svc.columns.get_level_values(0)) == {"chat", "code"}
    chat = svc["chat"]
    assert chat.units["ttft_p99"] == "s"
    assert (chat["ttft_p99"] >= chat["ttft_p50"]).all()
    info = run.service_info
    assert info.loc["chat", "requests_arrived"] == 1000
    assert info.loc["chat", "slo_ttft_s"] == 0.5

    jobs = run.jobs
    assert list(jobs["status"]) == ["done", "deferred", "paused"]
    assert jobs.units["arrival_s"] == "s"
    assert jobs["gpus"].sum() == 104

    assert run.summary["tokens_per_joule"] == 0.08
    ds = run.to_xarray()
    assert ds["services_ttft_p99"].dims == ("time", "service")
    assert ds["loops_supply_c"].attrs["units"] == "degC"


def test_jobs_as_a_group_of_columns(tmp_path):
    p = synth.write_run(tmp_path / "g.h5", full=False)
    with h5py.File(p, "a") as f:
        g = f.create_group("jobs")
        g.create_dataset("id", data=np.arange(3))
        g.create_dataset("name", data=["a", "b", "c"],
                         dtype=h5py.string_dtype())
        d = g.create_dataset("energy_j", data=[1.0, 2.0, 3.0])
        d.attrs["units"] = "J"
    jobs = aifsim.open_run(p).jobs
    assert list(jobs["name"]) == ["a", "b", "c"]
    assert jobs.units["energy_j"] == "J"


def test_services_as_two_dimensional_series(tmp_path):
    """A writer may also put services as [time, service] like racks."""
    p = synth.write_run(tmp_path / "s2.h5", full=False)
    with h5py.File(p, "a") as f:
        g = f.create_group("services")
        t = f["facility/time"]
        names = g.create_dataset("service", data=["chat", "batch"],
                                 dtype=h5py.string_dtype())
        names.make_scale("service")
        d = g.create_dataset("tokens_per_s", data=np.ones((len(t), 2)))
        d.attrs["units"] = "1/s"
        d.dims[0].attach_scale(t)
        d.dims[1].attach_scale(names)
    svc = aifsim.open_run(p).services
    assert svc.columns.names == ["service", "variable"]
    assert svc["batch"]["tokens_per_s"].iloc[0] == 1.0


def test_units_parsing():
    from aifsim.units import format_value, parse_quantity
    assert parse_quantity("700 kW") == (700e3, "W")
    assert parse_quantity("2h") == (7200.0, "s")
    assert parse_quantity("25%") == (0.25, "1")
    assert parse_quantity("250 ms") == (0.25, "s")
    assert parse_quantity(3) == (3.0, "")
    with pytest.raises(ValueError):
        parse_quantity("700 parsecs")
    assert format_value(559500.0, "W") == "559.5 kW"
    assert format_value(13.4287, "MWh") == "13.43 MWh"
    assert format_value(0.0, "s") == "0 s"
    # SI prefixes (EngFormatter): four digits, rounding up to the next one
    assert format_value(999960.0, "W") == "1 MW"
    assert format_value(-1.3e6, "W") == "-1.3 MW"
    assert format_value(2.5e9, "Hz") == "2.5 GHz"
    assert format_value(1234.4, "W/s") == "1.234 kW/s"


def test_package_builds_from_pyproject(tmp_path):
    """analysis/ is installable: setuptools builds a wheel from
    pyproject.toml holding the package (built from a copy, so no build
    files land in the source tree)."""
    import subprocess
    import sys
    import zipfile

    from conftest import ANALYSIS
    import setuptools  # noqa: F401  (CI installs python3-setuptools)
    src = tmp_path / "analysis"
    shutil.copytree(ANALYSIS, src, ignore=shutil.ignore_patterns(
        "notebooks", "__pycache__"))
    code = ("from setuptools import build_meta as b; "
            "print(b.build_wheel(%r))" % str(tmp_path / "dist"))
    p = subprocess.run([sys.executable, "-c", code], cwd=src,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    wheel = tmp_path / "dist" / p.stdout.strip().splitlines()[-1]
    names = zipfile.ZipFile(wheel).namelist()
    assert "aifsim/__init__.py" in names and "aifsim/__main__.py" in names
