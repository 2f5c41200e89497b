#!/usr/bin/python3
"""bench_step.py - what stepping a factory a control period at a time
costs through Python (aifsim.Factory and aifsim.FactoryEnv, over ctypes)
at 10k GPUs, beyond the simulation itself (issue 25's cost: under 200 us
a period). tests/bench/bench_step.c gives the C figures.

    PYTHONPATH=analysis AIFSIM_LIB=build/libaifsim.so \\
        /usr/bin/python3 tests/bench/bench_step.py [SCENARIO]

Separated from the simulation's own work as bench_step.c does, in this
thread's CPU time (a shared machine's preemption does not count):
  - Factory: a step's call with no event to run (run_to the time it is
    now: the same ctypes call, checks and time read as step()), plus
    observe() and a cap set, timed in loops at one state.
  - FactoryEnv.step: the whole step (the action applied, the
    observation's dict of arrays, the reward, the end checks) with the
    factory's step replaced by that empty call: everything but the events.
  - cross-check, paired: Factory.step() one period at a time against one
    step(n) on a twin factory, chunk by chunk; the median difference, with
    the chunks' spread and the simulation's cost per period.
Figures are medians; nothing is asserted.
"""

import statistics
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SRC / "analysis"))

import aifsim  # noqa: E402

SETS = {"duration": "6h"}
NO_REQUESTS = dict(SETS, **{"services.%d.arrivals.rate" % i: "0.0001"
                            for i in range(3)})


def per_call(fn, calls=500, reps=11):
    """Median thread-CPU seconds a call of fn takes, and the minimum."""
    t = []
    for _ in range(reps):
        t0 = time.thread_time()
        for _ in range(calls):
            fn()
        t.append((time.thread_time() - t0) / calls)
    return statistics.median(t), min(t)


def report(label, pair):
    print("  %-28s %8.1f us (median; min %.1f)"
          % (label, 1e6 * pair[0], 1e6 * pair[1]))


def factory_calls(f):
    report("Factory step call, no event", per_call(lambda: f.run_to(f.time)))
    report("Factory.observe()", per_call(f.observe))

    def act():
        f.cap = f.cap
    report("Factory.cap = ...", per_call(act))


def env_step(scenario, sets):
    env = aifsim.FactoryEnv(scenario, set=sets)
    env.reset()
    f = env.factory
    f.run_to(600)
    f.step = lambda n=1: f.run_to(f.time)   # the events taken out
    action = {"cap_w": env.scenario_cap_w}
    report("FactoryEnv.step, no event", per_call(lambda: env.step(action)))
    env.close()


def paired(scenario, sets, chunks=40, periods=10):
    one = aifsim.Factory(scenario, set=sets)
    bulk = aifsim.Factory(scenario, set=sets)
    one.run_to(600)
    bulk.run_to(600)
    d, work = [], []
    for _ in range(chunks):
        t0 = time.thread_time()
        for _ in range(periods):
            one.step()
        t1 = time.thread_time()
        bulk.step(periods)
        t2 = time.thread_time()
        d.append(((t1 - t0) - (t2 - t1)) / periods)
        work.append((t2 - t1) / periods)
    print("  paired: one by one %8.1f us a period more than one call of %d "
          "(median of %d chunks; spread %.0f to %.0f us)"
          % (1e6 * statistics.median(d), periods, chunks, 1e6 * min(d),
             1e6 * max(d)))
    print("  simulation         %8.1f us a period (median)"
          % (1e6 * statistics.median(work)))
    one.close()
    bulk.close()


def main():
    scenario = sys.argv[1] if len(sys.argv) > 1 else \
        str(SRC / "tests" / "bench" / "bench-10k.yaml")
    for label, sets in (("as it is", SETS), ("no requests", NO_REQUESTS)):
        print("%s, %s: from t = 600 s, thread CPU time" % (scenario, label))
        f = aifsim.Factory(scenario, set=sets)
        f.run_to(600)
        factory_calls(f)
        f.close()
        env_step(scenario, sets)
        paired(scenario, sets)


if __name__ == "__main__":
    main()
