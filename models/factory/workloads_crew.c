/* workloads_crew.c - the services' request events on engines of their own,
 * run by a crew (crew.h) on up to cfg->threads threads.
 *
 * At the request level each service is a member engine: its arrival
 * source and its replicas' events live there and touch only the service's
 * own state (its replicas, request pool, route tree, statistics and
 * generator). The factory's engine leads: before it runs an event at a new
 * time t the crew brings every member up to t (their events before t),
 * and when a run reaches its end, through it. Everything that reads or
 * changes several services or the fleet (the tick, the jobs' arrivals and
 * releases, faults, a client's reads) is the leader's and runs while no
 * member does, at the members' clocks set to its time. Threads only decide
 * which core runs which member between two leader events, so every output
 * is the same for any number of them. */
#include "workloads.h"

#include <math.h>

#include "crew.h"
#include "workloads_internal.h"

static bool request_level(const work *w) {
  return w->cfg->granularity != INF_FLUID && w->cfg->nservices > 0;
}

int work__service_engine(work *w, size_t s, sim_engine **out) {
  if (!request_level(w)) {
    *out = w->engine;
    return SIM_OK;
  }
  if (w->svc_engine == NULL &&
      (w->svc_engine = sim_calloc(w->alloc, w->cfg->nservices,
                                  sizeof *w->svc_engine)) == NULL)
    return SIM_ENOMEM;
  /* On the factory's allocator, as everything of the workloads. */
  w->svc_engine[s] = *out = sim_engine_create(w->alloc);
  return *out != NULL ? SIM_OK : SIM_ENOMEM;
}

/* The threads the crew may use: at most one a service, and one unless the
 * allocator is the C library's (a counting or failing one, as the
 * estimate's and the tests', is not made for threads). */
static unsigned crew_threads(const work *w) {
  unsigned n = w->cfg->threads > 0 ? w->cfg->threads : 1;
  if (n > w->cfg->nservices)
    n = (unsigned)w->cfg->nservices;
  if (w->alloc->realloc != sim_allocator_default()->realloc)
    n = 1;
  return n;
}

/* A service's share of the crew's work: its mean arrival rate (about one
 * arrival and one replica event a request); a trace's, which the file
 * decides, counts as its replicas' share. */
static double service_weight(const inf_config *c) {
  double rate = arr_mean_rate(&c->arrivals);
  if (isfinite(rate) && rate > 0)
    return rate;
  return c->replicas > 0 ? (double)c->replicas : 1;
}

int work__crew_start(work *w) {
  if (!request_level(w))
    return SIM_OK;
  size_t ns = w->cfg->nservices;
  w->crew = sim_crew_create(w->alloc, crew_threads(w));
  w->svc_rep0 = sim_calloc(w->alloc, ns + 1, sizeof *w->svc_rep0);
  if (w->crew == NULL || w->svc_rep0 == NULL)
    return SIM_ENOMEM;
  for (size_t s = 0; s < ns; s++) /* the services' replicas, packed */
    w->svc_rep0[s + 1] =
        w->svc_rep0[s] + (uint32_t)w->cfg->services[s].replicas;
  w->rep_taken = sim_calloc(w->alloc, w->svc_rep0[ns] + 1, sizeof *w->rep_taken);
  w->svc_run0 = sim_calloc(w->alloc, w->svc_rep0[ns] + ns, sizeof *w->svc_run0);
  w->svc_seq = sim_calloc(w->alloc, ns, sizeof *w->svc_seq);
  w->rep_comp = sim_calloc(w->alloc, w->svc_rep0[ns] + 3, sizeof *w->rep_comp);
  w->svc_vals = sim_calloc(w->alloc, ns * INF_NCOLS, sizeof *w->svc_vals);
  if (w->rep_taken == NULL || w->svc_run0 == NULL || w->svc_seq == NULL ||
      w->rep_comp == NULL || w->svc_vals == NULL)
    return SIM_ENOMEM;
  for (size_t s = 0; s < w->cfg->nservices; s++) {
    int rc = sim_crew_add(w->crew, w->svc_engine[s],
                          service_weight(&w->cfg->services[s]));
    if (rc != SIM_OK)
      return rc;
  }
  /* The services' events at the start (a trace's first request at t = 0)
   * run now, before the factory's first tick, as they did on one engine,
   * where the services scheduled them before the tick was registered.
   * From here on a service's event at the very time of a leader's runs
   * after it (crew.h). */
  for (size_t s = 0; s < w->cfg->nservices; s++) {
    int rc = sim_engine_run(w->svc_engine[s], sim_engine_now(w->engine));
    if (rc != SIM_OK)
      return rc;
  }
  return sim_crew_lead(w->crew, w->engine);
}

