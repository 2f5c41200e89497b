/* test_training_bench.h - the bench the training tests share: one job of a
 * config in a pool on a fresh engine, and the journal of its transitions
 * (test_training.c, test_training_tuning.c, test_training_config.c).
 * Header only. */
#ifndef TEST_TRAINING_BENCH_H
#define TEST_TRAINING_BENCH_H

#include "test_catalogs.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "training.h"
#include "validate_row.h"

#define DAY_NS (86400 * SIM_SEC)

static inline void bind_ok(const char *yaml, train_config *c) {
  sim_error err = {0};
  memset(c, 0, sizeof *c);
  if (scn_bind_string("train.yaml", yaml, &train_schema, c, NULL, &err) !=
      SIM_OK)
    fail_msg("%s", err.msg);
}

/* One job of config yaml in a pool on a fresh engine; the catalogs give
 * the model and GPU named in the config (default GPU H100-SXM). */
typedef struct bench {
  sim_engine *e;
  train_pool *p;
  train_config c;
  size_t job;
  const gpu_spec *g;
} bench;

static inline void bench_open(bench *b, const char *yaml, uint64_t seed,
                              train_done_fn fn, void *ctx) {
  bind_ok(yaml, &b->c);
  b->g = gpu_catalog_find(&cats.gpu, b->c.gpu ? b->c.gpu : "H100-SXM");
  const llm_model *m = llm_catalog_find(&cats.llm, b->c.model);
  const llm_precision *w = llm_catalog_precision(&cats.llm, b->c.precision);
  assert_non_null(b->g);
  assert_non_null(m);
  assert_non_null(w);
  b->e = sim_engine_create(NULL);
  assert_non_null(b->e);
  b->p = train_pool_create(b->e, seed, fn, ctx);
  assert_non_null(b->p);
  sim_error err = {0};
  if (train_add(b->p, &b->c, b->g, m, w, &b->job, &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

static inline void bench_close(bench *b) {
  train_pool_destroy(b->p);
  sim_engine_destroy(b->e);
  scn_release(&train_schema, &b->c);
}

static inline void run_to(bench *b, sim_time t) {
  int rc = sim_engine_run(b->e, t);
  if (rc != SIM_OK)
    fail_msg("run: %s", sim_engine_errmsg(b->e));
}

static inline const train_stats *stats(const bench *b) {
  return train_stats_of(b->p, b->job);
}

/* ---- 4. Lost work, replayed from the transitions -----------------------
 * Every state change is logged with the time and the job's energy
 * counter; a tick adds 1 kJ per second while the job holds its GPUs. From
 * the log alone the test rebuilds what the definitions in training.h say
 * was lost, and compares. */
enum { MAX_LOG = 4096 };

typedef struct entry {
  sim_time t;
  train_state state;
  double energy, progress;
} entry;

typedef struct journal {
  bench *b;
  entry log[MAX_LOG];
  size_t n;
  uint32_t tick_kind;
  sim_handle tick;
  double max_progress;
} journal;

static inline void record(void *ctx, size_t job) {
  journal *jr = ctx;
  (void)job;
  if (jr->n == MAX_LOG)
    fail_msg("log full");
  const train_stats *s = stats(jr->b);
  jr->log[jr->n++] =
      (entry){sim_engine_now(jr->b->e), train_state_of(jr->b->p, jr->b->job),
              s->energy_j, s->iterations_done};
}

static inline int on_tick(sim_engine *e, void *ctx, const sim_event *ev) {
  (void)e;
  (void)ev;
  journal *jr = ctx;
  train_state st = train_state_of(jr->b->p, jr->b->job);
  if (st != TRAIN_WAITING && st != TRAIN_DONE)
    train_add_energy(jr->b->p, jr->b->job, 1000);
  jr->max_progress = fmax(jr->max_progress, stats(jr->b)->iterations_done);
  return SIM_OK;
}

#define LOSSY                                                                  \
  "name: lossy\nmodel: Llama-3.1-8B\ndp: 8\n"                                  \
  "tokens_per_iteration: 1048576\niterations: 2000\n"                          \
  "checkpoint_every: 100 s\ncheckpoint_time: 5 s\nrestart_time: 20 s\n"

/* Opens LOSSY (mtbf_s 0: none) with the journal and the tick attached,
 * and starts it at 0. */
static inline void open_logged(journal *jr, bench *b, double mtbf_s,
                               uint64_t seed) {
  memset(jr, 0, sizeof *jr);
  jr->b = b;
  bench_open(b, LOSSY, seed, record, jr);
  b->c.mtbf_s = mtbf_s;
  assert_int_equal(
      sim_engine_register(b->e, "test tick", on_tick, jr, &jr->tick_kind),
      SIM_OK);
  assert_int_equal(
      sim_engine_every(b->e, SIM_SEC, SIM_SEC, jr->tick_kind, 0, 0, &jr->tick),
      SIM_OK);
  assert_int_equal(train_start(b->p, b->job), SIM_OK);
  record(jr, b->job);
}

/* The same, run to the job's end. */
static inline void run_logged(journal *jr, bench *b, double mtbf_s,
                              uint64_t seed) {
  open_logged(jr, b, mtbf_s, seed);
  run_to(b, 30 * DAY_NS);
  assert_int_equal(train_state_of(b->p, b->job), TRAIN_DONE);
}

#endif
