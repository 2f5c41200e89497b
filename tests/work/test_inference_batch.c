/* test_inference_batch.c - the batch calls (inf_set_clocks,
 * inf_take_loads, inf_compute_shares, issue 24) answer bit for bit what
 * the per-replica calls answer, in the fluid mode (its own batch ops, a
 * group's load read once for a stretch of its members) and at request
 * level (its own batch ops: a clock already set costs a comparison, the
 * loads are taken at one now). Two services of one mode get the
 * same periods: one is driven replica by replica, the other by the batch
 * calls over a table of ranges (the whole service, two parts, a range
 * running past the last replica, none, ranges with gaps taken at one
 * instant), with clocks in few and many states, a bad clock, a replica
 * down, takes skipped, asked twice or not at all; the fluid mode's takes
 * every other time as stretches (inf_fluid_take_stretches).
 * Every return code, load, compute share (batch and single), sample row
 * and total must be the same bytes. */
#include "test_inference_rig.h"

#include "inference_fluid.h"
#include "inference_internal.h"
#include "inference_request_price.h"
#include "lanes.h"

/* Enough replicas for the batch calls' blocks (four and sixteen a loop)
 * and their tails, at every offset. */
#define NREP 41

#define BATCH_YAML                                                             \
  "name: a\nmodel: Llama-3.1-8B\ntp: 1\nreplicas: 41\nmax_batch: 64\n"         \
  "max_queue: 300\ntimeout: 30 s\n"                                            \
  "arrivals: {rate: 890, prompt: {mean: 1155, sigma: 0.99}, output: {mean: "   \
  "211, sigma: 0.86}}\n"

/* Few arrivals: most replicas rest at each take (idle, nothing to catch
 * up on), which the request level's batch takes in line. */
#define QUIET_YAML                                                             \
  "name: a\nmodel: Llama-3.1-8B\ntp: 1\nreplicas: 41\nmax_batch: 64\n"         \
  "max_queue: 300\ntimeout: 30 s\n"                                            \
  "arrivals: {rate: 6, prompt: {mean: 1155, sigma: 0.99}, output: {mean: "     \
  "211, sigma: 0.86}}\n"

/* A range of replicas the batch calls take at once. */
typedef struct range {
  uint32_t first, n;
} range;

typedef struct bperiod {
  int clocks;  /* 0: one clock, 1: pairs, 2: many, 3: one bad clock, 4:
                  one past the ends of (0, 1], the rest at them, 5: one
                  clock but replica at's, 6: one bad clock, at's */
  double dt;   /* s */
  int down;    /* replica down this period, -1: none */
  range r[3];  /* the ranges, in order; n 0 ends them */
  int takes;   /* times the loads are taken (0: the shares read after a
                  new span, none taken in it) */
  uint32_t at; /* the replica unlike the rest (5, 6) */
} bperiod;

