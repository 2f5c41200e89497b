/* test_inference_fluid_solve.c - the fluid solve's answers kept to the
 * bit while it is made cheaper (issue 24, eighth session). The chain of
 * decoding requests is summed block by block (a batch size's states
 * together) and the step table's rows are priced in parts; neither may
 * move a bit of any outcome. The digests below were taken from the
 * state-by-state sum of main 5427e85 (the outputs in /work/ref are that
 * code's); a solve that moves any bit of an outcome, in any regime (one
 * replica or hundreds, an empty batch, a full one with its tail, a
 * backlog), changes its digest. Like the project's byte-identical
 * outputs, they hold for this build (x86-64, no FMA contraction, glibc's
 * libm). */
#include "test_inference_rig.h"

#include "inference_fluid_internal.h"

#define SVC_YAML                                                               \
  "name: a\nmodel: Llama-3.1-8B\ntp: 1\nreplicas: 8\nmax_batch: 64\n"          \
  "max_queue: 500\ntimeout: 60 s\ntpot_slo: 10 ms\n"                           \
  "arrivals: {rate: 40, prompt: {mean: 1155, sigma: 0.99}, output: {mean: "    \
  "211, sigma: 0.86}}\n"

/* A span of 1 s at rate requests/s to each of nup replicas, whose
 * decoding members hold held tokens at their end (0: 300). */
static span_load span_of(double rate, uint32_t nup, double held) {
  span_load l = {.dt = 1, .rate = rate, .p_one = 0.01, .nup = nup};
  double m = 1155, s2 = 0.99 * 0.99;
  l.prompt = (lengths){m, m * m * exp(s2), log(m) - 0.5 * s2, 0.99};
  inf__fluid_nodes(&l.prompt, l.node_n);
  l.work = 210;
  l.work_cv2 = 0.9;
  l.held = held > 0 ? held : 300;
  l.ctx = m + 0.5 * l.held;
  return l;
}

/* FNV-1a over n bytes. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ c[i]) * 0x100000001b3u;
  return h;
}

static uint64_t digest(const outcome *o) {
  uint64_t h = fnv(0xcbf29ce484222325u, o, offsetof(outcome, ttft_v));
  h = fnv(h, o->ttft_v, o->nttft * sizeof *o->ttft_v);
  h = fnv(h, o->ttft_w, o->nttft * sizeof *o->ttft_w);
  h = fnv(h, o->tpot_v, o->ntpot * sizeof *o->tpot_v);
  return fnv(h, o->tpot_w, o->ntpot * sizeof *o->tpot_w);
}

typedef struct solve_case {
  double phi, rate, q0;
  uint32_t nup;
  uint64_t digest;
  double held; /* 0: 300 */
} solve_case;

/* One service solving them in turn (its kept table and prefill between
 * them, as in a run): low and high load, one replica to hundreds, the
 * full batch's tail, a backlog draining and one growing, and the
 * decoding context moved and back (the steps' loads kept by context). */
static const solve_case cases[] = {
    {1, 2, 0, 8, 0x9140031049b8472du, 0},
    {0.7, 2, 0, 8, 0x1a6b8d196cbc2375u, 0},
    {1, 0.05, 0, 8, 0x7dca46548a73c9abu, 0},
    {1, 9, 0, 8, 0x79b2bbcafe73a1e2u, 0},
    {0.93, 9, 0, 1, 0x531dbfe27f35de1du, 0},
    {0.6, 3, 0, 3, 0x48112182c859d7ddu, 0},
    {0.85, 0.4, 0, 700, 0xe6dbc807f12987dau, 0},
    {1, 0.22, 0, 1200, 0xc413c6ac1b2b0da8u, 0},
    {0.31, 0.36, 0, 264, 0x10939a7d0b238502u, 0},
    {1, 12.8, 0, 8, 0x086168892b2b14e0u, 0},
    {0.8, 10.2, 0, 64, 0x99c4bb1cdb1aa8b2u, 0},
    {1, 9, 50, 8, 0x2570357ddede6897u, 0},
    {0.5, 30, 50, 8, 0xbe63f372c08cb778u, 0},
    {1, 0, 0, 8, 0x17bf49b87cf34fedu, 0},
    {0.12, 0.37, 0, 264, 0x05e780926fecac10u, 0},
    {0.7, 9, 0, 8, 0x9d123e06871da701u, 900},
    {0.9, 9, 0, 8, 0xa63939aeed7d69b9u, 900},
    {0.7, 9, 0, 8, 0x380368796703060fu, 0},
};

