/* test_inference_fluid_groups.c - a fluid service's replicas kept in
 * groups of one state (inference_fluid_groups.c, issue 24) answer bit
 * for bit what each replica kept alone answers. Two services, one
 * grouped and one with every replica in a group of its own for good
 * (inf__groups_alone), get the same calls: clocks from a table of
 * patterns (one clock, two interleaved, blocks, more states than the
 * memo holds), replicas going down and up, loads taken every period, by
 * some replicas only, twice at one instant; spans of different lengths
 * and an overload that builds backlogs. Every load, compute share,
 * sample row, total and quantile must be the same bytes, and the
 * grouped service must share: few groups while the clocks are few.
 * And the batch clocks call refuses a bad clock (each of 0, -0, below
 * 0, past 1 by an ulp, the infinities and NaNs) at every place of its
 * blocks of eight and their tail, keeping that replica's clock and
 * writing every other's; and the regroup's scan of a taken run's clocks
 * parts a replica at a clock unlike the rest at every place of its
 * blocks of sixteen and their tail. The took held back while takes go
 * up a service in chunks is the took written at once, and a service's
 * loads taken in chunks are its loads taken in one call. */
#include "test_inference_rig.h"

#include <float.h>

#include "inference_fluid_internal.h"

#define NREP 12

#define GRP_YAML                                                               \
  "name: a\nmodel: Llama-3.1-8B\ntp: 1\nreplicas: 12\nmax_batch: 64\n"         \
  "max_queue: 300\ntimeout: 30 s\n"                                            \
  "arrivals: {rate: 260, prompt: {mean: 1155, sigma: 0.99}, output: {mean: "   \
  "211, sigma: 0.86}}\n"

static void open_fluid(rig *g, bool alone) {
  rig_open_fluid(g, GRP_YAML);
  if (alone)
    inf__groups_alone(g->s->fluid, NREP);
}

/* Replica k's clock in period t under each pattern. */
typedef double (*clock_fn)(uint32_t k, int t);
static double one(uint32_t k, int t) {
  (void)k;
  return t % 3 ? 1 : 0.7;
}
static double pairs(uint32_t k, int t) {
  return (k + (uint32_t)t) % 2 ? 0.45 : 0.9;
}
static double blocks(uint32_t k, int t) {
  (void)t;
  return k < NREP / 3 ? 0.35 : 1;
}
static double many(uint32_t k, int t) {
  return 0.3 + 0.05 * ((k * 7 + (uint32_t)t) % NREP);
}

typedef struct period {
  clock_fn clock;
  double dt;       /* s */
  int down;        /* replica down this period, -1: none */
  uint32_t skip;   /* replicas k with k % skip == 1 skip their take (0: none) */
  bool twice;      /* every take asked twice */
  size_t max_live; /* groups at most afterwards (0: not checked) */
} period;

static const period plan[] = {
    {one, 1, -1, 0, false, 1},   {one, 1, -1, 0, false, 1},
    {one, 0.5, -1, 0, true, 1},  {pairs, 1, -1, 0, false, 2},
    {pairs, 1, -1, 0, false, 2}, {blocks, 2, -1, 0, false, 0},
    {blocks, 1, 3, 0, false, 0}, {blocks, 1, 3, 0, false, 0},
    {pairs, 1, -1, 0, false, 0}, {pairs, 1, -1, 3, false, 0},
    {many, 1, 5, 0, true, 0},    {many, 0.25, -1, 4, false, 0},
    {one, 1, -1, 0, false, 0},   {one, 1, -1, 0, false, 0},
    {pairs, 3, 0, 2, false, 0},  {one, 1, -1, 0, false, 0},
    {one, 1, -1, 0, false, 0},   {blocks, 1, -1, 0, false, 0},
};

static void same_bytes(const void *a, const void *b, size_t n) {
  assert_memory_equal(a, b, n);
}

