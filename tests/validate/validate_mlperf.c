/* validate_mlperf.c - the MLPerf Inference v3.1 and v4.0 power results
 * (data/mlperf/, data/SOURCES.md) against the trt-llm serving engine: each
 * Offline row whose GPU power limit the submitter stated is served as one
 * 8 x H100-SXM server at that limit, saturated (serve_run.h), and its
 * generated tokens/s and mean GPU power written out. What make calibrate
 * fits the engine's figures on (tools/calibrate.py, fit trt-llm).
 *
 * Usage: validate_mlperf [--seed N] [--set KEY=VALUE ...] RUNS.csv OUT.csv
 *   --seed N: the arrivals' seed of every row's service (default 1): the
 *   calibration runs each candidate on the same few seeds, so that its fit
 *   does not rest on one draw sequence (tools/calibrate.py, fit trt-llm).
 *   KEY: eff_bw, eff_flops, act_fixed, seq_overhead, moe_layer_overhead,
 *   step_overhead (s): the trt-llm engine's figures replaced; busy_share,
 *   pj_per_byte: the GPU power model's (the clock under the limit follows
 *   it), so that a calibration run fits on the figures it fitted.
 *
 * The rows. Llama 2 70B (llama2-70b-99.9): FP8 weights and KV cache
 * ("use_fp8=True"), tensor parallel 2 x 4 instances, as the rows say. GPT-J
 * (gptj-99): FP8, one GPU per instance (NVIDIA's v4.0 configuration is
 * not in the rows: taken as 8 instances), decoding 4 beams a sample, the
 * only width MLPerf allows for an official GPT-J result (MLCommons
 * inference reference, language/gpt-j/backend.py: num_beams 4), its 69
 * tokens a sample those of the chosen beam (roofline.h, beams). Lengths: the
 * outputs are the rows' own output_tokens_per_sample; the inputs are not
 * published as a mean (OpenOrca's are at most 1,024 tokens, CNN-DailyMail's at
 * most 1,919): half the maximum is assumed, 512 and 960, an assumption
 * docs/VALIDATION.md states. Server rows (load below saturation) and rows
 * without a stated limit (Dell's GPT-J, the v3.1 rows, which also ran
 * TensorRT 9.0 without in-flight batching) are left out. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "gpu.h"
#include "llm.h"
#include "serve_run.h"
#include "validate_set.h"

enum {
  C_ROUND,
  C_BENCH,
  C_SCENARIO,
  C_SUBMITTER,
  C_CONFIG,
  C_POWER,
  C_TPS,
  C_PER,
  C_N
};
static const char *const columns[C_N] = {"mlperf_round",
                                         "benchmark",
                                         "scenario",
                                         "submitter",
                                         "gpu_power_config",
                                         "avg_system_power_W",
                                         "output_tokens_per_s",
                                         "output_tokens_per_sample"};

typedef struct mlp_row {
  char round[64], bench[32], scenario[16], submitter[32];
  double limit_w, system_w, tps, per;
} mlp_row;

/* The per-GPU limit the row states ("power_limit=450 W" or "350 W"), or
 * NAN. */
static double stated_limit(const char *config) {
  const char *at = strstr(config, "power_limit=");
  at = at != NULL ? at + strlen("power_limit=") : strstr(config, ": GPU");
  double w;
  if (at != NULL && sscanf(at, "%lf", &w) == 1)
    return w;
  const char *p = strstr(config, "W (NVIDIA config)");
  if (p != NULL) {
    while (p > config && p[-1] == ' ')
      p--;
    while (p > config && (p[-1] >= '0' && p[-1] <= '9'))
      p--;
    return atof(p);
  }
  return NAN;
}

/* The rows quote fields with commas ("MaxQ: ..., TP=2 x4 instances"),
 * which sim/input/csv.c does not read: split here, quotes removed, in place. */
static size_t split_quoted(char *line, char **f) {
  size_t n = 0;
  char *w = line;
  f[n++] = w;
  for (char *p = line; *p != '\0' && n < CSV_MAX_FIELDS; p++) {
    if (*p == '"') {
      for (p++; *p != '\0' && !(*p == '"' && p[1] != '"'); p++)
        *w++ = *p == '"' ? *++p : *p;
      if (*p == '\0')
        break;
    } else if (*p == ',') {
      *w++ = '\0';
      f[n++] = w;
    } else {
      *w++ = *p;
    }
  }
  *w = '\0';
  return n;
}

static bool modelled(const mlp_row *r) {
  return strcmp(r->scenario, "Offline") == 0 && !isnan(r->limit_w) &&
         strncmp(r->round, "Inference v4.0", 14) == 0;
}

static int serve_row(const mlp_row *row, const llm_catalog *llms,
                     const gpu_catalog *gpus, const llm_engine *eng,
                     uint64_t seed, serve_result *res, sim_error *err) {
  bool llama = strncmp(row->bench, "llama2-70b", 10) == 0;
  const llm_precision *fp8 = llm_catalog_precision(llms, "fp8");
  rl_replica r;
  int rc = rl_replica_init(
      &r, gpu_catalog_find(gpus, "H100-SXM"),
      llm_catalog_find(llms, llama ? "Llama-2-70B" : "GPT-J-6B"), fp8, eng,
      llama ? 2 : 1, err);
  if (rc != SIM_OK)
    return rc;
  r.kv = fp8;
  r.cfg.beams = llama ? 1 : 4;
  serve_spec s = {.replica = &r,
                  .replicas = llama ? 4 : 8,
                  .max_batch = 2048, /* the KV cache is the limit */
                  .prompt = llama ? 512 : 960,
                  .output = row->per,
                  .output_sigma = llama ? 0.8 : 0.3,
                  .limit_w = row->limit_w,
                  .seed = seed};
  return serve_run(&s, res, err);
}

