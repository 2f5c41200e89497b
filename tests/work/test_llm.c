/* test_llm.c - the LLM catalog against its architectures and the published
 * sizes, weight and KV bytes per precision, FLOPs per token, precisions
 * checked against the GPU catalog's tensor cores, and bad entries refused
 * with their position. */
#include "test_catalogs.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llm.h"

static const llm_precision *prec(const char *name) {
  const llm_precision *p = llm_catalog_precision(&cats.llm, name);
  if (p == NULL)
    fail_msg("no precision %s", name);
  return p;
}

static const llm_model *model(const char *name) {
  const llm_model *m = llm_catalog_find(&cats.llm, name);
  if (m == NULL)
    fail_msg("no model %s", name);
  return m;
}

/* Published shapes: parameters (the model card's rounding), KV bytes per
 * token at 16 bits written out as the product it is. round: the card's
 * rounding in billions (0: three or four figures, checked to 0.4%);
 * embed: billions the card leaves out of its active count (gpt-oss's
 * embedding table, 201,088 x 2,880, arXiv:2508.10925 Table 1). */
typedef struct shape_row {
  const char *name;
  double parameters, active; /* billions, as the cards round them */
  double kv_bytes;
  double round, embed;
} shape_row;

static const shape_row shapes[] = {
    {"Llama-2-7B", 6.74, 6.74, 2.0 * 32 * 32 * 128 * 2, 0, 0},
    {"Llama-2-70B", 69.0, 69.0, 2.0 * 80 * 8 * 128 * 2, 0, 0},
    {"Llama-3.1-8B", 8.03, 8.03, 2.0 * 32 * 8 * 128 * 2, 0, 0},
    {"Llama-3.1-70B", 70.6, 70.6, 2.0 * 80 * 8 * 128 * 2, 0, 0},
    {"Llama-3.1-405B", 405.9, 405.9, 2.0 * 126 * 8 * 128 * 2, 0, 0},
    {"Mixtral-8x7B", 46.7, 12.9, 2.0 * 32 * 8 * 128 * 2, 0, 0},
    /* Meta's cards round to whole billions: 400B/17B, 109B/17B (Scout's
     * 109B counts the vision encoder too, about 1.2B more). */
    {"Llama-4-Maverick", 400, 17, 2.0 * 48 * 8 * 128 * 2, 1, 0},
    {"Llama-4-Scout", 109, 17, 2.0 * 48 * 8 * 128 * 2, 1.5, 0},
    {"Qwen3-30B-A3B", 30.5, 3.3, 2.0 * 48 * 4 * 128 * 2, 0.1, 0},
    {"Qwen3-235B-A22B", 235, 22, 2.0 * 94 * 4 * 128 * 2, 0.5, 0},
    {"gpt-oss-120b", 116.83, 5.13, 2.0 * 36 * 8 * 64 * 2, 0, 0.579},
    {"gpt-oss-20b", 20.91, 3.61, 2.0 * 24 * 8 * 64 * 2, 0, 0.579},
};

static void matches_published_shape(void **state) {
  const shape_row *row = *state;
  const llm_model *m = model(row->name);
  double total = m->parameters / 1e9;
  double active = m->active_parameters / 1e9 - row->embed;
  if (row->round > 0) {
    assert_close(total, row->parameters, 0, row->round);
    assert_close(active, row->active, 0, row->round);
  } else { /* within the cards' rounding to three or four figures */
    assert_close(total, row->parameters, 0.004, 0);
    assert_close(active, row->active, 0.004, 0);
  }
  assert_close(m->kv_bytes_per_token_fp16, row->kv_bytes, 0, 0);
  assert_true(m->nsources >= 1);
}

/* Every entry: the stored KV size is the product of its shape, GQA groups
 * are whole, and an MoE uses fewer parameters per token than it holds. */
static void every_kv_size_matches_its_architecture(void **state) {
  (void)state;
  assert_true(cats.llm.n >= 7);
  for (size_t i = 0; i < cats.llm.n; i++) {
    const llm_model *m = &cats.llm.models[i];
    double kv = 2.0 * (double)(m->layers * m->kv_heads * m->head_dim) * 2;
    assert_close(m->kv_bytes_per_token_fp16, kv, 0, 0);
    assert_close(llm_kv_bytes_per_token(m, NULL), kv, 0, 0);
    assert_int_equal(m->attention_heads % m->kv_heads, 0);
    if (m->experts > 0)
      assert_true(m->active_parameters < m->parameters);
    else
      assert_close(m->active_parameters, m->parameters, 0, 0);
  }
}

