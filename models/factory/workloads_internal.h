/* workloads_internal.h - what the files of the workloads share: the
 * work's state and the functions one file calls in another. workloads.c
 * is the run time (slots, the scheduler's passes, the jobs' plans,
 * attribution), workloads_tick.c the tick's clocks, loads and the units'
 * worth, workloads_owners.c its owner sums,
 * workloads_build.c the construction, workloads_books.c the
 * books at the end. */
#ifndef MODELS_WORKLOADS_INTERNAL_H
#define MODELS_WORKLOADS_INTERNAL_H

#include "control.h"
#include "deferral.h"
#include "lanes.h"
#include "scheduler.h"
#include "workloads.h"

#define NO_SLOT CONTROL_NO_SLOT

/* A replica of a service or a pipeline stage of a job: GPUs that work in
 * step. Its GPUs' indices are gpus[first .. first + n). */
typedef struct slot {
  uint32_t owner; /* row of the /jobs table: services, then jobs */
  uint32_t part;  /* replica or stage */
  size_t first;
  uint32_t n;
  bool active;
  bool dark; /* a GPU of it is on a dark rack (a PDU fault) */
} slot;

struct work {
  const sim_allocator *alloc; /* the engine's: everything here lives on it */
  work_config config;         /* a copy: its arrays stay the caller's */
  const work_config *cfg;     /* &config */
  sim_engine *engine;
  rack_fleet *fleet;
  tel_sink *sink;
  work_settle_fn settle;
  void *settle_ctx;
  sched *sched;
  train_pool *train;
  inf_service **svc;  /* nservices */
  /* At the request level, each service's own engine (a member of the
   * crew, workloads_crew.c): its arrivals and replicas' events live
   * there, run up to each of the factory engine's events by the crew;
   * NULL otherwise (the fluid level runs on the factory's engine). */
  sim_engine **svc_engine;
  struct sim_crew *crew;
  /* With the crew: service s's replicas are packed replicas svc_rep0[s]
   * .. svc_rep0[s + 1] - 1; rep_taken the room for their loads, taken on
   * the members' threads at the tick. */
  uint32_t *svc_rep0;
  gpu_load *rep_taken;
  /* And their packed runs as each service's own list, made with the
   * packed runs (work__crew_pack): service s's run0 from 0 at
   * svc_run0 + svc_rep0[s] + s, whether its runs are in order
   * (work__runs_seq) in svc_seq[s]. svc_packed: made for the runs
   * packed now. */
  uint32_t *svc_run0;
  bool *svc_seq;
  bool svc_packed;
  /* The replicas' compute shares (inf_compute_shares) as the members
   * took them with their loads, replica k's at rep_comp[3 + k] (three
   * before the first, for workloads_units.c's loads of four); comp_taken:
   * this drive's take was theirs, so they are what the services hold
   * (a share changes only with a take) until the next drive. */
  double *rep_comp;
  bool comp_taken;
  /* With the crew: service s's sample row (inf_sample) at svc_vals + s *
   * INF_NCOLS, made on its member's thread (work__crew_samples). */
  double *svc_vals;
  /* The services' arrivals drawn ahead on an idle worker
   * (work__crew_draw_ahead): up to ahead_until_s; ahead_made once their
   * room is asked for, ahead_on if a service has room. */
  double ahead_until_s;
  bool ahead_made, ahead_on;
  size_t *svc_tel;    /* their /services group ids */
  char **svc_group;   /* "services/NAME" */
  train_config *jobs; /* the training entries expanded, one per job */
  char **job_names;   /* of the jobs an entry's count made */
  size_t njobs;
  uint32_t *job_type; /* GPU type index per job */
  size_t *job_slot0;  /* first slot of each job */
  bool *job_dark;     /* per job: a GPU of it on a dark rack */
  slot *slots;
  size_t nslots;
  uint32_t *gpus;     /* the slots' GPU indices */
  uint32_t *gpu_slot; /* per fleet GPU: its slot or NO_SLOT */
  uint64_t slot_changes; /* writes of gpu_slot (work_gpu_slot_changes) */
  /* Per fleet GPU: its slot's owner, or work__nowners (the idle row of
   * tick_j) when free; kept with gpu_slot so the books' per-GPU pass
   * reads one array, not the slot through gpu_slot. */
  uint32_t *gpu_owner;
  double *phi;        /* scratch: per stage of one job */
  /* Each slot's runs of the fleet (rack.h), in its GPUs' order, a run
   * once where its GPUs follow each other: at slot_runs + the slot's
   * first, slot_nruns[k] of them. Made from the fleet's runs number
   * runs_seen; while those are fresh, a slot's GPUs are its runs' GPUs,
   * so its clock and its load go run by run. */
  uint32_t *slot_runs, *slot_nruns;
  uint64_t runs_seen;
  /* The services' replicas, slots 0 .. nrep (workloads_tick.c): their
   * runs packed, replica k's at rep_runs[rep_run0[k] .. rep_run0[k + 1]),
   * made with the slots' runs (reps_packed: made, every replica active);
   * and the tick's scratch, a clock and a load per replica. */
  uint32_t nrep;
  uint32_t *rep_run0, *rep_runs;
  uint32_t *rep_rack; /* each packed run's rack */
  uint16_t *rep_type; /* and its GPUs' type */
  bool reps_packed;
  bool reps_seq; /* work__runs_seq of the packed runs */
  /* work__racks_type of the fleet, with the packed runs (fixed from the
   * fleet's making: a rack's GPUs' type and count never change). */
  bool racks_typed;
  uint32_t racks_type;
  double *rep_phi;
  /* With the crew: each replica's key (rack_runs_key of its one run) when
   * a sample solved rep_phi (work__crew_sample_clocks), at runs_made
   * kept_made; phi_kept until the drive's clocks after it, which keep a
   * service's clocks where its keys still hold (work__crew_replica_clocks). */
  rack_run_key *rep_key;
  uint64_t kept_made;
  bool phi_kept;
  /* A chunk of a service's replicas' loads on their way to the runs
   * (WORK_LOADS_CHUNK, or the most replicas of a service's if fewer). */
  gpu_load *rep_load;
  /* The fleet's runs_made when the replicas' loads were last written to
   * their packed runs (0: never). While the runs are still those, every
   * run of a replica holds the replica's load: nothing else writes a
   * keyed GPU's load while the runs are fresh (rack.h), so the clocks
   * compare a replica's load once, its first run's. */
  uint64_t rep_loads_made;
  /* The fleet's runs' owners and lengths for the owners' sums, made from
   * its runs number owners_seen (work__owner_power). */
  uint32_t *run_owner;
  double *run_len;
  /* The runs in stretches of one owner (work__owner_stretches), made with
   * run_owner: nown_stretches of them, stretch k ending before run
   * own_end[k], of owner own_owner[k]. */
  uint32_t *own_owner, *own_end, nown_stretches;
  uint64_t owners_seen;
  double *tick_j;     /* scratch: per owner, one interval */
  double *owner_j;    /* per owner, the run */
  double idle_j, overhead_j;
  double iv_inference_j, iv_training_j; /* this sample interval */
  uint32_t busy;
  uint64_t arrived, running, queued, rejected, done;
  uint32_t arrival_kind, release_kind;
  double facility_w, cap_w;
  double dr_end_s; /* the demand-response event under way ends; NaN: none */
  /* Grid-aware timing, per job: its plan, where in it the job is, its
   * deadline, and the CO2 of its energy. */
  defer_plan *plans;
  size_t *plan_pos;
  double *deadline_s;
  double *owner_co2_kg;   /* per owner */
  sched_running *in_pass; /* a pass's running jobs, njobs of room */
  /* The free GPUs of dark racks, kept from the scheduler: per rack, its
   * list at blocked + first[r], how many, and whether it is dark. */
  uint32_t *blocked, *blocked_n;
  bool *blocked_dark;
  struct work_dr *dr; /* demand response's cost per owner; NULL: off */
  /* A client's holds and budgets (workloads_client.c); NULL until the
   * first, so a run without them is as before. */
  struct work_client *client;
};

