"""The summary of a run as people read it, and several runs side by side.

A run's /summary holds some 60 figures, many of them about features the
run does not use (a battery, demand response, faults): ``summary_table``
shows them grouped (run, energy, power, work, grid, reliability) under
readable names, leaves out the rows of features the run does not have,
and never shows NaN (a figure the run cannot give is listed in the
summary's ``absent`` string with its reason, and left out here).

``run_labels`` names runs by what differs between them: the ``--set``
options each file records (root attribute ``overrides``) whose values
differ, in the units the user typed and rounded (``power.cap=650 kW``),
else the resolved scenarios' differences, never the file names.
``describe`` says what a run is from its resolved scenario, so a report's
subtitle follows every ``--set``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import metrics as _m
from . import units as _u

GROUPS = ("Run", "Energy", "Power", "Work", "Grid", "Reliability")


def _pos(*keys):
    """The row shows when any of `keys` is a number above zero."""
    def test(s, run):
        return any(_num(s.get(k)) > 0 for k in keys)
    return test


def _always(s, run):
    return True


def _scenario_has(*keys):
    """The scenario sets one of these keys (training[].mtbf, faults, ...)."""
    def test(s, run):
        scen = getattr(run, "scenario", None) or {}
        for k in keys:
            first, _, rest = k.partition(".")
            v = scen.get(first) if isinstance(scen, dict) else None
            if rest and isinstance(v, list):
                if any(isinstance(x, dict) and x.get(rest) not in
                       (None, "", "0 s", 0, "none") for x in v):
                    return True
            elif v not in (None, [], {}, "", "none"):
                return True
        return False
    return test


def _code_named(s, run):
    """The scenario names a grid code (summary's grid_verdict not none)."""
    return s.get("grid_verdict", "none") not in ("none", None)


def _either(*tests):
    def test(s, run):
        return any(t(s, run) for t in tests)
    return test


_SERVICES = _pos("requests_arrived", "tokens")
_TRAINING = _pos("jobs_arrived")
_LOST = _pos("requests_rejected", "requests_timed_out", "requests_dropped")
_RELIABILITY = _either(_pos("job_failures", "lost_gpu_hours", "fault_events",
                            "fault_lost_gpu_hours"),
                       _scenario_has("faults", "training.mtbf"))

#: When a metric's row shows, where not by default (a row shows when its
#: value is a number other than zero, or a text): a presentation rule, not
#: a declaration (the file declares each metric's name, units and group:
#: aifsim.metrics).
_ALWAYS = ("duration_s", "gpus", "racks", "energy_mwh", "it_energy_mwh",
           "gpu_energy_mwh", "overhead_energy_mwh", "mean_pue", "itue",
           "tue", "cap_w", "mean_power_w", "peak_power_w",
           "peak_share_of_cap", "cap_violation_s", "stranded_mwh",
           "mean_activity", "cost", "co2_t", "carbon_g_per_kwh")
_SHOW = {
    **{k: _always for k in _ALWAYS},
    **{k: _SERVICES for k in (
        "inference_energy_mwh", "tokens_per_joule",
        "tokens_per_joule_facility", "tokens", "slo_attainment",
        "requests_arrived", "requests_completed")},
    **{k: _TRAINING for k in ("training_energy_mwh", "training_tokens",
                              "jobs_arrived", "jobs_done", "jct_mean_s")},
    **{k: _LOST for k in ("requests_rejected", "requests_timed_out",
                          "requests_dropped")},
    **{k: _RELIABILITY for k in ("job_failures", "lost_gpu_hours",
                                 "fault_events", "fault_lost_gpu_hours")},
    **{k: _pos("dr_events") for k in (
        "dr_s", "dr_time_to_cut_s", "dr_energy_above_j",
        "dr_slo_attainment")},
    **{k: _code_named for k in ("grid_code", "grid_class",
                                "grid_verdict")},
    "idle_energy_mwh": _either(_SERVICES, _TRAINING),
    "battery_net_mwh": _pos("battery_loss_mwh"),
    "smoothing_violation_s": _pos("smoothing_violation_s",
                                  "smoothing_energy_mwh"),
    "cost_energy": _pos("cost_demand", "cost_fees"),
    "peak_demand_kw": _pos("cost_demand"),
    "carbon_basis": _pos("co2_t"),
    "training_co2_kg": _either(_TRAINING, _pos("training_co2_kg")),
    "fault_s": _pos("fault_events"),
}

#: Not figures: shown elsewhere (the absent list) or not at all.
_NOT_ROWS = {"absent", "host_power_note"}

# The one figure the tables derive rather than read.
_m.declare("peak_share_of_cap", "1", "Peak / cap", "Power")

_PERCENT = ("mean_activity", "slo_attainment", "dr_slo_attainment",
            "band_share", "peak_share_of_cap")
_GPU_TIME = ("throttled_gpu_s",)


def _num(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return math.nan
    return v


def label(key):
    """The readable name of a /summary metric, as the file declares it."""
    return _m.long_name(key)


def metric_units(key):
    """Its units as the file declares them ("1" dimensionless, None for a
    text); from the key's suffix for files that do not."""
    return _m.units(key)


def _group(key):
    return _m.group(key) if _m.group(key) in GROUPS else "Other"


def _order(keys):
    """keys as the tables list them: by group, then as the files declared
    them, then the undeclared alphabetically."""
    declared = {k: i for i, k in enumerate(_m.known())}
    rank = {g: i for i, g in enumerate(GROUPS + ("Other",))}
    return sorted(keys, key=lambda k: (rank[_group(k)],
                                       declared.get(k, len(declared)), k))


def _big(v):
    """1.23e9 -> '1.23 billion'; small counts as integers."""
    a = abs(v)
    for div, word in ((1e12, "trillion"), (1e9, "billion"),
                      (1e6, "million")):
        if a >= div:
            return "%.3g %s" % (v / div, word)
    return "%d" % round(v) if float(v).is_integer() or a >= 100 \
        else "%.3g" % v


def format_metric(key, value):
    """A metric's value as the tables show it: '13.43 MWh', '87.5%',
    '1.2 billion', '$1,234'; '-' when it is not a number."""
    if isinstance(value, str):
        return value
    v = _num(value)
    if not math.isfinite(v):
        return "-"
    if key in _PERCENT:
        return "%.1f%%" % (100 * v)
    if key == "duration_s":
        return _u.duration_text(v)
    if key == "peak_demand_kw":
        return _u.format_value(v * 1e3, "W")
    if key in ("tokens_per_joule", "tokens_per_joule_facility"):
        return "%.3g tokens/J" % v
    units = metric_units(key)
    if units == "$":
        return ("-$%s" if v < 0 else "$%s") % (
            "{:,.0f}".format(abs(v)) if abs(v) >= 100 else "%.2f" % abs(v))
    if units == "kg" and abs(v) >= 1000:
        return "%.3g t" % (v / 1000)
    if units == "s" and key in _GPU_TIME:
        return "%.3g GPU-h" % (v / 3600)
    if units == "s":
        return "0 s" if v == 0 else _u.duration_text(v) if v >= 60 \
            else "%.3g s" % v
    if units == "h":
        return "%.3g h" % v
    if units in ("", None) or (units == "1" and (
            float(v).is_integer() or abs(v) >= 100)):
        return _big(v)  # a count
    return _u.format_value(v, units)


def _summary(run):
    s = dict(run.summary)
    if "peak_power_w" in s and _num(s.get("cap_w")) > 0:
        s.setdefault("peak_share_of_cap", s["peak_power_w"] / s["cap_w"])
    return s


def _shown(key, s, run):
    """Whether a key's row shows for this summary."""
    if key in _NOT_ROWS or key not in s:
        return False
    v = s[key]
    if not isinstance(v, str) and not math.isfinite(_num(v)):
        return False
    test = _SHOW.get(key)
    if test is None:  # by default, if not zero
        return isinstance(v, str) or _num(v) != 0
    return test(s, run)


def absent(run):
    """{key: why} of the figures the run cannot give (the summary's absent
    string, 'key: why; key: why')."""
    text = run.summary.get("absent") or ""
    out = {}
    for part in str(text).split(";"):
        k, _, why = part.strip().partition(":")
        if k.strip():
            out[k.strip()] = why.strip()
    return out


_NOTE_NAMES = {"cost": "cost", "co2_t": "CO\u2082", "training_co2_kg":
               "training CO\u2082", "tokens_per_joule": "tokens per joule",
               "slo_attainment": "SLO attainment",
               "jct_mean_s": "job completion time",
               "dr_slo_attainment": "SLO attainment during DR"}


def absent_note(run):
    """One line for the figures left out: 'Not in this run: electricity cost
    (no price signal or tariff), CO2 (no carbon signal)'; '' when none.
    When rack groups lack host power, the summary's note that their IT
    excludes it comes first."""
    host = str(run.summary.get("host_power_note") or "")
    rest = _absent_note(run)
    if host:
        host = "IT excludes host power: " + host
    return "; ".join(x for x in (host, rest) if x)


def _absent_note(run):
    gone = absent(run)
    why = {}
    for k, reason in gone.items():
        if not _shown_if_present(k, run) \
                and k not in ("cost", "co2_t", "tokens_per_joule"):
            continue  # a row this run would not show anyway
        if k in ("cost_energy", "cost_demand", "cost_fees",
                 "carbon_g_per_kwh", "tokens_per_joule_facility"):
            continue  # said with cost, co2_t, tokens_per_joule
        why.setdefault(reason, []).append(_NOTE_NAMES.get(k, label(k)))
    if not why:
        return ""
    return "Not in this run: " + "; ".join(
        "%s (%s)" % (", ".join(names), reason) for reason, names in
        why.items())


def _shown_if_present(key, run):
    """Whether key's row would show in this run were it a number."""
    test = _SHOW.get(key)
    return test is None or test(_summary(run), run)


def summary_table(run):
    """The run's /summary as a table, one row a figure: group, metric (a
    readable name), value (with units), key. Rows of features the run
    does not use, and figures it cannot give, are left out."""
    s = _summary(run)
    rows = [{"group": _group(k), "metric": label(k),
             "value": format_metric(k, s[k]), "key": k}
            for k in _order(s) if _shown(k, s, run)]
    return pd.DataFrame(rows, columns=["group", "metric", "value", "key"])


# -- several runs ------------------------------------------------------------

def _flatten(node, prefix="", out=None):
    out = {} if out is None else out
    if isinstance(node, dict):
        for k, v in node.items():
            _flatten(v, "%s%s." % (prefix, k), out)
    elif isinstance(node, list) and node and all(
            isinstance(x, dict) for x in node):
        for i, v in enumerate(node):
            _flatten(v, "%s%d." % (prefix, i), out)
    else:
        out[prefix[:-1]] = node
    return out


def scenario_differences(runs):
    """[{key: value}] a run: the resolved scenario keys whose values differ
    between the runs (as `--set` names them: power.cap, racks.0.count),
    without name and description."""
    flat = []
    for r in runs:
        try:
            flat.append(_flatten(r.scenario or {}))
        except Exception:  # an unreadable scenario: nothing to compare
            flat.append({})
    keys = list(dict.fromkeys(k for f in flat for k in f))
    diff = [k for k in keys if k not in ("name", "description") and
            len({repr(f.get(k)) for f in flat}) > 1]
    return [{k: f.get(k) for k in diff} for f in flat]


def _unit_factor(text):
    """(unit, factor to its canonical unit, offset) of a quantity as typed
    ("500kWh" -> ("kWh", 3.6e6, 0)), or None for a plain number or text."""
    m = _u._QUANTITY.match(str(text))
    if not m or m.group(2) not in _u._UNITS:
        return None
    factor, offset, _canon = _u._UNITS[m.group(2)]
    return m.group(2), factor, offset


def value_text(v, like=None):
    """A scenario value as a label shows it: rounded to four significant
    digits, in the unit of `like` (the value as the user typed it) when it
    has one, else in a readable multiple (448800.00000000006 W -> 448.8 kW);
    a file path as its file name; a list of entries as their count."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        if v and any(isinstance(x, (dict, list)) for x in v):
            return "[%d entr%s]" % (len(v), "y" if len(v) == 1 else "ies")
        return "[%s]" % ", ".join(value_text(x) for x in v)
    if isinstance(v, dict):
        return "{%d keys}" % len(v) if v else "{}"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return "%.4g" % v
    text = str(v).strip()
    q = _u.try_quantity(text)
    if q is None:
        return text.rsplit("/", 1)[-1] if "/" in text else text
    value, canon = q
    if canon == "":
        return "%.4g" % value
    unit = _unit_factor(like) if like is not None else None
    if unit is not None and _u._UNITS[unit[0]][2] == canon:
        return "%.4g%s%s" % ((value - unit[2]) / unit[1],
                             "" if unit[0] == "%" else " ", unit[0])
    if canon == "1" and "%" in text:
        return "%.4g%%" % (100 * value)
    return _u.format_value(value, canon)


def override_differences(runs):
    """[{key: value text}] a run: the keys given with --set to any of the
    runs whose values differ between them, each run's value in the unit the
    user typed (a run without that override: its resolved value, in the
    same unit); None when no run recorded its overrides (files written
    before aifsim did)."""
    if all(getattr(r, "overrides", None) is None for r in runs):
        return None
    given = [r.override_values() if r.overrides is not None else {}
             for r in runs]
    out = [{} for _ in runs]
    for key in _in_scenario_order(runs[0], dict.fromkeys(
            k for g in given for k in g)):
        like = next(g[key] for g in given if key in g)
        texts = [value_text(g[key], like) if key in g else
                 value_text(r.scenario_value(key), like)
                 for r, g in zip(runs, given)]
        if len(set(texts)) > 1:
            for d, t in zip(out, texts):
                d[key] = t
    # Plain values first (power.cap=500 kW), then whole sections replaced
    # (loops=[], grid={}): the first are what a comparison is usually of.
    def structural(k):
        return any(d.get(k, "")[:1] in ("[", "{") for d in out)
    order = sorted(out[0], key=structural)
    return [{k: d[k] for k in order if k in d} for d in out]


def _in_scenario_order(run, keys):
    """keys in the order the resolved scenario has them (power.cap before
    loops), those it lacks last."""
    try:
        flat = list(_flatten(run.scenario or {}))
    except Exception:  # an unreadable scenario: as given
        return list(keys)

    def where(k):
        return next((i for i, f in enumerate(flat) if f == k
                     or f.startswith(k + ".")), len(flat))
    return sorted(keys, key=where)


def common_overrides(runs):
    """The --set options every run was given alike ("duration=2min"), as
    typed; [] when none or not recorded."""
    sets = [set(r.overrides or []) for r in runs]
    common = set.intersection(*sets) if sets else set()
    return [o for o in (runs[0].overrides or []) if o in common]


def run_labels(runs, max_keys=4):
    """Legend labels of runs: the scenario name, then what differs from the
    others as --set writes it (`quickstart, power.cap=650 kW`): the keys
    given with --set whose values differ, in the units the user typed and
    rounded; without recorded overrides, the resolved scenario keys that
    differ, rounded. Only the differences when every run has the same name;
    only the name when the names differ (and, without recorded overrides,
    more than `max_keys` keys do); the file name as a last resort."""
    runs = list(runs)
    names = [r.name for r in runs]
    if len(runs) < 2:
        return names
    diffs = override_differences(runs)
    given = diffs is not None and any(diffs)
    if not given:
        diffs = [{k: value_text(v) for k, v in d.items()}
                 for d in scenario_differences(runs)]
    distinct = len(set(names)) == len(names)
    same = len(set(names)) == 1  # the name goes in the title, not here
    labels = []
    for name, d in zip(names, diffs):
        # Different scenarios are told apart by their names; what else was
        # given to one of them is for the subtitle.
        if distinct and (given or len(d) > max_keys or not d):
            labels.append(name)
            continue
        bits = ["%s=%s" % (k, v) for k, v in list(d.items())[:max_keys]]
        if len(d) > max_keys:
            bits.append("+%d more" % (len(d) - max_keys))
        head = [] if same and bits else [name]
        labels.append(", ".join(head + bits) if bits else name)
    if len(set(labels)) < len(labels):
        labels = ["%s (%s)" % (lab, r.path.name) for lab, r in
                  zip(labels, runs)]
    return labels


def _plural(n, word):
    return "%s %s%s" % (n, word, "" if str(n) == "1" else "s")


def _describe_racks(sc):
    bits = []
    for r in sc.get("racks") or []:
        if isinstance(r, dict):
            bits.append("%s of %s %s GPUs" % (
                _plural(r.get("count", 1), "rack"),
                r.get("gpus_per_rack", "?"), r.get("gpu", "?")))
    return " + ".join(bits)


def _describe_work(sc):
    bits = []
    for s in sc.get("services") or []:
        if isinstance(s, dict):
            bits.append("serving %s (%s)" % (s.get("model", "?"),
                                             s.get("precision", "?")))
    for t in sc.get("training") or []:
        if isinstance(t, dict):
            bits.append("training %s" % t.get("model", "?"))
    return ", ".join(bits)


def _describe_grid(sc):
    grid = sc.get("grid") if isinstance(sc.get("grid"), dict) else {}
    bits = []
    for key, what in (("carbon", "carbon"), ("price", "prices"),
                      ("outdoor", "weather")):
        g = grid.get(key)
        if not isinstance(g, dict):
            continue
        if g.get("file"):
            src = value_text(g["file"])
            bits.append("%s %s%s" % (what, src.rsplit(".", 1)[0], (
                " from %s" % g["start"]) if g.get("start") else ""))
        elif g.get("low") is not None and g.get("high") is not None:
            bits.append("%s %s to %s daily" % (what, value_text(g["low"]),
                                               value_text(g["high"])))
    return ", ".join(bits)


def describe(run):
    """What the run is, read from its resolved scenario (so it follows
    every --set): racks, work, duration, cap and policy, cooling, the grid's
    signals. "8 racks of 32 H100-SXM GPUs, 365 d, cap 450 kW (static), air
    cooling, weather US-TEX-ERCO_2023_weather from 2023-01-01 07:00"."""
    sc = run.scenario if isinstance(run.scenario, dict) else {}
    power = sc.get("power") if isinstance(sc.get("power"), dict) else {}
    loops = [lp.get("kind") for lp in sc.get("loops") or []
             if isinstance(lp, dict) and lp.get("kind")]
    parts = [_describe_racks(sc), _describe_work(sc),
             value_text(sc.get("duration")) if sc.get("duration") else "",
             "cap %s (%s)" % (value_text(power["cap"]), power.get(
                 "policy", "?")) if power.get("cap") else "",
             " and ".join(dict.fromkeys(loops)) + " cooling" if loops else "",
             _describe_grid(sc)]
    return ", ".join(p for p in parts if p)


def compare_table(runs, formatted=True, labels=None):
    """Summary figures of several runs side by side: one row a figure, one
    column a run, then for each run after the first its change from the
    first (absolute and %). Rows: the union of what each run's summary
    table shows. `formatted=False` gives the raw numbers, indexed by key,
    without the changes."""
    runs = list(runs)
    labels = labels or run_labels(runs)
    sums = [_summary(r) for r in runs]
    keys = [k for k in _order({k for s in sums for k in s}) if any(
        _shown(k, s, r)
                                   for s, r in zip(sums, runs))]
    if not formatted:
        return pd.DataFrame({lab: [_num(s.get(k)) if not isinstance(
            s.get(k), str) else s.get(k) for k in keys]
            for lab, s in zip(labels, sums)}, index=keys)
    data = {"group": [_group(k) for k in keys],
            "metric": [label(k) for k in keys]}
    for lab, s in zip(labels, sums):
        data[lab] = [format_metric(k, s[k]) if k in s else "-" for k in keys]
    base = sums[0]
    for lab, s in list(zip(labels, sums))[1:]:
        tag = "" if len(runs) == 2 else " (%s)" % lab
        d_abs, d_pct = [], []
        for k in keys:
            a, b = _num(base.get(k)), _num(s.get(k))
            if not (math.isfinite(a) and math.isfinite(b)) or \
                    isinstance(s.get(k), str):
                d_abs.append("-")
                d_pct.append("-")
                continue
            d = b - a
            if abs(d) <= 1e-9 * max(abs(a), abs(b)):
                d = 0.0  # rounding in the books, not a change
            d_abs.append(delta_text(k, d))
            d_pct.append(percent_text(a, b))
        data["change" + tag] = d_abs
        data["change %" + tag] = d_pct
    return pd.DataFrame(data)


def delta_text(key, d):
    if d == 0:
        return "0"
    if key in _PERCENT:
        return "%+.1f pt" % (100 * d)
    text = format_metric(key, abs(d))
    return ("+" if d > 0 else "-") + text.lstrip("-")


def percent_text(a, b):
    """The change from a to b in %; '-' from a value at or below zero,
    where a percentage says nothing (a negative bill)."""
    if a == b:
        return "0%"
    if a <= 0:
        return "-"
    p = 100.0 * (b - a) / abs(a)
    if abs(p) < 0.05:
        return "0%"
    return "%+.1f%%" % p if abs(p) < 100 else "%+.0f%%" % p


def relative_change(a, b):
    """(b - a) / |a|, NaN when undefined."""
    a, b = _num(a), _num(b)
    if not (math.isfinite(a) and math.isfinite(b)) or a == 0:
        return np.nan
    return (b - a) / abs(a)


__all__ = ["summary_table", "compare_table", "run_labels", "value_text",
           "override_differences", "common_overrides", "describe", "label",
           "format_metric", "absent", "absent_note", "scenario_differences",
           "GROUPS"]
