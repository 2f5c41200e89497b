/* roofline.h - the inference performance model of one replica (docs/MODELS.md):
 * a roofline step model for continuous batching. A replica is one copy of
 * an LLM served on tp GPUs of one type with tensor parallelism, weights at
 * one precision and the KV cache at 16 bits. Everything here is a pure
 * function of the replica and its arguments; the event simulation of
 * requests (models/inference) builds on it.
 *
 * Decode step of a batch of B sequences with mean context c tokens:
 *
 *   bytes  = W(B) + B c kv                     (weights read once per step,
 *                                               each sequence's KV once)
 *
 * W(B) = W_active for a dense model. For an MoE, W(B) = W_shared +
 * D(B) x W_expert x L_moe, the shared weights plus the distinct routed
 * experts the batch touches in each MoE layer, D(B) = E (1 - (1 -
 * k/E)^B) (llm_decode_weight_bytes): k experts at B = 1, nearly all E
 * for large batches. FLOPs still follow the active parameters: each token
 * multiplies through its own k experts only.
 *   flops  = B (2 N_active + 4 L d c)          (Kaplan et al. 2020,
 *                                               arXiv:2001.08361, Table 1:
 *                                               2N per token plus 2 n_layer
 *                                               n_ctx d_attn for attention,
 *                                               doubled here to count the
 *                                               QK^T and the AV products)
 *   t_mem  = bytes / (tp BW e_bw)              (memory-bound: phi^beta)
 *   t_comp = flops / (tp F(p) e_flops phi)     (compute-bound: phi)
 *   t_step = max(t_w, t_gemm) + max(t_kv, t_attn) + t_tp + t_fixed
 *
 * The roofline bounds each kernel, not the step (Williams, Waterman and
 * Patterson, "Roofline", CACM 52(4), 2009): the GEMMs stream the weights
 * (t_w, the W(B) part of t_mem) against their 2 N_active FLOPs a token
 * (t_gemm), attention streams the KV cache (t_kv) against its 4 L d c
 * (t_attn), and the two run one after the other in every layer, so their
 * times add. The fixed time
 *
 *   t_fixed = B t_seq + L_moe t_moe + t_step (the engine's, at full clock)
 *
 * is what the roofline leaves out and ML.ENERGY v3's 345 catalogued vLLM
 * runs show (tests/validate/mlenergy_runs.h): a cost per sequence per
 * step, the same on H100 and B200, and a cost per MoE layer that more
 * GPUs do not shrink. Both are the serving engine's (llm_engine, from
 * scenarios/catalog/engines.yaml), fitted by tools/calibrate.py on the
 * H100 runs alone, the B200 runs held out. Through it the GPU's kernels
 * run for the share a_fixed of the time (the load below).
 *
 * with BW the HBM bandwidth, F(p) the dense peak at the weights' compute
 * precision, s_mem = gpu_speed_memory (phi^beta, beta = 0 in the catalog:
 * memory-bound work does not slow with the clock). The tensor-parallel
 * term (Megatron-LM, Shoeybi et al. 2019, arXiv:1909.08053, section 3: two
 * all-reduces per layer, after attention and after the MLP) is
 *
 *   t_tp = 2 L (alpha + 2 (tp-1)/tp x B d 2 bytes / link_bw),  0 at tp = 1
 *
 * (ring all-reduce: each GPU sends and receives 2 (tp-1)/tp of the
 * message). With expert parallelism (ep = tp > 1, an MoE only) each GPU
 * holds E/ep whole experts instead of a 1/tp slice of every expert, as
 * vLLM's --enable-expert-parallel does (EP size = TP x DP, here DP 1 in
 * the replica). The MLP all-reduce of an MoE layer is replaced by an
 * all-to-all: each token's 16-bit hidden state goes to its k experts and
 * comes back (dispatch and combine; Lepikhin et al. 2020, 'GShard',
 * arXiv:2006.16668, section 2.2; Rajbhandari et al. 2022, 'DeepSpeed-MoE',
 * arXiv:2201.05596, section 5). Each GPU sends its B/ep tokens, of which
 * (ep-1)/ep of the copies leave the GPU:
 *
 *   t_ep = L (alpha + ring(B))            attention all-reduce, every layer
 *        + (L - L_moe) (alpha + ring(B))  MLP all-reduce, dense layers
 *        + 2 L_moe (alpha + B/ep k d 2 (ep-1)/ep / link_bw)
 *
 * with the same link bandwidth and latency as the all-reduce (rl_config:
 * NVLink per direction, NCCL-scale latency). The GPUs' experts are not
 * touched evenly: each layer's combine waits for the GPU whose experts
 * the batch touched most, so the weights' time t_w streams that GPU's
 * share, D_max(B) experts a layer (the expected largest of ep binomial
 * counts, roofline.c), while the HBMs carry the mean D(B)/ep (bytes, and
 * so the power); the other GPUs wait as on an all-reduce.
 * A weight format whose GEMMs cannot stream at the engine's share
 * (llm_precision.weight_stream < e_bw: block-scaled FP8, whose kernels
 * promote each 128-wide K block's partial sums to FP32 and rescale them
 * on the CUDA cores) streams its weights at that share instead,
 *
 *   t_w = W_crit / (tp BW min(e_bw, w_stream))
 *   t_dequant = min(t_w - W_crit / (tp BW e_bw), max(0, t_w - t_gemm))
 *
 * and the SMs work through the time beyond the engine's stream
 * (t_dequant, counted in sm below) where the tensor pipes are not already
 * counted busy: the kernel is bound by its issue, not by the HBM. The
 * figure is a published kernel measurement's (scenarios/catalog/
 * models.yaml, fp8-block), not fitted.
 * Prefill of a prompt of n tokens is compute-bound:
 *
 *   flops = 2 N_active n + 2 L d n^2  (causal attention: half of 4 L d n^2)
 *   t_pre = flops / (tp F(p) e_flops phi) + t_tp(n tokens)
 *
 * Memory: per GPU, weights / tp + KV tokens x kv / tp must fit in
 * u x memory, u = vLLM's gpu_memory_utilization (default 0.9: vLLM
 * EngineArgs, docs "Engine Arguments"), the rest left for activations, the
 * CUDA context and the runtime.
 *
 * Power during a step: gpu_load_power(phi, L) per GPU (gpu.h) with the
 * load the step puts on each GPU at full clock,
 *
 *   sm   = (t_gemm + t_dequant + t_attn + a_fixed t_fixed) / t
 *   mem  = bytes / tp / (BW t)
 *   busy = 1 - (1 - a_fixed) t_fixed / t
 *
 * the tensor pipes busy for the kernels' compute time, the SMs at a_fixed
 * through the fixed costs (the engine's small kernels: sampling,
 * attention metadata, the MoE router and sort), nothing of note while
 * waiting on an all-reduce, and the HBM carrying the step's bytes. A
 * kernel runs (busy, the core's floor drawn: gpu.h) through the whole
 * step but the fixed costs' idle share: the host's scheduling between
 * steps and the gaps between many small launches leave the GPU waiting.
 * Drawing the floor through them too made the ML.ENERGY fit put the
 * power of eight-GPU MoE runs, which spend most of their modelled step
 * there at 250-390 W, on the bytes instead (docs/MODELS.md, "Why not 130
 * pJ a byte"). Under a lower clock the fixed costs stretch as
 *
 *   t_fixed(phi) = t_fixed (1 - a_fixed + a_fixed / s_c(phi))
 *
 * by the same reading: their kernels' share a_fixed runs on the SMs and
 * is latency-bound (a router's top-k, a sort, many small launches in a
 * CUDA graph), so it takes a fixed count of SM cycles and 1 / s_c(phi)
 * the time; the host's share between them does not follow the GPU's
 * clock. Nothing is fitted to this: a_fixed is the power fit's. The power
 * follows what the step does, not two fixed activity levels: a
 * memory-bound step at small batch draws the core's floor and the memory
 * power of its bandwidth, a large batch adds the SMs'. Tokens per joule
 * of a decode step = B / (t_step x tp x P). */
