/* workloads_tick.c - the workloads' share of every control tick (see
 * workloads.h): the clocks the slots ran at to the models, the models'
 * loads to the slots' GPUs (what the units' work is worth to the power
 * policy: workloads_units.c; the energy's attribution per owner:
 * workloads_owners.c). Run
 * by run of the fleet's units where they are fresh (rack.h); GPU by GPU
 * otherwise. The services' replicas go as one packed list (replica
 * clocks and loads below): they are the most slots by far. */
#include "workloads.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "lanes.h"
#include "workloads_internal.h"

uint32_t work__slot_runs(const rack_fleet *fl, const uint32_t *gpus, uint32_t n,
                         uint32_t *runs) {
  uint32_t m = 0;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t q = fl->gpu_run[gpus[k]];
    if (m == 0 || runs[m - 1] != q)
      runs[m++] = q;
  }
  return m;
}

/* With the fleet's runs fresh (rack.h), a run's GPUs share cap, load and
 * rack, so one clock: each run is solved once. The minimum of the same
 * values the per-GPU pass takes: the same bits. Inline for the replicas'
 * loop. */
static inline double runs_phi(const rack_fleet *fl, const uint32_t *runs,
                              uint32_t m, rack_phi_last *last) {
  double phi = 1;
  for (uint32_t k = 0; k < m; k++)
    phi = work__min_of(phi, rack_run_phi_near(fl, runs[k], last));
  return phi;
}

double work__runs_phi(const rack_fleet *fl, const uint32_t *runs, uint32_t m,
                      rack_phi_last *last) {
  return runs_phi(fl, runs, m, last);
}

/* The replicas' runs packed (w->rep_run0, rep_runs, and each run's rack
 * and GPU type in rep_rack, rep_type). Every service slot is active from the
 * build on (place_service) and none is freed, so replica k of the list is slot
 * k; false if one is not (then they go slot by slot). */
static bool pack_replica_runs(work *w) {
  const rack_fleet *fl = w->fleet;
  uint32_t at = 0;
  for (uint32_t k = 0; k < w->nrep; k++) {
    const slot *s = &w->slots[k];
    if (!s->active)
      return false;
    w->rep_run0[k] = at;
    at += work__slot_runs(fl, w->gpus + s->first, s->n, w->rep_runs + at);
  }
  w->rep_run0[w->nrep] = at;
  for (uint32_t q = 0; q < at; q++) {
    w->rep_rack[q] = fl->run_rack[w->rep_runs[q]];
    w->rep_type[q] = fl->run_type[w->rep_runs[q]];
  }
  w->reps_seq = work__runs_seq(w->rep_run0, w->rep_runs, w->nrep);
  w->racks_typed = work__racks_type(fl, &w->racks_type);
  work__crew_pack(w);
  return true;
}

/* Every active slot's runs (w->slot_runs; the replicas' packed), once a
 * making of the fleet's runs: not again each period, as the layout
 * changes far less often. Whether the runs are fresh (then the slots'
 * runs stand for them). */
static bool slot_runs_fresh(work *w) {
  const rack_fleet *fl = w->fleet;
  if (!rack_fleet_runs_fresh(fl))
    return false;
  if (w->runs_seen != fl->runs_made) {
    w->reps_packed = pack_replica_runs(w);
    for (size_t k = w->reps_packed ? w->nrep : 0; k < w->nslots; k++) {
      const slot *t = &w->slots[k];
      w->slot_nruns[k] = t->active
                             ? work__slot_runs(fl, w->gpus + t->first, t->n,
                                               w->slot_runs + t->first)
                             : 0;
    }
    w->runs_seen = fl->runs_made;
  }
  return true;
}

/* Slot k's clock, the slowest of its GPUs': it paces the slot. fresh:
 * slot_runs_fresh said the runs are; near: the clock the slot before took
 * (a job's stages mostly share cap and load, so mostly the same). GPU by
 * GPU otherwise: GPUs often share cap and activity, so a GPU like the one
 * before is not solved again. */
