/* mlenergy_runs.c - ML.ENERGY's measured runs against the roofline model;
 * see mlenergy_runs.h. */
#include "mlenergy_runs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "file.h"
#include "mlenergy_repeats.h"
#include "roofline.h"
#include "serve_run.h"

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

/* FP8 checkpoints whose weights carry one scale per 128 x 128 block
 * (config.json quantization_config: quant_method fp8, weight_block_size
 * [128, 128]), served by vLLM's W8A8 block-FP8 kernels: the catalog's
 * fp8-block. The other FP8 ids are per-channel (fp8). */
static const char *const block_fp8_ids[] = {
    "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",
    "Qwen/Qwen3-235B-A22B-Thinking-2507-FP8",
};

static const char *run_precision(const char *model_id, const char *prec) {
  if (prec != NULL && strcmp(prec, "fp8") == 0)
    for (size_t i = 0; i < N_OF(block_fp8_ids); i++)
      if (strcmp(block_fp8_ids[i], model_id) == 0)
        return "fp8-block";
  return prec;
}

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

bool mlr_in_fit_set(const mlr_run *r) {
  return strcmp(r->gpu_model, "H100") == 0 &&
         strcmp(r->precision, "fp16") == 0 &&
         strcmp(r->task, "sourcegraph-fim") != 0;
}

/* The run's replica: num_gpus / data_parallel GPUs, tensor parallel, with
 * the experts split whole over them when expert_parallel > 1, served by
 * engine eng. ML.ENERGY records its MoE runs as tensor_parallel 1,
 * expert_parallel N on N GPUs; vLLM with --enable-expert-parallel and
 * data_parallel 1 runs attention tensor-parallel over those N GPUs (EP
 * size = TP x DP, vLLM docs, 'Expert Parallel Deployment'), which is what
 * ep = tp = N models. */
static int build_replica(const mlr_run *run, const llm_catalog *llms,
                         const gpu_catalog *gpus, const llm_engine *eng,
                         rl_replica *r, sim_error *err) {
  const gpu_spec *g = gpu_catalog_find(gpus, map_gpu(run->gpu_model));
  const llm_model *m = llm_catalog_find(llms, run->model);
  const llm_precision *p = llm_catalog_precision(llms, run->precision);
  if (g == NULL || m == NULL || p == NULL)
    return sim_error_set(err, SIM_EINPUT, "%s on %s at %s: not catalogued",
                         run->model, run->gpu_model, run->precision);
  int per = run->gpus / (run->dp > 0 ? run->dp : 1);
  int rc = rl_replica_init(r, g, m, p, eng, per, err);
  if (rc != SIM_OK)
    return rc;
  r->ep = run->ep > 1 ? per : 1;
  return rl_check(r, err);
}

static void keep_parts(mlr_run *run, const rl_step *s, double t_pre) {
  run->step_ms = 1e3 * s->t;
  run->weights_ms = 1e3 * s->t_weights;
  run->kv_ms = 1e3 * s->t_kv;
  run->gemm_ms = 1e3 * s->t_gemm;
  run->attn_ms = 1e3 * s->t_attn;
  run->comm_ms = 1e3 * s->t_tp;
  run->fixed_ms = 1e3 * s->t_fixed;
  run->prefill_ms = 1e3 * t_pre;
}

/* Mean prompt tokens a request of each ML.ENERGY v3 task, as
 * data/gpu_power/mlenergy_v3_task_prompts.csv gives them (its SOURCES.md
 * entry says how each was derived; test_mlenergy_all holds the two
 * equal). A task without a figure there keeps MLR_PROMPT_TOKENS. */
static const struct {
  const char *task;
  double tokens;
} task_prompts[] = {
    {"lm-arena-chat", MLR_PROMPT_TOKENS}, /* unknown: not published */
    {"gpqa", 221.0},                      /* counted from GPQA diamond */
    {"sourcegraph-fim", MLR_PROMPT_TOKENS}, /* unknown: not published */
};

double mlr_prompt_tokens(const char *task) {
  for (size_t i = 0; i < sizeof task_prompts / sizeof *task_prompts; i++)
    if (strcmp(task_prompts[i].task, task) == 0)
      return task_prompts[i].tokens;
  return MLR_PROMPT_TOKENS;
}

int mlr_prompt_pool(const mlr_run *r) {
  return r->repeats > 1 ? r->unique : 0;
}

