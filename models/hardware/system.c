/* system.c - the systems catalog (schema, loading, checks) and the server
 * power model of system.h. */
#include "system.h"

#include "bits.h"
#include "lanes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

extern const unsigned char sys_catalog_builtin[];
extern const size_t sys_catalog_builtin_size;

/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

static const char *const kind_names[] = {"cpu",     "memory", "nic", "nvswitch",
                                         "storage", "other",  NULL};

#define WATTS(k, T, field, fl, h)                                              \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(T, field),              \
    .dim = UNITS_POWER, .min = 0, .max = HUGE_VAL, .flags = fl, .help = h      \
  }

static const scn_field part_fields[] = {
    {.key = "kind",
     .type = SCN_ENUM,
     .offset = offsetof(sys_part, kind),
     .names = kind_names,
     .flags = SCN_REQUIRED,
     .help = "cpu, memory, storage or other (follow the host load); nic or "
             "nvswitch (follow the GPUs' activity)"},
    {.key = "model",
     .type = SCN_STRING,
     .offset = offsetof(sys_part, model),
     .dflt = ""},
    {.key = "count",
     .type = SCN_INT,
     .offset = offsetof(sys_part, count),
     .min = 1,
     .max = 100000,
     .flags = SCN_REQUIRED,
     .help = "how many in one unit"},
    WATTS("idle_power", sys_part, idle_w, SCN_REQUIRED,
          "each, at no load, e.g. 90 W"),
    WATTS("max_power", sys_part, max_w, SCN_REQUIRED,
          "each, at full load, e.g. 350 W"),
};

static int check_part(void *obj, const scn_loc *loc, void *user,
                      sim_error *err) {
  (void)user;
  const sys_part *p = obj;
  if (p->max_w < p->idle_w)
    return scn_fail(loc, "max_power", err, NULL,
                    "max_power %.6g W is below idle_power %.6g W", p->max_w,
                    p->idle_w);
  return SIM_OK;
}

static const scn_schema part_schema =
    SCN_SCHEMA("part", sys_part, part_fields, .check = check_part);

static const scn_field fan_fields[] = {
    WATTS("max_power", sys_fans, max_w, SCN_REQUIRED,
          "all fans at full speed, e.g. 2 kW"),
    {.key = "min_speed",
     .type = SCN_QUANTITY,
     .offset = offsetof(sys_fans, min_speed),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .flags = SCN_REQUIRED,
     .help = "the controller's floor, a share of full speed, e.g. 25%"},
};

static const scn_schema fan_schema =
    SCN_SCHEMA("fans", sys_fans, fan_fields, .check = NULL);

static const scn_field eff_fields[] = {
    {.key = "load",
     .type = SCN_QUANTITY,
     .offset = offsetof(sys_eff_point, load),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "share of the supplies' rated output, e.g. 50%"},
    {.key = "efficiency",
     .type = SCN_QUANTITY,
     .offset = offsetof(sys_eff_point, efficiency),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "output over input, e.g. 96%"},
};

static const scn_schema eff_schema =
    SCN_SCHEMA("efficiency point", sys_eff_point, eff_fields, .check = NULL);

static const scn_field psu_fields[] = {
    {.key = "count",
     .type = SCN_INT,
     .offset = offsetof(sys_psu, count),
     .min = 1,
     .max = 1000,
     .flags = SCN_REQUIRED,
     .help = "supplies installed (redundant ones share the load too)"},
    WATTS("rating", sys_psu, rating_w, SCN_REQUIRED | SCN_POSITIVE,
          "each supply's rated output, e.g. 3.3 kW"),
    {.key = "efficiency",
     .type = SCN_LIST,
     .offset = offsetof(sys_psu, curve),
     .sub = &eff_schema,
     .count_offset = offsetof(sys_psu, ncurve),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "[{load: 10%, efficiency: 90%}, ...], rising in load"},
};

static const scn_schema psu_schema =
    SCN_SCHEMA("power supplies", sys_psu, psu_fields, .check = NULL);

static int check_spec(void *obj, const scn_loc *loc, void *user,
                      sim_error *err);
static double parts_sum(const sys_spec *s, double activity, double host_load);

