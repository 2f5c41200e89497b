/* test_gpujob.c - generic GPU jobs (gpujob.h): the schema's refusals, the
 * training job each maps to, and, run by the training model on an engine,
 * the run time under a clock cap: work stretches as the header's formula
 * says, duration does not, and the mean activity over a cycle is the
 * phases' mean. */
#include "test_catalogs.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "engine.h"
#include "gpujob.h"
#include "training.h"

static void bind_job(const char *yaml, gjob_config *c) {
  sim_error err = {0};
  memset(c, 0, sizeof *c);
  if (scn_bind_string("jobs.yaml", yaml, &gjob_schema, c, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

static const test_bad_yaml bad_yaml[] = {
    {"no length", "name: j\ngpus: 8\n",
     "jobs.yaml:1:7: a GPU job needs one of 'duration' and 'work'"},
    {"both lengths", "name: j\ngpus: 8\nduration: 1 h\nwork: 1 h\n",
     "jobs.yaml:4:7: a GPU job needs one of"},
    {"phases not a cycle",
     "name: j\ngpus: 8\nwork: 1 h\nphases: {compute: 50%, comm: 20%}\n",
     "jobs.yaml:4:10: the phases add to 70%"},
    {"no compute",
     "name: j\ngpus: 8\nwork: 1 h\nphases: {compute: 0%, io: 100%}\n",
     "a job needs some compute"},
    {"starts before arrival",
     "name: j\ngpus: 8\nwork: 1 h\narrival: 2 h\nstart: 1 h\n",
     "jobs.yaml:5:8: the job starts at 3600 s, before its arrival"},
    {"zero GPUs", "name: j\ngpus: 0\nwork: 1 h\n", "jobs.yaml:2:7: 'gpus'"},
    {"negative work", "name: j\ngpus: 1\nwork: -1 h\n", "jobs.yaml:3:7:"},
};

static void bad_yaml_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&gjob_schema, "jobs.yaml", b->yaml, b->message);
}

/* The mapping: one stage of G GPUs, cycles that add to the length
 * exactly, the tail's share and mean activity, the flags. */
static void maps_to_a_training_job(void **state) {
  (void)state;
  gjob_config c;
  bind_job("name: j\ngpus: 16\nwork: 1000 s\ncycle: 7 s\nactivity: 90%\n"
           "phases: {compute: 70%, comm: 20%, io: 10%}\nact_comm: 60%\n"
           "act_io: 30%\narrival: 5 s\nstart: 9 s\n",
           &c);
  train_config t;
  gjob_to_train(&c, &t);
  assert_int_equal(t.dp * t.pp * t.tp, 16);
  assert_int_equal(t.pp, 1);
  assert_int_equal(t.microbatches, 1);
  assert_int_equal(t.iterations, 143); /* round(1000 / 7) */
  assert_close((double)t.iterations * t.iteration_s, 1000, 1e-15, 0);
  assert_close(t.comm_share, 0.3, 1e-15, 0);
  assert_close(t.act_comm, (0.2 * 0.6 + 0.1 * 0.3) / 0.3, 1e-15, 0);
  assert_close(t.act_compute, 0.9, 0, 0);
  assert_null(t.model);
  assert_false(t.fixed_time);
  assert_true(t.fixed_start);
  assert_close(t.start_s, 9, 0, 0);
  assert_close(t.arrival_s, 5, 0, 0);
  assert_true(isnan(t.mtbf_s));
  assert_close(t.checkpoint_every_s, 0, 0, 0);
  scn_release(&gjob_schema, &c);
}

/* Run time at clock share phi, as the training model runs the job, and
 * the formula's; and the mean activity over whole cycles. */
typedef struct clock_row {
  const char *name;
  const char *yaml;
  double phi;
} clock_row;

static const clock_row clock_rows[] = {
    {"work, full clock", "work: 600 s\n", 1},
    {"work under a cap", "work: 600 s\nphases: {compute: 60%, comm: 30%, io: 10%}\n",
     0.6},
    {"all compute under a cap", "work: 600 s\n", 0.5},
    {"duration under a cap", "duration: 600 s\nphases: {compute: 60%, comm: 40%}\n",
     0.5},
};

static void run_time_under_clocks(void **state) {
  const clock_row *row = *state;
  char yaml[256];
  snprintf(yaml, sizeof yaml, "name: j\ngpus: 8\ncycle: 10 s\nactivity: 80%%\n%s",
           row->yaml);
  gjob_config c;
  bind_job(yaml, &c);
  train_config t;
  gjob_to_train(&c, &t);
  const gpu_spec *g = gpu_catalog_find(&cats.gpu, "H100-SXM");
  sim_engine *e = sim_engine_create(NULL);
  train_pool *p = train_pool_create(e, 1, NULL, NULL);
  size_t job;
  sim_error err = {0};
  assert_int_equal(train_add(p, &t, g, NULL, NULL, &job, &err), SIM_OK);
  assert_int_equal(train_start(p, job), SIM_OK);
  double phi = fmax(row->phi, gpu_phi_min(g));
  assert_int_equal(train_set_clocks(p, job, &phi), SIM_OK);
  double want = gjob_run_s(&c, gpu_speed_compute(g, phi));
  assert_close(train_current_iteration_s(p, job) * (double)t.iterations, want,
               1e-12, 0);
  if (!isnan(c.duration_s))
    assert_close(want, c.duration_s, 0, 0);
  else if (phi < 1)
    assert_true(want > c.work_s);
  /* Over one whole cycle the activity is the phases' mean, weighted by
   * their times at the clock (compute stretched, the tail not). */
  double tail = c.phases.comm + c.phases.io;
  double tc = (1 - tail) / (isnan(c.work_s) ? 1 : gpu_speed_compute(g, phi));
  double mean = (tc * 0.8 + c.phases.comm * 0.5 + c.phases.io * 0.1) /
                (tc + tail);
  assert_close(train_activity(p, job, 0, train_current_iteration_s(p, job)),
               mean, 1e-9, 0);
  assert_int_equal(sim_engine_run(e, (sim_time)(2 * want * 1e9)), SIM_OK);
  assert_int_equal(train_state_of(p, job), TRAIN_DONE);
  assert_close(train_stats_of(p, job)->end_s, want, 1e-9, 1e-9);
  train_pool_destroy(p);
  sim_engine_destroy(e);
  scn_release(&gjob_schema, &c);
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, bad_yaml_is_rejected, bad_yaml);
  TEST_ADD(tests, n, maps_to_a_training_job);
  TEST_ROWS(tests, n, run_time_under_clocks, clock_rows);
  return _cmocka_run_group_tests("gpujob", tests, n, test_catalogs_load,
                                 test_catalogs_release);
}
