/* gpu.c - the GPU catalog of gpu.h (schema, loading, checks); the
 * power/DVFS model is gpu_power.c. */
#include "gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>

#include "alloc.h"
#include "gpu_internal.h"


extern const unsigned char gpu_catalog_builtin[];
extern const size_t gpu_catalog_builtin_size;


/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

#define QTY(k, field, d, fl, def, h)                                           \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(gpu_spec, field),       \
    .dim = d, .min = 0, .max = HUGE_VAL, .flags = fl, .dflt = def, .help = h   \
  }

static const scn_field dense_fields[] = {
#define DENSE(k, p)                                                            \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY,                                            \
    .offset = offsetof(gpu_dense, flops) + (p) * sizeof(double),               \
    .dim = UNITS_FLOPS, .flags = SCN_POSITIVE,                                 \
    .help = "dense peak tensor throughput, e.g. '989 TFLOPS'; omit if the "    \
            "hardware lacks this precision"                                    \
  }
    DENSE("fp16", GPU_FP16), DENSE("fp8", GPU_FP8),   DENSE("fp4", GPU_FP4),
    DENSE("int8", GPU_INT8), DENSE("int4", GPU_INT4),
#undef DENSE
};

static const scn_schema dense_schema =
    SCN_SCHEMA("dense throughput", gpu_dense, dense_fields, .check = NULL);

static const scn_field curve_fields[] = {
    {.key = "clock",
     .type = SCN_QUANTITY,
     .offset = offsetof(gpu_curve_point, clock_hz),
     .dim = UNITS_FREQUENCY,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "SM clock, e.g. 1410 MHz"},
    {.key = "power",
     .type = SCN_QUANTITY,
     .offset = offsetof(gpu_curve_point, power),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .flags = SCN_REQUIRED,
     .help = "dynamic power at full activity as a share of TDP's, e.g. 60%"},
};

static const scn_schema curve_schema = SCN_SCHEMA(
    "power curve point", gpu_curve_point, curve_fields, .check = NULL);

static int check_spec(void *obj, const scn_loc *loc, void *user,
                      sim_error *err);

