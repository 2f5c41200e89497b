/* validate_mlenergy.c - every ML.ENERGY v3 run of a catalogued LLM and GPU
 * against the simulator (mlenergy_runs.h).
 *
 * Usage: validate_mlenergy [RUNS.csv [OUT.csv]]
 *   serves every run (the batch forms as in a run), writes one CSV row per
 *   run and prints, per ML.ENERGY model id, the median and 10-90% range
 *   of the modelled / measured tokens/J and tokens/s ratios, with one
 *   validation row each (validate_row.h), then the summaries by GPU,
 *   class and set.
 * Usage: validate_mlenergy --steady [--set KEY=VALUE ...] RUNS.csv OUT.csv
 *   the steady model at the measured batch only, with the vllm engine's
 *   figures and the GPU power model replaced by the --set ones (eff_bw,
 *   act_fixed, seq_overhead, moe_layer_overhead, step_overhead in s,
 *   busy_share, pj_per_byte): what make calibrate fits on (its fit set
 *   rows only). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlenergy_runs.h"
#include "validate_row.h"
#include "validate_set.h"

static const char *const header =
    "model_id,catalog_model,task,gpu,class,set,gpus,tp,ep,dp,max_num_seqs,"
    "batch,output_len,measured_tokens_per_s,measured_tokens_per_j,"
    "measured_power_w,model_batch,model_tokens_per_s,model_tokens_per_j,"
    "model_power_w,ratio_tokens_per_s,ratio_tokens_per_j,ratio_power,"
    "steady_tokens_per_s,steady_tokens_per_j,steady_power_w,steady_clock,"
    "model_context,measured_step_ms,measured_median_itl_ms,model_step_ms,"
    "model_weights_ms,model_kv_ms,model_gemm_ms,model_attn_ms,model_comm_ms,"
    "model_fixed_ms,model_prefill_ms\n";

static void write_row(FILE *f, const mlr_run *r) {
  fprintf(f,
          "%s,%s,%s,%s,%s,%s,%d,%d,%d,%d,%.0f,%.3f,%.1f,%.1f,%.4f,%.1f,"
          "%.1f,%.1f,%.4f,%.1f,%.4f,%.4f,%.4f,%.1f,%.4f,%.1f,%.4f,%.0f,%.3f,"
          "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f\n",
          r->model_id, r->model, r->task, r->gpu_model,
          r->moe ? "MoE" : "dense", r->fit ? "fit" : "held-out", r->gpus,
          r->tp, r->ep, r->dp, r->max_seqs, r->batch, r->output, r->tps,
          r->tpj, r->power_w, r->model_batch, r->model_tps, r->model_tpj,
          r->model_power_w, r->model_tps / r->tps, r->model_tpj / r->tpj,
          r->model_power_w / r->power_w, r->steady_tps, r->steady_tpj,
          r->steady_power_w, r->steady_phi, r->ctx, 1e3 * r->batch / r->tps,
          r->itl_ms, r->step_ms, r->weights_ms, r->kv_ms, r->gemm_ms,
          r->attn_ms, r->comm_ms, r->fixed_ms, r->prefill_ms);
}

static int write_csv(const char *path, const mlr_run *runs, size_t n) {
  FILE *f = fopen(path, "w");
  if (f == NULL)
    return -1;
  fputs(header, f);
  for (size_t i = 0; i < n; i++)
    if (runs[i].refused[0] == '\0')
      write_row(f, &runs[i]);
  return fclose(f);
}

/* The rows of one model id on one GPU (validate_row.h): the median
 * tokens/J and tokens/s ratios of its k runs, their 10-90% range in the
 * conditions, against the class band. Calibration when any of its runs is
 * in the fit set (mlenergy_runs.h), validation otherwise. j and s are
 * sorted. */