#ifndef MODELS_ROOFLINE_H
#define MODELS_ROOFLINE_H

#include <stddef.h>

#include "alloc.h"
#include "err.h"
#include "gpu.h"
#include "llm.h"

/* libm's fmax and fmin, inline (a step's time and load take six, each
 * a call into libm before): the larger (smaller), the other
 * argument when one is NaN. On a tie of +0 and -0 C lets them answer
 * either, and GCC may hand libm's the arguments in either order; the
 * callers' times and shares are never -0. */
static inline double rl_fmax(double a, double b) {
  return a > b || b != b ? a : b;
}
static inline double rl_fmin(double a, double b) {
  return a < b || b != b ? a : b;
}

/* The achievable shares of peak and the fixed costs. rl_config_default
 * gives the figures below; rl_replica_init sets the fixed costs from the
 * serving engine. */
typedef struct rl_config {
  /* Share of the HBM bandwidth a streaming benchmark reaches on the GPU
   * (gpu_spec.achievable_bps, the datasheet's where none is published)
   * that memory-bound decode reaches: 0.8. Stream benchmarks reach 0.83
   * (B200) to 0.9 (H100) of the datasheet figure (scenarios/catalog/
   * gpus.yaml); serving stacks' decode kernels (vLLM, TensorRT-LLM) about
   * 0.6-0.85 of the datasheet, the "model bandwidth utilisation" of
   * Databricks, "LLM Inference Performance Engineering: Best Practices"
   * (2023). */
  double eff_bw;
  /* Share of dense peak FLOP/s in compute-bound work (prefill, large
   * batches): 0.6. Pope et al. 2022, "Efficiently Scaling Transformer
   * Inference", arXiv:2211.05102: 76% MFU in large-batch prefill (TPU v4);
   * Narayanan et al. 2021 (Megatron-LM, SC'21): 52% of peak on A100
   * training; 0.5-0.7 is the usual range of GEMM-dominated GPU work. */
  double eff_flops;
  /* Share of GPU memory for weights and KV cache: 0.9, vLLM's
   * gpu_memory_utilization default. */
  double mem_utilization;
  /* SM activity through the fixed costs (seq_overhead_s and
   * moe_layer_overhead_s): the engine's small kernels keep the SMs busy
   * without the tensor pipes. Calibrated with the GPU power model on the
   * ML.ENERGY H100 fit set (make calibrate); the engine catalog has it. */
  double act_fixed;
  /* All-reduce link: per-GPU, per-direction NVLink bandwidth, 450e9 B/s
   * (H100 NVLink 4: 900 GB/s total, NVIDIA H100 datasheet; A100's NVLink 3
   * is 600 GB/s total), and a per-all-reduce latency of 10 us (NCCL
   * small-message all-reduce within an NVLink node is of order 10 us,
   * nccl-tests; NCCL's tuning model uses a few us per step). */
  double link_bps;
  double link_latency_s;
  /* Cost per sequence per decode step beyond the roofline, s, and the
   * fixed cost of each MoE layer in a decode step: the serving engine's
   * (llm_engine; scenarios/catalog/engines.yaml says what they stand for
   * and tools/calibrate.py fits them). rl_config_default gives 0, the
   * pure roofline; rl_replica_init sets the engine's. The MoE layer's cost
   * stands for kernel launches and the router's and sort's latency, not
   * for data moved: expert parallelism's all-to-all is modelled apart
   * (t_ep above). */
  double seq_overhead_s;
  double moe_layer_overhead_s;
  /* Fixed cost of every decode step, whatever its batch: the engine's
   * scheduling and the launch of the step's graph. */
  double step_overhead_s;
  /* The KV cache a request holds, for admission: its prompt and this
   * share of its output. 1 (rl_config_default) is a reservation of the
   * whole sequence, TensorRT-LLM's GUARANTEED_NO_EVICT policy; 0.5 is
   * vLLM's paging (Kwon et al., "Efficient Memory Management for Large
   * Language Model Serving with PagedAttention", SOSP 2023): blocks are
   * taken as tokens are made, and a sequence whose output is uniformly
   * under way holds half of it on average, so a batch of them holds the
   * sum of prompt + output / 2 in expectation. The model does not preempt:
   * a batch whose sequences all run long holds more than the cache for a
   * while, where vLLM would swap or recompute one. */
  double kv_reserve;
  /* Sequences decoded per request: 1, or the beam width of beam search
   * (the service's `beams`). Each step advances every beam of a request
   * by one token, and the request's output counts one of them: MLPerf's
   * GPT-J decodes 4 beams and counts the chosen beam's tokens (MLCommons
   * inference reference, language/gpt-j/backend.py: num_beams 4, "only
   * beam_size 4 is allowed for official submission"). The beams share the
   * prompt's KV cache, as TensorRT-LLM's paged cache shares a request's
   * context blocks between its beams, and hold their outputs apart; the
   * prompt is prefilled once. */
  double beams;
} rl_config;

