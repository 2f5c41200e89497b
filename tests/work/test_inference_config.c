/* test_inference_config.c - inference services as configured and run:
 * determinism, trace replay, the run-wide quantiles, the constructor's
 * refusals, the schema and allocation failures. */
#include "test_inference_rig.h"

/* ---- 7. Determinism ---------------------------------------------------- */

typedef struct outcome {
  inf_totals t;
  double q[4];
  double row[INF_NCOLS];
} outcome;

static outcome run_seeded(uint64_t seed) {
  rig g;
  rig_open(&g, H100,
           "name: chat\nmodel: Llama-3.1-8B\nreplicas: 3\nmax_batch: 16\n"
           "arrivals: {rate: 30}\n",
           seed, 20);
  run_to(&g, 25);
  outcome o;
  memset(&o, 0, sizeof o);
  o.t = inf_totals_of(g.s);
  o.q[0] = inf_ttft_quantile(g.s, 0.5);
  o.q[1] = inf_ttft_quantile(g.s, 0.99);
  o.q[2] = inf_tpot_quantile(g.s, 0.5);
  o.q[3] = inf_tpot_quantile(g.s, 0.99);
  sample(&g, o.row);
  rig_close(&g);
  return o;
}

static void same_seed_same_run(void **state) {
  (void)state;
  outcome a = run_seeded(7), b = run_seeded(7), c = run_seeded(8);
  assert_int_equal(a.t.arrived, b.t.arrived);
  assert_int_equal(a.t.completed, b.t.completed);
  assert_true(a.t.tokens_generated == b.t.tokens_generated);
  assert_memory_equal(&a.t, &b.t, sizeof a.t);
  assert_memory_equal(a.q, b.q, sizeof a.q);
  assert_memory_equal(a.row, b.row, sizeof a.row);
  print_message("seed 7: %llu arrived, %llu completed, TTFT p99 %.4f s; "
                "seed 8: %llu arrived\n",
                (unsigned long long)a.t.arrived,
                (unsigned long long)a.t.completed, a.q[1],
                (unsigned long long)c.t.arrived);
  assert_true(a.t.arrived != c.t.arrived || a.q[0] != c.q[0]);
  assert_true(a.t.completed > 400);
}

/* ---- 10. Trace replay through the service ------------------------------ */

static const trace_row replay_rows[] = {
    {0, 374, 44},   {0.5, 396, 109},
    {1.25, 879, 0}, /* 0 yields 1 token */
    {3, 91, 12},    {7.5, 1200, 300},
    {12, 50, 5}, /* after the horizon (10 s): never arrives */
};

static void trace_replays_through_the_service(void **state) {
  (void)state;
  char yaml[8192];
  trace_yaml(yaml, sizeof yaml, "Llama-3.1-8B", "",
             write_trace("inf_replay.csv", replay_rows, N_OF(replay_rows)));
  rig g;
  rig_open(&g, H100, yaml, 1, 10);
  run_to(&g, 40);
  double row[INF_NCOLS];
  double dt = sample(&g, row);
  inf_totals t = inf_totals_of(g.s);
  assert_conserved(&t);
  assert_int_equal(t.arrived, 5);
  assert_int_equal(t.completed, 5);
  assert_close(t.prompt_tokens, 374 + 396 + 879 + 91 + 1200, 0, 0);
  assert_close(t.tokens_generated, 44 + 109 + 1 + 12 + 300, 1e-9, 0);
  assert_close(row[INF_ARRIVALS_PER_S] * dt, 5, 1e-12, 0);
  assert_close(row[INF_REQUESTS_PER_S] * dt, 5, 1e-12, 0);
  assert_close(row[INF_TOKENS_PER_S] * dt, 466, 1e-9, 0);
  assert_close(row[INF_QUEUE], 0, 0, 0);
  assert_true(isnan(row[INF_TOKENS_PER_J])); /* no energy given */
  /* An empty interval: no latencies, but energy gives power. */
  run_to(&g, 50);
  inf_add_energy(g.s, 1000);
  dt = sample(&g, row);
  assert_true(isnan(row[INF_TTFT_P50]) && isnan(row[INF_TPOT_P99]) &&
              isnan(row[INF_SLO]));
  assert_close(row[INF_REQUESTS_PER_S], 0, 0, 0);
  assert_close(row[INF_POWER_W], 1000 / dt, 1e-12, 0);
  assert_close(row[INF_TOKENS_PER_J], 0, 0, 0);
  assert_close(inf_totals_of(g.s).energy_j, 1000, 0, 0);
  rig_close(&g);
}

