/* aifsim.c - the simulator as a library (include/aifsim.h): a run held
 * open between calls, stepped by the engine's own run loop, so that
 * stepping a period at a time runs the same events in the same order as
 * `aifsim run` does in one go (sim_engine_run continues exactly where it
 * stopped), and finishing writes the same file through the same writer
 * and root attributes (runfile.h). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <aifsim.h>

#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "factory.h"
#include "record.h"
#include "runfile.h"
#include "tel.h"
#include "aifsim_internal.h"

/* Where a handle is: open and stepping, finished, or failed (only reads
 * and close are left). */
typedef enum phase { OPEN, FINISHED, FAILED } phase;

struct aifsim {
  factory_scenario sc;
  bool loaded; /* sc holds a scenario to release */
  tel_sink *sink;
  sim_engine *engine;
  factory *factory;
  phase phase;
  bool bad_input; /* the last failure is the input's (aifsim_bad_input) */
  factory_summary sum; /* the finished run's */
  sim_error err;
  aifsim_policy_fn policy; /* a client's policy, and its context */
  void *policy_ctx;
  aifsim_unit *units; /* what it is handed, grown as needed */
  size_t units_cap;
  /* A cap series (aifsim_set_cap_series): its steps, and the next one
   * not yet handed to the factory. */
  double *series_t, *series_cap;
  size_t series_n, series_next;
};

/* Records a failure on a and returns its code. */
#define fail aifsim__fail
int aifsim__fail(aifsim *a, int code, const char *fmt, ...) {
  va_list ap;
  a->bad_input = false;
  va_start(ap, fmt);
  sim_error_vset(&a->err, code, fmt, ap);
  va_end(ap);
  return code;
}

/* The sink: the HDF5 writer at out (its lock taken: another writer is
 * SIM_EBUSY), or memory when there is none. */
static int open_sink(aifsim *a, const char *out, const aifsim_options *o) {
  if (out == NULL) {
    a->sink = tel_memory_create();
    return a->sink != NULL ? SIM_OK : fail(a, SIM_ENOMEM, "out of memory");
  }
  char origin[64];
  sim_error e = {0};
  h5w_options opts = {
      .time_origin = runfile_time_origin(&a->sc.cfg, origin, sizeof origin),
      .keep_partial = o->keep_partial != 0};
  a->sink = h5w_create(out, &opts, &e);
  if (a->sink != NULL)
    return SIM_OK;
  return fail(a, e.code == SIM_EBUSY || e.code == SIM_ENOMEM ? e.code : SIM_EIO,
              "cannot write the output: %s", e.msg);
}

/* The factory at t = 0: a failure of the writer's (a full disk, no
 * memory) is the run's, not the scenario's. */
static int make_factory(aifsim *a) {
  sim_error e = {0};
  a->factory = factory_create(&a->sc, a->engine, a->sink, &e);
  if (a->factory != NULL)
    return SIM_OK;
  if (tel_errmsg(a->sink)[0] != '\0')
    return fail(a, e.code == SIM_ENOMEM ? SIM_ENOMEM : SIM_EIO,
                "writing the output: %s", tel_errmsg(a->sink));
  a->err = e;
  a->bad_input = e.code == SIM_EINPUT || e.code == SIM_EIO;
  return e.code;
}

/* The services' mean requests a control period (a trace's, which its
 * file decides, count as none). */
static double requests_a_period(const factory_config *c) {
  double n = 0;
  for (size_t k = 0; k < c->nservices; k++) {
    double rate = arr_mean_rate(&c->services[k].arrivals);
    n += isfinite(rate) ? rate * c->control_period_s : 0;
  }
  return n;
}

/* Below this many requests a control period, the default is one thread:
 * the threads meet at every event of the factory's engine (a tick at
 * least), a few microseconds on an idle machine and up to a scheduler's
 * slice on a busy one, and a few hundred requests (about 0.2 us of work
 * each) do not pay for that. */
#define THREADS_MIN_REQUESTS 500.0

