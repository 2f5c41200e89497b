/* rows_disturb.c - disturbances at the point of interconnection as the
 * factory's descriptor (factory_model.h; the answer itself is
 * disturb.h's): the share of the facility's power the grid carries each
 * period, the load the grid lost at each trip and the energy the backup
 * carried, the series /grid_draw, the table /disturbances and their
 * /summary metrics. The IT's dark intervals are faults (rows_facility.c:
 * plan_entries), so the work lost is booked as a PDU trip's. Without
 * disturbances it has no slot and writes nothing. */
#include "factory_model.h"

#include <math.h>

#include "factory_internal.h"

typedef struct disturbance {
  dist_response *r;
  double *lost_w; /* per disturbance: the load the grid lost at its trip */
  size_t n;
  double last_t;              /* the last tick */
  double backup_j;            /* the facility's energy off the grid */
  double iv_grid_j, iv_share; /* the sample interval's, integrated */
  tel_group group;
  size_t id;
} disturbance;

static int dist_create(factory *f, void **self, sim_error *err) {
  const grid_config *g = &f->cfg->grid;
  if (g->ndist == 0)
    return SIM_OK;
  disturbance *d = sim_calloc(f->alloc, 1, sizeof *d);
  if (d != NULL) {
    d->r = sim_calloc(f->alloc, g->ndist, sizeof *d->r);
    d->lost_w = sim_calloc(f->alloc, g->ndist, sizeof *d->lost_w);
  }
  if (d == NULL || d->r == NULL || d->lost_w == NULL) {
    if (d != NULL)
      sim_free(f->alloc, d->r), sim_free(f->alloc, d->lost_w);
    sim_free(f->alloc, d);
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  d->n = g->ndist;
  dist_respond(&f->cfg->ride_through, g->dist, d->n, d->r);
  *self = d;
  return SIM_OK;
}

/* A trip within the period just ended took the power in force over it
 * off the grid; the coming period's share is its mean. */
static void dist_period(factory *f, void *self, double t, factory_period *p) {
  disturbance *d = self;
  if (d == NULL)
    return;
  for (size_t i = 0; i < d->n; i++)
    if (d->r[i].tripped && d->r[i].trip_s >= d->last_t && d->r[i].trip_s < t)
      d->lost_w[i] = f->p_facility;
  d->last_t = t;
  p->grid_share = dist_share_mean(d->r, d->n, t, t + f->control_dt_s);
}

static void dist_advance(factory *f, void *self, sim_time now, double dt) {
  (void)now;
  disturbance *d = self;
  if (d == NULL)
    return;
  double share = f->coming.grid_share;
  d->backup_j += f->p_facility * (1 - share) * dt;
  d->iv_grid_j += f->p_facility * share * dt;
  d->iv_share += share * dt;
}

static const tel_column draw_columns[] = {
    {"power_w", "W",
     "what the grid carries of the facility's power, mean over the "
     "interval (the rest is on UPS or generator)"},
    {"share", "1", "the share of the facility's power on the grid, mean"},
};

static int dist_declare(factory *f, void *self, sim_error *err) {
  disturbance *d = self;
  if (d == NULL)
    return SIM_OK;
  d->group = (tel_group){"grid_draw", draw_columns, 2, 1, NULL, NULL};
  int rc = tel_open_group(f->sink, &d->group, &d->id);
  return rc == SIM_OK ? SIM_OK
                      : sim_error_set(err, rc, "%s", tel_errmsg(f->sink));
}

static int dist_sample(factory *f, void *self, double t, double dt) {
  disturbance *d = self;
  if (d == NULL)
    return SIM_OK;
  double row[2] = {d->iv_grid_j / dt, d->iv_share / dt};
  d->iv_grid_j = d->iv_share = 0;
  return tel_append(f->sink, d->id, t, row);
}

/* The length of [a, b) within the run; 0 for NaN ends. */
static double within(double a, double b, double end) {
  double len = fmin(b, end) - fmax(a, 0);
  return len > 0 ? len : 0;
}

static int dist_close(factory *f, void *self, factory_summary *s,
                      sim_error *err) {
  (void)err;
  const disturbance *d = self;
  s->ride_through_met = s->dist_lost_w = s->dist_off_s = NAN;
  s->dist_backup_j = s->dist_dark_s = NAN;
  if (d == NULL)
    return SIM_OK;
  size_t must = 0, met = 0;
  s->dist_lost_w = s->dist_off_s = s->dist_dark_s = 0;
  for (size_t i = 0; i < d->n; i++) {
    const dist_response *r = &d->r[i];
    must += r->must, met += r->met;
    s->dist_trips += r->tripped;
    s->dist_lost_w = fmax(s->dist_lost_w, d->lost_w[i]);
    if (r->tripped) {
      s->dist_off_s += within(r->trip_s, r->reconnect_s, s->duration_s);
      if (!isnan(r->dark_start_s))
        s->dist_dark_s +=
            within(r->dark_start_s, r->dark_end_s, s->duration_s);
    }
  }
  s->dist_events = d->n;
  s->ride_through_met = must > 0 ? (double)met / (double)must : NAN;
  s->dist_backup_j = d->backup_j;
  (void)f;
  return SIM_OK;
}

/* The table /disturbances: a row per disturbance, as dist_response. */
#define DIST_COLUMNS(X)                                                        \
  X("start_s", "s", "when it began", ev->start_s)                             \
  X("duration_s", "s", "how long it lasted", ev->duration_s)                   \
  X("voltage", "1", "sag: the share of nominal voltage retained; NaN",        \
    ev->voltage)                                                               \
  X("frequency_hz", "Hz", "excursion: the frequency held; NaN",               \
    ev->frequency_hz)                                                          \
  X("must_ride", "1", "1: inside the ride-through curve or band", r->must)     \
  X("connected", "1", "1: the facility was on the grid at its start",         \
    r->connected)                                                              \
  X("tripped", "1", "1: it took the facility off the grid", r->tripped)       \
  X("met", "1", "1: inside the curve and ridden through", r->met)             \
  X("trip_s", "s", "when the facility left the grid; NaN", r->trip_s)          \
  X("lost_w", "W", "the load the grid lost at the trip (0: none)",            \
    d->lost_w[i])                                                              \
  X("reconnect_s", "s", "when it started back; NaN", r->reconnect_s)           \
  X("back_s", "s", "when its draw was all back; NaN", r->back_s)               \
  X("dark_start_s", "s", "when its IT lost power; NaN: never",                \
    r->dark_start_s)                                                           \
  X("dark_end_s", "s", "when its IT had power again; NaN", r->dark_end_s)

enum {
#define DIST_ENUM(k, u, l, v) +1
  DIST_NCOLS = 0 DIST_COLUMNS(DIST_ENUM)
#undef DIST_ENUM
};

static int dist_write(factory *f, void *self, factory_summary *s,
                      sim_error *err) {
  (void)s;
  const disturbance *d = self;
  if (d == NULL || f->sink == NULL)
    return SIM_OK;
  double *v = sim_calloc(f->alloc, DIST_NCOLS * d->n, sizeof *v);
  const char **kind = sim_calloc(f->alloc, d->n, sizeof *kind);
  if (v == NULL || kind == NULL) {
    sim_free(f->alloc, v), sim_free(f->alloc, kind);
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < d->n; i++) {
    const dist_event *ev = &f->cfg->grid.dist[i];
    const dist_response *r = &d->r[i];
    kind[i] = ev->kind == DIST_SAG ? "sag" : "frequency";
    size_t c = 0;
#define DIST_VALUE(k, u, l, val) v[(c++) * d->n + i] = (double)(val);
    DIST_COLUMNS(DIST_VALUE)
#undef DIST_VALUE
  }
  tel_table_column cols[DIST_NCOLS + 1] = {
      {"kind", "", "sag or frequency", NULL, kind}};
  size_t c = 1;
#define DIST_COL(k, u, l, val)                                                 \
  cols[c] = (tel_table_column){k, u, l, v + (c - 1) * d->n, NULL}, c++;
  DIST_COLUMNS(DIST_COL)
#undef DIST_COL
  const tel_table t = {"disturbances", cols, DIST_NCOLS + 1, d->n,
                       "disturbance"};
  int rc = tel_put_table(f->sink, &t);
  sim_free(f->alloc, v), sim_free(f->alloc, kind);
  return rc == SIM_OK ? SIM_OK
                      : sim_error_set(err, rc, "%s", tel_errmsg(f->sink));
}

/* Its /summary metrics (only with disturbances). Key, units, long name,
 * group and value of each. */
#define DISTURBANCE_METRICS(X)                                                 \
  X("disturbances", "1", "Grid disturbances", "Grid",                          \
    (double)s->dist_events)                                                    \
  X("disturbance_trips", "1", "Trips off the grid", "Grid",                    \
    (double)s->dist_trips)                                                     \
  X("ride_through_met", "1", "Ride-through met (share)", "Grid",               \
    s->ride_through_met)                                                       \
  X("grid_lost_w", "W", "Largest load the grid lost", "Grid", s->dist_lost_w)  \
  X("grid_off_s", "s", "Time off the grid", "Grid", s->dist_off_s)             \
  X("backup_mwh", "MWh", "Energy carried by the backup", "Grid",               \
    s->dist_backup_j / 3.6e9)                                                  \
  X("it_dark_s", "s", "Time the IT had no power", "Grid", s->dist_dark_s)      \
  X("it_dark_gpu_hours", "GPU-h", "GPU time without power", "Grid",            \
    s->dist_dark_s * (double)s->gpus / 3600)

static const tel_metric dist_rows[] = {DISTURBANCE_METRICS(TEL_METRIC_ROW)};

static const factory_reason dist_reasons[] = {
    {"ride_through_met", "no disturbance inside the ride-through curve"},
    {NULL, NULL},
};

static int dist_metrics(const factory *f, const void *self, tel_sink *sink,
                        char *absent, size_t size) {
  if (self == NULL)
    return SIM_OK;
  const factory_summary *s = &f->sum;
  const double v[] = {DISTURBANCE_METRICS(TEL_METRIC_VALUE)};
  return factory__put_metrics(sink, dist_rows, v, sizeof v / sizeof v[0],
                              dist_reasons, absent, size);
}

static void dist_destroy(factory *f, void *self) {
  disturbance *d = self;
  if (d == NULL)
    return;
  sim_free(f->alloc, d->r);
  sim_free(f->alloc, d->lost_w);
  sim_free(f->alloc, d);
}

const factory_model factory_model_disturbance = {
    .name = "ride_through",
    .schema = &dist_schema,
    .create = dist_create,
    .declare = dist_declare,
    .period = dist_period,
    .advance = dist_advance,
    .sample = dist_sample,
    .close = dist_close,
    .write = dist_write,
    .metrics = dist_metrics,
    .metric_rows = dist_rows,
    .nmetric_rows = sizeof dist_rows / sizeof dist_rows[0],
    .destroy = dist_destroy,
};
