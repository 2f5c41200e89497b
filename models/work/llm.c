/* llm.c - the LLM catalog of llm.h: schema, loading, checks, and the
 * sizes and work a model implies at a precision. */
#include "llm.h"
#include "llm_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

extern const unsigned char llm_catalog_builtin[];
extern const size_t llm_catalog_builtin_size;

/* SCN_ENUM writes an int; the precision keeps it as a gpu_precision. */
_Static_assert(sizeof(gpu_precision) == sizeof(int),
               "gpu_precision must be stored as an int");

/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

/* The names of gpu_precision in its order (gpu_precision_name's). */
static const char *const compute_names[] = {"fp16", "fp8",  "fp4",
                                            "int8", "int4", NULL};

#define COUNT(k, field, lo, hi, fl, def, h)                                    \
  {                                                                            \
    .key = k, .type = SCN_INT, .offset = offsetof(llm_model, field),           \
    .min = lo, .max = hi, .flags = fl, .dflt = def, .help = h                  \
  }

#define SOURCES(T)                                                             \
  {                                                                            \
    .key = "sources", .type = SCN_STRINGS, .offset = offsetof(T, sources),     \
    .count_offset = offsetof(T, nsources),                                     \
    .flags = SCN_REQUIRED | SCN_NONEMPTY,                                      \
    .help = "where each figure comes from: 'keys: reference'"                  \
  }

static int check_model(void *obj, const scn_loc *loc, void *user,
                       sim_error *err);

static const scn_field model_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(llm_model, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "the identifier scenarios use, e.g. Llama-3.1-8B"},
    {.key = "full_name",
     .type = SCN_STRING,
     .offset = offsetof(llm_model, full_name),
     .dflt = ""},
    {.key = "parameters",
     .type = SCN_QUANTITY,
     .offset = offsetof(llm_model, parameters),
     .dim = UNITS_NUMBER,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "all parameters, every expert included, e.g. 8.03e9"},
    {.key = "active_parameters",
     .type = SCN_QUANTITY,
     .offset = offsetof(llm_model, active_parameters),
     .dim = UNITS_NUMBER,
     .flags = SCN_POSITIVE,
     .help = "parameters one token passes through (MoE); default: "
             "parameters"},
    COUNT("experts", experts, 0, 1 << 20, 0, "0",
          "routed experts per MoE layer; 0 for a dense model"),
    COUNT("experts_per_token", experts_per_token, 0, 1 << 20, 0, "0",
          "routed experts each token uses (MoE top-k)"),
    {.key = "expert_parameters",
     .type = SCN_QUANTITY,
     .offset = offsetof(llm_model, expert_parameters),
     .dim = UNITS_NUMBER,
     .flags = SCN_POSITIVE,
     .help = "parameters of one routed expert in one layer (MoE), e.g. "
             "3 x 4096 x 14336"},
    COUNT("moe_layers", moe_layers, 0, 1 << 20, 0, "0",
          "layers with routed experts (MoE); 0 or absent: every layer"),
    COUNT("layers", layers, 1, 1 << 20, SCN_REQUIRED, NULL,
          "transformer layers, e.g. 32"),
    COUNT("hidden_size", hidden_size, 1, 1 << 24, SCN_REQUIRED, NULL,
          "model dimension, e.g. 4096"),
    COUNT("attention_heads", attention_heads, 1, 1 << 20, SCN_REQUIRED, NULL,
          "query heads, e.g. 32"),
    COUNT("kv_heads", kv_heads, 1, 1 << 20, SCN_REQUIRED, NULL,
          "key/value heads (GQA), e.g. 8; = attention_heads without GQA"),
    COUNT("head_dim", head_dim, 1, 1 << 20, SCN_REQUIRED, NULL,
          "dimension per head, e.g. 128"),
    {.key = "kv_bytes_per_token_fp16",
     .type = SCN_QUANTITY,
     .offset = offsetof(llm_model, kv_bytes_per_token_fp16),
     .dim = UNITS_DATA,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "2 x layers x kv_heads x head_dim x 2 B, e.g. 128 KiB"},
    COUNT("context_length", context_length, 1, INT64_C(1) << 40, SCN_REQUIRED,
          NULL, "longest context in tokens, e.g. 131072"),
    SOURCES(llm_model),
};

