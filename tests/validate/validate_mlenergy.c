/* validate_mlenergy.c - every ML.ENERGY v3 run of a catalogued LLM and GPU
 * against the roofline model (mlenergy_runs.h): writes one CSV row per run
 * and prints, per ML.ENERGY model id, the median and 10-90% range of the
 * modelled / measured tokens/J and tokens/s ratios, then the dense and MoE
 * aggregates (median, share within a factor 2).
 *
 * Usage: validate_mlenergy [RUNS.csv [OUT.csv]]; defaults: the data/ file
 * of the source tree and mlenergy_runs.csv in the working directory. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlenergy_runs.h"
#include "validate_row.h"

static void write_row(FILE *f, const mlr_run *r) {
  fprintf(f,
          "%s,%s,%s,%s,%s,%d,%d,%d,%d,%.0f,%.3f,%.1f,%.1f,%.1f,%.4f,%.4f,"
          "%.4f,%.4f,%.0f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,"
          "%.2f\n",
          r->model_id, r->model, r->task, r->gpu_model,
          r->moe ? "MoE" : "dense", r->gpus, r->tp, r->ep, r->dp, r->max_seqs,
          r->batch, r->output, r->tps, r->model_tps, r->tpj, r->model_tpj,
          r->model_tps / r->tps, r->model_tpj / r->tpj, r->ctx,
          1e3 * r->batch / r->tps, r->itl_ms, r->step_ms, r->weights_ms,
          r->kv_ms, r->gemm_ms, r->attn_ms, r->comm_ms,
          r->fixed_ms, r->prefill_ms);
}

static int write_csv(const char *path, const mlr_run *runs, size_t n) {
  FILE *f = fopen(path, "w");
  if (f == NULL)
    return -1;
  fputs("model_id,catalog_model,task,gpu,class,gpus,tp,ep,dp,max_num_seqs,"
        "batch,output_len,measured_tokens_per_s,model_tokens_per_s,"
        "measured_tokens_per_j,model_tokens_per_j,ratio_tokens_per_s,"
        "ratio_tokens_per_j,model_context,measured_step_ms,"
        "measured_median_itl_ms,model_step_ms,model_weights_ms,"
        "model_kv_ms,model_gemm_ms,model_attn_ms,"
        "model_comm_ms,model_fixed_ms,model_prefill_ms\n",
        f);
  for (size_t i = 0; i < n; i++)
    if (runs[i].refused[0] == '\0')
      write_row(f, &runs[i]);
  return fclose(f);
}

/* The rows of one model id on one GPU (validate_row.h): the median
 * tokens/J and tokens/s ratios of its k runs, their 10-90% range in the
 * conditions, against the class band 0.75-1.33. Runs on the fit set's GPU
 * are calibration, the held-out ones validation (mlenergy_runs.h). j and
 * s are sorted. */
static void validate_model(const mlr_run *r, const char *gpu, size_t k,
                           double *j, double *s) {
  bool fit = strcmp(gpu, MLR_FIT_GPU) == 0;
  const char *what[2] = {"tokens/J", "tokens/s"};
  double *x[2] = {j, s};
  for (int w = 0; w < 2; w++) {
    char figure[192], cond[192];
    snprintf(figure, sizeof figure, "ML.ENERGY %s on %s %s ratio, median",
             r->model_id, gpu, what[w]);
    snprintf(cond, sizeof cond,
             "%s, %s, %zu runs (%s); p10-p90 of the ratio %.2f-%.2f",
             r->moe ? "MoE" : "dense", r->precision, k,
             fit ? "fit set" : "held out", mlr_quantile(x[w], k, 0.1),
             mlr_quantile(x[w], k, 0.9));
    validate_row(fit ? VALIDATE_KIND_CALIBRATION : VALIDATE_KIND_VALIDATION,
                 fit ? "the fit set of the vLLM step costs "
                       "(tools/calibrate.py)"
                     : "held out from every fit",
                 VALIDATE_SERVING, figure,
                 "Chung et al., ML.ENERGY v3, NeurIPS D&B 2025", cond,
                 "x measured", 1, mlr_quantile(x[w], k, 0.5), 0.75, 1.33,
                 "0.75-1.33 (the class band)");
  }
}

static bool same_group(const mlr_run *a, const mlr_run *b) {
  return strcmp(a->model_id, b->model_id) == 0 &&
         strcmp(a->gpu_model, b->gpu_model) == 0;
}

/* Median and 10-90% of the tokens/J and tokens/s ratios of the runs of
 * one model id on one GPU, the group of runs[at]. */
