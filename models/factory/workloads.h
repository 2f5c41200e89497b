/* workloads.h - the workloads of a factory: inference services and
 * training jobs on the fleet's GPUs, the scheduler that places them, and
 * the exact attribution of the GPUs' energy to them. Part of the factory
 * layer, but it knows only its own work_config and the fleet, never
 * factory.h: the factory fills the config, drives it from its control
 * tick and copies its work_summary into the factory's.
 *
 * Each workload owns "slots": a replica of a service, a pipeline stage of
 * a training job. A GPU belongs to one slot or to none (idle, or running
 * the rack group's synthetic background load). Every control tick the
 * slots' clocks go to the models (the slowest GPU of a slot paces it) and
 * the models' activities come back to the slots' GPUs. Energy: every
 * GPU's power over an interval goes to its slot's workload or to "idle";
 * the racks' non-GPU IT power is "overhead". So the jobs, idle and
 * overhead add up to the IT energy by construction, and factory_finish
 * checks it. */
#ifndef MODELS_WORKLOADS_H
#define MODELS_WORKLOADS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "err.h"
#include "inference.h"
#include "llm.h"
#include "power.h"
#include "rack.h"
#include "scheduler.h"
#include "sig.h"
#include "tel.h"
#include "training.h"
#include "gpujob.h"

/* What the workloads are and what they need to know of the scenario. The
 * arrays, catalogs and signals are borrowed: they must outlive the work
 * (nvlink_domain only work_create). */
typedef struct work_config {
  const inf_config *services; /* inference services */
  size_t nservices;
  const train_config *training; /* training entries, before expansion */
  size_t ntraining;
  const gjob_config *gjobs; /* generic GPU jobs (run as training jobs) */
  size_t ngjobs;
  sched_config scheduler;
  const llm_catalog *llms;
  const sig_series *price, *carbon; /* the feed's; kind SIG_NONE: none */
  const char *scenario_path;     /* request traces are relative to its folder */
  const uint32_t *nvlink_domain; /* per rack group: GPUs per domain */
  int64_t seed;                  /* the run's */
  double duration_s;
  double cap_w; /* the facility cap at the start */
  int granularity; /* inf_granularity: the services' */
  /* How many threads run the services' request events (a crew,
   * workloads_crew.c; 0: one). How the run is executed, never the model:
   * every output is the same for any number. At most one a service is
   * used, and one when the engine's allocator is not the C library's
   * (a counting or failing allocator is not safe across threads). */
  unsigned threads;
} work_config;

/* What the workloads come to: energy by owner (with idle and overhead the
 * IT energy), requests and tokens, training jobs. */
typedef struct work_summary {
  double inference_energy_j, training_energy_j, idle_energy_j;
  double overhead_energy_j;
  double tokens, tokens_per_joule; /* over the services' energy */
  double slo_attainment; /* share of ended requests (unserved: missed) */
  uint64_t requests_arrived, requests_completed, requests_rejected;
  uint64_t requests_dropped, requests_timed_out;
  uint64_t jobs_arrived, jobs_done, jobs_running, jobs_queued;
  uint64_t jobs_rejected, job_failures;
  double training_tokens, training_co2_kg;
  uint64_t jobs_late, job_pauses;
  double jct_mean_s, lost_gpu_hours, fault_lost_gpu_hours;
  /* Means over the completed requests of every service (NaN: none); not
   * in the files, whose request-level bytes they would change. */
  double ttft_mean_s, tpot_mean_s;
} work_summary;

typedef struct work work;

/* Called before GPUs change hands, so the energy up to now is booked to
 * the old owners. */
typedef void (*work_settle_fn)(void *ctx, sim_time now);

/* Builds the services and jobs of cfg on fleet fl (borrowed), places the
 * services' replicas, schedules the jobs' arrivals and declares the
 * /services groups on sink (may be NULL). NULL with err set: SIM_EINPUT
 * when the services do not fit the fleet, or a trace is bad. A factory
 * without workloads gets a work that does nothing. */
