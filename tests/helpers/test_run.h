/* test_run.h - a whole factory run for a test: a scenario (a file, or
 * text written to one) loaded with overrides, run to its end into a
 * memory sink, its books closed by factory_finish. Any failure fails the
 * test with the library's message. */
#ifndef TEST_RUN_H
#define TEST_RUN_H
#include <stddef.h>

#include "engine.h"
#include "factory.h"
#include "tel.h"

typedef struct test_run {
  factory_scenario sc;
  tel_sink *sink;
  sim_engine *engine;
  factory *factory;
  factory_summary sum;
} test_run;

/* Writes text to test_out_path(name) and returns that path. */
const char *test_scenario_file(const char *name, const char *text);

/* Loads the scenario at path with nsets overrides, runs it and closes
 * its books into *r (the sink committed). Free with test_run_free. */
void test_run_file(test_run *r, const char *path, const char *const *sets,
                   size_t nsets);

void test_run_free(test_run *r);

/* A column of GROUP (rows and, where not NULL, its width), failing the
 * test if it is missing. */
const double *test_column(const test_run *r, const char *group, const char *col,
                          size_t *rows, size_t *width);

/* A /facility column, failing the test if it is missing. */
const double *test_facility_column(const test_run *r, const char *col,
                                   size_t *rows);

#endif
