/* test_catalogs.h - the built-in GPU and LLM catalogs as a cmocka group
 * fixture, for the tests of models that need both (llm, roofline). Header
 * only: test_helpers does not link the models. */
#ifndef TEST_CATALOGS_H
#define TEST_CATALOGS_H

#include "gpu.h"
#include "llm.h"
#include "test_util.h"

typedef struct test_catalogs {
  llm_catalog llm;
  gpu_catalog gpu;
} test_catalogs;

/* The one set a test file uses, filled by test_catalogs_load. */
static test_catalogs cats;

static inline int test_catalogs_load(void **state) {
  (void)state;
  sim_error err = {0};
  if (llm_catalog_load_builtin(&cats.llm, &err) != SIM_OK ||
      gpu_catalog_load_builtin(&cats.gpu, &err) != SIM_OK) {
    print_error("%s\n", err.msg);
    return -1;
  }
  return 0;
}

static inline int test_catalogs_release(void **state) {
  (void)state;
  llm_catalog_fini(&cats.llm);
  gpu_catalog_fini(&cats.gpu);
  return 0;
}

#endif