static void llama_8b_and_70b_sizes(void **state) {
  (void)state;
  const llm_model *m8 = model("Llama-3.1-8B");
  /* 2 bytes x 8.03e9 parameters = 16.06 GB. */
  assert_close(llm_weight_bytes(m8, prec("fp16")), 16.06e9, 0.001, 0);
  /* 32 layers x 8 kv heads x 128 x 2 (K, V) x 2 bytes = 128 KiB. */
  assert_close(llm_kv_bytes_per_token(m8, NULL), 128 * 1024, 0, 0);
  assert_close(llm_kv_bytes_per_token(m8, prec("fp16")), 128 * 1024, 0, 0);
  assert_close(llm_kv_bytes_per_token(m8, prec("fp8")), 64 * 1024, 0, 0);
  const llm_model *m70 = model("Llama-3.1-70B");
  assert_close(llm_kv_bytes_per_token(m70, NULL), 320 * 1024, 0, 0);
  assert_close(llm_weight_bytes(m70, prec("fp16")), 141.1e9, 0.001, 0);
  /* Llama 2 7B has no GQA: 4x the KV of Llama 3.1 8B per token. */
  assert_close(llm_kv_bytes_per_token(model("Llama-2-7B"), NULL),
               4 * llm_kv_bytes_per_token(m8, NULL), 0, 0);
}

static void moe_counts_active_parameters(void **state) {
  (void)state;
  const llm_model *mx = model("Mixtral-8x7B");
  assert_int_equal(mx->experts, 8);
  assert_int_equal(mx->experts_per_token, 2);
  assert_true(mx->active_parameters < mx->parameters);
  /* All experts resident, two per token read and computed. */
  const llm_precision *fp16 = prec("fp16");
  assert_close(llm_weight_bytes(mx, fp16), 2 * 46.70e9, 0.001, 0);
  assert_close(llm_active_weight_bytes(mx, fp16), 2 * 12.88e9, 0.001, 0);
  assert_close(llm_flops_per_token(mx), 2 * 12.88e9, 0.001, 0);
  /* 2 x the card's 17B activated, to its rounding (17.18B derived). */
  const llm_model *mv = model("Llama-4-Maverick");
  assert_close(llm_flops_per_token(mv), 34e9, 0, 1e9);
}

/* The figures: a decode step of Maverick reads the 17B active
 * parameters at batch 1, and at batch 256 nearly all 128 experts, "about
 * 400B". Distinct experts follow E (1 - (1 - k/E)^B). */
static void moe_decode_reads_the_experts_a_batch_touches(void **state) {
  (void)state;
  const llm_model *mv = model("Llama-4-Maverick");
  const llm_precision *fp8 = prec("fp8");
  assert_close(llm_expected_experts(mv, 1), 1, 1e-12, 0);
  assert_close(llm_decode_weight_bytes(mv, fp8, 1),
               llm_active_weight_bytes(mv, fp8), 1e-9, 0);
  double e256 = llm_expected_experts(mv, 256);
  assert_close(e256, 128 * (1 - pow(127.0 / 128, 256)), 1e-12, 0);
  assert_true(e256 > 100 && e256 < 128); /* "nearly all 128" */
  double b256 = llm_decode_weight_bytes(mv, fp8, 256);
  print_message("Maverick FP8 decode bytes: batch 1 %.1f GB, batch 256 "
                "%.1f GB (%.1f experts a layer), all %.1f GB\n",
                llm_decode_weight_bytes(mv, fp8, 1) / 1e9, b256 / 1e9, e256,
                llm_weight_bytes(mv, fp8) / 1e9);
  assert_true(b256 > 0.8 * llm_weight_bytes(mv, fp8));
  assert_true(b256 < llm_weight_bytes(mv, fp8));
  /* Many tokens touch every expert: the step reads all the weights. */
  assert_close(llm_decode_weight_bytes(mv, fp8, 1e5), llm_weight_bytes(mv, fp8),
               1e-9, 0);
  /* Mixtral: 2 of 8 experts per token, 8 touched by a batch of 64. */
  const llm_model *mx = model("Mixtral-8x7B");
  assert_close(llm_expected_experts(mx, 1), 2, 1e-12, 0);
  assert_close(llm_expected_experts(mx, 64), 8, 1e-6, 0);
}

/* Dense models read their active weights whatever the batch, to the bit,
 * and their shared part is all of them. */