static const bperiod bplan[] = {
    /* while the replicas are one group (they part for good after the
     * clocks differ): one goes down where all were taken, and the next
     * span must not count it in its neighbours' group */
    {0, 1, -1, {{0, NREP}}, 1, 0},
    {0, 1, 5, {{0, NREP}}, 1, 0},
    {0, 1, -1, {{0, NREP}}, 1, 0},
    {1, 1, -1, {{0, 5}, {5, NREP - 5}}, 1, 0},
    {1, 0.5, -1, {{0, NREP}}, 2, 0},
    {2, 1, 3, {{0, 7}, {7, NREP - 7}}, 1, 0},
    {3, 1, -1, {{0, NREP}}, 1, 0},
    {0, 2, 3, {{4, NREP}}, 1, 0}, /* replicas 0 .. 3 untouched, past end */
    {1, 1, -1, {{0, 1}, {1, 2}, {3, NREP - 3}}, 2, 0},
    {2, 0.25, -1, {{NREP, 2}}, 1, 0}, /* none in range */
    {3, 1, 0, {{2, NREP - 2}}, 1, 0},
    {4, 1, -1, {{0, NREP}}, 1, 0},
    {4, 1, -1, {{0, NREP}}, 1, 0},
    {4, 1, -1, {{0, NREP}}, 1, 0},
    {4, 1, -1, {{0, 3}, {3, NREP - 3}}, 1, 0},
    {4, 1, -1, {{0, NREP}}, 1, 0},
    {4, 1, -1, {{0, NREP}}, 1, 0},
    {0, 1, -1, {{0, NREP}}, 1, 0},
    /* ranges at one instant with a gap, up and down the replicas: the
     * first range's takes must hold when the next is not its neighbour */
    {0, 1, -1, {{0, 3}, {5, NREP - 5}}, 1, 0},
    {1, 1, -1, {{6, NREP - 6}, {0, 2}, {3, 2}}, 2, 0},
    {1, 1, 2, {{0, 2}, {4, 3}, {2, 1}}, 1, 0},
    {0, 1, -1, {{0, NREP}}, 1, 0},
    {0, 1, -1, {{0, NREP}}, 0, 0},
    {1, 1, -1, {{0, 4}, {4, NREP - 4}}, 0, 0},
};

static double bclock(const bperiod *p, uint32_t k, int i) {
  switch (p->clocks) {
  case 0:
    return i % 2 ? 1 : 0.7;
  case 1:
    return (k + (uint32_t)i) % 2 ? 0.45 : 0.9;
  case 2:
    return 0.3 + 0.05 * ((k * 7 + (uint32_t)i) % NREP);
  case 3:
    return k == 5 ? 0 : 0.8; /* 0: refused */
  case 5:
    return k == p->at ? 0.6 : 0.8;
  case 6:
    return k == p->at ? NAN : 0.8;
  default: {
    /* Replica 4 refused (each period another of the ends of (0, 1] and
     * past them), after replicas taken at the others, so the batch
     * call's quick loop meets it. */
    static const double bad[] = {-0.0, NAN,      0x1.0000000000001p0,
                                 -0.5, INFINITY, 0};
    static const double good[] = {1, 0x1p-1074, 0x1.fffffffffffffp-1};
    return k == 4 ? bad[i % 6] : good[(k + (uint32_t)i) % 3];
  }
  }
}

static void same_bytes(const void *a, const void *b, size_t n) {
  assert_memory_equal(a, b, n);
}

/* inf_take_loads of a fluid service through inf_fluid_take_stretches:
 * the stretches in order, each not empty, the last ending at n, each
 * replica its stretch's load. */
static void take_by_stretches(inf_service *s, uint32_t first, uint32_t n,
                              gpu_load *out) {
  uint32_t end[NREP + 4];
  gpu_load l[NREP + 4];
  uint32_t m = inf_fluid_take_stretches(s, first, n, end, l);
  assert_true(m <= n && (m > 0) == (n > 0));
  for (uint32_t t = 0, from = 0; t < m; from = end[t++]) {
    assert_true(end[t] > from && end[t] <= n);
    for (uint32_t k = from; k < end[t]; k++)
      out[k] = l[t];
  }
  assert_true(m == 0 || end[m - 1] == n);
}

/* Range r's clocks and loads: replica by replica into g[0], by the batch
 * calls into g[1]. */
static void drive_range(rig *g[2], const bperiod *p, int i, range r, int pass) {
  double phi[NREP + 4];
  gpu_load a[NREP + 4], b[NREP + 4];
  for (uint32_t j = 0; j < r.n; j++)
    phi[j] = bclock(p, r.first + j, i);
  if (pass == 0) {
    int rc = SIM_OK;
    for (uint32_t j = 0; j < r.n; j++) {
      int x = inf_set_clock(g[0]->s, r.first + j, phi[j]);
      rc = rc != SIM_OK ? rc : x;
    }
    assert_int_equal(inf_set_clocks(g[1]->s, r.first, r.n, phi), rc);
    return;
  }
  for (uint32_t j = 0; j < r.n; j++)
    a[j] = inf_take_load(g[0]->s, r.first + j);
  if (inf_is_fluid(g[1]->s) && (i + pass) % 2 == 0) /* as stretches */
    take_by_stretches(g[1]->s, r.first, r.n, b);
  else
    inf_take_loads(g[1]->s, r.first, r.n, b);
  same_bytes(a, b, r.n * sizeof *a);
}

