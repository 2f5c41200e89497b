"""Units: parse scenario quantities ("700 kW") and pick readable display units.

The simulator writes every series in SI base units (W, J, s, ...) with a
``units`` attribute. Plots show them scaled (kW, MW, h, ms); this module
holds the one table that decides how.
"""

from __future__ import annotations

import math
import re

# name -> (factor to the canonical unit, offset, canonical unit); the same
# table as sim/input/units.c, so a value written in a scenario reads the same here.
_UNITS = {
    "W": (1.0, 0.0, "W"), "kW": (1e3, 0.0, "W"), "MW": (1e6, 0.0, "W"),
    "GW": (1e9, 0.0, "W"),
    "J": (1.0, 0.0, "J"), "kJ": (1e3, 0.0, "J"), "MJ": (1e6, 0.0, "J"),
    "GJ": (1e9, 0.0, "J"), "Wh": (3600.0, 0.0, "J"), "kWh": (3.6e6, 0.0, "J"),
    "MWh": (3.6e9, 0.0, "J"), "GWh": (3.6e12, 0.0, "J"),
    "ns": (1e-9, 0.0, "s"), "us": (1e-6, 0.0, "s"), "ms": (1e-3, 0.0, "s"),
    "s": (1.0, 0.0, "s"), "min": (60.0, 0.0, "s"), "h": (3600.0, 0.0, "s"),
    "d": (86400.0, 0.0, "s"),
    "%": (0.01, 0.0, "1"),
    "degC": (1.0, 0.0, "degC"), "\u00b0C": (1.0, 0.0, "degC"),
    "K": (1.0, -273.15, "degC"),
    "$/MWh": (1.0, 0.0, "$/MWh"), "USD/MWh": (1.0, 0.0, "$/MWh"),
    "$/kWh": (1e3, 0.0, "$/MWh"), "USD/kWh": (1e3, 0.0, "$/MWh"),
    "gCO2/kWh": (1.0, 0.0, "gCO2/kWh"), "kgCO2/MWh": (1.0, 0.0, "gCO2/kWh"),
    "g/kWh": (1.0, 0.0, "gCO2/kWh"), "kg/MWh": (1.0, 0.0, "gCO2/kWh"),
    "Hz": (1.0, 0.0, "Hz"), "kHz": (1e3, 0.0, "Hz"), "MHz": (1e6, 0.0, "Hz"),
    "GHz": (1e9, 0.0, "Hz"),
    "B": (1.0, 0.0, "B"), "kB": (1e3, 0.0, "B"), "MB": (1e6, 0.0, "B"),
    "GB": (1e9, 0.0, "B"), "TB": (1e12, 0.0, "B"), "KiB": (1024.0, 0.0, "B"),
    "MiB": (1024.0**2, 0.0, "B"), "GiB": (1024.0**3, 0.0, "B"),
    "TiB": (1024.0**4, 0.0, "B"),
    "B/s": (1.0, 0.0, "B/s"), "MB/s": (1e6, 0.0, "B/s"),
    "GB/s": (1e9, 0.0, "B/s"), "TB/s": (1e12, 0.0, "B/s"),
    "FLOPS": (1.0, 0.0, "FLOPS"), "GFLOPS": (1e9, 0.0, "FLOPS"),
    "TFLOPS": (1e12, 0.0, "FLOPS"), "PFLOPS": (1e15, 0.0, "FLOPS"),
    "TOPS": (1e12, 0.0, "FLOPS"), "POPS": (1e15, 0.0, "FLOPS"),
    "W/s": (1.0, 0.0, "W/s"), "kW/s": (1e3, 0.0, "W/s"),
    "MW/s": (1e6, 0.0, "W/s"),
}

_QUANTITY = re.compile(
    r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S*)\s*$")