static void validate_group(const mlr_run *r, size_t k, size_t nfit, double *j,
                           double *s) {
  const char *what[2] = {"tokens/J", "tokens/s"};
  double *x[2] = {j, s};
  for (int w = 0; w < 2; w++) {
    char figure[160], cond[224];
    snprintf(figure, sizeof figure, "ML.ENERGY %s on %s %s ratio, median",
             r->model_id, r->gpu_model, what[w]);
    snprintf(cond, sizeof cond,
             "%s, %s, %zu runs (%zu in the fit set), batch formed by the "
             "service; p10-p90 of the ratio %.2f-%.2f",
             r->moe ? "MoE" : "dense", r->precision, k, nfit,
             mlr_quantile(x[w], k, 0.1), mlr_quantile(x[w], k, 0.9));
    validate_row(nfit > 0 ? VALIDATE_KIND_CALIBRATION
                          : VALIDATE_KIND_VALIDATION,
                 nfit > 0 ? "runs of the fit set of the vllm engine and the "
                            "GPU power model (tools/calibrate.py)"
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

/* Median and 10-90% of the ratios of one model id on one GPU. */
static void print_group(const mlr_run *runs, size_t n, const mlr_run *g) {
  double *j = malloc(n * sizeof *j), *s = malloc(n * sizeof *s);
  size_t k = 0, nfit = 0;
  for (size_t i = 0; j != NULL && s != NULL && i < n; i++) {
    const mlr_run *r = &runs[i];
    if (!same_group(r, g) || r->refused[0] != '\0')
      continue;
    j[k] = r->model_tpj / r->tpj;
    s[k++] = r->model_tps / r->tps;
    nfit += r->fit;
  }
  if (k > 0) {
    printf("%-46s %s %3zu  %5.2f [%5.2f, %5.2f]  %5.2f [%5.2f, %5.2f]\n",
           g->model_id, g->gpu_model, k, mlr_quantile(j, k, 0.5),
           mlr_quantile(j, k, 0.1), mlr_quantile(j, k, 0.9),
           mlr_quantile(s, k, 0.5), mlr_quantile(s, k, 0.1),
           mlr_quantile(s, k, 0.9));
    validate_group(g, k, nfit, j, s);
  }
  free(j);
  free(s);
}

static void print_models(const mlr_run *runs, size_t n) {
  printf("%-46s %-4s %3s  %-20s  %-20s\n", "model_id (modelled / measured)",
         "GPU", "n", "tokens/J med [p10,p90]", "tokens/s med [p10,p90]");
  for (size_t i = 0; i < n; i++) {
    bool first = true;
    for (size_t k = 0; k < i && first; k++)
      first = !same_group(&runs[k], &runs[i]);
    if (first)
      print_group(runs, n, &runs[i]);
  }
}

static void print_summaries(const mlr_run *runs, size_t n) {
  static const char *const gpus[] = {"H100", "B200"};
  for (int g = 0; g < 2; g++)
    for (int fit = 1; fit >= 0; fit--)
      for (int moe = 0; moe <= 1; moe++) {
        mlr_summary s =
            mlr_summarise(runs, n, (mlr_filter){gpus[g], moe, fit});
        if (s.n > 0)
          printf("%s %-8s %-5s %3zu runs: median ratio tokens/J %.2f, "
                 "tokens/s %.2f, power %.2f; within 2x %.0f%%\n",
                 gpus[g], fit ? "fit" : "held-out", moe ? "MoE" : "dense",
                 s.n, s.tpj, s.tps, s.power, 100 * s.within2);
      }
  for (size_t i = 0; i < n; i++)
    if (runs[i].refused[0] != '\0')
      printf("refused: %s %s x%d: %s\n", runs[i].model_id, runs[i].gpu_model,
             runs[i].gpus, runs[i].refused);
}

typedef struct options {
  bool steady;
  const char *in, *out;
  llm_engine eng;
  gpu_power_model pm;
  bool set_power;
} options;

static int parse_args(int argc, char **argv, options *o) {
  int pos = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--steady") == 0)
      o->steady = true;
    else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
      if (vset_apply(argv[++i], &o->eng, &o->pm) != 0)
        return -1;
      o->set_power |= strstr(argv[i], "busy_share") == argv[i] ||
                      strstr(argv[i], "pj_per_byte") == argv[i];
    } else if (pos < 2 && argv[i][0] != '-') {
      /* An empty argument keeps the default. */
      if (argv[i][0] != '\0')
        *(pos == 0 ? &o->in : &o->out) = argv[i];
      pos++;
    } else
      return -1;
  }
  return 0;
}

static int run(options *o, llm_catalog *llms, gpu_catalog *gpus,
               sim_error *err) {
  mlr_run *runs = NULL;
  size_t n = 0;
  if (o->set_power)
    vset_power_model(gpus, &o->pm);
  int rc = mlr_runs_load(o->in, llms, gpus, &o->eng, o->steady ? 0 : MLR_SERVE,
                         &runs, &n, err);
  if (rc == SIM_OK && write_csv(o->out, runs, n) != 0)
    rc = sim_error_set(err, SIM_EIO, "%s: cannot write", o->out);
  if (rc == SIM_OK && !o->steady) {
    printf("%zu catalogued runs of %s; per run: %s\n\n", n, o->in, o->out);
    print_models(runs, n);
    putchar('\n');
    print_summaries(runs, n);
  }
  free(runs);
  return rc;
}

int main(int argc, char **argv) {
  options o = {.in = AIFSIM_SOURCE_DIR
               "/data/gpu_power/mlenergy_v3_llm_runs.csv",
               .out = "mlenergy_runs.csv"};
  llm_catalog llms = {0};
  gpu_catalog gpus = {0};
  sim_error err = {0};
  int rc = llm_catalog_load_builtin(&llms, &err);
  if (rc == SIM_OK)
    rc = gpu_catalog_load_builtin(&gpus, &err);
  if (rc == SIM_OK) {
    o.eng = *llm_catalog_engine(&llms, LLM_ENGINE_DEFAULT);
    o.pm = gpus.power;
    if (parse_args(argc, argv, &o) != 0)
      rc = sim_error_set(&err, SIM_EINVAL,
                         "usage: validate_mlenergy [--steady] [--set K=V] "
                         "[RUNS.csv [OUT.csv]]");
  }
  if (rc == SIM_OK)
    rc = run(&o, &llms, &gpus, &err);
  if (rc != SIM_OK)
    fprintf(stderr, "validate_mlenergy: %s\n", err.msg);
  llm_catalog_fini(&llms);
  gpu_catalog_fini(&gpus);
  return rc == SIM_OK ? 0 : 1;
}
