/* validate_set.c - the validation programs' --set and the power model
 * applied to the catalog (validate_set.h). */
#include "validate_set.h"

#include <stdio.h>
#include <string.h>

int vset_apply(const char *kv, llm_engine *e, gpu_power_model *pm) {
  char key[64];
  double v;
  if (sscanf(kv, "%63[^=]=%lf", key, &v) != 2)
    return -1;
  struct {
    const char *key;
    double *at;
  } keys[] = {{"eff_bw", &e->eff_bw},
              {"eff_flops", &e->eff_flops},
              {"act_fixed", &e->act_fixed},
              {"seq_overhead", &e->seq_overhead_s},
              {"moe_layer_overhead", &e->moe_layer_overhead_s},
              {"step_overhead", &e->step_overhead_s},
              {"busy_share", &pm->busy_share},
              {"pj_per_byte", &pm->pj_per_byte}};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strcmp(keys[i].key, key) == 0) {
      *keys[i].at = v;
      return 0;
    }
  return -1;
}

void vset_power_model(gpu_catalog *gpus, const gpu_power_model *pm) {
  for (size_t i = 0; i < gpus->n; i++) {
    gpu_spec *g = &gpus->gpus[i];
    g->busy_w = pm->busy_share * (g->tdp_w - g->idle_w);
    g->mem_w = pm->pj_per_byte * 1e-12 * g->bandwidth_bps;
  }
}
