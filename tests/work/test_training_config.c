/* test_training_config.c - training job configs: schema and precision
 * refusals, defaults and round trips, determinism for a seed, streams of
 * jobs, and the pool under allocation failures. */
#include "test_training_bench.h"

/* ---- 8. Schema --------------------------------------------------------- */
#define BASE                                                                   \
  "name: j\nmodel: Llama-3.1-8B\ntokens_per_iteration: 1048576\n"              \
  "iterations: 10\n"

static const test_bad_yaml bad_yaml[] = {
    {"zero dp", BASE "dp: 0\n", "train.yaml:5:5: 'dp' is 0"},
    {"deadline for a stream", BASE "count: 3\ndeadline: 5 h\n",
     "train.yaml:6:11: one deadline for a stream of 3 jobs"},
    {"stage_work count", BASE "pp: 4\nstage_work: [1, 1, 1]\n",
     "train.yaml:6:14: 'stage_work' has 3 entries; pp is 4"},
    {"stage_work zero", BASE "pp: 2\nstage_work: [1, 0]\n",
     "train.yaml:6:17: 'stage_work' entry 1 must be greater than zero"},
    {"stage_work unit", BASE "pp: 2\nstage_work: [1, 2 W]\n",
     "train.yaml:6:17: 'stage_work' entry 1: "},
    {"mfu above 100%", BASE "mfu: 120%\n", "train.yaml:5:6: 'mfu' is 120%"},
    {"mfu zero", BASE "mfu: 0%\n", "train.yaml:5:6: 'mfu' must be greater"},
    {"missing model",
     "name: j\ntokens_per_iteration: 1048576\niterations: 10\n",
     "missing required key 'model'"},
    {"missing iterations",
     "name: j\nmodel: Llama-3.1-8B\ntokens_per_iteration: 1\n",
     "missing required key 'iterations'"},
    {"zero iterations",
     "name: j\nmodel: m\ntokens_per_iteration: 1\niterations: 0\n",
     "train.yaml:4:13: 'iterations' is 0"},
    {"comm_share 100%", BASE "comm_share: 100%\n",
     "train.yaml:5:13: 'comm_share' must be below 100%"},
    {"checkpoint without unit", BASE "checkpoint_every: 30\n", "train.yaml:5:"},
    {"negative mtbf", BASE "mtbf: -5 h\n", "train.yaml:5:7: 'mtbf'"},
    {"unknown key", BASE "gpus: 8\n", "train.yaml:5:1: "},
    {"speed_tuning not a bool", BASE "speed_tuning: yes please\n",
     "train.yaml:5:15: 'speed_tuning' must be true or false"},
};

static void bad_yaml_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&train_schema, "train.yaml", b->yaml, b->message);
}

/* Defaults, and the resolved scenario reads back to the same config. */
static void defaults_and_round_trip(void **state) {
  (void)state;
  train_config c, d;
  bind_ok(BASE "pp: 3\nstage_work: [1.25, 1, 0.5]\n", &c);
  assert_string_equal(c.precision, "fp16");
  assert_null(c.gpu);
  assert_int_equal(c.dp * c.tp, 1);
  assert_close(c.mfu, 0.4, 0, 0);
  assert_close(c.comm_share, 0.1, 0, 0);
  assert_int_equal(c.microbatches, 8);
  assert_close(c.checkpoint_every_s, 1800, 0, 0);
  assert_close(c.checkpoint_s, 60, 0, 0);
  assert_close(c.restart_s, 600, 0, 0);
  /* The phase activities (training_scn.c cites them); compute from the
   * MFU unless given. */
  assert_true(isnan(c.act_compute));
  assert_close(c.act_idle, 0.25, 0, 0);
  assert_close(c.act_comm, 0.5, 0, 0);
  assert_close(c.act_checkpoint, 0.1, 0, 0);
  assert_true(isnan(c.mtbf_s));
  assert_false(c.speed_tuning);
  assert_int_equal(c.nstage_work, 3);
  assert_close(c.stage_work[0], 1.25, 0, 0);
  assert_close(c.stage_work[2], 0.5, 0, 0);
  char *text = scn_emit(&train_schema, &c);
  assert_non_null(text);
  bind_ok(text, &d);
  assert_int_equal(d.nstage_work, 3);
  for (size_t k = 0; k < 3; k++)
    assert_close(d.stage_work[k], c.stage_work[k], 0, 0);
  assert_true(isnan(d.act_compute));
  assert_close(d.act_comm, c.act_comm, 0, 0);
  assert_true(isnan(d.mtbf_s));
  assert_false(d.speed_tuning);
  free(text);
  scn_release(&train_schema, &c);
  scn_release(&train_schema, &d);
}

