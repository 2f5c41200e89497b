/* racks_scn.c - a rack group as a scenario gives it: its schema (the GPU
 * or the system, the limit, the host power, the conversion curve, the
 * synthetic load) and the checks that resolve it against the GPU and
 * systems catalogs. The fleet itself is models/hardware/rack.c. */
#include "factory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factory_internal.h"
#include "suggest.h"

static int check_group(void *obj, const scn_loc *loc, void *user,
                       sim_error *err);

static const scn_field conv_fields[] = {
    {.key = "load",
     .type = SCN_QUANTITY,
     .offset = offsetof(rack_conv_point, load),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "share of the rack's limit, e.g. 50%"},
    {.key = "efficiency",
     .type = SCN_QUANTITY,
     .offset = offsetof(rack_conv_point, efficiency),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "share of the power drawn that reaches the IT, e.g. 96%"},
};

static const scn_schema conv_schema =
    SCN_SCHEMA("conversion point", rack_conv_point, conv_fields, .check = NULL);

#define POWER(k, field, fl, def, h)                                            \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY,                                            \
    .offset = offsetof(rack_group_config, field), .dim = UNITS_POWER,          \
    .min = 0, .max = HUGE_VAL, .flags = fl, .dflt = def, .help = h             \
  }

static const scn_field group_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(rack_group_config, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "a name for the group"},
    {.key = "count",
     .type = SCN_INT,
     .offset = offsetof(rack_group_config, count),
     .min = 1,
     .max = 100000,
     .flags = SCN_REQUIRED,
     .help = "how many racks of this kind"},
    {.key = "gpu",
     .type = SCN_STRING,
     .offset = offsetof(rack_group_config, gpu),
     .flags = SCN_NONEMPTY,
     .help = "a GPU type of the catalog (aifsim catalog lists them); "
             "default: the system's"},
    {.key = "system",
     .type = SCN_STRING,
     .offset = offsetof(rack_group_config, system),
     .flags = SCN_NONEMPTY,
     .help = "the servers holding the GPUs, from the systems catalog "
             "(DGX-H100, HGX-H100, HGX-H200, HGX-B200, GB200-NVL72, "
             "GB300-NVL72): their CPUs, memory, NICs, switches, fans and "
             "power supplies"},
    {.key = "host_load",
     .type = SCN_QUANTITY,
     .offset = offsetof(rack_group_config, host_load),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .help = "with a system: the host's load when its GPUs are fully busy; "
             "default: the system's"},
    {.key = "gpus_per_rack",
     .type = SCN_INT,
     .offset = offsetof(rack_group_config, gpus_per_rack),
     .min = 1,
     .max = 1024,
     .flags = SCN_REQUIRED,
     .help = "e.g. 72 for an NVL72"},
    POWER("limit", limit_w, SCN_POSITIVE, NULL,
          "the rack's power limit (with a system at its inlet); default: "
          "the rack at its most"),
    POWER("other_power_idle", other_idle_w, 0, NULL,
          "non-GPU DC power of a rack at idle (CPUs, NICs, switches, fans); "
          "with a system it replaces the system's parts and fans; default "
          "0 W without one"),
    POWER("other_power_max", other_max_w, 0, NULL,
          "non-GPU DC power of a rack at full activity"),
    /* MLPerf's MaxQ systems run this way: NVIDIA's DGX H100 Llama 2 70B
     * submissions of v4.0 set 450 W on every GPU (data/mlperf/). */
    POWER("gpu_power_limit", gpu_limit_w, SCN_POSITIVE, NULL,
          "per-GPU power limit an operator sets (nvidia-smi -pl, MLPerf "
          "MaxQ); caps never go above it; absent: the GPU's own"),
    {.key = "thermal_resistance",
     .type = SCN_QUANTITY,
     .offset = offsetof(rack_group_config, r_th),
     .dim = UNITS_THERMAL_RES,
     .flags = SCN_POSITIVE,
     .help = "GPU junction over its loop's temperature per W, e.g. 0.05 K/W; "
             "with the GPU's slowdown_temp it throttles hot GPUs"},
    {.key = "conversion",
     .type = SCN_LIST,
     .offset = offsetof(rack_group_config, conv),
     .sub = &conv_schema,
     .count_offset = offsetof(rack_group_config, nconv),
     .help = "without a system: the rack's power conversion (its power "
             "supplies) by load, a share of the limit, e.g. [{load: 10%, "
             "efficiency: 90%}, {load: 50%, efficiency: 96%}]; none: "
             "lossless. Its losses are IT"},
    {.key = "nvlink_domain",
     .type = SCN_INT,
     .offset = offsetof(rack_group_config, nvlink_domain),
     .min = 0,
     .max = 1024,
     .dflt = "0",
     .help = "GPUs per NVLink domain (8 for an HGX server, 72 for an NVL72); "
             "0: the whole rack"},
    {.key = "load",
     .type = SCN_MAP,
     .offset = offsetof(rack_group_config, load),
     .sub = &load_schema,
     .help = "synthetic utilisation: pattern constant, diurnal or steps"},
};

