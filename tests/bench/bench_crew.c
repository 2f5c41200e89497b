/* bench_crew.c - what a crew (sim/core/crew.h) costs and gains.
 * A benchmark, not a test: it prints figures and asserts nothing on time.
 *
 * Usage: bench_crew [PERIODS [EVENTS [WORK]]] (defaults 20000, 500, 300).
 *
 *   round trip  a leader of PERIODS ticks 1 us apart and two members with
 *               no events, alone and led by a crew of 1 and of 2 threads:
 *               the extra wall time a tick, the follow's bare cost;
 *   speedup     a tenth as many ticks, each member now with EVENTS events a
 *               period, each handler doing WORK ns of arithmetic (about:
 *               calibrated once): wall seconds on 1 and 2 threads and
 *               their ratio, and the share of the events the worker ran
 *               (the caller runs a late worker's share: crew.c).
 *               bench-10k's request-level peak is about 1,000 events of
 *               0.35 us a period over three services;
 *   handoff     one event a member a period, the caller's holding it
 *               20 us: from the end of the leader's tick to the start of
 *               the worker's event (its wake and claim), in the periods
 *               the worker ran.
 * Wall clock (the threads' work overlaps), best of REPS runs; on a
 * machine shared with other jobs read it against the load it prints. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "crew.h"
#include "engine.h"

enum { REPS = 3, NMEMBERS = 2 };

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The work of one member event: a dependent chain of iters steps. */
static volatile double sink;
static unsigned long iters = 100;

static double work(unsigned long n, double x) {
  for (unsigned long i = 0; i < n; i++)
    x = x * 0.999999 + 1e-7;
  return x;
}

typedef struct member {
  sim_engine *e;
  uint32_t kind;
  double x;
  sim_time gap; /* between two of its events */
  uint64_t n, away; /* events run, and of them off the main thread */
} member;

static pthread_t main_thread;
static member *handoff_members; /* the run's members, for the handoff */
static uint64_t events_away, events_all; /* the last run's */

/* Works, then schedules its next event (a chain, as a service's
 * arrivals). */
/* The handoff's mode: member 0 (the caller's) holds the caller for
 * HOLD_S a period, member 1 (the worker's) notes how long after the
 * leader's tick it began, when it ran on the worker. */
#define HOLD_S 20e-6
enum { LAT_MAX = 1 << 16 };
static bool handoff;
static double tick_end, lat[LAT_MAX];
static size_t nlat;

static int on_handoff(member *m, const sim_event *ev) {
  double now = wall_s();
  if (m == handoff_members) /* member 0: the caller's share */
    while (wall_s() - now < HOLD_S)
      ;
  else if (!pthread_equal(pthread_self(), main_thread) && nlat < LAT_MAX &&
           tick_end > 0)
    lat[nlat++] = now - tick_end;
  (void)ev;
  return SIM_OK;
}

static int on_member(sim_engine *e, void *ctx, const sim_event *ev) {
  member *m = ctx;
  if (handoff) {
    on_handoff(m, ev);
    return sim_engine_schedule(e, ev->time + SIM_US, m->kind, 0, 0, NULL);
  }
  m->x = work(iters, m->x);
  m->n++;
  m->away += !pthread_equal(pthread_self(), main_thread);
  return sim_engine_schedule(e, ev->time + m->gap, m->kind, 0, 0, NULL);
}

static int on_tick(sim_engine *e, void *ctx, const sim_event *ev) {
  (void)e, (void)ctx, (void)ev;
  if (handoff)
    tick_end = wall_s();
  return SIM_OK;
}

/* One run: a leader ticking every 1 us for periods ticks; threads 0: no
 * crew; events: each member's a period (0: none). Wall seconds. */
