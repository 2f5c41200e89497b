/* rows_steer.c - power groups and the grid's load target as the factory's
 * descriptor (factory_model.h): the target into the period the models
 * decide, the groups' and the target's telemetry and /summary metrics,
 * and the calls a client steers them with (factory.h). The steering
 * itself is power control's (steer.h); its state is the control's, in
 * the factory's struct (factory_internal.h). */
#include "factory_model.h"

#include <math.h>
#include <string.h>

#include "factory.h"
#include "factory_internal.h"

/* The power groups' columns, in their order in the row. */
enum { G_CAP, G_OWN, G_BUDGET, G_WANT, G_GPU, G_NCOLS };

static const tel_column group_columns[] = {
    {"cap_w", "W", "the group's own cap at the sample (NaN: none)"},
    {"own_w", "W",
     "its own budget for its GPUs' caps before borrowing: the facility "
     "split's share, at most its cap, mean over the interval"},
    {"budget_w", "W",
     "its budget after borrowing and lending, mean over the interval"},
    {"want_w", "W",
     "its GPUs' demand, each within its cap range, mean over the interval"},
    {"gpu_power_w", "W", "its GPUs' power, mean over the interval"},
};

static const tel_column target_columns[] = {
    {"target_w", "W",
     "the grid's load target, mean over the part of the interval with one "
     "(NaN: none)"},
    {"facility_w", "W",
     "the facility's power at the grid, mean over the interval (achieved)"},
};

typedef struct steering {
  const steer *st;                   /* the control's */
  size_t n;                          /* power groups */
  bool record_groups, record_target; /* the scenario's: telemetry */
  double *iv;  /* G_NCOLS x n: the interval's integrals, J */
  double *row; /* G_NCOLS x n */
  tel_group gg, tg;
  size_t gid, tid;
  double iv_target_j, iv_target_s, iv_facility_j;
  /* The run's books. */
  double borrowed_j, target_s, over_s, over_j, error_j;
} steering;