static const scn_field spec_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(gpu_spec, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "the identifier scenarios use, e.g. H100-SXM"},
    {.key = "full_name",
     .type = SCN_STRING,
     .offset = offsetof(gpu_spec, full_name),
     .dflt = ""},
    {.key = "architecture",
     .type = SCN_STRING,
     .offset = offsetof(gpu_spec, architecture),
     .dflt = ""},
    {.key = "year",
     .type = SCN_INT,
     .offset = offsetof(gpu_spec, year),
     .min = 1990,
     .max = 2100,
     .dflt = "2024"},
    QTY("tdp", tdp_w, UNITS_POWER, SCN_REQUIRED | SCN_POSITIVE, NULL,
        "thermal design power = the default power limit, e.g. 700 W"),
    QTY("idle_power", idle_w, UNITS_POWER, SCN_REQUIRED, NULL,
        "board power with no work, e.g. 70 W"),
    QTY("power_cap_min", cap_min_w, UNITS_POWER, SCN_REQUIRED | SCN_POSITIVE,
        NULL, "the lowest settable power limit (nvidia-smi Min Power Limit)"),
    QTY("power_cap_max", cap_max_w, UNITS_POWER, SCN_REQUIRED | SCN_POSITIVE,
        NULL, "the highest settable power limit"),
    QTY("clock_max", clock_max_hz, UNITS_FREQUENCY, SCN_REQUIRED | SCN_POSITIVE,
        NULL, "max boost SM clock, e.g. 1980 MHz"),
    QTY("clock_min", clock_min_hz, UNITS_FREQUENCY, SCN_REQUIRED | SCN_POSITIVE,
        NULL, "lowest SM clock, e.g. 345 MHz"),
    {.key = "slowdown_temp",
     .type = SCN_QUANTITY,
     .offset = offsetof(gpu_spec, slowdown_c),
     .dim = UNITS_TEMPERATURE,
     .min = 0,
     .max = 150,
     .help = "nvidia-smi GPU Slowdown Temp: clocks fall above it"},
    {.key = "shutdown_temp",
     .type = SCN_QUANTITY,
     .offset = offsetof(gpu_spec, shutdown_c),
     .dim = UNITS_TEMPERATURE,
     .min = 0,
     .max = 150,
     .help = "nvidia-smi GPU Shutdown Temp"},
    /* The share of a rack's heat that direct-to-chip cold plates carry
     * for racks built around this GPU; the rest (power shelves, fans,
     * parts of the networking) goes to the room's air. A scenario
     * without cooling loops gets a default plant from it. */
    {.key = "liquid_heat_share",
     .type = SCN_QUANTITY,
     .offset = offsetof(gpu_spec, liquid_heat_share),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .dflt = "0%",
     .help = "share of its rack's heat that goes to liquid (cold plates); 0 "
             "for air-cooled parts"},
    QTY("memory", memory_bytes, UNITS_DATA, SCN_REQUIRED | SCN_POSITIVE, NULL,
        "memory size, e.g. 80 GB"),
    QTY("memory_bandwidth", bandwidth_bps, UNITS_BANDWIDTH,
        SCN_REQUIRED | SCN_POSITIVE, NULL, "e.g. 3.35 TB/s"),
    QTY("memory_bandwidth_achievable", achievable_bps, UNITS_BANDWIDTH,
        SCN_POSITIVE, NULL,
        "HBM read bandwidth a published microbenchmark reached; absent: "
        "memory_bandwidth"),
    {.key = "dense",
     .type = SCN_MAP,
     .offset = offsetof(gpu_spec, dense),
     .sub = &dense_schema,
     .flags = SCN_REQUIRED,
     .help = "dense peak throughput per precision (fp16, fp8, fp4, int8, "
             "int4)"},
    QTY("fp16_headline", fp16_headline, UNITS_FLOPS, SCN_POSITIVE, NULL,
        "the FP16 tensor figure as the datasheet headlines it"),
    {.key = "fp16_headline_sparse",
     .type = SCN_BOOL,
     .offset = offsetof(gpu_spec, fp16_headline_sparse),
     .dflt = "false",
     .help = "true if the headline figure assumes 2:4 sparsity"},
    /* P ~ f V^2 with V rising roughly with f gives gamma between 2 and 3
     * (docs/MODELS.md, GPU); 2.5 is the middle of that range. */
    {.key = "gamma",
     .type = SCN_QUANTITY,
     .offset = offsetof(gpu_spec, gamma),
     .dim = UNITS_NUMBER,
     .min = 1,
     .max = 4,
     .dflt = "2.5",
     .help = "exponent of dynamic power in the clock, 1 to 4"},
    /* The SM clock below which memory-bound work slows: the SMs issue the
     * HBM traffic, and the L2 and the crossbar to it run on the SM clock,
     * so at low enough clocks they cannot keep the memory busy. The knee is
     * the share of the on-chip bandwidth the HBM traffic needs, achievable
     * HBM read / L2 read bandwidth at full clock; scenarios/catalog/gpus.yaml
     * gives it per GPU from published sweeps of one benchmark. 50%, for
     * types with no sweep, is an estimate: Splitwise's power-capped H100
     * (Patel et al., ISCA 2024; data/gpu_power/perf_model.csv) keeps its
     * decode time where prefill slows 1.30x, a clock near 0.8, so the
     * knee is below that (tests/validate/test_power_cap.c). */
    {.key = "memory_knee",
     .type = SCN_QUANTITY,
     .offset = offsetof(gpu_spec, knee),
     .dim = UNITS_FRACTION,
     .min = 0.01,
     .max = 1,
     .dflt = "50%",
     .help = "SM clock share below which memory-bound speed and memory "
             "power fall in proportion, e.g. 50%"},
    QTY("busy_power", busy_w, UNITS_POWER, 0, NULL,
        "power above idle while any kernel runs (uncore, L2, HBM "
        "interface); absent: the catalog's busy_share of tdp - idle"),
    QTY("memory_power", mem_w, UNITS_POWER, 0, NULL,
        "power of moving the full memory bandwidth; absent: the catalog's "
        "pj_per_byte x memory_bandwidth"),
    {.key = "power_curve",
     .type = SCN_LIST,
     .offset = offsetof(gpu_spec, curve),
     .sub = &curve_schema,
     .count_offset = offsetof(gpu_spec, ncurve),
     .help = "measured dynamic power against clock; ends at clock_max, 100%"},
    {.key = "sources",
     .type = SCN_STRINGS,
     .offset = offsetof(gpu_spec, sources),
     .count_offset = offsetof(gpu_spec, nsources),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "where each figure comes from: 'keys: reference'"},
};