/* Steady state of one replica at the measured batch b: decode steps at a
 * mean context of prompt + output / 2 (capped by the KV cache), and b /
 * output prefills a step (each request's once over its output tokens).
 * The mean load of that cycle sets the clock under the TDP, and power is
 * the model's at that clock. */
static void model_steady(mlr_run *run, const rl_replica *r, double cap) {
  double b = run->batch / (run->dp > 0 ? run->dp : 1), out = run->output;
  double in = mlr_prompt_tokens(run->task);
  double ctx = fmin(in + out / 2, cap / b), per = b / out;
  rl_step s;
  rl_decode_step(r, b, ctx, 1, &s);
  double t_pre = rl_prefill_s(r, in, 1);
  gpu_load l = gpu_load_axpy(gpu_load_scale(s.load, s.t), per * t_pre,
                             rl_prefill_load(r, in));
  l = gpu_load_scale(l, 1 / (s.t + per * t_pre));
  double phi = gpu_load_clock_under_cap(r->gpu, r->gpu->tdp_w, l);
  rl_decode_step(r, b, ctx, phi, &s);
  t_pre = rl_prefill_s(r, in, phi);
  double p = gpu_load_power(r->gpu, phi, l);
  run->ctx = ctx;
  keep_parts(run, &s, t_pre);
  run->steady_phi = phi;
  run->steady_power_w = p;
  run->steady_tps = run->dp * b / (s.t + per * t_pre);
  run->steady_tpj = run->steady_tps / (p * run->gpus);
}

/* The run as a service: the batch is the service's (serve_run.h). */
static int model_served(mlr_run *run, const rl_replica *r, sim_error *err) {
  serve_spec spec = {.replica = r,
                     .replicas = run->dp > 0 ? run->dp : 1,
                     .max_batch =
                         (int)(run->max_seqs / (run->dp > 0 ? run->dp : 1)),
                     .prompt = mlr_prompt_tokens(run->task),
                     .output = run->output,
                     .output_sigma = MLR_OUTPUT_SIGMA,
                     .limit_w = 0,
                     .prompt_pool = mlr_prompt_pool(run),
                     .seed = 1};
  serve_result res;
  int rc = serve_run(&spec, &res, err);
  if (rc != SIM_OK)
    return rc;
  run->model_tps = res.tokens_per_s;
  run->model_tpj = res.tokens_per_j;
  run->model_power_w = res.power_w;
  run->model_batch = res.batch * spec.replicas;
  run->model_phi = res.phi;
  return SIM_OK;
}

static int model_run(mlr_run *run, const llm_catalog *llms,
                     const gpu_catalog *gpus, const llm_engine *eng,
                     unsigned flags, sim_error *err) {
  rl_replica r;
  double cap = 0;
  int rc = build_replica(run, llms, gpus, eng, &r, err);
  if (rc == SIM_OK)
    rc = rl_max_batch_tokens(&r, &cap, err);
  if (rc != SIM_OK)
    return rc;
  model_steady(run, &r, cap);
  run->model_tps = run->model_tpj = run->model_power_w = NAN;
  run->model_batch = run->model_phi = NAN;
  return flags & MLR_SERVE ? model_served(run, &r, err) : SIM_OK;
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
  K_POWER,
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
    "median_itl_ms",
    "avg_power_watts"};

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
  const char *prec =
      run_precision(f[col[K_MODEL]], map_precision(f[col[K_PRECISION]]));
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
  run->power_w = atof(f[col[K_POWER]]) / run->gpus;
  run->fit = mlr_in_fit_set(run);
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

/* The request repeats of run, from rows (mlenergy_repeats.h). */
static void find_repeats(mlr_run *run, const mlr_repeat *rows, size_t n) {
  const mlr_repeat *r =
      mlr_repeats_find(rows, n, run->task, run->model_id, run->gpu_model,
                       run->gpus, run->max_seqs);
  run->repeats = r != NULL ? r->repeats : 0;
  run->unique = r != NULL ? r->unique : 0;
}

/* The repeats file beside the runs' path. */
static int load_repeats(const char *path, mlr_repeat **rows, size_t *n,
                        sim_error *err) {
  char full[4096];
  sim_path_beside(path, "mlenergy_v3_request_repeats.csv", full, sizeof full);
  return mlr_repeats_load(full, rows, n, err);
}