/* The replica. Plain data, all pointers borrowed (the catalogs own them):
 * nothing to free. kv NULL means the KV cache at 16 bits. */
/* The busiest GPU's expected routed experts of an expert-parallel MoE
 * replica (roofline.c, busiest_gpu_experts) by whole batch, filled as the
 * batches come up: a sum of E / ep terms of exp, log and pow that depends
 * on the batch, the model and ep only, and that every decode step's
 * pricing needed (twice, at phi and at full clock). v[b] NaN: not yet.
 * Its owner makes it empty ({alloc}), points a replica of one model and
 * ep at it, and frees it (rl_ep_table_free); tables are not shared
 * between layouts. A table that cannot grow is not used (the sum). */
typedef struct rl_ep_table {
  const sim_allocator *alloc;
  double *v;
  size_t n;
} rl_ep_table;

/* Frees t's entries and empties it; t NULL: nothing. */
void rl_ep_table_free(rl_ep_table *t);

typedef struct rl_replica {
  const gpu_spec *gpu;
  const llm_model *model;
  const llm_precision *weights;
  const llm_precision *kv;
  int tp; /* tensor-parallel degree, >= 1: the replica's GPUs */
  int ep; /* expert-parallel degree: 0 or 1 none; else = tp, MoE only */
  rl_config cfg;
  rl_ep_table *ep_table; /* NULL: the sum at every step */
} rl_replica;

