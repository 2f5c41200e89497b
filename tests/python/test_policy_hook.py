"""The policy hook: a power policy written in Python (aifsim.policies)
called by the C controller every allocation. The Python priority policy
gives the C one's run: /summary to 1e-9 (bit for bit in fact: the same
file) on scenarios/powercap-policies.yaml, shortened; a policy that
raises, or returns caps out of range or over the budget, stops the run
with a message; `python3 -m aifsim.hook` runs a module:function."""

import math
import subprocess

import h5py
import numpy as np
import pytest

import aifsim
from aifsim.factory import Factory, find_library
from aifsim import hook
from aifsim.hook import load_policy
from aifsim.policies import priority
from conftest import SRC

SHORT = {"duration": "20min", "power.policy": "priority"}
SCENARIO = SRC / "scenarios" / "powercap-policies.yaml"


@pytest.fixture(scope="module")
def lib(aifsim_bin):
    return find_library()


def summary(path):
    with h5py.File(path, "r") as f:
        return {k: v for k, v in f["summary"].attrs.items()
                if np.issubdtype(np.asarray(v).dtype, np.number)}


def test_python_priority_is_the_c_one(lib, tmp_path):
    c_out, py_out = tmp_path / "c.h5", tmp_path / "py.h5"
    with Factory(SCENARIO, set=SHORT, out=c_out, lib=lib) as f:
        f.finish()
    with Factory(SCENARIO, set=SHORT, out=py_out, lib=lib,
                 policy=priority) as f:
        f.finish()
    c, py = summary(c_out), summary(py_out)
    assert c.keys() == py.keys() and len(c) > 40
    for k in c:
        a, b = float(c[k]), float(py[k])
        assert (math.isnan(a) and math.isnan(b)) or \
            abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300), k
    assert py_out.read_bytes() == c_out.read_bytes()


def test_bad_policies_stop_the_run(lib):
    def raises(units, budget_w):
        raise ValueError("no plan")

    def too_low(units, budget_w):
        return units["lo"] - 1

    def too_much(units, budget_w):
        return units["hi"]

    for fn, match in ((raises, "no plan"), (too_low, "outside its range"),
                      (too_much, "over the budget")):
        with Factory(SCENARIO, set=SHORT, lib=lib) as f:
            f.policy = fn
            with pytest.raises(aifsim.SimulationError, match=match):
                f.step()
            with pytest.raises(aifsim.SimulationError, match="failed"):
                f.step()


def test_policy_set_and_cleared_between_steps(lib):
    seen = []

    def spy(units, budget_w):
        seen.append(len(units["n"]))
        return priority(units, budget_w)

    with Factory(SCENARIO, set=SHORT, lib=lib) as f:
        f.policy = spy
        f.step(3)
        assert len(seen) >= 3 and f.policy is spy
        f.policy = None
        n = len(seen)
        f.step(3)
        assert len(seen) == n
        f.finish()


def test_module_function_from_the_command_line(lib, tmp_path):
    mine = tmp_path / "mine.py"
    mine.write_text("from aifsim.policies import priority as mine\n")
    assert load_policy("%s:mine" % mine) is not None
    with pytest.raises(aifsim.SimulationError, match="module:function"):
        load_policy("priority")
    out = tmp_path / "hook.h5"
    proc = subprocess.run(
        ["/usr/bin/python3", "-m", "aifsim.hook", str(SCENARIO),
         "--policy", "aifsim.policies:priority", "--set", "duration=5min",
         "--set", "power.policy=priority", "-o", str(out)],
        capture_output=True, text=True, cwd=SRC / "analysis")
    assert proc.returncode == 0, proc.stderr
    assert "cap violation 0 s" in proc.stdout and out.is_file()


def test_threads_reach_the_run(lib, tmp_path, capsys):
    # Factory's threads are run --threads': how the run is executed, never
    # what it computes, so the same bytes on 1 and 2 threads (the two
    # services on two); a number out of range is refused, by the hook too.
    outs = []
    for threads in (1, 2):
        outs.append(tmp_path / ("t%d.h5" % threads))
        with Factory(SCENARIO, set=SHORT, out=outs[-1], lib=lib,
                     policy=priority, threads=threads) as f:
            f.finish()
    assert outs[0].read_bytes() == outs[1].read_bytes()
    for bad in (0, -1, 1025, 1.5, True, "2"):
        with pytest.raises(aifsim.SimulationError, match="threads must be"):
            Factory(SCENARIO, set=SHORT, lib=lib, threads=bad)
    assert hook.main([str(SCENARIO), "--policy", "aifsim.policies:priority",
                      "--threads", "0"]) == 2
    assert "threads must be" in capsys.readouterr().err
