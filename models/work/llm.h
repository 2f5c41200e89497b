/* llm.h - the LLM catalog: model shapes and weight precisions (docs/MODELS.md).
 * The catalog is data (scenarios/catalog/models.yaml, compiled in): one
 * llm_model per model, one llm_precision per weight format, every figure
 * with its source. It sits beside the GPU catalog (gpu.h), whose dense
 * throughput says which precisions a GPU type can run.
 *
 * Invariants after a load: active_parameters <= parameters, and < for an
 * MoE (experts > 0), = for a dense model; kv_heads divides
 * attention_heads; kv_bytes_per_token_fp16 is exactly
 * 2 (K and V) x layers x kv_heads x head_dim x 2 bytes. An MoE also has
 * expert_parameters > 0 and 1 <= moe_layers <= layers, its routed experts
 * (experts x expert_parameters x moe_layers) are fewer than its
 * parameters, and its active_parameters agree within 1% with the split:
 * parameters - (experts - experts_per_token) x expert_parameters x
 * moe_layers. A dense model has expert_parameters NAN and moe_layers 0.
 *
 * The split lets a decode step read what a batch touches: the shared
 * weights (attention, embeddings, dense layers, shared experts) once, and
 * of the routed experts only the distinct ones the batch's tokens chose
 * (llm_expected_experts). */
#ifndef MODELS_LLM_H
#define MODELS_LLM_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "gpu.h"
#include "scenario.h"

/* One model. Plain data from the catalog. Counts are doubles where they
 * exceed what scenarios write as integers (parameters). */
typedef struct llm_model {
  char *name; /* the identifier scenarios use, e.g. "Llama-3.1-8B" */
  char *full_name;
  double parameters;        /* all, every expert included */
  double active_parameters; /* per token; = parameters when dense */
  int64_t experts;          /* routed experts per MoE layer; 0: dense */
  int64_t experts_per_token;
  double expert_parameters; /* one routed expert of one layer; NAN: dense */
  int64_t moe_layers;       /* layers with routed experts; 0: dense */
  int64_t layers, hidden_size;
  int64_t attention_heads, kv_heads, head_dim;
  double kv_bytes_per_token_fp16; /* B, checked against the shape */
  int64_t context_length;         /* tokens */
  char **sources;
  size_t nsources;
} llm_model;

/* One weight format. The loader writes compute as an int (SCN_ENUM);
 * llm.c asserts that gpu_precision has int's size. */
typedef struct llm_precision {
  char *name;             /* "fp16", "fp8", "fp4", "int8", "int4", ... */
  double bits_per_weight; /* block scales included, e.g. 4.5 for NVFP4 */
  gpu_precision compute;  /* the tensor-core path the products run at */
  double weight_stream;   /* share of achievable HBM its GEMMs stream the
                             weights at, at most (1: the engine's eff_bw) */
  char **sources;
  size_t nsources;
} llm_precision;

/* One serving engine (scenarios/catalog/engines.yaml, compiled in): what
 * it reaches of the roofline and the costs of a decode step the roofline
 * leaves out (roofline.h, rl_config gives each figure's meaning). Its
 * fitted figures are written by tools/calibrate.py with their provenance
 * in fitted; nobody edits them by hand (docs/VALIDATION.md, "Fitted
 * constants"). */
typedef struct llm_engine {
  char *name; /* the identifier services use, e.g. "vllm" */
  char *full_name;
  double eff_bw, eff_flops;    /* shares of peak bandwidth and FLOP/s */
  double act_fixed;            /* SM activity through the fixed costs */
  double seq_overhead_s;       /* per sequence per decode step, s */
  double moe_layer_overhead_s; /* per MoE layer per decode step, s */
  double step_overhead_s;      /* per decode step, s */
  double kv_reserve; /* share of a request's output its admission holds */
  char **fitted;     /* "keys: fit set, data, method, residual" lines */
  size_t nfitted;
  char **sources;
  size_t nsources;
} llm_engine;

/* The engines of a catalog, one list. */
typedef struct llm_engines {
  llm_engine *list;
  size_t n;
} llm_engines;

/* The engine a service runs on unless it names one: the one ML.ENERGY
 * measured. */
#define LLM_ENGINE_DEFAULT "vllm"

typedef struct llm_catalog {
  llm_model *models;
  size_t n;
  llm_precision *precisions;
  size_t nprecisions;
  llm_engines engines; /* always the built-in engines.yaml */
  bool replace; /* a user file's `replace: true`: it is the whole catalog */
} llm_catalog;

/* The schemas of one entry, so a scenario can embed a custom one. */
extern const scn_schema llm_model_schema;
extern const scn_schema llm_precision_schema;
extern const scn_schema llm_engine_schema;

