/* fabric.c - the network fabric's power (fabric.h), and its descriptor:
 * what the factory runs of it (factory_model.h). */
#include "fabric.h"

#include <math.h>
#include <stddef.h>

#include "factory_model.h"

/* ------------------------------------------------------------------ */
/* Schema: every default is a row of data/network/fabric.csv            */
/* ------------------------------------------------------------------ */

#define NUMBER(k, field, lo, hi, def, h)                                       \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(fab_config, field),     \
    .dim = UNITS_NUMBER, .min = lo, .max = hi, .flags = SCN_POSITIVE,          \
    .dflt = def, .help = h                                                     \
  }

static const scn_field fab_fields[] = {
    {.key = "enabled",
     .type = SCN_BOOL,
     .offset = offsetof(fab_config, enabled),
     .dflt = "false",
     .help = "draw the back-end fabric's switches and optics as IT"},
    NUMBER("nics_per_gpu", nics_per_gpu, 0, 16, "1",
           "back-end NIC ports per GPU (DGX H100 and B200: 8 ConnectX-7 "
           "for 8 GPUs)"),
    NUMBER("nic_gbps", nic_gbps, 0, 3200, "400",
           "each NIC port's line rate, Gb/s (ConnectX-7: 400)"),
    {.key = "switch_ports",
     .type = SCN_INT,
     .offset = offsetof(fab_config, switch_ports),
     .min = 4,
     .max = 1024,
     .dflt = "64",
     .help = "a switch's ports at port_gbps (Spectrum-4 SN5600: 64 x 800G)"},
    NUMBER("port_gbps", port_gbps, 0, 3200, "800",
           "a switch port's line rate, Gb/s (SN5600: 800)"),
    {.key = "switch_power",
     .type = SCN_QUANTITY,
     .offset = offsetof(fab_config, switch_w),
     .dim = UNITS_POWER,
     .min = 0,
     .max = 1e5,
     .dflt = "1848 W",
     .help = "one switch without the modules in its ports (estimate, an "
             "upper bound: the SN5600's 3 kW supply, 1+1 redundant, less "
             "64 ports x 18 W of module power)"},
    {.key = "transceiver_power",
     .type = SCN_QUANTITY,
     .offset = offsetof(fab_config, transceiver_w),
     .dim = UNITS_POWER,
     .min = 0,
     .max = 1000,
     .dflt = "17 W",
     .help = "one module in a switch port (NVIDIA twin-port 800G OSFP: "
             "17 W)"},
};

/* A switch has an even number of ports, at least as fast as a NIC. */
static int check_fabric(void *obj, const scn_loc *loc, void *user,
                        sim_error *err) {
  (void)user;
  const fab_config *c = obj;
  if (c->switch_ports % 2 != 0)
    return scn_fail(loc, "switch_ports", err,
                    "half face down, half up, in a non-blocking fabric",
                    "switch_ports must be even, not %lld",
                    (long long)c->switch_ports);
  if (c->port_gbps < c->nic_gbps)
    return scn_fail(loc, "port_gbps", err, NULL,
                    "a switch port (%g Gb/s) is slower than a NIC (%g Gb/s)",
                    c->port_gbps, c->nic_gbps);
  return SIM_OK;
}

const scn_schema fab_schema =
    SCN_SCHEMA("network fabric", fab_config, fab_fields, .check = check_fabric);

