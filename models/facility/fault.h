/* fault.h - power-domain and cooling faults (docs/MODELS.md, Faults): the schema of a
 * scenario's `faults:` entries, their expansion into the intervals each
 * is in force, and a plan that says at any time what is in force. What a
 * fault does (dark racks, a derated loop, a lower feed) is the factory's
 * (factory.c); this module knows no fleet, only rack-group names and
 * counts and loop names.
 *
 * Three kinds:
 *   pdu      a rack PDU or breaker trips: the racks named go dark;
 *   cooling  a loop keeps only `capacity` (a share) of its capacity;
 *   feed     the grid feed drops to a backup limit (W).
 * Timing is listed (`at`, `duration`: one interval) or random (`mtbf`,
 * `mttr`: up and down times drawn alternately, exponential with those
 * means, from the entry's own stream over the whole run, starting up).
 * Every interval is clipped to the run [0, horizon); one starting at or
 * after the horizon is dropped. An entry's intervals are ordered and
 * disjoint; entries may overlap each other. */
#ifndef MODELS_FAULT_H
#define MODELS_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "err.h"
#include "rng.h"
#include "scenario.h"

typedef enum fault_kind { FAULT_PDU, FAULT_COOLING, FAULT_FEED } fault_kind;

/* One entry as a scenario writes it. Fields a kind does not use stay
 * absent (NaN, NULL, empty); the schema's check refuses them. */
typedef struct fault_config {
  int kind;                /* fault_kind */
  char **racks;            /* pdu: rack names ("nvl72-3") or group names */
  size_t nracks;           /* (every rack of the group) */
  char *loop;              /* cooling: a loop name */
  double capacity;         /* cooling: the share of capacity left, [0, 1] */
  double limit_w;          /* feed: the backup power limit */
  double at_s, duration_s; /* listed timing */
  double mtbf_s, mttr_s;   /* random timing: mean up and down times */
} fault_config;

/* The schema of one entry; its check wants the kind's keys, one timing
 * and no other. Names (racks, loop) are checked by the factory, which
 * knows the fleet. */
extern const scn_schema fault_schema;

/* RNG entity kind of the faults' streams (rng.h): stream (seed,
 * FAULT_RNG_KIND, entry index, 1). */
enum { FAULT_RNG_KIND = RNG_KIND_MODEL + 0x71 };

typedef struct fault_interval {
  double start_s, end_s; /* in force over [start_s, end_s) */
} fault_interval;

/* True for mtbf/mttr timing. */
bool fault_is_random(const fault_config *c);

/* About how many intervals entry c has over horizon_s: 1 when listed,
 * horizon / (mtbf + mttr) when random. For the checks that keep a typo
 * (mtbf: 1 s) from filling memory. */
double fault_expected_events(const fault_config *c, double horizon_s);

/* The intervals of entry c (the index-th of its scenario, which names its
 * stream) over [0, horizon_s), ordered and disjoint, into *out (allocated
 * on a, NULL meaning the C library; the caller frees it with sim_free(a,
 * *out), also when *n is 0). SIM_OK or SIM_ENOMEM (*out NULL, *n 0).
 * Deterministic in (c, seed, index, horizon_s). */
int fault_expand(const fault_config *c, uint64_t seed, size_t index,
                 double horizon_s, const sim_allocator *a, fault_interval **out,
                 size_t *n);

/* ------------------------------------------------------------------ */
/* Where faults strike                                                 */
/* ------------------------------------------------------------------ */

/* The factory's names: rack groups in order (their racks are numbered
 * consecutively, group by group, as rack_fleet lays them out, and named
 * GROUP-K for K = 0 .. count - 1) and cooling loops. Borrowed arrays. */
typedef struct fault_site {
  const char *const *groups;
  const uint32_t *counts;
  size_t ngroups;
  const char *const *loops;
  size_t nloops;
} fault_site;

/* The racks a name stands for: a group name gives all its racks, a rack
 * name GROUP-K the one. *first and *n get the range of rack indices.
 * False, nothing set, for a name that is neither. */
bool fault_rack_range(const fault_site *s, const char *name, uint32_t *first,
                      uint32_t *n);

/* The index of loop name; -1 if none is called that. */
long fault_loop_index(const fault_site *s, const char *name);

/* ------------------------------------------------------------------ */
/* The plan of a run                                                   */
/* ------------------------------------------------------------------ */

typedef struct fault_plan fault_plan;

/* The n entries expanded over [0, horizon_s) for a run seeded seed, their
 * names resolved against site (entries and site are borrowed only during
 * the call). Nothing is in force until the first fault_plan_step. The
 * plan allocates on alloc (NULL means the C library), which must outlive
 * it. NULL with err set: SIM_EINPUT for a name the site does not have
 * (the scenario checks catch these first), SIM_ENOMEM. */
fault_plan *fault_plan_create(const fault_config *entries, size_t n,
                              uint64_t seed, double horizon_s,
                              const fault_site *site,
                              const sim_allocator *alloc, sim_error *err);

/* Frees the plan; NULL does nothing. */
void fault_plan_destroy(fault_plan *p);

/* Moves the plan to time t_s (never backwards): an entry is in force at
 * t when t lies in one of its intervals. Returns true when what is in
 * force (dark racks, loop shares, feed limit) changed. */
bool fault_plan_step(fault_plan *p, double t_s);

/* Entries in force now, and intervals that have begun so far (each
 * counted at the first step inside it; an interval no step fell in never
 * took effect and does not count). */
size_t fault_plan_active(const fault_plan *p);
uint64_t fault_plan_events(const fault_plan *p);

/* What is in force now: whether rack r (an index in the site's layout)
 * is dark; the share of loop l's capacity left (1: no fault; the lowest
 * share when several faults hit it); the feed's backup limit (INFINITY:
 * none; the lowest when several). */
bool fault_plan_dark(const fault_plan *p, uint32_t r);
double fault_plan_loop_share(const fault_plan *p, size_t l);
double fault_plan_feed_limit_w(const fault_plan *p);

/* Entry k's intervals (borrowed: valid while the plan lives); *n gets
 * their count. */
const fault_interval *fault_plan_intervals(const fault_plan *p, size_t k,
                                           size_t *n);

#endif
