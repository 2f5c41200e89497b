/* test_catalogs.h - the built-in catalogs (GPUs, LLMs, systems) as cmocka
 * group fixtures: one set a test program, loaded by the setup that names
 * what the tests need and freed by one teardown. Every model's test links
 * it (tests/CMakeLists.txt sim_unit_test); a static library, so a test
 * that does not use it takes none of it. */
#ifndef TEST_CATALOGS_H
#define TEST_CATALOGS_H

#include "gpu.h"
#include "llm.h"
#include "system.h"
#include "test_util.h"

typedef struct test_catalogs {
  llm_catalog llm;
  gpu_catalog gpu;
  sys_catalog sys;
} test_catalogs;

/* The one set a test program uses; what is not loaded stays zero. */
extern test_catalogs cats;

/* Group setups: the GPU and LLM catalogs; the GPU catalog alone; the GPU
 * and system catalogs. Each prints the error and returns -1 when a
 * catalog does not load. */
int test_catalogs_load(void **state);
int test_catalogs_load_gpu(void **state);
int test_catalogs_load_hardware(void **state);

/* The group teardown of any of them: every catalog freed (a catalog
 * never loaded is zero, and freeing it does nothing). */
int test_catalogs_release(void **state);

#endif