static void drive(rig *g[2], const bperiod *p, int i, double t) {
  for (int j = 0; j < 2; j++) {
    run_to(g[j], t);
    for (uint32_t k = 0; k < NREP; k++)
      assert_int_equal(inf_set_down(g[j]->s, k, (int)k == p->down), SIM_OK);
  }
  for (int pass = 0; pass <= p->takes; pass++)
    for (int q = 0; q < 3 && p->r[q].n > 0; q++)
      drive_range(g, p, i, p->r[q], pass > 0);
  for (int q = 0; q < 4; q++) { /* the ranges, then all: taken or not */
    range r = q < 3 ? p->r[q] : (range){0, NREP};
    double ca[NREP + 4], cb[NREP + 4];
    for (uint32_t j = 0; j < r.n; j++)
      ca[j] = inf_compute_share(g[0]->s, r.first + j);
    inf_compute_shares(g[1]->s, r.first, r.n, cb);
    same_bytes(ca, cb, r.n * sizeof *ca);
  }
  for (uint32_t k = 0; k < NREP; k++) {
    double ca = inf_compute_share(g[0]->s, k),
           cb = inf_compute_share(g[1]->s, k);
    same_bytes(&ca, &cb, sizeof ca);
  }
}

static void batch_equals_one_by_one(bool fluid, const bperiod *plan, size_t n,
                                    int rounds, const char *yaml) {
  rig one, batch;
  rig *g[2] = {&one, &batch};
  for (int j = 0; j < 2; j++) {
    if (fluid)
      rig_open_fluid(g[j], yaml);
    else
      rig_open(g[j], H100, yaml, 1, 3600);
  }
  double t = 0, ra[INF_NCOLS], rb[INF_NCOLS];
  for (int round = 0; round < rounds; round++)
    for (size_t i = 0; i < n; i++) {
      t += plan[i].dt;
      drive(g, &plan[i], (int)i, t);
      if (i % 4 == 3) {
        sample(g[0], ra);
        sample(g[1], rb);
        same_bytes(ra, rb, sizeof ra);
      }
    }
  inf_totals ta = inf_totals_of(one.s), tb = inf_totals_of(batch.s);
  same_bytes(&ta, &tb, sizeof ta);
  assert_true(ta.completed > 0);
  rig_close(&one);
  rig_close(&batch);
}

static void fluid_batch(void **state) {
  (void)state;
  batch_equals_one_by_one(true, bplan, sizeof bplan / sizeof *bplan, 3,
                          BATCH_YAML);
}

static void request_batch(void **state) {
  (void)state;
  batch_equals_one_by_one(false, bplan, sizeof bplan / sizeof *bplan, 3,
                          BATCH_YAML);
}

/* Mostly resting replicas, taken in line by the batch call: the same
 * loads, shares, samples and totals as taken one by one. */
static void request_batch_resting(void **state) {
  (void)state;
  batch_equals_one_by_one(false, bplan, sizeof bplan / sizeof *bplan, 8,
                          QUIET_YAML);
}

/* Replicas that parted stay apart, so the batch calls' blocks over a
 * long run of one group (the clocks' check and copy, the loads' and
 * shares' fills, the regroup's compare and its groups' fill) are met
 * while the service is fresh: one clock unlike the rest, or one bad
 * clock, at each offset of a block of four and of sixteen, and the ends,
 * each in a service of its own; through the widest blocks (AVX-512) where
 * the CPU has them, the AVX2 ones (sim_lanes_no512) and the two-lane ones
 * (sim_lanes_narrow). */