static void spec_release(void *obj);

const scn_schema gpu_spec_schema =
    SCN_SCHEMA("GPU type", gpu_spec, spec_fields, .check = check_spec,
               .release = spec_release);

static int check_catalog(void *obj, const scn_loc *loc, void *user,
                         sim_error *err);

/* Written by tools/calibrate.py (make calibrate) in the built-in catalog;
 * a catalog file without them takes the built-in ones. */
static const scn_field power_model_fields[] = {
    {.key = "busy_share",
     .type = SCN_QUANTITY,
     .offset = offsetof(gpu_power_model, busy_share),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 0.9,
     .help = "busy floor as a share of tdp - idle_power"},
    {.key = "pj_per_byte",
     .type = SCN_QUANTITY,
     .offset = offsetof(gpu_power_model, pj_per_byte),
     .dim = UNITS_NUMBER,
     .min = 0,
     .max = 1000,
     .help = "energy per byte of memory traffic, pJ"},
    {.key = "fitted",
     .type = SCN_STRINGS,
     .offset = offsetof(gpu_power_model, fitted),
     .count_offset = offsetof(gpu_power_model, nfitted),
     .help = "written by tools/calibrate.py: 'keys: fit set, data, method, "
             "residual'"},
};

static const scn_schema power_model_schema = SCN_SCHEMA(
    "GPU power model", gpu_power_model, power_model_fields, .check = NULL);

static const scn_field catalog_fields[] = {
    {.key = "gpus",
     .type = SCN_LIST,
     .offset = offsetof(gpu_catalog, gpus),
     .sub = &gpu_spec_schema,
     .count_offset = offsetof(gpu_catalog, n),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "a list of GPU types"},
    {.key = "power_model",
     .type = SCN_MAP,
     .offset = offsetof(gpu_catalog, power),
     .sub = &power_model_schema,
     .help = "what derives busy_power and memory_power where an entry "
             "does not give them"},
    {.key = "replace",
     .type = SCN_BOOL,
     .offset = offsetof(gpu_catalog, replace),
     .dflt = "false",
     .help = "a scenario's catalog adds to the built-in one, its types "
             "replacing built-in ones of the same name; true: it is the "
             "whole catalog"},
};

static const scn_schema catalog_schema = SCN_SCHEMA(
    "GPU catalog", gpu_catalog, catalog_fields, .check = check_catalog);

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

static int check_powers(gpu_spec *g, const scn_loc *loc, sim_error *err) {
  if (!(g->idle_w < g->cap_min_w))
    return scn_fail(loc, "idle_power", err, NULL,
                    "%s: idle power %.0f W must be below the minimum power "
                    "cap %.0f W",
                    g->name, g->idle_w, g->cap_min_w);
  if (!(g->cap_min_w <= g->cap_max_w))
    return scn_fail(loc, "power_cap_min", err, NULL,
                    "%s: power_cap_min is above power_cap_max", g->name);
  if (g->tdp_w < g->cap_min_w || g->tdp_w > g->cap_max_w)
    return scn_fail(loc, "tdp", err, NULL,
                    "%s: TDP %.0f W is outside the power-cap range %.0f-%.0f W",
                    g->name, g->tdp_w, g->cap_min_w, g->cap_max_w);
  return SIM_OK;
}