static double slot_phi(const work *w, size_t slot_k, bool fresh,
                       rack_phi_last *near) {
  const rack_fleet *fl = w->fleet;
  const slot *s = &w->slots[slot_k];
  if (fresh && rack_fleet_runs_fresh(fl)) /* no key changed meanwhile */
    return runs_phi(fl, w->slot_runs + s->first, w->slot_nruns[slot_k], near);
  double phi = 1, last_cap = NAN, last_phi = 1;
  gpu_load last = {NAN, NAN, NAN};
  for (uint32_t k = 0; k < s->n; k++) {
    uint32_t i = w->gpus[s->first + k];
    double cap = rack_gpu_cap_w(fl, i);
    if (cap != last_cap || !rack_load_is(fl, i, last)) {
      last_phi = rack_gpu_phi(fl, i);
      last_cap = cap;
      last = rack_gpu_load(fl, i);
    }
    phi = work__min_of(phi, last_phi);
  }
  return phi;
}

/* Slot k's load to its GPUs; fresh: slot_runs_fresh said the runs are.
 * With the runs fresh, once a run of the slot's (rack_set_run_load: its
 * first GPU, the others filled when a reader asks), where writing every
 * GPU cost 14.5 instructions a GPU a tick. */
static void slot_set_load(work *w, size_t slot_k, gpu_load l, bool fresh) {
  rack_fleet *fl = w->fleet;
  const slot *s = &w->slots[slot_k];
  if (fresh && rack_fleet_runs_fresh(fl)) { /* no key changed meanwhile */
    rack_set_runs_load(fl, w->slot_runs + s->first, w->slot_nruns[slot_k], l);
    return;
  }
  for (uint32_t k = 0; k < s->n; k++)
    rack_set_load(fl, w->gpus[s->first + k], l);
}


#ifndef NDEBUG
/* Whether every packed run holds its replica's load, its first run's
 * (what rep_loads_made promises): the debug builds check it before
 * trusting. */
static bool loads_held(const work *w) {
  for (uint32_t k = 0; k < w->nrep; k++) {
    gpu_load l = rack_run_load(w->fleet, w->rep_runs[w->rep_run0[k]]);
    for (uint32_t q = w->rep_run0[k]; q < w->rep_run0[k + 1]; q++)
      if (!work__load_of_run_is(w->fleet, w->rep_runs[q], &l))
        return false;
  }
  return true;
}
#endif

/* The replicas' clocks from their packed runs, all of them first (a loop
 * of loads and compares no call breaks), then service by service to the
 * models. The services do not touch the fleet, so the clocks are those
 * the slot-by-slot loop took between its calls, to the bit. The loads
 * held (once a replica) while the runs are those replica_loads wrote. */
static void replica_clocks(work *w, rack_phi_last *last) {
  double *phi = w->rep_phi;
  bool held = w->rep_loads_made == w->fleet->runs_made;
  assert(!held || loads_held(w));
  if (work__crew_replica_clocks(w, held)) /* each service on its thread */
    return;
  work_reps r = {w->nrep,     w->rep_run0,  w->rep_runs,
                 w->rep_rack, w->rep_type,  held,
                 w->reps_seq, w->racks_typed, w->racks_type, false};
  work__replica_phis(w->fleet, &r, phi, last);
  if (work__crew_set_clocks(w, phi)) /* each service on its own thread */
    return;
  for (size_t s = 0; s < w->cfg->nservices; s++) {
    uint32_t n = (uint32_t)w->cfg->services[s].replicas;
    inf_set_clocks(w->svc[s], 0, n, phi); /* in replica order, as the
                                             slots' loop gave them */
    phi += n;
  }
}

/* A service's take (inf_take_loads) as work__reps_take_to_runs asks it. */
static void take_service(void *svc, uint32_t first, uint32_t n,
                         gpu_load *out) {
  inf_take_loads(svc, first, n, out);
}