/* The threads the services' request events run on (aifsim_options'
 * threads): as asked, or the CPUs this process may use, at most one a
 * service, and one for services too light to share. */
static unsigned run_threads(const aifsim *a, const aifsim_options *o) {
  if (o->threads > 0)
    return o->threads;
  if (requests_a_period(&a->sc.cfg) < THREADS_MIN_REQUESTS)
    return 1;
  cpu_set_t cpus;
  unsigned n = 1;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 0)
    n = (unsigned)CPU_COUNT(&cpus);
  size_t services = a->sc.cfg.nservices;
  return services == 0 ? 1 : n < services ? n : (unsigned)services;
}

/* The writer, the root attributes, the engine and the factory at t = 0,
 * in the order `aifsim run` makes them. */
static int build(aifsim *a, const char *const *sets, size_t nsets,
                 const char *out, const aifsim_options *o) {
  int rc = open_sink(a, out, o);
  if (rc != SIM_OK)
    return rc;
  if (runfile_write_meta(a->sink, &a->sc, sets, nsets, o->sweep_point) !=
      SIM_OK)
    return fail(a, SIM_EIO, "writing the output: %s", tel_errmsg(a->sink));
  a->engine = sim_engine_create(NULL);
  if (a->engine == NULL)
    return fail(a, SIM_ENOMEM, "starting the engine: out of memory");
  sim_engine_watch(a->engine, o->stop);
  a->sc.threads = run_threads(a, o);
  return make_factory(a);
}

static int run_until(aifsim *a, sim_time until);

int aifsim_open(const char *path, const char *const *sets, size_t nsets,
                const char *out, aifsim **ap) {
  return aifsim_open_opts(path, sets, nsets, out, NULL, ap);
}

int aifsim_open_opts(const char *path, const char *const *sets, size_t nsets,
                     const char *out, const aifsim_options *opts,
                     aifsim **ap) {
  const aifsim_options none = {.sweep_point = -1};
  if (opts == NULL)
    opts = &none;
  if (ap == NULL)
    return SIM_EINVAL;
  aifsim *a = *ap = calloc(1, sizeof *a);
  if (a == NULL)
    return SIM_ENOMEM;
  a->phase = FAILED;
  if (path == NULL || (sets == NULL && nsets > 0))
    return fail(a, SIM_EINVAL, "aifsim_open: no scenario path, or no sets");
  int rc = factory_scenario_load(path, sets, nsets, &a->sc, &a->err);
  a->bad_input = rc == SIM_EINPUT || rc == SIM_EIO;
  if (rc != SIM_OK)
    return rc;
  a->loaded = true;
  rc = build(a, sets, nsets, out, opts);
  if (rc != SIM_OK)
    return rc;
  a->phase = OPEN;
  return run_until(a, 0); /* the first tick: the first period's power */
}

/* A call that steps or acts: only on an open handle. */
#define check_open aifsim__check_open
int aifsim__check_open(aifsim *a, const char *call) {
  if (a == NULL)
    return SIM_EINVAL;
  if (a->phase == OPEN)
    return SIM_OK;
  return fail(a, SIM_EINVAL, "%s: the run is %s", call,
              a->phase == FINISHED ? "finished" : "failed (see its message)");
}

static sim_time end_of(const aifsim *a) { return factory_duration(&a->sc.cfg); }

/* The tick before the one series step i is in force from: the first
 * tick at or after its time; the run stops there to set the cap, which
 * the next tick takes (never before now: a step due now goes at once). */
static sim_time series_stop(const aifsim *a, size_t i) {
  sim_time period = factory_tick_period(&a->sc.cfg);
  sim_time t = (sim_time)llround(a->series_t[i] * 1e9);
  sim_time tick = (t + period - 1) / period * period;
  sim_time stop = tick - period, now = sim_engine_now(a->engine);
  return stop > now ? stop : now;
}

