/* test_inference_rig.h - what the inference tests share: a service on its
 * own engine, and traces written in Azure's format (test_inference.c,
 * test_inference_energy.c, test_inference_config.c). Header only. */
#ifndef TEST_INFERENCE_RIG_H
#define TEST_INFERENCE_RIG_H

#include "test_catalogs.h"
#include "test_mlenergy.h"
#include "test_replica.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>

#include "inference.h"
#include "validate_row.h"

#define H100 "H100-SXM"
#define MAX_REQ 256

/* ---- A service on its own engine --------------------------------------- */

typedef struct rig {
  sim_engine *e;
  inf_config c;
  rl_replica r;
  inf_service *s;
  double sampled_s; /* when the last sample was taken */
} rig;

static inline void bind_ok(const char *yaml, inf_config *c) {
  sim_error err = {0};
  memset(c, 0, sizeof *c);
  if (scn_bind_string("svc.yaml", yaml, &inf_schema, c, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

/* A service of yaml on replicas of gpu, requests from seed, none arriving
 * at or after horizon_s. */
/* A service of yaml on gpu whose KV admission holds the prompt and
 * kv_reserve of the output (roofline.h). */
static inline void rig_open_kv(rig *g, const char *gpu, const char *yaml,
                               uint64_t seed, double horizon_s,
                               double kv_reserve) {
  sim_error err = {0};
  memset(g, 0, sizeof *g);
  bind_ok(yaml, &g->c);
  g->r = test_replica(gpu, g->c.model, g->c.precision, (int)g->c.tp);
  g->r.cfg.kv_reserve = kv_reserve;
  arr_gen *gen = arr_create(&g->c.arrivals, NULL, seed, 0, NULL, &err);
  if (gen == NULL)
    fail_msg("%s", err.msg);
  g->e = sim_engine_create(NULL);
  assert_non_null(g->e);
  g->s = inf_create(g->e, &g->c, &g->r, gen, horizon_s, &err);
  if (g->s == NULL)
    fail_msg("%s", err.msg);
}

/* A fluid service of yaml on H100s, seed 1, an hour's horizon. */
static inline void rig_open_fluid(rig *g, const char *yaml) {
  sim_error err = {0};
  memset(g, 0, sizeof *g);
  bind_ok(yaml, &g->c);
  g->r = test_replica(H100, g->c.model, g->c.precision, (int)g->c.tp);
  arr_gen *gen = arr_create(&g->c.arrivals, NULL, 1, 0, NULL, &err);
  if (gen == NULL)
    fail_msg("%s", err.msg);
  g->e = sim_engine_create(NULL);
  assert_non_null(g->e);
  g->s = inf_create_fluid(g->e, &g->c, &g->r, gen, 3600, &err);
  if (g->s == NULL)
    fail_msg("%s", err.msg);
}

static inline void rig_open(rig *g, const char *gpu, const char *yaml,
                            uint64_t seed, double horizon_s) {
  rig_open_kv(g, gpu, yaml, seed, horizon_s, 1);
}

static inline void rig_close(rig *g) {
  inf_destroy(g->s);
  sim_engine_destroy(g->e);
  scn_release(&inf_schema, &g->c);
}

static inline sim_time to_ns(double t_s) {
  return (sim_time)llround(t_s * 1e9);
}

static inline void run_to(rig *g, double t_s) {
  if (sim_engine_run(g->e, to_ns(t_s)) != SIM_OK)
    fail_msg("run to %g s: %s", t_s, sim_engine_errmsg(g->e));
}

/* Samples the interval since the last sample. */
static inline double sample(rig *g, double *row) {
  double now = sim_time_to_s(sim_engine_now(g->e));
  double dt = now - g->sampled_s;
  inf_sample(g->s, dt, row);
  g->sampled_s = now;
  return dt;
}

static inline void assert_conserved(const inf_totals *t) {
  if (t->arrived != t->completed + t->rejected + t->timed_out + t->dropped +
                        t->waiting + t->in_batch)
    fail_msg("arrived %llu != completed %llu + rejected %llu + timed out "
             "%llu + dropped %llu + waiting %llu + in batch %llu",
             (unsigned long long)t->arrived, (unsigned long long)t->completed,
             (unsigned long long)t->rejected, (unsigned long long)t->timed_out,
             (unsigned long long)t->dropped, (unsigned long long)t->waiting,
             (unsigned long long)t->in_batch);
}

/* ---- Traces written by the tests (Azure format) ------------------------ */

typedef struct trace_row {
  double t; /* s after 00:00:00, at most 7 decimals */
  long prompt, output;
} trace_row;

/* Writes rows to the tests' output folder as name; returns the path (a
 * static buffer). */
static inline const char *write_trace(const char *name, const trace_row *rows,
                                      size_t n) {
  static char path[4096];
  snprintf(path, sizeof path, "%s", test_out_path(name));
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("TIMESTAMP,ContextTokens,GeneratedTokens\n", f);
  for (size_t i = 0; i < n; i++) {
    long whole = (long)floor(rows[i].t);
    long frac = lround((rows[i].t - (double)whole) * 1e7);
    fprintf(f, "2023-11-16 %02ld:%02ld:%02ld.%07ld,%ld,%ld\n", whole / 3600,
            whole / 60 % 60, whole % 60, frac, rows[i].prompt, rows[i].output);
  }
  fclose(f);
  return path;
}

/* A service reading the trace at path, on 8B or another model. */
static inline void trace_yaml(char *buf, size_t size, const char *model,
                              const char *extra, const char *path) {
  snprintf(buf, size,
           "name: svc\nmodel: %s\n%sarrivals: {kind: trace, file: '%s'}\n",
           model, extra, path);
}

#endif
