/* mlenergy_runs.h - every ML.ENERGY v3 run (data/gpu_power/
 * mlenergy_v3_llm_runs.csv, data/SOURCES.md) of a catalogued LLM on a
 * catalogued GPU, measured against the simulator: its tokens/s, tokens/J
 * and GPU power per run (avg_power_watts / num_gpus). Used by the
 * validate_mlenergy program, by test_mlenergy_all and by make calibrate;
 * it calls the library's public functions (catalogs, rl_* step model,
 * gpu power, the inference service through serve_run.h), so it measures
 * the simulator, not a copy of it.
 *
 * Two models of a run:
 *  - steady: the replica decodes the measured avg_batch_size sequences at
 *    a mean context of prompt + output / 2 (capped by the KV cache), each
 *    request's prefill paid once over its output tokens, at the clock its
 *    mean load allows under the GPU's power limit (its TDP). This is what
 *    the engine's constants are fitted on (make calibrate): the fit takes
 *    the batch as measured and asks what a step costs.
 *  - served: the run as a service (serve_run.h): max_batch = max_num_seqs,
 *    arrivals at twice what the replica serves, so the batch forms from
 *    the arrivals, max_batch and the KV cache; the measured batch is not
 *    given. This is what the validation rows compare.
 *
 * Lengths. ML.ENERGY publishes each run's mean output length
 * (avg_output_len, used) and an output-length histogram per run (not in
 * the CSV: outputs are drawn lognormal with MLR_OUTPUT_SIGMA, an
 * assumption). It publishes no prompt lengths. mlr_prompt_tokens gives
 * each task's mean prompt from data/gpu_power/mlenergy_v3_task_prompts.csv
 * (data/SOURCES.md): gpqa 221 tokens, counted over the 198 GPQA diamond
 * questions as ML.ENERGY's benchmark builds the prompt, with the
 * cl100k_base BPE tokenizer (the 100k tokens Llama 3's extends; each
 * model's own tokenizer is not available here) and without the chat
 * template's tokens. lm-arena-chat (LMArena arena-human-preference-100k,
 * each turn sent with the whole history before it) and sourcegraph-fim
 * (Sourcegraph context-aware FIM, prefix and suffix) have no published
 * prompt-length figure and no copy of their data here: they keep
 * MLR_PROMPT_TOKENS (512), an assumption. Every prompt of a task is its
 * mean (a fixed length: the spread is not modelled). Unknown figures are
 * said so in docs/VALIDATION.md.
 *
 * Repeated prompts. ML.ENERGY's benchmark (github ml-energy/benchmark,
 * commit c1d6557, Apache-2.0) samples a task's unique requests (1,024;
 * gpqa's 198 questions; configs/vllm/<task>/benchmark.yaml) and, for the
 * larger max_num_seqs of a sweep, sends that list several times over, in
 * order (num_request_repeats in configs/vllm/<task>/<model>/<gpu>/
 * sweeps.yaml; mlenergy/benchmark/llm/workloads.py repeats the list
 * whole). Copies of one prompt then run at once, and vLLM's prefix
 * caching (on by default in its V1 engine; the configs do not turn it
 * off) holds one copy of a prompt's KV blocks and skips the copies'
 * prefill. The served model does the same (inference.h, "Shared
 * prompts"): a run with more than one repeat is served with a prompt pool
 * of its unique requests (mlr_prompt_pool), the figures from
 * data/gpu_power/mlenergy_v3_request_repeats.csv (mlenergy_repeats.h).
 * A run that sent its list once is served with unique prompts (it had no
 * copies), and so are the 13 runs the configs do not list. Served
 * arrivals go on past the list's end (the pool cycles), as the measured
 * steady state does. Not modelled: prefixes shared between different
 * prompts (lm-arena-chat's later turns carry the earlier ones), and
 * blocks vLLM keeps cached after their last holder. With the pool,
 * Llama-3.1-405B on 8 B200 at 2,048-4,096 seqs forms batches of 1,390-
 * 1,450 (1,100 without) where 2,040-3,590 ran, and is at 0.68-0.71 of
 * the measured tokens/s (0.44-0.46 without): the rest of the gap is
 * the batch, not the step (the steady model at the measured batch is
 * within 3% of the measured step for 405B, 15% for 70B). The steady
 * model, which make calibrate fits, takes the measured batch and is not
 * affected.
 *
 * The split, decided before any fit and never changed since: the fit set
 * is the H100 runs at BF16 of the chat and reasoning tasks (mlr_in_fit_set).
 * Held out: every B200 run (the other GPU), and three whole families on
 * both GPUs: FP8 weights (Llama-3.1-405B-FP8, Qwen3-235B-A22B FP8,
 * Llama-4-Maverick FP8), gpt-oss (MXFP4), and the long-prompt task
 * (sourcegraph-fim). */