/* Hands the factory the series' steps due by now. */
static void series_apply(aifsim *a) {
  while (a->series_next < a->series_n &&
         series_stop(a, a->series_next) <= sim_engine_now(a->engine))
    factory_set_cap(a->factory, a->series_cap[a->series_next++]);
}

/* Runs the engine to until (at most the end), stopping at each tick
 * before a cap series' step to set it (stops at ticks, as stepping by
 * periods does, so the events are the same); a failure fails the
 * handle. */
static int run_until(aifsim *a, sim_time until) {
  int rc = SIM_OK;
  do {
    series_apply(a);
    sim_time stop = until;
    if (a->series_next < a->series_n &&
        series_stop(a, a->series_next) < until)
      stop = series_stop(a, a->series_next);
    rc = sim_engine_run(a->engine, stop);
  } while (rc == SIM_OK && sim_engine_now(a->engine) < until);
  if (rc == SIM_OK) {
    series_apply(a);
    return SIM_OK;
  }
  a->phase = FAILED;
  return fail(a, rc, "the run failed: %s", sim_engine_errmsg(a->engine));
}

/* The tick n periods after the last one at or before now (ticks fall on
 * whole periods from t = 0), at most the end. */
static sim_time tick_after(const aifsim *a, unsigned long n) {
  sim_time period = factory_tick_period(&a->sc.cfg), end = end_of(a);
  sim_time last = sim_engine_now(a->engine) / period;
  if ((sim_time)n > (end / period - last) + 1)
    return end;
  sim_time t = (last + (sim_time)n) * period;
  return t < end ? t : end;
}

int aifsim_step(aifsim *a, unsigned long n) {
  int rc = check_open(a, "aifsim_step");
  if (rc != SIM_OK)
    return rc;
  if (n == 0)
    return fail(a, SIM_EINVAL, "aifsim_step: n must be at least 1");
  if (sim_engine_now(a->engine) >= end_of(a))
    return fail(a, SIM_ERANGE, "aifsim_step: the run is at its end");
  return run_until(a, tick_after(a, n));
}

int aifsim_run_to(aifsim *a, double t_s) {
  int rc = check_open(a, "aifsim_run_to");
  if (rc != SIM_OK)
    return rc;
  double now = sim_time_to_s(sim_engine_now(a->engine));
  double end = sim_time_to_s(end_of(a));
  if (!(t_s >= now && t_s <= end))
    return fail(a, SIM_ERANGE,
                "aifsim_run_to: %g s is outside [now %g s, end %g s]", t_s, now,
                end);
  return run_until(a, (sim_time)llround(t_s * 1e9));
}

int aifsim_step_events(aifsim *a, unsigned long n) {
  int rc = check_open(a, "aifsim_step_events");
  if (rc != SIM_OK)
    return rc;
  if (n == 0)
    return fail(a, SIM_EINVAL, "aifsim_step_events: n must be at least 1");
  if (sim_engine_now(a->engine) >= end_of(a))
    return fail(a, SIM_ERANGE, "aifsim_step_events: the run is at its end");
  bool done;
  series_apply(a);
  sim_time until = end_of(a);
  if (a->series_next < a->series_n && series_stop(a, a->series_next) < until)
    until = series_stop(a, a->series_next);
  rc = sim_engine_run_some(a->engine, until, n, &done);
  if (rc == SIM_OK) {
    series_apply(a);
    return SIM_OK;
  }
  a->phase = FAILED;
  return fail(a, rc, "the run failed: %s", sim_engine_errmsg(a->engine));
}

unsigned long long aifsim_events(const aifsim *a) {
  return a != NULL && a->engine != NULL ? sim_engine_events_run(a->engine) : 0;
}

double aifsim_time(const aifsim *a) {
  return a != NULL && a->engine != NULL
             ? sim_time_to_s(sim_engine_now(a->engine))
             : NAN;
}

double aifsim_period(const aifsim *a) {
  return a != NULL && a->loaded ? sim_time_to_s(factory_tick_period(&a->sc.cfg))
                                : NAN;
}

