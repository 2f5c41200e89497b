/* llm_engine.c - the serving engines of the LLM catalog (llm.h): the
 * schema of scenarios/catalog/engines.yaml and its loading. The file is
 * compiled in and always built-in: a scenario's own model catalog does
 * not replace it. Its fitted figures are written by tools/calibrate.py. */
#include "llm.h"
#include "llm_internal.h"

#include <string.h>

extern const unsigned char llm_engines_builtin[];
extern const size_t llm_engines_builtin_size;

#define STEP_COST(k, field, h)                                                 \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(llm_engine, field),     \
    .dim = UNITS_TIME, .min = 0, .max = 1, .flags = SCN_REQUIRED, .help = h    \
  }

#define SHARE(k, field, h)                                                     \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(llm_engine, field),     \
    .dim = UNITS_FRACTION, .min = 0, .max = 1, .flags = SCN_REQUIRED,          \
    .help = h                                                                  \
  }

static const scn_field engine_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(llm_engine, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "the identifier, e.g. vllm"},
    {.key = "full_name",
     .type = SCN_STRING,
     .offset = offsetof(llm_engine, full_name),
     .dflt = ""},
    SHARE("eff_bw", eff_bw,
          "share of the GPU's achievable HBM bandwidth (a streaming "
          "benchmark's) its decode kernels reach"),
    SHARE("eff_flops", eff_flops,
          "share of dense peak its compute-bound kernels reach"),
    SHARE("act_fixed", act_fixed, "SM activity through its fixed costs"),
    STEP_COST("seq_overhead", seq_overhead_s,
              "cost per sequence per decode step, e.g. 37 us"),
    STEP_COST("moe_layer_overhead", moe_layer_overhead_s,
              "cost per MoE layer per decode step, e.g. 185 us"),
    STEP_COST("step_overhead", step_overhead_s,
              "cost of every decode step, whatever its batch"),
    SHARE("kv_reserve", kv_reserve,
          "share of a request's output tokens its KV admission holds: "
          "100% reserves all of it, 50% what a batch holds on average"),
    {.key = "fitted",
     .type = SCN_STRINGS,
     .offset = offsetof(llm_engine, fitted),
     .count_offset = offsetof(llm_engine, nfitted),
     .help = "written by tools/calibrate.py: 'keys: fit set, data, method, "
             "residual'"},
    {.key = "sources",
     .type = SCN_STRINGS,
     .offset = offsetof(llm_engine, sources),
     .count_offset = offsetof(llm_engine, nsources),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "what each figure stands for: 'keys: reference'"},
};

static int check_engine(void *obj, const scn_loc *loc, void *user,
                        sim_error *err) {
  (void)user;
  const llm_engine *e = obj;
  if (!(e->eff_bw > 0 && e->eff_flops > 0))
    return scn_fail(loc, "eff_bw", err, NULL,
                    "%s: eff_bw and eff_flops must be above 0", e->name);
  return SIM_OK;
}

const scn_schema llm_engine_schema = SCN_SCHEMA(
    "serving engine", llm_engine, engine_fields, .check = check_engine);

static int check_engines(void *obj, const scn_loc *loc, void *user,
                         sim_error *err) {
  (void)user;
  const llm_engines *e = obj;
  for (size_t i = 0; i < e->n; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(e->list[i].name, e->list[j].name) == 0)
        return scn_fail(loc, "engines", err, "names identify engines",
                        "engine '%s' is listed twice", e->list[i].name);
  return SIM_OK;
}

static const scn_field engines_fields[] = {
    {.key = "engines",
     .type = SCN_LIST,
     .offset = offsetof(llm_engines, list),
     .sub = &llm_engine_schema,
     .count_offset = offsetof(llm_engines, n),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "a list of serving engines"},
};

static const scn_schema engines_schema = SCN_SCHEMA(
    "engine catalog", llm_engines, engines_fields, .check = check_engines);

int llm__engines_load_builtin(llm_engines *e, sim_error *err) {
  sim_error scratch = {0};
  scn_doc *doc = scn_doc_read_string(
      "scenarios/catalog/engines.yaml (built in)",
      (const char *)llm_engines_builtin, llm_engines_builtin_size, &scratch);
  if (doc == NULL) /* the reader's code, even when err is NULL */
    return sim_error_set(err, scratch.code, "%s", scratch.msg);
  memset(e, 0, sizeof *e);
  int rc = scn_bind(doc, &engines_schema, e, NULL, err);
  scn_doc_destroy(doc);
  return rc;
}

void llm__engines_fini(llm_engines *e) { scn_release(&engines_schema, e); }

const llm_engine *llm_catalog_engine(const llm_catalog *cat, const char *name) {
  for (size_t i = 0; i < cat->engines.n; i++)
    if (strcmp(cat->engines.list[i].name, name) == 0)
      return &cat->engines.list[i];
  return NULL;
}
