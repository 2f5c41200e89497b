/* test_control_each.c - the policy's split of each rack group run through
 * a caller's "for each" (control_set_each) that runs the groups on two
 * pthreads at once: over periods of drifting loads and worth, the caps on
 * every GPU, each group's level (the memo's) and the policy's test counts
 * are those of the plain loop, bit for bit, for every policy and 2 to 4
 * groups. Two groups' splits that shared a count or a scratch array would
 * race (TSan reports it: the test is built once with -fsanitize=thread)
 * or give other caps. (What the splits gain on two threads:
 * tests/bench/bench_control_each.c.) */
#include "test_util.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "control.h"
#include "control_nop.h"
#include "test_catalogs.h"

/* ------------------------------------------------------------------ */
/* Two threads: the caller and one worker, i on thread i % 2           */
/* ------------------------------------------------------------------ */

#define PAIR_MAX 64 /* indices a call at most */

/* A worker that runs the odd indices of each call while the caller runs
 * the even ones: both at once, each index always on the same thread. It
 * waits spinning (yielding) on a generation count, so a call's start
 * costs no wake-up. */
typedef struct pair {
  pthread_t thread;
  atomic_uint gen, done; /* calls posted and finished by the worker */
  atomic_bool quit;
  size_t n;
  int (*fn)(void *, size_t);
  void *fctx;
  int rc[PAIR_MAX];
} pair;

static void pair_run(pair *p, size_t from) {
  for (size_t i = from; i < p->n; i += 2)
    p->rc[i] = p->fn(p->fctx, i);
}

static void *pair_worker(void *arg) {
  pair *p = arg;
  unsigned seen = 0;
  for (;;) {
    unsigned g;
    while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen) {
      if (atomic_load_explicit(&p->quit, memory_order_acquire))
        return NULL;
      sched_yield();
    }
    seen = g;
    pair_run(p, 1);
    atomic_store_explicit(&p->done, g, memory_order_release);
  }
}

static void pair_start(pair *p) {
  memset(p, 0, sizeof *p);
  assert_int_equal(pthread_create(&p->thread, NULL, pair_worker, p), 0);
}

static void pair_stop(pair *p) {
  atomic_store_explicit(&p->quit, true, memory_order_release);
  pthread_join(p->thread, NULL);
}