/* ------------------------------------------------------------------ */
/* Sizing                                                              */
/* ------------------------------------------------------------------ */

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* The switches and links of a non-blocking folded Clos of r-port
 * switches over d leaf down ports: one switch while d <= r; leaf-spine
 * while d <= r^2 / 2 (each leaf r/2 down, r/2 up; a spine's r ports all
 * down); a three-tier fat tree while d <= r^3 / 4 (pods of r/2 leaves
 * and r/2 aggregation switches, the core switches' ports all down). */
static int clos(uint64_t r, uint64_t d, fab_size *s, sim_error *err) {
  uint64_t half = r / 2;
  if (d <= r) {
    s->tiers = 1, s->leaves = 1;
    return SIM_OK;
  }
  s->leaves = ceil_div(d, half);
  s->links = s->leaves * half;
  if (d <= r * r / 2) {
    s->tiers = 2, s->spines = ceil_div(s->links, r);
    return SIM_OK;
  }
  if (d > r * r * r / 4)
    return sim_error_set(err, SIM_EINPUT,
                         "fabric: %llu leaf ports need more than three "
                         "tiers of %llu-port switches (at most %llu)",
                         (unsigned long long)d, (unsigned long long)r,
                         (unsigned long long)(r * r * r / 4));
  s->tiers = 3, s->spines = s->leaves; /* aggregation, one per leaf */
  s->cores = ceil_div(s->spines * half, r);
  s->links += s->spines * half;
  return SIM_OK;
}

int fab_size_of(const fab_config *c, double gpus, fab_size *out,
                sim_error *err) {
  *out = (fab_size){.endpoints = gpus * c->nics_per_gpu};
  double per_port = floor(c->port_gbps / c->nic_gbps); /* NICs a port */
  out->down_ports = (uint64_t)ceil(out->endpoints / per_port);
  if (out->down_ports == 0)
    return SIM_OK;
  int rc = clos((uint64_t)c->switch_ports, out->down_ports, out, err);
  if (rc != SIM_OK)
    return rc;
  out->switches = out->leaves + out->spines + out->cores;
  out->transceivers = out->down_ports + 2 * out->links;
  out->power_w = (double)out->switches * c->switch_w +
                 (double)out->transceivers * c->transceiver_w;
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* The descriptor                                                      */
/* ------------------------------------------------------------------ */

extern const factory_model fabric_model;

/* The state of a run's fabric: its size, each rack group's share of its
 * power (by NIC ports), and the energy booked, in the interval and in
 * all. */
typedef struct fabric {
  fab_size size;
  double *group_w;
  size_t ngroups;
  double iv_j, energy_j;
  tel_group group;
  size_t id;
} fabric;

static int fabric_create(factory *f, void **self, sim_error *err) {
  const fab_config *c = factory__model_config(f, &fabric_model);
  if (!c->enabled)
    return SIM_OK;
  const rack_fleet *fl = factory__fleet(f);
  const sim_allocator *a = factory__alloc(f);
  fabric *b = sim_calloc(a, 1, sizeof *b);
  double *w = sim_calloc(a, fl->ngroups + 1, sizeof *w);
  if (b == NULL || w == NULL) {
    sim_free(a, b), sim_free(a, w);
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  *self = b, b->group_w = w, b->ngroups = fl->ngroups;
  int rc = fab_size_of(c, (double)fl->n, &b->size, err);
  for (size_t g = 0; rc == SIM_OK && g < fl->ngroups; g++) {
    const rack_group_spec *s = &fl->groups[g];
    double gpus = (double)s->count * (double)s->gpus_per_rack;
    w[g] = b->size.power_w * gpus / (double)fl->n;
  }
  return rc;
}

static double fabric_it_w(const factory *f, const void *self) {
  (void)f;
  const fabric *b = self;
  return b != NULL ? b->size.power_w : 0;
}

static void fabric_group_w(const factory *f, const void *self, double *w) {
  (void)f;
  const fabric *b = self;
  for (size_t g = 0; b != NULL && g < b->ngroups; g++)
    w[g] += b->group_w[g];
}

static void fabric_advance(factory *f, void *self, sim_time now, double dt) {
  (void)f, (void)now;
  fabric *b = self;
  if (b != NULL)
    b->iv_j += b->size.power_w * dt;
}

static const tel_column fabric_columns[] = {
    {"power_w", "W",
     "the fabric's switches and optics, mean over the interval (in the "
     "/facility IT power)"},
};

static int fabric_declare(factory *f, void *self, sim_error *err) {
  fabric *b = self;
  if (b == NULL)
    return SIM_OK;
  b->group = (tel_group){"fabric", fabric_columns, 1, 1, NULL, NULL};
  int rc = tel_open_group(factory__sink(f), &b->group, &b->id);
  return rc == SIM_OK
             ? SIM_OK
             : sim_error_set(err, rc, "%s", tel_errmsg(factory__sink(f)));
}

static int fabric_sample(factory *f, void *self, double t, double dt) {
  fabric *b = self;
  if (b == NULL)
    return SIM_OK;
  double row = b->iv_j / dt;
  b->energy_j += b->iv_j;
  b->iv_j = 0;
  return tel_append(factory__sink(f), b->id, t, &row);
}

/* Its /summary metrics: key, units, long name, group. */
static const tel_metric fabric_metric_rows[] = {
    {"fabric_energy_mwh", "MWh", "Network fabric (in IT)", "Energy"},
    {"fabric_power_w", "W", "Network fabric power", "Power"},
    {"fabric_switches", "1", "Network switches", "Run"},
    {"fabric_transceivers", "1", "Network switch-port modules", "Run"},
};

static int fabric_metrics(const factory *f, const void *self, tel_sink *sink,
                          char *absent, size_t size) {
  (void)f;
  const fabric *b = self;
  if (b == NULL)
    return SIM_OK;
  const double v[] = {b->energy_j / 3.6e9, b->size.power_w,
                      (double)b->size.switches, (double)b->size.transceivers};
  int rc = SIM_OK;
  for (size_t i = 0; i < sizeof v / sizeof v[0] && rc == SIM_OK; i++)
    rc = factory__put_metric(sink, &fabric_metric_rows[i], v[i], NULL, absent,
                             size);
  return rc;
}

static void fabric_destroy(factory *f, void *self) {
  fabric *b = self;
  if (b == NULL)
    return;
  sim_free(factory__alloc(f), b->group_w);
  sim_free(factory__alloc(f), b);
}

const factory_model fabric_model = {
    .name = "fabric",
    .schema = &fab_schema,
    .create = fabric_create,
    .declare = fabric_declare,
    .it_w = fabric_it_w,
    .group_w = fabric_group_w,
    .advance = fabric_advance,
    .sample = fabric_sample,
    .metrics = fabric_metrics,
    .metric_rows = fabric_metric_rows,
    .nmetric_rows = sizeof fabric_metric_rows / sizeof fabric_metric_rows[0],
    .destroy = fabric_destroy,
};