/* speed_tuning: true binds and survives the resolved scenario, here of
 * a job without stage_work (written back as an empty list: all equal). */
static void speed_tuning_round_trip(void **state) {
  (void)state;
  train_config c, d;
  bind_ok(BASE "pp: 2\nspeed_tuning: true\n", &c);
  assert_true(c.speed_tuning);
  char *text = scn_emit(&train_schema, &c);
  assert_non_null(text);
  assert_non_null(strstr(text, "speed_tuning: true"));
  bind_ok(text, &d);
  assert_true(d.speed_tuning);
  assert_int_equal(d.pp, 2);
  assert_int_equal(d.nstage_work, 0);
  free(text);
  scn_release(&train_schema, &c);
  scn_release(&train_schema, &d);
}

/* ---- 9. Precision the GPU lacks ---------------------------------------- */
static void fp8_on_a100_refused(void **state) {
  (void)state;
  train_config c;
  bind_ok(BASE "precision: fp8\ngpu: A100-SXM\n", &c);
  sim_engine *e = sim_engine_create(NULL);
  train_pool *p = train_pool_create(e, 1, NULL, NULL);
  assert_non_null(p);
  sim_error err = {0};
  size_t job = 99;
  assert_int_equal(train_add(p, &c, gpu_catalog_find(&cats.gpu, "A100-SXM"),
                             llm_catalog_find(&cats.llm, "Llama-3.1-8B"),
                             llm_catalog_precision(&cats.llm, "fp8"), &job,
                             &err),
                   SIM_EINPUT);
  print_message("%s\n", err.msg);
  assert_non_null(strstr(err.msg, "fp8"));
  assert_non_null(strstr(err.msg, "A100-SXM"));
  assert_non_null(strstr(err.msg, "job 'j'"));
  assert_int_equal(train_count(p), 0);
  assert_int_equal(job, 99);
  train_pool_destroy(p);
  sim_engine_destroy(e);
  scn_release(&train_schema, &c);
}

/* ---- 10. Determinism ---------------------------------------------------- */
static void deterministic_for_a_seed(void **state) {
  (void)state;
  static journal j1, j2, j3;
  bench a, b, x;
  run_logged(&j1, &a, 8 * 300.0, 11);
  run_logged(&j2, &b, 8 * 300.0, 11);
  run_logged(&j3, &x, 8 * 300.0, 12);
  const train_stats *sa = stats(&a), *sb = stats(&b), *sx = stats(&x);
  assert_int_equal(sa->failures, sb->failures);
  assert_true(sa->end_s == sb->end_s);
  assert_true(sa->lost_gpu_s == sb->lost_gpu_s);
  assert_true(sa->lost_energy_j == sb->lost_energy_j);
  assert_int_equal(j1.n, j2.n);
  for (size_t k = 0; k < j1.n; k++)
    assert_true(j1.log[k].t == j2.log[k].t);
  assert_true(sx->end_s != sa->end_s);
  bench_close(&a);
  bench_close(&b);
  bench_close(&x);
}

/* Two jobs in one pool draw from their own streams: adding a second job
 * does not move the first one's failures. */