/* control_each_fn on two threads: the first failing index's code. */
static int pair_each(void *ctx, size_t n, int (*fn)(void *, size_t),
                     void *fctx) {
  pair *p = ctx;
  assert_true(n <= PAIR_MAX);
  p->n = n, p->fn = fn, p->fctx = fctx;
  unsigned g = atomic_load_explicit(&p->gen, memory_order_relaxed) + 1;
  atomic_store_explicit(&p->gen, g, memory_order_release);
  pair_run(p, 0);
  while (atomic_load_explicit(&p->done, memory_order_acquire) != g)
    sched_yield(); /* the worker's half: as long as the caller's */
  for (size_t i = 0; i < n; i++)
    if (p->rc[i] != SIM_OK)
      return p->rc[i];
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* A factory around one control                                        */
/* ------------------------------------------------------------------ */

#define MAX_GROUPS 4
#define MAX_GPUS (2 * 71 * 72)

/* A scenario: its groups (racks of 72 GPUs each), slots of a few GPUs,
 * the policy, the fleet's runs kept or not (the caps written straight
 * to the runs' own, control__units_caps_to), periods of drift. */
typedef struct scenario {
  const char *name;
  int policy;
  size_t ngroups;
  uint32_t racks[MAX_GROUPS];
  uint32_t slot_gpus; /* GPUs a slot, about (4: 4 and 5 alternating) */
  bool runs, predict;
  int periods;
  double classes; /* distinct activities a period (their steps) */
} scenario;

typedef struct world {
  const scenario *s;
  sim_engine *e;
  rack_fleet *fl;
  control *c;
  uint32_t ngpus, nslots;
  uint32_t *slot;
  double *worth;
  double fit_w[MAX_GROUPS];
  power_config cfg;
} world;

static bool fits(void *ctx, const rack_fleet *f, const double *caps) {
  const world *w = ctx;
  for (size_t g = 0; g < f->ngroups; g++)
    if (caps[g] > w->fit_w[g])
      return false;
  return true;
}
static const uint32_t *gpu_slots(void *ctx) { return ((world *)ctx)->slot; }
static void slot_units(void *ctx, const uint32_t *key, size_t n,
                       power_unit *u) {
  const world *w = ctx;
  for (size_t j = 0; j < n; j++) {
    if (key[j] == CONTROL_NO_SLOT)
      continue;
    u[j].cls = key[j] % 7 == 0 ? POWER_TRAINING : POWER_INFERENCE;
    u[j].weight = 1 + key[j] % 3;
    u[j].priority = key[j] % 2;
    u[j].c = w->worth[key[j]];
  }
}

static world *world_make(const scenario *s) {
  const gpu_spec *gb = gpu_catalog_find(&cats.gpu, "GB200");
  const gpu_spec *h = gpu_catalog_find(&cats.gpu, "H100-SXM");
  assert_non_null(gb);
  assert_non_null(h);
  rack_group_spec g[MAX_GROUPS];
  world *w = calloc(1, sizeof *w);
  assert_non_null(w);
  w->s = s;
  for (size_t k = 0; k < s->ngroups; k++) {
    g[k] = (rack_group_spec){.name = "nvl",
                             .gpu = k == 2 ? h : gb,
                             .count = s->racks[k],
                             .gpus_per_rack = 72,
                             .limit_w = 132000,
                             .other_idle_w = 16800,
                             .other_max_w = 33600,
                             .r_th = NAN,
                             .gpu_limit_w = k == 3 ? 650 : 0};
    w->ngpus += s->racks[k] * 72;
  }
  assert_true(w->ngpus <= MAX_GPUS);
  w->slot = calloc(w->ngpus, sizeof *w->slot);
  w->worth = calloc(w->ngpus, sizeof *w->worth);
  assert_true(w->slot != NULL && w->worth != NULL);
  sim_error err = {0};
  w->e = sim_engine_create(NULL);
  assert_non_null(w->e);
  w->fl = rack_fleet_create(g, s->ngroups, NULL, &err);
  assert_non_null(w->fl);
  if (s->runs)
    assert_int_equal(rack_fleet_keep_units(w->fl), SIM_OK);
  w->cfg = (power_config){.cap_w = 1e7,
                          .policy = s->policy,
                          .allocation_period_s = 0,
                          .budget = s->predict ? BUDGET_PREDICT
                                               : BUDGET_RESERVE,
                          .budget_margin = 0.05,
                          .activity_smoothing_s = NAN};
  control_hooks hk = {w,
                      fits,
                      control_nop_drive,
                      control_nop_power,
                      gpu_slots,
                      slot_units,
                      control_nop_request_counts,
                      NULL};
  w->c = control_create(&w->cfg, w->fl, w->e, &hk, &err);
  assert_non_null(w->c);
  return w;
}

static void world_drop(world *w) {
  control_destroy(w->c);
  rack_fleet_destroy(w->fl);
  sim_engine_destroy(w->e);
  free(w->slot);
  free(w->worth);
  free(w);
}

/* A number in [0, 1) from k and p, the same on every machine. */
static double mix(uint32_t k, uint32_t p) {
  uint32_t x = k * 2654435761u ^ (p + 1) * 40503u;
  x ^= x >> 15, x *= 2246822519u, x ^= x >> 13;
  return (double)(x % 1000003u) / 1000003.0;
}

/* The state in period p: slots of slot_gpus GPUs (4 and 5 in turn for
 * 4), the last few GPUs of each rack free; a slot's worth and load drift
 * period to period (a few slots a period), quantized to s->classes
 * steps so that many slots share a class; each group's fit its own. */
static void world_state(world *w, int p) {
  const scenario *s = w->s;
  uint32_t k = 0, left = 0;
  for (uint32_t i = 0; i < w->ngpus; i++) {
    if (i % 72 >= 70) {
      w->slot[i] = CONTROL_NO_SLOT;
      continue;
    }
    if (left == 0)
      k++, left = s->slot_gpus + (s->slot_gpus == 4 && k % 2);
    left--;
    w->slot[i] = k - 1;
  }
  w->nslots = k;
  for (uint32_t j = 0; j < k; j++) /* some without measured work */
    w->worth[j] = j % 11 == 0 ? 0 : 0.1 + 0.8 * floor(mix(j, p / 5) * 5) / 5;
  for (uint32_t i = 0; i < w->ngpus; i++) {
    uint32_t j = w->slot[i];
    double a = 0.1;
    if (j != CONTROL_NO_SLOT) {
      uint32_t age = (uint32_t)p / 3 + (j % 3 == (uint32_t)p % 3); /* drift */
      a = j % 13 == 0 ? 0 : 0.05 + 0.9 * floor(mix(j, age) * s->classes) /
                                     s->classes;
    }
    if (s->runs)
      rack_set_unit_key(w->fl, i, j == CONTROL_NO_SLOT ? 0 : j + 1);
    rack_set_load(w->fl, i, (gpu_load){a, a / 2, fmin(1, a + 0.1)});
  }
  for (size_t g = 0; g < s->ngroups; g++) /* some periods near the floor */
    w->fit_w[g] = 420 + 90 * mix((uint32_t)g, (uint32_t)p / 4) +
                  (g == 1 && p % 5 == 4 ? -200 : 0);
  if (s->runs)
    rack_fleet_update(w->fl, NULL);
}

/* One period: the split again (the fit may have moved), the policy. */
static void world_period(world *w, int p) {
  world_state(w, p);
  sim_error err = {0};
  if (control_split(w->c, &err) != SIM_OK)
    fail_msg("period %d: %s", p, err.msg);
  const control_view v = {.cap_w = w->cfg.cap_w, .limit_w = w->cfg.cap_w,
                          .recap = true, .dr_window_s = NAN,
                          .facility_w = 0.8 * w->cfg.cap_w};
  int rc = control_period(w->c, &v, 60 * SIM_SEC * p);
  if (rc != SIM_OK)
    fail_msg("period %d: %s", p, sim_engine_errmsg(w->e));
}

/* The policy's test counts (power.h). */
typedef struct counts {
  unsigned long level, clock, put_back, finishes;
} counts;

static counts counts_now(void) {
  return (counts){power__level_evals(), power__clock_evals(),
                  power__caps_put_back(), power__fill_finishes()};
}

static counts counts_since(counts a) {
  counts b = counts_now();
  return (counts){b.level - a.level, b.clock - a.clock,
                  b.put_back - a.put_back, b.finishes - a.finishes};
}

static void assert_same(world *a, world *b, counts ka, counts kb,
                        const char *what, int p) {
  rack_fleet_gpu_caps(a->fl);
  rack_fleet_gpu_caps(b->fl);
  for (uint32_t i = 0; i < a->ngpus; i++)
    if (!sim_same_bits(a->fl->cap_w[i], b->fl->cap_w[i]))
      fail_msg("%s, period %d: GPU %u's cap %.17g W plain, %.17g W on two "
               "threads",
               what, p, i, a->fl->cap_w[i], b->fl->cap_w[i]);
  for (size_t g = 0; g < a->fl->ngroups; g++)
    if (!sim_same_bits(control__group_level(a->c, g),
                       control__group_level(b->c, g)))
      fail_msg("%s, period %d: group %zu's level %.17g plain, %.17g on two "
               "threads",
               what, p, g, control__group_level(a->c, g),
               control__group_level(b->c, g));
  if (memcmp(&ka, &kb, sizeof ka) != 0)
    fail_msg("%s, period %d: counts (level %lu, clock %lu, put back %lu, "
             "finishes %lu) plain, (%lu, %lu, %lu, %lu) on two threads",
             what, p, ka.level, ka.clock, ka.put_back, ka.finishes, kb.level,
             kb.clock, kb.put_back, kb.finishes);
}

static const scenario scenarios[] = {
    {"efficiency, 2 groups", POWER_EFFICIENCY, 2, {4, 4}, 4, false, false,
     12, 40},
    {"efficiency, 2 groups, runs", POWER_EFFICIENCY, 2, {5, 3}, 4, true,
     false, 12, 200},
    {"efficiency, 3 groups of few classes", POWER_EFFICIENCY, 3, {3, 2, 2},
     8, true, false, 10, 4},
    {"efficiency, 4 groups, predicted", POWER_EFFICIENCY, 4, {3, 2, 2, 2}, 4,
     true, true, 10, 100},
    {"efficiency, 2 large groups", POWER_EFFICIENCY, 2, {20, 20}, 4, true,
     false, 8, 500},
    {"proportional, 3 groups", POWER_PROPORTIONAL, 3, {2, 3, 2}, 4, false,
     false, 6, 50},
    {"priority, 4 groups", POWER_PRIORITY, 4, {2, 2, 1, 1}, 4, true, false,
     6, 50},
    {"uniform floor, 2 groups", POWER_UNIFORM_FLOOR, 2, {2, 3}, 8, false,
     false, 6, 50},
    {"static, predicted, 3 groups", POWER_STATIC, 3, {2, 2, 2}, 4, false,
     true, 6, 50},
};

/* A scenario's periods, plain and on two threads, side by side. */
static void groups_on_two_threads(void **state) {
  const scenario *s = *state;
  pair p;
  pair_start(&p);
  world *plain = world_make(s), *two = world_make(s);
  control_set_each(two->c, pair_each, &p);
  for (int q = 0; q < s->periods; q++) {
    counts k0 = counts_now();
    world_period(plain, q);
    counts ka = counts_since(k0);
    k0 = counts_now();
    world_period(two, q);
    counts kb = counts_since(k0);
    assert_same(plain, two, ka, kb, s->name, q);
  }
  world_drop(plain);
  world_drop(two);
  pair_stop(&p);
}

/* A failing index's code is the each's; the first in index order. */
static int fail_odd(void *ctx, size_t i) {
  (void)ctx;
  return i % 2 == 1 ? (int)(SIM_ERANGE + i) : SIM_OK;
}

static void pair_returns_first_failure(void **state) {
  (void)state;
  pair p;
  pair_start(&p);
  assert_int_equal(pair_each(&p, 4, fail_odd, NULL), SIM_ERANGE + 1);
  assert_int_equal(pair_each(&p, 1, fail_odd, NULL), SIM_OK);
  pair_stop(&p);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ADD(tests, n, pair_returns_first_failure);
  TEST_ROWS(tests, n, groups_on_two_threads, scenarios);
  return _cmocka_run_group_tests("control_each", tests, n,
                                 test_catalogs_load_gpu, test_catalogs_release);
}