work *work_create(const work_config *cfg, sim_engine *e, rack_fleet *fl,
                  tel_sink *sink, work_settle_fn settle, void *ctx,
                  sim_error *err);
void work_destroy(work *w);

/* Whether the services' crew runs on more than one thread (the request
 * level with threads > 1 and two services or more). */
bool work_on_threads(const work *w);

/* Runs fn(fctx, i) for i = 0 .. n-1 on the crew's threads (item i always
 * on one thread; sim_crew_for): for a tick's work whose items touch
 * disjoint memory, the power policy's split of each rack group
 * (control_set_each: ctx is the work). Only where work_on_threads. The
 * first failing item's code in item order. */
int work_for_each(void *ctx, size_t n, int (*fn)(void *fctx, size_t i),
                  void *fctx);

/* The facility's power now and its cap, for power-aware admission, and
 * when the demand-response event under way ends (NaN: none), for the
 * flexible jobs that pause through it. */
void work_set_power(work *w, double facility_w, double cap_w, double dr_end_s);

/* Once per control tick, first: the clocks the GPUs ran at over the
 * period that ends now (their caps and activities still in force) go to
 * the models, which progress at them until the next tick; a job held
 * back for power is offered the headroom again. */
void work_clocks(work *w);

/* Then, after the background load has moved: the models' activities for
 * the coming period go to the GPUs they hold. */
void work_drive(work *w, double dt);

/* At a sample, before the racks' sums: where the crew runs on threads
 * (work__crew_sample_clocks), the replicas' clocks for the fleet's caps
 * and loads now solved on the members' threads and made known to the
 * fleet (rack_fleet_phis_known), so the sums read them rather than solve
 * them on the leader's thread (docs/performance-log.md, the thirty-sixth
 * session). The caller takes them back (rack_fleet_phis_known with none)
 * before anything of the fleet changes. */
void work_sample_clocks(work *w);

/* The training jobs' waveform for the power-quality window (a
 * pq_wave_fn; ctx is the work): train_wave_w of the jobs. */
double work_wave_w(void *ctx, double period_s, double offset_s);

/* After the fleet's dark flags changed (a PDU fault struck or cleared):
 * a replica with a GPU on a dark rack goes down (inf_set_down: its
 * requests are dropped, routing skips it) or comes back; a training job
 * with a GPU on a dark rack is interrupted as by a GPU failure
 * (train_interrupt) and held until all its racks are back, then
 * released (work_clocks resumes it as its plan allows). A failure stops
 * the engine (sim_engine_fail). */
void work_faults(work *w);

/* For power control (control.h): per fleet GPU, the slot holding it or
 * CONTROL_NO_SLOT (borrowed: valid while w lives); and what the work of
 * slot key[j] is worth to a policy, written to u[j]'s cls, priority,
 * weight and c, for each of n units (those with key CONTROL_NO_SLOT
 * left as they are). */
const uint32_t *work_gpu_slots(const work *w);

/* How many times a slot took or let go of GPUs (work_gpu_slots changed):
 * while it holds, so do the GPUs' slots. */
uint64_t work_gpu_slot_changes(const work *w);
void work_slot_units(const work *w, const uint32_t *key, size_t n,
                     power_unit *u);

/* Books dt seconds of the power in force (per GPU, per rack) to the
 * workloads, idle and overhead, and their CO2 at g_per_kwh (the grid's
 * mean carbon intensity over the span; NaN: none). */
void work_attribute(work *w, double dt, double g_per_kwh);

/* The workload columns of /facility over the interval of dt seconds
 * ending now: tokens_per_s, gpus_busy (at sample time), jobs_running,
 * jobs_queued; and each service's /services row. */
typedef struct work_row {
  double tokens_per_s, gpus_busy, jobs_running, jobs_queued;
  double inference_w, training_w; /* their GPUs' power, interval means */
} work_row;
int work_sample(work *w, double t, double dt, work_row *row);

/* Requests completed, rejected, timed out or dropped so far over all
 * services (an unserved request missed its SLOs), and those within their
 * SLOs: differences of
 * two calls give the attainment over a span. */
