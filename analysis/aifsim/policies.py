"""Power policies in Python, for aifsim.Factory(policy=...) and
``python3 -m aifsim.hook --policy module:function``: a policy is a
callable ``policy(units, budget_w) -> caps``.

`units` is a dict of numpy arrays, one entry a unit of the rack group
whose GPU budget is being shared (include/aifsim.h, aifsim_unit): ``n``
(GPUs), ``lo`` and ``hi`` (the per-GPU cap range, W), ``demand`` (per GPU,
uncapped at its activity, W), ``cls`` (0 inference, 1 training, 2 other),
``priority``, ``weight``, ``c``, ``idle``, ``span``, ``activity``,
``gamma``, ``phi_min``. The policy returns each unit's per-GPU cap (W),
within [lo, hi], the caps times n adding up to no more than budget_w;
anything else stops the run with a message.

`priority` is models/control/power_priority.c operation for operation
(with power.c's power_fill and power_spread_rest): the same IEEE double
operations in the same order, sums taken in order (np.cumsum, never
numpy's pairwise sum), and the water level found by bisection to adjacent
doubles, the crossing power_boundary finds (it is unique: the filled
power is monotone in the level, rounding included). So it gives the C
policy's caps bit for bit, and a run under it the C run's /summary
(tests/python/test_policy_hook.py).
"""

from __future__ import annotations

import numpy as np

NCLASSES = 3


def _total(n, cap):
    """sum n_u cap_u, in order (power_total)."""
    return float(np.cumsum(n * cap)[-1]) if len(cap) else 0.0


def _clamp(x, lo, hi):
    return np.where(x < lo, lo, np.where(x > hi, hi, x))


def _adjacent(a, b):
    mid = 0.5 * (a + b)
    return mid == a or mid == b


def _boundary(f, target, good, bad):
    """The end on good's side of the adjacent doubles where f crosses
    target (power_boundary's answer, by bisection)."""
    if f(good) > target:
        return good
    while not _adjacent(good, bad):
        mid = 0.5 * (good + bad)
        if f(mid) <= target:
            good = mid
        else:
            bad = mid
    return good


def _fill(n, lo, w, top, budget_w):
    """Water-filling (power_fill): caps clamp(level w, lo, top) at the
    largest level that spends no more than budget_w."""
    hi = 0.0
    for wu, tu in zip(w, top):
        if wu > 0:
            hi = max(hi, tu / wu)

    def filled(level):
        return _total(n, _clamp(level * w, lo, top))

    level = hi
    if filled(hi) > budget_w:
        level = _boundary(filled, budget_w, 0.0, hi)
    return _clamp(level * w, lo, top)


def _spread_rest(u, budget_w, cap):
    """What is left after cap, over the room to hi (power_spread_rest)."""
    left = budget_w - _total(u["n"], cap)
    room = _total(u["n"], u["hi"] - cap)
    if not left > 0 or not room > 0:
        return cap
    share = min(1.0, left / room) * (1 - 1e-12)
    return np.minimum(u["hi"], cap + share * (u["hi"] - cap))


def _serve_level(u, cls, prio, left, cap):
    """Raises the units of class cls and priority prio toward their demand
    with what is left; returns what is left after (serve_level)."""
    idx = np.flatnonzero((u["cls"] == cls) & (u["priority"] == prio))
    if len(idx) == 0:
        return left
    n, lo, hi, d = (u[k][idx] for k in ("n", "lo", "hi", "demand"))
    floor = _total(n, cap[idx])
    top = np.where(d < lo, lo, np.where(d > hi, hi, d))
    sub = _fill(n, lo, d, top, floor + left)
    spent = _total(n, sub) - floor
    cap[idx] = sub
    return left - spent


def priority(units, budget_w):
    """The priority policy: every unit its minimum, then inference up to
    its demand, then training, then the rest, within a class the higher
    priority first; then what is left spread by room."""
    cap = np.array(units["lo"], dtype=float)
    left = budget_w - _total(units["n"], cap)
    for cls in range(NCLASSES):
        if not left > 0:
            break
        below = np.inf
        while left > 0:
            mine = units["priority"][(units["cls"] == cls)
                                     & (units["priority"] < below)]
            if len(mine) == 0:
                break
            below = mine.max()
            left = _serve_level(units, cls, below, left, cap)
    return _spread_rest(units, budget_w, cap)