const scn_schema llm_model_schema =
    SCN_SCHEMA("LLM", llm_model, model_fields, .check = check_model);

static int check_precision_entry(void *obj, const scn_loc *loc, void *user,
                                 sim_error *err);

static const scn_field precision_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(llm_precision, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "the identifier scenarios use, e.g. fp8"},
    {.key = "bits_per_weight",
     .type = SCN_QUANTITY,
     .offset = offsetof(llm_precision, bits_per_weight),
     .dim = UNITS_NUMBER,
     .min = 1,
     .max = 32,
     .flags = SCN_REQUIRED,
     .help = "storage bits per weight, block scales included, e.g. 4.5"},
    {.key = "gpu_precision",
     .type = SCN_ENUM,
     .offset = offsetof(llm_precision, compute),
     .names = compute_names,
     .flags = SCN_REQUIRED,
     .help = "the GPU dense-throughput precision the products run at"},
    {.key = "weight_stream",
     .type = SCN_QUANTITY,
     .offset = offsetof(llm_precision, weight_stream),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .dflt = "100%",
     .help = "share of the GPU's achievable HBM bandwidth its GEMMs stream "
             "the weights at in decode, at most (block-scaled FP8: 76%)"},
    SOURCES(llm_precision),
};

const scn_schema llm_precision_schema =
    SCN_SCHEMA("LLM precision", llm_precision, precision_fields,
               .check = check_precision_entry);


static int check_catalog(void *obj, const scn_loc *loc, void *user,
                         sim_error *err);

static const scn_field catalog_fields[] = {
    {.key = "models",
     .type = SCN_LIST,
     .offset = offsetof(llm_catalog, models),
     .sub = &llm_model_schema,
     .count_offset = offsetof(llm_catalog, n),
     .help = "a list of LLMs"},
    {.key = "precisions",
     .type = SCN_LIST,
     .offset = offsetof(llm_catalog, precisions),
     .sub = &llm_precision_schema,
     .count_offset = offsetof(llm_catalog, nprecisions),
     .help = "a list of weight precisions (fp16 among them)"},
    {.key = "replace",
     .type = SCN_BOOL,
     .offset = offsetof(llm_catalog, replace),
     .dflt = "false",
     .help = "a scenario's catalog adds to the built-in one, its entries "
             "replacing built-in ones of the same name; true: it is the "
             "whole catalog"},
};

static const scn_schema catalog_schema = SCN_SCHEMA(
    "LLM catalog", llm_catalog, catalog_fields, .check = check_catalog);

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

/* The KV cache of one token at 16 bits: K and V, per layer and KV head. */
static double kv_from_shape(const llm_model *m) {
  return 2.0 * (double)m->layers * (double)m->kv_heads * (double)m->head_dim *
         2.0;
}

static int check_shape(llm_model *m, const scn_loc *loc, sim_error *err) {
  if (m->kv_heads > m->attention_heads || m->attention_heads % m->kv_heads)
    return scn_fail(loc, "kv_heads", err,
                    "each KV head serves a whole group of query heads",
                    "%s: kv_heads %lld does not divide attention_heads %lld",
                    m->name, (long long)m->kv_heads,
                    (long long)m->attention_heads);
  double kv = kv_from_shape(m);
  if (m->kv_bytes_per_token_fp16 != kv)
    return scn_fail(loc, "kv_bytes_per_token_fp16", err,
                    "2 (K and V) x layers x kv_heads x head_dim x 2 B",
                    "%s: kv_bytes_per_token_fp16 %.0f B does not match the "
                    "architecture: 2 x %lld x %lld x %lld x 2 B = %.0f B",
                    m->name, m->kv_bytes_per_token_fp16, (long long)m->layers,
                    (long long)m->kv_heads, (long long)m->head_dim, kv);
  return SIM_OK;
}

static int check_experts(llm_model *m, const scn_loc *loc, sim_error *err) {
  if (m->experts > 0 &&
      (m->experts_per_token < 1 || m->experts_per_token > m->experts))
    return scn_fail(loc, "experts_per_token", err, NULL,
                    "%s: experts_per_token must be between 1 and experts "
                    "(%lld)",
                    m->name, (long long)m->experts);
  if (m->experts == 0 && m->experts_per_token != 0)
    return scn_fail(loc, "experts_per_token", err, "give experts too",
                    "%s: experts_per_token without experts", m->name);
  return SIM_OK;
}