static double run_once(unsigned threads, long periods, long events) {
  sim_engine *lead = sim_engine_create(NULL);
  uint32_t tick;
  if (lead == NULL ||
      sim_engine_register(lead, "tick", on_tick, NULL, &tick) != SIM_OK ||
      sim_engine_every(lead, SIM_US, SIM_US, tick, 0, 0, NULL) != SIM_OK) {
    fprintf(stderr, "bench_crew: engine setup failed\n");
    exit(1);
  }
  member m[NMEMBERS];
  sim_crew *crew = threads > 0 ? sim_crew_create(NULL, threads) : NULL;
  for (int i = 0; i < NMEMBERS; i++) {
    m[i] = (member){.e = sim_engine_create(NULL), .x = 1.0 + i};
    m[i].gap = events > 0 ? SIM_US / events : SIM_US;
    handoff_members = m;
    if (m[i].e == NULL ||
        sim_engine_register(m[i].e, "work", on_member, &m[i], &m[i].kind) !=
            SIM_OK ||
        (events > 0 && sim_engine_schedule(m[i].e, handoff ? SIM_US / 2 : 0,
                                           m[i].kind, 0, 0, NULL) != SIM_OK) ||
        (crew != NULL &&
         sim_crew_add(crew, m[i].e, (double)(NMEMBERS - i)) != SIM_OK)) {
      fprintf(stderr, "bench_crew: member setup failed\n");
      exit(1);
    }
  }
  if (crew != NULL && sim_crew_lead(crew, lead) != SIM_OK) {
    fprintf(stderr, "bench_crew: lead failed\n");
    exit(1);
  }
  double t0 = wall_s();
  int rc = sim_engine_run(lead, (sim_time)periods * SIM_US);
  double dt = wall_s() - t0;
  if (rc != SIM_OK) {
    fprintf(stderr, "bench_crew: run failed: %s\n", sim_engine_errmsg(lead));
    exit(1);
  }
  sim_crew_destroy(crew);
  sim_engine_destroy(lead);
  events_away = events_all = 0;
  for (int i = 0; i < NMEMBERS; i++) {
    events_away += m[i].away;
    events_all += m[i].n;
    sink = m[i].x;
    sim_engine_destroy(m[i].e);
  }
  return dt;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double best_of(unsigned threads, long periods, long events) {
  double best = 1e300;
  for (int r = 0; r < REPS; r++) {
    double t = run_once(threads, periods, events);
    best = t < best ? t : best;
  }
  return best;
}

/* Sets iters so that work() takes about ns nanoseconds. */
static void calibrate(double ns) {
  unsigned long n = 1000000;
  double t0 = wall_s();
  sink = work(n, 1.0);
  double per = (wall_s() - t0) / (double)n * 1e9;
  iters = (unsigned long)(ns / per + 0.5);
  if (iters == 0)
    iters = 1;
}

int main(int argc, char **argv) {
  long periods = argc > 1 ? atol(argv[1]) : 20000;
  long events = argc > 2 ? atol(argv[2]) : 500;
  double work_ns = argc > 3 ? atof(argv[3]) : 300;
  if (periods <= 0 || events <= 0 || events > 1000 || work_ns <= 0) {
    fprintf(stderr, "usage: bench_crew [PERIODS [EVENTS<=1000 [WORK_NS]]]\n");
    return 2;
  }
  main_thread = pthread_self();
  double load[3] = {0};
  FILE *f = fopen("/proc/loadavg", "r");
  if (f != NULL) {
    if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
      load[0] = -1;
    fclose(f);
  }
  printf("bench_crew: %ld periods, 2 members, load %.2f\n", periods, load[0]);
  double alone = best_of(0, periods, 0);
  double one = best_of(1, periods, 0), two = best_of(2, periods, 0);
  printf("  round trip of an empty follow: 1 thread %.0f ns, 2 threads %.0f ns"
         " (a tick alone %.0f ns)\n",
         (one - alone) / (double)periods * 1e9,
         (two - alone) / (double)periods * 1e9,
         alone / (double)periods * 1e9);
  calibrate(work_ns);
  long per_period = events;
  long wperiods = periods / 10 > 0 ? periods / 10 : 1;
  one = best_of(1, wperiods, per_period);
  two = best_of(2, wperiods, per_period);
  double ev = (double)wperiods * (double)per_period * NMEMBERS;
  printf("  %ld events a member a period of ~%.0f ns work: 1 thread %.3f s "
         "(%.0f ns an event), 2 threads %.3f s: %.2fx; on the worker %.0f%% "
         "of the events (the last run; half when it is never late)\n",
         per_period, work_ns, one, one / ev * 1e9, two, one / two,
         100.0 * (double)events_away / (double)events_all);
  /* The handoff: how soon a waiting worker starts its share. */
  handoff = true;
  nlat = 0;
  tick_end = 0;
  run_once(2, periods < LAT_MAX ? periods : LAT_MAX, 1);
  qsort(lat, nlat, sizeof lat[0], by_value);
  if (nlat > 0)
    printf("  handoff, tick's end to the worker's first event: median %.0f "
           "ns, 90%% %.0f ns, 99%% %.0f ns (%zu of %ld periods on the "
           "worker)\n",
           lat[nlat / 2] * 1e9, lat[nlat * 9 / 10] * 1e9,
           lat[nlat * 99 / 100] * 1e9, nlat, periods);
  else
    printf("  handoff: the worker ran no period (late every time)\n");
  return 0;
}
