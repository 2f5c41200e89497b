/* test_inference_prompts.c - prompts shared between requests
 * (inf_config.prompt_pool, inference.h; models/work/inference_prompts.c):
 * copies of one prompt held at once hold its KV once and the copies skip
 * its prefill, whatever order they leave in; a copy arriving after the
 * last holder left pays its prefill again (vLLM's cached-but-freed blocks
 * are not modelled); a replica going down forgets what it held; a pool at
 * least as large as the run's arrivals changes nothing; and the key's
 * scenario errors. The KV figures are read from the replica's state
 * (inference_internal.h), the rest through inference.h. */
#include "test_inference_rig.h"

#include "inference_internal.h"

#define PROMPT 1000
#define LLAMA70 "Llama-3.1-70B"

/* Two requests of prompt 1000 at t = 0, outputs out0 and out1, on 70B
 * (tp 2), with `pool` ("" or a prompt_pool line). */
static void open_pair(rig *g, const char *pool, long out0, long out1,
                      double t1) {
  trace_row rows[] = {{0, PROMPT, out0}, {t1, PROMPT, out1}};
  char yaml[8192], extra[128];
  snprintf(extra, sizeof extra, "tp: 2\n%s", pool);
  trace_yaml(yaml, sizeof yaml, LLAMA70, extra,
             write_trace("inf_prompts.csv", rows, N_OF(rows)));
  rig_open(g, H100, yaml, 1, INFINITY);
}

static double kv_used(const rig *g) { return g->s->rep[0].kv_used; }

/* Runs in steps of 1 ms until `completed` requests have; fails after
 * limit_s. */
static void run_until_completed(rig *g, uint64_t completed, double limit_s) {
  double t = sim_time_to_s(sim_engine_now(g->e));
  while (inf_totals_of(g->s).completed < completed) {
    t += 1e-3;
    if (t > limit_s)
      fail_msg("%llu not completed by %g s", (unsigned long long)completed,
               limit_s);
    run_to(g, t);
  }
}

/* Both copies join at t = 0: the pool holds one prompt and two outputs,
 * prefills once (TTFT one prompt's prefill for both), where unique
 * prompts hold two and prefill twice. */
static void two_copies_hold_one_prompt(void **state) {
  (void)state;
  static const struct {
    const char *pool;
    double kv, prompt_tokens, prefills;
  } cases[] = {{"", 2 * PROMPT + 2 * 100, 2 * PROMPT, 2},
               {"prompt_pool: 1\n", PROMPT + 2 * 100, PROMPT, 1}};
  for (size_t i = 0; i < N_OF(cases); i++) {
    rig g;
    open_pair(&g, cases[i].pool, 100, 100, 0);
    double pre = rl_prefill_s(&g.r, PROMPT, 1);
    run_to(&g, 1e-6); /* admitted, prefilling */
    assert_close(kv_used(&g), cases[i].kv, 0, 0);
    run_until_completed(&g, 2, 60);
    inf_totals t = inf_totals_of(g.s);
    assert_close(t.prompt_tokens, cases[i].prompt_tokens, 0, 0);
    assert_close(inf_ttft_quantile(g.s, 0.5), cases[i].prefills * pre, 0.023,
                 0);
    assert_close(kv_used(&g), 0, 0, 1e-9);
    rig_close(&g);
  }
}

/* Whichever copy leaves first, the prompt stays held by the other: after
 * the first completion the cache holds the prompt and the survivor's
 * output, and nothing after the second. */
static void release_order_does_not_matter(void **state) {
  (void)state;
  static const long outs[][2] = {{50, 200}, {200, 50}};
  for (size_t i = 0; i < N_OF(outs); i++) {
    rig g;
    open_pair(&g, "prompt_pool: 1\n", outs[i][0], outs[i][1], 0);
    run_until_completed(&g, 1, 60);
    assert_close(kv_used(&g), PROMPT + 200, 0, 1e-9);
    run_until_completed(&g, 2, 60);
    assert_close(kv_used(&g), 0, 0, 1e-9);
    assert_int_equal(g.s->prompt_refs[0], 0);
    rig_close(&g);
  }
}

/* A copy arriving after its prompt's last holder left pays its prefill
 * (freed blocks are not kept, inference.h) and takes its first copy's
 * prompt length (1000), not its own draw (500). */
static void a_late_copy_prefills_its_first_length(void **state) {
  (void)state;
  trace_row rows[] = {{0, PROMPT, 10}, {30, 500, 10}};
  char yaml[8192];
  trace_yaml(yaml, sizeof yaml, LLAMA70, "tp: 2\nprompt_pool: 1\n",
             write_trace("inf_prompts_late.csv", rows, N_OF(rows)));
  rig g;
  rig_open(&g, H100, yaml, 1, INFINITY);
  run_to(&g, 60);
  inf_totals t = inf_totals_of(g.s);
  assert_int_equal(t.completed, 2);
  assert_close(t.prompt_tokens, 2 * PROMPT, 0, 0);
  rig_close(&g);
}

/* A replica that goes down drops its requests and the prompts they held:
 * a copy arriving once it is back is prefilled again. */
static void down_forgets_held_prompts(void **state) {
  (void)state;
  rig g;
  open_pair(&g, "prompt_pool: 1\n", 1000, 1000, 2);
  run_to(&g, 1);
  assert_int_equal(g.s->prompt_refs[0], 1);
  assert_int_equal(inf_set_down(g.s, 0, true), SIM_OK);
  assert_int_equal(g.s->prompt_refs[0], 0);
  assert_int_equal(inf_set_down(g.s, 0, false), SIM_OK);
  run_to(&g, 3);
  assert_int_equal(g.s->prompt_refs[0], 1);
  assert_close(inf_totals_of(g.s).prompt_tokens, 2 * PROMPT, 0, 0);
  assert_close(kv_used(&g), PROMPT + 1000, 0, 1e-9);
  rig_close(&g);
}

