/* aifsim.h - the simulator as a library (libaifsim): open a scenario,
 * step the run a control period at a time or to a time, read the power
 * and the cap in force, set the facility cap for the periods to come, and
 * finish, writing the HDF5 file `aifsim run` writes. The one header a
 * client includes; link with -laifsim.
 *
 * Time runs in control ticks (the scenario's control_period, 1 s by
 * default). The tick at time t sets the power in force over
 * [t, t + period); a step runs every event up to and including the tick
 * it ends on, so after a step the figures read are those of the period
 * that starts now. A cap set between two steps is in force from the tick
 * the next step ends on.
 *
 * Errors: every call that can fail returns AIFSIM_OK (0) or a negative
 * code (AIFSIM_E*, the simulator's own codes), and keeps a message for
 * aifsim_errmsg. Nothing here exits or prints. A handle is used by one
 * thread at a time; separate handles are independent. */
#ifndef AIFSIM_H
#define AIFSIM_H

#include <signal.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The codes: the simulator's own (sim/core/err.h), the same numbers
 * (lib/aifsim.c checks it as it compiles). */
enum {
  AIFSIM_OK = 0,
  AIFSIM_ENOMEM = -1,    /* out of memory */
  AIFSIM_EINVAL = -2,    /* a bad argument, or a call out of order */
  AIFSIM_EINPUT = -3,    /* the scenario is wrong (FILE:LINE:COLUMN) */
  AIFSIM_EIO = -4,       /* a file cannot be read or written */
  AIFSIM_ERANGE = -5,    /* a value out of range */
  AIFSIM_ENOTFOUND = -6, /* no such key */
  AIFSIM_ESTATE = -7,    /* an invariant of the books failed, or the run */
  AIFSIM_ECANCELED = -8, /* stopped */
  AIFSIM_EBUSY = -9      /* the output is being written by another process */
};

typedef struct aifsim aifsim;

/* Opens the scenario file at path with nsets overrides, each
 * "key.path=value" as `aifsim run --set` takes them (sets may be NULL when
 * nsets is 0), and builds the factory at t = 0. With out (not NULL) the
 * run is written there as `aifsim run -o out` writes it: through
 * out.partial, renamed to out by aifsim_finish (replacing a file there:
 * unlike the command, the library does not ask whether it is a run's;
 * AIFSIM_EBUSY while another process writes out); NULL keeps it in memory
 * only. The tick at t = 0 has run: the first period's power is set.
 * Returns AIFSIM_OK with *a set, or a code; *a is then still a handle
 * holding the message (NULL only when even that could not be allocated),
 * good for aifsim_errmsg, aifsim_errcode and aifsim_close (other calls
 * return AIFSIM_EINVAL). Close it in every case. */
int aifsim_open(const char *path, const char *const *sets, size_t nsets,
                const char *out, aifsim **a);

/* What aifsim_open_opts takes beyond aifsim_open's arguments; a zeroed
 * struct, with sweep_point -1, is aifsim_open. */
typedef struct aifsim_options {
  /* A run not finished (a failure, a stop, aifsim_close) keeps
   * out.partial, readable and marked complete=0, instead of removing it
   * (`aifsim run --keep-partial`). */
  int keep_partial;
  /* When not NULL, read after every event: once nonzero (a signal
   * handler sets it), the run stops at that event and the call running it
   * returns AIFSIM_ECANCELED (the handle is then failed). */
  const volatile sig_atomic_t *stop;
  /* The root attribute sweep_point (the run is that point of a sweep);
   * -1 for none. */
  long long sweep_point;
  /* How many threads run the services' request events (each service's on
   * an engine of its own, one thread running it between two of the
   * factory's events; `aifsim run --threads`); 0: the CPUs this process
   * may use (sched_getaffinity), at most one a service, and one when the
   * services' mean arrivals come to fewer than 500 requests a control
   * period (traces count as none: give the number). How the run is
   * executed, never what it computes: every output is the same bytes for
   * any number, and the number is not written. The fluid granularity runs
   * on one thread. */
  unsigned threads;
} aifsim_options;