static void print_model(const mlr_run *runs, size_t n, size_t at) {
  double *j = malloc(n * sizeof *j), *s = malloc(n * sizeof *s);
  size_t k = 0;
  for (size_t i = 0; j != NULL && s != NULL && i < n; i++)
    if (same_group(&runs[i], &runs[at]) && runs[i].refused[0] == '\0') {
      j[k] = runs[i].model_tpj / runs[i].tpj;
      s[k++] = runs[i].model_tps / runs[i].tps;
    }
  if (k > 0) {
    printf("%-50s %-4s %3zu  %5.2f [%5.2f, %5.2f]  %5.2f [%5.2f, %5.2f]\n",
           runs[at].model_id, runs[at].gpu_model, k, mlr_quantile(j, k, 0.5),
           mlr_quantile(j, k, 0.1), mlr_quantile(j, k, 0.9),
           mlr_quantile(s, k, 0.5), mlr_quantile(s, k, 0.1),
           mlr_quantile(s, k, 0.9));
    validate_model(&runs[at], runs[at].gpu_model, k, j, s);
  }
  free(j);
  free(s);
}

static void print_models(const mlr_run *runs, size_t n) {
  printf("%-50s %-4s %3s  %-20s  %-20s\n", "model_id (modelled / measured)",
         "gpu", "n", "tokens/J med [p10,p90]", "tokens/s med [p10,p90]");
  for (size_t i = 0; i < n; i++) {
    bool first = true;
    for (size_t k = 0; k < i && first; k++)
      first = !same_group(&runs[k], &runs[i]);
    if (first)
      print_model(runs, n, i);
  }
}

static void print_classes(const mlr_run *runs, size_t n) {
  const char *gpus[2] = {MLR_FIT_GPU, MLR_HELD_OUT_GPU};
  for (int g = 0; g < 2; g++)
    for (int moe = 0; moe <= 1; moe++) {
      mlr_summary m;
      mlr_summarise(runs, n, moe, gpus[g], &m);
      printf("%-4s %-5s runs %3zu (%s): median ratio tokens/J %.2f, "
             "tokens/s %.2f; within 2x %.0f%%, %.0f%%\n",
             gpus[g], moe ? "MoE" : "dense", m.n,
             g == 0 ? "fit set" : "held out", m.tpj_median, m.tps_median,
             100 * m.tpj_within2, 100 * m.tps_within2);
    }
  const mlr_run *mv =
      mlr_find(runs, n, "Llama-4-Maverick", "H100", "lm-arena-chat", 256);
  if (mv != NULL)
    printf("Maverick FP8 8 x H100 lm-arena-chat max_num_seqs 256: measured "
           "%.0f tok/s per GPU, %.2f tok/J; model %.0f tok/s per GPU, %.2f "
           "tok/J (x%.2f)\n",
           mv->tps / mv->gpus, mv->tpj, mv->model_tps / mv->gpus, mv->model_tpj,
           mv->model_tpj / mv->tpj);
  for (size_t i = 0; i < n; i++)
    if (runs[i].refused[0] != '\0')
      printf("refused: %s %s x%d: %s\n", runs[i].model_id, runs[i].gpu_model,
             runs[i].gpus, runs[i].refused);
}

int main(int argc, char **argv) {
  const char *in = argc > 1 && argv[1][0] ? argv[1]
                                          : AIFSIM_SOURCE_DIR
                       "/data/gpu_power/mlenergy_v3_llm_runs.csv";
  const char *out = argc > 2 && argv[2][0] ? argv[2] : "mlenergy_runs.csv";
  llm_catalog llms = {0};
  gpu_catalog gpus = {0};
  sim_error err = {0};
  mlr_run *runs = NULL;
  size_t n = 0;
  int rc = llm_catalog_load_builtin(&llms, &err);
  if (rc == SIM_OK)
    rc = gpu_catalog_load_builtin(&gpus, &err);
  if (rc == SIM_OK)
    rc = mlr_runs_load(in, &llms, &gpus,
                       llm_catalog_engine(&llms, LLM_ENGINE_DEFAULT), &runs,
                       &n, &err);
  if (rc == SIM_OK && write_csv(out, runs, n) != 0)
    rc = sim_error_set(&err, SIM_EIO, "%s: cannot write", out);
  if (rc == SIM_OK) {
    printf("%zu catalogued runs of %s; per run: %s\n\n", n, in, out);
    print_models(runs, n);
    putchar('\n');
    print_classes(runs, n);
  } else {
    fprintf(stderr, "validate_mlenergy: %s\n", err.msg);
  }
  free(runs);
  llm_catalog_fini(&llms);
  gpu_catalog_fini(&gpus);
  return rc == SIM_OK ? 0 : 1;
}