/* Writes the defaults above into cfg. */
void rl_config_default(rl_config *cfg);

/* Writes engine e's figures (llm.h) into cfg; the rest stays. */
void rl_config_engine(rl_config *cfg, const llm_engine *e);

/* Fills r with tp GPUs of type g serving m at weight precision w on engine
 * e (rl_config_engine), KV at 16 bits, no expert parallelism (ep 1) and
 * the default config otherwise, then checks it with rl_check. e NULL is
 * SIM_EINPUT. */
int rl_replica_init(rl_replica *r, const gpu_spec *g, const llm_model *m,
                    const llm_precision *w, const llm_engine *e, int tp,
                    sim_error *err);

/* SIM_OK if the replica can run: tp >= 1; ep 0 or 1, or ep = tp for an
 * MoE whose experts ep divides; efficiencies in (0, 1], the
 * GPU has tensor cores for the weights' precision (llm_check_precision),
 * and the weights fit: weights / tp <= mem_utilization x memory. Else
 * SIM_EINPUT with a message naming model, precision, GPU, tp and sizes.
 * err may be NULL. */
int rl_check(const rl_replica *r, sim_error *err);

/* The KV tokens a request holds with held of its output tokens: prompt +
 * beams x held. */
double rl_kv_tokens(const rl_replica *r, double prompt, double held);

/* Per-GPU memory for weights and KV, mem_utilization x memory, in B. */
double rl_memory_budget(const rl_replica *r);

/* The KV-cache capacity of the replica, in tokens summed over the batch
 * (the max batch x context the memory allows): (budget - weights / tp) /
 * (kv per token / tp). Fails like rl_check when even the weights do not
 * fit (*tokens is then 0). */
int rl_max_batch_tokens(const rl_replica *r, double *tokens, sim_error *err);

