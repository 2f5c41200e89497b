"""The errors open_run and open_sweep raise: each says what is wrong and
what to do about it."""


class AifsimError(Exception):
    """Base class of the analysis package's errors."""


class RunNotFoundError(AifsimError, FileNotFoundError):
    """The run file does not exist."""


class IncompleteRunError(AifsimError):
    """The run is still being written or was interrupted (only a
    ``.partial`` file, or ``complete`` is not 1)."""


class NewerFormatError(AifsimError):
    """The file was written in a format newer than this package reads."""


class NotARunError(AifsimError):
    """The file is not an aifsim run: not HDF5, no /facility, or not
    written by aifsim (no root attribute ``format`` = ``aifsim-run``)."""


class DamagedRunError(AifsimError):
    """The file was changed or damaged after aifsim wrote it: its seal (a
    checksum of the whole file) does not match, or a dataset fails its
    own checksum. The message names the file and, when one can be found,
    the dataset."""


class SimulationError(AifsimError):
    """The aifsim binary failed (``simulate``) or cannot be found."""


def did_you_mean(name, names):
    """The name of ``names`` closest to ``name``, or None: as aifsim's own
    suggestions (sim/core/suggest.c), case is ignored and a name that starts
    another (or that another starts) counts as close; else a close spelling
    (difflib's ratio 0.8). Ties go to the first in ``names``."""
    import difflib

    low = {}
    for n in names:
        low.setdefault(str(n).lower(), str(n))
    key = str(name).lower()
    if key in low:
        return low[key]
    if len(key) >= 2:
        for k, v in low.items():
            if k.startswith(key) or (len(k) >= 2 and key.startswith(k)):
                return v
    close = difflib.get_close_matches(key, list(low), n=1, cutoff=0.8)
    return low[close[0]] if close else None