/* workloads_crew.c: each service's packed runs as its own list (w's
 * svc_run0, svc_seq), after the packed runs are made; nothing without
 * the crew. */
void work__crew_pack(work *w);

/* workloads_crew.c: where the crew runs on threads and the fleet's
 * clocks may be solved on them (rack_fleet_phis_shareable), each
 * service's replicas' clocks into w->rep_phi and to the service
 * (inf_set_clocks), on its member's thread, the fleet's cache left
 * alone (work_reps's solo); held as work_reps's. False (nothing done):
 * the caller's loop does it. */
bool work__crew_replica_clocks(work *w, bool held);

/* workloads_crew.c: the same clocks into w->rep_phi alone (no service
 * told), where the replicas are one run each in order (w->reps_seq), and
 * made known to the fleet; false (nothing done) otherwise. */
bool work__crew_sample_clocks(work *w, bool held);

/* workloads_crew.c: where the crew runs on threads, each service's sample
 * row for the dt seconds ending now (inf_sample) into w->svc_vals, on
 * its member's thread; false (nothing done): the caller samples them. */
bool work__crew_samples(work *w, double dt);

/* workloads_crew.c: the engine service s runs on: its own at the request
 * level (made here; SIM_ENOMEM), the factory's otherwise. */
int work__service_engine(work *w, size_t s, sim_engine **out);

