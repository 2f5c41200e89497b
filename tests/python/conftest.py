"""Fixtures for the analysis package's tests.

The aifsim binary comes from $AIFSIM_BIN (ctest sets it), else build/aifsim,
else it is built into build/ with CMake. Runs are small and made in
temporary directories: nothing is written into the source tree.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2]
ANALYSIS = SRC / "analysis"
HERE = Path(__file__).resolve().parent

for p in (str(ANALYSIS), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import matplotlib  # noqa: E402

matplotlib.use("Agg")

# Small runs: quickstart for 2 h (120 samples) unless a test needs the day.
SMALL = ["--set", "duration=2h"]


def _binary():
    env = os.environ.get("AIFSIM_BIN")
    if env:
        if not Path(env).is_file():
            pytest.exit("AIFSIM_BIN=%s does not exist" % env, returncode=1)
        return Path(env)
    default = SRC / "build" / "aifsim"
    if default.is_file():
        return default
    build = SRC / "build"
    subprocess.run(["cmake", "-S", str(SRC), "-B", str(build)], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(build), "--target", "aifsim",
                    "-j", "2"], check=True, stdout=subprocess.DEVNULL)
    return default


@pytest.fixture(scope="session")
def aifsim_bin():
    return _binary()


def run_aifsim(binary, out, *args, scenario=None):
    """aifsim run SCENARIO -o OUT ARGS...; returns OUT."""
    scenario = scenario or SRC / "scenarios" / "quickstart.yaml"
    proc = subprocess.run([str(binary), "run", str(scenario), "-o", str(out),
                           "--quiet", *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return Path(out)


# The quickstart factory without its cooling loops, weather and power
# chain losses: the
# foundation's output alone, so tests can check what a run without those
# groups and series looks like (runs with them: the grid and liquid tests).
BARE = ("--set", "loops=[]", "--set", "grid={}",
        "--set", "electrical.losses=false")


@pytest.fixture(scope="session")
def quick_h5(aifsim_bin, tmp_path_factory):
    """quickstart without cooling, for 2 h."""
    d = tmp_path_factory.mktemp("quick")
    return run_aifsim(aifsim_bin, d / "quick.h5", *SMALL, *BARE)


@pytest.fixture(scope="session")
def day_h5(aifsim_bin, tmp_path_factory):
    """quickstart without cooling: 24 h under 700 kW (about 0.2 s)."""
    d = tmp_path_factory.mktemp("day")
    return run_aifsim(aifsim_bin, d / "quickstart.h5", *BARE)


@pytest.fixture(scope="session")
def cap500_h5(aifsim_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("cap500")
    return run_aifsim(aifsim_bin, d / "cap500.h5", *SMALL,
                      "--set", "power.cap=500kW")


@pytest.fixture(scope="session")
def cap_sweep(aifsim_bin, tmp_path_factory):
    """A sweep directory in the documented layout: quickstart (2 h) at
    three caps, point-NNNN.h5 plus summary.csv written here."""
    import csv

    import aifsim

    d = tmp_path_factory.mktemp("sweep")
    caps = ["480 kW", "500 kW", "700 kW"]
    rows = []
    for i, cap in enumerate(caps):
        name = "point-%04d.h5" % i
        run_aifsim(aifsim_bin, d / name, *SMALL,
                   "--set", "power.cap=%s" % cap.replace(" ", ""))
        s = aifsim.open_run(d / name).summary
        rows.append({"point": i, "power.cap": cap, "power.policy": "static",
                     "file": name, **s})
    with open(d / "summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return d


@pytest.fixture(scope="session")
def mixed_h5(aifsim_bin, tmp_path_factory):
    """mixed.yaml for 2 h: two services (one replaying the Azure trace from
    data/) and two training jobs."""
    d = tmp_path_factory.mktemp("mixed")
    return run_aifsim(aifsim_bin, d / "mixed.h5", *SMALL,
                      scenario=SRC / "scenarios" / "mixed.yaml")


@pytest.fixture(scope="session")
def frankfurt_h5(aifsim_bin, tmp_path_factory):
    """frankfurt-week for 2 days: real carbon, price and weather read from
    data/."""
    scen = SRC / "scenarios" / "frankfurt-week.yaml"
    d = tmp_path_factory.mktemp("frankfurt")
    return run_aifsim(aifsim_bin, d / "fra.h5", "--set", "duration=2d",
                      scenario=scen)


@pytest.fixture(scope="session")
def liquid_h5(aifsim_bin, tmp_path_factory):
    """liquid-vs-air for 3 days: one liquid cooling loop."""
    scen = SRC / "scenarios" / "liquid-vs-air.yaml"
    d = tmp_path_factory.mktemp("liquid")
    return run_aifsim(aifsim_bin, d / "lva.h5", "--set", "duration=3d",
                      scenario=scen)


@pytest.fixture()
def synth_h5(tmp_path):
    import synth
    return synth.write_run(tmp_path / "synth.h5")


def cli(*args, cwd=None):
    """python3 -m aifsim ARGS...; returns the CompletedProcess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ANALYSIS)] + [p for p in env.get("PYTHONPATH", "").split(
            os.pathsep) if p])
    env["MPLBACKEND"] = "Agg"
    return subprocess.run([sys.executable, "-m", "aifsim", *map(str, args)],
                          capture_output=True, text=True, env=env, cwd=cwd)
