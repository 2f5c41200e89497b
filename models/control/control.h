/* control.h - power control (docs/MODELS.md, Power control): what happens every control
 * period, from the facility cap to every GPU's cap. It holds the GPUs'
 * budget (the static split's reserve, or a prediction), tracks demand
 * response, builds the policy's units from the fleet and the workloads,
 * shares the budget by policy (power.h, power_policy.h) and writes the
 * caps back to the fleet. control.c lists the steps in order.
 *
 * It sits above the hardware (rack.h) and below the factory: it sees the
 * fleet's arrays, and what it needs of the facility and the workloads
 * comes through hooks the factory fills (control_hooks), so nothing here
 * includes a factory header. */
#ifndef MODELS_CONTROL_H
#define MODELS_CONTROL_H
#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "err.h"
#include "power.h"
#include "power_policy.h"
#include "rack.h"
#include "scenario.h"
#include "steer.h"

/* How the GPUs' budget under the cap is worked out: the static split's
 * worst-case reserve, or that or more, predicted from the last period. */
typedef enum power_budget { BUDGET_RESERVE, BUDGET_PREDICT } power_budget;

typedef struct power_config {
  double cap_w;               /* the facility power cap (contracted capacity) */
  int policy;                 /* power_policy */
  double allocation_period_s; /* how often a dynamic policy reallocates;
                                 0: every control tick */
  int budget;                 /* power_budget */
  double budget_margin;       /* predict: the share of the cap kept back */
  /* The time constant of the exponential mean of the loads the policy
   * prices and caps the units by (control_units_smooth.c); NaN or 0: the
   * last period's alone */
  double activity_smoothing_s;
  power_group_config *groups; /* power groups (steer.h); none: 0 */
  size_t ngroups;
  power_target_step *load_target; /* the grid's load target, in steps */
  size_t nload_target;
} power_config;

/* The scenario's `power` key (control_scn.c): cap, policy,
 * allocation_period, budget, budget_margin, activity_smoothing, groups,
 * load_target. */
extern const scn_schema control_power_schema;

/* A GPU that no workload holds (control_hooks.gpu_slots). */
#define CONTROL_NO_SLOT UINT32_MAX

/* What control needs of the factory around it, all on ctx. */
typedef struct control_hooks {
  void *ctx;
  /* Whether the facility fits the cap with the GPUs of each group at
   * caps[g] (rack_fleet_split's test: conversion losses, cooling). */
  rack_fits_fn fits;
  /* The workloads and the load for the coming period: the models' new
   * activities to the GPUs (the clocks hook, below, went first). */
  void (*drive)(void *ctx, sim_time now);
  /* Sets the power in force from now for one period and gives the
   * facility power it comes to (the last one on failure); a status. */
  int (*power)(void *ctx, sim_time now, double *facility_w);
  /* Per fleet GPU, the workload slot (a replica, a pipeline stage) that
   * holds it, or CONTROL_NO_SLOT; valid until the next drive. */
  const uint32_t *(*gpu_slots)(void *ctx);
  /* Fills what the work of each of n units is worth, in a few calls per
   * allocation (a chunk of units each: control_units.c compares each
   * chunk's worth while it is in cache): for each j with key[j] !=
   * CONTROL_NO_SLOT, u[j]'s cls, priority, weight and c from slot
   * key[j]'s work, all four (u[j] may hold another unit's: a lazy
   * refresh fills a window of its own, control_units.h); the others left
   * as they are. */
  void (*slot_units)(void *ctx, const uint32_t *key, size_t n, power_unit *u);
  /* Requests completed (or dropped) so far, and those within their SLOs. */
  void (*request_counts)(void *ctx, uint64_t *done, uint64_t *met);
  /* How many times any GPU's slot (gpu_slots) changed so far: a count
   * the holder keeps, so control knows its units stand without comparing
   * every GPU's slot (4 MB twice a period at a million GPUs). NULL: the
   * slots are compared. */
  uint64_t (*slots_changed)(void *ctx);
  /* The clocks of the period ending now go to the models: the clocks
   * under the caps in force over it, so called before a new split
   * rewrites the caps. NULL: the models take no clocks. */
  void (*clocks)(void *ctx);
} control_hooks;

/* The factory's state at a control tick, before the period's step. */
typedef struct control_view {
  double cap_w;      /* the facility cap from now */
  double limit_w;    /* what the split holds the facility to: the cap, or
                        a load target below it */
  bool recap;        /* the cap, the faults or the weather changed */
  bool dr;           /* a demand-response event is under way */
  bool fault_on;     /* a fault is in force */
  double facility_w; /* the facility's power over the last period */
  double it_w;       /* the IT power of it, at the racks' inlets */
  double psu_loss_w; /* the racks' conversion losses, inside it_w */
  double dr_window_s; /* the response window alignment allows; NaN: no
                         alignment is kept */
} control_view;

