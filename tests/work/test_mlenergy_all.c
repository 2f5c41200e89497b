/* test_mlenergy_all.c - the validation bands over every ML.ENERGY v3 run
 * of a catalogued LLM and GPU (tests/validate/mlenergy_runs.h): for dense
 * and MoE runs separately, the median modelled / measured tokens/J within
 * +-25% and at least 90% of runs within a factor 2; Llama-4-Maverick FP8
 * on 8 x H100 at max_num_seqs 256 within a factor 1.5. All are asserted
 * since the step model counts the per-sequence and per-MoE-layer costs
 * (roofline.h, rl_config), fitted on the H100 runs alone: the B200 runs,
 * held out, are inside the class bands too (validate_mlenergy prints
 * them). */
#include "test_catalogs.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>

#include "mlenergy_runs.h"
#include "validate_row.h"

static mlr_run *runs;
static size_t nruns;

static int setup(void **state) {
  if (test_catalogs_load(state) != 0)
    return -1;
  sim_error err = {0};
  const char *path = test_data_path("gpu_power/mlenergy_v3_llm_runs.csv");
  if (mlr_runs_load(path, &cats.llm, &cats.gpu, &runs, &nruns, &err) !=
      SIM_OK) {
    print_error("%s\n", err.msg);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  free(runs);
  return test_catalogs_release(state);
}

/* Every catalogued run builds a replica the model accepts. */
static void every_catalogued_run_is_modelled(void **state) {
  (void)state;
  assert_true(nruns > 0);
  for (size_t i = 0; i < nruns; i++)
    if (runs[i].refused[0] != '\0')
      fail_msg("%s on %d %s refused: %s", runs[i].model_id, runs[i].gpus,
               runs[i].gpu_model, runs[i].refused);
}

/* The Done-when bands of one class of runs (dense or MoE): the median
 * tokens/J ratio within +-25% and 90% of runs within a factor 2. */
static void class_band(bool moe) {
  const char *cls = moe ? "MoE" : "dense";
  double med, in2;
  size_t n;
  mlr_class_summary(runs, nruns, moe, &med, &in2, &n);
  print_message("%s: %zu runs, median tokens/J ratio %.2f, within 2x "
                "%.0f%%\n",
                cls, n, med, 100 * in2);
  char cond[96], median[96], within[96];
  snprintf(cond, sizeof cond, "%zu %s runs of catalogued models and GPUs", n,
           cls);
  snprintf(median, sizeof median, "ML.ENERGY %s runs: median tokens/J ratio",
           cls);
  snprintf(within, sizeof within,
           "ML.ENERGY %s runs: share within 2x in tokens/J", cls);
  validate_row(VALIDATE_SERVING, median,
               "Chung et al., ML.ENERGY v3, NeurIPS D&B 2025", cond,
               "x measured", 1, med, 0.75, 1.33, "0.75-1.33 (+-25%)");
  validate_row(VALIDATE_SERVING, within,
               "Chung et al., ML.ENERGY v3, NeurIPS D&B 2025", cond, "share",
               0.9, in2, 0.9, 1, ">= 90%");
  assert_true(n > 0);
  assert_true(med >= 0.75 && med <= 1.33);
  assert_true(in2 >= 0.9);
}

static void dense_band(void **state) {
  (void)state;
  class_band(false);
}

static void moe_band(void **state) {
  (void)state;
  class_band(true);
}

static void maverick_batch_256(void **state) {
  (void)state;
  const mlr_run *r =
      mlr_find(runs, nruns, "Llama-4-Maverick", "H100", "lm-arena-chat", 256);
  if (r == NULL)
    fail_msg("no Maverick lm-arena-chat run at max_num_seqs 256");
  print_message("Maverick FP8 8 x H100 batch 256: measured %.0f tok/s per "
                "GPU, %.2f tok/J; model %.0f, %.2f (x%.2f)\n",
                r->tps / r->gpus, r->tpj, r->model_tps / r->gpus, r->model_tpj,
                r->model_tpj / r->tpj);
  validate_row(VALIDATE_SERVING, "ML.ENERGY Llama-4-Maverick tokens/J",
               "Chung et al., ML.ENERGY v3, NeurIPS D&B 2025",
               "FP8, 8 x H100, EP8, lm-arena-chat, max_num_seqs 256",
               "tokens/J", r->tpj, r->model_tpj, r->tpj / 1.5, 1.5 * r->tpj,
               "x/ 1.5");
  assert_int_equal(r->gpus, 8);
  assert_int_equal(r->ep, 8);
  assert_true(r->model_tpj >= r->tpj / 1.5 && r->model_tpj <= 1.5 * r->tpj);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_catalogued_run_is_modelled),
      cmocka_unit_test(dense_band),
      cmocka_unit_test(moe_band),
      cmocka_unit_test(maverick_batch_256),
  };
  return cmocka_run_group_tests_name("mlenergy_all", tests, setup, teardown);
}