/* ---- Run-wide quantiles from the histograms ----------------------------- */

/* A run sampled once at its end: the interval's quantiles are the exact
 * ones over every request, which the histograms must match within their
 * bin width (2.3%). */
static void run_quantiles_match_exact(void **state) {
  (void)state;
  rig g;
  rig_open(&g, H100,
           "name: chat\nmodel: Llama-3.1-8B\nreplicas: 2\nmax_batch: 32\n"
           "arrivals: {rate: 12}\n",
           4, 100);
  run_to(&g, 200);
  double row[INF_NCOLS];
  sample(&g, row);
  double want[4] = {row[INF_TTFT_P50], row[INF_TTFT_P99], row[INF_TPOT_P50],
                    row[INF_TPOT_P99]};
  double got[4] = {inf_ttft_quantile(g.s, 0.5), inf_ttft_quantile(g.s, 0.99),
                   inf_tpot_quantile(g.s, 0.5), inf_tpot_quantile(g.s, 0.99)};
  print_message("%llu requests: TTFT p50 %.4f / %.4f s, p99 %.4f / %.4f s; "
                "TPOT p50 %.5f / %.5f s, p99 %.5f / %.5f s (exact / "
                "histogram)\n",
                (unsigned long long)inf_totals_of(g.s).completed, want[0],
                got[0], want[1], got[1], want[2], got[2], want[3], got[3]);
  for (int i = 0; i < 4; i++)
    assert_close(got[i], want[i], 0.023, 0);
  assert_true(isnan(inf_ttft_quantile(g.s, 1.5)));
  rig_close(&g);
}

/* ---- The constructor's refusals ---------------------------------------- */

static void create_refuses_what_cannot_run(void **state) {
  (void)state;
  inf_config c;
  bind_ok("name: big\nmodel: Llama-3.1-70B\narrivals: {rate: 1}\n", &c);
  sim_engine *e = sim_engine_create(NULL);
  sim_error err = {0};
  /* 70B in FP16 does not fit one H100 (rl_replica_init would refuse it). */
  rl_replica r = {.gpu = gpu_catalog_find(&cats.gpu, H100),
                  .model = llm_catalog_find(&cats.llm, "Llama-3.1-70B"),
                  .weights = llm_catalog_precision(&cats.llm, "fp16"),
                  .tp = 1};
  rl_config_default(&r.cfg);
  arr_gen *gen = arr_create(&c.arrivals, NULL, 1, 0, NULL, &err);
  assert_null(inf_create(e, &c, &r, gen, 10, &err));
  assert_int_equal(err.code, SIM_EINPUT);
  assert_non_null(strstr(err.msg, "Llama-3.1-70B"));
  /* The config says tp 1, the replica 4. */
  r.tp = 4;
  gen = arr_create(&c.arrivals, NULL, 1, 0, NULL, &err);
  assert_null(inf_create(e, &c, &r, gen, 10, &err));
  assert_int_equal(err.code, SIM_EINVAL);
  assert_int_equal(sim_engine_events_pending(e), 0);
  inf_destroy(NULL);
  sim_engine_destroy(e);
  scn_release(&inf_schema, &c);
}

/* ---- 8. Schema --------------------------------------------------------- */

static void schema_defaults(void **state) {
  (void)state;
  inf_config c;
  bind_ok("name: chat\nmodel: Llama-3.1-8B\narrivals: {rate: 5}\n", &c);
  assert_string_equal(c.precision, "fp16");
  assert_null(c.gpu);
  assert_int_equal(c.tp, 1);
  assert_int_equal(c.replicas, 1);
  assert_int_equal(c.max_batch, 256);
  assert_close(c.ttft_slo_s, 2, 0, 0);
  assert_close(c.tpot_slo_s, 0.1, 1e-15, 0);
  assert_int_equal(c.priority, 0);
  assert_close(c.timeout_s, 600, 0, 0);
  assert_int_equal(c.max_queue, 0);
  assert_int_equal(c.prompt_pool, 0); /* every prompt unique */
  assert_int_equal(c.beams, 1);
  assert_int_equal(c.arrivals.kind, ARR_POISSON);
  assert_close(c.arrivals.rate, 5, 0, 0);
  scn_release(&inf_schema, &c);
}