/* With the pool larger than the arrivals every prompt is unique: the run
 * is the one without the key, bit for bit. */
static void a_pool_of_unique_prompts_changes_nothing(void **state) {
  (void)state;
  static const char *const pools[] = {"", "prompt_pool: 1000000\n"};
  inf_totals t[2];
  double row[2][INF_NCOLS];
  for (int i = 0; i < 2; i++) {
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "name: chat\nmodel: Llama-3.1-8B\nreplicas: 3\nmax_batch: 16\n"
             "%sarrivals: {rate: 30}\n",
             pools[i]);
    rig g;
    rig_open(&g, H100, yaml, 7, 20);
    run_to(&g, 25);
    t[i] = inf_totals_of(g.s);
    sample(&g, row[i]);
    rig_close(&g);
  }
  assert_true(t[0].arrived > 500);
  assert_memory_equal(&t[0], &t[1], sizeof t[0]);
  assert_memory_equal(row[0], row[1], sizeof row[0]);
}

/* Copies share the cache, so more of them fit: 70B on 2 x H100 at
 * prompt 1000 and output 1000 holds floor(cap / 2000) unique requests,
 * and with one prompt up to floor((cap - 1000) / 1000). */
static void copies_fit_a_larger_batch(void **state) {
  (void)state;
  rig g;
  rig_open(&g, H100,
           "name: kv\nmodel: Llama-3.1-70B\ntp: 2\nmax_batch: 100000\n"
           "prompt_pool: 1\narrivals: {rate: 200, prompt: {dist: fixed, "
           "mean: 1000}, output: {dist: fixed, mean: 1000}}\n",
           3, 30);
  double cap = 0;
  assert_int_equal(rl_max_batch_tokens(&g.r, &cap, NULL), SIM_OK);
  uint64_t unique = (uint64_t)floor(cap / 2000),
           most = (uint64_t)floor((cap - 1000) / 1000), seen = 0;
  for (int k = 1; k <= 600; k++) {
    run_to(&g, 0.05 * k);
    inf_totals t = inf_totals_of(g.s);
    assert_conserved(&t);
    assert_true(t.in_batch <= most);
    seen = t.in_batch > seen ? t.in_batch : seen;
  }
  print_message("70B on 2 x H100: %llu unique requests fit, %llu copies of "
                "one prompt; the batch reached %llu\n",
                (unsigned long long)unique, (unsigned long long)most,
                (unsigned long long)seen);
  assert_int_equal(seen, most);
  assert_true(seen > unique);
  rig_close(&g);
}

/* The key's errors, at their line and column. */
#define HEAD "name: a\nmodel: Llama-3.1-8B\n"
#define ARR "arrivals: {rate: 1}\n"

static const test_bad_yaml bad_cases[] = {
    {"negative pool", HEAD "prompt_pool: -1\n" ARR,
     "svc.yaml:3:14: 'prompt_pool' is -1"},
    {"pool not an integer", HEAD "prompt_pool: 10.5\n" ARR,
     "svc.yaml:3:14: 'prompt_pool' must be an integer"},
    {"pool over a million", HEAD "prompt_pool: 1000001\n" ARR,
     "svc.yaml:3:14: 'prompt_pool'"},
    {"pool not a number", HEAD "prompt_pool: all\n" ARR,
     "svc.yaml:3:14: 'prompt_pool'"},
};

static void bad_key_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&inf_schema, "svc.yaml", b->yaml, b->message);
}

/* The fluid granularity refuses the key; so does a table too large. */
static void create_refuses_what_it_cannot_hold(void **state) {
  (void)state;
  static const char *const yamls[] = {
      HEAD "prompt_pool: 1000\n" ARR,
      HEAD "replicas: 1000\nprompt_pool: 1000000\n" ARR};
  static const char *const wants[] = {"request granularity",
                                      "over 268435456 prompt counts"};
  for (int i = 0; i < 2; i++) {
    inf_config c;
    bind_ok(yamls[i], &c);
    rl_replica r = test_replica(H100, c.model, c.precision, 1);
    sim_error err = {0};
    arr_gen *gen = arr_create(&c.arrivals, NULL, 1, 0, NULL, &err);
    assert_non_null(gen);
    sim_engine *e = sim_engine_create(NULL);
    inf_service *s = i == 0 ? inf_create_fluid(e, &c, &r, gen, 10, &err)
                            : inf_create(e, &c, &r, gen, 10, &err);
    assert_null(s);
    assert_int_equal(err.code, SIM_EINVAL);
    if (strstr(err.msg, wants[i]) == NULL)
      fail_msg("expected '%s' in: %s", wants[i], err.msg);
    sim_engine_destroy(e);
    scn_release(&inf_schema, &c);
  }
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ADD(tests, n, two_copies_hold_one_prompt);
  TEST_ADD(tests, n, release_order_does_not_matter);
  TEST_ADD(tests, n, a_late_copy_prefills_its_first_length);
  TEST_ADD(tests, n, down_forgets_held_prompts);
  TEST_ADD(tests, n, a_pool_of_unique_prompts_changes_nothing);
  TEST_ADD(tests, n, copies_fit_a_larger_batch);
  TEST_ROWS(tests, n, bad_key_is_rejected, bad_cases);
  TEST_ADD(tests, n, create_refuses_what_it_cannot_hold);
  return _cmocka_run_group_tests("inference_prompts", tests, n,
                                 test_catalogs_load, test_catalogs_release);
}