double aifsim_duration(const aifsim *a) {
  return a != NULL && a->loaded ? sim_time_to_s(end_of(a)) : NAN;
}

int aifsim_at_end(const aifsim *a) {
  return a != NULL && a->engine != NULL &&
         sim_engine_now(a->engine) >= end_of(a);
}

/* A read: on a handle with a factory (open, finished, or failed while
 * running). */
static int check_read(const aifsim *a, const void *out) {
  return a != NULL && a->factory != NULL && out != NULL ? SIM_OK : SIM_EINVAL;
}

int aifsim_power_now(const aifsim *a, aifsim_power *p) {
  if (check_read(a, p) != SIM_OK)
    return SIM_EINVAL;
  factory_power_now now;
  factory_power_of(a->factory, &now);
  *p = (aifsim_power){.facility_w = now.facility_w,
                      .it_w = now.it_w,
                      .gpu_w = now.gpu_w,
                      .cooling_w = now.cooling_w,
                      .cap_w = now.cap_w,
                      .loss_w = now.loss_w,
                      .smoothing_w = now.smoothing_w,
                      .battery_w = now.battery_w};
  return SIM_OK;
}

int aifsim_grid_now(const aifsim *a, aifsim_grid *g) {
  if (check_read(a, g) != SIM_OK)
    return SIM_EINVAL;
  factory_grid_now now;
  factory_grid_of(a->factory, &now);
  *g = (aifsim_grid){.price_per_mwh = now.price_per_mwh,
                     .carbon_g_per_kwh = now.carbon_g_per_kwh,
                     .outdoor_c = now.outdoor_c,
                     .dr_cap_w = now.dr_cap_w};
  return SIM_OK;
}

size_t aifsim_ngroups(const aifsim *a) {
  return a != NULL && a->loaded ? a->sc.cfg.nracks : 0;
}

const char *aifsim_group_name(const aifsim *a, size_t g) {
  return g < aifsim_ngroups(a) ? a->sc.cfg.racks[g].name : NULL;
}

int aifsim_group_power(const aifsim *a, double *w, size_t n) {
  if (check_read(a, w) != SIM_OK || n != a->sc.cfg.nracks)
    return SIM_EINVAL;
  factory_group_power(a->factory, w);
  return SIM_OK;
}

int aifsim_set_cap(aifsim *a, double cap_w) {
  int rc = check_open(a, "aifsim_set_cap");
  if (rc != SIM_OK)
    return rc;
  double contracted = a->sc.cfg.power.cap_w;
  if (!isnan(cap_w) && !(cap_w > 0 && cap_w <= contracted))
    return fail(a, SIM_ERANGE,
                "aifsim_set_cap: %g W is outside (0, %g W], the contracted "
                "power.cap",
                cap_w, contracted);
  a->series_n = a->series_next = 0; /* a cap replaces a series' steps */
  factory_set_cap(a->factory, cap_w);
  return SIM_OK;
}

int aifsim_set_cap_series(aifsim *a, const double *t_s, const double *cap_w,
                          size_t n) {
  int rc = check_open(a, "aifsim_set_cap_series");
  if (rc != SIM_OK)
    return rc;
  if (n > 0 && (t_s == NULL || cap_w == NULL))
    return fail(a, SIM_EINVAL, "aifsim_set_cap_series: no times or caps");
  double now = sim_time_to_s(sim_engine_now(a->engine));
  double contracted = a->sc.cfg.power.cap_w;
  for (size_t i = 0; i < n; i++) {
    if (!(t_s[i] >= now && (i == 0 || t_s[i] > t_s[i - 1])))
      return fail(a, SIM_ERANGE,
                  "aifsim_set_cap_series: step %zu's time %g s is before "
                  "now (%g s) or not after the step before",
                  i, t_s[i], now);
    if (!isnan(cap_w[i]) && !(cap_w[i] > 0 && cap_w[i] <= contracted))
      return fail(a, SIM_ERANGE,
                  "aifsim_set_cap_series: step %zu's cap %g W is outside "
                  "(0, %g W], the contracted power.cap",
                  i, cap_w[i], contracted);
  }
  double *t = realloc(a->series_t, (n + 1) * sizeof *t);
  if (t != NULL)
    a->series_t = t;
  double *c = realloc(a->series_cap, (n + 1) * sizeof *c);
  if (c != NULL)
    a->series_cap = c;
  if (t == NULL || c == NULL)
    return fail(a, SIM_ENOMEM, "aifsim_set_cap_series: out of memory");
  if (n > 0) { /* t_s and cap_w may be NULL for none */
    memcpy(a->series_t, t_s, n * sizeof *t);
    memcpy(a->series_cap, cap_w, n * sizeof *c);
  }
  a->series_n = n, a->series_next = 0;
  series_apply(a);
  return SIM_OK;
}