static int read_row(char **f, const long *col, mlp_row *r) {
  snprintf(r->round, sizeof r->round, "%s", f[col[C_ROUND]]);
  snprintf(r->bench, sizeof r->bench, "%s", f[col[C_BENCH]]);
  snprintf(r->scenario, sizeof r->scenario, "%s", f[col[C_SCENARIO]]);
  snprintf(r->submitter, sizeof r->submitter, "%s", f[col[C_SUBMITTER]]);
  r->limit_w = stated_limit(f[col[C_CONFIG]]);
  r->system_w = atof(f[col[C_POWER]]);
  r->tps = atof(f[col[C_TPS]]);
  r->per = atof(f[col[C_PER]]);
  return 0;
}

static int run(const char *in, const char *out, const llm_catalog *llms,
               const gpu_catalog *gpus, const llm_engine *eng, uint64_t seed,
               sim_error *err) {
  csv_reader rd;
  long col[C_N];
  char *f[CSV_MAX_FIELDS];
  int rc = csv_open(&rd, in, (size_t)1 << 20, err);
  if (rc != SIM_OK)
    return rc;
  char *line = csv_next_line(&rd);
  size_t nf = line != NULL ? split_quoted(line, f) : 0;
  for (int k = 0; rc == SIM_OK && k < C_N; k++)
    if ((col[k] = csv_column(f, nf, columns[k])) < 0)
      rc = csv_fail(&rd, NULL, columns[k], "missing column");
  FILE *o = rc == SIM_OK ? fopen(out, "w") : NULL;
  if (rc == SIM_OK && o == NULL)
    rc = sim_error_set(err, SIM_EIO, "%s: cannot write", out);
  if (o != NULL)
    fputs("round,benchmark,scenario,submitter,gpu_limit_w,"
          "measured_tokens_per_s,measured_system_w,model_tokens_per_s,"
          "model_gpu_power_w,model_batch,model_clock\n",
          o);
  while (rc == SIM_OK && (line = csv_next_line(&rd)) != NULL) {
    mlp_row row;
    if (split_quoted(line, f) < nf || read_row(f, col, &row) != 0 ||
        !modelled(&row))
      continue;
    serve_result res;
    rc = serve_row(&row, llms, gpus, eng, seed, &res, err);
    if (rc == SIM_OK)
      fprintf(o, "%s,%s,%s,%s,%.0f,%.1f,%.1f,%.1f,%.1f,%.1f,%.4f\n", row.round,
              row.bench, row.scenario, row.submitter, row.limit_w, row.tps,
              row.system_w, res.tokens_per_s, res.power_w, res.batch, res.phi);
  }
  csv_close(&rd);
  if (o != NULL && fclose(o) != 0 && rc == SIM_OK)
    rc = sim_error_set(err, SIM_EIO, "%s: cannot write", out);
  return rc;
}

int main(int argc, char **argv) {
  llm_catalog llms = {0};
  gpu_catalog gpus = {0};
  sim_error err = {0};
  const char *pos[2] = {NULL, NULL};
  int npos = 0;
  uint64_t seed = 1;
  int rc = llm_catalog_load_builtin(&llms, &err);
  if (rc == SIM_OK)
    rc = gpu_catalog_load_builtin(&gpus, &err);
  llm_engine eng = {0};
  gpu_power_model pm = {0};
  if (rc == SIM_OK) {
    eng = *llm_catalog_engine(&llms, "trt-llm");
    pm = gpus.power;
  }
  for (int i = 1; rc == SIM_OK && i < argc; i++) {
    if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
      if (vset_apply(argv[++i], &eng, &pm) != 0)
        rc = sim_error_set(&err, SIM_EINVAL, "bad --set %s", argv[i]);
    } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      if (units_parse_count(argv[++i], &seed) != 0)
        rc = sim_error_set(&err, SIM_EINVAL, "bad --seed %s", argv[i]);
    } else if (npos < 2) {
      pos[npos++] = argv[i];
    } else {
      rc = sim_error_set(&err, SIM_EINVAL, "too many arguments");
    }
  }
  if (rc == SIM_OK && npos != 2)
    rc = sim_error_set(&err, SIM_EINVAL,
                       "usage: validate_mlperf [--seed N] [--set K=V] "
                       "RUNS.csv OUT.csv");
  if (rc == SIM_OK) {
    vset_power_model(&gpus, &pm);
    rc = run(pos[0], pos[1], &llms, &gpus, &eng, seed, &err);
  }
  if (rc != SIM_OK)
    fprintf(stderr, "validate_mlperf: %s\n", err.msg);
  llm_catalog_fini(&llms);
  gpu_catalog_fini(&gpus);
  return rc == SIM_OK ? 0 : 1;
}