void work_request_counts(const work *w, uint64_t *completed, uint64_t *met);

/* For a client that steps the run (libaifsim; workloads_client.c). The
 * services and the jobs (the training entries expanded), by index: how
 * many, and one's name (NULL out of range). Owners are the services,
 * then the jobs (the /jobs table's rows). */
size_t work_nservices(const work *w);
const char *work_service_name(const work *w, size_t k);
size_t work_njobs(const work *w);
const char *work_job_name(const work *w, size_t j);

/* Owner o (a service, then the jobs): its GPUs' power in force now, W,
 * and how many GPUs it holds now. */
void work_owner_power(const work *w, size_t o, double *power_w, double *gpus);

/* Service k's requests now: waiting and in a batch; and so far: ended
 * (completed, rejected, timed out or dropped: the SLO's denominator) and
 * completed within both SLOs. */
typedef struct work_service_now {
  uint64_t waiting, in_batch, ended, met;
} work_service_now;
void work_service_of(const work *w, size_t k, work_service_now *out);

/* Where job j is now: not yet arrived, waiting (queued, deferred or
 * held), running (holding GPUs), done. */
typedef enum work_job_phase {
  WORK_JOB_COMING,
  WORK_JOB_WAITING,
  WORK_JOB_RUNNING,
  WORK_JOB_DONE
} work_job_phase;
work_job_phase work_job_phase_of(const work *w, size_t j);
uint32_t work_job_gpus(const work *w, size_t j);

/* Holds job j back (hold) or releases it. A held job that arrives, or
 * whose deferral window opens, waits outside the scheduler's queue (one
 * queued is taken out); released, it is queued again with its arrival
 * time and a pass runs: it starts when it fits, in the queue's order.
 * Still counted as queued while held, so jobs are conserved. SIM_OK;
 * SIM_EINVAL for a job running or done (only a job not started can be
 * held); SIM_ENOMEM; or the pass's failure (the engine is failed). */
int work_hold_job(work *w, size_t j, bool hold);
bool work_job_held(const work *w, size_t j);

/* Owner o's budget, W, on the sum of its GPUs' caps (INFINITY: none),
 * from the next allocation: power control lowers its GPUs' caps toward
 * their minimum, each in proportion to its room, until they fit; what
 * they give up is left unused. floor_w: the sum of its GPUs' minimum
 * caps (cap_min_w), below which a budget cannot be held. SIM_OK or
 * SIM_ENOMEM. The clamp (a control_clamp_fn on w) is what power control
 * calls; budget_of reads one back (INFINITY: none). */
int work_set_budget(work *w, size_t owner, double budget_w);
double work_budget_of(const work *w, size_t owner);
double work_owner_floor_w(const work *w, size_t owner);
void work_clamp(void *ctx, const power_unit *units, const uint32_t *key,
                size_t n, double *cap);

/* Fills *s with the workload figures of a run of duration_s, checks job
 * and request conservation and the energy attribution against the IT
 * energy it_energy_j (SIM_ESTATE with a message if either fails), and
 * writes /jobs and the /services attributes. */
/* The summary's rows work_finish may put (inference_granularity, in
 * fluid runs): n of them, constant. */
const tel_metric *work_summary_metrics(size_t *n);

int work_finish(work *w, double duration_s, double it_energy_j, work_summary *s,
                sim_error *err);

/* What demand response cost each service and job (workloads_dr.c):
 * enable it once after work_create (SIM_ENOMEM), step it at every
 * control tick with whether an event was under way over the dt just
 * ended, and write the table /demand_response at the end (a row per
 * service, then per job: the requests ended in events and their SLO
 * attainment against outside, a job's iterations per second running in
 * events against outside and the slowdown). Without enabling, step and
 * write do nothing. */
int work_dr_enable(work *w, sim_error *err);
void work_dr_step(work *w, bool dr, double dt);
int work_dr_write(const work *w, tel_sink *sink, sim_error *err);

#endif