/* Per-step parts, in s, at normalised clock phi (clamped to [phi_min, 1]):
 * the memory term (already divided by gpu_speed_memory), the compute term
 * and the all-reduce term of a decode step; their combination. batch >= 1
 * requests, each decoding cfg.beams sequences; context >= 0 (the mean over
 * the batch). */
typedef struct rl_step {
  double bytes, flops;        /* per replica */
  double t_mem, t_comp, t_tp; /* s */
  double t_weights, t_kv;     /* parts of t_mem: weights, KV cache */
  double t_gemm, t_attn;      /* parts of t_comp: GEMMs, attention */
  double t_dequant; /* SM time of t_weights beyond the engine's stream */
  double t_fixed;   /* host and fixed MoE costs, s */
  double t;                   /* see the header comment */
  gpu_load load;              /* per GPU at full clock, the header comment */
} rl_step;

void rl_decode_step(const rl_replica *r, double batch, double context,
                    double phi, rl_step *out);

/* rl_decode_step but its load (out->load left alone): the load is the
 * full clock's whatever phi, so a caller pricing one step at many clocks
 * keeps it (the fluid services' step table). */
void rl_decode_step_parts(const rl_replica *r, double batch, double context,
                          double phi, rl_step *out);

/* The terms of a replica's decode step that depend on its clock alone:
 * a caller pricing many steps at one clock (a request-level replica
 * between clock changes) works them out once; the same bits as
 * rl_decode_step's. key is the phi asked for, phi it clamped. */
typedef struct rl_clock {
  double key, phi;
  double bw_weights, bw_engine; /* B/s: the weights', the engine's stream */
  double rate;                  /* FLOP/s */
  double fixed;                 /* the fixed costs' stretch at phi */
} rl_clock;

void rl_clock_of(const rl_replica *r, double phi, rl_clock *c);

/* rl_decode_step at clock at (rl_clock_of), its load priced at full
 * (rl_clock_of at 1; not read when at->phi is 1). */
void rl_decode_step_at(const rl_replica *r, double batch, double context,
                       const rl_clock *at, const rl_clock *full, rl_step *out);

/* The terms of a replica's decode step that depend on its batch alone
 * (requests): a caller pricing one batch at many contexts or clocks (a
 * request-level replica between joins and finishes) works them out once;
 * rl_decode_step_batch then gives rl_decode_step_at's bits. key is the
 * requests it is for (a zeroed one is for none: requests > 0). */
typedef struct rl_batch {
  double key, batch;    /* requests; sequences (x beams) */
  double weights, crit; /* B: all weights read, the critical path's */
  double gemm;          /* FLOPs */
  double kv_token;      /* KV B a sequence's token of context */
  double attn_token;    /* attention FLOPs a token of context */
  double t_tp, fixed;   /* s: all-reduces, fixed costs at full clock */
} rl_batch;

void rl_batch_of(const rl_replica *r, double requests, rl_batch *b);

void rl_decode_step_batch(const rl_replica *r, const rl_batch *b,
                          double context, const rl_clock *at,
                          const rl_clock *full, rl_step *out);

/* A batch's terms (rl_batch_of) with those of its step at full clock
 * that need no context (from rl_clock_of at 1): the times of its weights,
 * GEMMs, dequantisation and fixed costs, and the load's products of
 * them. A caller pricing many steps of one size (a request-level
 * service, for every replica at every size) works them out once. */
typedef struct rl_batch_full {
  rl_batch b;
  double tw, tg, twg; /* s: t_weights, t_gemm, their rl_fmax */
  double tdq, tf;     /* s: t_dequant, t_fixed */
  double sm_fixed;    /* act_fixed x tf, the load's SM term */
  double idle_fixed;  /* (1 - act_fixed) x tf, its host gaps */
  double bw;          /* B/s: tp x the HBM's bandwidth */
} rl_batch_full;

void rl_batch_full_of(const rl_replica *r, double requests,
                      const rl_clock *full, rl_batch_full *f);

/* What a replica's price of a decode step reads: its time and its compute
 * and memory times at its clock, its load at full clock. */
