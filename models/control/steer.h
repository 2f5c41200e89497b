/* steer.h - power steering (docs/MODELS.md, Power groups and the load
 * target): power groups that share the GPUs' budget between sets of rack
 * groups, and the grid's load target the facility follows below its cap.
 * Power control (control.c) owns one and asks it, at every allocation,
 * for the rack groups' budgets before the policy splits them.
 *
 * A power group is a named set of rack groups with one budget for their
 * GPUs (the sum of their GPUs' caps, W). Its share is what the facility's
 * split gives its racks; its own budget is that share, at most its cap
 * (never below its GPUs' minimum caps), and what other groups' caps hold
 * back goes to the uncapped groups' own budgets in proportion to their
 * shares. A group that borrows and wants more than its own budget (its
 * GPUs' demand, each within its cap range) takes, highest priority
 * first, what lending groups of its priority or lower leave unused of
 * theirs; a lender never
 * gives more than it leaves unused, so it keeps its demand, and takes it
 * back at the next allocation when its demand returns. Every rack group
 * in no power group keeps its share. The budgets never add up to more
 * than the shares: the facility's split still holds the cap.
 *
 * The load target is a facility power the grid asks for, below the cap:
 * the split holds the facility under the lower of the two. A target above
 * what the factory draws is not a floor: nothing raises the load. */
#ifndef MODELS_STEER_H
#define MODELS_STEER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "err.h"
#include "power.h"
#include "rack.h"
#include "scenario.h"

/* One power group of the scenario (power.groups). */
typedef struct power_group_config {
  char *name;
  char **racks; /* rack group names */
  size_t nracks;
  double cap_w; /* its GPUs' budget at most, W; NaN: none */
  int64_t priority;
  bool borrow, lend;
} power_group_config;

/* One step of the scenario's load target (power.load_target): from from_s
 * on, the facility held at target_w or under (NaN: no target). */
typedef struct power_target_step {
  double from_s, target_w;
} power_target_step;

/* The most power groups a scenario may have. */
#define STEER_MAX_GROUPS 256

extern const scn_schema steer_group_schema;
extern const scn_schema steer_target_schema;

/* Checks what spans power.groups and the rack groups (names: the rack
 * groups', n of them): every rack named is a rack group, in one power
 * group at most; group names unique, STEER_MAX_GROUPS at most; the
 * target's steps in time order.
 * gloc is the power key's location. SIM_OK or SIM_EINPUT at
 * FILE:LINE:COLUMN. */
int steer_check(const power_group_config *groups, size_t ngroups,
                const power_target_step *target, size_t ntarget,
                const char *const *names, size_t n, const scn_loc *loc,
                sim_error *err);

/* What a power group brings to one allocation, in W of GPU caps. */
typedef struct steer_need {
  double share; /* what the facility's split gives its racks */
  double floor; /* its GPUs at their minimum caps (<= share) */
  double want;  /* their demand, each within [lo, hi] (>= floor) */
  double cap;   /* NaN: none */
  int64_t priority;
  bool borrow, lend;
} steer_need;

/* The groups' budgets (the contract at the top): budget[p] for need[p],
 * p < n <= STEER_MAX_GROUPS. own[p] (may be NULL) gets each one's own budget.
 */
void steer_share(const steer_need *need, size_t n, double *budget, double *own);

/* A power group's budget spread over its rack groups, k of them, with
 * floors, wants and tops (their GPUs at the top of their ranges) f, w, h
 * and shares s: up to its wants in proportion to want above floor, then
 * what is left in proportion to the room to the top (to the shares when
 * none is left). out[i] for rack group i. */
void steer_spread(double budget, const double *f, const double *w,
                  const double *h, const double *s, size_t k, double *out);

typedef struct steer steer;

/* Steering for cfg's groups and target over fleet fl (both borrowed: they
 * outlive it); rack groups are matched by name. NULL with err set
 * (SIM_ENOMEM). */
steer *steer_create(const power_group_config *groups, size_t ngroups,
                    const power_target_step *target, size_t ntarget,
                    const rack_fleet *fl, const sim_allocator *a,
                    sim_error *err);
void steer_destroy(steer *s); /* NULL does nothing */

/* Whether there are power groups (the allocation runs every period). */
bool steer_active(const steer *s);

/* At an allocation: each rack group's budget alloc_budget[g] (in: the
 * split's, out: after the groups shared theirs), from the policy's units
 * of group g, units[first[g], first[g + 1]). */
void steer_budgets(steer *s, const power_unit *units, const size_t *first,
                   double *alloc_budget);

/* The power groups: how many, p's name, rack group g's (-1: none). */
size_t steer_ngroups(const steer *s);
const char *steer_group_name(const steer *s, size_t p);
const char *const *steer_group_names(const steer *s);
int steer_group_of(const steer *s, size_t g);

/* Group p at the last allocation, W: its cap in force (NaN: none), own
 * budget, budget after borrowing and lending, and want. */
typedef struct steer_group_now {
  double cap_w, own_w, budget_w, want_w;
} steer_group_now;
void steer_group_state(const steer *s, size_t p, steer_group_now *out);

/* A client's cap for group p from the next allocation (NaN: the
 * scenario's; INFINITY: none), and its borrowing and lending. */
void steer_set_cap(steer *s, size_t p, double cap_w);
void steer_set_lending(steer *s, size_t p, bool borrow, bool lend);

/* The load target at t s (NaN: none): a client's, else the scenario's
 * step in force. Whether the scenario gives one. */
double steer_target(const steer *s, double t);
bool steer_has_target(const steer *s);

/* A client's target from the next tick (NaN: the scenario's again;
 * INFINITY: none). */
void steer_set_target(steer *s, double target_w);

#endif
