/* test_workloads_run.h - what the workload tests share: the scenario they
 * write (under the name WORK_SCENARIO, one per test program, as ctest
 * runs them side by side in one folder), the base factory, whole runs
 * with their columns or from scenarios/, and the rows of bad input
 * (test_workloads.c, test_workloads_faults.c). Header only. */
#ifndef TEST_WORKLOADS_RUN_H
#define TEST_WORKLOADS_RUN_H

#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factory.h"
#include "power.h"
#include "test_run.h"
#include "validate_row.h"

static inline const char *write_scenario(const char *text) {
  return test_scenario_file(WORK_SCENARIO, text);
}

/* One NVL72 rack: a chat service on 4 GPUs, a 32-GPU job from the start,
 * a 64-GPU job at 10 min that must wait for it (68 GPUs are free at
 * most), and a 4-GPU job at 20 min that backfills beside them. */
static const char base[] =
    "name: w\nseed: 5\nduration: 2 h\nsample_period: 1 min\n"
    "power: {cap: 200 kW}\n"
    "racks:\n"
    "  - {name: nvl, count: 1, gpu: GB200, gpus_per_rack: 72,\n"
    "     other_power_idle: 16.8 kW, other_power_max: 33.6 kW,\n"
    "     load: {level: 0%, noise: 0}}\n"
    "services:\n"
    "  - name: chat\n    model: Llama-3.1-8B\n    precision: fp8\n"
    "    replicas: 4\n"
    "    arrivals: {kind: poisson, rate: 10, prompt: {mean: 500},\n"
    "               output: {mean: 200}}\n"
    "training:\n"
    "  - {name: first, model: Llama-3.1-8B, dp: 8, tp: 4,\n"
    "     tokens_per_iteration: 1048576, iterations: 1500}\n"
    "  - {name: big, model: Llama-3.1-8B, dp: 16, tp: 4, arrival: 10 min,\n"
    "     tokens_per_iteration: 1048576, iterations: 600}\n"
    "  - {name: small, model: Llama-3.1-8B, dp: 1, tp: 4, arrival: 20 min,\n"
    "     tokens_per_iteration: 65536, iterations: 200}\n";

typedef test_run run;

static inline void run_scenario(run *r, const char *text,
                                const char *const *sets, size_t nsets) {
  test_run_file(r, write_scenario(text), sets, nsets);
}

static inline void run_free(run *r) { test_run_free(r); }

static inline const double *job_column(const run *r, const char *col,
                                       size_t *rows) {
  const double *v = tel_memory_table_column(r->sink, "jobs", col, rows);
  if (v == NULL)
    fail_msg("no /jobs column %s", col);
  return v;
}

static inline const double *facility(const run *r, const char *col,
                                     size_t *rows) {
  return test_facility_column(r, col, rows);
}

/* The override that selects power policy name, in set (64 bytes). */
static inline void policy_set(char *set, const char *name) {
  snprintf(set, 64, "power.policy=%s", name);
}

static inline double max_of(const double *v, size_t n) {
  double m = -INFINITY;
  for (size_t i = 0; i < n; i++)
    m = fmax(m, v[i]);
  return m;
}
/* Runs the scenario file at AIFSIM_SOURCE_DIR/scenarios/name with
 * overrides; r is left for the caller's checks and run_free. */
static inline void run_file(run *r, const char *name, const char *const *sets,
                            size_t nsets) {
  char path[4096];
  snprintf(path, sizeof path, "%s/scenarios/%s", AIFSIM_SOURCE_DIR, name);
  test_run_file(r, path, sets, nsets);
}
typedef struct bad_case {
  const char *name;
  const char *set;
  const char *message;
} bad_case;
static inline void bad_workload_input(void **state) {
  const bad_case *c = *state;
  factory_scenario sc;
  sim_error err = {0};
  const char *sets[] = {c->set};
  assert_int_equal(
      factory_scenario_load(write_scenario(base), sets, 1, &sc, &err),
      SIM_EINPUT);
  /* A position first (FILE:LINE:COLUMN: or --set ...:1:COLUMN:). */
  char *colon = strchr(err.msg, ':');
  assert_non_null(colon);
  if (strstr(err.msg, c->message) == NULL)
    fail_msg("got '%s', want '%s'", err.msg, c->message);
}

#endif