/* A service to solve with, and an outcome off the stack (big). */
static outcome *solver_open(rig *g) {
  rig_open_fluid(g, SVC_YAML);
  outcome *o = malloc(sizeof *o);
  assert_non_null(o);
  return o;
}

/* 1 (and the digest got, to paste) when it is not the one wanted. */
static int digest_bad(const char *what, size_t i, uint64_t got, uint64_t want) {
  if (got == want)
    return 0;
  print_message("%s %zu: digest 0x%016llxu\n", what, i,
                (unsigned long long)got);
  return 1;
}

/* The chain's three paths, each to the digests: the AVX-512 one (eight
 * lanes a register, twenty-seventh session) where the CPU has it, the
 * AVX2 one (four states a register, seventeenth session; the switch
 * sim_lanes_no512), and the two-lane one (sim_lanes_narrow). */
typedef struct tier {
  const char *name;
  bool narrow, no512;
} tier;

static const tier tiers[] = {
    {"512", false, false}, {"avx2", false, true}, {"narrow", true, false}};
enum { TIERS = sizeof tiers / sizeof *tiers };

static void tier_set(const tier *t) {
  sim_lanes_narrow = t->narrow;
  sim_lanes_no512 = t->no512;
}

static void solves_keep_their_bits(void **state) {
  (void)state;
  int bad = 0;
  for (size_t m = 0; m < TIERS; m++) {
    tier_set(&tiers[m]);
    rig g;
    outcome *o = solver_open(&g);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      const solve_case *k = &cases[i];
      span_load l = span_of(k->rate, k->nup, k->held);
      assert_int_equal(inf__fluid_solve(g.s, &l, k->phi, k->q0, o), SIM_OK);
      bad += digest_bad(tiers[m].name, i, digest(o), k->digest);
    }
    free(o);
    rig_close(&g);
  }
  tier_set(&(tier){"", false, false});
  assert_int_equal(bad, 0);
}

/* Random solves (a fixed seed), each by the three tiers in turn, their
 * outcomes required the same to the bit. Replica counts 1 to 18: a
 * block's run past its first state is rr - 1 states, so the wide paths'
 * runs take every length 0 to 17 (every tail 0 to 3 past the turns of
 * four, and none), besides the window's cut blocks; rates from an idle
 * chain (block 0 alone) to a full one with its tail. */
static uint64_t lcg_next(uint64_t *x) {
  *x = *x * 6364136223846793005u + 1442695040888963407u;
  return *x >> 11;
}

static double lcg_unit(uint64_t *x) { return lcg_next(x) * 0x1p-53; }

static void tiers_agree_on_random_solves(void **state) {
  (void)state;
  rig g[TIERS];
  outcome *o[TIERS];
  for (size_t m = 0; m < TIERS; m++)
    o[m] = solver_open(&g[m]);
  uint64_t x = 27;
  int bad = 0;
  for (int i = 0; i < 600; i++) {
    uint32_t nup = 1 + (uint32_t)(i % 18);
    double rate = 14 * lcg_unit(&x) * lcg_unit(&x);
    double phi = 0.3 + 0.7 * lcg_unit(&x), q0 = i % 7 == 0 ? 40 : 0;
    uint64_t d[TIERS];
    for (size_t m = 0; m < TIERS; m++) {
      tier_set(&tiers[m]);
      span_load l = span_of(rate, nup, 0);
      assert_int_equal(inf__fluid_solve(g[m].s, &l, phi, q0, o[m]), SIM_OK);
      d[m] = digest(o[m]);
    }
    if (d[0] != d[1] || d[1] != d[2]) {
      print_message("solve %d (nup %u, rate %.17g): tiers differ\n", i, nup,
                    rate);
      bad++;
    }
  }
  tier_set(&(tier){"", false, false});
  for (size_t m = 0; m < TIERS; m++) {
    free(o[m]);
    rig_close(&g[m]);
  }
  assert_int_equal(bad, 0);
}

/* A sweep of solves by one service: per replica count, 48 rates from
 * an idle chain to a full one with its tail, at five clocks in turn, so
 * the chain's windows start, end and have their mid at every place in a
 * block (its first state, j 0, taken apart since the fourteenth
 * session; the states after it by pairs). The digests (FNV-1a of the
 * outcomes' digests) are main 469ef74's. */
typedef struct sweep_case {
  uint32_t nup;
  uint64_t digest;
} sweep_case;

