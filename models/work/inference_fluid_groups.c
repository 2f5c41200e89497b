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
#include "bits.h"
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

/* The bits of x: equal bits are equal values, so comparing them (one
 * integer compare) finds replicas that move alike; differing bits of
 * equal values (-0, NaN: not a clock or a time here) would only cost a
 * place. */
/* The replicas from k on that stay with replica k (the same group, and
 * the same bits of clock and take time: the same move) join group to;
 * returns the first that does not. The pass's common case, kept to a
 * few loads and integer compares a replica. */
static uint32_t run_end(inf_fluid *f, uint32_t k, uint32_t nrep, uint32_t to) {
  uint32_t *of = f->of;
  const double *phi = f->phi, *took = f->took;
  uint32_t g = of[k];
  uint64_t p = sim_bits(phi[k]), t = sim_bits(took[k]);
  of[k] = to;
  uint32_t e = k + 1;
  while (e < nrep && of[e] == g && sim_bits(phi[e]) == p &&
         sim_bits(took[e]) == t)
    of[e++] = to;
  return e;
}

void inf__groups_regroup(inf_fluid *f, uint32_t nrep) {
  move kept[SCAN];
  uint32_t nkept = 0, n = 0;
  for (uint32_t k = 0; k < nrep;) {
    uint32_t g = f->of[k];
    move m = {g, 0, f->took[k] == f->grp[g].take_at, f->phi[k]};
    uint32_t to = place(f, kept, &nkept, &n, m);
    uint32_t e = f->alone ? k + 1 : run_end(f, k, nrep, to);
    if (f->alone)
      f->of[k] = to;
    f->nxt[to].n += e - k;
    k = e;
  }
  fgrp *x = f->grp;
  f->grp = f->nxt;
  f->nxt = x;
  f->ngrp = n;
}