/* Loads the catalog compiled into the program, with the built-in
 * engines. SIM_OK, or an error with the position in the catalog text.
 * Free with llm_catalog_fini. */
int llm_catalog_load_builtin(llm_catalog *cat, sim_error *err);

/* Loads a catalog file in the same format, alone; the engines are the
 * built-in ones. A file that does not say `replace: true` may hold models
 * or precisions alone, to add to the built-in ones (llm_catalog_load). */
int llm_catalog_load_file(llm_catalog *cat, const char *path, sim_error *err);

/* Loads the catalog a scenario sees: the built-in one with the models and
 * precisions of the file at path (NULL: none) added, an entry of a
 * built-in name replacing that entry whole; or the file's alone when it
 * says `replace: true`. SIM_OK, or an error (SIM_EIO: path cannot be
 * read). Free with llm_catalog_fini. */
int llm_catalog_load(llm_catalog *cat, const char *path, sim_error *err);

/* Frees what a load allocated; the catalog is empty afterwards. Safe on a
 * zeroed or already released catalog. */
void llm_catalog_fini(llm_catalog *cat);

/* The model called name, or NULL. Borrowed: valid while cat lives. */
const llm_model *llm_catalog_find(const llm_catalog *cat, const char *name);

/* The precision called name, or NULL. Borrowed: valid while cat lives. */
const llm_precision *llm_catalog_precision(const llm_catalog *cat,
                                           const char *name);

/* The engine called name, or NULL. Borrowed: valid while cat lives. */
const llm_engine *llm_catalog_engine(const llm_catalog *cat, const char *name);

/* Writes the model names, the precision names or the engine names, as
 * "A, B, C" into buf (for hints); truncated to size. */
void llm_catalog_names(const llm_catalog *cat, char *buf, size_t size);
void llm_catalog_precision_names(const llm_catalog *cat, char *buf,
                                 size_t size);
void llm_catalog_engine_names(const llm_catalog *cat, char *buf, size_t size);

/* Bytes of all weights at precision p: parameters x bits / 8. Every expert
 * of an MoE is counted, since all must be resident. Cannot fail. */
double llm_weight_bytes(const llm_model *m, const llm_precision *p);

/* Bytes of the weights one token reads at precision p (active parameters):
 * what a decode step streams at batch size 1. */
double llm_active_weight_bytes(const llm_model *m, const llm_precision *p);

/* Parameters outside the routed experts: attention, norms, routers,
 * embeddings, dense layers and shared experts; = parameters when dense.
 * Cannot fail. */
double llm_shared_parameters(const llm_model *m);

/* Expected distinct routed experts per MoE layer that tokens tokens touch,
 * each choosing k = experts_per_token of E = experts uniformly:
 * E (1 - (1 - k/E)^tokens). An expert is missed by one token with
 * probability 1 - k/E, so by all of them with (1 - k/E)^tokens (the
 * occupancy problem: Feller, 'An Introduction to Probability Theory and
 * Its Applications', vol. 1, 3rd ed., 1968, ch. II.5 and IV.2). Uniform
 * routing is what the load-balancing losses of MoE training aim at
 * (Fedus et al. 2021, 'Switch Transformers', arXiv:2101.03961, section
 * 2.2); real routers are skewed, which only lowers the count. k at one
 * token, E as tokens grow; 0 for a dense model or tokens <= 0. */
double llm_expected_experts(const llm_model *m, double tokens);

/* Bytes of weights a decode step of batch sequences reads at precision p:
 * the shared weights plus llm_expected_experts(batch) routed experts in
 * each MoE layer. A dense model reads llm_active_weight_bytes whatever
 * the batch (the same expression, to the bit). Cannot fail. */
double llm_decode_weight_bytes(const llm_model *m, const llm_precision *p,
                               double batch);

/* KV-cache bytes per token with the cache held at precision kv; NULL means
 * 16 bits, the default of serving stacks. */
double llm_kv_bytes_per_token(const llm_model *m, const llm_precision *kv);

/* FLOPs per generated token: 2 x active parameters (one multiply and one
 * add per weight; Kaplan et al. 2020, 'Scaling Laws for Neural Language
 * Models', arXiv:2001.08361, section 2.1, C_forward ~ 2N). The attention
 * term 2 x layers x context x d_attn is left out: it is small next to 2N
 * below contexts of several thousand tokens. */
double llm_flops_per_token(const llm_model *m);

/* SIM_OK if GPU type g has dense throughput at p's compute precision;
 * otherwise SIM_EINPUT with a message naming both, e.g. "precision fp4
 * needs FP4 tensor cores; H100-SXM has none (fp16, fp8, int8)". err may be
 * NULL. */
int llm_check_precision(const gpu_spec *g, const llm_precision *p,
                        sim_error *err);

#endif