#ifndef MLENERGY_RUNS_H
#define MLENERGY_RUNS_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu.h"
#include "llm.h"

#define MLR_PROMPT_TOKENS 512.0
#define MLR_OUTPUT_SIGMA 0.8

/* One run, measured and modelled. Ratios are modelled / measured. */
typedef struct mlr_run {
  char model_id[96], task[32], gpu_model[16];
  const char *model;     /* catalog name (static table); borrowed */
  const char *precision; /* catalog precision; borrowed */
  bool moe, fit;         /* fit: in the fit set (mlr_in_fit_set) */
  int gpus, tp, dp, ep; /* as the CSV gives them */
  double max_seqs, batch, output;
  double tps, tpj, power_w;    /* measured, whole run; power per GPU */
  double itl_ms;               /* measured median inter-token latency */
  int repeats, unique; /* the run sent its unique requests repeats times
                          (mlenergy_repeats.h); 0 and 0: not listed */
  /* Steady, at the measured batch (the header comment). */
  double steady_tps, steady_tpj, steady_power_w, steady_phi;
  double step_ms, ctx;         /* its decode step at that clock, context */
  double weights_ms, kv_ms, gemm_ms, attn_ms, comm_ms,
      fixed_ms; /* the step's parts (rl_step) */
  double prefill_ms;           /* modelled prefill of one prompt */
  /* Served: the batch formed by the service (the header comment); NAN
   * when the run was loaded without MLR_SERVE or refused. */
  double model_tps, model_tpj, model_power_w, model_batch, model_phi;
  char refused[160];           /* why the replica was refused, or "" */
} mlr_run;

enum { MLR_SERVE = 1 }; /* mlr_runs_load: also serve every run */

/* The mean prompt tokens of a request of ML.ENERGY task task (the header
 * comment); MLR_PROMPT_TOKENS for a task without a figure. */
double mlr_prompt_tokens(const char *task);

/* The prompt pool r is served with: its unique requests when it sent
 * them more than once, else 0 (every prompt unique: a run that sent its
 * list once had no copies; nor does one the configs do not list). */
int mlr_prompt_pool(const mlr_run *r);

/* Whether r is in the fit set (the header comment). */
bool mlr_in_fit_set(const mlr_run *r);

/* The catalog name of ML.ENERGY model_id, or NULL if it is not in the
 * mapping table. */
const char *mlr_catalog_name(const char *model_id);

/* Reads the CSV at path (with MLR_SERVE also the request repeats beside
 * it, mlenergy_v3_request_repeats.csv, mlenergy_repeats.h) and models
 * every run whose model, GPU and
 * precision map to the catalogs with engine eng (NULL: the catalog's
 * vllm): steady always, served too with flags MLR_SERVE. A replica
 * rl_check refuses keeps NAN figures and the reason in refused; the
 * summaries skip it. *runs is malloc'ed (free it), *n its length. SIM_OK,
 * or SIM_EIO / SIM_EINPUT / SIM_ENOMEM with a message in err. */
int mlr_runs_load(const char *path, const llm_catalog *llms,
                  const gpu_catalog *gpus, const llm_engine *eng,
                  unsigned flags, mlr_run **runs, size_t *n, sim_error *err);

/* The q-quantile (0..1, linear between order statistics) of x[0..n); x is
 * sorted in place. NAN when n is 0. */
double mlr_quantile(double *x, size_t n, double q);

/* Which runs a summary takes: a GPU ("H100", "B200" or NULL: both), a
 * class (0 dense, 1 MoE, -1 both) and a set (1 fit, 0 held out, -1
 * both). */
typedef struct mlr_filter {
  const char *gpu;
  int moe, fit;
} mlr_filter;

/* Over the served runs f takes: the medians of the tokens/J, tokens/s
 * and power ratios, the shares of runs within a factor 2 in tokens/J,
 * tokens/s and power, and how many. NAN figures when none. */
typedef struct mlr_summary {
  double tpj, tps, power; /* medians of the ratios */
  double within2, within2_tps, within2_power; /* shares within 2x */
  size_t n;
} mlr_summary;

mlr_summary mlr_summarise(const mlr_run *runs, size_t n, mlr_filter f);

/* Over the modelled runs with moe == moe: the median served tokens/J
 * ratio and the share of runs within a factor 2. n_out: how many. */
void mlr_class_summary(const mlr_run *runs, size_t n, bool moe, double *median,
                       double *within2, size_t *n_out);

/* The run of model on gpu_model with max_num_seqs seqs and the task, or
 * NULL. Borrowed from runs. */
const mlr_run *mlr_find(const mlr_run *runs, size_t n, const char *model,
                        const char *gpu_model, const char *task, double seqs);

#endif