/* workloads_crew.c: at the request level, the crew that runs the services'
 * engines up to each of the factory engine's events, on cfg->threads
 * threads; nothing at the fluid level. SIM_OK or SIM_ENOMEM. */
int work__crew_start(work *w);

/* workloads_crew.c: the crew stopped (its threads joined), then, after the
 * services are gone (work__crew_free_engines), their engines. */
void work__crew_stop(work *w);
void work__crew_free_engines(work *w);

/* workloads_crew.c: with the crew on threads, the tick's per-service work
 * on the members' threads: every service's replicas to their clocks phi
 * (the packed replicas', inf_set_clocks) and true; or every service's
 * replicas' loads taken (inf_take_loads) into the packed list returned.
 * false / NULL without threads: the caller's loop does it. */
bool work__crew_set_clocks(work *w, const double *phi);
const gpu_load *work__crew_take_loads(work *w);

/* workloads_crew.c: with the crew on threads, at the start of the tick's
 * serial part, the services' arrivals up to the end of the next period
 * of dt (and one more) posted to be drawn ahead by an idle worker
 * (sim_crew_post); the crew settles it before the services run again.
 * Nothing else: the services draw on demand. */
void work__crew_draw_ahead(work *w, double dt);

/* workloads_tick.c: the clocks the slots ran at to the models (a
 * replica's to its service, a job's stages together to the job). */
void work__drive_clocks(work *w);

/* workloads_owners.c: sum[owner[i]] += power[i] for i in [0, n), in that order
 * (the same bits), one store per run of equal owners. */
void work__owner_sums(double *sum, const uint32_t *owner, const double *power,
                      uint32_t n);

/* workloads_owners.c: the same sums run by run (fleet's units, fresh). */
void work__owner_sums_runs(double *sum, const uint32_t *owner,
                           const rack_fleet *fl);

/* workloads_owners.c: the runs' owners (their first GPU's) and lengths,
 * fl->nruns each, with the runs fresh; and the sums of
 * work__owner_sums_runs from them and the runs' power, the same bits. */
void work__runs_owners(const rack_fleet *fl, const uint32_t *owner,
                       uint32_t *run_owner, double *run_len);
void work__owner_sums_packed(double *sum, const uint32_t *run_owner,
                             const double *run_len, const double *power,
                             uint32_t nruns);

/* workloads_owners.c: runs 0 .. nruns - 1 of owners run_owner in stretches
 * of one owner, in order: stretch k's owner in own_owner[k], its end (the
 * run after it) in own_end[k]; returns how many (at most nruns). And the
 * sums of work__owner_sums_packed from them: each stretch's products
 * added in a register from its owner's sum, stored once, the same
 * additions in the same order, the same bits. */
uint32_t work__owner_stretches(const uint32_t *run_owner, uint32_t nruns,
                               uint32_t *own_owner, uint32_t *own_end);
void work__owner_sums_stretches(double *sum, const uint32_t *own_owner,
                                const uint32_t *own_end, uint32_t nstretches,
                                const double *run_len, const double *power);

/* workloads_owners.c: each owner's power now added into sum (by the runs
 * when fresh, else GPU by GPU). */
void work__owner_power(work *w, double *sum);

/* workloads_tick.c: the slowest clock of the fleet's runs runs[0 .. m)
 * (fresh): each run's clock once, the minimum of the same values the
 * per-GPU pass takes over their GPUs. last: the last clock taken, kept
 * by the caller from slot to slot (rack_gpu_phi_near). */
double work__runs_phi(const rack_fleet *fl, const uint32_t *runs, uint32_t m,
                      rack_phi_last *last);

/* The replicas' packed runs as the clocks read them: n replicas, replica
 * k's runs at run0[k] .. run0[k + 1] (one at least), each run (the
 * fleet's index: its cap and load are the run's), rack and GPU type;
 * the loads are read from the fleet's runs. */