/* A family measured below its datasheet (a streaming read reaches
 * 83-90% of it) keeps the measurement; one never measured, the datasheet. */
static int check_achievable(gpu_spec *g, const scn_loc *loc,
                            sim_error *err) {
  if (isnan(g->achievable_bps))
    g->achievable_bps = g->bandwidth_bps;
  if (g->achievable_bps > g->bandwidth_bps)
    return scn_fail(loc, "memory_bandwidth_achievable", err, NULL,
                    "%s: achievable bandwidth above the datasheet's", g->name);
  return SIM_OK;
}

static int check_headline(gpu_spec *g, const scn_loc *loc, sim_error *err) {
  double dense = g->dense.flops[GPU_FP16];
  if (isnan(dense))
    return scn_fail(loc, "dense", err, "every type has an fp16 figure",
                    "%s: dense fp16 throughput missing", g->name);
  if (isnan(g->fp16_headline))
    return SIM_OK;
  double expect = g->fp16_headline_sparse ? 2 * dense : dense;
  /* 2%: vendors round, and NVIDIA's own L40S datasheet prints 362.05
   * dense against 733 sparse (1.2% apart). */
  if (fabs(g->fp16_headline - expect) > 0.02 * expect)
    return scn_fail(loc, "fp16_headline", err,
                    "a sparse headline is twice the dense figure",
                    "%s: fp16_headline %.4g TFLOPS does not match dense fp16 "
                    "%.4g TFLOPS",
                    g->name, g->fp16_headline / 1e12, dense / 1e12);
  return SIM_OK;
}

static int check_curve(gpu_spec *g, const scn_loc *loc, sim_error *err) {
  for (size_t i = 0; i < g->ncurve; i++) {
    const gpu_curve_point *p = &g->curve[i];
    bool rising =
        i == 0 || (p->clock_hz > p[-1].clock_hz && p->power >= p[-1].power);
    if (!rising || p->clock_hz < g->clock_min_hz ||
        p->clock_hz > g->clock_max_hz)
      return scn_fail(loc, "power_curve", err,
                      "clocks rise within clock_min..clock_max, power with "
                      "them",
                      "%s: power_curve point %zu is out of order "
                      "or range",
                      g->name, i + 1);
  }
  const gpu_curve_point *last = g->ncurve ? &g->curve[g->ncurve - 1] : NULL;
  if (last != NULL &&
      (g->ncurve < 2 || last->clock_hz != g->clock_max_hz || last->power != 1))
    return scn_fail(loc, "power_curve", err, NULL,
                    "%s: power_curve needs 2 or more points and must end at "
                    "clock_max with 100%%",
                    g->name);
  return SIM_OK;
}

static int build_curve(gpu_spec *g, sim_error *err) {
  size_t n = g->ncurve;
  struct gpu_curve *c = sim_calloc(NULL, 1, sizeof *c);
  if (c == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  g->interp = c;
  c->phi = sim_alloc(NULL, n * sizeof *c->phi);
  c->power = sim_alloc(NULL, n * sizeof *c->power);
  c->interp =
      gsl_interp_alloc(n >= 3 ? gsl_interp_steffen : gsl_interp_linear, n);
  c->accel = gsl_interp_accel_alloc();
  if (!c->phi || !c->power || !c->interp || !c->accel)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    c->phi[i] = g->curve[i].clock_hz / g->clock_max_hz;
    c->power[i] = g->curve[i].power;
  }
  if (gsl_interp_init(c->interp, c->phi, c->power, n) != GSL_SUCCESS)
    return sim_error_set(err, SIM_EINPUT,
                         "%s: cannot interpolate the power "
                         "curve",
                         g->name);
  return SIM_OK;
}