static const scn_field spec_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(sys_spec, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "the identifier scenarios use, e.g. DGX-H100"},
    {.key = "full_name",
     .type = SCN_STRING,
     .offset = offsetof(sys_spec, full_name),
     .dflt = ""},
    {.key = "gpu",
     .type = SCN_STRING,
     .offset = offsetof(sys_spec, gpu),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "its GPUs, by the GPU catalog's name, e.g. H100-SXM"},
    {.key = "gpus",
     .type = SCN_INT,
     .offset = offsetof(sys_spec, gpus),
     .min = 1,
     .max = 100000,
     .flags = SCN_REQUIRED,
     .help = "GPUs in one unit: 8 for an HGX server, 72 for an NVL72 rack"},
    WATTS("max_power", sys_spec, max_power_w, SCN_POSITIVE,
          "the vendor's rated maximum at the inlet, e.g. 10.2 kW"),
    {.key = "liquid_heat_share",
     .type = SCN_QUANTITY,
     .offset = offsetof(sys_spec, liquid_heat_share),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .dflt = "0%",
     .help = "share of the heat cold plates carry; fans move the rest"},
    {.key = "host_load",
     .type = SCN_QUANTITY,
     .offset = offsetof(sys_spec, host_load),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .flags = SCN_REQUIRED,
     .help = "the host's load when the GPUs are fully busy, e.g. 30%"},
    {.key = "parts",
     .type = SCN_LIST,
     .offset = offsetof(sys_spec, parts),
     .sub = &part_schema,
     .count_offset = offsetof(sys_spec, nparts),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "[{kind, model, count, idle_power, max_power}, ...]"},
    {.key = "fans",
     .type = SCN_MAP,
     .offset = offsetof(sys_spec, fans),
     .sub = &fan_schema,
     .flags = SCN_REQUIRED,
     .help = "{max_power, min_speed}"},
    {.key = "psu",
     .type = SCN_MAP,
     .offset = offsetof(sys_spec, psu),
     .sub = &psu_schema,
     .flags = SCN_REQUIRED,
     .help = "{count, rating, efficiency: [{load, efficiency}, ...]}"},
    {.key = "sources",
     .type = SCN_STRINGS,
     .offset = offsetof(sys_spec, sources),
     .count_offset = offsetof(sys_spec, nsources),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "where each figure comes from: 'keys: reference'"},
};

const scn_schema sys_spec_schema =
    SCN_SCHEMA("system", sys_spec, spec_fields, .check = check_spec);

static int check_catalog(void *obj, const scn_loc *loc, void *user,
                         sim_error *err);

static const scn_field catalog_fields[] = {
    {.key = "systems",
     .type = SCN_LIST,
     .offset = offsetof(sys_catalog, systems),
     .sub = &sys_spec_schema,
     .count_offset = offsetof(sys_catalog, n),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "a list of systems"},
};

static const scn_schema catalog_schema = SCN_SCHEMA(
    "systems catalog", sys_catalog, catalog_fields, .check = check_catalog);

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

static int check_curve(const sys_spec *s, const scn_loc *loc, sim_error *err) {
  for (size_t i = 1; i < s->psu.ncurve; i++)
    if (!(s->psu.curve[i].load > s->psu.curve[i - 1].load)) {
      char where[64];
      snprintf(where, sizeof where, "psu.efficiency.%zu.load", i);
      return scn_fail(loc, where, err, NULL,
                      "%s: efficiency points must rise in load", s->name);
    }
  return SIM_OK;
}

static int check_spec(void *obj, const scn_loc *loc, void *user,
                      sim_error *err) {
  (void)user;
  sys_spec *s = obj;
  s->parts_idle_w = s->parts_max_w = 0;
  for (size_t i = 0; i < s->nparts; i++) {
    sys_part *p = &s->parts[i];
    p->units = (double)p->count;
    p->span_w = p->max_w - p->idle_w;
    p->follows_gpus = p->kind == SYS_NIC || p->kind == SYS_NVSWITCH;
    s->parts_idle_w += p->units * p->idle_w;
    s->parts_max_w += p->units * p->max_w;
    if (i < SYS_PARTS_LANED) {
      s->lane_units[i] = p->units;
      s->lane_idle[i] = p->idle_w;
      s->lane_span[i] = p->span_w;
      s->lane_follows[i] = p->follows_gpus ? UINT64_MAX : 0;
    }
  }
  s->parts_full_w = parts_sum(s, 1, s->host_load);
  return check_curve(s, loc, err);
}

static int check_catalog(void *obj, const scn_loc *loc, void *user,
                         sim_error *err) {
  (void)user;
  const sys_catalog *cat = obj;
  for (size_t i = 0; i < cat->n; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(cat->systems[i].name, cat->systems[j].name) == 0)
        return scn_fail(loc, "systems", err, "names identify systems",
                        "system '%s' is listed twice", cat->systems[i].name);
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

void sys_catalog_fini(sys_catalog *cat) { scn_release(&catalog_schema, cat); }

static int bind_catalog(sys_catalog *cat, scn_doc *doc, sim_error *err) {
  memset(cat, 0, sizeof *cat);
  int rc = scn_bind(doc, &catalog_schema, cat, NULL, err);
  scn_doc_destroy(doc);
  return rc;
}

int sys_catalog_load_builtin(sys_catalog *cat, sim_error *err) {
  sim_error e = {0};
  scn_doc *doc = scn_doc_read_string(
      "scenarios/catalog/systems.yaml (built in)",
      (const char *)sys_catalog_builtin, sys_catalog_builtin_size, &e);
  if (doc == NULL) /* the reader's code, even when err is NULL */
    return sim_error_set(err, e.code, "%s", e.msg);
  return bind_catalog(cat, doc, err);
}

int sys_catalog_load_file(sys_catalog *cat, const char *path, sim_error *err) {
  sim_error e = {0};
  scn_doc *doc = scn_doc_read_file(path, &e);
  if (doc == NULL)
    return sim_error_set(err, e.code, "%s", e.msg);
  return bind_catalog(cat, doc, err);
}

const sys_spec *sys_catalog_find(const sys_catalog *cat, const char *name) {
  for (size_t i = 0; i < cat->n; i++)
    if (strcmp(cat->systems[i].name, name) == 0)
      return &cat->systems[i];
  return NULL;
}

void sys_catalog_names(const sys_catalog *cat, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < cat->n && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
                            cat->systems[i].name);
}

