/* inference_scn.c - the scenario side of inference services: inf_schema,
 * its field table and the check of a service's name (inference.h; the
 * factory checks the model, precision and GPU names,
 * factory_scn_workloads.c). */
#include "inference.h"

#include <string.h>

static int check_service(void *obj, const scn_loc *loc, void *user,
                         sim_error *err);

#define INT_FIELD(k, field, lo, hi, def, h)                                    \
  {                                                                            \
    .key = k, .type = SCN_INT, .offset = offsetof(inf_config, field),          \
    .min = lo, .max = hi, .dflt = def, .help = h                               \
  }

#define STRING_FIELD(k, field, fl, def, h)                                     \
  {                                                                            \
    .key = k, .type = SCN_STRING, .offset = offsetof(inf_config, field),       \
    .flags = fl, .dflt = def, .help = h                                        \
  }

/* Overload defaults. timeout 600 s: the OpenAI Python client's default
 * request timeout (openai-python DEFAULT_TIMEOUT, 10 min), the common
 * client of OpenAI-compatible servers such as vLLM; vLLM itself has no
 * server-side queue timeout. It bounds waiting only when a service is
 * overloaded: unloaded TTFTs are below a second. max_queue 0 (no limit):
 * vLLM's default, which admits every request and lets its queue grow;
 * with the timeout bounding waiting, the queue stays bounded by rate x
 * timeout. A server that sheds load sets a figure, e.g. 128 as
 * Hugging Face TGI's --max-concurrent-requests (which counts the batch
 * too).
 *
 * SLO defaults: the MLPerf Inference server scenario's p99 limits for
 * Llama-3.1-8B (v5.1: TTFT 2 s, TPOT 100 ms; Llama-2-70B has 2 s and
 * 200 ms), MLCommons inference_rules.adoc and loadgen/mlperf.conf. They
 * are anchored on reading speed: 100 ms a token is about 480 words a
 * minute. */
static const scn_field inf_fields[] = {
    STRING_FIELD("name", name, SCN_REQUIRED | SCN_NONEMPTY, NULL,
                 "the service's name; its telemetry is services/NAME"),
    STRING_FIELD("model", model, SCN_REQUIRED | SCN_NONEMPTY, NULL,
                 "an LLM of the catalog, e.g. Llama-3.1-8B"),
    STRING_FIELD("precision", precision, SCN_NONEMPTY, "fp16",
                 "weight precision: fp16, fp8, fp4, int8, int4"),
    STRING_FIELD("kv_precision", kv_precision, SCN_NONEMPTY, "fp16",
                 "the KV cache's precision, e.g. fp8 (TensorRT-LLM's FP8 KV "
                 "cache)"),
    STRING_FIELD("gpu", gpu, SCN_NONEMPTY, NULL,
                 "GPU type of its replicas, e.g. H100-SXM; absent: any"),
    STRING_FIELD("engine", engine, SCN_NONEMPTY, LLM_ENGINE_DEFAULT,
                 "serving engine of the catalog: vllm or trt-llm"),
    INT_FIELD("tp", tp, 1, 1024, "1",
              "GPUs per replica (tensor parallelism), at least 1"),
    INT_FIELD("ep", ep, 1, 1024, "1",
              "expert parallelism of an MoE: 1 none, or tp (experts split "
              "whole over the replica's GPUs)"),
    INT_FIELD("replicas", replicas, 1, 1e6, "1",
              "copies of the model, at least 1"),
    INT_FIELD("max_batch", max_batch, 1, 1e6, "256",
              "requests per batch at most (vLLM max_num_seqs: 256)"),
    INT_FIELD("beams", beams, 1, 64, "1",
              "sequences each request decodes (beam search; MLPerf's GPT-J: "
              "4); its output counts one"),
    {.key = "ttft_slo",
     .type = SCN_QUANTITY,
     .offset = offsetof(inf_config, ttft_slo_s),
     .dim = UNITS_TIME,
     .flags = SCN_POSITIVE,
     .dflt = "2 s",
     .help = "time-to-first-token target (MLPerf server: 2 s)"},
    {.key = "tpot_slo",
     .type = SCN_QUANTITY,
     .offset = offsetof(inf_config, tpot_slo_s),
     .dim = UNITS_TIME,
     .flags = SCN_POSITIVE,
     .dflt = "100 ms",
     .help = "time-per-output-token target (MLPerf 8B server: 100 ms)"},
    {.key = "timeout",
     .type = SCN_QUANTITY,
     .offset = offsetof(inf_config, timeout_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = 1e9,
     .dflt = "600 s",
     .help = "a client without a first token by then gives up (timed "
             "out); 0 s: never (OpenAI Python client default: 600 s)"},
    INT_FIELD("max_queue", max_queue, 0, 1e9, "0",
              "waiting requests a replica holds; an arrival beyond is "
              "rejected at once (load shedding); 0: no limit, as vLLM"),
    /* Omitted from the resolved scenario when 0, so files without it
     * stay as they were. */
    {.key = "prompt_pool",
     .type = SCN_INT,
     .offset = offsetof(inf_config, prompt_pool),
     .min = 0,
     .max = 1e6,
     .flags = SCN_OMIT_EMPTY,
     .dflt = "0",
     .help = "requests send N unique prompts in order, repeated; copies "
             "held at once share one prompt's KV and skip its prefill "
             "(vLLM prefix caching); 0: every prompt unique"},
    INT_FIELD("priority", priority, -1e9, 1e9, "0",
              "higher is served first by the priority power policy"),
    {.key = "arrivals",
     .type = SCN_MAP,
     .offset = offsetof(inf_config, arrivals),
     .sub = &arr_schema,
     .flags = SCN_REQUIRED,
     .help = "the request process, e.g. {kind: poisson, rate: 5}"},
};

const scn_schema inf_schema = SCN_SCHEMA("inference service", inf_config,
                                         inf_fields, .check = check_service);

/* The name becomes one part of a telemetry path (services/NAME). */
static int check_service(void *obj, const scn_loc *loc, void *user,
                         sim_error *err) {
  (void)user;
  const inf_config *c = obj;
  if (c->name == NULL)
    return SIM_OK;
  if (strchr(c->name, '/') != NULL || strcmp(c->name, ".") == 0 ||
      strcmp(c->name, "..") == 0)
    return scn_fail(loc, "name", err, "e.g. name: chat",
                    "service name '%s' cannot be a telemetry group name (no "
                    "'/', not '.' or '..')",
                    c->name);
  return SIM_OK;
}

/* The top-level `inference` map: settings of every service. */
static const char *const granularity_names[] = {"request", "fluid", NULL};

static const scn_field settings_fields[] = {
    {.key = "granularity",
     .type = SCN_ENUM,
     .offset = offsetof(inf_settings, granularity),
     .names = granularity_names,
     .dflt = "request",
     .help = "request: every request simulated; fluid: flows per control "
             "period, for wide sweeps (inference.h)"},
};

const scn_schema inf_settings_schema =
    SCN_SCHEMA("inference", inf_settings, settings_fields, .check = NULL);