static void dense_decode_bytes_do_not_move(void **state) {
  (void)state;
  const double batches[] = {1, 8, 256, 4096};
  for (size_t i = 0; i < cats.llm.n; i++) {
    const llm_model *m = &cats.llm.models[i];
    if (m->experts > 0)
      continue;
    assert_true(llm_shared_parameters(m) == m->parameters);
    assert_true(llm_expected_experts(m, 256) == 0);
    for (size_t b = 0; b < N_OF(batches); b++)
      assert_true(llm_decode_weight_bytes(m, prec("fp16"), batches[b]) ==
                  llm_active_weight_bytes(m, prec("fp16")));
  }
}

/* 2 x active parameters: 16.06 GFLOP per token for 8B, 811.7 for 405B. */
static void flops_per_token(void **state) {
  (void)state;
  assert_close(llm_flops_per_token(model("Llama-3.1-8B")), 16.06e9, 0.001, 0);
  assert_close(llm_flops_per_token(model("Llama-3.1-405B")), 811.7e9, 0.001, 0);
}

typedef struct bits_row {
  const char *name;
  double bits;
  gpu_precision compute;
} bits_row;

static const bits_row bits[] = {
    {"fp16", 16, GPU_FP16},      {"fp8", 8, GPU_FP8},
    {"fp8-block", 8 + 32.0 / (128 * 128), GPU_FP8},
    {"fp4", 4.5, GPU_FP4},       {"int8", 8, GPU_INT8},
    {"int4", 4.15625, GPU_INT4}, {"w4a16", 4.15625, GPU_FP16},
};

/* Weight bytes scale with bits: FP8 is half of FP16, NVFP4 4.5/16. */
static void weight_bytes_scale_with_bits(void **state) {
  const bits_row *row = *state;
  const llm_precision *p = prec(row->name);
  assert_close(p->bits_per_weight, row->bits, 0, 0);
  assert_int_equal(p->compute, row->compute);
  for (size_t i = 0; i < cats.llm.n; i++) {
    const llm_model *m = &cats.llm.models[i];
    double fp16 = llm_weight_bytes(m, prec("fp16"));
    assert_close(llm_weight_bytes(m, p), fp16 * row->bits / 16, 1e-15, 0);
  }
}

static void precision_names_match_the_gpu_ones(void **state) {
  (void)state;
  for (int p = 0; p < GPU_NPRECISIONS; p++)
    assert_non_null(
        llm_catalog_precision(&cats.llm, gpu_precision_name((gpu_precision)p)));
  assert_null(llm_catalog_precision(&cats.llm, "fp6"));
  assert_null(llm_catalog_find(&cats.llm, "Llama-3-8B"));
  char buf[512];
  llm_catalog_names(&cats.llm, buf, sizeof buf);
  assert_non_null(strstr(buf, "Llama-2-7B, Llama-2-70B, Llama-3.1-8B"));
  llm_catalog_precision_names(&cats.llm, buf, sizeof buf);
  assert_string_equal(buf,
                      "fp16, fp8, fp8-block, fp4, int8, int4, w4a16, mxfp4");
}

typedef struct check_row {
  const char *name;
  const char *gpu, *precision;
  const char *message; /* NULL: allowed */
} check_row;

static const check_row checks[] = {
    {"fp4 on H100-SXM", "H100-SXM", "fp4",
     "precision fp4 needs FP4 tensor cores; H100-SXM has none "
     "(fp16, fp8, int8)"},
    {"fp8 on A100-SXM", "A100-SXM", "fp8",
     "precision fp8 needs FP8 tensor cores; A100-SXM has none "
     "(fp16, int8, int4)"},
    {"int4 on H100-SXM", "H100-SXM", "int4",
     "precision int4 needs INT4 tensor cores; H100-SXM has none"},
    {"fp4 on B200", "B200", "fp4", NULL},
    {"fp8 on H100-SXM", "H100-SXM", "fp8", NULL},
    {"int4 on A100-SXM", "A100-SXM", "int4", NULL},
    {"w4a16 on H100-SXM", "H100-SXM", "w4a16", NULL},
};