static void streams_per_job(void **state) {
  (void)state;
  static journal jr;
  bench alone;
  run_logged(&jr, &alone, 8 * 300.0, 5);
  double end = stats(&alone)->end_s;
  bench b;
  bench_open(&b, LOSSY, 5, NULL, NULL);
  b.c.mtbf_s = 8 * 300.0;
  size_t second;
  sim_error err = {0};
  assert_int_equal(
      train_add(b.p, &b.c, b.g, llm_catalog_find(&cats.llm, "Llama-3.1-8B"),
                llm_catalog_precision(&cats.llm, "fp16"), &second, &err),
      SIM_OK);
  assert_int_equal(second, 1);
  assert_int_equal(train_count(b.p), 2);
  assert_int_equal(train_start(b.p, second), SIM_OK);
  assert_int_equal(train_start(b.p, b.job), SIM_OK);
  assert_int_equal(train_start(b.p, b.job), SIM_ESTATE);
  run_to(&b, 30 * DAY_NS);
  assert_true(stats(&b)->end_s == end);
  assert_true(train_stats_of(b.p, second)->end_s != end);
  bench_close(&b);
  bench_close(&alone);
}

/* ---- Allocation failures ------------------------------------------------
 * An engine on a failing allocator, a pool on it and some jobs: every
 * k-th allocation refused in turn, each refusal must come back as
 * SIM_ENOMEM with nothing left behind. More than 8 jobs grow the job
 * array past its first capacity. */
typedef struct alloc_row {
  const char *name;
  size_t jobs;
} alloc_row;

static const alloc_row alloc_rows[] = {{"allocation failures, 1 job", 1},
                                       {"allocation failures, 9 jobs", 9},
                                       {"allocation failures, 20 jobs", 20}};

typedef struct alloc_ctx {
  const alloc_row *row;
  train_config c;
  const gpu_spec *g;
  const llm_model *m;
  const llm_precision *w;
} alloc_ctx;

typedef struct pool_rig {
  const sim_allocator *a;
  sim_engine *e;
  train_pool *p;
} pool_rig;

static void drop_pool_rig(void *obj) {
  pool_rig *r = obj;
  if (r == NULL)
    return;
  train_pool_destroy(r->p);
  sim_engine_destroy(r->e);
  sim_free(r->a, r);
}

static void *make_pool_rig(const sim_allocator *a, void *ctx, sim_error *err) {
  const alloc_ctx *x = ctx;
  pool_rig *r = sim_calloc(a, 1, sizeof *r);
  if (r == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  r->a = a;
  r->e = sim_engine_create(a);
  r->p = r->e != NULL ? train_pool_create(r->e, 7, NULL, NULL) : NULL;
  if (r->p == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    drop_pool_rig(r);
    return NULL;
  }
  for (size_t k = 0; k < x->row->jobs; k++) {
    size_t job;
    if (train_add(r->p, &x->c, x->g, x->m, x->w, &job, err) != SIM_OK) {
      drop_pool_rig(r);
      return NULL;
    }
    assert_int_equal(job, k);
  }
  return r;
}

static void pool_allocation_failures(void **state) {
  alloc_ctx x = {.row = *state};
  bind_ok("name: a\nmodel: Llama-3.1-70B\npp: 4\nmicrobatches: 8\n"
          "tokens_per_iteration: 1048576\niterations: 10\n",
          &x.c);
  x.g = gpu_catalog_find(&cats.gpu, "H100-SXM");
  x.m = llm_catalog_find(&cats.llm, x.c.model);
  x.w = llm_catalog_precision(&cats.llm, x.c.precision);
  assert_true(x.g != NULL && x.m != NULL && x.w != NULL);
  long calls =
      test_alloc_failures(x.row->name, make_pool_rig, drop_pool_rig, &x);
  /* the rig, the engine's, the pool, the jobs' array, a block per job */
  assert_true(calls > (long)x.row->jobs + 2);
  scn_release(&train_schema, &x.c);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ROWS(tests, n, bad_yaml_is_rejected, bad_yaml);
  TEST_ADD(tests, n, defaults_and_round_trip);
  TEST_ADD(tests, n, speed_tuning_round_trip);
  TEST_ADD(tests, n, fp8_on_a100_refused);
  TEST_ADD(tests, n, deterministic_for_a_seed);
  TEST_ADD(tests, n, streams_per_job);
  TEST_ROWS(tests, n, pool_allocation_failures, alloc_rows);
  return _cmocka_run_group_tests("training_config", tests, n,
                                 test_catalogs_load, test_catalogs_release);
}