def parse_quantity(text):
    """Parse a scenario quantity to (value in the canonical unit, unit).

    >>> parse_quantity("700 kW")
    (700000.0, 'W')
    >>> parse_quantity("25%")
    (0.25, '1')

    A plain number gives (number, ""). Anything else raises ValueError.
    """
    if isinstance(text, bool):
        raise ValueError("not a quantity: %r" % (text,))
    if isinstance(text, (int, float)):
        return float(text), ""
    m = _QUANTITY.match(str(text))
    if not m:
        raise ValueError("not a quantity: %r" % (text,))
    number, unit = float(m.group(1)), m.group(2)
    if unit == "":
        return number, ""
    if unit not in _UNITS:
        raise ValueError("unknown unit %r in %r" % (unit, text))
    factor, offset, canonical = _UNITS[unit]
    return number * factor + offset, canonical


def try_quantity(value):
    """parse_quantity, or None when the value is not a quantity."""
    try:
        return parse_quantity(value)
    except (ValueError, TypeError):
        return None


# Display scaling: canonical unit -> [(threshold, factor, shown unit)], the
# largest threshold not above the magnitude wins.
_SCALES = {
    "W": [(0, 1.0, "W"), (1e3, 1e3, "kW"), (1e6, 1e6, "MW"), (1e9, 1e9, "GW")],
    "J": [(0, 1.0, "J"), (3.6e3, 3.6e3, "Wh"), (3.6e6, 3.6e6, "kWh"),
          (3.6e9, 3.6e9, "MWh"), (3.6e12, 3.6e12, "GWh")],
    "s": [(0, 1e-3, "ms"), (1.0, 1.0, "s"), (120.0, 60.0, "min"),
          (7200.0, 3600.0, "h"), (172800.0, 86400.0, "d")],
    "W/s": [(0, 1.0, "W/s"), (1e3, 1e3, "kW/s"), (1e6, 1e6, "MW/s")],
    "kg": [(0, 1.0, "kg"), (1e3, 1e3, "t")],
    "B": [(0, 1.0, "B"), (1e9, 1e9, "GB"), (1e12, 1e12, "TB")],
}

# Units as written in files -> how a label shows them.
_PRETTY = {"degC": "\u00b0C", "1": "", "gCO2/kWh": "gCO\u2082/kWh",
           "kgCO2": "kg CO\u2082", "tCO2": "t CO\u2082"}


def display_scale(units, magnitude):
    """(factor, shown unit) for values of `units` around `magnitude`.

    Divide the values by the factor. Units without a scale table are shown
    as they are (factor 1).
    """
    table = _SCALES.get(units)
    if not table or magnitude is None or not math.isfinite(magnitude):
        return 1.0, units
    magnitude = abs(magnitude)
    if magnitude == 0:
        return 1.0, units
    chosen = table[0]
    for row in table:
        if magnitude >= row[0]:
            chosen = row
    return chosen[1], chosen[2]


def pretty(units):
    """Units as a label shows them: degC -> °C, "1" (dimensionless) -> ""."""
    if units is None:
        return ""
    return _PRETTY.get(units, units)


def label(name, units):
    """'facility power (kW)', or just the name for a dimensionless value."""
    u = pretty(units)
    return "%s (%s)" % (name, u) if u else name


def time_scale(span_s):
    """(factor, unit) for a time axis spanning `span_s` seconds."""
    if span_s > 3 * 86400:
        return 86400.0, "d"
    if span_s > 3 * 3600:
        return 3600.0, "h"
    if span_s > 3 * 60:
        return 60.0, "min"
    return 1.0, "s"


#: Metrics that are shares of 1, shown in percent.
PERCENT_METRICS = ("mean_activity", "slo_attainment", "peak_share_of_cap",
                   "band_share")