/* aifsim_open with options (NULL: none). */
int aifsim_open_opts(const char *path, const char *const *sets, size_t nsets,
                     const char *out, const aifsim_options *opts, aifsim **a);

/* Runs n control periods (n >= 1), or as many as are left. AIFSIM_OK;
 * AIFSIM_ERANGE when the run is already at its end; AIFSIM_EINVAL after
 * a failure or after aifsim_finish; else the run's failure (the handle is
 * then failed: reads, aifsim_errmsg and aifsim_close are left). */
int aifsim_step(aifsim *a, unsigned long n);

/* Runs to time t_s (seconds from the start; at most the duration):
 * every event up to and including t_s. A time before now is
 * AIFSIM_ERANGE. Otherwise as aifsim_step. */
int aifsim_run_to(aifsim *a, double t_s);

/* Runs at most n events (n >= 1), or those left: slices of about equal
 * work, where periods may differ a hundredfold (a burst of requests), for
 * a client that looks at the wall clock between them (`aifsim run`'s
 * progress line). The run is at its end when aifsim_at_end says so.
 * AIFSIM_OK, else as aifsim_step. The events, their order and so the
 * results are those of any other way of stepping. */
int aifsim_step_events(aifsim *a, unsigned long n);

/* The engine's events run so far (0 for NULL). */
unsigned long long aifsim_events(const aifsim *a);

/* Now, the control period and the run's length, in seconds; whether the
 * run has reached its end (1) or not (0). */
double aifsim_time(const aifsim *a);
double aifsim_period(const aifsim *a);
double aifsim_duration(const aifsim *a);
int aifsim_at_end(const aifsim *a);

/* The period that starts now, in watts: the facility's power at the
 * grid, its IT (at the racks' inlets), the GPUs' (inside IT), cooling's,
 * the cap in force, the power chain's losses and fixed load, what
 * smoothing draws beyond the racks' load, and what the battery delivers
 * (negative: charging). facility = it + loss + smoothing + cooling -
 * battery. */
typedef struct aifsim_power {
  double facility_w, it_w, gpu_w, cooling_w, cap_w;
  double loss_w, smoothing_w, battery_w;
} aifsim_power;
int aifsim_power_now(const aifsim *a, aifsim_power *p);

/* Inside the IT of aifsim_power, W, over the period that starts now: the
 * racks' power-supply (conversion) losses and their fans, and what models
 * outside the racks draw (the network fabric's switches and optics); the
 * rest is the racks' GPUs, hosts and other boards. */
typedef struct aifsim_it_parts {
  double psu_loss_w, fan_w, outside_racks_w;
} aifsim_it_parts;
int aifsim_it_parts_now(const aifsim *a, aifsim_it_parts *p);

/* The grid over the period that starts now: its signals' means ($/MWh,
 * gCO2/kWh, degC; NaN for a signal the scenario does not give) and the
 * cap demand response holds the facility to (the contracted power.cap
 * when no event is under way), W. */
typedef struct aifsim_grid {
  double price_per_mwh, carbon_g_per_kwh, outdoor_c, dr_cap_w;
} aifsim_grid;
int aifsim_grid_now(const aifsim *a, aifsim_grid *g);

/* The scenario's rack groups: how many, and group g's name (NULL for g
 * out of range). */
size_t aifsim_ngroups(const aifsim *a);
const char *aifsim_group_name(const aifsim *a, size_t g);

/* Each rack group's power over the period that starts now (the racks' IT
 * at their inlets, W) into w[0..n); n must be aifsim_ngroups. */
int aifsim_group_power(const aifsim *a, double *w, size_t n);

/* The facility cap, W, from the next tick on (a step's last), for every
 * period until set again: 0 < cap_w <= the contracted power.cap; a
 * demand-response event or a feed fault still lowers it, and a battery
 * helps hold a cap below power.cap as it helps hold a demand-response
 * cut (not counted as an event in the DR books). A cap the
 * factory cannot be held under is kept and its violation booked, as a
 * demand-response event's is. NaN gives the scenario's cap back.
 * AIFSIM_ERANGE (nothing changed) outside that range. It replaces the
 * steps of a cap series (aifsim_set_cap_series) not yet in force. */
