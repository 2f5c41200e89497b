/* test_inference_fluid_cache.c - the fluid services' kept results
 * (issue 24): each must give, bit for bit, what computing afresh gives,
 * and must be recomputed when any bit of its inputs changes.
 * - arr_window_take keeps the synthetic lengths' moments and the share
 *   over the KV limit: a generator's windows against a fresh generator's
 *   over a table of limits and length changes (one ulp among them);
 * - inf__fluid_solve keeps the step table and the prefill, and clears
 *   only where its last chain wrote: a service that has solved other
 *   states first against a fresh one, over a table of clocks, rates and
 *   backlogs, its scratch 0 outside that range after every solve;
 * - a service keeps its up replicas' count, the memo entry last found and
 *   1 / span: replicas at two clocks, interleaved or in blocks, some
 *   down, read the same loads. */
#include "test_inference_rig.h"

#include "inference_fluid_internal.h"

/* ---- Arrivals' windows -------------------------------------------------- */

#define ARR_YAML                                                               \
  "rate: 40\nprompt: {mean: 1155, sigma: 0.99}\noutput: {mean: 211, sigma: "   \
  "0.86}\n"

static void arr_bind(arr_config *c) {
  sim_error err = {0};
  memset(c, 0, sizeof *c);
  if (scn_bind_string("arr.yaml", ARR_YAML, &arr_schema, c, NULL, &err) !=
      SIM_OK)
    fail_msg("%s", err.msg);
}

static arr_gen *arr_open(const arr_config *c) {
  sim_error err = {0};
  arr_gen *g = arr_create(c, NULL, 1, 0, NULL, &err);
  if (g == NULL)
    fail_msg("%s", err.msg);
  return g;
}

typedef struct win_case {
  double limit;     /* the KV limit, tokens */
  double prompt_mu; /* 0: unchanged; else the prompt's new mean */
  bool ulp;         /* the output's sigma one ulp up */
} win_case;

/* Whether case k moves the share over the limit from case before's. */
static bool moved(const win_case *k, const win_case *before) {
  return (k->limit != before->limit || k->prompt_mu > 0) && k->limit < 1e6;
}

static void windows_equal_fresh_ones(void **state) {
  (void)state;
  const double a = 1e5, b = 4096;
  const win_case cases[] = {
      {a, 0, false},
      {a, 0, false},
      {b, 0, false},
      {a, 0, false},
      {nextafter(a, 0), 0, false},
      {a, 1156, false},
      {a, 0, true},
      {b, 2000, false},
      {b, 0, false},
      {INFINITY, 0, false},
  };
  arr_config c;
  arr_bind(&c);
  arr_gen *kept = arr_open(&c);
  arr_window prev = {0};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const win_case *k = &cases[i];
    if (k->prompt_mu > 0)
      c.prompt.mean = k->prompt_mu;
    if (k->ulp)
      c.output.sigma = nextafter(c.output.sigma, 1);
    arr_window w, fresh;
    arr_window_take(kept, 10.0 * i, 10.0 * (i + 1), k->limit, &w);
    arr_gen *g = arr_open(&c);
    arr_window_take(g, 10.0 * i, 10.0 * (i + 1), k->limit, &fresh);
    arr_destroy(g);
    assert_memory_equal(&w, &fresh, sizeof w);
    /* The limit and the prompt's mean move what is kept: a stale copy
     * would show. */
    if (i > 0 && moved(k, &cases[i - 1]))
      assert_true(w.over / w.count != prev.over / prev.count);
    prev = w;
  }
  arr_destroy(kept);
  scn_release(&arr_schema, &c);
}

/* ---- One replica's solve ------------------------------------------------ */

#define SVC_YAML                                                               \
  "name: a\nmodel: Llama-3.1-8B\ntp: 1\nreplicas: 8\nmax_batch: 64\n"          \
  "max_queue: 500\ntimeout: 60 s\n"                                            \
  "arrivals: {rate: 40, prompt: {mean: 1155, sigma: 0.99}, output: {mean: "    \
  "211, sigma: 0.86}}\n"

static void fluid_open(rig *g) { rig_open_fluid(g, SVC_YAML); }

/* A span of dt at rate requests/s a replica, lengths as the yaml's. */
static span_load span_of(double rate, double prompt_mean) {
  span_load l = {.dt = 1, .rate = rate, .p_one = 0.01, .nup = 8};
  double s2 = 0.99 * 0.99;
  l.prompt = (lengths){prompt_mean, prompt_mean * prompt_mean * exp(s2),
                       log(prompt_mean) - 0.5 * s2, 0.99};
  inf__fluid_nodes(&l.prompt, l.node_n);
  l.work = 210;
  l.work_cv2 = 0.9;
  l.held = 300;
  l.ctx = prompt_mean + 150;
  return l;
}

static void assert_same_outcome(const outcome *a, const outcome *b) {
  assert_memory_equal(a, b, offsetof(outcome, ttft_v));
  assert_memory_equal(a->ttft_v, b->ttft_v, a->nttft * sizeof *a->ttft_v);
  assert_memory_equal(a->ttft_w, b->ttft_w, a->nttft * sizeof *a->ttft_w);
  assert_memory_equal(a->tpot_v, b->tpot_v, a->ntpot * sizeof *a->tpot_v);
  assert_memory_equal(a->tpot_w, b->tpot_w, a->ntpot * sizeof *a->tpot_w);
}

typedef struct solve_case {
  double phi, rate, q0, prompt_mean;
} solve_case;

/* The chain's scratch is 0 wherever the service believes it is: the
 * next solve clears only the rest. */