/* One period: both services brought to t and driven alike. */
static void drive(rig *g[2], const period *p, int i, double t) {
  for (int j = 0; j < 2; j++) {
    run_to(g[j], t);
    for (uint32_t k = 0; k < NREP; k++) {
      assert_int_equal(inf_set_down(g[j]->s, k, (int)k == p->down), SIM_OK);
      assert_int_equal(inf_set_clock(g[j]->s, k, p->clock(k, i)), SIM_OK);
    }
  }
  for (uint32_t k = 0; k < NREP; k++) {
    if (p->skip > 0 && k % p->skip == 1)
      continue;
    for (int n = 0; n < (p->twice ? 2 : 1); n++) {
      gpu_load a = inf_take_load(g[0]->s, k), b = inf_take_load(g[1]->s, k);
      same_bytes(&a, &b, sizeof a);
    }
  }
  for (uint32_t k = 0; k < NREP; k++) { /* taken or not */
    double ca = inf_compute_share(g[0]->s, k),
           cb = inf_compute_share(g[1]->s, k);
    same_bytes(&ca, &cb, sizeof ca);
    assert_int_equal(inf_replica_down(g[0]->s, k),
                     inf_replica_down(g[1]->s, k));
  }
}

static void compare_ends(rig *g[2]) {
  double ra[INF_NCOLS], rb[INF_NCOLS];
  sample(g[0], ra);
  sample(g[1], rb);
  same_bytes(ra, rb, sizeof ra);
  inf_totals ta = inf_totals_of(g[0]->s), tb = inf_totals_of(g[1]->s);
  same_bytes(&ta, &tb, sizeof ta);
  for (double q = 0.1; q < 1; q += 0.2) {
    double a = inf_ttft_quantile(g[0]->s, q), b = inf_ttft_quantile(g[1]->s, q);
    same_bytes(&a, &b, sizeof a);
    a = inf_tpot_quantile(g[0]->s, q);
    b = inf_tpot_quantile(g[1]->s, q);
    same_bytes(&a, &b, sizeof a);
  }
}

static void groups_equal_replicas_alone(void **state) {
  (void)state;
  rig grouped, alone;
  open_fluid(&grouped, false);
  open_fluid(&alone, true);
  rig *g[2] = {&grouped, &alone};
  double t = 0;
  bool backlog = false;
  for (int round = 0; round < 3; round++)
    for (size_t i = 0; i < sizeof plan / sizeof *plan; i++) {
      t += plan[i].dt;
      drive(g, &plan[i], (int)i, t);
      const inf_fluid *f = grouped.s->fluid;
      /* The span just run had the last period's clocks. */
      size_t lim = i > 0 ? plan[i - 1].max_live : 0;
      if (round == 0 && lim > 0 && f->ngrp > lim)
        fail_msg("period %zu: %u groups", i, f->ngrp);
      for (uint32_t k = 0; k < NREP; k++)
        backlog |= inf__grp(f, k)->st.backlog > 0;
      if (i % 5 == 4) {
        double ra[INF_NCOLS], rb[INF_NCOLS];
        sample(g[0], ra);
        sample(g[1], rb);
        same_bytes(ra, rb, sizeof ra);
      }
    }
  assert_true(backlog); /* the overload was reached */
  assert_int_equal(alone.s->fluid->ngrp, NREP);
  compare_ends(g);
  rig_close(&grouped);
  rig_close(&alone);
}

/* Four blocks of eight (two of sixteen) and a tail of five. */
#define CLK_YAML                                                               \
  "name: a\nmodel: Llama-3.1-8B\ntp: 1\nreplicas: 37\nmax_batch: 64\n"         \
  "max_queue: 300\ntimeout: 30 s\n"                                            \
  "arrivals: {rate: 60, prompt: {mean: 1155, sigma: 0.99}, output: {mean: "    \
  "211, sigma: 0.86}}\n"

enum { CLK_N = 37 };

/* A good clock for replica k in round i: on even rounds from (0.5, 1]
 * (a block's quick test passes but for the bad clock), on odd ones
 * also the least above 0 and clocks below 0.5 (blocks tested clock by
 * clock). */
static double good_clock(uint32_t k, int i) {
  static const double high[] = {1, 0x1.fffffffffffffp-1, 0x1.0000000000001p-1,
                                0.7};
  static const double mixed[] = {1, 0x1p-1074, 0x1.fffffffffffffp-1, 0.3};
  return (i % 2 ? mixed : high)[(k + (uint32_t)i / 2) % 4];
}

/* Each bad clock at each place, through the wide copy (AVX2, sixteen
 * a turn: two blocks of sixteen, then the tail) where the CPU has it
 * and the two-lane one (sim_lanes_narrow, the tests' switch). */