def metric_units(name):
    """The units of a /summary metric from its name (a metric's name ends
    in its unit): what files written before /summary declared its units
    fall back on (aifsim.metrics)."""
    n = name.lower()
    exact = {
        "pue": "1", "mean_pue": "1", "itue": "1", "tue": "1", "cost": "$",
        "revenue": "$",
        "tokens_per_joule": "tokens/J", "tokens_per_s": "tokens/s",
        "slo_attainment": "1", "mean_activity": "1", "gpus": "", "racks": "",
        "co2_t": "t CO\u2082", "co2_kg": "kg CO\u2082",
    }
    if n in exact:
        return exact[n]
    suffixes = [
        ("_mwh", "MWh"), ("_kwh", "kWh"), ("_wh", "Wh"), ("_j", "J"),
        ("_w", "W"), ("_s", "s"), ("_kg", "kg"), ("_t", "t"), ("_c", "degC"),
        ("_per_mwh", "$/MWh"), ("_g_per_kwh", "gCO2/kWh"),
        ("_per_joule", "1/J"), ("_per_s", "1/s"), ("_pct", "%"),
        ("_ratio", "1"), ("_share", "1"), ("_w_per_s", "W/s"),
        ("_w_rms", "W"), ("_per_kwh", "gCO2/kWh"),
    ]
    for suffix, units in sorted(suffixes, key=lambda s: -len(s[0])):
        if n.endswith(suffix):
            return units
    return ""


#: Units whose readable multiples are the SI prefixes (kW, MW/s, GHz):
#: format_value writes them with matplotlib's EngFormatter.
SI_PREFIXED = ("W", "W/s", "Hz")


def _engineering(value, units):
    """'559.5 kW': four significant digits, then the SI prefix that leaves
    1 to 999 in front (EngFormatter rounds 999.96 kW up to 1 MW)."""
    # Imported here: reading a run should not load matplotlib.
    from matplotlib.ticker import EngFormatter
    plain = EngFormatter(sep=" ", usetex=False, useMathText=False)
    return plain.format_eng(float("%.4g" % value)) + units


def format_value(value, units=""):
    """A number with its unit, scaled for reading: '559.5 kW', '13.43 MWh'."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(v):
        return str(v)
    if units == "MWh" and abs(v) < 1:
        v, units = v * 1e3, "kWh"
    if units == "$":
        return ("-$%.4g" if v < 0 else "$%.4g") % abs(v) if abs(v) < 1e6 \
            else "$%.4e" % v
    if units in SI_PREFIXED:
        return _engineering(v, units)
    factor, shown = display_scale(units, v)
    v = v / factor
    if units == "1":
        return "%.4g" % v
    if units in ("", None) and float(v).is_integer():
        return "%d" % v
    text = ("%.4g" % v) if abs(v) < 1e6 else ("%.4e" % v)
    shown = pretty(shown)
    return "%s %s" % (text, shown) if shown else text


def significant(x, digits=3):
    """x with `digits` significant digits, thousands separated: 13,640;
    0.0123; 'n/a' for None or a value that is not finite (the READMEs'
    numbers, tools/gallery.py)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    if x == 0:
        return "0"
    mag = int(math.floor(math.log10(abs(x))))
    dec = max(0, digits - 1 - mag)
    return "{:,.{}f}".format(round(x, dec), dec)


def whole(x):
    """A count: a whole number, thousands separated."""
    return "{:,.0f}".format(x)


def percent(x, digits=1, sign=False):
    """A share of 1 in percent: 0.125 -> '12.5%' ('+12.5%' with sign)."""
    return ("{:+.{}f}%" if sign else "{:.{}f}%").format(100 * x, digits)


def times(x):
    """A factor: 1.5 -> 'x1.50'."""
    return "x%.2f" % x


def duration_text(seconds):
    """A duration as people say it: '1 d', '2 h', '90 min', '30 s'."""
    seconds = float(seconds)
    if seconds >= 86400 and seconds % 86400 == 0:
        return "%g d" % (seconds / 86400)
    if seconds >= 3600:
        return "%g h" % round(seconds / 3600, 2)
    if seconds >= 60:
        return "%g min" % round(seconds / 60, 2)
    return "%g s" % seconds


def format_metric(name, value):
    """A /summary metric's value as a table shows it, its unit from its
    name: '13.43 MWh', '87.5%', '1 d'; lists joined with commas."""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if name in PERCENT_METRICS:
        try:
            return "%.1f%%" % (100 * float(value))
        except (TypeError, ValueError):
            return str(value)
    if name == "duration_s":
        return duration_text(value)
    return format_value(value, metric_units(name))