size_t aifsim_npower_groups(const aifsim *a) {
  return a != NULL && a->factory != NULL ? factory_npower_groups(a->factory)
                                         : 0;
}

const char *aifsim_power_group_name(const aifsim *a, size_t p) {
  return p < aifsim_npower_groups(a) ? factory_power_group_name(a->factory, p)
                                     : NULL;
}

int aifsim_power_group_now(const aifsim *a, size_t p, aifsim_power_group *g) {
  if (check_read(a, g) != SIM_OK || p >= aifsim_npower_groups(a))
    return SIM_EINVAL;
  factory_power_group now;
  factory_power_group_of(a->factory, p, &now);
  *g = (aifsim_power_group){.cap_w = now.cap_w,
                            .own_w = now.own_w,
                            .budget_w = now.budget_w,
                            .want_w = now.want_w,
                            .gpu_w = now.gpu_w};
  return SIM_OK;
}

/* A call that acts on power group p of an open handle. */
static int check_group(aifsim *a, size_t p, const char *call) {
  int rc = check_open(a, call);
  if (rc == SIM_OK && p >= aifsim_npower_groups(a))
    return fail(a, SIM_EINVAL, "%s: no power group %zu (the scenario has %zu)",
                call, p, aifsim_npower_groups(a));
  return rc;
}

int aifsim_set_group_cap(aifsim *a, size_t p, double cap_w) {
  int rc = check_group(a, p, "aifsim_set_group_cap");
  if (rc != SIM_OK)
    return rc;
  if (!isnan(cap_w) && !(cap_w > 0))
    return fail(a, SIM_ERANGE, "aifsim_set_group_cap: %g W is not above 0",
                cap_w);
  factory_set_group_cap(a->factory, p, cap_w);
  return SIM_OK;
}

int aifsim_set_group_lending(aifsim *a, size_t p, int borrow, int lend) {
  int rc = check_group(a, p, "aifsim_set_group_lending");
  if (rc == SIM_OK)
    factory_set_group_lending(a->factory, p, borrow != 0, lend != 0);
  return rc;
}

int aifsim_set_load_target(aifsim *a, double target_w) {
  int rc = check_open(a, "aifsim_set_load_target");
  if (rc != SIM_OK)
    return rc;
  if (!isnan(target_w) && !(target_w > 0))
    return fail(a, SIM_ERANGE, "aifsim_set_load_target: %g W is not above 0",
                target_w);
  factory_set_load_target(a->factory, target_w);
  return SIM_OK;
}

double aifsim_load_target(const aifsim *a) {
  return a != NULL && a->factory != NULL ? factory_load_target(a->factory)
                                         : NAN;
}

/* The client's policy on the control's units, through the public
 * struct (a unit's fields may grow; the header's must not move). */
static int call_policy(void *ctx, const power_unit *u, size_t n,
                       double budget_w, double *cap) {
  aifsim *a = ctx;
  if (n > a->units_cap) {
    aifsim_unit *grown = realloc(a->units, n * sizeof *grown);
    if (grown == NULL)
      return SIM_ENOMEM;
    a->units = grown, a->units_cap = n;
  }
  for (size_t k = 0; k < n; k++)
    a->units[k] = (aifsim_unit){
        (double)u[k].n, u[k].lo,     u[k].hi,       u[k].demand,
        (double)u[k].cls, (double)u[k].priority, u[k].weight, u[k].c,
        u[k].idle,      u[k].span,   u[k].activity, u[k].gamma,
        u[k].phi_min};
  return a->policy(a->policy_ctx, a->units, n, budget_w, cap);
}