/* The demand-response books of a run. */
typedef struct control_books {
  uint64_t dr_events;
  double dr_s;              /* time under events */
  double dr_time_to_cut_s;  /* the longest wait for power to fit a cut */
  double dr_over_j;         /* energy above the cap during events */
  double dr_slo_attainment; /* of requests completed in events; NaN */
  /* Alignment (with a response window): the time of event periods that
   * began a window or more after the last cut (an event's start or a
   * step down of its cap), and of those at or under the cap. */
  double dr_judged_s, dr_aligned_s;
} control_books;

typedef struct control control;

/* Power control over fleet fl (borrowed, as cfg, e and hooks: they must
 * outlive it). NULL with err set (SIM_ENOMEM). Free with
 * control_destroy. */
control *control_create(const power_config *cfg, rack_fleet *fl, sim_engine *e,
                        const control_hooks *hooks, sim_error *err);

/* Frees c; NULL does nothing. */
void control_destroy(control *c);

/* The static split for the cap in force (the fits hook) and the GPUs'
 * budget it leaves. SIM_OK, or rack_fleet_split's error when even every
 * GPU at its minimum cap does not fit (the caps are then undefined). */
int control_split(control *c, sim_error *err);

/* For tests: group g's GPUs' caps added under the last split (the budget
 * a dynamic policy shares, before any prediction). */
double control__group_budget(const control *c, size_t g);

/* For tests: the level the policy's memo of group g holds (NaN: none;
 * the efficiency policy's log mu). */
double control__group_level(const control *c, size_t g);

/* One control period from now (control.c lists its steps): the split if
 * the view says so, the workloads driven, demand response tracked, the
 * budget shared by policy, the power set. SIM_OK, or the status the
 * engine was failed with. */
int control_period(control *c, const control_view *v, sim_time now);

/* Books dt seconds with the facility over_w above the cap (may be
 * negative) into the demand-response books. */
void control_account(control *c, double over_w, double dt);

/* Closes an event still under way at end and gives the books. */
void control_finish(control *c, sim_time end, control_books *out);

/* A policy from outside (a client's, libaifsim's aifsim_set_policy): the
 * split of power_policy_ops with a context and a status (SIM_OK, or a
 * failure that stops the run). */
typedef int (*control_split_fn)(void *ctx, const power_unit *units, size_t n,
                                double budget_w, double *cap);

/* From the next allocation on, fn (with ctx) splits every rack group's
 * budget in place of the scenario's policy, every allocation period even
 * where the policy is static; NULL gives the policy back. What it returns
 * is checked: a cap outside its unit's [lo, hi] or caps over the budget
 * stop the run (SIM_ERANGE) with a message. */
void control_set_split(control *c, control_split_fn fn, void *ctx);

/* A client's budgets on sets of units (libaifsim's per job and per
 * service budgets): at every allocation, after the policy's split and
 * before the caps go to the GPUs, fn(ctx, units, key, n, cap) may lower
 * cap[k] (never below units[k].lo) of the n units, key[k] being the slot
 * each stands for (CONTROL_NO_SLOT: free GPUs). While fn is set every
 * allocation period shares the budget again, even where the policy is
 * static; NULL: none (the run is as without it). */
typedef void (*control_clamp_fn)(void *ctx, const power_unit *units,
                                 const uint32_t *key, size_t n, double *cap);
void control_set_clamp(control *c, control_clamp_fn fn, void *ctx);

/* A caller's "for each": runs fn(fctx, i) for every i < n, in any order
 * and on any threads, and returns when all have; SIM_OK, or the code of
 * the first failing i in order (crew.h's sim_crew_each is one). */
typedef int (*control_each_fn)(void *ctx, size_t n,
                               int (*fn)(void *fctx, size_t i), void *fctx);

/* From the next allocation on, the policy's split of each rack group
 * (its split_from or split, never a client's split, clamp or steering,
 * which stay in order on the calling thread) runs through each(ctx, ...)
 * with i a group: a group's split reads its units and budget and writes
 * only its own memo and caps, so the caps, and every output, are the
 * same bits whatever order or threads each runs them in. NULL: a plain
 * loop over the groups in order (the default). */
void control_set_each(control *c, control_each_fn each, void *ctx);

/* The power groups and the load target (steer.h); the control owns it. */
steer *control_steer(control *c);
const steer *control_steer_of(const control *c);

#endif