void work__crew_stop(work *w) {
  if (w->crew != NULL) /* the factory's engine no longer follows it */
    sim_engine_follow(w->engine, NULL, NULL);
  sim_crew_destroy(w->crew);
  w->crew = NULL;
}

void work__crew_free_engines(work *w) {
  for (size_t s = 0; w->svc_engine != NULL && s < w->cfg->nservices; s++)
    sim_engine_destroy(w->svc_engine[s]);
  sim_free(w->alloc, w->svc_engine);
  sim_free(w->alloc, w->svc_rep0);
  sim_free(w->alloc, w->rep_taken);
  sim_free(w->alloc, w->svc_run0);
  sim_free(w->alloc, w->svc_seq);
  sim_free(w->alloc, w->rep_comp);
  sim_free(w->alloc, w->svc_vals);
  w->svc_engine = NULL;
  w->svc_rep0 = NULL;
  w->rep_taken = NULL;
  w->svc_run0 = NULL;
  w->svc_seq = NULL;
  w->rep_comp = NULL;
  w->svc_vals = NULL;
  w->comp_taken = false;
}

/* ------------------------------------------------------------------ */
/* The tick's work service by service, on the members' threads          */
/* ------------------------------------------------------------------ */

/* What one sim_crew_each at the tick hands each service: the packed
 * replicas' clocks, or the room for their loads (each service's from its
 * first packed replica, svc_rep0). A service's call touches only its own
 * state and engine. */
typedef struct tick_job {
  work *w;
  const double *phi;
} tick_job;

static int set_clocks_of(void *ctx, size_t s) {
  const tick_job *j = ctx;
  uint32_t k0 = j->w->svc_rep0[s], n = j->w->svc_rep0[s + 1] - k0;
  return inf_set_clocks(j->w->svc[s], 0, n, j->phi + k0);
}

static int take_loads_of(void *ctx, size_t s) {
  const tick_job *j = ctx;
  uint32_t k0 = j->w->svc_rep0[s], n = j->w->svc_rep0[s + 1] - k0;
  inf_take_loads(j->w->svc[s], 0, n, j->w->rep_taken + k0);
  /* the shares the take just made, for the power policy's units */
  inf_compute_shares(j->w->svc[s], 0, n, j->w->rep_comp + 3 + k0);
  return SIM_OK;
}

/* Whether the crew runs on threads (else the tick's loops do its work on
 * the leader's, with no call to wait for). */
static bool on_threads(const work *w) {
  return w->crew != NULL && sim_crew_threads(w->crew) > 1;
}

bool work_on_threads(const work *w) { return on_threads(w); }

/* Handed to control only where the crew is (work_on_threads); the crew
 * runs the items on the caller's thread when it has one. */
int work_for_each(void *ctx, size_t n, int (*fn)(void *fctx, size_t i),
                  void *fctx) {
  const work *w = ctx;
  return sim_crew_for(w->crew, n, fn, fctx);
}

bool work__crew_set_clocks(work *w, const double *phi) {
  if (!on_threads(w))
    return false;
  tick_job j = {w, phi};
  /* A failure is the service's (its rc), reported by its next event, as
   * the leader's loop leaves it. */
  (void)sim_crew_each(w->crew, set_clocks_of, &j);
  return true;
}

