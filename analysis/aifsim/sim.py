"""Run the simulator from Python: find the aifsim binary, run a scenario,
open the result."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .errors import SimulationError

#: The source tree this package sits in (analysis/aifsim -> the repository).
SOURCE_DIR = Path(__file__).resolve().parent.parent.parent


def find_binary(binary=None):
    """The aifsim binary: `binary`, else $AIFSIM_BIN, else build/aifsim in
    the source tree, else `aifsim` on PATH."""
    cands = [binary, os.environ.get("AIFSIM_BIN"),
             SOURCE_DIR / "build" / "aifsim", shutil.which("aifsim")]
    for c in cands:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c)
    raise SimulationError(
        "cannot find the aifsim binary: build it with `make` in %s, or set "
        "AIFSIM_BIN to its path" % SOURCE_DIR)


def data_path(name):
    """The path of `name` in the repository's data/ folder (e.g.
    "carbon/US-CAL-CISO_2023_hourly.csv", see data/SOURCES.md). Raises
    FileNotFoundError, naming the path, when it is not there."""
    path = SOURCE_DIR / "data" / name
    if not path.is_file():
        raise FileNotFoundError("no data file %s (the repository's data/ "
                                "folder, see data/SOURCES.md)" % path)
    return path


def simulate(scenario, out, set=None, seed=None, binary=None, check=True):
    """Run ``aifsim run SCENARIO -o OUT [--set K=V]...`` and open the result.

    `scenario` may be a path or, when it has no path separator and no .yaml
    suffix, the name of a scenario in scenarios/ ("quickstart"). `set` is a
    dict {key: value} of overrides (``{"power.cap": "650 kW"}``). Returns
    the :class:`aifsim.Run`; raises SimulationError with aifsim's message if
    the run fails.
    """
    from .run import open_run

    scenario = Path(scenario)
    if not scenario.suffix and len(scenario.parts) == 1:
        scenario = SOURCE_DIR / "scenarios" / (scenario.name + ".yaml")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [str(find_binary(binary)), "run", str(scenario), "-o", str(out)]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    for k, v in (set or {}).items():
        cmd += ["--set", "%s=%s" % (k, v)]
    cmd.append("--quiet")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SimulationError("%s failed (exit %d):\n%s" % (
            " ".join(cmd), proc.returncode,
            (proc.stderr or proc.stdout).strip()))
    return open_run(out) if check else out