static void fluid_batch_blocks(void **state) {
  (void)state;
  static const uint32_t at[] = {0,  1,  2,  3,  4,  5,  6,  7,  13, 14,
                                15, 16, 17, 18, 19, 31, 36, 39, 40};
  enum { NAT = sizeof at / sizeof *at };
  for (size_t k = 0; k < 3 * NAT; k++) {
    sim_lanes_no512 = k >= NAT && k < 2 * NAT;
    sim_lanes_narrow = k >= 2 * NAT;
    const bperiod plan[] = {
        {0, 1, -1, {{0, NREP}}, 1, 0},
        {6, 1, -1, {{0, NREP}}, 1, at[k % NAT]},
        {5, 1, -1, {{0, NREP}}, 1, at[k % NAT]},
        {0, 1, -1, {{0, NREP}}, 1, 0},
        {6, 1, -1, {{0, 21}, {21, NREP - 21}}, 2, (at[k % NAT] + 9) % NREP},
        {5, 1, -1, {{0, NREP}}, 1, (at[k % NAT] + 9) % NREP},
        {0, 1, -1, {{0, NREP}}, 1, 0},
    };
    batch_equals_one_by_one(true, plan, sizeof plan / sizeof *plan, 1,
                            BATCH_YAML);
  }
  sim_lanes_no512 = false;
  sim_lanes_narrow = false;
}

/* A request-level replica's handle names its pending event exactly when
 * it has one (reschedule reads the handle, not the engine): cleared when
 * the event runs and when it is cancelled. Checked after every event
 * with the clocks moved, replicas taken down and up and loads taken
 * between events, as a factory would. */
typedef struct handle_case {
  const char *name;
  const char *yaml;
  int every;   /* events between interventions */
  bool clocks; /* set a replica's clock */
  bool downs;  /* take a replica down or up */
} handle_case;

static const handle_case handle_cases[] = {
    {"events alone", BATCH_YAML, 0, false, false},
    {"clocks moved", BATCH_YAML, 7, true, false},
    {"replicas down and up", BATCH_YAML, 13, false, true},
    {"both, few arrivals", QUIET_YAML, 3, true, true},
};

/* Each replica's handle as above; and a decoding replica's top (the
 * request its event finishes, whose line on_replica asks for) is its
 * heap's. */
static void check_handles(const rig *g) {
  for (uint32_t k = 0; k < g->s->nrep; k++) {
    const replica *r = &g->s->rep[k];
    if ((r->ev.slot != 0) != sim_engine_pending(g->e, r->ev))
      fail_msg("replica %u: handle slot %u, pending %d", k, r->ev.slot,
               sim_engine_pending(g->e, r->ev));
    if (r->nheap > 0 && r->top != r->heap[0].i)
      fail_msg("replica %u: top %u, the heap's %u", k, r->top, r->heap[0].i);
  }
}

static void a_handle_is_its_pending_event(void **state) {
  const handle_case *c = *state;
  rig g;
  rig_open(&g, H100, c->yaml, 3, INFINITY);
  uint64_t x = 7;
  gpu_load loads[NREP];
  for (int i = 0; i < 4000; i++) {
    bool done;
    assert_int_equal(sim_engine_run_some(g.e, to_ns(60), 1, &done), SIM_OK);
    check_handles(&g);
    if (done)
      break;
    if (c->every == 0 || i % c->every != 0)
      continue;
    x = x * 6364136223846793005u + 1442695040888963407u;
    uint32_t k = (uint32_t)(x >> 33) % NREP;
    if (c->clocks)
      assert_int_equal(inf_set_clock(g.s, k, 0.5 + (double)(x >> 60) / 32),
                       SIM_OK);
    if (c->downs)
      assert_int_equal(inf_set_down(g.s, k, !inf_replica_down(g.s, k)), SIM_OK);
    inf_take_loads(g.s, 0, NREP, loads);
    check_handles(&g);
  }
  rig_close(&g);
}