static const sweep_case sweeps[] = {
    {1, 0xd1dcf37880dd2bd3u}, {2, 0x290f25f9136701cau},
    {3, 0x9661bedd3150e205u}, {5, 0x223c1487054075abu},
    {8, 0x8ef971e198c2177bu}, {31, 0x90fca0e21d1a7276u},
};

static uint64_t sweep_digest(inf_service *s, uint32_t nup, outcome *o) {
  uint64_t h = 0xcbf29ce484222325u;
  for (int i = 0; i < 48; i++) {
    span_load l = span_of(0.05 + i * 0.27, nup, 0);
    double phi = 0.6 + 0.1 * (i % 5);
    assert_int_equal(inf__fluid_solve(s, &l, phi, 0, o), SIM_OK);
    uint64_t d = digest(o);
    h = fnv(h, &d, sizeof d);
  }
  return h;
}

static void sweeps_keep_their_bits(void **state) {
  (void)state;
  int bad = 0;
  for (size_t m = 0; m < TIERS; m++) {
    tier_set(&tiers[m]);
    rig g;
    outcome *o = solver_open(&g);
    for (size_t i = 0; i < sizeof sweeps / sizeof *sweeps; i++)
      bad += digest_bad(tiers[m].name, i, sweep_digest(g.s, sweeps[i].nup, o),
                        sweeps[i].digest);
    free(o);
    rig_close(&g);
  }
  tier_set(&(tier){"", false, false});
  assert_int_equal(bad, 0);
}

/* Whether every row of s's step table priced at its clock and context
 * (its generation's) is rl_decode_step's at them, to the bit: the time,
 * the compute share, the tokens/s and the load. Returns the rows seen. */
static int rows_are_the_steps(const inf_service *s) {
  const inf_fluid *f = s->fluid;
  int seen = 0;
  for (uint32_t b = 0; b < f->tab_cap; b++) {
    const step_row *row = &f->tab[b];
    if (row->gen != f->tab_gen)
      continue;
    rl_step st;
    rl_decode_step(&s->proto, b, f->tab_ctx, f->tab_phi, &st);
    step_row want = *row;
    want.t = st.t;
    want.comp = st.t_comp >= st.t_mem ? st.t_comp / st.t : 0;
    want.g = b / st.t;
    want.act = st.load;
    assert_memory_equal(row, &want, sizeof want);
    seen++;
  }
  return seen;
}

/* The step table's rows, priced from the batch terms each row keeps and
 * the clock's terms kept with the table's generation, after each case's
 * solve in turn (clocks of 1 and below, the context moved and back,
 * tables grown and kept): rl_decode_step's, to the bit. */
static void step_rows_are_rl_decode_step(void **state) {
  (void)state;
  rig g;
  rig_open_fluid(&g, SVC_YAML);
  outcome *o = malloc(sizeof *o);
  assert_non_null(o);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const solve_case *k = &cases[i];
    span_load l = span_of(k->rate, k->nup, k->held);
    assert_int_equal(inf__fluid_solve(g.s, &l, k->phi, k->q0, o), SIM_OK);
    assert_true(rows_are_the_steps(g.s) > 0);
  }
  free(o);
  rig_close(&g);
}

/* rl_decode_step_batch_parts (the rows' price at a new clock, their
 * loads kept): rl_decode_step_batch's parts and time to the bit, over
 * batches, contexts and clocks (1, below, at the floor, above), its load
 * left as it was. */
static void batch_parts_are_the_step_batch(void **state) {
  (void)state;
  static const double batch[] = {1, 2, 7, 64, 300};
  static const double ctx[] = {1, 1155, 1605, 1e5};
  static const double phi[] = {1, 0.93, 0.5, 0.12, 0.01, 1.2};
  rig g;
  rig_open_fluid(&g, SVC_YAML);
  const rl_replica *r = &g.s->proto;
  rl_clock full;
  rl_clock_of(r, 1, &full);
  int seen = 0;
  for (size_t i = 0; i < sizeof batch / sizeof *batch; i++)
    for (size_t j = 0; j < sizeof ctx / sizeof *ctx; j++)
      for (size_t k = 0; k < sizeof phi / sizeof *phi; k++) {
        rl_batch b;
        rl_clock at;
        rl_step want, got;
        rl_batch_of(r, batch[i], &b);
        rl_clock_of(r, phi[k], &at);
        rl_decode_step_batch(r, &b, ctx[j], &at, &full, &want);
        memset(&got, 0x5a, sizeof got);
        rl_step keep = got;
        rl_decode_step_batch_parts(&b, ctx[j], &at, &got);
        assert_memory_equal(&got, &want, offsetof(rl_step, load));
        assert_memory_equal(&got.load, &keep.load, sizeof got.load);
        seen++;
      }
  rig_close(&g);
  assert_int_equal(seen, 120);
}