static void scratch_clear_outside(const inf_fluid *f) {
  for (size_t x = 0; x < f->tok_cap; x++)
    if (x < f->tok_lo || x >= f->tok_hi)
      assert_true(f->tok_b[x] == 0);
}

static void solves_equal_fresh_ones(void **state) {
  (void)state;
  const solve_case cases[] = {
      {1, 2, 0, 1155},
      {1, 2, 0, 1155},
      {0.7, 2, 0, 1155},
      {1, 2, 0, 1155},
      {1, 0.3, 0, 1155},
      {1, 9, 0, 1155},
      {1, 40, 0, 1155},
      {1, 9, 50, 1155},
      {0.5, 9, 50, 1155},
      {nextafter(0.5, 1), 9, 50, 1155},
      {1, 2, 0, nextafter(1155, 0)},
      {1, 2, 0, 600},
      {0.8, 0, 0, 600},
  };
  rig kept;
  fluid_open(&kept);
  outcome *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  assert_non_null(a);
  assert_non_null(b);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const solve_case *k = &cases[i];
    span_load l = span_of(k->rate, k->prompt_mean);
    assert_int_equal(inf__fluid_solve(kept.s, &l, k->phi, k->q0, a), SIM_OK);
    scratch_clear_outside(kept.s->fluid);
    rig fresh;
    fluid_open(&fresh);
    assert_int_equal(inf__fluid_solve(fresh.s, &l, k->phi, k->q0, b), SIM_OK);
    rig_close(&fresh);
    assert_same_outcome(a, b);
  }
  free(a);
  free(b);
  rig_close(&kept);
}

/* ---- A service's replicas ---------------------------------------------- */

/* Runs 8 replicas for 20 periods, replica k at clock phi(k) and down
 * when down(k, t); returns each replica's last load and checks the up
 * count against the replicas' flags every period. */
static void run_replicas(double (*phi)(uint32_t), bool (*down)(uint32_t, int),
                         gpu_load out[8]) {
  rig g;
  fluid_open(&g);
  for (int t = 1; t <= 20; t++) {
    run_to(&g, t);
    for (uint32_t k = 0; k < 8; k++) {
      assert_int_equal(inf_set_down(g.s, k, down(k, t)), SIM_OK);
      assert_int_equal(inf_set_clock(g.s, k, phi(k)), SIM_OK);
    }
    uint32_t up = 0;
    for (uint32_t k = 0; k < 8; k++)
      up += !inf_replica_down(g.s, k);
    assert_int_equal(g.s->fluid->nup, up);
    for (uint32_t k = 0; k < 8; k++)
      out[k] = inf_take_load(g.s, k);
  }
  rig_close(&g);
}

static double interleaved(uint32_t k) { return k % 2 ? 0.6 : 1; }
static double blocks(uint32_t k) { return k >= 4 ? 0.6 : 1; }
static bool none_down(uint32_t k, int t) {
  (void)k;
  (void)t;
  return false;
}
static bool some_down(uint32_t k, int t) { return k == 5 && t % 7 < 3; }

static void replicas_read_their_own_state(void **state) {
  (void)state;
  gpu_load a[8], b[8];
  run_replicas(interleaved, none_down, a);
  run_replicas(blocks, none_down, b);
  /* Replica k of one layout and replica k' of the other at one clock. */
  const uint32_t pairs[][2] = {{0, 0}, {2, 1}, {4, 2}, {6, 3},
                               {1, 4}, {3, 5}, {5, 6}, {7, 7}};
  for (size_t i = 0; i < 8; i++)
    assert_memory_equal(&a[pairs[i][0]], &b[pairs[i][1]], sizeof *a);
  assert_true(a[0].busy != a[1].busy); /* the clocks matter */
  /* Replica 5 goes down and back: the others at its clock (1, 3, 7) and
   * at the other (0, 2, 4, 6) still read one load each. */
  run_replicas(interleaved, some_down, a);
  for (uint32_t k = 2; k < 8; k++)
    if (k != 5)
      assert_memory_equal(&a[k], &a[k % 2], sizeof *a);
}

/* ---- The lengths' fits --------------------------------------------------- */

/* inf__fit_to over a run of moments, each fit kept from the one before
 * (the same, one ulp off in either, -0 and +0, NaN, a bad mean): the
 * same bytes as a fresh inf__fit. */
static void fits_equal_fresh_ones(void **state) {
  (void)state;
  const double m = 1155, sq = 1155 * 1155 * 2.67;
  static const double run[][2] = {
      {m, sq},  {m, sq},  {m, sq},  {0, 0},  {0, -0.0}, {0, -0.0},  {0, 0},
      {m, sq},  {0, 0},   {0, 0},   {1, 1},  {1, 1},    {1, 1},     {NAN, 1},
      {NAN, 1}, {1, NAN}, {1, NAN}, {-1, 4}, {-1, 4},   {211, 1e5},
  };
  lengths kept = inf__fit(1, 1);
  for (size_t i = 0; i < sizeof run / sizeof *run; i++) {
    double a = run[i][0], b = run[i][1];
    if (i == 1 || i == 8)
      a = nextafter(a, INFINITY);
    if (i == 2 || i == 9)
      b = nextafter(b, 0);
    inf__fit_to(&kept, a, b);
    lengths fresh = inf__fit(a, b);
    assert_memory_equal(&kept, &fresh, sizeof fresh);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(windows_equal_fresh_ones),
      cmocka_unit_test(solves_equal_fresh_ones),
      cmocka_unit_test(replicas_read_their_own_state),
      cmocka_unit_test(fits_equal_fresh_ones),
  };
  return cmocka_run_group_tests(tests, test_catalogs_load,
                                test_catalogs_release);
}