/* Replica r's kept clock terms are rl_clock_of's at its phi, byte for
 * byte, whether or not it was priced since its clock last moved. */
static void check_clocks(const rig *g) {
  for (uint32_t k = 0; k < g->s->nrep; k++) {
    replica *r = &g->s->rep[k];
    rl_clock want;
    rl_clock_of(&g->s->proto, inf__rep_phi(r), &want);
    bool priced = r->clk.phi != 0;
    if ((priced && memcmp(&want, &r->clk, sizeof want) != 0) ||
        memcmp(&want, inf__rep_clock(g->s, r), sizeof want) != 0)
      fail_msg("replica %u at phi %.17g: kept terms differ (priced %d)", k,
               inf__rep_phi(r), priced);
  }
}

/* A replica's clock terms, kept in its fourth line (inference_internal.h),
 * follow its clock: set, changed, set back, between events and takes; and
 * the replicas and the pool (grown past its first 1,024 slots, what it
 * held kept) start at 64-byte lines. */
static void request_clocks_kept(void **state) {
  (void)state;
  rig g;
  rig_open(&g, H100, BATCH_YAML, 3, INFINITY);
  inf_service *s = g.s;
  assert_int_equal((uintptr_t)s->rep % 64, 0);
  uint64_t x = 11;
  gpu_load loads[NREP];
  for (int i = 0; i < 3000; i++) {
    bool done;
    assert_int_equal(sim_engine_run_some(g.e, to_ns(60), 1, &done), SIM_OK);
    if (done)
      break;
    x = x * 6364136223846793005u + 1442695040888963407u;
    uint32_t k = (uint32_t)(x >> 33) % NREP;
    double phi = (x >> 62) == 0 ? 1 : 0.3 + (double)(x >> 60) / 24;
    assert_int_equal(inf_set_clock(s, k, phi), SIM_OK);
    if (i % 5 == 0)
      inf_take_loads(s, 0, NREP, loads);
    if (i % 50 == 0)
      check_clocks(&g);
  }
  check_clocks(&g);
  assert_int_equal((uintptr_t)s->pool % 64, 0);
  uint32_t first = inf__pool_take(s);
  s->pool[first].prompt = 4321;
  while (s->pool_cap <= 1024)
    assert_int_not_equal(inf__pool_take(s), NONE);
  assert_int_equal((uintptr_t)s->pool % 64, 0);
  assert_true(s->pool[first].prompt == 4321);
  rig_close(&g);
}

/* inf__rep_set_load's two 16-byte stores write a replica's load and
 * compute share, as the plain assignments did, and nothing beside. */
static void a_load_is_set_as_assigned(void **state) {
  (void)state;
  static replica r, want;
  memset(&r, 0x5a, sizeof r);
  want = r;
  gpu_load l = {0.25, 1.0 / 3, 0.875};
  want.load = l;
  want.compute = 0.1;
  inf__rep_set_load(&r, l, 0.1);
  assert_memory_equal(&r, &want, sizeof r);
}

int main(void) {
  struct CMUnitTest tests[10] = {
      cmocka_unit_test(fluid_batch),
      cmocka_unit_test(request_batch),
      cmocka_unit_test(request_batch_resting),
      cmocka_unit_test(fluid_batch_blocks),
      cmocka_unit_test(request_clocks_kept),
      cmocka_unit_test(a_load_is_set_as_assigned),
  };
  size_t n = 6;
  TEST_ROWS(tests, n, a_handle_is_its_pending_event, handle_cases);
  return _cmocka_run_group_tests("inference_batch", tests, n,
                                 test_catalogs_load, test_catalogs_release);
}