/* A service's loads as the crew took them (work__crew_take_loads): svc
 * is its first replica's in the packed list. */
static void copy_taken(void *svc, uint32_t first, uint32_t n, gpu_load *out) {
  memcpy(out, (const gpu_load *)svc + first, n * sizeof *out);
}

/* The replicas' loads from the services, service by service in replica
 * order, a chunk at a time (work__reps_take_to_runs). The services do
 * not read the fleet, so the loads and the runs' words are the
 * one-by-one loop's. */
static void replica_loads(work *w) {
  w->rep_loads_made = w->fleet->runs_made;
  rack_known_forget(w->fleet); /* all written again below */
  const work_reps r = {.n = w->nrep, .run0 = w->rep_run0,
                       .runs = w->rep_runs, .seq = w->reps_seq};
  uint32_t k0 = 0;
  const gpu_load *taken = work__crew_take_loads(w); /* NULL: take here */
  w->comp_taken = taken != NULL;
  for (size_t s = 0; s < w->cfg->nservices; s++) {
    uint32_t n = (uint32_t)w->cfg->services[s].replicas;
    if (taken != NULL)
      work__reps_take_to_runs(w->fleet, &r, k0, n, copy_taken,
                              (void *)(taken + k0), w->rep_load,
                              WORK_LOADS_CHUNK);
    else if (r.seq && inf_is_fluid(w->svc[s]))
      work__reps_fluid_to_runs(w->fleet, &r, k0, n, w->svc[s]);
    else
      work__reps_take_to_runs(w->fleet, &r, k0, n, take_service, w->svc[s],
                              w->rep_load, WORK_LOADS_CHUNK);
    k0 += n;
  }
}

/* ------------------------------------------------------------------ */
/* The tick                                                            */
/* ------------------------------------------------------------------ */

/* The clocks the slots run at now go to the models: a replica's to its
 * service, a job's stages together to the job. */
void work__drive_clocks(work *w) {
  bool fresh = slot_runs_fresh(w);
  rack_phi_last last = {.type = RACK_PHI_NONE};
  size_t k0 = 0;
  if (fresh && w->reps_packed) {
    replica_clocks(w, &last);
    k0 = w->nrep;
  }
  for (size_t k = k0; k < w->nrep; k++) {
    const slot *s = &w->slots[k];
    if (s->active)
      inf_set_clock(w->svc[s->owner], s->part, slot_phi(w, k, fresh, &last));
  }
  for (size_t j = 0; j < w->njobs; j++) {
    if (!w->slots[w->job_slot0[j]].active)
      continue;
    for (int64_t s = 0; s < w->jobs[j].pp; s++)
      w->phi[s] = slot_phi(w, w->job_slot0[j] + (size_t)s, fresh, &last);
    train_set_clocks(w->train, j, w->phi);
  }
  w->phi_kept = false; /* one drive a sample: rep_phi is the drive's now */
}

void work_sample_clocks(work *w) {
  if (!slot_runs_fresh(w) || !w->reps_packed)
    return;
  (void)work__crew_sample_clocks(w, w->rep_loads_made == w->fleet->runs_made);
}

void work_drive(work *w, double dt) {
  work__crew_draw_ahead(w, dt); /* on an idle worker, beside what follows */
  bool fresh = slot_runs_fresh(w);
  w->comp_taken = false; /* until replica_loads's take is the crew's */
  size_t k0 = 0;
  if (fresh && w->reps_packed) {
    replica_loads(w);
    k0 = w->nrep;
  }
  for (size_t k = k0; k < w->nslots; k++) {
    const slot *s = &w->slots[k];
    if (!s->active)
      continue;
    gpu_load l = work__is_job(w, s->owner)
                     ? gpu_load_level(train_activity(
                           w->train, work__job_of(w, s->owner), s->part, dt))
                     : inf_take_load(w->svc[s->owner], s->part);
    slot_set_load(w, k, l, fresh);
  }
}
