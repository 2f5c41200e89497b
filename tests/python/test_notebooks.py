"""The notebooks in analysis/notebooks run top to bottom (nbclient), on small
runs written to a temporary directory.

The kernel is /usr/bin/python3's ipykernel, named "python3" as the notebooks
ask: a kernelspec written here (JUPYTER_PATH comes first in Jupyter's
search) so a "python3" kernel registered for another interpreter cannot be
picked up instead.
"""

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import ANALYSIS

import nbformat
import nbclient
import ipykernel  # noqa: F401

NOTEBOOKS = sorted((ANALYSIS / "notebooks").glob("*.ipynb"))


def test_the_three_notebooks_are_there():
    names = {p.name for p in NOTEBOOKS}
    assert {"quickstart.ipynb", "powercap-sweep.ipynb",
            "grid-aware.ipynb"} <= names


@pytest.fixture()
def kernel_env(tmp_path, monkeypatch, aifsim_bin):
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                 "{connection_file}"],
        "display_name": "Python 3 (aifsim tests)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("AIFSIM_BIN", str(Path(aifsim_bin).resolve()))
    monkeypatch.setenv("AIFSIM_NB_OUT", str(tmp_path / "out"))
    monkeypatch.setenv("AIFSIM_NB_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # debugpy
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ANALYSIS)] + [p for p in os.environ.get(
            "PYTHONPATH", "").split(os.pathsep) if p]))
    return tmp_path / "out"


CASES = [(p, {}) for p in NOTEBOOKS] + [
    (p, {"AIFSIM_NB_MANUAL_SWEEP": "1"}) for p in NOTEBOOKS
    if p.stem == "powercap-sweep"]  # the sweep built without `aifsim sweep`


@pytest.mark.parametrize("path,env", CASES, ids=lambda c: c.stem if
                         isinstance(c, Path) else "-".join(c) or "default")
def test_notebook_runs(path, env, kernel_env, monkeypatch):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert any(kernel_env.iterdir()), "the notebook wrote its runs"