const gpu_load *work__crew_take_loads(work *w) {
  if (!on_threads(w))
    return NULL;
  tick_job j = {w, NULL};
  (void)sim_crew_each(w->crew, take_loads_of, &j);
  return w->rep_taken;
}

/* ------------------------------------------------------------------ */
/* The replicas' clocks service by service, on the members' threads     */
/* ------------------------------------------------------------------ */

/* The packed replicas as one list (held as given). */
static work_reps packed_reps(const work *w, bool held) {
  return (work_reps){w->nrep,        w->rep_run0,  w->rep_runs, w->rep_rack,
                     w->rep_type,    held,         w->reps_seq, w->racks_typed,
                     w->racks_type,  false};
}

void work__crew_pack(work *w) {
  w->svc_packed = false;
  if (w->svc_run0 == NULL || w->svc_rep0[w->cfg->nservices] != w->nrep)
    return;
  const work_reps all = packed_reps(w, false);
  for (size_t s = 0; s < w->cfg->nservices; s++) {
    uint32_t k0 = w->svc_rep0[s];
    w->svc_seq[s] = work__reps_part_made(&all, k0, w->svc_rep0[s + 1] - k0,
                                         w->svc_run0 + k0 + s);
  }
  w->svc_packed = true;
}

typedef struct clocks_job {
  work *w;
  bool held;
  bool kept; /* rep_phi and rep_key a sample's, at the runs now */
} clocks_job;

/* Service s's clocks from a last of its own (none yet), then to the
 * service: every clock is its type's, cap's and load's solve to the bit,
 * however the last and the stretches fall (workloads_phis.c), so the
 * one-thread walk's from the previous service's last gives the same. */
static uint32_t service_phis(const clocks_job *j, size_t s) {
  work *w = j->w;
  const work_reps all = packed_reps(w, j->held);
  uint32_t k0 = w->svc_rep0[s];
  work_reps r = work__reps_part(&all, k0, w->svc_rep0[s + 1] - k0,
                                w->svc_run0 + k0 + s, w->svc_seq[s]);
  rack_phi_last last = {.type = RACK_PHI_NONE};
  work__replica_phis(w->fleet, &r, w->rep_phi + k0, &last);
  return r.n;
}

/* Whether service s's clocks in rep_phi, a sample's, are its clocks now:
 * every replica's one run (reps_seq) keyed as at the sample. At a sample
 * tick the drive's clocks come right after the sample's (control_period
 * hands them over before any split: docs/performance-log.md, the
 * thirty-sixth session), so in bench-10k they always are. */
static bool service_kept(const clocks_job *j, size_t s) {
  const work *w = j->w;
  uint32_t k0 = w->svc_rep0[s], n = w->svc_rep0[s + 1] - k0;
  return j->kept &&
         rack_runs_key_same(w->fleet, w->rep_runs[0] + k0, n, w->rep_key + k0);
}

static int replica_clocks_of(void *ctx, size_t s) {
  const clocks_job *j = ctx;
  uint32_t k0 = j->w->svc_rep0[s], n = j->w->svc_rep0[s + 1] - k0;
  if (!service_kept(j, s))
    n = service_phis(j, s);
  return inf_set_clocks(j->w->svc[s], 0, n, j->w->rep_phi + k0);
}

/* A sample's: the clocks alone, the services left as they are, and each
 * replica's key for the drive (service_kept). */
static int sample_clocks_of(void *ctx, size_t s) {
  const clocks_job *j = ctx;
  uint32_t k0 = j->w->svc_rep0[s], n = service_phis(j, s);
  rack_runs_key(j->w->fleet, j->w->rep_runs[0] + k0, n, j->w->rep_key + k0);
  return SIM_OK;
}

