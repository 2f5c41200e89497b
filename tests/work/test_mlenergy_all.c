/* test_mlenergy_all.c - the bands over every ML.ENERGY v3 run of a
 * catalogued LLM and GPU (tests/validate/mlenergy_runs.h), with the fit
 * set and the held-out runs apart, dense and MoE apart: the median
 * modelled / measured tokens/J and tokens/s within +-25% and at least 90%
 * of runs within a factor 2 of each; Llama-4-Maverick FP8 on 8 x H100 at
 * max_num_seqs 256 within a factor 1.5.
 *
 * The H100 runs are the fit set of the vLLM engine's step costs
 * (tools/calibrate.py): their rows are calibration, and the test holds
 * their bands. The B200 runs are held out: their rows are validation.
 * They are not all inside the bands (B200 dense runs give 1.39x the
 * measured tokens/J, and 89% of them are within 2x in tokens/s); those
 * rows show failing in docs/VALIDATION.md, and the test holds the gap as
 * it stands (medians within a factor 1.5, 80% of runs within 2x), so
 * that a change that widens it fails. */
#include "test_catalogs.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlenergy_runs.h"
#include "validate_row.h"

static mlr_run *runs;
static size_t nruns;

static int setup(void **state) {
  if (test_catalogs_load(state) != 0)
    return -1;
  sim_error err = {0};
  const char *path = test_data_path("gpu_power/mlenergy_v3_llm_runs.csv");
  const llm_engine *vllm = llm_catalog_engine(&cats.llm, LLM_ENGINE_DEFAULT);
  if (mlr_runs_load(path, &cats.llm, &cats.gpu, vllm, &runs, &nruns, &err) !=
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

/* One cell of the split: a GPU (the fit set's or the held-out one) and
 * a class. */
typedef struct cell_row {
  const char *name;
  const char *gpu;
  bool moe;
} cell_row;

static const cell_row cells[] = {
    {"fit set, dense", MLR_FIT_GPU, false},
    {"fit set, MoE", MLR_FIT_GPU, true},
    {"held out, dense", MLR_HELD_OUT_GPU, false},
    {"held out, MoE", MLR_HELD_OUT_GPU, true},
};

static bool fit_set(const cell_row *c) {
  return strcmp(c->gpu, MLR_FIT_GPU) == 0;
}

/* Emits one row of a cell: figure "ML.ENERGY <class> runs, <GPU>: what". */
static void cell_validate_row(const cell_row *c, const char *what,
                              const char *unit, double published, double model,
                              double lo, double hi, const char *band,
                              size_t n) {
  char figure[128], cond[160];
  snprintf(figure, sizeof figure, "ML.ENERGY %s runs, %s: %s",
           c->moe ? "MoE" : "dense", c->gpu, what);
  snprintf(cond, sizeof cond, "%zu %s runs of catalogued models on %s (%s)", n,
           c->moe ? "MoE" : "dense", c->gpu,
           fit_set(c) ? "fit set" : "held out");
  validate_row(
      fit_set(c) ? VALIDATE_KIND_CALIBRATION : VALIDATE_KIND_VALIDATION,
      fit_set(c) ? "the fit set of the vLLM step costs "
                   "(tools/calibrate.py)"
                 : "held out from every fit",
      VALIDATE_SERVING, figure, "Chung et al., ML.ENERGY v3, NeurIPS D&B 2025",
      cond, unit, published, model, lo, hi, band);
}

static void cell_bands(void **state) {
  const cell_row *c = *state;
  mlr_summary m;
  mlr_summarise(runs, nruns, c->moe, c->gpu, &m);
  print_message("%s %s: %zu runs, median ratio tokens/J %.3f, tokens/s "
                "%.3f; within 2x %.0f%%, %.0f%%\n",
                c->gpu, c->moe ? "MoE" : "dense", m.n, m.tpj_median,
                m.tps_median, 100 * m.tpj_within2, 100 * m.tps_within2);
  cell_validate_row(c, "median tokens/J ratio", "x measured", 1, m.tpj_median,
                    0.75, 1.33, "0.75-1.33 (+-25%)", m.n);
  cell_validate_row(c, "median tokens/s ratio", "x measured", 1, m.tps_median,
                    0.75, 1.33, "0.75-1.33 (+-25%)", m.n);
  cell_validate_row(c, "share within 2x in tokens/J", "share", 0.9,
                    m.tpj_within2, 0.9, 1, ">= 90%", m.n);
  cell_validate_row(c, "share within 2x in tokens/s", "share", 0.9,
                    m.tps_within2, 0.9, 1, ">= 90%", m.n);
  assert_true(m.n > 0);
  double lo = fit_set(c) ? 0.75 : 1 / 1.5, hi = fit_set(c) ? 1.33 : 1.5;
  double share = fit_set(c) ? 0.9 : 0.8;
  assert_true(m.tpj_median >= lo && m.tpj_median <= hi);
  assert_true(m.tps_median >= lo && m.tps_median <= hi);
  assert_true(m.tpj_within2 >= share && m.tps_within2 >= share);
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
  validate_row(VALIDATE_KIND_CALIBRATION,
               "an H100 run: the fit set of the vLLM step costs "
               "(tools/calibrate.py)",
               VALIDATE_SERVING, "ML.ENERGY Llama-4-Maverick tokens/J",
               "Chung et al., ML.ENERGY v3, NeurIPS D&B 2025",
               "FP8, 8 x H100, EP8, lm-arena-chat, max_num_seqs 256",
               "tokens/J", r->tpj, r->model_tpj, r->tpj / 1.5, 1.5 * r->tpj,
               "x/ 1.5");
  assert_int_equal(r->gpus, 8);
  assert_int_equal(r->ep, 8);
  assert_true(r->model_tpj >= r->tpj / 1.5 && r->model_tpj <= 1.5 * r->tpj);
}

int main(void) {
  struct CMUnitTest tests[8];
  size_t n = 0;
  TEST_ADD(tests, n, every_catalogued_run_is_modelled);
  TEST_ROWS(tests, n, cell_bands, cells);
  TEST_ADD(tests, n, maverick_batch_256);
  return _cmocka_run_group_tests("mlenergy_all", tests, n, setup, teardown);
}