int aifsim_set_cap(aifsim *a, double cap_w);

/* Power groups (docs/SCENARIOS.md, power.groups): named sets of rack
 * groups whose GPUs share one budget (the sum of their caps, W), with a
 * cap of their own, that borrow what groups of their priority or lower
 * leave unused and lend what they leave. The scenario declares them; a
 * client reads them and changes their caps and lending. How many there
 * are, and group p's name (NULL for p out of range). */
size_t aifsim_npower_groups(const aifsim *a);
const char *aifsim_power_group_name(const aifsim *a, size_t p);

/* Power group p at the last allocation, W: its cap in force (NaN: none),
 * its own budget (the facility split's share of its racks, at most its
 * cap, never below its GPUs' minimum caps), its budget after borrowing
 * and lending, its GPUs' demand (each within its cap range) and their
 * power over the period that starts now. AIFSIM_EINVAL for p out of
 * range or a NULL argument. */
typedef struct aifsim_power_group {
  double cap_w, own_w, budget_w, want_w, gpu_w;
} aifsim_power_group;
int aifsim_power_group_now(const aifsim *a, size_t p, aifsim_power_group *g);

/* Group p's cap, W, from the next tick on, until set again: cap_w > 0,
 * INFINITY for none, NaN for the scenario's again. With borrowing its
 * GPUs may go above it on what others leave; without, they stay under
 * it (or at their minimum caps when it is below them). AIFSIM_ERANGE
 * for a cap <= 0, AIFSIM_EINVAL for p out of range (nothing changed). */
int aifsim_set_group_cap(aifsim *a, size_t p, double cap_w);

/* Whether group p borrows (1) or not (0), and lends or not, from the
 * next tick on. AIFSIM_EINVAL for p out of range. */
int aifsim_set_group_lending(aifsim *a, size_t p, int borrow, int lend);

/* The grid's load target, W, from the next tick on: the facility is held
 * under it as under the cap (the lower of the two), and a target above
 * the load does not raise it. target_w > 0; INFINITY: none; NaN: the
 * scenario's power.load_target again. Missing it is booked
 * (load_target_over_s, load_target_error_w in /summary), not as a cap
 * violation. AIFSIM_ERANGE (nothing changed) for target_w <= 0. */
int aifsim_set_load_target(aifsim *a, double target_w);

/* The load target over the period that starts now, W; NaN: none (or no
 * handle). */
double aifsim_load_target(const aifsim *a);

/* A power policy written by the client: every allocation (every control
 * period, or the scenario's power.allocation_period), for each rack
 * group's GPU budget, the simulator calls fn(ctx, units, n, budget_w,
 * cap) in place of the scenario's power.policy. units[0..n) are the
 * group's units (GPUs working in step: a replica, a pipeline stage, a
 * rack's free GPUs; docs/MODELS.md, Power control), valid during the
 * call only. fn writes each unit's per-GPU cap to cap[k], within [lo,
 * hi], with sum n_k cap[k] <= budget_w, and returns 0; budget_w >= sum
 * n_k lo_k. Anything else stops the run: a non-zero return
 * (AIFSIM_ECANCELED, its code in the message), a cap outside its range
 * or caps over the budget (AIFSIM_ERANGE), reported by the step that
 * ran it. Units, W: */
typedef struct aifsim_unit {
  double n;           /* GPUs in it */
  double lo, hi;      /* per-GPU cap range */
  double demand;      /* per GPU, uncapped at its activity (>= 0) */
  double cls;         /* 0 inference, 1 training, 2 other */
  double priority;    /* within a class, higher is served first */
  double weight;      /* useful work per GPU at full speed; 0: none */
  double c;           /* compute-bound share of its work, [0, 1] */
  double idle, span;  /* per-GPU power P = idle + span a phi^gamma */
  double activity;    /* a: what follows the clock (SM and memory) / span */
  double gamma;
  double phi_min;     /* the lowest clock share */
} aifsim_unit;
typedef int (*aifsim_policy_fn)(void *ctx, const aifsim_unit *units, size_t n,
                                double budget_w, double *cap);