/* A row's rate bounds (inf__row_bounds: b / t at full clock and at the
 * slowest) hold its rate at the table's clock, within the margin, over
 * clocks from the floor (0.01 is under it) to full and contexts moved:
 * mean_batch's search answers its compares from them. */
static void row_bounds_hold_the_rate(void **state) {
  (void)state;
  static const double phi[] = {1, 0.93, 0.5, 0.31, 0.12, 0.01};
  static const double held[] = {0, 900, 20};
  rig g;
  outcome *o = solver_open(&g);
  inf_fluid *f = g.s->fluid;
  int seen = 0;
  for (size_t j = 0; j < sizeof held / sizeof *held; j++)
    for (size_t k = 0; k < sizeof phi / sizeof *phi; k++) {
      span_load l = span_of(2, 8, held[j]);
      assert_int_equal(inf__fluid_solve(g.s, &l, phi[k], 0, o), SIM_OK);
      for (uint32_t b = 1; b + 1 < f->tab_cap && b <= 64; b++) {
        inf__row_bounds(g.s, b);
        const step_row *row = inf__step_at(g.s, b);
        assert_true(row->g <= row->g_hi * (1 + INF_BOUND_EPS));
        assert_true(row->g >= row->g_lo * (1 - INF_BOUND_EPS));
        assert_true(row->g_lo < row->g_hi || phi[k] == 1);
        seen++;
      }
    }
  free(o);
  rig_close(&g);
  assert_true(seen >= 18 * 60);
}

/* The rows of s's table priced this generation. */
static int rows_priced(const inf_service *s) {
  int n = 0;
  for (uint32_t b = 0; b < s->fluid->tab_cap; b++)
    n += s->fluid->tab[b].gen == s->fluid->tab_gen;
  return n;
}

/* Random solves (a fixed seed) by two services: one in a steady context,
 * so mean_batch's search takes its compares from the rows' bounds where
 * they decide them, the other solving at another context before each,
 * so that none is steady and every compare prices its row. The same
 * outcomes to the bit, and fewer rows priced by the first. */
static void bounds_keep_the_search(void **state) {
  (void)state;
  rig g[2];
  outcome *o[2];
  for (int m = 0; m < 2; m++)
    o[m] = solver_open(&g[m]);
  uint64_t x = 28;
  int bad = 0, priced[2] = {0, 0};
  for (int i = 0; i < 400; i++) {
    uint32_t nup = 1 + (uint32_t)(lcg_next(&x) % 300);
    double rate = 14 * lcg_unit(&x) * lcg_unit(&x);
    double phi = 0.1 + 0.9 * lcg_unit(&x), q0 = i % 7 == 0 ? 40 : 0;
    span_load l = span_of(rate, nup, 0), other = span_of(rate, nup, 900);
    assert_int_equal(inf__fluid_solve(g[1].s, &other, phi, q0, o[1]), SIM_OK);
    uint64_t d[2];
    for (int m = 0; m < 2; m++) {
      assert_int_equal(inf__fluid_solve(g[m].s, &l, phi, q0, o[m]), SIM_OK);
      d[m] = digest(o[m]);
      priced[m] += rows_priced(g[m].s);
    }
    if (d[0] != d[1]) {
      print_message("solve %d (nup %u, rate %.17g): bounds differ\n", i, nup,
                    rate);
      bad++;
    }
  }
  for (int m = 0; m < 2; m++) {
    free(o[m]);
    rig_close(&g[m]);
  }
  assert_int_equal(bad, 0);
  assert_true(priced[0] < priced[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(solves_keep_their_bits),
      cmocka_unit_test(sweeps_keep_their_bits),
      cmocka_unit_test(tiers_agree_on_random_solves),
      cmocka_unit_test(step_rows_are_rl_decode_step),
      cmocka_unit_test(batch_parts_are_the_step_batch),
      cmocka_unit_test(row_bounds_hold_the_rate),
      cmocka_unit_test(bounds_keep_the_search),
  };
  return cmocka_run_group_tests(tests, test_catalogs_load,
                                test_catalogs_release);
}
