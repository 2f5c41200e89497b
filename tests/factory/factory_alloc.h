/* factory_alloc.h - the allocation-failure checks of a factory, shared by
 * test_factory.c and test_workloads.c (static: each test file has its copy).
 * A factory allocates everything it owns, its workloads included, on its
 * engine's allocator, so an engine created on a test_alloc reaches every
 * allocation of factory_create and of a run. */
#ifndef TESTS_FACTORY_ALLOC_H
#define TESTS_FACTORY_ALLOC_H

#include <stdlib.h>

#include "engine.h"
#include "factory.h"
#include "tel.h"
#include "test_util.h"

/* An engine, a memory sink and the factory on them. */
typedef struct alloc_built {
  sim_engine *e;
  tel_sink *sink;
  factory *f;
} alloc_built;

static void alloc_drop(void *obj) {
  alloc_built *b = obj;
  factory_destroy(b->f);
  sim_engine_destroy(b->e);
  tel_destroy(b->sink);
  free(b);
}

/* A test_make_fn: the factory of the scenario ctx on an engine on a. */
static void *alloc_make(const sim_allocator *a, void *ctx, sim_error *err) {
  alloc_built *b = calloc(1, sizeof *b);
  assert_non_null(b);
  b->sink = tel_memory_create();
  b->e = sim_engine_create(a);
  if (b->e == NULL)
    sim_error_set(err, SIM_ENOMEM, "out of memory");
  else
    b->f = factory_create(ctx, b->e, b->sink, err);
  if (b->f != NULL)
    return b;
  alloc_drop(b);
  return NULL;
}

/* A run on an allocator that fails its fail_at-th allocation (0: none):
 * the run and the books may fail, but only with SIM_ENOMEM, and nothing
 * is left after destroy. Returns the allocations it took. */
static long alloc_run(const factory_scenario *sc, long fail_at) {
  test_alloc t;
  test_alloc_init(&t, fail_at);
  sim_error err = {0};
  alloc_built *b = alloc_make(&t.hook, (void *)sc, &err);
  if (b == NULL && fail_at == 0)
    fail_msg("%s", err.msg);
  int rc =
      b != NULL ? sim_engine_run(b->e, factory_duration(&sc->cfg)) : SIM_ENOMEM;
  if (rc == SIM_OK)
    rc = factory_finish(b->f, NULL, &err);
  if (fail_at == 0 && rc != SIM_OK)
    fail_msg("%s", err.msg);
  if (b != NULL)
    alloc_drop(b);
  if (t.live != 0)
    fail_msg("allocation %ld failing: %ld blocks live", fail_at, t.live);
  assert_true(rc == SIM_OK || rc == SIM_ENOMEM || rc == SIM_EIO);
  return t.calls;
}

/* The checks on the scenario at path with nsets overrides: every
 * allocation of factory_create failing in turn, a full run on the
 * counting allocator, and runs failing at nruns allocations spread over
 * the rest of the run. */
static void alloc_check_scenario(const char *path, const char *const *sets,
                                 size_t nsets, long nruns) {
  factory_scenario sc;
  sim_error err = {0};
  if (factory_scenario_load(path, sets, nsets, &sc, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  long created =
      test_alloc_failures("factory_create", alloc_make, alloc_drop, &sc);
  long total = alloc_run(&sc, 0);
  assert_true(total >= created);
  for (long i = 1; i <= nruns && total > created; i++)
    alloc_run(&sc, created + 1 + (total - created - 1) * i / nruns);
  print_message("factory_create: %ld allocations; a run: %ld\n", created,
                total);
  factory_scenario_release(&sc);
}

#endif
