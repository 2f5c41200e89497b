/* test_catalogs.c - the built-in catalogs as group fixtures
 * (test_catalogs.h). */
#include "test_catalogs.h"

#include "test_util.h"

test_catalogs cats;

/* Loads the catalogs asked for; on an error prints it and returns -1. */
static int load(bool llm, bool sys) {
  sim_error err = {0};
  int rc = llm ? llm_catalog_load_builtin(&cats.llm, &err) : SIM_OK;
  if (rc == SIM_OK)
    rc = gpu_catalog_load_builtin(&cats.gpu, &err);
  if (rc == SIM_OK && sys)
    rc = sys_catalog_load_builtin(&cats.sys, &err);
  if (rc != SIM_OK) {
    print_error("%s\n", err.msg);
    return -1;
  }
  return 0;
}

int test_catalogs_load(void **state) {
  (void)state;
  return load(true, false);
}

int test_catalogs_load_gpu(void **state) {
  (void)state;
  return load(false, false);
}

int test_catalogs_load_hardware(void **state) {
  (void)state;
  return load(false, true);
}

int test_catalogs_release(void **state) {
  (void)state;
  sys_catalog_fini(&cats.sys);
  llm_catalog_fini(&cats.llm);
  gpu_catalog_fini(&cats.gpu);
  return 0;
}