static void bad_clocks_refused_at_each_place(void **state) {
  (void)state;
  static const double bad[] = {0,        -0.0,      -0.5, 0x1.0000000000001p0,
                               INFINITY, -INFINITY, NAN,  -NAN,
                               DBL_MAX};
  static const bool narrow[] = {false, true};
  for (size_t w = 0; w < 2; w++) {
    sim_lanes_narrow = narrow[w];
    rig g;
    rig_open_fluid(&g, CLK_YAML);
    int i = 0;
    for (uint32_t at = 0; at < CLK_N; at++)
      for (size_t b = 0; b < 2 * sizeof bad / sizeof *bad; b++, i++) {
        run_to(&g, i + 1);
        double phi[CLK_N], before = g.s->fluid->phi[at];
        for (uint32_t k = 0; k < CLK_N; k++)
          phi[k] = good_clock(k, i);
        phi[at] = bad[b / 2];
        assert_int_equal(inf_set_clocks(g.s, 0, CLK_N, phi), SIM_EINVAL);
        phi[at] = before;
        assert_memory_equal(g.s->fluid->phi, phi, sizeof phi);
      }
    rig_close(&g);
  }
  sim_lanes_narrow = false;
}

/* Clocks of the CLK_N replicas, 0.8 but at's (0.6; none when at is
 * CLK_N), set and the loads taken by the batch calls at time t, so that
 * the next span's regroup scans a run taken at once. */
static void clocks_taken(rig *g, double t, uint32_t at) {
  double phi[CLK_N];
  gpu_load l[CLK_N];
  run_to(g, t);
  for (uint32_t k = 0; k < CLK_N; k++)
    phi[k] = k == at ? 0.6 : 0.8;
  assert_int_equal(inf_set_clocks(g->s, 0, CLK_N, phi), SIM_OK);
  inf_take_loads(g->s, 0, CLK_N, l);
}

/* Through the wide scan of the clocks (AVX2) where the CPU has it and
 * the two-lane one. */
static void regroup_parts_a_clock_at_each_place(void **state) {
  (void)state;
  for (uint32_t at = 0; at < 2 * CLK_N; at++) {
    sim_lanes_narrow = at >= CLK_N;
    rig g;
    rig_open_fluid(&g, CLK_YAML);
    clocks_taken(&g, 1, CLK_N);
    clocks_taken(&g, 2, at % CLK_N);
    clocks_taken(&g, 3, CLK_N); /* the span of 2 .. 3 regrouped */
    const inf_fluid *f = g.s->fluid;
    for (uint32_t k = 0; k < CLK_N; k++)
      assert_true(inf__grp(f, k)->st.phi == (k == at % CLK_N ? 0.6 : 0.8));
    rig_close(&g);
  }
  sim_lanes_narrow = false;
}

/* inf__took_range's took as the eager one wrote it (each range's
 * replicas written out the moment a range at another instant, or apart
 * from it, replaced it), against the held-back one: a step's range at
 * its instant, then (read) the took of every replica compared, the held
 * one settled first as its readers do. */
typedef struct took_step {
  uint32_t lo, hi;
  double at;
  bool read;
} took_step;

typedef struct eager_took {
  double took[NREP];
  uint32_t lo, hi;
  double at;
} eager_took;

static void eager_range(eager_took *e, uint32_t lo, uint32_t hi, double at) {
  uint32_t a = e->lo, b = e->hi;
  if (lo < hi && a < b && e->at == at && lo <= b && hi >= a) {
    lo = lo < a ? lo : a;
    hi = hi > b ? hi : b;
  } else {
    for (uint32_t k = a; k < b; k++)
      if (k < lo || k >= hi)
        e->took[k] = e->at;
  }
  e->lo = lo;
  e->hi = hi;
  e->at = at;
}

/* Sequences of ranges, each from every replica taken whole at 1. */
static const took_step took_plan[][8] = {
    /* chunks up from the start, then whole again */
    {{0, 4, 2, false}, {4, 8, 2, false}, {8, 12, 2, true}, {0, 12, 3, true}},
    /* chunks stopping short: the rest keep 1 */
    {{0, 4, 2, false}, {4, 7, 2, true}, {0, 5, 3, true}, {5, 9, 3, true}},
    /* a chunk asked twice, one skipped, a single take after */
    {{0, 3, 2, false}, {0, 3, 2, false}, {3, 6, 2, true}, {0, 0, 2, true}},
    /* from the middle (nothing held back), then down */
    {{6, 9, 2, true}, {3, 6, 2, true}, {0, 3, 2, true}, {0, 12, 3, true}},
    /* held back, then a range apart at the same instant, one later */
    {{0, 2, 2, false}, {8, 10, 2, true}, {0, 12, 3, false}, {0, 6, 4, true}},
    /* ranges overlapping and going past the held part in one step */
    {{0, 5, 2, false}, {2, 12, 2, true}, {0, 1, 3, false}, {1, 11, 3, true}},
};