#define OK_HEAD "name: a\nmodel: Llama-3.1-8B\n"
#define OK_ARR "arrivals: {rate: 1}\n"

static const test_bad_yaml bad_yaml[] = {
    {"tp zero", OK_HEAD "tp: 0\n" OK_ARR, "svc.yaml:3:5: 'tp' is 0"},
    {"tp not an integer", OK_HEAD "tp: 1.5\n" OK_ARR,
     "svc.yaml:3:5: 'tp' must be an integer"},
    {"replicas zero", OK_HEAD "replicas: 0\n" OK_ARR,
     "svc.yaml:3:11: 'replicas' is 0"},
    {"max_batch zero", OK_HEAD "max_batch: 0\n" OK_ARR,
     "svc.yaml:3:12: 'max_batch' is 0"},
    {"beams zero", OK_HEAD "beams: 0\n" OK_ARR, "svc.yaml:3:8: 'beams' is 0"},
    {"beams over 64", OK_HEAD "beams: 65\n" OK_ARR, "svc.yaml:3:8: 'beams'"},
    {"missing model", "name: a\n" OK_ARR, "'model'"},
    {"missing name", "model: Llama-3.1-8B\n" OK_ARR, "'name'"},
    {"empty precision", OK_HEAD "precision: ''\n" OK_ARR,
     "svc.yaml:3:13: 'precision' must not be empty"},
    {"ttft_slo zero", OK_HEAD "ttft_slo: 0 s\n" OK_ARR,
     "svc.yaml:3:11: 'ttft_slo' must be greater than zero"},
    {"tpot_slo not a time", OK_HEAD "tpot_slo: 100 W\n" OK_ARR,
     "svc.yaml:3:15: "},
    {"missing arrivals", OK_HEAD, "'arrivals'"},
    {"bad arrivals kind", OK_HEAD "arrivals: {kind: hawkes}\n",
     "svc.yaml:3:18: "},
    {"arrivals rate zero", OK_HEAD "arrivals: {rate: 0}\n", "svc.yaml:3:18: "},
    {"trace without a file", OK_HEAD "arrivals: {kind: trace}\n",
     "a trace needs a file"},
    {"name with a slash", "name: a/b\nmodel: m\n" OK_ARR,
     "svc.yaml:1:7: service name 'a/b' cannot be a telemetry group name"},
    {"unknown key", OK_HEAD "batch: 4\n" OK_ARR, "svc.yaml:3:1: "},
    {"negative timeout", OK_HEAD "timeout: -5 s\n" OK_ARR,
     "svc.yaml:3:10: 'timeout' is -5 s"},
    {"timeout not a time", OK_HEAD "timeout: 10 GB\n" OK_ARR,
     "svc.yaml:3:13: 'timeout': 'GB' is a unit of data size"},
    {"negative max_queue", OK_HEAD "max_queue: -1\n" OK_ARR,
     "svc.yaml:3:12: 'max_queue' is -1"},
    {"max_queue not an integer", OK_HEAD "max_queue: 2.5\n" OK_ARR,
     "svc.yaml:3:12: 'max_queue' must be an integer"},
};

static void bad_yaml_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&inf_schema, "svc.yaml", b->yaml, b->message);
}

/* ---- Allocation failures ------------------------------------------------
 * A service on an engine on a failing allocator. Construction: every k-th
 * allocation refused in turn (test_alloc_failures). A run: the service
 * built, then the k-th allocation after it refused (the request pool, a
 * replica's heap, the interval arrays, the engine's queue grow as
 * requests come): the run must stop with SIM_ENOMEM, the totals still add
 * up, and destroying everything must leave no block live. */
#define ALLOC_SVC                                                              \
  "name: a\nmodel: Llama-3.1-70B\ntp: 2\nreplicas: 3\nmax_batch: 32\n"         \
  "arrivals: {rate: 4, prompt: {mean: 500, sigma: 1}, output: {mean: 100, "    \
  "sigma: 1}}\n"

typedef struct alloc_ctx {
  inf_config c;
  rl_replica r;
  bool fluid; /* inf_create_fluid instead */
} alloc_ctx;

typedef struct svc_rig {
  const sim_allocator *a;
  sim_engine *e;
  inf_service *s;
} svc_rig;

static void drop_svc_rig(void *obj) {
  svc_rig *g = obj;
  if (g == NULL)
    return;
  inf_destroy(g->s);
  sim_engine_destroy(g->e);
  sim_free(g->a, g);
}