/* A run read from its row, modelled: the model's figures NaN and the
 * reason kept when the model refuses it. */
static void model_row(mlr_run *run, const mlr_repeat *rep, size_t nrep,
                      const llm_catalog *llms, const gpu_catalog *gpus,
                      const llm_engine *eng, unsigned flags) {
  find_repeats(run, rep, nrep);
  sim_error why = {0};
  if (model_run(run, llms, gpus, eng, flags, &why) != SIM_OK) {
    run->model_tps = run->model_tpj = run->model_power_w = NAN;
    run->steady_tps = run->steady_tpj = run->steady_power_w = NAN;
    snprintf(run->refused, sizeof run->refused, "%.159s", why.msg);
  }
}

int mlr_runs_load(const char *path, const llm_catalog *llms,
                  const gpu_catalog *gpus, const llm_engine *eng,
                  unsigned flags, mlr_run **runs, size_t *n, sim_error *err) {
  csv_reader rd;
  long col[K_N];
  size_t cap = 0, nrep = 0;
  mlr_repeat *rep = NULL;
  *runs = NULL;
  *n = 0;
  if (eng == NULL &&
      (eng = llm_catalog_engine(llms, LLM_ENGINE_DEFAULT)) == NULL)
    return sim_error_set(err, SIM_EINPUT, "the catalog has no vllm engine");
  /* Only a served run uses them: the steady model (make calibrate's, on
   * a copy of the fit set's rows elsewhere) reads none. */
  int rc = flags & MLR_SERVE ? load_repeats(path, &rep, &nrep, err) : SIM_OK;
  if (rc == SIM_OK)
    rc = csv_open(&rd, path, (size_t)64 << 20, err);
  if (rc != SIM_OK) {
    free(rep);
    return rc;
  }
  rc = find_columns(&rd, col);
  for (char *line; rc == SIM_OK && (line = csv_next_line(&rd)) != NULL;) {
    char *f[CSV_MAX_FIELDS];
    mlr_run run;
    size_t nf = csv_split(line, f);
    if (nf <= (size_t)col[K_POWER] || nf <= (size_t)col[K_ITL] ||
        !parse_row(f, col, &run))
      continue;
    model_row(&run, rep, nrep, llms, gpus, eng, flags);
    if (append(runs, n, &cap, &run) != SIM_OK)
      rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  csv_close(&rd);
  free(rep);
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

static bool takes(const mlr_run *r, mlr_filter f) {
  return r->refused[0] == '\0' && !isnan(r->model_tpj) &&
         (f.gpu == NULL || strcmp(r->gpu_model, f.gpu) == 0) &&
         (f.moe < 0 || r->moe == (f.moe == 1)) &&
         (f.fit < 0 || r->fit == (f.fit == 1));
}

mlr_summary mlr_summarise(const mlr_run *runs, size_t n, mlr_filter f) {
  mlr_summary out = {NAN, NAN, NAN, NAN, NAN, NAN, 0};
  double *buf = malloc(3 * (n ? n : 1) * sizeof *buf);
  if (buf == NULL)
    return out;
  double *j = buf, *s = buf + n, *p = buf + 2 * n;
  size_t k = 0, in2 = 0, in2s = 0, in2p = 0;
  for (size_t i = 0; i < n; i++) {
    if (!takes(&runs[i], f))
      continue;
    j[k] = runs[i].model_tpj / runs[i].tpj;
    s[k] = runs[i].model_tps / runs[i].tps;
    p[k] = runs[i].model_power_w / runs[i].power_w;
    in2 += j[k] >= 0.5 && j[k] <= 2;
    in2s += s[k] >= 0.5 && s[k] <= 2;
    in2p += p[k] >= 0.5 && p[k] <= 2;
    k++;
  }
  if (k > 0)
    out = (mlr_summary){mlr_quantile(j, k, 0.5), mlr_quantile(s, k, 0.5),
                        mlr_quantile(p, k, 0.5), (double)in2 / (double)k,
                        (double)in2s / (double)k, (double)in2p / (double)k,
                        k};
  free(buf);
  return out;
}

void mlr_class_summary(const mlr_run *runs, size_t n, bool moe, double *median,
                       double *within2, size_t *n_out) {
  mlr_summary s = mlr_summarise(runs, n, (mlr_filter){NULL, moe, -1});
  *median = s.tpj;
  *within2 = s.within2;
  *n_out = s.n;
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
