/* test_replica.h - a replica from the built-in catalogs (test_catalogs.h)
 * that must be valid, for the tests of the roofline and of inference,
 * served by the catalog's vllm engine as services are by default. Header
 * only. */
#ifndef TEST_REPLICA_H
#define TEST_REPLICA_H

#include "roofline.h"
#include "test_catalogs.h"

/* The built-in catalog's default serving engine (vLLM). */
static inline const llm_engine *test_engine(void) {
  const llm_engine *e = llm_catalog_engine(&cats.llm, LLM_ENGINE_DEFAULT);
  if (e == NULL)
    fail_msg("no engine %s in the catalog", LLM_ENGINE_DEFAULT);
  return e;
}

static inline rl_replica test_replica(const char *gpu, const char *model,
                                      const char *precision, int tp) {
  const gpu_spec *g = gpu_catalog_find(&cats.gpu, gpu);
  const llm_model *m = llm_catalog_find(&cats.llm, model);
  const llm_precision *p = llm_catalog_precision(&cats.llm, precision);
  if (g == NULL || m == NULL || p == NULL)
    fail_msg("no %s / %s / %s in the catalogs", gpu, model, precision);
  rl_replica r;
  sim_error err = {0};
  if (rl_replica_init(&r, g, m, p, test_engine(), tp, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  rl_config_engine(&r.cfg, llm_catalog_engine(&cats.llm, "vllm"));
  return r;
}

#endif
