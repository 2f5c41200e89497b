/* bench_step.c - what stepping a factory a control period at a time costs
 * a client of libaifsim (include/aifsim.h) at 10k GPUs, beyond the
 * simulation itself (issue 25's cost: under 20 us a period in C).
 *
 * usage: bench_step [SCENARIO [CHUNKS [PERIODS]]]
 *   (default tests/bench/bench-10k.yaml, 60 chunks of 10 periods, from
 *   t = 600 s of the scenario cut to 6 h; as it is, then without its
 *   requests)
 *
 * Two figures, separated from the simulation's own work as follows:
 *  - observe + act: one period's reads (aifsim_power_now, _grid_now,
 *    _group_power, _power_group_now for each group, _load_target) and
 *    writes (aifsim_set_cap, _set_load_target, each to the value in force)
 *    timed in a loop at one state, where no event runs: all overhead.
 *  - the step call: aifsim_run_to the time it is now, the path a step
 *    takes with no event for the engine to run, timed in a loop.
 *  - cross-check, paired: two handles of the same scenario and seed run the
 *    same events (the run is deterministic); chunk by chunk, one steps
 *    PERIODS single periods, the other one call of PERIODS, alternating
 *    so that both see the same machine. The difference per period is what
 *    stepping a period at a time adds, buried in the noise of the
 *    simulation's own work: its median over CHUNKS chunks is printed with
 *    the chunks' spread, and the simulation's cost per period (the
 *    one-call handle's) beside it.
 * Figures are medians; nothing is asserted (tests never time). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <aifsim.h>

/* This thread's CPU time: a machine shared with other work takes the
 * processor away for milliseconds at a time, which wall time would count
 * and CPU time does not. */
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The variants run: the scenario as it is (cut to 6 h), and without its
 * requests (bench-10k's three services at one request an hour in all),
 * where a period's work is little more than the control tick over the
 * 10k GPUs, so that the step's own cost stands out of its noise. */
static const char *const as_is[] = {"duration=6h"};
static const char *const no_requests[] = {
    "duration=6h", "services.0.arrivals.rate=0.0001",
    "services.1.arrivals.rate=0.0001", "services.2.arrivals.rate=0.0001"};

static aifsim *open_or_die(const char *path, const char *const *sets,
                           size_t nsets) {
  aifsim *a = NULL;
  if (aifsim_open(path, sets, nsets, NULL, &a) != AIFSIM_OK) {
    fprintf(stderr, "bench_step: %s\n", a ? aifsim_errmsg(a) : "no memory");
    aifsim_close(a);
    exit(1);
  }
  return a;
}

/* One period's observation and action, as a controller makes them. */
static int observe_act(aifsim *a, double *w, size_t ngroups) {
  aifsim_power p;
  aifsim_grid g;
  aifsim_power_group pg;
  int rc = aifsim_power_now(a, &p) | aifsim_grid_now(a, &g) |
           aifsim_group_power(a, w, ngroups);
  for (size_t k = 0; k < aifsim_npower_groups(a); k++)
    rc |= aifsim_power_group_now(a, k, &pg);
  double target = aifsim_load_target(a);
  rc |= aifsim_set_cap(a, p.cap_w);
  rc |= aifsim_set_load_target(a, isnan(target) ? INFINITY : target);
  return rc;
}

/* Median seconds a call of fn(a) takes, over reps rounds of calls. */
static double time_calls(aifsim *a, int (*fn)(aifsim *), double *min) {
  enum { REPS = 21, CALLS = 2000 };
  double t[REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = now_s();
    for (int i = 0; i < CALLS; i++)
      if (fn(a) != AIFSIM_OK)
        exit(1);
    t[r] = (now_s() - t0) / CALLS;
  }
  double m = median(t, REPS);
  *min = t[0];
  return m;
}

static int one_observe_act(aifsim *a) {
  double w[64];
  size_t n = aifsim_ngroups(a);
  return observe_act(a, w, n < 64 ? n : 64);
}

/* A step's call with no event left to run: aifsim_run_to now takes the
 * path aifsim_step takes (the checks, the engine's run loop entered and
 * left), with nothing for the engine to do. */
static int empty_step(aifsim *a) { return aifsim_run_to(a, aifsim_time(a)); }

static void bench_calls(aifsim *a) {
  double min, m = time_calls(a, one_observe_act, &min);
  printf("  observe + act    %8.3f us a period (median of 21 x 2000 calls; "
         "min %.3f)\n",
         1e6 * m, 1e6 * min);
  m = time_calls(a, empty_step, &min);
  printf("  step call        %8.3f us a call with no event to run (median; "
         "min %.3f)\n",
         1e6 * m, 1e6 * min);
}

static void bench_step(aifsim *one, aifsim *bulk, int chunks, int periods) {
  double *d = malloc(2 * (size_t)chunks * sizeof *d), *work = d + chunks;
  for (int c = 0; c < chunks; c++) {
    double t0 = now_s();
    for (int i = 0; i < periods; i++)
      if (aifsim_step(one, 1) != AIFSIM_OK)
        exit(1);
    double t1 = now_s();
    if (aifsim_step(bulk, (unsigned long)periods) != AIFSIM_OK)
      exit(1);
    double t2 = now_s();
    d[c] = ((t1 - t0) - (t2 - t1)) / periods;
    work[c] = (t2 - t1) / periods;
  }
  double w = median(work, (size_t)chunks), m = median(d, (size_t)chunks);
  /* d is sorted now: its ends are the spread. */
  printf("  paired: one by one %6.1f us a period more than one call of %d "
         "(median of %d chunks; spread %.1f to %.1f us)\n",
         1e6 * m, periods, chunks, 1e6 * d[0], 1e6 * d[chunks - 1]);
  printf("  simulation       %8.1f us a period (median)\n", 1e6 * w);
  free(d);
}

static void bench_variant(const char *path, const char *label,
                          const char *const *sets, size_t nsets, int chunks,
                          int periods) {
  aifsim *one = open_or_die(path, sets, nsets);
  aifsim *bulk = open_or_die(path, sets, nsets);
  /* Past the start-up: requests in flight, jobs running. */
  if (aifsim_run_to(one, 600) != AIFSIM_OK ||
      aifsim_run_to(bulk, 600) != AIFSIM_OK)
    exit(1);
  printf("%s, %s: %zu rack groups, %zu power groups, control period %g s, "
         "from t = 600 s; thread CPU time\n",
         path, label, aifsim_ngroups(one), aifsim_npower_groups(one),
         aifsim_period(one));
  bench_calls(one);
  double w[64];
  observe_act(bulk, w, aifsim_ngroups(bulk) < 64 ? aifsim_ngroups(bulk) : 64);
  bench_step(one, bulk, chunks, periods);
  aifsim_close(one);
  aifsim_close(bulk);
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : BENCH_STEP_SCENARIO;
  int chunks = argc > 2 ? atoi(argv[2]) : 60;
  int periods = argc > 3 ? atoi(argv[3]) : 10;
  if (chunks < 1 || periods < 1) {
    fprintf(stderr, "usage: bench_step [SCENARIO [CHUNKS [PERIODS]]]\n");
    return 2;
  }
  bench_variant(path, "as it is", as_is, 1, chunks, periods);
  bench_variant(path, "no requests", no_requests, 4, chunks, periods);
  return 0;
}
