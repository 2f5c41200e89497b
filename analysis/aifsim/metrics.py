"""The /summary metrics as the file declares them.

A run file states each /summary metric's units, long name and group in
three JSON attributes of /summary (``units``, ``long_names``, ``groups``:
docs/OUTPUT.md), written from the rows the simulator's models declare.
This module reads them; the package declares no list of its own. Every
declaration read in this process is remembered, so a sweep's column or a
legend knows its metric's name and units wherever it shows.

Files written before the attributes existed lack them: a metric is then
named after its key and its units are taken from its name's suffix
(``energy_mwh`` -> MWh), and its group is "Other". Such files open as
before, with plainer names.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from . import units as _u

#: /summary's attributes that describe the metrics instead of being one.
META = ("units", "long_names", "groups")


@dataclass(frozen=True)
class Metric:
    key: str
    units: str | None  # None for a text metric
    long_name: str
    group: str


_known: dict[str, Metric] = {}


def _object(attrs, name):
    """A JSON object attribute as a dict; {} when absent or unreadable."""
    text = attrs.get(name)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        return {}
    try:
        out = json.loads(text)
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}


def read(attrs):
    """{key: Metric} from /summary's attributes (a mapping of name to
    value), remembering them; {} for a file without the declarations."""
    units, names, groups = (_object(attrs, m) for m in META)
    out = {}
    for key, name in names.items():
        out[key] = Metric(key, units.get(key), str(name),
                          str(groups.get(key, "Other")))
    _known.update(out)
    return out


def declare(key, units, long_name, group):
    """A figure the package derives itself (peak_share_of_cap): known as
    the file's metrics are, unless a file declares it."""
    _known.setdefault(key, Metric(key, units, long_name, group))


def info(key):
    """The Metric of a key: as a file declared it, else from its name."""
    m = _known.get(key)
    if m is not None:
        return m
    base = re.sub(r"_(mwh|kwh|wh|j|w|s|kg|t|c|pct)$", "", key)
    return Metric(key, _u.metric_units(key), (base or key).replace("_", " "),
                  "Other")


def units(key):
    """The units of a metric: "1" for a dimensionless one, None for a text,
    "" when an old file's key does not say them."""
    return info(key).units


def long_name(key):
    return info(key).long_name


def group(key):
    return info(key).group


def known():
    """The keys declared so far, in the order files declared them."""
    return list(_known)