static void *make_svc_rig(const sim_allocator *a, void *ctx, sim_error *err) {
  const alloc_ctx *x = ctx;
  svc_rig *g = sim_calloc(a, 1, sizeof *g);
  if (g == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  g->a = a;
  if ((g->e = sim_engine_create(a)) == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    drop_svc_rig(g);
    return NULL;
  }
  arr_gen *gen = arr_create(&x->c.arrivals, NULL, 5, 0, a, err);
  if (gen == NULL || (g->s = (x->fluid ? inf_create_fluid : inf_create)(
                          g->e, &x->c, &x->r, gen, 10, err)) == NULL) {
    drop_svc_rig(g);
    return NULL;
  }
  return g;
}

static void alloc_ctx_open(alloc_ctx *x) {
  memset(x, 0, sizeof *x);
  bind_ok(ALLOC_SVC, &x->c);
  x->r = test_replica(H100, x->c.model, x->c.precision, (int)x->c.tp);
}

static void create_allocation_failures(void **state) {
  (void)state;
  alloc_ctx x;
  alloc_ctx_open(&x);
  assert_true(
      test_alloc_failures("inf_create", make_svc_rig, drop_svc_rig, &x) > 4);
  scn_release(&inf_schema, &x.c);
}

/* So does a service with shared prompts (their tables, inference_prompts.c). */
static void create_allocation_failures_with_a_pool(void **state) {
  (void)state;
  alloc_ctx x;
  memset(&x, 0, sizeof x);
  bind_ok("prompt_pool: 100\n" ALLOC_SVC, &x.c);
  x.r = test_replica(H100, x.c.model, x.c.precision, (int)x.c.tp);
  assert_int_equal(x.c.prompt_pool, 100);
  assert_true(test_alloc_failures("inf_create with a prompt pool",
                                  make_svc_rig, drop_svc_rig, &x) > 6);
  scn_release(&inf_schema, &x.c);
}

/* The fluid service's construction fails as cleanly. */
static void create_fluid_allocation_failures(void **state) {
  (void)state;
  alloc_ctx x;
  alloc_ctx_open(&x);
  x.fluid = true;
  assert_true(test_alloc_failures("inf_create_fluid", make_svc_rig,
                                  drop_svc_rig, &x) > 4);
  scn_release(&inf_schema, &x.c);
}

static void run_allocation_failures(void **state) {
  (void)state;
  alloc_ctx x;
  alloc_ctx_open(&x);
  long refused = 0;
  for (long k = 1;; k++) {
    test_alloc t;
    test_alloc_init(&t, 0);
    sim_error err = {0};
    svc_rig *g = make_svc_rig(&t.hook, &x, &err);
    if (g == NULL)
      fail_msg("%s", err.msg);
    t.fail_at = t.calls + k;
    int rc = sim_engine_run(g->e, to_ns(20));
    bool hit = t.calls >= t.fail_at;
    inf_totals tot = inf_totals_of(g->s);
    assert_conserved(&tot);
    drop_svc_rig(g);
    if (t.live != 0)
      fail_msg("allocation %ld of the run refused: %ld blocks left", k, t.live);
    if (!hit) { /* the run needed fewer: it must have gone through */
      assert_int_equal(rc, SIM_OK);
      assert_true(tot.completed > 0);
      break;
    }
    if (rc != SIM_ENOMEM)
      fail_msg("allocation %ld of the run refused: the run gave %s, not "
               "SIM_ENOMEM",
               k, sim_err_name(rc));
    refused++;
  }
  print_message("%ld allocations in the run, each refused in turn\n", refused);
  assert_true(refused > 3); /* the pool, a heap, the intervals at least */
  scn_release(&inf_schema, &x.c);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, same_seed_same_run);
  TEST_ADD(tests, n, trace_replays_through_the_service);
  TEST_ADD(tests, n, run_quantiles_match_exact);
  TEST_ADD(tests, n, create_refuses_what_cannot_run);
  TEST_ADD(tests, n, create_allocation_failures);
  TEST_ADD(tests, n, create_allocation_failures_with_a_pool);
  TEST_ADD(tests, n, create_fluid_allocation_failures);
  TEST_ADD(tests, n, run_allocation_failures);
  TEST_ADD(tests, n, schema_defaults);
  TEST_ROWS(tests, n, bad_yaml_is_rejected, bad_yaml);
  return _cmocka_run_group_tests("inference_config", tests, n,
                                 test_catalogs_load, test_catalogs_release);
}