static void precision_against_gpu(void **state) {
  const check_row *row = *state;
  const gpu_spec *g = gpu_catalog_find(&cats.gpu, row->gpu);
  assert_non_null(g);
  sim_error err = {0};
  int rc = llm_check_precision(g, prec(row->precision), &err);
  if (row->message == NULL) {
    assert_int_equal(rc, SIM_OK);
    return;
  }
  assert_int_equal(rc, SIM_EINPUT);
  if (strstr(err.msg, row->message) == NULL)
    fail_msg("got '%s', want '%s'", err.msg, row->message);
  assert_int_equal(llm_check_precision(g, prec(row->precision), NULL),
                   SIM_EINPUT);
}

/* ------------------------------------------------------------------ */
/* Bad entries                                                          */
/* ------------------------------------------------------------------ */

#define MODEL                                                                  \
  "name: X\n"                                                                  \
  "parameters: 8.03e9\n"                                                       \
  "layers: 32\n"                                                               \
  "hidden_size: 4096\n"                                                        \
  "attention_heads: 32\n"                                                      \
  "kv_heads: 8\n"                                                              \
  "head_dim: 128\n"                                                            \
  "context_length: 8192\n"                                                     \
  "sources: ['all: test']\n"

static const test_bad_yaml bad_models[] = {
    {"kv size off the architecture", MODEL "kv_bytes_per_token_fp16: 256 KiB\n",
     "m.yaml:10:26: X: kv_bytes_per_token_fp16 262144 B does not match the "
     "architecture: 2 x 32 x 8 x 128 x 2 B = 131072 B"},
    {"active above total",
     MODEL "kv_bytes_per_token_fp16: 128 KiB\nactive_parameters: 9e9\n"
           "experts: 8\nexperts_per_token: 2\n",
     "m.yaml:11:20: X: active_parameters 9e+09 exceed parameters 8.03e+09"},
    {"moe without fewer active",
     MODEL "kv_bytes_per_token_fp16: 128 KiB\nexperts: 8\n"
           "experts_per_token: 2\n",
     "m.yaml:1:1: X: an MoE's active_parameters must be below"},
    {"dense with fewer active",
     MODEL "kv_bytes_per_token_fp16: 128 KiB\nactive_parameters: 2e9\n",
     "m.yaml:11:20: X: a dense model's active_parameters must equal"},
    {"kv heads not dividing",
     "name: X\nparameters: 8e9\nlayers: 32\nhidden_size: 4096\n"
     "attention_heads: 30\nkv_heads: 8\nhead_dim: 128\n"
     "kv_bytes_per_token_fp16: 128 KiB\ncontext_length: 8\n"
     "sources: ['x: y']\n",
     "m.yaml:6:11: X: kv_heads 8 does not divide attention_heads 30"},
    {"top-k above experts",
     MODEL "kv_bytes_per_token_fp16: 128 KiB\nactive_parameters: 2e9\n"
           "experts: 2\nexperts_per_token: 3\n",
     "m.yaml:13:20: X: experts_per_token must be between 1 and experts"},
    {"parameters with a unit", "name: X\nparameters: 8 B\n",
     "m.yaml:2:15: 'parameters': unexpected unit 'B'"},
    {"kv size without a unit", MODEL "kv_bytes_per_token_fp16: 131072\n",
     "m.yaml:10:32: 'kv_bytes_per_token_fp16': missing unit"},
    {"moe without expert size",
     MODEL "kv_bytes_per_token_fp16: 128 KiB\nactive_parameters: 2e9\n"
           "experts: 8\nexperts_per_token: 2\n",
     "X: an MoE needs expert_parameters"},
    {"expert split off the active count",
     MODEL "kv_bytes_per_token_fp16: 128 KiB\nactive_parameters: 2e9\n"
           "experts: 8\nexperts_per_token: 2\nexpert_parameters: 2e7\n",
     "X: active_parameters 2e+09 differ by more than 1% from the expert "
     "split's 4.19e+09"},
    {"routed experts above the total",
     MODEL "kv_bytes_per_token_fp16: 128 KiB\nactive_parameters: 2e9\n"
           "experts: 8\nexperts_per_token: 2\nexpert_parameters: 1e8\n",
     "X: routed experts 2.56e+10 (experts x expert_parameters x moe_layers) "
     "are not below parameters 8.03e+09"},
    {"more moe layers than layers",
     MODEL "kv_bytes_per_token_fp16: 128 KiB\nactive_parameters: 2e9\n"
           "experts: 8\nexperts_per_token: 2\nexpert_parameters: 1e8\n"
           "moe_layers: 33\n",
     "X: moe_layers 33 exceed layers 32"},
    {"expert size on a dense model",
     MODEL "kv_bytes_per_token_fp16: 128 KiB\nexpert_parameters: 1e8\n",
     "X: expert_parameters or moe_layers without experts"},
};