static int steering_create(factory *f, void **self, sim_error *err) {
  const sim_allocator *a = factory__alloc(f);
  steering *s = sim_calloc(a, 1, sizeof *s);
  if (s == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  *self = s;
  s->st = control_steer_of(f->control);
  s->n = steer_ngroups(s->st);
  s->record_groups = s->n > 0;
  s->record_target = steer_has_target(s->st);
  s->iv = sim_calloc(a, G_NCOLS * s->n + 1, sizeof *s->iv);
  s->row = sim_calloc(a, G_NCOLS * s->n + 1, sizeof *s->row);
  if (s->iv == NULL || s->row == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  return SIM_OK;
}

static void steering_destroy(factory *f, void *self) {
  steering *s = self;
  if (s == NULL)
    return;
  sim_free(factory__alloc(f), s->iv);
  sim_free(factory__alloc(f), s->row);
  sim_free(factory__alloc(f), s);
}

static int open_group(factory *f, tel_group *g, size_t *id, sim_error *err) {
  int rc = tel_open_group(factory__sink(f), g, id);
  return rc == SIM_OK
             ? SIM_OK
             : sim_error_set(err, rc, "%s", tel_errmsg(factory__sink(f)));
}

/* /power_groups and /load_target, only where the scenario gives them. */
static int steering_declare(factory *f, void *self, sim_error *err) {
  steering *s = self;
  int rc = SIM_OK;
  s->gg = (tel_group){"power_groups", group_columns, G_NCOLS,
                      s->n,           "power_group", steer_group_names(s->st)};
  s->tg = (tel_group){"load_target", target_columns, 2, 1, NULL, NULL};
  if (s->record_groups)
    rc = open_group(f, &s->gg, &s->gid, err);
  if (rc == SIM_OK && s->record_target)
    rc = open_group(f, &s->tg, &s->tid, err);
  return rc;
}

/* The grid's load target for the coming period. */
static void steering_period(factory *f, void *self, double t,
                            factory_period *p) {
  const steering *s = self;
  p->target_w = steer_target(s->st, t);
  (void)f;
}

/* Group p's GPUs' power in force. */
static double group_gpu_w(const factory *f, const steering *s, size_t p) {
  const rack_fleet *fl = factory__fleet(f);
  double w = 0;
  for (uint32_t r = 0; r < fl->nracks; r++)
    if (steer_group_of(s->st, fl->group[r]) == (int)p)
      w += fl->gpu_power_w[r];
  return w;
}

static void advance_groups(factory *f, steering *s, double dt) {
  size_t n = s->n;
  for (size_t p = 0; p < n; p++) {
    steer_group_now g;
    steer_group_state(s->st, p, &g);
    s->iv[G_OWN * n + p] += g.own_w * dt;
    s->iv[G_BUDGET * n + p] += g.budget_w * dt;
    s->iv[G_WANT * n + p] += g.want_w * dt;
    s->iv[G_GPU * n + p] += group_gpu_w(f, s, p) * dt;
    s->borrowed_j += fmax(0, g.budget_w - g.own_w) * dt;
  }
}

/* The interval at the power and the target in force. */
static void steering_advance(factory *f, void *self, sim_time now, double dt) {
  steering *s = self;
  double target = f->coming.target_w, over = f->p_facility - target;
  (void)now;
  s->iv_facility_j += f->p_facility * dt;
  if (!isnan(target)) {
    s->iv_target_j += target * dt;
    s->iv_target_s += dt;
    s->target_s += dt;
    s->error_j += fabs(over) * dt;
    s->over_s += over > 0 ? dt : 0;
    s->over_j += fmax(0, over) * dt;
  }
  advance_groups(f, s, dt);
}

static int sample_groups(factory *f, steering *s, double t, double dt) {
  size_t n = s->n;
  for (size_t p = 0; p < n; p++) {
    steer_group_now g;
    steer_group_state(s->st, p, &g);
    s->row[G_CAP * n + p] = g.cap_w;
    for (int c = G_OWN; c < G_NCOLS; c++)
      s->row[c * n + p] = s->iv[c * n + p] / dt;
  }
  memset(s->iv, 0, G_NCOLS * n * sizeof *s->iv);
  return tel_append(factory__sink(f), s->gid, t, s->row);
}

static int steering_sample(factory *f, void *self, double t, double dt) {
  steering *s = self;
  int rc = SIM_OK;
  if (s->record_groups) {
    rc = sample_groups(f, s, t, dt);
    if (rc != SIM_OK)
      return rc;
  }
  double row[2] = {s->iv_target_s > 0 ? s->iv_target_j / s->iv_target_s : NAN,
                   s->iv_facility_j / dt};
  s->iv_target_j = s->iv_target_s = s->iv_facility_j = 0;
  if (s->record_target)
    rc = tel_append(factory__sink(f), s->tid, t, row);
  return rc;
}

/* Its /summary metrics: key, units, long name, group. */
static const tel_metric steering_metric_rows[] = {
    {"power_group_borrowed_mwh", "MWh",
     "Power groups: budget on loan (time integral)", "Power"},
    {"load_target_s", "s", "Time under a load target", "Grid"},
    {"load_target_over_s", "s", "Time above the load target", "Grid"},
    {"load_target_over_mwh", "MWh", "Energy above the load target", "Grid"},
    {"load_target_error_w", "W", "Load target: mean absolute error", "Grid"},
};

/* The groups' row when there are groups; the target's when one was in
 * force (the scenario's or a client's). */
static int steering_metrics(const factory *f, const void *self, tel_sink *sink,
                            char *absent, size_t size) {
  const steering *s = self;
  int rc = SIM_OK;
  (void)f;
  if (s->n > 0)
    rc = factory__put_metric(sink, &steering_metric_rows[0],
                             s->borrowed_j / 3.6e9, NULL, absent, size);
  if (rc != SIM_OK || !(s->record_target || s->target_s > 0))
    return rc;
  const double v[] = {s->target_s, s->over_s, s->over_j / 3.6e9,
                      s->target_s > 0 ? s->error_j / s->target_s : NAN};
  return factory__put_metrics(sink, steering_metric_rows + 1, v, 4, NULL,
                              absent, size);
}

const factory_model factory_model_steering = {
    .name = "power groups",
    .create = steering_create,
    .declare = steering_declare,
    .advance = steering_advance,
    .period = steering_period,
    .sample = steering_sample,
    .metrics = steering_metrics,
    .metric_rows = steering_metric_rows,
    .nmetric_rows =
        sizeof steering_metric_rows / sizeof steering_metric_rows[0],
    .destroy = steering_destroy,
};

/* ------------------------------------------------------------------ */
/* A client's calls (factory.h)                                        */
/* ------------------------------------------------------------------ */

size_t factory_npower_groups(const factory *f) {
  return steer_ngroups(control_steer_of(f->control));
}

const char *factory_power_group_name(const factory *f, size_t p) {
  return steer_group_name(control_steer_of(f->control), p);
}

void factory_power_group_of(const factory *f, size_t p,
                            factory_power_group *out) {
  const steer *st = control_steer_of(f->control);
  steer_group_now g;
  steer_group_state(st, p, &g);
  double gpu = 0;
  const rack_fleet *fl = f->fleet;
  for (uint32_t r = 0; r < fl->nracks; r++)
    if (steer_group_of(st, fl->group[r]) == (int)p)
      gpu += fl->gpu_power_w[r];
  *out = (factory_power_group){.cap_w = g.cap_w,
                               .own_w = g.own_w,
                               .budget_w = g.budget_w,
                               .want_w = g.want_w,
                               .gpu_w = gpu};
}

void factory_set_group_cap(factory *f, size_t p, double cap_w) {
  steer_set_cap(control_steer(f->control), p, cap_w);
}

void factory_set_group_lending(factory *f, size_t p, bool borrow, bool lend) {
  steer_set_lending(control_steer(f->control), p, borrow, lend);
}

void factory_set_load_target(factory *f, double target_w) {
  steer_set_target(control_steer(f->control), target_w);
}

double factory_load_target(const factory *f) { return f->coming.target_w; }

void factory_set_split(factory *f, control_split_fn fn, void *ctx) {
  control_set_split(f->control, fn, ctx);
}