/* Sets fn (with ctx, borrowed: it must outlive its use) as the policy
 * from the next tick on; NULL gives the scenario's back. */
int aifsim_set_policy(aifsim *a, aifsim_policy_fn fn, void *ctx);

/* ---- The workloads, the GPUs, the plant (the period that starts now) --
 * Reads need a handle with a factory (open, finished or failed while
 * running); AIFSIM_EINVAL for a NULL argument or an index out of range.
 * Actions need an open handle; each is in force from the next tick (or
 * allocation) on, until changed, and is refused (nothing changed) with a
 * message and AIFSIM_EINVAL for an unknown index or a call out of order,
 * AIFSIM_ERANGE for a value out of range. */

/* The scenario's inference services, and training jobs (its training
 * entries, one per job their count makes, in order): how many, and one's
 * name (NULL out of range). */
size_t aifsim_nservices(const aifsim *a);
const char *aifsim_service_name(const aifsim *a, size_t k);
size_t aifsim_njobs(const aifsim *a);
const char *aifsim_job_name(const aifsim *a, size_t j);

/* Service k: its GPUs' power (W) and how many GPUs its replicas hold;
 * its budget (W; INFINITY: none); requests waiting for a batch and in
 * one now; requests ended so far (completed, rejected, timed out or
 * dropped) and the share of them completed within both SLOs (NaN while
 * none has ended). */
typedef struct aifsim_service {
  double power_w, gpus, budget_w;
  double queued, in_batch, ended, slo_attainment;
} aifsim_service;
int aifsim_service_now(const aifsim *a, size_t k, aifsim_service *s);

/* Where a job is: not yet arrived, waiting (queued, deferred by its
 * plan, or held by the client), running (holding GPUs, checkpointing,
 * restarting or paused included), done. */
enum {
  AIFSIM_JOB_COMING = 0,
  AIFSIM_JOB_WAITING = 1,
  AIFSIM_JOB_RUNNING = 2,
  AIFSIM_JOB_DONE = 3
};

/* Job j: its phase (AIFSIM_JOB_*), whether the client holds it (1), the
 * GPUs it asks for, its GPUs' power (W; 0 unless running) and its budget
 * (W; INFINITY: none). */
typedef struct aifsim_job {
  int phase, held;
  double gpus, power_w, budget_w;
} aifsim_job;
int aifsim_job_now(const aifsim *a, size_t j, aifsim_job *s);

/* The queues now: jobs waiting (arrived, not started: held ones
 * included), of them those the client holds, jobs running, and requests
 * waiting for a batch over every service. */
typedef struct aifsim_queue {
  double jobs_waiting, jobs_held, jobs_running, requests_queued;
} aifsim_queue;
int aifsim_queue_now(const aifsim *a, aifsim_queue *q);

/* Rack group g's GPUs: how many; their caps in force (W: mean, least,
 * most); their clocks as shares of the full clock (mean, least); their
 * power (W). Per rack group rather than per GPU, so that an observation
 * stays a few hundred numbers at 100,000 GPUs; aifsim_gpu_caps gives
 * every GPU's. */
typedef struct aifsim_gpus {
  double n, cap_mean_w, cap_min_w, cap_max_w, clock_mean, clock_min;
  double power_w;
} aifsim_gpus;
int aifsim_group_gpus(const aifsim *a, size_t g, aifsim_gpus *s);

/* The fleet's GPUs (0 for NULL), and each one's cap in force (W) and
 * clock share into cap_w[0..n) and clock[0..n) (either may be NULL), in
 * the fleet's order: rack group by rack group, as the scenario lists
 * them. n must be aifsim_ngpus. */
size_t aifsim_ngpus(const aifsim *a);
int aifsim_gpu_caps(const aifsim *a, double *cap_w, double *clock, size_t n);

/* The cooling loops: how many, l's name (NULL out of range), and loop l:
 * its temperature (degC), its supply setpoint and the range the plant
 * allows it (degC; aifsim_set_supply), the heat it removes and its
 * cooling power over the last period the plant stepped (W). */
