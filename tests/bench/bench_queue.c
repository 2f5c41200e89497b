/* bench_queue.c - throughput of the pending-event set and the engine on
 * the classic hold model: N events pending, each pop followed by one push
 * at now + an exponential increment, so the size stays N.
 * A benchmark, not a test: it prints figures and asserts nothing on time.
 *
 * Usage: bench_queue [EVENTS_PER_RUN [PENDING...]] (default 5e6 events,
 * and 1e3, 1e4, 1e5 and 1e6 pending).
 *
 * Three figures per N, in millions of events run per second, best of REPS
 * runs, each timed after N warm-up events:
 *   evq     the queue alone: evq_pop + evq_push;
 *   engine  sim_engine_run with a handler that reschedules itself;
 *   cancel  as engine, and each event also moves a random other pending
 *           event (cancel + schedule), as dynamic power allocation does;
 *           so per event run: two pops (one of a tombstone), two pushes
 *           and a cancel.
 * Increments and random picks come from tables filled once with GSL taus2,
 * so the timed loops measure the queue rather than the generator. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "engine.h"
#include "queue.h"

enum { TABLE = 1 << 16, REPS = 3 };

/* Mean increment: 1 ms. Its value is irrelevant to a heap's speed. */
#define MEAN_NS 1e6

typedef struct tables {
  sim_time inc[TABLE];  /* exponential increments, >= 1 ns */
  uint32_t pick[TABLE]; /* uniform 32-bit draws */
} tables;

typedef struct hold {
  const tables *t;
  size_t k;      /* next table index */
  size_t n;      /* pending events */
  sim_handle *h; /* the handle of each pending event (cancel run) */
  uint64_t left; /* events still to run */
  uint32_t kind;
} hold;

/* The process's CPU time, not the wall clock: on a machine shared with
 * other jobs, the time the process waits for a core is not the queue's. */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *why) {
  fprintf(stderr, "bench_queue: %s\n", why);
  exit(1);
}

static void tables_fill(tables *t) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  if (r == NULL)
    die("out of memory");
  gsl_rng_set(r, 12345);
  for (size_t i = 0; i < TABLE; i++) {
    t->inc[i] = 1 + (sim_time)gsl_ran_exponential(r, MEAN_NS);
    t->pick[i] = (uint32_t)gsl_rng_get(r);
  }
  gsl_rng_free(r);
}

static inline sim_time next_inc(hold *h) {
  return h->t->inc[h->k++ & (TABLE - 1)];
}

/* ---- The queue alone ------------------------------------------------- */

/* ops hold steps: pop, then push at the popped time + an increment. */
static void hold_steps(evq *q, hold *h, uint64_t *seq, uint64_t ops) {
  evq_entry e;
  for (uint64_t i = 0; i < ops; i++) {
    evq_pop(q, &e);
    e.time += next_inc(h);
    e.seq = (*seq)++;
    if (evq_push(q, e) != SIM_OK)
      die("evq_push failed");
  }
}

static double run_evq(const tables *t, size_t n, uint64_t ops) {
  hold h = {.t = t};
  evq *q = evq_create(NULL);
  if (q == NULL)
    die("out of memory");
  uint64_t seq = 0;
  for (size_t i = 0; i < n; i++)
    if (evq_push(q, (evq_entry){next_inc(&h), seq++, (uint32_t)i}) != SIM_OK)
      die("evq_push failed");
  hold_steps(q, &h, &seq, n); /* warm-up: to the steady-state spread */
  double t0 = now_s();
  hold_steps(q, &h, &seq, ops);
  double dt = now_s() - t0;
  evq_destroy(q);
  return (double)ops / dt;
}

/* ---- The engine ------------------------------------------------------ */

static int on_hold(sim_engine *e, void *ctx, const sim_event *ev) {
  hold *h = ctx;
  if (--h->left == 0)
    sim_engine_stop(e);
  return sim_engine_schedule(e, ev->time + next_inc(h), h->kind, ev->a, 0,
                             NULL);
}

/* Reschedules itself and moves one other random pending event. */
static int on_cancel(sim_engine *e, void *ctx, const sim_event *ev) {
  hold *h = ctx;
  if (--h->left == 0)
    sim_engine_stop(e);
  uint64_t i = ev->a;
  int rc =
      sim_engine_schedule(e, ev->time + next_inc(h), h->kind, i, 0, &h->h[i]);
  uint32_t j = (uint32_t)(h->t->pick[h->k & (TABLE - 1)] % h->n);
  if (rc != SIM_OK || j == i)
    return rc;
  sim_engine_cancel(e, &h->h[j]);
  return sim_engine_schedule(e, ev->time + next_inc(h), h->kind, j, 0,
                             &h->h[j]);
}

/* Runs events until the handlers have counted h->left down to 0. */
static void run_events(sim_engine *e, hold *h, uint64_t events) {
  uint64_t before = sim_engine_events_run(e);
  h->left = events;
  int rc = sim_engine_run(e, SIM_TIME_MAX);
  if (rc != SIM_ECANCELED || sim_engine_events_run(e) - before != events)
    die(sim_engine_errmsg(e));
}

static double run_engine(const tables *t, size_t n, uint64_t ops, bool cancel) {
  hold h = {.t = t, .n = n};
  h.h = calloc(n, sizeof *h.h);
  sim_engine *e = sim_engine_create(NULL);
  if (h.h == NULL || e == NULL ||
      sim_engine_register(e, "hold", cancel ? on_cancel : on_hold, &h,
                          &h.kind) != SIM_OK)
    die("out of memory");
  for (size_t i = 0; i < n; i++)
    if (sim_engine_schedule(e, next_inc(&h), h.kind, i, 0, &h.h[i]) != SIM_OK)
      die(sim_engine_errmsg(e));
  run_events(e, &h, n); /* warm-up */
  double t0 = now_s();
  run_events(e, &h, ops);
  double dt = now_s() - t0;
  sim_engine_destroy(e);
  free(h.h);
  return (double)ops / dt;
}

/* ---- Main ------------------------------------------------------------ */

/* variant 0: evq, 1: engine, 2: engine with cancels. */
static double best_of(int variant, const tables *t, size_t n, uint64_t ops) {
  double best = 0;
  for (int r = 0; r < REPS; r++) {
    double x =
        variant == 0 ? run_evq(t, n, ops) : run_engine(t, n, ops, variant == 2);
    best = x > best ? x : best;
  }
  return best;
}

int main(int argc, char **argv) {
  uint64_t ops = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
  if (ops == 0)
    die("usage: bench_queue [EVENTS_PER_RUN [PENDING...]]");
  static tables t;
  tables_fill(&t);
  printf("bench_queue: hold model, %llu events per run after as many "
         "warm-up events as pending, best of %d, M events/s\n",
         (unsigned long long)ops, REPS);
  printf("%10s %10s %10s %10s\n", "pending", "evq", "engine", "cancel");
  static const size_t sizes[] = {1000, 10000, 100000, 1000000};
  size_t nsizes = argc > 2 ? (size_t)argc - 2 : sizeof sizes / sizeof sizes[0];
  for (size_t i = 0; i < nsizes; i++) {
    size_t n = argc > 2 ? strtoull(argv[i + 2], NULL, 10) : sizes[i];
    if (n == 0)
      die("PENDING must be a positive number");
    printf("%10zu", n);
    for (int v = 0; v < 3; v++) {
      printf(" %10.2f", best_of(v, &t, n, ops) / 1e6);
      fflush(stdout);
    }
    printf("\n");
  }
  return 0;
}