typedef struct work_reps {
  uint32_t n;
  const uint32_t *run0, *runs, *rack;
  const uint16_t *type;
  /* Every run of a replica holds the replica's load (the drive wrote
   * them: w->rep_loads_made): compared once a replica, its first run's. */
  bool held;
  /* One run a replica, replica k's run runs[0] + k (work__runs_seq): the
   * runs' caps are then read in place. */
  bool seq;
  /* Every rack holds GPUs, and racks_type is their one type
   * (work__racks_type); false: the racks are read for it. */
  bool typed;
  uint32_t racks_type;
  /* The fleet's cache of clocks neither read nor written (rack.h's
   * _solve calls): a service's replicas on its member's thread
   * (workloads_crew.c), the other services' on theirs at once. */
  bool solo;
} work_reps;

/* workloads_phis.c: whether every rack of fl holds GPUs (then *type is
 * their one GPU type, RACK_PHI_NONE where two racks' differ). */
bool work__racks_type(const rack_fleet *fl, uint32_t *type);

/* workloads_phis.c: whether replicas run0[0 .. n] are one run each and
 * runs[k] is runs[0] + k (bench-10k's: the services' replicas are the
 * fleet's first runs, in order). */
bool work__runs_seq(const uint32_t *run0, const uint32_t *runs, uint32_t n);

/* workloads_tick.c: the clocks of r's replicas (the runs fresh), each the
 * slowest of its runs' (work__runs_phi's, the same bits), into phi[k];
 * last as work__runs_phi's. With r->held, a replica's load is compared
 * once (its first run's), not once a run. */
void work__replica_phis(const rack_fleet *fl, const work_reps *r, double *phi,
                        rack_phi_last *last);

/* workloads_phis.c: replicas k0 .. k0 + n - 1 of all (a service's) as a
 * list of their own, for work__replica_phis on a thread of its own
 * while other threads take other parts: _made writes its run0 (n + 1
 * of room, from 0) and returns whether its runs are in order
 * (work__runs_seq), once a packing; work__reps_part is the list, the
 * fleet's cache left alone (solo). The clocks it gives, from a last of
 * its own, are the whole list's walk's for those replicas to the bit:
 * a clock taken from last, from the cache or solved alone or in a
 * stretch is the solve of its type, cap and load (rack.h), so where the
 * walk starts and where its stretches fall change no clock. */
bool work__reps_part_made(const work_reps *all, uint32_t k0, uint32_t n,
                          uint32_t *run0);
work_reps work__reps_part(const work_reps *all, uint32_t k0, uint32_t n,
                          const uint32_t *run0, bool seq);

/* workloads_loads.c: replicas k0 .. k0 + n - 1's loads l[0 .. n) to
 * every run of theirs (the runs fresh; r's loads and types not read):
 * once a run (rack_set_run_load), the runs in order at once where r->seq
 * (rack_set_run_loads_seq). The drive's, a service at a time. */
void work__reps_loads_to_runs(rack_fleet *fl, const work_reps *r, uint32_t k0,
                              uint32_t n, const gpu_load *l);

/* A service's take of its replicas first .. first + n - 1 into out. */
typedef void (*work_take_fn)(void *svc, uint32_t first, uint32_t n,
                             gpu_load *out);

/* The drive's chunks (workloads_loads.c): the n replicas of one service,
 * packed replicas k0 .. k0 + n - 1 (its 0 .. n - 1), take their loads
 * room at a time into buf (take from its first replica up) and each
 * chunk goes to its runs (work__reps_loads_to_runs). A fluid service's
 * takes in chunks going up are its one take (inf__took_range). */
void work__reps_take_to_runs(rack_fleet *fl, const work_reps *r, uint32_t k0,
                             uint32_t n, work_take_fn take, void *svc,
                             gpu_load *buf, uint32_t room);

/* The drive's room for a chunk (rep_load's, 6 KB). */
enum { WORK_LOADS_CHUNK = 256 };

/* workloads_loads.c: work__reps_take_to_runs for a fluid service (r->seq:
 * replica k's run runs[0] + k), its takes in the same chunks as
 * stretches of one load (inf_fluid_take_stretches), each written to its
 * runs at once: the same words, the same takes. */
void work__reps_fluid_to_runs(rack_fleet *fl, const work_reps *r, uint32_t k0,
                              uint32_t n, inf_service *svc);

#ifdef SIM_LANES_AVX2
/* workloads_loads.c: hits_seq's eights (workloads_tick.c) where replica
 * k's run (q0 + k, one run a replica) lies in a known stretch of load
 * l's bits (rack_known_at): to the stretch's end or n, eight a turn
 * while every one's cap has cap's bits, each one's clock p (AVX2, where
 * the CPU has it). Where the eights stop; k where none applies. */
