/* test_run.c - see test_run.h. */
#include "test_run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

const char *test_scenario_file(const char *name, const char *text) {
  const char *path = test_out_path(name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

void test_run_file(test_run *r, const char *path, const char *const *sets,
                   size_t nsets) {
  sim_error err = {0};
  memset(r, 0, sizeof *r);
  if (factory_scenario_load(path, sets, nsets, &r->sc, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  r->sink = tel_memory_create();
  r->engine = sim_engine_create(NULL);
  r->factory = factory_create(&r->sc, r->engine, r->sink, &err);
  if (r->factory == NULL)
    fail_msg("%s", err.msg);
  assert_int_equal(sim_engine_run(r->engine, factory_duration(&r->sc.cfg)),
                   SIM_OK);
  if (factory_finish(r->factory, &r->sum, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(tel_commit(r->sink), SIM_OK);
}

void test_run_free(test_run *r) {
  tel_destroy(r->sink);
  factory_destroy(r->factory);
  sim_engine_destroy(r->engine);
  factory_scenario_release(&r->sc);
}

const double *test_column(const test_run *r, const char *group, const char *col,
                          size_t *rows, size_t *width) {
  const double *v = tel_memory_column(r->sink, group, col, rows, width);
  if (v == NULL)
    fail_msg("no column %s/%s", group, col);
  return v;
}

const double *test_facility_column(const test_run *r, const char *col,
                                   size_t *rows) {
  return test_column(r, "facility", col, rows, NULL);
}
