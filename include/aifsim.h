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

/* Runs n control periods (n >= 1), or as many as are left. AIFSIM_OK;
 * AIFSIM_ERANGE when the run is already at its end; AIFSIM_EINVAL after
 * a failure or after aifsim_finish; else the run's failure (the handle is
 * then failed: reads, aifsim_errmsg and aifsim_close are left). */
int aifsim_step(aifsim *a, unsigned long n);

/* Runs to time t_s (seconds from the start; at most the duration):
 * every event up to and including t_s. A time before now is
 * AIFSIM_ERANGE. Otherwise as aifsim_step. */
int aifsim_run_to(aifsim *a, double t_s);

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
 * AIFSIM_ERANGE (nothing changed) outside that range. */
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

/* Frees a; a run not finished leaves no output (its partial file is
 * removed). NULL does nothing. */
void aifsim_close(aifsim *a);

/* The library's version, "0.1.0". */
const char *aifsim_version(void);

#ifdef __cplusplus
}
#endif
#endif
