"""Every example in examples/ runs in `make test`, shortened: each script
with the arguments EXAMPLES gives it (a script not listed there fails the
listing test), each notebook top to bottom with nbclient under
AIFSIM_NB_SMALL. What the examples find is asserted beside the binding
(test_factory_binding.py); here they must run and write their runs."""

import subprocess

import nbclient
import nbformat
import pytest

import aifsim
from conftest import SRC
from test_notebooks import kernel_env  # noqa: F401  (a fixture)

EXAMPLES_DIR = SRC / "examples"

# Each script and the arguments that shorten it (-o PATH is added).
EXAMPLES = {
    "cap_from_python.py": ["--duration", "20min"],
    "load_target_from_csv.py": ["--duration", "30min"],
}
NOTEBOOKS = sorted(EXAMPLES_DIR.glob("*.ipynb"))


def test_every_example_is_listed():
    scripts = {p.name for p in EXAMPLES_DIR.glob("*.py")}
    assert scripts == set(EXAMPLES), "list each example in EXAMPLES"
    assert [p.name for p in NOTEBOOKS] == ["load_target_sweep.ipynb"]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name, aifsim_bin, tmp_path):
    out = tmp_path / "run.h5"
    proc = subprocess.run(["/usr/bin/python3", str(EXAMPLES_DIR / name),
                           *EXAMPLES[name], "-o", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
    assert aifsim.open_run(out).summary["duration_s"] > 0


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_example_notebook_runs(path, kernel_env):  # noqa: F811
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    pngs = list(kernel_env.rglob("*.png"))
    assert pngs and all(p.stat().st_size > 10_000 for p in pngs)
