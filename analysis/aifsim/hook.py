"""A run under a power policy written in Python: the policy hook.

    PYTHONPATH=analysis /usr/bin/python3 -m aifsim.hook \\
        scenarios/powercap-policies.yaml --policy aifsim.policies:priority \\
        --set duration=1h -o out/py-priority.h5

runs the scenario through libaifsim as ``aifsim run`` does, with the
callable named by ``--policy module:function`` (aifsim.policies documents
what it is given and returns) sharing every rack group's GPU budget in
place of the scenario's power.policy, and writes the same file
``aifsim run`` writes. The module is imported as Python imports any
(PYTHONPATH, or a file path ``path/to/mine.py:function``).
``aifsim run SCENARIO --policy module:function`` runs this (its
``--threads N`` passed on: the services' requests on N threads).

The callable is one of two kinds, told apart by what it takes:
  - a power policy, policy(units, budget_w) -> caps (two arguments):
    called every allocation for each rack group's GPU budget;
  - a controller, controller(obs) -> action (one argument): called
    every control period with aifsim.Factory.observe()'s dict, returning
    a dict of actions keyed as aifsim.env.ACTIONS (cap_w, load_target_w,
    power_group_cap_w; {} or None: none), in force from the next tick.

Exit status, as ``aifsim run``'s: 0; 2 bad input (the policy cannot be
loaded, the scenario or an override is refused); 1 the run failed (the
policy raised or broke its contract, the books failed); 128+N stopped
by signal N (SIGINT, SIGTERM, SIGHUP), its output removed.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import signal
import sys
from pathlib import Path

import numpy as np

from .errors import SimulationError
from .factory import Factory


def load_policy(spec):
    """The callable that `module:function` (or `file.py:function`)
    names."""
    module, sep, name = spec.rpartition(":")
    if not sep or not module or not name:
        raise SimulationError("--policy %r: give it as module:function" % spec)
    if module.endswith(".py"):
        loaded = importlib.util.spec_from_file_location(Path(module).stem,
                                                        module)
        if loaded is None:
            raise SimulationError("--policy %r: cannot load %s" % (spec, module))
        mod = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(mod)
    else:
        try:
            mod = importlib.import_module(module)
        except ImportError as e:
            raise SimulationError("--policy %r: cannot import %s: %s"
                                  % (spec, module, e)) from e
    fn = getattr(mod, name, None)
    if not callable(fn):
        raise SimulationError("--policy %r: %s has no function %r"
                              % (spec, module, name))
    return fn


def is_controller(fn):
    """Whether fn takes the observation alone (a controller) rather than
    (units, budget_w) (a power policy)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    needed = [p for p in params if p.default is p.empty and p.kind in
              (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(needed) == 1


def run_controller(f, fn):
    """Steps f to its end a control period at a time, applying what
    fn(f.observe()) returns before each step; then finishes it."""
    from .env import ACTIONS
    while not f.at_end:
        try:
            action = fn(f.observe()) or {}
        except Exception as e:  # noqa: BLE001: the user's code
            raise SimulationError("the controller raised %r at %g s"
                                  % (e, f.time)) from e
        for k, v in action.items():
            if k not in ACTIONS:
                raise SimulationError(
                    "the controller's action %r is not one of %s"
                    % (k, ", ".join(ACTIONS)))
            v = np.asarray(v, dtype=float)
            ACTIONS[k].apply(f, v if v.ndim else float(v))
        f.step()
    f.finish()


def run(scenario, policy, set=None, seed=None, out=None, lib=None,
        threads=None):
    """Runs `scenario` to its end under `policy` (a power policy or a
    controller, as a callable or a "module:function" string), its
    requests on `threads` threads (None: the default); returns the
    finished Factory (close it)."""
    fn = load_policy(policy) if isinstance(policy, str) else policy
    controller = is_controller(fn)
    f = Factory(scenario, set=set, seed=seed, out=out, lib=lib,
                policy=None if controller else fn, threads=threads)
    try:
        if controller:
            run_controller(f, fn)
        else:
            f.finish()
    except BaseException:
        f.close()
        raise
    return f


class _Stopped(BaseException):
    """A stop signal, raised where the run is so that it is closed."""


def _stop(signum, frame):
    raise _Stopped(signum)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m aifsim.hook",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("scenario")
    ap.add_argument("--policy", required=True, help="module:function")
    ap.add_argument("--set", action="append", default=[],
                    metavar="KEY=VALUE")
    ap.add_argument("--seed", type=int)
    ap.add_argument("-o", "--out")
    ap.add_argument("--threads", type=int, metavar="N",
                    help="the services' requests on N threads")
    args = ap.parse_args(argv)
    sets = dict(kv.split("=", 1) for kv in args.set)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop)
    try:
        fn = load_policy(args.policy)
        controller = is_controller(fn)
        f = Factory(args.scenario, set=sets, seed=args.seed, out=args.out,
                    policy=None if controller else fn, threads=args.threads)
    except SimulationError as e:
        print("aifsim: %s" % e, file=sys.stderr)
        return 2
    except _Stopped as e:
        return 128 + e.args[0]
    try:
        if controller:
            run_controller(f, fn)
        else:
            f.finish()
    except SimulationError as e:
        print("aifsim: %s" % e, file=sys.stderr)
        return 1
    except _Stopped as e:
        print("aifsim: stopped by %s: no output was kept"
              % signal.Signals(e.args[0]).name, file=sys.stderr)
        return 128 + e.args[0]
    finally:
        if not f.finished:
            f.close()
    print("energy %.4f MWh, cap violation %.0f s%s"
          % (f.summary("energy_mwh"), f.summary("cap_violation_s"),
             ", output %s" % args.out if args.out else ""))
    f.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
