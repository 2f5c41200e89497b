/* control.c - power control, one period at a time (see control.h).
 *
 * What happens every control period (control_period), in this order:
 *  1. The clocks of the period ending now go to the models (hooks.clocks):
 *     the clocks under the caps that were in force over it, so before
 *     anything below rewrites a cap.
 *  2. The static split, when the cap, the faults or the weather changed
 *     (set_cap): rack_fleet_split under the factory's fits hook, or every
 *     GPU at its minimum if nothing fits; the budget it leaves each group
 *     (note_budgets); the emergency racks at their minimum. Then the
 *     workloads and the load for the coming period (hooks.drive): the new
 *     activities to the GPUs.
 *  3. Demand response (track_dr): an event begins when the cap falls below
 *     the contracted one and ends when it returns.
 *  4. The allocation, every allocation period of a dynamic policy or a
 *     predicted budget (allocate): the units built from the fleet and the
 *     workloads, or refreshed where their layout holds (control_units.c);
 *     the budget, reserve or predicted (predict_budgets, which takes the
 *     racks' load shares from the units where a run begins one); the
 *     policy's split per group; the caps written back to the GPUs.
 *  5. The emergency racks back at their minimum while a fault is on.
 *  6. The power in force for the period (hooks.power).
 *  7. The first tick of an event at or under its cap (check_cut).
 * The factory's control tick (factory.c on_tick) closes the last period's
 * books and samples before, and steps power quality after. */
#include "control.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "control_units.h"
#include "gpu.h"
#include "lanes.h"

_Static_assert(CONTROL_NO_SLOT == CONTROL_UNITS_FREE,
               "control_units.c takes the free GPUs' slot for control.h's");

/* A group's usable racks as note_budgets finds them: the cap their runs
 * are at and their GPUs. */
typedef struct group_cap {
  double cap;
  uint64_t gpus;
} group_cap;

struct control {
  const power_config *cfg;
  const power_policy_ops *policy;
  sim_time alloc_every; /* a dynamic policy's period */
  rack_fleet *fleet;
  sim_engine *engine;
  const sim_allocator *alloc; /* the engine's: everything below */
  control_hooks hooks;
  double *group_budget; /* per group: its GPUs' caps under the static split */
  double *alloc_budget; /* what the policy shares: that, or a prediction */
  group_cap *group_cap; /* per group: note_budgets' */
  power_memo *memo;     /* per group: what the policy remembers of it */
  steer *steer;         /* power groups and the load target */
  control_split_fn split_fn; /* a client's policy; NULL: cfg's */
  void *split_ctx;
  control_clamp_fn clamp_fn; /* a client's budgets; NULL: none */
  void *clamp_ctx;
  control_each_fn each; /* runs the groups' splits; NULL: a plain loop */
  void *each_ctx;
  control_units units; /* the policy's (control_units.c) */
  /* The demand-response event under way: when it began, whether power
   * has reached its cap yet, the request counts at its start. */
  bool dr_on, dr_met;
  sim_time dr_start;
  double dr_cap_w;   /* the cap of the event under way */
  sim_time dr_cut;   /* the last cut: its start or a step down */
  bool dr_judged;    /* the period under way counts for alignment */
  uint64_t dr_done0, dr_met0, dr_done, dr_slo_met;
  control_books books;
};