static void bad_model_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&llm_model_schema, "m.yaml", b->yaml, b->message);
}

static const test_bad_yaml bad_precisions[] = {
    {"unknown gpu precision",
     "name: fp6\nbits_per_weight: 6\ngpu_precision: fp6\nsources: ['x: y']\n",
     "p.yaml:3:16:"},
    {"no bits", "name: fp6\ngpu_precision: fp8\nsources: ['x: y']\n",
     "bits_per_weight"},
    {"bits out of range",
     "name: fp6\nbits_per_weight: 0.5\ngpu_precision: fp8\n"
     "sources: ['x: y']\n",
     "p.yaml:2:18:"},
};

/* The built-in engines carry their fitted figures with their provenance,
 * written by tools/calibrate.py (the test calibration_fresh holds the
 * values themselves): vllm from the ML.ENERGY fit set, trt-llm from the
 * MLPerf one. */
static void the_engines_are_fitted(void **state) {
  (void)state;
  static const struct {
    const char *name, *keys;
  } fitted[] = {{LLM_ENGINE_DEFAULT, "eff_bw, act_fixed, seq_overhead, "
                                     "moe_layer_overhead, step_overhead: "},
                {"trt-llm", "eff_flops, seq_overhead: "}};
  for (size_t k = 0; k < 2; k++) {
    const llm_engine *e = llm_catalog_engine(&cats.llm, fitted[k].name);
    assert_non_null(e);
    assert_true(e->seq_overhead_s > 0 && e->seq_overhead_s < 1e-3);
    assert_true(e->eff_bw > 0 && e->eff_bw <= 1 && e->eff_flops > 0);
    assert_true(e->nfitted > 0 && e->nsources > 0);
    size_t len = strlen(fitted[k].keys);
    for (size_t i = 0; i < e->nfitted; i++)
      if (strncmp(e->fitted[i], fitted[k].keys, len) != 0)
        fail_msg("%s: fitted line %zu names other keys: %s", e->name, i,
                 e->fitted[i]);
  }
  assert_null(llm_catalog_engine(&cats.llm, "no-such-engine"));
}

#define ENGINE                                                                 \
  "name: e\nsources: ['x: y']\neff_bw: 80%\neff_flops: 60%\n"                  \
  "act_fixed: 40%\nstep_overhead: 0 s\n"

static const test_bad_yaml bad_engines[] = {
    {"negative cost",
     ENGINE "seq_overhead: -1 us\nmoe_layer_overhead: 0 s\nkv_reserve: 1\n",
     "e.yaml:7:15:"},
    {"not a time",
     ENGINE "seq_overhead: 37 W\nmoe_layer_overhead: 0 s\nkv_reserve: 1\n",
     "e.yaml:7:18: 'seq_overhead': 'W' is a unit of power"},
    {"no moe cost", ENGINE "seq_overhead: 37 us\nkv_reserve: 1\n",
     "moe_layer_overhead"},
    {"no kv reserve", ENGINE "seq_overhead: 37 us\nmoe_layer_overhead: 0 s\n",
     "kv_reserve"},
    {"kv reserve above 1",
     ENGINE "seq_overhead: 37 us\nmoe_layer_overhead: 0 s\nkv_reserve: 150%\n",
     "e.yaml:9:13:"},
    {"no sources",
     "name: e\neff_bw: 80%\neff_flops: 60%\nact_fixed: 40%\n"
     "step_overhead: 0 s\nseq_overhead: 37 us\nmoe_layer_overhead: 185 us\n"
     "kv_reserve: 50%\n",
     "sources"},
    {"share above 1",
     "name: e\nsources: ['x: y']\neff_bw: 120%\neff_flops: 60%\n"
     "act_fixed: 40%\nstep_overhead: 0 s\nseq_overhead: 37 us\n"
     "moe_layer_overhead: 0 s\nkv_reserve: 50%\n",
     "e.yaml:3:9:"},
};

static void bad_engine_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&llm_engine_schema, "e.yaml", b->yaml, b->message);
}

static void bad_precision_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&llm_precision_schema, "p.yaml", b->yaml, b->message);
}

/* A whole catalog from YAML text, through the file loader. */
static int parse_catalog(const char *yaml, llm_catalog *cat, sim_error *err) {
  const char *path = test_out_path("models.yaml");
  FILE *f = fopen(path, "w");
  if (f == NULL)
    return SIM_EIO;
  fputs(yaml, f);
  fclose(f);
  return llm_catalog_load_file(cat, path, err);
}

