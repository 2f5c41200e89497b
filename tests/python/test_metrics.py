"""The /summary metrics as the file declares them (docs/OUTPUT.md): the
units, long_names and groups attributes, read by the package, which
declares no list of its own; files without them still open."""

import ast
import inspect
import json
import subprocess

import h5py

import aifsim
from aifsim import metrics, tables


def test_the_file_declares_every_metric(mixed_h5):
    run = aifsim.open_run(mixed_h5)
    with h5py.File(mixed_h5, "r") as f:
        attrs = f["summary"].attrs
        units = json.loads(attrs["units"])
        names = json.loads(attrs["long_names"])
        groups = json.loads(attrs["groups"])
    assert not set(metrics.META) & set(run.summary)
    for key, value in run.summary.items():
        assert key in names and key in groups, key
        if not isinstance(value, str):
            assert units.get(key), key
    assert set(units) <= set(names) == set(groups)
    assert set(groups.values()) <= set(tables.GROUPS)
    # Absent metrics are declared too: their units stay known.
    for key in tables.absent(run):
        assert key in units, key
    assert units["energy_mwh"] == "MWh" and units["gpus"] == "1"
    assert run.metrics["energy_mwh"].long_name == names["energy_mwh"]


def test_the_tables_name_metrics_as_the_file_does(mixed_h5):
    run = aifsim.open_run(mixed_h5)
    tab = tables.summary_table(run)
    for _, row in tab.iterrows():
        m = run.metrics.get(row["key"])
        if m is not None:
            assert row["metric"] == m.long_name
            assert row["group"] == m.group


def test_aifsim_metrics_is_the_files_registry(aifsim_bin, mixed_h5):
    out = subprocess.run([str(aifsim_bin), "metrics"], check=True,
                         capture_output=True, text=True).stdout
    rows = [line.split(None, 3) for line in out.splitlines()[1:]]
    keys = [r[0] for r in rows]
    assert len(keys) == len(set(keys)), "a key declared twice"
    run = aifsim.open_run(mixed_h5)
    for key, units, group, name in rows:
        m = run.metrics.get(key)
        if m is None:
            continue  # a text this run does not write
        assert (m.units or "-", m.group, m.long_name) == (units, group, name)
    numeric = {k for k, v in run.summary.items() if not isinstance(v, str)}
    assert numeric <= set(keys)


def test_tables_declares_no_metric_list():
    src = inspect.getsource(tables)
    for name in ("ROWS", "LABELS", "_UNITS", "_BY_KEY"):
        assert not hasattr(tables, name), name
    # No metric's long name is typed in the package.
    literals = {n.value for n in ast.walk(ast.parse(src))
                if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not literals & {"Facility energy", "IT energy", "Output tokens",
                           "Time over the cap", "Electricity cost"}


def test_a_file_without_declarations_opens(synth_h5):
    run = aifsim.open_run(synth_h5)
    assert run.metrics == {}
    assert "units" not in run.summary
    tab = tables.summary_table(run)
    assert "energy_mwh" in set(tab["key"])
    assert metrics.info("made_up_energy_mwh").units == "MWh"
    assert metrics.info("made_up_energy_mwh").group == "Other"


def test_unreadable_declarations_are_ignored(tmp_path):
    import synth
    path = synth.write_run(tmp_path / "bad.h5")
    with h5py.File(path, "r+") as f:
        f["summary"].attrs["units"] = "{not json"
        f["summary"].attrs["long_names"] = "[1, 2]"
    run = aifsim.open_run(path)
    assert run.metrics == {}
    assert "units" not in run.summary and "long_names" not in run.summary
    tables.summary_table(run)