control *control_create(const power_config *cfg, rack_fleet *fl, sim_engine *e,
                        const control_hooks *hooks, sim_error *err) {
  const sim_allocator *a = sim_engine_allocator(e);
  control *c = sim_calloc(a, 1, sizeof *c);
  if (c == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  c->cfg = cfg;
  c->policy = power_policy_by_index(cfg->policy);
  c->alloc_every = (sim_time)llround(cfg->allocation_period_s * 1e9);
  c->fleet = fl;
  c->engine = e;
  c->alloc = a;
  c->hooks = *hooks;
  c->group_budget = sim_calloc(a, fl->ngroups + 1, sizeof *c->group_budget);
  c->alloc_budget = sim_calloc(a, fl->ngroups + 1, sizeof *c->alloc_budget);
  c->group_cap = sim_calloc(a, fl->ngroups + 1, sizeof *c->group_cap);
  c->memo = sim_calloc(a, fl->ngroups + 1, sizeof *c->memo);
  int units_rc = control__units_init(&c->units, fl, a);
  c->steer = steer_create(cfg->groups, cfg->ngroups, cfg->load_target,
                          cfg->nload_target, fl, a, err);
  if (c->steer == NULL || c->group_budget == NULL || c->alloc_budget == NULL ||
      c->group_cap == NULL || c->memo == NULL || units_rc != SIM_OK) {
    control_destroy(c);
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  for (size_t g = 0; g <= fl->ngroups; g++)
    c->memo[g].level = NAN;
  return c;
}

void control_destroy(control *c) {
  if (c == NULL)
    return;
  const sim_allocator *a = c->alloc;
  sim_free(a, c->group_budget);
  sim_free(a, c->alloc_budget);
  sim_free(a, c->group_cap);
  for (size_t g = 0; c->memo != NULL && g <= c->fleet->ngroups; g++)
    power_memo_clear(&c->memo[g]);
  sim_free(a, c->memo);
  control__units_fini(&c->units);
  steer_destroy(c->steer);
  sim_free(a, c);
}

/* ------------------------------------------------------------------ */
/* The budget                                                          */
/* ------------------------------------------------------------------ */

/* Whether runs q .. end - 1 have their caps at x's bits, two a turn. */
static bool runs_at_cap(const double *cap, uint32_t q, uint32_t end, double x) {
  const sim_u2 want = {sim_bits(x), sim_bits(x)};
  sim_u2 d = {0, 0};
  for (; q + 2 <= end; q += 2)
    d |= sim_u2_at(cap + q) ^ want;
  if (q < end)
    d[0] |= sim_bits(cap[q]) ^ want[0];
  return sim_u2_zero(d);
}

/* note_budgets where every group's usable racks have their runs at one
 * cap's bits (the split's, a cap a group, written to the runs while they
 * are fresh: the runs' caps the truth, caps_unfilled): rack by rack each
 * rack's runs add that cap once a GPU in order (rack_fleet_rack_caps_added),
 * so a group's budget is its cap added once for each of its racks' GPUs
 * from +0, which power_add_repeat gives at once: the same additions, a
 * step a binade the sum crosses, not a dependent add a GPU (a recap's
 * 10,224 adds in bench-10k). False, nothing written, where a rack's runs
 * differ from their group's first cap. */
static bool budgets_at_one_cap(control *c) {
  const rack_fleet *fl = c->fleet;
  group_cap *gc = c->group_cap;
  memset(gc, 0, fl->ngroups * sizeof *gc);
  for (uint32_t r = 0; r < fl->nracks; r++) {
    uint32_t q = fl->rack_run[r], end = fl->rack_run[r + 1];
    if (!rack_fleet_rack_usable(fl, r) || q == end)
      continue;
    group_cap *g = &gc[fl->group[r]];
    if (g->gpus == 0)
      g->cap = fl->run_cap_w[q];
    if (!runs_at_cap(fl->run_cap_w, q, end, g->cap))
      return false;
    assert(fl->run_first[q] == fl->first[r] &&
           fl->run_first[end - 1] + fl->run_len[end - 1] ==
               fl->first[r] + fl->count[r]); /* the runs are the rack's */
    g->gpus += fl->count[r];
  }
  for (size_t g = 0; g < fl->ngroups; g++)
    c->group_budget[g] = power_add_repeat(0, gc[g].cap, gc[g].gpus);
  return true;
}

/* What the static split gave each group's GPUs in all: the budget a
 * dynamic policy shares out, so the reserve for cooling and losses the
 * split made still holds. */
static void note_budgets(control *c) {
  const rack_fleet *fl = c->fleet;
  if (rack_fleet_runs_fresh(fl) && fl->caps_unfilled && budgets_at_one_cap(c))
    return;
  memset(c->group_budget, 0, fl->ngroups * sizeof *c->group_budget);
  /* Rack by rack: each group's caps added in GPU order, as GPU by GPU. */
  for (uint32_t r = 0; r < fl->nracks; r++) {
    if (!rack_fleet_rack_usable(fl, r)) /* dark or in emergency */
      continue;
    c->group_budget[fl->group[r]] = /* run by run when the runs are */
        rack_fleet_rack_caps_added(fl, r, c->group_budget[fl->group[r]]);
  }
}

double control__group_budget(const control *c, size_t g) {
  return c->group_budget[g];
}

int control_split(control *c, sim_error *err) {
  int rc = rack_fleet_split(c->fleet, c->hooks.fits, c->hooks.ctx, err);
  if (rc == SIM_OK)
    note_budgets(c);
  return rc;
}

/* Splits again for the cap and the weather now. A cap below the fleet's
 * floor (a deep DR cut) puts every GPU at its minimum cap; the books then
 * show the violation. */
static int set_cap(control *c) {
  int rc = rack_fleet_split(c->fleet, c->hooks.fits, c->hooks.ctx, NULL);
  if (rc == SIM_ENOMEM) /* not a cap too deep: the run cannot go on */
    return rc;
  if (rc != SIM_OK)
    rack_fleet_cap_all_min(c->fleet);
  note_budgets(c);
  rack_fleet_apply_emergency(c->fleet);
  return SIM_OK;
}

/* A rack of one term, t, added m times from +0 (direct_rack_shares): the
 * sum is a function of t and m alone, so a rack like the one before
 * takes the sum kept from it, the same bits without the adds. At
 * bench-10k's fluid tick some 103 of the 142 racks are such a rack the
 * same as the one before (a training job's racks, the free GPUs'
 * racks). */
typedef struct shares_kept {
  uint64_t t; /* the term's bits */
  uint32_t m; /* its count; 0: nothing kept */
  double a;
} shares_kept;

/* Whether units 1 .. m - 1 of a rack (alike: its first's marks) are each
 * marked alike the one before (control_units.h's alike: its GPUs as many,
 * so its run's length the same, and its load's base the one before's, so
 * its share too): every term of the rack's sum is then its first's.
 * Unit 1's mark first: at the request level's peak few racks have it,
 * and reading every rack's marks cost more there than it saved. Then
 * the marks eight a word, the words and-ed: a byte of the result is zero
 * where some word's is (and where two nonzero marks share no bit, which
 * the marks, 0 or 1, never do: that would only send the rack to its
 * adds), tested by the usual zero-byte test; the last word read where
 * the marks end (it may overlap the one before). A rack's 17 marks (18
 * runs, bench-10k) are two reads of sixteen and a fold, not three
 * words in a loop. A call to memchr a rack cost more than the adds it
 * saved. */
static inline bool one_term(const uint8_t *alike, uint32_t m) {
  const uint8_t *a = alike + 1;
  uint32_t n = m - 1, i = 0;
  if (m < 2 || a[0] == 0)
    return false;
  if (m < 9) { /* fewer than eight marks: one at a time */
    for (; i < n; i++)
      if (a[i] == 0)
        return false;
    return true;
  }
  uint64_t all, w;
  if (n <= 16) { /* the first eight and the last (they may overlap) */
    memcpy(&all, a, sizeof all);
    memcpy(&w, a + n - 8, sizeof w);
    all &= w;
  } else { /* sixteen a turn, the last sixteen read where the marks end */
    sim_u2 all2 = sim_u2_at(a + n - 16);
    for (; i + 16 < n; i += 16)
      all2 &= sim_u2_at(a + i);
    all = all2[0] & all2[1];
  }
  return ((all - 0x0101010101010101u) & ~all & 0x8080808080808080u) == 0;
}

/* The terms k[q] share[q] of a rack's m runs added in order from +0. */
static inline double rack_terms(const double *k, const double *share,
                                uint32_t m) {
  double a = 0;
#pragma GCC unroll 4 /* the same additions in the same order */
  for (uint32_t q = 0; q < m; q++)
    a += k[q] * share[q];
  return a;
}

/* rack_load_shares of a rack whose runs are its units, in order. The
 * lengths as the runs keep them in doubles (run_k: the same values, so
 * the same products), not converted a run at a time. alike: the units'
 * marks (NULL: none), kept: the last rack of one term. */
static inline double direct_rack_shares(const rack_fleet *fl,
                                        const control_units *cu,
                                        const uint8_t *alike, uint32_t r,
                                        shares_kept *kept) {
  const double *k = fl->run_k + fl->rack_run[r];
  const double *share_u = cu->share + cu->rack_unit[r];
  const uint32_t m = fl->rack_run[r + 1] - fl->rack_run[r];
  const bool one = alike != NULL && one_term(alike + cu->rack_unit[r], m);
  const uint64_t t = one ? sim_bits(k[0] * share_u[0]) : 0;
  if (one && kept->m == m && kept->t == t) {
    assert(sim_same_bits(rack_terms(k, share_u, m), kept->a));
    return kept->a;
  }
  double a = rack_terms(k, share_u, m);
  if (one)
    *kept = (shares_kept){t, m, a};
  return a;
}

/* The sum of rack r's GPUs' load shares. GPUs next to each other mostly
 * share their load (a replica's, a stage's): one like the GPU before
 * takes its share, the same bits gpu_load_share gives. A run made of a
 * unit's first GPU takes the unit's share (run_unit, with the runs fresh):
 * made from that GPU's load by the same call, it is the same bits, and
 * the run's load is not read again (at a million GPUs that read went
 * to every cache line of three per-GPU arrays). */
static double rack_load_shares(const rack_fleet *fl, const control_units *cu,
                               const uint32_t *run_unit, const uint8_t *alike,
                               uint32_t r, shares_kept *kept) {
  double a = 0, share = 0;
  gpu_load last = {NAN, NAN, NAN};
  if (rack_fleet_runs_fresh(fl)) { /* a run's GPUs share their load */
    const uint32_t *len = fl->run_len;
    const double *unit_share = cu->share;
    if (cu->rack_direct[r]) /* run q the unit at its place: no test */
      return direct_rack_shares(fl, cu, alike, r, kept);
    for (uint32_t q = fl->rack_run[r], end = fl->rack_run[r + 1]; q < end;
         q++) {
      uint32_t u = run_unit[q];
      if (u != CONTROL_UNITS_NONE) {
        a += len[q] * unit_share[u];
        continue;
      }
      if (fl->run_sm[q] != last.sm || fl->run_mem[q] != last.mem ||
          fl->run_busy[q] != last.busy) { /* the runs': the GPUs' may lag */
        last = rack_run_load(fl, q);
        share = gpu_load_share(fl->types[fl->run_type[q]], last);
      }
      a += len[q] * share;
    }
    return a;
  }
  for (uint32_t i = fl->first[r]; i < fl->first[r] + fl->count[r]; i++) {
    if (!rack_load_is(fl, i, last)) { /* a rack holds one GPU type */
      last = rack_gpu_load(fl, i);
      share = gpu_load_share(fl->types[fl->type[i]], last);
    }
    a += share;
  }
  return a;
}

/* The racks' other IT power in the coming period: linear in each rack's
 * mean GPU activity, which the workloads and the background load have
 * set for it already. The units are built (or refreshed) for this
 * period first, so their shares stand for their runs. */
static double other_it_next(control *c) {
  const rack_fleet *fl = c->fleet;
  const uint32_t *run_unit = c->units.run_unit; /* mapped: allocate */
  /* Smoothed, the units' marks say alike in their smoothed loads, not
   * in the loads their shares are of (control_units_smooth.c). */
  const uint8_t *alike = control__units_smoothing(&c->units)
                             ? NULL
                             : control__units_alike(&c->units);
  double sum = 0;
  shares_kept kept = {0, 0, 0};
  for (uint32_t r = 0; r < fl->nracks; r++)
    sum += fl->other_idle_w[r] + (fl->other_max_w[r] - fl->other_idle_w[r]) *
                                     rack_load_shares(fl, &c->units, run_unit,
                                                      alike, r, &kept) /
                                     fl->count[r];
  return sum;
}

/* The budget predicted for the coming period. Last period the facility
 * drew F for IT power I (at the racks' inlets, their conversion losses L
 * inside it); the power chain, cooling and smoothing, R = F - I, grow
 * with the IT they serve: k = R / I per IT watt, and so do the losses: l
 * = L / I. With the racks' other IT in the coming period O (known:
 * activities are set before power is), the GPUs may draw
 *
 *   cap (1 - margin) (1 - l) / (1 + k) - O.
 *
 * budget_margin keeps back what the proportional picture misses (cooling
 * lags its heat; conversion efficiency varies with load). The static
 * reserve stays the floor, and faults keep it: their racks' budgets are
 * not the fleet's usual share. */
static void predict_budgets(control *c, const control_view *v) {
  const power_config *cfg = c->cfg;
  size_t n = c->fleet->ngroups;
  memcpy(c->alloc_budget, c->group_budget, n * sizeof *c->alloc_budget);
  double it = v->it_w;
  if (cfg->budget != BUDGET_PREDICT || v->fault_on || !(it > 0))
    return;
  double k = fmax(0, v->facility_w - it) / it, l = v->psu_loss_w / it;
  double predicted = v->limit_w * (1 - cfg->budget_margin) * (1 - l) / (1 + k) -
                     other_it_next(c);
  double reserve = 0;
  for (size_t g = 0; g < n; g++)
    reserve += c->group_budget[g];
  double scale = reserve > 0 ? fmax(1, predicted / reserve) : 1;
  for (size_t g = 0; g < n; g++)
    c->alloc_budget[g] = c->group_budget[g] * scale;
}

/* ------------------------------------------------------------------ */
/* The allocation                                                      */
/* ------------------------------------------------------------------ */

/* A client's split of group g's budget, checked: every cap in its
 * unit's range, the caps within the budget (to rounding). */
static int split_outside(control *c, size_t g, sim_time now) {
  const control_units *cu = &c->units;
  size_t first = cu->group_first[g], n = cu->group_first[g + 1] - first;
  const power_unit *u = cu->u + first;
  double *cap = cu->cap + first, budget = c->alloc_budget[g];
  int rc = c->split_fn(c->split_ctx, u, n, budget, cap);
  if (rc != SIM_OK) /* its own code is not the simulator's to pass on */
    return sim_engine_fail(c->engine, SIM_ECANCELED,
                           "the policy at %.0f s failed (it returned %d)",
                           sim_time_to_s(now), rc);
  for (size_t k = 0; k < n; k++)
    if (!(cap[k] >= u[k].lo && cap[k] <= u[k].hi))
      return sim_engine_fail(c->engine, SIM_ERANGE,
                             "the policy at %.0f s: unit %zu's cap %g W is "
                             "outside its range [%g, %g] W",
                             sim_time_to_s(now), k, cap[k], u[k].lo, u[k].hi);
  double total = power_total(u, n, cap);
  if (!(total <= budget * (1 + 1e-12)))
    return sim_engine_fail(c->engine, SIM_ERANGE,
                           "the policy at %.0f s: the caps add up to %.9g W, "
                           "over the budget %.9g W",
                           sim_time_to_s(now), total, budget);
  return SIM_OK;
}

/* What the policy's split of each group reads and where it writes:
 * split_group's context, the same for every group. */
typedef struct group_split {
  control *c;
  const uint8_t *alike; /* control__units_alike: NULL none */
  double *caps;         /* group g's caps at caps + group_first[g] on */
} group_split;

/* The policy's split of group g (none of no units): it reads the group's
 * units, alike marks and budget, and writes only its own memo and caps
 * (the policy's counts and scratch are its split's own, power.h), so
 * two groups' splits may run at once (control_set_each). */
static int split_group(void *ctx, size_t g) {
  const group_split *s = ctx;
  control *c = s->c;
  const control_units *cu = &c->units;
  size_t first = cu->group_first[g], n = cu->group_first[g + 1] - first;
  if (n == 0)
    return SIM_OK;
  if (c->policy->split_from != NULL) /* from last period's */
    c->policy->split_from(cu->u + first, n, c->alloc_budget[g],
                          s->caps + first, &c->memo[g],
                          s->alike != NULL ? s->alike + first : NULL);
  else
    c->policy->split(cu->u + first, n, c->alloc_budget[g], s->caps + first);
  return SIM_OK;
}

/* Every group's split by policy, through the caller's each where set (in
 * any order, or at once), else in group order. */
static int split_groups(control *c, group_split *s) {
  size_t ngroups = c->fleet->ngroups;
  if (c->each != NULL)
    return c->each(c->each_ctx, ngroups, split_group, s);
  for (size_t g = 0; g < ngroups; g++)
    split_group(s, g);
  return SIM_OK;
}

/* Shares each group's budget among its units (built) by policy. */
static int split_units(control *c, sim_time now) {
  control_units *cu = &c->units;
  /* The units' runs as the build knows them: the policy need not compare
   * the units to find them (control_units.c, fill_and_mark). Straight to
   * the runs' caps where they are the units' (no client split or clamp
   * reads cu->cap): not written twice. */
  group_split s = {c, control__units_alike(cu),
                   c->split_fn == NULL && c->clamp_fn == NULL
                       ? control__units_caps_to(cu, c->fleet)
                       : cu->cap};
  int rc;
  if (steer_active(c->steer)) /* the power groups share their budgets */
    steer_budgets(c->steer, cu->u, cu->group_first, c->alloc_budget);
  if (c->split_fn != NULL) { /* a client's: a group at a time, in order */
    for (size_t g = 0; g < c->fleet->ngroups; g++)
      if (cu->group_first[g + 1] > cu->group_first[g] &&
          (rc = split_outside(c, g, now)) != SIM_OK)
        return rc;
  } else if ((rc = split_groups(c, &s)) != SIM_OK)
    return rc;
  if (c->clamp_fn != NULL)
    c->clamp_fn(c->clamp_ctx, cu->u, cu->key, cu->n, cu->cap);
  control__units_write_caps(cu, c->fleet, s.caps);
  return SIM_OK;
}

/* Whether the units' refresh may leave the marked units unwritten
 * (control_units.h's lazy): none but the efficiency policy reads them
 * (no client split, clamp or steering) and it reads only each run's
 * first unit (its work arrays made for every group's units as built). */
static bool units_lazy(const control *c) {
  const control_units *cu = &c->units;
  if (!cu->built || c->split_fn != NULL || c->clamp_fn != NULL ||
      steer_active(c->steer) ||
      c->policy->split_from != power_split_efficiency_from)
    return false;
  for (size_t g = 0; g < c->fleet->ngroups; g++) {
    size_t n = cu->group_first[g + 1] - cu->group_first[g];
    if (n > 0 && !power_memo_ready(&c->memo[g], n))
      return false;
  }
  return true;
}

/* A dynamic policy (or a predicted budget, or power groups) shares the
 * budget again every allocation period, once the workloads have set the
 * GPUs' activities. */
static int allocate(control *c, const control_view *v, sim_time now) {
  bool predict = c->cfg->budget == BUDGET_PREDICT;
  if ((c->cfg->policy == POWER_STATIC && !predict &&
       !steer_active(c->steer) && c->split_fn == NULL &&
       c->clamp_fn == NULL) ||
      (c->alloc_every > 0 && now % c->alloc_every != 0))
    return SIM_OK;
  /* The units first: the prediction reads their loads' shares. */
  const control_hooks *h = &c->hooks;
  uint64_t changes = h->slots_changed != NULL ? h->slots_changed(h->ctx) : 0;
  c->units.lazy = units_lazy(c);
  for (size_t g = 0; g < c->fleet->ngroups; g++) /* while the units build */
    power_memo_ask(&c->memo[g]); /* a policy without the hash: nothing */
  int rc = control__units_smooth_begin(&c->units, c->fleet,
                                       c->cfg->activity_smoothing_s,
                                       sim_time_to_s(now));
  if (rc == SIM_OK)
    rc = control__units_build(&c->units, c->fleet, h->gpu_slots(h->ctx),
                              h->slots_changed != NULL ? &changes : NULL,
                              h->slot_units, h->ctx);
  if (rc == SIM_OK)
    rc = control__units_map_runs(&c->units, c->fleet);
  if (rc == SIM_OK) {
    predict_budgets(c, v);
    rc = split_units(c, now);
  }
  if (rc == SIM_ENOMEM)
    return sim_engine_fail(c->engine, SIM_ENOMEM,
                           "power allocation at %.0f s: out of memory",
                           sim_time_to_s(now));
  return rc;
}

/* ------------------------------------------------------------------ */
/* Demand response                                                     */
/* ------------------------------------------------------------------ */

/* An event begins when the cap falls below the contracted one (on) and
 * ends when it returns; the requests completed in between and the first
 * tick whose power fits the cut are its books. */
static void track_dr(control *c, bool on, sim_time now) {
  uint64_t done, met;
  if (on != c->dr_on) {
    c->hooks.request_counts(c->hooks.ctx, &done, &met);
    if (on) {
      c->dr_start = now;
      c->dr_met = false;
      c->dr_done0 = done;
      c->dr_met0 = met;
      c->books.dr_events++;
    } else {
      c->dr_done += done - c->dr_done0;
      c->dr_slo_met += met - c->dr_met0;
    }
    c->dr_on = on;
  }
}

/* After power is set: the first tick of an event at or under its cap. */
static void check_cut(control *c, double facility_w, double cap_w,
                      sim_time now) {
  if (!c->dr_on || c->dr_met || facility_w > cap_w)
    return;
  c->dr_met = true;
  c->books.dr_time_to_cut_s =
      fmax(c->books.dr_time_to_cut_s, sim_time_to_s(now - c->dr_start));
}

/* A period is judged for alignment when it begins a response window or
 * more after the last cut; a step down of the cap within an event is a
 * cut of its own (an operator's next target). */
static void track_cut(control *c, const control_view *v, sim_time now) {
  if (!c->dr_on) {
    c->dr_cap_w = INFINITY;
    c->dr_judged = false;
    return;
  }
  if (now == c->dr_start || v->cap_w < c->dr_cap_w)
    c->dr_cut = now;
  c->dr_cap_w = v->cap_w;
  c->dr_judged =
      !isnan(v->dr_window_s) && sim_time_to_s(now - c->dr_cut) >= v->dr_window_s;
}

void control_account(control *c, double over_w, double dt) {
  if (c->dr_on) {
    c->books.dr_s += dt;
    c->books.dr_over_j += fmax(0, over_w) * dt;
  }
  if (c->dr_on && c->dr_judged) {
    c->books.dr_judged_s += dt;
    c->books.dr_aligned_s += over_w <= 0 ? dt : 0;
  }
}

void control_finish(control *c, sim_time end, control_books *out) {
  if (c->dr_on) /* an event still under way at the end */
    track_dr(c, false, end);
  c->books.dr_slo_attainment =
      c->dr_done > 0 ? (double)c->dr_slo_met / (double)c->dr_done : NAN;
  *out = c->books;
}

/* ------------------------------------------------------------------ */
/* The period                                                          */
/* ------------------------------------------------------------------ */

int control_period(control *c, const control_view *v, sim_time now) {
  if (c->hooks.clocks != NULL)
    c->hooks.clocks(c->hooks.ctx);
  if (v->recap && set_cap(c) != SIM_OK)
    return sim_engine_fail(c->engine, SIM_ENOMEM,
                           "power split at %.0f s: out of memory",
                           sim_time_to_s(now));
  c->hooks.drive(c->hooks.ctx, now);
  track_dr(c, v->dr, now);
  track_cut(c, v, now);
  int rc = allocate(c, v, now);
  if (v->fault_on) /* after the policy: nothing undoes the emergency */
    rack_fleet_apply_emergency(c->fleet);
  double facility = v->facility_w;
  if (rc == SIM_OK)
    rc = c->hooks.power(c->hooks.ctx, now, &facility);
  check_cut(c, facility, v->cap_w, now);
  return rc;
}

void control_set_split(control *c, control_split_fn fn, void *ctx) {
  c->split_fn = fn;
  c->split_ctx = ctx;
}

void control_set_clamp(control *c, control_clamp_fn fn, void *ctx) {
  c->clamp_fn = fn;
  c->clamp_ctx = ctx;
}

double control__group_level(const control *c, size_t g) {
  return c->memo[g].level;
}

void control_set_each(control *c, control_each_fn each, void *ctx) {
  c->each = each;
  c->each_ctx = ctx;
}

steer *control_steer(control *c) { return c->steer; }

const steer *control_steer_of(const control *c) { return c->steer; }
