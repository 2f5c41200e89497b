/* inference_fluid_groups.c - a fluid service's replicas kept in groups
 * of one state (issue 24). A replica's whole state (fstate: its queue,
 * batch and activity integrals, and the clock of the next span) decides
 * what it does, so replicas whose states are equal bit for bit are one
 * group: a span is solved and applied once per group, and a replica's
 * load read from its group.
 *
 * The factory still calls per replica, and each call stays a few
 * stores: set_clock writes the replica's clock for the next span,
 * take_load works out the group's taken load once (the first member
 * asked at an instant) and notes the time in the replica's took. At the
 * next span, regroup passes over the replicas once and puts each in the
 * group of (its group, its clock, whether it was taken): replicas that
 * did the same stay together, ones that parted get a group of their
 * own, and a new state equal to another group's (looked for while the
 * groups are few) joins it. The new groups come in the order of their
 * first replicas, as a pass over replicas kept one by one would meet
 * their states, so every sum runs in the same order and every answer is
 * the per-replica one, bit for bit
 * (tests/work/test_inference_fluid_groups.c). */
#include "inference_fluid_internal.h"

#include <math.h>
#include <string.h>

/* New groups looked through for an equal state, and moves kept during a
 * regroup: beyond these, a state makes a new group (the answer is the
 * same; only the sharing is lost). */
enum { SCAN = 16 };

int inf__groups_start(const sim_allocator *a, inf_fluid *f, uint32_t nrep,
                      const fstate *st) {
  f->grp = sim_calloc(a, nrep, sizeof *f->grp);
  f->nxt = sim_calloc(a, nrep, sizeof *f->nxt);
  f->of = sim_calloc(a, nrep, sizeof *f->of);
  f->phi = sim_calloc(a, nrep, sizeof *f->phi);
  f->took = sim_calloc(a, nrep, sizeof *f->took);
  if (f->grp == NULL || f->nxt == NULL || f->of == NULL || f->phi == NULL ||
      f->took == NULL)
    return SIM_ENOMEM;
  f->grp[0] = (fgrp){.st = *st, .take_at = NAN, .n = nrep};
  f->ngrp = 1;
  for (uint32_t k = 0; k < nrep; k++) {
    f->phi[k] = st->phi;
    f->took[k] = NAN;
  }
  return SIM_OK;
}

void inf__groups_free(const sim_allocator *a, inf_fluid *f) {
  sim_free(a, f->grp);
  sim_free(a, f->nxt);
  sim_free(a, f->of);
  sim_free(a, f->phi);
  sim_free(a, f->took);
}

/* The state of group g's members, taken or not. */
static fstate state_of(const fgrp *g, bool taken) {
  fstate r = g->st;
  if (taken) {
    r.last_act = g->t_last;
    r.comp_mean = g->t_comp;
    r.act_int = (gpu_load){0, 0, 0};
    r.comp_int = 0;
    r.act_since = g->take_at;
  }
  return r;
}

fstate inf__rep_state(const inf_fluid *f, uint32_t k) {
  fstate r = state_of(inf__grp(f, k), inf__took(f, k));
  r.phi = f->phi[k];
  return r;
}

void inf__rep_alone(inf_fluid *f, uint32_t k, const fstate *st) {
  fgrp *g = inf__grp(f, k);
  if (g->n > 1) {
    g->n--;
    f->of[k] = f->ngrp++; /* fewer than nrep: g had two members or more */
    g = inf__grp(f, k);
  }
  *g = (fgrp){.st = *st, .take_at = NAN, .n = 1};
}

void inf__groups_alone(inf_fluid *f, uint32_t nrep) {
  for (uint32_t k = 0; k < nrep; k++) {
    f->grp[k] = f->grp[0];
    f->grp[k].n = 1;
    f->of[k] = k;
  }
  f->ngrp = nrep;
  f->alone = true;
}

/* A move of a regroup: members of group g, taken or not, at clock phi,
 * go to new group to. */
typedef struct move {
  uint32_t g, to;
  bool taken;
  double phi;
} move;

/* The new group for state st: an equal one already made, or a new one. */
static uint32_t new_group(inf_fluid *f, uint32_t n, const fstate *st) {
  for (uint32_t i = n > SCAN ? n - SCAN : 0; i < n && !f->alone; i++)
    if (memcmp(&f->nxt[i].st, st, sizeof *st) == 0)
      return i;
  f->nxt[n] = (fgrp){.st = *st, .take_at = NAN};
  return n;
}

/* Where the members of group g, taken or not, at clock phi go: a move
 * kept this regroup, or a new one. */
static uint32_t place(inf_fluid *f, move *kept, uint32_t *nkept, uint32_t *n,
                      move m) {
  for (uint32_t i = 0; i < *nkept && !f->alone; i++)
    if (kept[i].g == m.g && kept[i].taken == m.taken && kept[i].phi == m.phi)
      return kept[i].to;
  fstate st = state_of(&f->grp[m.g], m.taken);
  st.phi = m.phi;
  m.to = new_group(f, *n, &st);
  if (m.to == *n)
    ++*n;
  kept[*nkept < SCAN ? (*nkept)++ : SCAN - 1] = m;
  return m.to;
}

/* The bits of x: equal bits are equal values (a clock or a time here
 * is never -0 or NaN), so comparing them, one integer compare, finds
 * the common case; differing bits of equal values would only cost a
 * place. */
static inline uint64_t bits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* The pass is over every replica, each tick: its common case (the same
 * group, clock and take time as the replica before) is kept to a few
 * loads and integer compares, the members counted in a run. */
void inf__groups_regroup(inf_fluid *f, uint32_t nrep) {
  move kept[SCAN], last = {UINT32_MAX, 0, false, NAN};
  uint32_t nkept = 0, n = 0, run = 0;
  uint64_t last_phi = bits(NAN), last_took = bits(NAN);
  uint32_t *of = f->of;
  const double *phi = f->phi, *took = f->took;
  bool alone = f->alone;
  for (uint32_t k = 0; k < nrep; k++) {
    uint32_t g = of[k];
    uint64_t p = bits(phi[k]), t = bits(took[k]);
    if (((g ^ last.g) | (p ^ last_phi) | (t ^ last_took)) != 0 || alone) {
      if (run > 0)
        f->nxt[last.to].n += run;
      run = 0;
      last = (move){g, 0, took[k] == f->grp[g].take_at, phi[k]};
      last.to = place(f, kept, &nkept, &n, last);
      last_phi = p;
      last_took = t;
    }
    of[k] = last.to;
    run++;
  }
  if (run > 0)
    f->nxt[last.to].n += run;
  fgrp *x = f->grp;
  f->grp = f->nxt;
  f->nxt = x;
  f->ngrp = n;
}
