/* workloads_dr.c - what demand response cost each service and job
 * (workloads.h, work_dr_*): their requests' SLO attainment and their
 * training progress, inside events and outside, from the counters at
 * every control tick. Kept only when the scenario asks for alignment
 * (grid.dr_window or grid.dr_file), so other runs carry no cost. */
#include "workloads.h"

#include <math.h>

#include "workloads_internal.h"

/* Per owner (services, then jobs): the counters at the last tick, and
 * their growth in and out of events. For a service a = requests ended, b
 * = those within their SLOs; for a job a = iterations done, b = unused.
 * The time a job ran is counted in and out of events too. */
typedef struct dr_owner {
  double last_a, last_b;
  double in_a, in_b, out_a, out_b, in_s, out_s;
} dr_owner;

struct work_dr {
  dr_owner *o;
  size_t n;
};

int work_dr_enable(work *w, sim_error *err) {
  size_t n = work__nowners(w);
  w->dr = sim_calloc(w->alloc, 1, sizeof *w->dr);
  if (w->dr != NULL)
    w->dr->o = sim_calloc(w->alloc, n + 1, sizeof *w->dr->o);
  if (w->dr == NULL || w->dr->o == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  w->dr->n = n;
  return SIM_OK;
}

void work__dr_free(work *w) {
  if (w->dr == NULL)
    return;
  sim_free(w->alloc, w->dr->o);
  sim_free(w->alloc, w->dr);
  w->dr = NULL;
}

/* What owner k counts now, and whether it is running (jobs). */
static bool counters(const work *w, size_t k, double *a, double *b) {
  if (!work__is_job(w, (uint32_t)k)) {
    inf_totals t = inf_totals_of(w->svc[k]);
    *a = (double)inf_totals_ended(&t);
    *b = (double)t.slo_met;
    return true;
  }
  size_t j = work__job_of(w, (uint32_t)k);
  const train_stats *st = train_stats_of(w->train, j);
  *a = st->iterations_done;
  *b = 0;
  return !isnan(st->start_s) && isnan(st->end_s);
}

void work_dr_step(work *w, bool dr, double dt) {
  if (w->dr == NULL)
    return;
  for (size_t k = 0; k < w->dr->n; k++) {
    dr_owner *o = &w->dr->o[k];
    double a, b;
    bool running = counters(w, k, &a, &b);
    double da = a - o->last_a, db = b - o->last_b;
    o->last_a = a, o->last_b = b;
    *(dr ? &o->in_a : &o->out_a) += da;
    *(dr ? &o->in_b : &o->out_b) += db;
    if (running)
      *(dr ? &o->in_s : &o->out_s) += dt;
  }
}

static double ratio(double a, double b) { return b > 0 ? a / b : NAN; }

/* The table's cells: per owner k, column c at v[c n + k]; names and
 * kinds (kind = name + n) borrowed from the work. */
static void fill_rows(const work *w, double *v, const char **name) {
  size_t n = w->dr->n;
  const char **kind = name + n;
  for (size_t k = 0; k < n; k++) {
    const dr_owner *o = &w->dr->o[k];
    bool job = work__is_job(w, (uint32_t)k);
    name[k] = job ? w->jobs[work__job_of(w, (uint32_t)k)].name
                  : w->cfg->services[k].name;
    kind[k] = job ? "job" : "service";
    v[k] = job ? NAN : o->in_a;
    v[n + k] = job ? NAN : ratio(o->in_b, o->in_a);
    v[2 * n + k] = job ? NAN : ratio(o->out_b, o->out_a);
    v[3 * n + k] = job ? ratio(o->in_a, o->in_s) : NAN;
    v[4 * n + k] = job ? ratio(o->out_a, o->out_s) : NAN;
    v[5 * n + k] = 1 - v[3 * n + k] / v[4 * n + k];
  }
}

int work_dr_write(const work *w, tel_sink *sink, sim_error *err) {
  if (w->dr == NULL || sink == NULL)
    return SIM_OK;
  size_t n = w->dr->n;
  double *v = sim_calloc(w->alloc, 6 * n + 1, sizeof *v);
  const char **name = sim_calloc(w->alloc, 2 * n + 1, sizeof *name);
  if (v == NULL || name == NULL) {
    sim_free(w->alloc, v), sim_free(w->alloc, name);
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  fill_rows(w, v, name);
  const char **kind = name + n;
  const tel_table_column cols[] = {
      {"name", "", "the service or job", NULL, name},
      {"kind", "", "service or job", NULL, kind},
      {"requests_in_events", "1", "requests ended during DR events", v, NULL},
      {"slo_in_events", "1", "their SLO attainment (unserved: missed)",
       v + n, NULL},
      {"slo_outside", "1", "SLO attainment of requests ended outside events",
       v + 2 * n, NULL},
      {"iterations_per_s_in_events", "1/s",
       "a job's progress while running during events", v + 3 * n, NULL},
      {"iterations_per_s_outside", "1/s",
       "its progress while running outside events", v + 4 * n, NULL},
      {"slowdown", "1", "1 - progress in events over progress outside",
       v + 5 * n, NULL},
  };
  const tel_table t = {"demand_response", cols, sizeof cols / sizeof cols[0],
                       n, "owner"};
  int rc = tel_put_table(sink, &t);
  sim_free(w->alloc, v), sim_free(w->alloc, name);
  return rc == SIM_OK ? SIM_OK : sim_error_set(err, rc, "%s", tel_errmsg(sink));
}