typedef struct rl_price {
  double t, t_comp, t_mem;
  gpu_load load;
} rl_price;

/* rl_decode_step_batch's t, t_comp, t_mem and load, their bits, from f
 * (rl_batch_full_of at full, rl_clock_of at 1): what the step would work
 * out and not use (its FLOPs, the dequantisation at the clock, the
 * context-free terms at full clock) is not worked out. */
void rl_decode_price(const rl_batch_full *f, double context, const rl_clock *at,
                     const rl_clock *full, rl_price *out);

/* rl_decode_price's t alone (rl_decode_step_batch_s's bits). */
double rl_decode_price_s(const rl_batch_full *f, double context,
                         const rl_clock *at, const rl_clock *full);

/* rl_decode_step_batch's time t alone (its bits), without the load: what
 * a replica's next change needs before the step is its own. */
double rl_decode_step_batch_s(const rl_batch *b, double context,
                              const rl_clock *at);

/* Decode step time, s: rl_decode_step's t. */
double rl_decode_step_s(const rl_replica *r, double batch, double context,
                        double phi);

/* Prefill of one prompt of prompt_tokens tokens, s (compute-bound plus
 * the all-reduces of the prompt's activations). */
double rl_prefill_s(const rl_replica *r, double prompt_tokens, double phi);

/* Power of one GPU of the replica during a decode step, W. */
double rl_step_power_w(const rl_replica *r, double batch, double context,
                       double phi);

/* The load of one GPU during a prefill, at full clock: the SMs busy for
 * its compute time (1 at tp = 1, less while waiting on all-reduces), the
 * HBM reading the weights once. */
gpu_load rl_prefill_load(const rl_replica *r, double prompt_tokens);

/* rl_prefill_s and rl_prefill_load of one prompt at once (the same
 * bits), their FLOPs and all-reduces worked out once. */
void rl_prefill(const rl_replica *r, double prompt_tokens, double phi,
                double *t_s, gpu_load *load);

/* rl_prefill at clock at (rl_clock_of at phi), its load at full
 * (rl_clock_of at 1): the same bits, the clock's rates not worked out. */
void rl_prefill_at(const rl_replica *r, double prompt_tokens,
                   const rl_clock *at, const rl_clock *full, double *t_s,
                   gpu_load *load);

/* The terms of a prefill that depend on the replica alone: a caller
 * pricing many prompts (a request-level service's joiners) works them out
 * once; rl_prefill_kept then gives rl_prefill_at's bits. */
typedef struct rl_prefill_terms {
  double flops_token; /* llm_flops_per_token */
  double attn;        /* 2 x layers x d_attn: FLOPs a prompt's token squared */
  double rings;       /* 2 x layers: the ring all-reduces a prefill makes */
  double ring_share;  /* 2 (tp - 1) / tp: a ring's share of its message */
  double w_bytes;     /* the weight bytes a GPU reads */
  bool ready;         /* worked out (a zeroed one is not) */
} rl_prefill_terms;

void rl_prefill_terms_of(const rl_replica *r, rl_prefill_terms *p);

void rl_prefill_kept(const rl_replica *r, const rl_prefill_terms *p,
                     double prompt_tokens, const rl_clock *at,
                     const rl_clock *full, double *t_s, gpu_load *load);

/* Power of one GPU during prefill, W: gpu_load_power of that load. */
double rl_prefill_power_w(const rl_replica *r, double prompt_tokens,
                          double phi);

/* Generated tokens per joule of a decode step, over all tp GPUs:
 * batch / (t_step x tp x P). */
double rl_decode_tokens_per_joule(const rl_replica *r, double batch,
                                  double context, double phi);

/* rl_decode_step_batch's parts and time at clock at (their bits), its
 * load left alone: a caller that keeps a batch's load at full clock for
 * its context (the load is the full clock's whatever the clock) prices
 * the step at a new clock once, not twice (the fluid step table). */
void rl_decode_step_batch_parts(const rl_batch *b, double context,
                                const rl_clock *at, rl_step *out);

#endif
