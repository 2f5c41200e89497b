"""aifsim analysis: open simulator runs and sweeps as pandas DataFrames,
plot them, write reports.

    import aifsim
    run = aifsim.open_run("out/quickstart.h5")
    run.facility            # DataFrame indexed by time (s); run.facility.units
    aifsim.plot.power_stack(run)
    sweep = aifsim.open_sweep("out/sweep/")   # one row a point; sweep.run(3)
    f = aifsim.Factory("quickstart", set={"duration": "1h"})  # libaifsim
    f.step(); f.power; f.cap = 0.9 * f.cap; f.finish(); f.close()

Command line: ``python3 -m aifsim report|compare|sweep ...`` (see
``python3 -m aifsim --help``).
"""

from .errors import (AifsimError, IncompleteRunError, NewerFormatError,
                     NotARunError, RunNotFoundError, SimulationError)
from .run import FORMAT_VERSION, Frame, Run, open_run
from .sweep import Sweep, open_sweep, write_summary
from .sim import data_path, find_binary, simulate
from .factory import Factory, find_library
from .env import FactoryEnv
from . import comparison, plot, tables, timeaxis, units

__version__ = "0.1.0"


def report(run, png=None, html=None, dpi=110):
    """Write the report of a run (a Run or a path) as PNG and/or HTML."""
    from .reports import write_report
    if not isinstance(run, Run):
        run = open_run(run)
    return write_report(run, png=png, html_path=html, dpi=dpi)


__all__ = [
    "AifsimError", "IncompleteRunError", "NewerFormatError", "NotARunError",
    "RunNotFoundError", "SimulationError", "FORMAT_VERSION", "Frame", "Run",
    "open_run", "Sweep", "open_sweep", "write_summary", "data_path", "find_binary",
    "simulate", "Factory", "FactoryEnv", "find_library", "comparison", "plot", "tables", "timeaxis", "units",
    "report",
]
