/* mlenergy_runs.c - ML.ENERGY's measured runs against the roofline model;
 * see mlenergy_runs.h. */
#include "mlenergy_runs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "roofline.h"

/* The one mapping table: ML.ENERGY model_id -> catalog name. Only ids
 * whose architecture is the catalog entry's (same config.json shape) are
 * listed; the catalog's sources say which variants share a shape.
 * Vision-language (Qwen3-VL, Omni) and other ids are left out, as is
 * Llama-3.3-70B (the shape of Llama-3.1-70B, but not a catalog entry). */
static const struct {
  const char *id, *model;
} model_map[] = {
    {"meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B"},
    {"meta-llama/Llama-3.1-70B-Instruct", "Llama-3.1-70B"},
    {"meta-llama/Llama-3.1-405B-Instruct", "Llama-3.1-405B"},
    {"meta-llama/Llama-3.1-405B-Instruct-FP8", "Llama-3.1-405B"},
    {"meta-llama/Llama-4-Scout-17B-16E-Instruct", "Llama-4-Scout"},
    {"meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "Llama-4-Maverick"},
    {"Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen3-30B-A3B"},
    {"Qwen/Qwen3-30B-A3B-Thinking-2507", "Qwen3-30B-A3B"},
    {"Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen3-30B-A3B"},
    {"Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen3-235B-A22B"},
    {"Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "Qwen3-235B-A22B"},
    {"Qwen/Qwen3-235B-A22B-Thinking-2507", "Qwen3-235B-A22B"},
    {"Qwen/Qwen3-235B-A22B-Thinking-2507-FP8", "Qwen3-235B-A22B"},
    {"openai/gpt-oss-20b", "gpt-oss-20b"},
    {"openai/gpt-oss-120b", "gpt-oss-120b"},
};

/* ML.ENERGY's GPU and precision names -> the catalogs'. Its H100 is the
 * SXM part (ML.ENERGY v3 dataset card: H100 SXM5 80 GB nodes). */
static const struct {
  const char *from, *to;
} gpu_map[] = {{"H100", "H100-SXM"}, {"B200", "B200"}},
  precision_map[] = {{"bfloat16", "fp16"}, {"fp8", "fp8"}, {"mxfp4", "mxfp4"}};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

const char *mlr_catalog_name(const char *model_id) {
  for (size_t i = 0; i < N_OF(model_map); i++)
    if (strcmp(model_map[i].id, model_id) == 0)
      return model_map[i].model;
  return NULL;
}

static const char *map_gpu(const char *name) {
  for (size_t i = 0; i < N_OF(gpu_map); i++)
    if (strcmp(gpu_map[i].from, name) == 0)
      return gpu_map[i].to;
  return NULL;
}

static const char *map_precision(const char *name) {
  for (size_t i = 0; i < N_OF(precision_map); i++)
    if (strcmp(precision_map[i].from, name) == 0)
      return precision_map[i].to;
  return NULL;
}

/* The run's replica: num_gpus / data_parallel GPUs, tensor parallel, with
 * the experts split whole over them when expert_parallel > 1. ML.ENERGY
 * records its MoE runs as tensor_parallel 1, expert_parallel N on N GPUs;
 * vLLM with --enable-expert-parallel and data_parallel 1 runs attention
 * tensor-parallel over those N GPUs (EP size = TP x DP, vLLM docs,
 * 'Expert Parallel Deployment'), which is what ep = tp = N models. */
static int build_replica(const mlr_run *run, const llm_catalog *llms,
                         const gpu_catalog *gpus, const llm_engine *engine,
                         rl_replica *r, sim_error *err) {
  const gpu_spec *g = gpu_catalog_find(gpus, map_gpu(run->gpu_model));
  const llm_model *m = llm_catalog_find(llms, run->model);
  const llm_precision *p = llm_catalog_precision(llms, run->precision);
  if (g == NULL || m == NULL || p == NULL)
    return sim_error_set(err, SIM_EINPUT, "%s on %s at %s: not catalogued",
                         run->model, run->gpu_model, run->precision);
  int per = run->gpus / (run->dp > 0 ? run->dp : 1);
  int rc = rl_replica_init(r, g, m, p, engine, per, err);
  if (rc != SIM_OK)
    return rc;
  r->ep = run->ep > 1 ? per : 1;
  return rl_check(r, err);
}

/* Steady state of one replica: decode at the measured batch and a mean
 * context of prompt + output / 2 (capped by the KV cache), each request's
 * prefill paid once over its output tokens. */
static int model_run(mlr_run *run, const llm_catalog *llms,
                     const gpu_catalog *gpus, const llm_engine *engine,
                     sim_error *err) {
  rl_replica r;
  double cap = 0;
  int rc = build_replica(run, llms, gpus, engine, &r, err);
  if (rc == SIM_OK)
    rc = rl_max_batch_tokens(&r, &cap, err);
  if (rc != SIM_OK)
    return rc;
  double b = run->batch / (run->dp > 0 ? run->dp : 1), out = run->output;
  double ctx = fmin(MLR_PROMPT_TOKENS + out / 2, cap / b);
  rl_step s;
  rl_decode_step(&r, b, ctx, 1, &s);
  double p = rl_step_power_w(&r, b, ctx, 1);
  double t_pre = rl_prefill_s(&r, MLR_PROMPT_TOKENS, 1);
  double e_pre = t_pre * rl_prefill_power_w(&r, MLR_PROMPT_TOKENS, 1) * r.tp;
  run->ctx = ctx;
  run->step_ms = 1e3 * s.t;
  run->weights_ms = 1e3 * s.t_weights;
  run->kv_ms = 1e3 * s.t_kv;
  run->gemm_ms = 1e3 * s.t_gemm;
  run->attn_ms = 1e3 * s.t_attn;
  run->comm_ms = 1e3 * s.t_tp;
  run->step_batch = b;
  run->moe_layers = (double)r.model->moe_layers;
  run->fixed_ms = 1e3 * s.t_fixed;
  run->prefill_ms = 1e3 * t_pre;
  run->model_tps = run->dp / (s.t / b + t_pre / out);
  run->model_tpj = 1 / (s.t * r.tp * p / b + e_pre / out);
  return SIM_OK;
}

/* The columns read, by header name (data/SOURCES.md). */
enum {
  K_MODEL,
  K_TASK,
  K_PRECISION,
  K_GPU,
  K_GPUS,
  K_TP,
  K_DP,
  K_EP,
  K_SEQS,
  K_BATCH,
  K_OUTPUT,
  K_JPT,
  K_TPS,
  K_ARCH,
  K_ITL,
  K_N
};
static const char *const column_names[K_N] = {
    "model_id",
    "task",
    "weight_precision",
    "gpu_model",
    "num_gpus",
    "tensor_parallel",
    "data_parallel",
    "expert_parallel",
    "max_num_seqs",
    "avg_batch_size",
    "avg_output_len",
    "energy_per_token_joules",
    "output_throughput_tokens_per_sec",
    "architecture",
    "median_itl_ms"};

static int find_columns(csv_reader *rd, long col[K_N]) {
  char *line = csv_next_line(rd), *f[CSV_MAX_FIELDS];
  if (line == NULL)
    return csv_fail(rd, NULL, NULL, "empty file");
  size_t n = csv_split(line, f);
  for (int k = 0; k < K_N; k++)
    if ((col[k] = csv_column(f, n, column_names[k])) < 0)
      return csv_fail(rd, NULL, column_names[k], "missing column");
  return SIM_OK;
}

/* Fills run from one split row; false if it is not catalogued. */
static bool parse_row(char **f, const long col[K_N], mlr_run *run) {
  const char *model = mlr_catalog_name(f[col[K_MODEL]]);
  const char *prec = map_precision(f[col[K_PRECISION]]);
  if (model == NULL || prec == NULL || map_gpu(f[col[K_GPU]]) == NULL)
    return false;
  memset(run, 0, sizeof *run);
  snprintf(run->model_id, sizeof run->model_id, "%s", f[col[K_MODEL]]);
  snprintf(run->task, sizeof run->task, "%s", f[col[K_TASK]]);
  snprintf(run->gpu_model, sizeof run->gpu_model, "%s", f[col[K_GPU]]);
  run->model = model;
  run->precision = prec;
  run->moe = strcmp(f[col[K_ARCH]], "MoE") == 0;
  run->gpus = atoi(f[col[K_GPUS]]);
  run->tp = atoi(f[col[K_TP]]);
  run->dp = atoi(f[col[K_DP]]);
  run->ep = atoi(f[col[K_EP]]);
  run->max_seqs = atof(f[col[K_SEQS]]);
  run->batch = atof(f[col[K_BATCH]]);
  run->output = atof(f[col[K_OUTPUT]]);
  run->tpj = 1 / atof(f[col[K_JPT]]);
  run->tps = atof(f[col[K_TPS]]);
  run->itl_ms = atof(f[col[K_ITL]]);
  return true;
}

static int append(mlr_run **runs, size_t *n, size_t *cap, const mlr_run *r) {
  if (*n == *cap) {
    size_t c = *cap ? 2 * *cap : 64;
    mlr_run *p = realloc(*runs, c * sizeof *p);
    if (p == NULL)
      return SIM_ENOMEM;
    *runs = p;
    *cap = c;
  }
  (*runs)[(*n)++] = *r;
  return SIM_OK;
}

int mlr_runs_load(const char *path, const llm_catalog *llms,
                  const gpu_catalog *gpus, const llm_engine *engine,
                  mlr_run **runs, size_t *n, sim_error *err) {
  csv_reader rd;
  long col[K_N];
  size_t cap = 0;
  *runs = NULL;
  *n = 0;
  int rc = csv_open(&rd, path, (size_t)64 << 20, err);
  if (rc != SIM_OK)
    return rc;
  rc = find_columns(&rd, col);
  for (char *line; rc == SIM_OK && (line = csv_next_line(&rd)) != NULL;) {
    char *f[CSV_MAX_FIELDS];
    mlr_run run;
    if (csv_split(line, f) <= (size_t)col[K_ITL] || !parse_row(f, col, &run))
      continue;
    sim_error why = {0};
    if (model_run(&run, llms, gpus, engine, &why) != SIM_OK) {
      run.model_tps = run.model_tpj = NAN;
      snprintf(run.refused, sizeof run.refused, "%.159s", why.msg);
    }
    if (append(runs, n, &cap, &run) != SIM_OK)
      rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  csv_close(&rd);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double mlr_quantile(double *x, size_t n, double q) {
  if (n == 0)
    return NAN;
  qsort(x, n, sizeof *x, cmp_double);
  double at = q * (double)(n - 1);
  size_t lo = (size_t)floor(at);
  size_t hi = lo + 1 < n ? lo + 1 : lo;
  return x[lo] + (at - (double)lo) * (x[hi] - x[lo]);
}

static bool within2(double q) { return q >= 0.5 && q <= 2; }

static bool selected(const mlr_run *r, bool moe, const char *gpu_model) {
  return r->moe == moe && !isnan(r->model_tpj) &&
         (gpu_model == NULL || strcmp(r->gpu_model, gpu_model) == 0);
}

void mlr_summarise(const mlr_run *runs, size_t n, bool moe,
                   const char *gpu_model, mlr_summary *out) {
  double *j = malloc((n ? n : 1) * sizeof *j);
  double *s = malloc((n ? n : 1) * sizeof *s);
  size_t k = 0, in2_j = 0, in2_s = 0;
  for (size_t i = 0; j != NULL && s != NULL && i < n; i++) {
    if (!selected(&runs[i], moe, gpu_model))
      continue;
    j[k] = runs[i].model_tpj / runs[i].tpj;
    s[k] = runs[i].model_tps / runs[i].tps;
    in2_j += within2(j[k]);
    in2_s += within2(s[k++]);
  }
  out->n = k;
  out->tpj_median = k ? mlr_quantile(j, k, 0.5) : NAN;
  out->tps_median = k ? mlr_quantile(s, k, 0.5) : NAN;
  out->tpj_within2 = k ? (double)in2_j / (double)k : NAN;
  out->tps_within2 = k ? (double)in2_s / (double)k : NAN;
  free(j);
  free(s);
}

const mlr_run *mlr_find(const mlr_run *runs, size_t n, const char *model,
                        const char *gpu_model, const char *task, double seqs) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(runs[i].model, model) == 0 &&
        strcmp(runs[i].gpu_model, gpu_model) == 0 &&
        strcmp(runs[i].task, task) == 0 && runs[i].max_seqs == seqs)
      return &runs[i];
  return NULL;
}
