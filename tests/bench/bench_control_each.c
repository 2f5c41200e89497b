/* bench_control_each.c - what the power policy's splits gain on two
 * threads. A benchmark, not a test: it prints figures and asserts nothing
 * on time (tests/control/test_control_each.c checks the bits).
 *
 * Usage: bench_control_each [PERIODS [pin]] (default 60 periods a round).
 *
 * A control over two rack groups like bench-10k's at the request level's
 * peak (71 racks of GB200 NVL72 each, slots of 4 and 5 GPUs: some 1,100
 * units a group, hundreds of classes, the efficiency policy), its units'
 * worth and load drifting period to period. Each period runs twice: once
 * with a "for each" (control_set_each) that runs the calls one after
 * another on this thread, once with one that runs index i on thread
 * i % 2 (this one and a worker, both spinning between calls so a call
 * costs no wake-up). Three rounds of PERIODS periods; each prints the
 * wall time inside the each calls a period, serial and on two threads,
 * their ratio, and the longer of the two threads' halves (what the calls
 * would take if neither thread ever waited for a core). The two runs'
 * caps must be the same bits: a difference exits 1. With "pin" the
 * caller runs on CPU 0 and the worker on CPU 1 (a loaded machine's
 * scheduler put both on one core, the halves then one after the other).
 * Wall clock: on a shared machine read it against the load it prints.
 * The world and the two threads are the test's (tests/control/
 * each_world.h, each_pair.h), one copy. */
#define _GNU_SOURCE /* pthread_setaffinity_np */

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control.h"
#include "each_pair.h"
#include "each_world.h"

enum { ROUNDS = 3, GROUPS = 2, RACKS = 71, CLASSES = 500 };

static double wall_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what, const char *why) {
  fprintf(stderr, "bench_control_each: %s%s%s\n", what, why ? ": " : "",
          why ? why : "");
  exit(1);
}

/* ---- The two threads' each ------------------------------------------- */

/* A for each's wall time: the pair (each_pair.h, unused by serial_each)
 * and the time inside the calls; on two threads also the sum of each
 * call's longer half. */
typedef struct timing {
  each_pair pair;
  double split_s, halves_s;
} timing;

/* control_each_fn on two threads (each_pair_each), timed. */
static int pair_each(void *ctx, size_t n, int (*fn)(void *, size_t),
                     void *fctx) {
  timing *t = ctx;
  if (n > EACH_PAIR_MAX)
    die("an each call of more indices than EACH_PAIR_MAX", NULL);
  double t0 = wall_s();
  int rc = each_pair_each(&t->pair, n, fn, fctx);
  t->split_s += wall_s() - t0;
  t->halves_s += fmax(t->pair.half_s[0], t->pair.half_s[1]);
  return rc;
}

/* The same calls one after another on this thread, timed in split_s. */
static int serial_each(void *ctx, size_t n, int (*fn)(void *, size_t),
                       void *fctx) {
  timing *t = ctx;
  double t0 = wall_s();
  int rc = SIM_OK;
  for (size_t i = 0; i < n; i++) {
    int r = fn(fctx, i);
    rc = rc == SIM_OK ? r : rc;
  }
  t->split_s += wall_s() - t0;
  return rc;
}

/* Pins this thread to CPU 0 and the worker to CPU 1. */
static void pair_pin(each_pair *p) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(1, &one);
  if (pthread_setaffinity_np(p->thread, sizeof one, &one) != 0)
    die("pinning the worker to CPU 1", NULL);
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0)
    die("pinning this thread to CPU 0", NULL);
}

/* ---- A factory around one control ------------------------------------ */

/* Two groups like bench-10k's (each_world.h): slots of 4 and 5 GPUs, the
 * fleet's runs kept, the efficiency policy, CLASSES activities. */
static const each_world_spec bench_world = {
    POWER_EFFICIENCY, GROUPS, {RACKS, RACKS}, 4, true, false, CLASSES};

static each_world *world_make(const gpu_catalog *cat) {
  sim_error err = {0};
  each_world *w = each_world_make(&bench_world, cat, &err);
  if (w == NULL)
    die("the world", err.msg);
  return w;
}

static void world_period(each_world *w, int p) {
  const char *why = each_world_period(w, p);
  if (why != NULL)
    die(why, NULL);
}

/* ---- The rounds ------------------------------------------------------ */

static void same_caps(each_world *a, each_world *b) {
  rack_fleet_gpu_caps(a->fl);
  rack_fleet_gpu_caps(b->fl);
  if (memcmp(a->fl->cap_w, b->fl->cap_w, a->ngpus * sizeof *a->fl->cap_w) != 0)
    die("the caps on two threads are not the serial ones", NULL);
}

static void rounds(each_world *serial, each_world *two, timing *timed,
                   timing *p, int periods) {
  for (int round = 0; round < ROUNDS; round++) {
    timed->split_s = p->split_s = p->halves_s = 0;
    for (int q = round * periods; q < (round + 1) * periods; q++) {
      world_period(serial, q);
      world_period(two, q);
    }
    same_caps(serial, two);
    printf("  round %d: the splits %.1f us a period serial, %.1f us on two "
           "threads (%.2fx; the longer half %.1f us, %.2fx)\n",
           round, 1e6 * timed->split_s / periods, 1e6 * p->split_s / periods,
           timed->split_s / p->split_s, 1e6 * p->halves_s / periods,
           timed->split_s / p->halves_s);
  }
}

static double load_now(void) {
  double load = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f != NULL) {
    if (fscanf(f, "%lf", &load) != 1)
      load = -1;
    fclose(f);
  }
  return load;
}

int main(int argc, char **argv) {
  int periods = argc > 1 ? atoi(argv[1]) : 60;
  bool pin = argc > 2 && strcmp(argv[2], "pin") == 0;
  if (periods <= 0 || (argc > 2 && !pin) || argc > 3) {
    fprintf(stderr, "usage: bench_control_each [PERIODS [pin]]\n");
    return 2;
  }
  gpu_catalog cat;
  sim_error err = {0};
  if (gpu_catalog_load_builtin(&cat, &err) != SIM_OK)
    die("the GPU catalog", err.msg);
  static timing p, timed;
  if (each_pair_start(&p.pair, wall_s) != SIM_OK)
    die("starting the worker", NULL);
  if (pin)
    pair_pin(&p.pair);
  printf("bench_control_each: %d groups of %d racks, %d periods a round, "
         "%s, load %.2f\n",
         GROUPS, RACKS, periods, pin ? "pinned to CPUs 0 and 1" : "not pinned",
         load_now());
  each_world *serial = world_make(&cat), *two = world_make(&cat);
  control_set_each(serial->c, serial_each, &timed);
  control_set_each(two->c, pair_each, &p);
  rounds(serial, two, &timed, &p, periods);
  each_world_drop(serial);
  each_world_drop(two);
  each_pair_stop(&p.pair);
  gpu_catalog_fini(&cat);
  return 0;
}