static int check_active(llm_model *m, const scn_loc *loc, sim_error *err) {
  if (isnan(m->active_parameters))
    m->active_parameters = m->parameters;
  if (m->active_parameters > m->parameters)
    return scn_fail(loc, "active_parameters", err, NULL,
                    "%s: active_parameters %.4g exceed parameters %.4g",
                    m->name, m->active_parameters, m->parameters);
  if (m->experts > 0 && !(m->active_parameters < m->parameters))
    return scn_fail(loc, "active_parameters", err,
                    "a token passes through only its routed experts",
                    "%s: an MoE's active_parameters must be below its "
                    "parameters",
                    m->name);
  if (m->experts == 0 && m->active_parameters != m->parameters)
    return scn_fail(loc, "active_parameters", err,
                    "give experts and experts_per_token for an MoE",
                    "%s: a dense model's active_parameters must equal its "
                    "parameters",
                    m->name);
  return SIM_OK;
}

/* Routed-expert parameters of the whole model, every expert counted. */
static double routed_parameters(const llm_model *m) {
  return (double)m->experts * m->expert_parameters * (double)m->moe_layers;
}

/* A dense model has no expert split; an MoE's defaults to every layer. */
static int check_split_given(llm_model *m, const scn_loc *loc, sim_error *err) {
  if (m->experts == 0) {
    if (!isnan(m->expert_parameters) || m->moe_layers != 0)
      return scn_fail(loc, "expert_parameters", err, "give experts too",
                      "%s: expert_parameters or moe_layers without experts",
                      m->name);
    return SIM_OK;
  }
  if (isnan(m->expert_parameters))
    return scn_fail(loc, "expert_parameters", err,
                    "a decode step reads the experts its batch touches",
                    "%s: an MoE needs expert_parameters", m->name);
  if (m->moe_layers == 0)
    m->moe_layers = m->layers;
  if (m->moe_layers > m->layers)
    return scn_fail(loc, "moe_layers", err, NULL,
                    "%s: moe_layers %lld exceed layers %lld", m->name,
                    (long long)m->moe_layers, (long long)m->layers);
  return SIM_OK;
}

/* The routed experts fit in the total, and the active count agrees with
 * the split within 1% (catalog figures rounded by the model cards). */
static int check_split(llm_model *m, const scn_loc *loc, sim_error *err) {
  int rc = check_split_given(m, loc, err);
  if (rc != SIM_OK || m->experts == 0)
    return rc;
  double routed = routed_parameters(m);
  if (!(routed < m->parameters))
    return scn_fail(loc, "expert_parameters", err, NULL,
                    "%s: routed experts %.4g (experts x expert_parameters x "
                    "moe_layers) are not below parameters %.4g",
                    m->name, routed, m->parameters);
  double k = (double)(m->experts - m->experts_per_token);
  double active =
      m->parameters - k * m->expert_parameters * (double)m->moe_layers;
  if (fabs(active - m->active_parameters) > 0.01 * m->active_parameters)
    return scn_fail(loc, "active_parameters", err,
                    "parameters - (experts - experts_per_token) x "
                    "expert_parameters x moe_layers",
                    "%s: active_parameters %.6g differ by more than 1%% "
                    "from the expert split's %.6g",
                    m->name, m->active_parameters, active);
  return SIM_OK;
}

static int check_model(void *obj, const scn_loc *loc, void *user,
                       sim_error *err) {
  (void)user;
  llm_model *m = obj;
  int rc = check_shape(m, loc, err);
  if (rc == SIM_OK)
    rc = check_experts(m, loc, err);
  if (rc == SIM_OK)
    rc = check_active(m, loc, err);
  if (rc == SIM_OK)
    rc = check_split(m, loc, err);
  return rc;
}