int aifsim_set_policy(aifsim *a, aifsim_policy_fn fn, void *ctx) {
  int rc = check_open(a, "aifsim_set_policy");
  if (rc != SIM_OK)
    return rc;
  a->policy = fn;
  a->policy_ctx = ctx;
  factory_set_split(a->factory, fn != NULL ? call_policy : NULL, a);
  return SIM_OK;
}

/* The books closed and the file committed: what ends a run. */
static int close_books(aifsim *a) {
  sim_error e = {0};
  int rc = factory_finish(a->factory, &a->sum, &e);
  if (rc != SIM_OK)
    return fail(a, rc, "closing the books: %s", e.msg);
  if (tel_commit(a->sink) != SIM_OK)
    return fail(a, SIM_EIO, "writing the output: %s", tel_errmsg(a->sink));
  return SIM_OK;
}

int aifsim_finish(aifsim *a) {
  int rc = check_open(a, "aifsim_finish");
  if (rc == SIM_OK)
    rc = run_until(a, end_of(a));
  if (rc == SIM_OK)
    rc = close_books(a);
  if (a != NULL)
    a->phase = rc == SIM_OK ? FINISHED : FAILED;
  return rc;
}

int aifsim_summary(const aifsim *a, const char *key, double *v) {
  if (a == NULL || key == NULL || v == NULL || a->phase != FINISHED)
    return SIM_EINVAL;
  size_t n;
  const tel_metric *m = tel_metrics(a->sink, &n);
  for (size_t i = 0; i < n; i++)
    if (m[i].units != NULL && strcmp(m[i].key, key) == 0) {
      *v = tel_metric_value(a->sink, i);
      return SIM_OK;
    }
  return SIM_ENOTFOUND;
}

int aifsim_bad_input(const aifsim *a) { return a != NULL && a->bad_input; }

int aifsim_errcode(const aifsim *a) {
  return a != NULL ? a->err.code : SIM_ENOMEM;
}

const char *aifsim_errmsg(const aifsim *a) {
  return a != NULL ? a->err.msg : "out of memory";
}

/* The sink goes first: it borrows the factory's telemetry declarations
 * (tel.h); destroyed before a commit, it removes its partial file. */
void aifsim_close(aifsim *a) {
  if (a == NULL)
    return;
  tel_destroy(a->sink);
  factory_destroy(a->factory);
  sim_engine_destroy(a->engine);
  if (a->loaded)
    factory_scenario_release(&a->sc);
  free(a->units);
  free(a->series_t);
  free(a->series_cap);
  free(a);
}

const char *aifsim_version(void) { return AIFSIM_VERSION; }

const factory_scenario *aifsim__scenario(const aifsim *a) {
  return a != NULL && a->loaded ? &a->sc : NULL;
}

const factory_summary *aifsim__summary(const aifsim *a) {
  return a != NULL && a->phase == FINISHED ? &a->sum : NULL;
}

const tel_sink *aifsim__sink(const aifsim *a) {
  return a != NULL ? a->sink : NULL;
}

factory *aifsim__factory(aifsim *a) { return a != NULL ? a->factory : NULL; }

/* The public codes are the simulator's own. */
#define SAME(x) ((int)AIFSIM_##x == (int)SIM_##x)
_Static_assert(SAME(ENOMEM) && SAME(EINVAL) && SAME(EINPUT) && SAME(EIO) &&
                   SAME(ERANGE) && SAME(ENOTFOUND) && SAME(ESTATE) &&
                   SAME(ECANCELED) && SAME(EBUSY),
               "aifsim.h's codes are err.h's");