const char *sys_kind_name(sys_kind k) {
  return k < SYS_NKINDS ? kind_names[k] : "?";
}

/* ------------------------------------------------------------------ */
/* The power model                                                     */
/* ------------------------------------------------------------------ */

static double clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* count (idle + (max - idle) x), from what the load made of them */
static double parts_one_by_one(const sys_spec *s, double a, double u) {
  double sum = 0;
  for (const sys_part *p = s->parts; p < s->parts + s->nparts; p++)
    sum += p->units * (p->idle_w + p->span_w * (p->follows_gpus ? a : u));
  return sum;
}

/* The same terms two a register (lane by lane the scalar operations,
 * lanes.h), added to the sum in the parts' order. */
static double parts_sum(const sys_spec *s, double activity, double host_load) {
  double a = clamp(activity, 0, 1), u = clamp(host_load, 0, 1), sum = 0;
  size_t n = s->nparts, i = 0;
  if (n > SYS_PARTS_LANED)
    return parts_one_by_one(s, a, u);
  sim_u2 a2 = (sim_u2)(sim_d2){a, a}, u2 = (sim_u2)(sim_d2){u, u};
  for (; i + 2 <= n; i += 2) {
    sim_u2 m = sim_u2_at(s->lane_follows + i);
    sim_d2 x = (sim_d2)((a2 & m) | (u2 & ~m));
    sim_d2 t = sim_d2_at(s->lane_units + i) *
               (sim_d2_at(s->lane_idle + i) + sim_d2_at(s->lane_span + i) * x);
    sum += t[0];
    sum += t[1];
  }
  if (i < n)
    sum += s->lane_units[i] *
           (s->lane_idle[i] + s->lane_span[i] * (s->lane_follows[i] ? a : u));
  return sum;
}

double sys_parts_w(const sys_spec *s, double activity, double host_load) {
  if (activity == 1 && sim_bits(host_load) == sim_bits(s->host_load))
    return s->parts_full_w; /* parts_sum's answer at load */
  return parts_sum(s, activity, host_load);
}

/* The fans move a share of the heat; the liquid share cancels in the
 * ratio to the design heat, as it is the same share of both. */
double sys_fan_w(const sys_spec *s, const gpu_spec *g, double dc_w) {
  double design = (double)s->gpus * g->tdp_w + s->parts_max_w;
  double speed = design > 0 ? dc_w / design : 1;
  speed = clamp(speed, s->fans.min_speed, 1);
  return s->fans.max_w * speed * speed * speed;
}

double sys_curve_at(const sys_eff_point *c, size_t n, double load) {
  if (n == 0)
    return 1;
  if (load <= c[0].load)
    return c[0].efficiency;
  for (size_t i = 1; i < n; i++)
    if (load <= c[i].load) {
      double w = (load - c[i - 1].load) / (c[i].load - c[i - 1].load);
      return c[i - 1].efficiency + w * (c[i].efficiency - c[i - 1].efficiency);
    }
  return c[n - 1].efficiency;
}

double sys_psu_efficiency(const sys_spec *s, double dc_w) {
  double load = dc_w / ((double)s->psu.count * s->psu.rating_w);
  return sys_curve_at(s->psu.curve, s->psu.ncurve, load);
}

double sys_wall_w(const sys_spec *s, double dc_w) {
  return dc_w / sys_psu_efficiency(s, dc_w);
}

sys_power sys_server_power(const sys_spec *s, const gpu_spec *g, double gpu_w,
                           double activity, double host_load) {
  sys_power p = {.gpu_w = gpu_w};
  p.parts_w = sys_parts_w(s, activity, host_load);
  p.compute_w = gpu_w + p.parts_w;
  p.fan_w = sys_fan_w(s, g, p.compute_w);
  p.dc_w = p.compute_w + p.fan_w;
  p.wall_w = sys_wall_w(s, p.dc_w);
  p.psu_loss_w = p.wall_w - p.dc_w;
  return p;
}

sys_power sys_full_power(const sys_spec *s, const gpu_spec *g) {
  return sys_server_power(s, g, (double)s->gpus * g->tdp_w, 1, 1);
}