static int check_precision_entry(void *obj, const scn_loc *loc, void *user,
                                 sim_error *err) {
  (void)user;
  llm_precision *p = obj;
  if (!(p->bits_per_weight > 0))
    return scn_fail(loc, "bits_per_weight", err, NULL,
                    "%s: bits_per_weight must be positive", p->name);
  if (!(p->weight_stream > 0))
    return scn_fail(loc, "weight_stream", err, NULL,
                    "%s: weight_stream must be above 0", p->name);
  return SIM_OK;
}

/* user is non-NULL for a whole catalog (the built-in one): it, like a
 * file that says `replace: true`, must have models and fp16. A file that
 * adds to the built-in one may hold models or precisions alone. */
static int check_catalog(void *obj, const scn_loc *loc, void *user,
                         sim_error *err) {
  llm_catalog *cat = obj;
  bool whole = user != NULL || cat->replace;
  if (cat->n == 0 && cat->nprecisions == 0)
    return scn_fail(loc, "models", err, "a list of LLMs, or of precisions",
                    "the catalog has neither models nor precisions");
  if (whole && cat->n == 0)
    return scn_fail(loc, "models", err, "a list of LLMs",
                    "a whole catalog needs its models");
  for (size_t i = 0; i < cat->n; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(cat->models[i].name, cat->models[j].name) == 0)
        return scn_fail(loc, "models", err, "names identify models",
                        "model '%s' is listed twice", cat->models[i].name);
  for (size_t i = 0; i < cat->nprecisions; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(cat->precisions[i].name, cat->precisions[j].name) == 0)
        return scn_fail(loc, "precisions", err, "names identify precisions",
                        "precision '%s' is listed twice",
                        cat->precisions[i].name);
  /* The KV cache defaults to 16 bits, so fp16 must be there to name. */
  if (whole && llm_catalog_precision(cat, "fp16") == NULL)
    return scn_fail(loc, "precisions", err, NULL,
                    "the precisions must include fp16");
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* Loading and lookup                                                  */
/* ------------------------------------------------------------------ */

/* The engines first: releasing the catalog zeroes the whole struct. */
void llm_catalog_fini(llm_catalog *cat) {
  llm__engines_fini(&cat->engines);
  scn_release(&catalog_schema, cat);
}

static int bind_catalog(llm_catalog *cat, scn_doc *doc, bool whole,
                        sim_error *err) {
  memset(cat, 0, sizeof *cat);
  int rc = scn_bind(doc, &catalog_schema, cat, whole ? cat : NULL, err);
  scn_doc_destroy(doc);
  if (rc == SIM_OK)
    rc = llm__engines_load_builtin(&cat->engines, err);
  return rc;
}

int llm_catalog_load_builtin(llm_catalog *cat, sim_error *err) {
  sim_error e = {0};
  scn_doc *doc = scn_doc_read_string("scenarios/catalog/models.yaml (built in)",
                                     (const char *)llm_catalog_builtin,
                                     llm_catalog_builtin_size, &e);
  if (doc == NULL) /* the reader's code, even when err is NULL */
    return sim_error_set(err, e.code, "%s", e.msg);
  return bind_catalog(cat, doc, true, err);
}

int llm_catalog_load_file(llm_catalog *cat, const char *path, sim_error *err) {
  sim_error e = {0};
  scn_doc *doc = scn_doc_read_file(path, &e);
  if (doc == NULL) /* the reader's code, even when err is NULL */
    return sim_error_set(err, e.code, "%s", e.msg);
  return bind_catalog(cat, doc, false, err);
}

/* The built-in catalog with cat's entries merged in (llm_catalog_load). */
static int merge_builtin(llm_catalog *cat, llm_catalog *user, sim_error *err) {
  int rc = llm_catalog_load_builtin(cat, err);
  if (rc == SIM_OK)
    rc = scn_list_merge(&llm_model_schema, offsetof(llm_model, name),
                        (void **)&cat->models, &cat->n, (void **)&user->models,
                        &user->n);
  if (rc == SIM_OK)
    rc = scn_list_merge(&llm_precision_schema, offsetof(llm_precision, name),
                        (void **)&cat->precisions, &cat->nprecisions,
                        (void **)&user->precisions, &user->nprecisions);
  if (rc == SIM_ENOMEM) {
    llm_catalog_fini(cat);
    return sim_error_set(err, rc, "out of memory");
  }
  return rc;
}

int llm_catalog_load(llm_catalog *cat, const char *path, sim_error *err) {
  if (path == NULL)
    return llm_catalog_load_builtin(cat, err);
  llm_catalog user = {0};
  int rc = llm_catalog_load_file(&user, path, err);
  if (rc != SIM_OK || user.replace) {
    *cat = user; /* zeroed by the failed load, or the whole catalog */
    return rc;
  }
  rc = merge_builtin(cat, &user, err);
  llm_catalog_fini(&user); /* empty unless the merge failed */
  return rc;
}

const llm_model *llm_catalog_find(const llm_catalog *cat, const char *name) {
  for (size_t i = 0; i < cat->n; i++)
    if (strcmp(cat->models[i].name, name) == 0)
      return &cat->models[i];
  return NULL;
}

const llm_precision *llm_catalog_precision(const llm_catalog *cat,
                                           const char *name) {
  for (size_t i = 0; i < cat->nprecisions; i++)
    if (strcmp(cat->precisions[i].name, name) == 0)
      return &cat->precisions[i];
  return NULL;
}

void llm_catalog_names(const llm_catalog *cat, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < cat->n && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
                            cat->models[i].name);
}