static void took_compared(inf_fluid *f, const eager_took *e, size_t p,
                          size_t i) {
  inf__took_settle(f);
  for (uint32_t k = 0; k < NREP; k++) {
    double want = k - e->lo < e->hi - e->lo ? e->at : e->took[k];
    if (!(inf__took_at(f, k) == want))
      fail_msg("plan %zu step %zu replica %u: %g, not %g", p, i, k,
               inf__took_at(f, k), want);
  }
}

static void took_held_back_as_written(void **state) {
  (void)state;
  for (size_t p = 0; p < sizeof took_plan / sizeof *took_plan; p++) {
    double took[NREP];
    inf_fluid *f = test_calloc(1, sizeof *f);
    eager_took e = {.lo = 0, .hi = 0, .at = NAN};
    f->took = took;
    f->tr_at = NAN;
    for (uint32_t k = 0; k < NREP; k++)
      took[k] = e.took[k] = NAN;
    inf__took_range(f, 0, NREP, 1);
    eager_range(&e, 0, NREP, 1);
    for (size_t i = 0; i < 8 && took_plan[p][i].at > 0; i++) {
      const took_step *s = &took_plan[p][i];
      inf__took_range(f, s->lo, s->hi, s->at);
      eager_range(&e, s->lo, s->hi, s->at);
      if (s->read)
        took_compared(f, &e, p, i);
    }
    took_compared(f, &e, p, 8);
    test_free(f);
  }
}

/* A service's loads taken in chunks going up from its first replica (as
 * the factory's drive takes them) against the same replicas taken in
 * one call: the same loads, compute shares and spans after, to the bit.
 * Chunks of each size; some periods take the first replicas only, some
 * none; clocks that part the replicas into groups. */
static void chunked_takes_as_one(void **state) {
  (void)state;
  static const uint32_t chunk[] = {1, 5, 16, 36, CLK_N};
  for (size_t c = 0; c < sizeof chunk / sizeof *chunk; c++) {
    rig one, parts;
    rig_open_fluid(&one, CLK_YAML);
    rig_open_fluid(&parts, CLK_YAML);
    rig *g[2] = {&one, &parts};
    for (int i = 0; i < 12; i++) {
      uint32_t upto = i % 4 == 3 ? 20 : i % 5 == 4 ? 0 : CLK_N;
      gpu_load la[CLK_N], lb[CLK_N];
      double phi[CLK_N], ca[CLK_N], cb[CLK_N];
      for (uint32_t k = 0; k < CLK_N; k++)
        phi[k] = good_clock(k, i);
      for (int j = 0; j < 2; j++) {
        run_to(g[j], i + 1);
        assert_int_equal(inf_set_clocks(g[j]->s, 0, CLK_N, phi), SIM_OK);
      }
      inf_take_loads(one.s, 0, upto, la);
      for (uint32_t j = 0; j < upto; j += chunk[c])
        inf_take_loads(parts.s, j, upto - j < chunk[c] ? upto - j : chunk[c],
                       lb + j);
      assert_memory_equal(la, lb, upto * sizeof *la);
      inf_compute_shares(one.s, 0, CLK_N, ca);
      inf_compute_shares(parts.s, 0, CLK_N, cb);
      assert_memory_equal(ca, cb, sizeof ca);
    }
    compare_ends(g);
    rig_close(&one);
    rig_close(&parts);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(groups_equal_replicas_alone),
      cmocka_unit_test(bad_clocks_refused_at_each_place),
      cmocka_unit_test(regroup_parts_a_clock_at_each_place),
      cmocka_unit_test(took_held_back_as_written),
      cmocka_unit_test(chunked_takes_as_one),
  };
  return cmocka_run_group_tests(tests, test_catalogs_load,
                                test_catalogs_release);
}