size_t aifsim_nloops(const aifsim *a);
const char *aifsim_loop_name(const aifsim *a, size_t l);
typedef struct aifsim_loop {
  double temp_c, supply_c, supply_min_c, supply_max_c, heat_w, power_w;
} aifsim_loop;
int aifsim_loop_now(const aifsim *a, size_t l, aifsim_loop *s);

/* The battery's state of charge, [0, 1]; NaN without a battery (or a
 * handle). */
double aifsim_battery_soc(const aifsim *a);

/* The facility cap as steps: cap_w[i] from time t_s[i] (seconds from the
 * start) until the next step, each in force from the first tick at or
 * after its time (the next tick, for a time now); every cap as
 * aifsim_set_cap takes it (NaN: the scenario's). t_s strictly increasing
 * and none before now. It replaces the steps of an earlier series not yet
 * in force; aifsim_set_cap does too. n = 0 (NULLs allowed): no steps. */
int aifsim_set_cap_series(aifsim *a, const double *t_s, const double *cap_w,
                          size_t n);

/* A budget, W, on the sum of service k's (or job j's) GPUs' caps, from
 * the next allocation on: power control lowers its GPUs' caps after the
 * policy's split, toward their minimum in proportion to each one's room,
 * until they fit, and leaves what they give up unused (so the facility
 * cap holds as before). Its GPUs draw at most their caps, so its power
 * stays at or under the budget. budget_w at least the sum of its GPUs'
 * minimum caps (the message gives it); INFINITY or NaN: none.
 * AIFSIM_ERANGE below that. Once a budget has been set, the policy
 * shares the budget every allocation period even where it is static
 * (the static policy's caps are then those of its split, to rounding). */
int aifsim_set_service_budget(aifsim *a, size_t k, double budget_w);
int aifsim_set_job_budget(aifsim *a, size_t j, double budget_w);

/* Holds job j back (hold = 1) or releases it (0): a held job does not
 * start; arriving, it waits outside the scheduler's queue, and one
 * queued leaves the queue. Released, it is queued again with its arrival
 * time and a scheduling pass runs at once: it starts when it fits, in
 * the queue's order (its priority, then its arrival). A held job stays
 * counted as queued, so jobs are conserved. AIFSIM_EINVAL for a job
 * running or done. */
int aifsim_hold_job(aifsim *a, size_t j, int hold);

/* Loop l's supply setpoint, degC, from the next tick on: within
 * [supply_min_c, supply_max_c] of aifsim_loop_now (above supply_min_c
 * when that is the heat exchanger's approach). The plant removes heat in
 * proportion to how far the loop is above it, so a lower setpoint cools
 * the loop and the GPUs on it, at more cooling power. */
int aifsim_set_supply(aifsim *a, size_t l, double supply_c);

/* Runs to the end, closes the books (the invariants `aifsim run` checks),
 * writes the summary and, with an output, commits the file. AIFSIM_OK,
 * or the failure (AIFSIM_ESTATE: an invariant failed; nothing is then
 * left looking complete). Once only. */
int aifsim_finish(aifsim *a);

/* A figure of the finished run's /summary by key ("energy_mwh",
 * "cap_violation_s": docs/OUTPUT.md lists them) into *v; NaN where the
 * run cannot give it. AIFSIM_EINVAL before aifsim_finish,
 * AIFSIM_ENOTFOUND for a key the summary does not have. */
int aifsim_summary(const aifsim *a, const char *key, double *v);

/* The last failure's code and message ("" when none); the message lives
 * until the next call on a. */
int aifsim_errcode(const aifsim *a);
const char *aifsim_errmsg(const aifsim *a);

/* Whether the last failure is the input's (1): the scenario, an
 * override or a file it reads is wrong or cannot be read, the user's to
 * fix (`aifsim run` exits 2 for it); 0 for a failure of the run, the
 * output or the machine. */
int aifsim_bad_input(const aifsim *a);

/* Frees a; a run not finished leaves no output (its partial file is
 * removed, or kept marked incomplete with keep_partial). NULL does
 * nothing. */
void aifsim_close(aifsim *a);

/* The library's version, "0.1.0". */
const char *aifsim_version(void);

#ifdef __cplusplus
}
#endif
#endif