bool work__crew_replica_clocks(work *w, bool held) {
  if (!on_threads(w) || !w->svc_packed ||
      !rack_fleet_phis_shareable(w->fleet))
    return false;
  clocks_job j = {w, held,
                  w->phi_kept && w->kept_made == w->fleet->runs_made &&
                      w->reps_seq};
  /* A failure is the service's, as work__crew_set_clocks leaves it. */
  (void)sim_crew_each(w->crew, replica_clocks_of, &j);
  return true;
}

/* One run a replica, in order (reps_seq): replica k's clock is run
 * rep_runs[0] + k's, but where the run's is not a number (the least of 1
 * and it: rack_fleet_phis_known's NaN rule). A sample's racks' sums
 * solved every replica's run again on the leader's thread, some 170 us a
 * sample at the request peak (docs/performance-log.md, the thirty-sixth
 * session). */
bool work__crew_sample_clocks(work *w, bool held) {
  if (!on_threads(w) || !w->svc_packed || !w->reps_seq || w->nrep == 0 ||
      !rack_fleet_phis_shareable(w->fleet))
    return false;
  clocks_job j = {w, held, false};
  (void)sim_crew_each(w->crew, sample_clocks_of, &j);
  rack_fleet_phis_known(w->fleet, w->rep_runs[0], w->nrep, w->rep_phi);
  w->phi_kept = true;
  w->kept_made = w->fleet->runs_made;
  return true;
}

typedef struct sample_job {
  work *w;
  double dt;
} sample_job;

/* A service's sample walks its replicas (their waits caught up and
 * expired) and its interval's quantiles: its own state alone, as its
 * handlers touch. */
static int sample_of(void *ctx, size_t s) {
  const sample_job *j = ctx;
  inf_sample(j->w->svc[s], j->dt, j->w->svc_vals + s * INF_NCOLS);
  return SIM_OK;
}

/* On the leader's thread the three services' samples took some 117 us a
 * sample at the request peak (docs/performance-log.md, the thirty-sixth
 * session). */
bool work__crew_samples(work *w, double dt) {
  if (!on_threads(w))
    return false;
  sample_job j = {w, dt};
  (void)sim_crew_each(w->crew, sample_of, &j);
  return true;
}

/* ------------------------------------------------------------------ */
/* The services' arrivals drawn ahead, on an idle worker                 */
/* ------------------------------------------------------------------ */

/* Draws between two looks at whether the worker is wanted: some 10 us. */
enum { AHEAD_CHUNK = 8 };

/* The posted job (sim_crew_side_fn): every service's arrivals drawn up
 * to w->ahead_until_s, as room allows. Stopped when the worker is wanted
 * and taken up again from the first service (those done draw nothing). A
 * service's stream is the same however much of it is drawn here
 * (arrivals.h), so the outputs do not depend on the threads' timing. */
static bool draw_ahead(void *ctx) {
  work *w = ctx;
  for (size_t s = 0; s < w->cfg->nservices; s++)
    while (inf_draw_ahead(w->svc[s], w->ahead_until_s, AHEAD_CHUNK) ==
           AHEAD_CHUNK)
      if (sim_crew_wanted(w->crew))
        return false;
  return true;
}

/* Room for two periods' arrivals a service (a trace's, a fluid one's or
 * one without room draws on demand); whether any has room. The drawing
 * is ~6-7% of the request day's samples, the worker idle in the tick's
 * serial part ~21% (docs/performance-log.md). */
static bool ahead_make(work *w, double dt) {
  bool any = false;
  for (size_t s = 0; s < w->cfg->nservices; s++)
    any |= inf_ahead_reserve(w->svc[s], 2 * dt) == SIM_OK;
  return any;
}

void work__crew_draw_ahead(work *w, double dt) {
  if (!on_threads(w) || !(dt > 0) || !isfinite(dt))
    return;
  if (!w->ahead_made) {
    w->ahead_made = true;
    w->ahead_on = ahead_make(w, dt);
  }
  if (!w->ahead_on)
    return;
  w->ahead_until_s = sim_time_to_s(sim_engine_now(w->engine)) + 2 * dt;
  (void)sim_crew_post(w->crew, draw_ahead, w);
}