static int check_spec(void *obj, const scn_loc *loc, void *user,
                      sim_error *err) {
  (void)user;
  gpu_spec *g = obj;
  if (!(g->clock_min_hz < g->clock_max_hz))
    return scn_fail(loc, "clock_min", err, NULL,
                    "%s: clock_min must be below clock_max", g->name);
  if (isnan(g->slowdown_c) != isnan(g->shutdown_c) ||
      g->slowdown_c >= g->shutdown_c)
    return scn_fail(loc, "slowdown_temp", err, "give both, slowdown first",
                    "%s: slowdown_temp must be below shutdown_temp", g->name);
  int rc = check_powers(g, loc, err);
  if (rc == SIM_OK)
    rc = check_achievable(g, loc, err);
  if (rc == SIM_OK)
    rc = check_headline(g, loc, err);
  if (rc == SIM_OK)
    rc = check_curve(g, loc, err);
  if (rc == SIM_OK && g->ncurve > 0)
    rc = build_curve(g, err);
  if (rc == SIM_OK && (g->pow_memo = gpu__pow_memo_new()) == NULL)
    rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
  return rc;
}

/* The busy floor and the memory power an entry leaves out come from the
 * catalog's power model; the SM part must keep something of the TDP. */
static int derive_power(gpu_spec *g, const gpu_power_model *pm,
                        sim_error *err) {
  double span = g->tdp_w - g->idle_w;
  if (isnan(g->busy_w))
    g->busy_w = pm->busy_share * span;
  if (isnan(g->mem_w))
    g->mem_w = pm->pj_per_byte * 1e-12 * g->bandwidth_bps;
  if (!(g->busy_w < span))
    return sim_error_set(err, SIM_EINPUT,
                         "%s: busy_power %.0f W leaves nothing of tdp - idle "
                         "(%.0f W) to the SMs",
                         g->name, g->busy_w, span);
  return SIM_OK;
}