void llm_catalog_engine_names(const llm_catalog *cat, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < cat->engines.n && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
                            cat->engines.list[i].name);
}

void llm_catalog_precision_names(const llm_catalog *cat, char *buf,
                                 size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < cat->nprecisions && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
                            cat->precisions[i].name);
}

/* ------------------------------------------------------------------ */
/* Sizes and work                                                      */
/* ------------------------------------------------------------------ */

double llm_weight_bytes(const llm_model *m, const llm_precision *p) {
  return m->parameters * p->bits_per_weight / 8;
}

double llm_active_weight_bytes(const llm_model *m, const llm_precision *p) {
  return m->active_parameters * p->bits_per_weight / 8;
}

double llm_shared_parameters(const llm_model *m) {
  if (m->experts == 0)
    return m->parameters;
  return m->parameters - routed_parameters(m);
}

double llm_expected_experts(const llm_model *m, double tokens) {
  if (m->experts == 0 || !(tokens > 0))
    return 0;
  double e = (double)m->experts;
  double miss = 1 - (double)m->experts_per_token / e;
  return e * (1 - pow(miss, tokens));
}

double llm_decode_weight_bytes(const llm_model *m, const llm_precision *p,
                               double batch) {
  if (m->experts == 0)
    return llm_active_weight_bytes(m, p);
  double touched = llm_expected_experts(m, batch < 1 ? 1 : batch);
  double params = llm_shared_parameters(m) +
                  touched * m->expert_parameters * (double)m->moe_layers;
  return params * p->bits_per_weight / 8;
}

double llm_kv_bytes_per_token(const llm_model *m, const llm_precision *kv) {
  double bits = kv != NULL ? kv->bits_per_weight : 16;
  return m->kv_bytes_per_token_fp16 * bits / 16;
}

double llm_flops_per_token(const llm_model *m) {
  return 2 * m->active_parameters;
}

/* "fp16, fp8, int8": the precisions g has dense throughput for. */
static void gpu_precisions(const gpu_spec *g, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (int p = 0; p < GPU_NPRECISIONS && len < size; p++)
    if (!isnan(gpu_peak_flops(g, (gpu_precision)p)))
      len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
                              gpu_precision_name((gpu_precision)p));
}

int llm_check_precision(const gpu_spec *g, const llm_precision *p,
                        sim_error *err) {
  if (!isnan(gpu_peak_flops(g, p->compute)))
    return SIM_OK;
  char has[128], unit[16];
  const char *c = gpu_precision_name(p->compute);
  size_t i = 0;
  for (; c[i] != '\0' && i + 1 < sizeof unit; i++)
    unit[i] = (char)(c[i] >= 'a' && c[i] <= 'z' ? c[i] - 'a' + 'A' : c[i]);
  unit[i] = '\0';
  gpu_precisions(g, has, sizeof has);
  return sim_error_set(err, SIM_EINPUT,
                       "precision %s needs %s tensor cores; %s has none (%s)",
                       p->name, unit, g->name, has);
}
