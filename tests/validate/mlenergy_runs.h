/* mlenergy_runs.h - every ML.ENERGY v3 run (data/gpu_power/
 * mlenergy_v3_llm_runs.csv, data/SOURCES.md) of a catalogued LLM on a
 * catalogued GPU, measured against the roofline model of that run's
 * replica. Used by the validate_mlenergy program and by the
 * test_mlenergy_all bands; it calls the library's public functions (LLM
 * and GPU catalogs, rl_* step model, gpu power), so it measures the
 * simulator, not a copy of it.
 *
 * A run is modelled as its steady state: the replica decodes its measured
 * avg_batch_size sequences at a mean context of prompt + avg_output_len /
 * 2 tokens (capped by the KV cache), and each request's prefill is paid
 * once over its output tokens, as ML.ENERGY divides all GPU energy by the
 * output tokens. The CSV does not give prompt lengths: MLR_PROMPT_TOKENS
 * (512) is assumed for every task, the figure the existing Llama-3.1-8B
 * test assumes for lm-arena-chat.
 *
 * Beside the ratios each run keeps the measured step (batch / tokens per
 * s), the measured median ITL and the modelled step with its parts
 * (rl_step), which validate_mlenergy writes to its CSV.
 *
 * The split (docs/VALIDATION.md): the H100 runs are the fit set of the
 * vLLM engine's step costs (scenarios/catalog/engines.yaml, fitted by
 * tools/calibrate.py), so rows drawn from them are calibration; the B200
 * runs are held out, and only rows drawn from them alone are validation.
 * MLR_FIT_GPU names the fit set's GPU as the CSV writes it; calibrate.py
 * declares the same set, and validate.py refuses a validation row drawn
 * from it. */
#ifndef MLENERGY_RUNS_H
#define MLENERGY_RUNS_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu.h"
#include "llm.h"

#define MLR_PROMPT_TOKENS 512.0

/* The fit set's GPU and the held-out GPU, as the CSV names them. */
#define MLR_FIT_GPU "H100"
#define MLR_HELD_OUT_GPU "B200"

/* One run, measured and modelled. Ratios are modelled / measured. */
typedef struct mlr_run {
  char model_id[96], task[32], gpu_model[16];
  const char *model;     /* catalog name (static table); borrowed */
  const char *precision; /* catalog precision; borrowed */
  bool moe;
  int gpus, tp, dp, ep; /* as the CSV gives them */
  double max_seqs, batch, output;
  double tps, tpj;             /* measured, whole run */
  double itl_ms;               /* measured median inter-token latency */
  double model_tps, model_tpj; /* modelled, whole run; NAN if refused */
  double step_ms, ctx;         /* modelled decode step and mean context */
  double weights_ms, kv_ms, gemm_ms, attn_ms, comm_ms,
      fixed_ms; /* its parts (rl_step) */
  double prefill_ms;           /* modelled prefill of one prompt */
  double step_batch;           /* sequences a replica decodes per step */
  double moe_layers;           /* the model's MoE layers; 0 dense */
  char refused[160];           /* why the replica was refused, or "" */
} mlr_run;

/* The catalog name of ML.ENERGY model_id, or NULL if it is not in the
 * mapping table. */
const char *mlr_catalog_name(const char *model_id);

/* Reads the CSV at path and models every run whose model, GPU and
 * precision map to the catalogs, with the step costs of engine (the
 * catalog's vLLM for the runs as measured; calibrate_mlenergy passes one
 * with no step costs). A replica rl_check refuses keeps NAN
 * figures and the reason in refused; the summaries skip it.
 * *runs is malloc'ed (free it), *n its length. SIM_OK, or SIM_EIO /
 * SIM_EINPUT / SIM_ENOMEM with a message in err. */
int mlr_runs_load(const char *path, const llm_catalog *llms,
                  const gpu_catalog *gpus, const llm_engine *engine,
                  mlr_run **runs, size_t *n, sim_error *err);

/* The q-quantile (0..1, linear between order statistics) of x[0..n); x is
 * sorted in place. NAN when n is 0. */
double mlr_quantile(double *x, size_t n, double q);

/* What a set of modelled runs shows, ratios modelled / measured: how many
 * runs, the medians of the tokens/J and tokens/s ratios, and the shares of
 * runs whose ratio is within a factor 2. Medians and shares are NAN when
 * n is 0. */
typedef struct mlr_summary {
  size_t n;
  double tpj_median, tps_median;
  double tpj_within2, tps_within2;
} mlr_summary;

/* The summary of the modelled runs with moe == moe on gpu_model (the
 * CSV's name, e.g. MLR_FIT_GPU; NULL: every GPU). */
void mlr_summarise(const mlr_run *runs, size_t n, bool moe,
                   const char *gpu_model, mlr_summary *out);

/* The run of model on gpu_model with max_num_seqs seqs and the task, or
 * NULL. Borrowed from runs. */
const mlr_run *mlr_find(const mlr_run *runs, size_t n, const char *model,
                        const char *gpu_model, const char *task, double seqs);

#endif