static int check_catalog(void *obj, const scn_loc *loc, void *user,
                         sim_error *err) {
  (void)user;
  gpu_catalog *cat = obj;
  for (size_t i = 0; i < cat->n; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(cat->gpus[i].name, cat->gpus[j].name) == 0)
        return scn_fail(loc, "gpus", err, "names identify types",
                        "GPU type '%s' is listed twice", cat->gpus[i].name);
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

static void spec_release(void *obj) {
  gpu_spec *g = obj;
  struct gpu_curve *c = g->interp;
  if (c != NULL) {
    gsl_interp_free(c->interp);
    gsl_interp_accel_free(c->accel);
    sim_free(NULL, c->phi);
    sim_free(NULL, c->power);
    sim_free(NULL, c);
  }
  g->interp = NULL;
  sim_free(NULL, g->pow_memo);
  g->pow_memo = NULL;
}

void gpu_catalog_fini(gpu_catalog *cat) {
  scn_release(&catalog_schema, cat);
}

static int bind_catalog(gpu_catalog *cat, scn_doc *doc, sim_error *err) {
  memset(cat, 0, sizeof *cat);
  int rc = scn_bind(doc, &catalog_schema, cat, NULL, err);
  scn_doc_destroy(doc);
  return rc;
}

static bool has_power_model(const gpu_catalog *cat) {
  return !isnan(cat->power.busy_share) && !isnan(cat->power.pj_per_byte);
}

/* Every type's busy floor and memory power from the power model. */
static int derive_all(gpu_catalog *cat, sim_error *err) {
  for (size_t i = 0; i < cat->n; i++) {
    int rc = derive_power(&cat->gpus[i], &cat->power, err);
    if (rc != SIM_OK)
      return rc;
  }
  return SIM_OK;
}

static int load_builtin(gpu_catalog *cat, sim_error *err) {
  sim_error e = {0};
  scn_doc *doc = scn_doc_read_string("scenarios/catalog/gpus.yaml (built in)",
                                     (const char *)gpu_catalog_builtin,
                                     gpu_catalog_builtin_size, &e);
  if (doc == NULL) /* the reader's code, even when err is NULL */
    return sim_error_set(err, e.code, "%s", e.msg);
  int rc = bind_catalog(cat, doc, err);
  if (rc == SIM_OK && !has_power_model(cat))
    rc = sim_error_set(err, SIM_EINPUT,
                       "the built-in GPU catalog has no power_model");
  return rc;
}

int gpu_catalog_load_builtin(gpu_catalog *cat, sim_error *err) {
  int rc = load_builtin(cat, err);
  if (rc == SIM_OK)
    rc = derive_all(cat, err);
  if (rc != SIM_OK)
    gpu_catalog_fini(cat);
  return rc;
}

/* A file without a power model takes the built-in one's figures (its
 * fitted lines stay the built-in catalog's). */
static int borrow_power_model(gpu_catalog *cat, sim_error *err) {
  gpu_catalog builtin;
  int rc = load_builtin(&builtin, err);
  if (rc == SIM_OK) {
    cat->power.busy_share = builtin.power.busy_share;
    cat->power.pj_per_byte = builtin.power.pj_per_byte;
  }
  gpu_catalog_fini(&builtin);
  return rc;
}

int gpu_catalog_load_file(gpu_catalog *cat, const char *path, sim_error *err) {
  sim_error e = {0};
  scn_doc *doc = scn_doc_read_file(path, &e);
  if (doc == NULL) /* the reader's code, even when err is NULL */
    return sim_error_set(err, e.code, "%s", e.msg);
  int rc = bind_catalog(cat, doc, err);
  if (rc == SIM_OK && !has_power_model(cat))
    rc = borrow_power_model(cat, err);
  if (rc == SIM_OK)
    rc = derive_all(cat, err);
  if (rc != SIM_OK)
    gpu_catalog_fini(cat);
  return rc;
}

int gpu_catalog_load(gpu_catalog *cat, const char *path, sim_error *err) {
  if (path == NULL)
    return gpu_catalog_load_builtin(cat, err);
  gpu_catalog user = {0};
  int rc = gpu_catalog_load_file(&user, path, err);
  if (rc != SIM_OK || user.replace) {
    *cat = user; /* zeroed by the failed load, or the whole catalog */
    return rc;
  }
  rc = gpu_catalog_load_builtin(cat, err);
  if (rc == SIM_OK)
    rc = scn_list_merge(&gpu_spec_schema, offsetof(gpu_spec, name),
                        (void **)&cat->gpus, &cat->n, (void **)&user.gpus,
                        &user.n);
  gpu_catalog_fini(&user); /* empty unless the merge failed */
  if (rc == SIM_ENOMEM) {
    gpu_catalog_fini(cat);
    return sim_error_set(err, rc, "out of memory");
  }
  return rc;
}

const gpu_spec *gpu_catalog_find(const gpu_catalog *cat, const char *name) {
  for (size_t i = 0; i < cat->n; i++)
    if (strcmp(cat->gpus[i].name, name) == 0)
      return &cat->gpus[i];
  return NULL;
}

void gpu_catalog_names(const gpu_catalog *cat, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < cat->n && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
                            cat->gpus[i].name);
}

const char *gpu_precision_name(gpu_precision p) {
  static const char *const names[GPU_NPRECISIONS] = {"fp16", "fp8", "fp4",
                                                     "int8", "int4"};
  return p < GPU_NPRECISIONS ? names[p] : "?";
}

/* ------------------------------------------------------------------ */
/* Peak throughput (the power/DVFS model is gpu_power.c)             */
/* ------------------------------------------------------------------ */

double gpu_peak_flops(const gpu_spec *g, gpu_precision p) {
  return p < GPU_NPRECISIONS ? g->dense.flops[p] : NAN;
}
