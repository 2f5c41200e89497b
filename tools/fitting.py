"""fitting.py - the numerical part of tools/calibrate.py: a constant's key
and resolution, Levenberg-Marquardt with a forward-difference Jacobian,
the standard errors at the answer, and the bounded axes the fits move
on. Pure functions: no build, no catalog."""
import math
from dataclasses import dataclass

import numpy as np


@dataclass
class Key:
    """One constant of a fit: its catalog key, unit and resolution."""
    key: str
    unit: str
    scale: float         # catalog unit per SI unit (1e6 for us)
    decimals: int        # written with this many decimals


def round_to(key, si):
    """si rounded to the key's resolution, in SI units."""
    return round(si * key.scale, key.decimals) / key.scale


def fmt_value(key, si):
    v = f"{si * key.scale:.{key.decimals}f}"
    return v + key.unit if key.unit in ("", "%") else f"{v} {key.unit}"


def rms(r, w):
    return math.sqrt(float(np.sum(w * r * r) / np.sum(w)))


UNCERTAINTY = "uncertainty: "


def jacobian(res, x, r, h):
    """d res / d x by forward differences of step h, r = res(x)."""
    jac = np.empty((len(r), len(x)))
    for i in range(len(x)):
        dx = np.zeros_like(x)
        dx[i] = h
        jac[:, i] = (res(x + dx) - r) / h
    return jac


def standard_errors(res, x, h, fits):
    """One standard error of each fitted figure (in its own unit) and the
    axes' covariance, from the Jacobian at the answer: cov(x) = s^2
    (J'J)^-1 with s^2 the residuals' sum of squares over their degrees of
    freedom (Bates and Watts, Nonlinear Regression Analysis, 1988, ch. 2),
    taken through each axis's map to the figure: (errors, cov, dof), or
    None for a fit with as many figures as rows."""
    r = res(x)
    dof = len(r) - len(x)
    if dof < 1:
        return None
    jac = jacobian(res, x, r, h)
    cov = float(r @ r) / dof * np.linalg.pinv(jac.T @ jac)
    se = []
    for i, f in enumerate(fits):
        slope = (f.from_x(x[i] + 1e-6) - f.from_x(x[i] - 1e-6)) / 2e-6
        se.append(abs(slope) * math.sqrt(cov[i, i]))
    return se, cov, dof


def uncertainty(res, x, h, fits, keys):
    """standard_errors as the catalog's line: each figure's one standard
    error and the correlations; none for a fit without a degree of
    freedom."""
    found = standard_errors(res, x, h, fits)
    if found is None:
        return []
    errors, cov, dof = found
    se = [f"{k.key} +-{fmt_value(k, e)}" for k, e in zip(keys, errors)]
    sd = np.sqrt(np.diag(cov))
    corr = [f"{cov[i, j] / (sd[i] * sd[j]):+.2f}"
            for i in range(len(x)) for j in range(i + 1, len(x))]
    return [f"{UNCERTAINTY}one standard error {', '.join(se)} (from the "
            f"Jacobian at the answer, {dof} degree{'s' if dof > 1 else ''} "
            f"of freedom); correlation {', '.join(corr)}"]


def levenberg_marquardt(res, x, h, iters=60, refusals=None):
    """Minimises |res(x)|^2 from x with a forward-difference Jacobian of
    step h; deterministic for a deterministic res. The Jacobian is taken
    again only where x moved: a refused step leaves x, and a deterministic
    res would give the same one (the served fits pay a simulation a
    residual). refusals: stop after that many refused steps in a row; a
    noisy res's sum of squares hides the minimum's last part, and past its
    noise each refusal only shrinks the next step five times."""
    lam, r = 1e-2, res(x)
    jac = jacobian(res, x, r, h)
    refused = 0
    for _ in range(iters):
        if refusals is not None and refused >= refusals:
            break
        a, g = jac.T @ jac, jac.T @ r
        step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-12), -g)
        r2 = res(x + step)
        if r2 @ r2 < r @ r:
            x, r, lam, refused = x + step, r2, lam / 3, 0
            if np.max(np.abs(step)) < 1e-6:
                break
            jac = jacobian(res, x, r, h)
        else:
            lam, refused = lam * 5, refused + 1
    return x


class Bounded:
    """A figure the fit moves on an unbounded axis: log for a positive
    scale, logit for a share between lo and hi."""
    def __init__(self, key, start, lo, hi, log):
        self.key, self.start, self.lo, self.hi, self.log = \
            key, start, lo, hi, log

    def to_x(self, v):
        if self.log:
            return math.log(v)
        return math.log((v - self.lo) / (self.hi - v))

    def from_x(self, x):
        if self.log:
            return min(self.hi, max(self.lo, math.exp(x)))
        return self.lo + (self.hi - self.lo) / (1 + math.exp(-x))