const scn_schema factory__group_schema = SCN_SCHEMA(
    "rack group", rack_group_config, group_fields, .check = check_group);

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

/* The group's system: known, whole servers to a rack, and no conversion
 * curve of its own (its supplies have one). The GPU defaults to the
 * system's, host_load too. */
static int check_system(rack_group_config *g, const factory_scenario *sc,
                        const scn_loc *loc, sim_error *err) {
  const sys_spec *s = sys_catalog_find(&sc->systems, g->system);
  if (s == NULL) {
    char names[1024], hint[1200];
    sim_suggest near;
    sim_suggest_init(&near, g->system);
    for (size_t i = 0; i < sc->systems.n; i++)
      sim_suggest_add(&near, sc->systems.systems[i].name);
    sys_catalog_names(&sc->systems, names, sizeof names);
    size_t len = sim_suggest_text(&near, hint, sizeof hint);
    snprintf(hint + len, sizeof hint - len, "known systems: %s", names);
    return scn_fail(loc, "system", err, hint, "unknown system '%s'", g->system);
  }
  /* A gpu given beside the system replaces its GPUs (a variant from a
   * catalog of one's own, say); its parts, fans and supplies stay. */
  if (g->gpu == NULL && (g->gpu = strdup(s->gpu)) == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  if (g->gpus_per_rack % s->gpus != 0)
    return scn_fail(loc, "gpus_per_rack", err, "or leave the system out",
                    "%lld GPUs are not whole %s servers of %lld GPUs each",
                    (long long)g->gpus_per_rack, s->name, (long long)s->gpus);
  if (g->nconv > 0)
    return scn_fail(loc, "conversion", err,
                    "the system's power supplies have their curve (the "
                    "systems catalog's psu)",
                    "a rack group with a system takes no conversion curve");
  if (isnan(g->host_load))
    g->host_load = s->host_load;
  return SIM_OK;
}

/* The GPU (given, or the system's) must be the catalog's. */
static int check_gpu(rack_group_config *g, const factory_scenario *sc,
                     const scn_loc *loc, sim_error *err) {
  if (g->system != NULL)
    return check_system(g, sc, loc, err);
  if (!isnan(g->host_load))
    return scn_fail(loc, "host_load", err, "name a system",
                    "host_load is a system's");
  if (g->gpu == NULL)
    return scn_fail(loc, NULL, err, "e.g. gpu: H100-SXM or system: DGX-H100",
                    "a rack group needs a gpu or a system");
  return SIM_OK;
}

static int check_conversion(const rack_group_config *g, const scn_loc *loc,
                            sim_error *err) {
  for (size_t i = 1; i < g->nconv; i++)
    if (!(g->conv[i].load > g->conv[i - 1].load)) {
      char where[64];
      snprintf(where, sizeof where, "conversion.%zu.load", i);
      return scn_fail(loc, where, err, NULL,
                      "conversion points must rise in load");
    }
  return SIM_OK;
}

/* The limit: by default the rack at its most; never below what the rack
 * draws with its GPUs at their minimum cap and the host at full load
 * (without a system, the DC power; with one, at the inlet). */
static int check_limit(rack_group_config *g, const factory_scenario *sc,
                       const scn_loc *loc, sim_error *err) {
  rack_group_spec spec = factory__group_spec(sc, g);
  if (isnan(g->limit_w))
    g->limit_w = rack_group_full_w(&spec);
  double floor =
      spec.system != NULL
          ? rack_group_worst_w(&spec, spec.gpu->cap_min_w)
          : (double)g->gpus_per_rack * spec.gpu->cap_min_w + g->other_max_w;
  if (g->limit_w < floor)
    return scn_fail(loc, "limit", err, "raise the limit or lower the GPUs",
                    "rack limit %.0f W is below the %.0f W its GPUs at their "
                    "minimum cap and other IT power draw",
                    g->limit_w, floor);
  return SIM_OK;
}

/* An operator's per-GPU limit lies in the range nvidia-smi -pl takes. */
static int check_gpu_limit(const rack_group_config *g,
                           const factory_scenario *sc, const scn_loc *loc,
                           sim_error *err) {
  const gpu_spec *spec = gpu_catalog_find(&sc->catalog, g->gpu);
  if (isnan(g->gpu_limit_w) ||
      (g->gpu_limit_w >= spec->cap_min_w && g->gpu_limit_w <= spec->cap_max_w))
    return SIM_OK;
  return scn_fail(loc, "gpu_power_limit", err,
                  "nvidia-smi -pl takes the GPU's power-limit range",
                  "gpu_power_limit %.0f W is outside %s's %.0f-%.0f W",
                  g->gpu_limit_w, spec->name, spec->cap_min_w, spec->cap_max_w);
}

/* The GPU type is in the catalog; else the names it has, the nearest
 * first. */
static int check_gpu_known(const rack_group_config *g,
                           const factory_scenario *sc, const scn_loc *loc,
                           sim_error *err) {
  if (gpu_catalog_find(&sc->catalog, g->gpu) != NULL)
    return SIM_OK;
  char names[1024], hint[1200];
  sim_suggest near;
  sim_suggest_init(&near, g->gpu);
  for (size_t i = 0; i < sc->catalog.n; i++)
    sim_suggest_add(&near, sc->catalog.gpus[i].name);
  gpu_catalog_names(&sc->catalog, names, sizeof names);
  size_t len = sim_suggest_text(&near, hint, sizeof hint);
  snprintf(hint + len, sizeof hint - len, "known types: %s", names);
  return scn_fail(loc, g->system != NULL ? "system" : "gpu", err, hint,
                  "unknown GPU type '%s'", g->gpu);
}

/* The NVLink domain (default: the system's GPUs, or the rack) divides
 * the rack's GPUs. */
static int check_nvlink(rack_group_config *g, const factory_scenario *sc,
                        const scn_loc *loc, sim_error *err) {
  if (g->nvlink_domain == 0)
    g->nvlink_domain = g->system != NULL
                           ? sys_catalog_find(&sc->systems, g->system)->gpus
                           : g->gpus_per_rack;
  if (g->gpus_per_rack % g->nvlink_domain != 0)
    return scn_fail(loc, "nvlink_domain", err, NULL,
                    "nvlink_domain %lld does not divide gpus_per_rack %lld",
                    (long long)g->nvlink_domain, (long long)g->gpus_per_rack);
  return SIM_OK;
}

static int check_group(void *obj, const scn_loc *loc, void *user,
                       sim_error *err) {
  rack_group_config *g = obj;
  const factory_scenario *sc = user;
  int rc = check_gpu(g, sc, loc, err);
  if (rc == SIM_OK)
    rc = check_gpu_known(g, sc, loc, err);
  if (rc == SIM_OK)
    rc = check_conversion(g, loc, err);
  if (rc == SIM_OK)
    rc = check_gpu_limit(g, sc, loc, err);
  if (rc == SIM_OK)
    rc = check_nvlink(g, sc, loc, err);
  if (rc != SIM_OK)
    return rc;
  /* Absent, they are 0 W (and written so) without a system; with one,
   * they stay absent, so the resolved scenario reads back the same. */
  g->other_given = !isnan(g->other_idle_w) || !isnan(g->other_max_w);
  if (g->system == NULL || g->other_given) {
    g->other_idle_w = isnan(g->other_idle_w) ? 0 : g->other_idle_w;
    g->other_max_w = isnan(g->other_max_w) ? 0 : g->other_max_w;
  }
  if (g->other_max_w < g->other_idle_w)
    return scn_fail(loc, "other_power_max", err, NULL,
                    "other_power_max is below other_power_idle");
  g->no_host = g->system == NULL && g->other_max_w == 0 && g->other_idle_w == 0;
  return check_limit(g, sc, loc, err);
}

const char *factory_host_note(const factory_config *c, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t g = 0; g < c->nracks && n < size; g++)
    if (c->racks[g].no_host)
      n += (size_t)snprintf(buf + n, size - n, "%s%s",
                            n == 0 ? "rack groups without host power (no "
                                     "system, no other_power_*): "
                                   : ", ",
                            c->racks[g].name);
  if (n > 0 && n < size)
    snprintf(buf + n, size - n,
             ": their IT excludes CPUs, memory, NICs, switches and fans");
  return buf;
}

/* "did you mean 'G'? " for the rack group closest to name, then base
 * (the factory's checks that name rack groups share it). */
const char *factory__group_hint(const factory_config *c, const char *name,
                                const char *base, char *hint, size_t size) {
  sim_suggest near;
  sim_suggest_init(&near, name);
  for (size_t g = 0; g < c->nracks; g++)
    sim_suggest_add(&near, c->racks[g].name);
  size_t len = sim_suggest_text(&near, hint, size);
  snprintf(hint + len, size - len, "%s", base);
  return hint;
}