#define ENTRY(name)                                                            \
  "  - name: " name "\n    parameters: 1e9\n    layers: 2\n"                   \
  "    hidden_size: 64\n    attention_heads: 2\n    kv_heads: 1\n"             \
  "    head_dim: 32\n    kv_bytes_per_token_fp16: 256 B\n"                     \
  "    context_length: 128\n    sources: ['all: test']\n"
#define FP16                                                                   \
  "  - {name: fp16, bits_per_weight: 16, gpu_precision: fp16, "                \
  "sources: ['x: y']}\n"

typedef struct bad_catalog {
  const char *name;
  const char *yaml;
  const char *message;
} bad_catalog;

static const bad_catalog bad_catalogs[] = {
    {"valid", "models:\n" ENTRY("A") "precisions:\n" FP16, NULL},
    {"model twice", "models:\n" ENTRY("A") ENTRY("A") "precisions:\n" FP16,
     "model 'A' is listed twice"},
    {"precision twice", "models:\n" ENTRY("A") "precisions:\n" FP16 FP16,
     "precision 'fp16' is listed twice"},
    /* A file that adds to the built-in catalog may hold models alone
     * (issue 27); one that replaces it must be whole. */
    {"a model alone, to add", "models:\n" ENTRY("A"), NULL},
    {"no fp16 in a whole catalog",
     "replace: true\nmodels:\n" ENTRY(
         "A") "precisions:\n"
              "  - {name: fp8, bits_per_weight: 8, gpu_precision: fp8, "
              "sources: ['x: y']}\n",
     "must include fp16"},
    {"no models in a whole catalog", "replace: true\nprecisions:\n" FP16,
     "a whole catalog needs its models"},
    {"nothing at all", "replace: false\n",
     "neither models nor precisions"},
    {"unknown precision",
     "models:\n" ENTRY(
         "A") "precisions:\n"
              "  - {name: fp6, bits_per_weight: 6, gpu_precision: fp6, "
              "sources: ['x: y']}\n",
     "models.yaml:13:"},
};

static void catalog_file(void **state) {
  const bad_catalog *b = *state;
  llm_catalog cat;
  sim_error err = {0};
  int rc = parse_catalog(b->yaml, &cat, &err);
  if (b->message == NULL) {
    if (rc != SIM_OK)
      fail_msg("%s", err.msg);
    assert_int_equal(cat.n, 1);
    assert_close(cat.models[0].active_parameters, 1e9, 0, 0);
    /* A catalog file brings its models; the engines are the built-in. */
    assert_non_null(llm_catalog_engine(&cat, LLM_ENGINE_DEFAULT));
    llm_catalog_fini(&cat);
    llm_catalog_fini(&cat); /* released twice: a no-op */
    return;
  }
  assert_int_equal(rc, SIM_EINPUT);
  if (strstr(err.msg, b->message) == NULL || strstr(err.msg, ".yaml:") == NULL)
    fail_msg("got '%s', want '%s'", err.msg, b->message);
}

int main(void) {
  struct CMUnitTest tests[72];
  size_t n = 0;
  TEST_ROWS(tests, n, matches_published_shape, shapes);
  TEST_ADD(tests, n, every_kv_size_matches_its_architecture);
  TEST_ADD(tests, n, llama_8b_and_70b_sizes);
  TEST_ADD(tests, n, moe_counts_active_parameters);
  TEST_ADD(tests, n, moe_decode_reads_the_experts_a_batch_touches);
  TEST_ADD(tests, n, dense_decode_bytes_do_not_move);
  TEST_ADD(tests, n, flops_per_token);
  TEST_ROWS(tests, n, weight_bytes_scale_with_bits, bits);
  TEST_ADD(tests, n, precision_names_match_the_gpu_ones);
  TEST_ROWS(tests, n, precision_against_gpu, checks);
  TEST_ROWS(tests, n, bad_model_is_rejected, bad_models);
  TEST_ROWS(tests, n, bad_precision_is_rejected, bad_precisions);
  TEST_ADD(tests, n, the_engines_are_fitted);
  TEST_ROWS(tests, n, bad_engine_is_rejected, bad_engines);
  TEST_ROWS(tests, n, catalog_file, bad_catalogs);
  return _cmocka_run_group_tests("llm", tests, n, test_catalogs_load,
                                 test_catalogs_release);
}