uint32_t work__hits_known(const rack_fleet *fl, uint32_t q0, uint32_t k,
                          uint32_t n, gpu_load l, double cap, double p,
                          double *phi);
#endif

/* workloads_tick.c: the runs of GPUs gpus[0 .. n) in their order, a run once
 * where its GPUs follow each other, into runs; how many. */
uint32_t work__slot_runs(const rack_fleet *fl, const uint32_t *gpus,
                         uint32_t n, uint32_t *runs);

/* workloads_units.c: how many of keys k[0 .. m) (m > 0) are k[0], k[0] +
 * 1, ... (compared eight or sixteen a turn; work__replica_stretch's
 * loop). */
size_t work__key_stretch(const uint32_t *k, size_t m);

/* workloads_units.c: how many units key[j .. n) from a service slot key[j] on
 * are that service's consecutive replicas (slots key[j], key[j] + 1, ...,
 * parts one apart), at most WORK_CHUNK: the units that take their compute
 * shares in one call. As many as control asks for a call
 * (CONTROL_UNITS_CHUNK), so a chunk of one service's replicas is one
 * stretch: at 64, bench-10k's fluid tick made 36 calls, each with its
 * keys' setup and the services' per-call work, where now 11. */
enum { WORK_CHUNK = 256 };
size_t work__replica_stretch(const work *w, const uint32_t *key, size_t j,
                             size_t n);

/* A unit's class and priority as the sixteen bytes replica_units stores
 * from its cls on: the class's int, the four bytes after it (the unit's
 * n, which worth_puts_avx2 blends in) zeros, the priority's word. Made in
 * registers: made in a unit on the stack (a memset, a store) and loaded
 * back as one pair, a load no store could forward, it cost half of
 * replica_units' time (perf, release build). */
static inline sim_u2 work__class_priority(int cls, int64_t priority) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  const uint64_t c = (uint64_t)(uint32_t)cls << 32;
#else
  const uint64_t c = (uint32_t)cls;
#endif
  return (sim_u2){c, (uint64_t)priority};
}

/* fmin, NaN rules included, inlined: libm's is a call, and the clocks
 * take one for every run every period. */
static inline double work__min_of(double a, double b) {
  return b < a || isnan(a) ? b : a;
}

static inline bool work__same_load(const gpu_load *a, const gpu_load *b) {
  return sim_same_bits(a->sm, b->sm) && sim_same_bits(a->mem, b->mem) &&
         sim_same_bits(a->busy, b->busy);
}

/* Whether run q's load in the fleet is l. */
static inline bool work__load_of_run_is(const rack_fleet *fl, uint32_t q,
                                        const gpu_load *l) {
  gpu_load x = rack_run_load(fl, q);
  return work__same_load(l, &x);
}

/* workloads_dr.c: frees w->dr (work_destroy). */
void work__dr_free(work *w);

/* Rows of the /jobs table: the services, then the jobs. */
static inline size_t work__nowners(const work *w) {
  return w->cfg->nservices + w->njobs;
}

static inline bool work__is_job(const work *w, uint32_t owner) {
  return owner >= w->cfg->nservices;
}

static inline size_t work__job_of(const work *w, uint32_t owner) {
  return owner - w->cfg->nservices;
}

/* workloads.c: the GPU type a workload asks for (a name, or NULL), or the
 * fleet's only one; gives slot k its GPUs (its n of them from list) and
 * marks them; the engine handlers of a job's arrival and of its deferred
 * window opening (ev->a: the job); and the training model's callback on
 * a job's change of state. */
uint32_t work__type(const rack_fleet *fl, const char *gpu);
void work__slot_take(work *w, size_t k, const uint32_t *list);
int work__on_arrival(sim_engine *e, void *ctx, const sim_event *ev);
int work__on_release(sim_engine *e, void *ctx, const sim_event *ev);
void work__on_job_change(void *ctx, size_t j);
/* workloads.c: queues job j for the scheduler now and runs a pass. */
int work__submit(work *w, size_t j);

/* A client's holds and budgets (workloads_client.c makes it). */
struct work_client {
  bool *held;       /* per job: the client holds it back */
  bool *parked;     /* per job: arrived (or let go by its plan) while held:
                       submit parks it here instead of queueing it */
  double *budget_w; /* per owner: INFINITY for none */
  double *sum, *floor; /* per owner: a clamp's scratch */
};

/* workloads_client.c: frees the client's state. */
void work__client_free(work *w);

#endif
