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
  f->run = sim_calloc(a, nrep + 1, sizeof *f->run);
  f->nxt_run = sim_calloc(a, nrep + 1, sizeof *f->nxt_run);
  if (f->grp == NULL || f->nxt == NULL || f->of == NULL || f->phi == NULL ||
      f->took == NULL || f->run == NULL || f->nxt_run == NULL)
    return SIM_ENOMEM;
  f->grp[0] = (fgrp){.st = *st, .take_at = NAN, .n = nrep};
  f->ngrp = 1;
  f->nrun = nrep > 0;
  f->runs_ok = true;
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
  sim_free(a, f->run);
  sim_free(a, f->nxt_run);
}

/* The pending part of an earlier range, [pd_lo, pd_hi) at pd_at, written
 * out to took but for replicas in [lo, hi) (a range that covers them
 * now); none left after. */
static void pend_write(inf_fluid *f, uint32_t lo, uint32_t hi) {
  for (uint32_t k = f->pd_lo; k < f->pd_hi && k < lo; k++)
    f->took[k] = f->pd_at;
  for (uint32_t k = f->pd_lo > hi ? f->pd_lo : hi; k < f->pd_hi; k++)
    f->took[k] = f->pd_at;
  f->pd_lo = f->pd_hi = 0;
}

void inf__took_settle(inf_fluid *f) {
  if (f->pd_lo < f->pd_hi)
    pend_write(f, 0, 0);
}

/* A range grown at its instant to [lo, hi): the pending replicas it
 * covers from the bottom are its own now (their took needs no write);
 * covered elsewhere, the others are written. */
static void pend_cut(inf_fluid *f, uint32_t lo, uint32_t hi) {
  if (f->pd_lo >= f->pd_hi || hi <= f->pd_lo || lo >= f->pd_hi)
    return;
  if (lo <= f->pd_lo) {
    f->pd_lo = hi < f->pd_hi ? hi : f->pd_hi;
    return;
  }
  pend_write(f, lo, hi);
}

void inf__took_range(inf_fluid *f, uint32_t lo, uint32_t hi, double now) {
  uint32_t a = f->tr_lo, b = f->tr_hi;
  if (lo < hi && a < b && f->tr_at == now && lo <= b && hi >= a) {
    lo = lo < a ? lo : a;
    hi = hi > b ? hi : b;
    pend_cut(f, lo, hi);
  } else { /* the last range's replicas outside the new one keep theirs */
    inf__took_settle(f);
    for (uint32_t k = a; k < b && k < lo; k++)
      f->took[k] = f->tr_at;
    uint32_t from = a > hi ? a : hi;
    if (lo == a && lo < hi && from < b) { /* taken from its start on */
      f->pd_lo = from;
      f->pd_hi = b;
      f->pd_at = f->tr_at;
    } else {
      for (uint32_t k = from; k < b; k++)
        f->took[k] = f->tr_at;
    }
  }
  f->tr_lo = lo;
  f->tr_hi = hi;
  f->tr_at = now;
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
    f->runs_ok = false;
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
  f->runs_ok = false;
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
  /* Field by field: the compound literal was a zeroing rep stos first. */
  fgrp *g = &f->nxt[n];
  g->st = *st;
  g->take_at = NAN;
  g->t_last = (gpu_load){0, 0, 0};
  g->t_comp = 0;
  g->n = 0;
  g->spare = false;
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

#ifdef SIM_LANES_AVX2
/* clock_end's sixteen a loop four lanes a register (AVX2, where the CPU
 * has it): where the sixteen stop. */
__attribute__((target("avx2"))) static uint32_t
clock_quads(const double *phi, uint32_t e, uint32_t lim, uint64_t p) {
  const __m256i pp = _mm256_set1_epi64x((long long)p);
  for (; e + 16 <= lim; e += 16) {
    __m256i d = _mm256_or_si256(
        _mm256_or_si256(sim_x4_xor(phi + e, pp), sim_x4_xor(phi + e + 4, pp)),
        _mm256_or_si256(sim_x4_xor(phi + e + 8, pp),
                        sim_x4_xor(phi + e + 12, pp)));
    if (!_mm256_testz_si256(d, d))
      break;
  }
  return e;
}
#endif

/* The first of phi[e .. lim) whose bits are not p: sixteen clocks a
 * loop, their xors with p or-ed and tested once, then one at a time. */
static uint32_t clock_end(const double *phi, uint32_t e, uint32_t lim,
                          uint64_t p) {
  const sim_u2 pp = {p, p};
#ifdef SIM_LANES_AVX2
  if (sim_lanes_wide())
    e = clock_quads(phi, e, lim, p);
#endif
  for (; e + 16 <= lim; e += 16) {
    sim_u2 d = (sim_u2_at(phi + e) ^ pp) | (sim_u2_at(phi + e + 2) ^ pp) |
               (sim_u2_at(phi + e + 4) ^ pp) | (sim_u2_at(phi + e + 6) ^ pp);
    sim_u2 h = (sim_u2_at(phi + e + 8) ^ pp) | (sim_u2_at(phi + e + 10) ^ pp) |
               (sim_u2_at(phi + e + 12) ^ pp) | (sim_u2_at(phi + e + 14) ^ pp);
    if (!sim_u2_zero(d | h))
      break;
  }
  while (e < lim && sim_bits(phi[e]) == p)
    e++;
  return e;
}

/* of[k .. e) = to, sixteen a loop in four four-lane stores. */
static void fill_of(uint32_t *of, uint32_t k, uint32_t e, uint32_t to) {
  const sim_u4 v = {to, to, to, to};
  for (; k + 16 <= e; k += 16) {
    sim_u4_put(of + k, v);
    sim_u4_put(of + k + 4, v);
    sim_u4_put(of + k + 8, v);
    sim_u4_put(of + k + 12, v);
  }
  for (; k < e; k++)
    of[k] = to;
}

/* The replicas from k on, below lim, that stay with replica k (the same
 * group, and the same bits of clock and take time: the same move) join
 * group to; returns the first that does not. Equal bits are equal
 * values; differing bits of equal values (-0, NaN: not a clock or a
 * time here) would only cost a place. The pass's common case, kept to
 * a few loads and integer compares a replica: within a run of one group
 * (runs) and the range taken at one time (ranged), the clock's alone. */
static uint32_t run_end(inf_fluid *f, uint32_t k, uint32_t lim, uint32_t to,
                        bool ranged) {
  uint32_t *of = f->of;
  const double *phi = f->phi, *took = f->took;
  uint32_t g = of[k], e = k + 1;
  uint64_t p = sim_bits(phi[k]), t = sim_bits(took[k]);
  of[k] = to;
  if (ranged && f->runs_ok) { /* the stretch found, then its groups */
    e = clock_end(phi, e, lim, p);
    if (to != g) /* within a run every of is g: none moves when to is */
      fill_of(of, k + 1, e, to);
    return e;
  }
  while (e < lim && of[e] == g && sim_bits(phi[e]) == p &&
         (ranged || sim_bits(took[e]) == t))
    of[e++] = to;
  return e;
}

/* Where the stretch of replica k may end: its run's end (runs) and the
 * taken range's edge; *ranged: k is in that range. */
static uint32_t stretch_lim(inf_fluid *f, uint32_t k, uint32_t nrep,
                            bool *ranged) {
  uint32_t lim = nrep;
  if (f->runs_ok)
    lim = inf__run_end(f, inf__run_of(f, k), nrep);
  *ranged = k - f->tr_lo < f->tr_hi - f->tr_lo;
  uint32_t edge = *ranged ? f->tr_hi : k < f->tr_lo ? f->tr_lo : nrep;
  return lim < edge ? lim : edge;
}

/* Adds replicas [k, e) of group to to the next runs. */
static void run_add(inf_fluid *f, uint32_t *n, uint32_t k, uint32_t to) {
  if (*n == 0 || f->nxt_run[*n - 1].g != to)
    f->nxt_run[(*n)++] = (frun){k, to};
}

void inf__groups_regroup(inf_fluid *f, uint32_t nrep) {
  move kept[SCAN];
  uint32_t nkept = 0, n = 0, nrun = 0;
  f->run_at = 0;
  for (uint32_t k = 0; k < nrep;) {
    uint32_t g = f->of[k];
    move m = {g, 0, inf__took_at(f, k) == f->grp[g].take_at, f->phi[k]};
    uint32_t to = place(f, kept, &nkept, &n, m);
    uint32_t e = k + 1;
    if (f->alone) {
      f->of[k] = to;
    } else {
      bool ranged;
      uint32_t lim = stretch_lim(f, k, nrep, &ranged);
      e = run_end(f, k, lim, to, ranged);
    }
    run_add(f, &nrun, k, to);
    f->nxt[to].n += e - k;
    k = e;
  }
  fgrp *x = f->grp;
  f->grp = f->nxt;
  f->nxt = x;
  f->ngrp = n;
  frun *r = f->run;
  f->run = f->nxt_run;
  f->nxt_run = r;
  f->nrun = nrun;
  f->run_at = 0;
  f->runs_ok = !f->alone;
}

/* ------------------------------------------------------------------ */
/* A group's load to a stretch of its members' outputs                */
/* ------------------------------------------------------------------ */

#ifdef SIM_LANES_AVX2
/* out[i .. e) = l eight loads a loop in six four-lane stores (AVX2):
 * four loads' twelve doubles are three registers' (sm mem busy sm, mem
 * busy sm mem, busy sm mem busy). The three lines 32 loads ahead are
 * asked for writing: the factory's list of loads was last read a tick
 * ago, and each store waited for its line (perf of the fluid day: about
 * a fifth fewer samples here). Where the eights stop. */
__attribute__((target("avx2"))) static uint32_t
fill_loads_quads(gpu_load *out, uint32_t i, uint32_t e, gpu_load l) {
  const sim_d4 a = {l.sm, l.mem, l.busy, l.sm},
               b = {l.mem, l.busy, l.sm, l.mem},
               c = {l.busy, l.sm, l.mem, l.busy};
  for (; i + 8 <= e; i += 8) {
    char *d = (char *)(out + i);
    __builtin_prefetch(d + 768, 1);
    __builtin_prefetch(d + 832, 1);
    __builtin_prefetch(d + 896, 1);
    sim_d4_put(d, a);
    sim_d4_put(d + 32, b);
    sim_d4_put(d + 64, c);
    sim_d4_put(d + 96, a);
    sim_d4_put(d + 128, b);
    sim_d4_put(d + 160, c);
  }
  return i;
}
#endif

void inf__fill_loads(gpu_load *out, uint32_t i, uint32_t e, gpu_load l) {
  const sim_d2 a = {l.sm, l.mem}, b = {l.busy, l.sm}, c = {l.mem, l.busy};
  _Static_assert(sizeof(gpu_load) == 3 * sizeof(double), "three doubles");
#ifdef SIM_LANES_AVX2
  if (e - i >= 8 && sim_lanes_wide())
    i = fill_loads_quads(out, i, e, l);
#endif
  for (; i + 8 <= e; i += 8) {
    char *d = (char *)(out + i);
    sim_d2_put(d, a);
    sim_d2_put(d + 16, b);
    sim_d2_put(d + 32, c);
    sim_d2_put(d + 48, a);
    sim_d2_put(d + 64, b);
    sim_d2_put(d + 80, c);
    sim_d2_put(d + 96, a);
    sim_d2_put(d + 112, b);
    sim_d2_put(d + 128, c);
    sim_d2_put(d + 144, a);
    sim_d2_put(d + 160, b);
    sim_d2_put(d + 176, c);
  }
  for (; i < e; i++)
    out[i] = l;
}

#ifdef SIM_LANES_AVX2
/* out[i .. e) = v sixteen a loop in two 64-byte stores (AVX-512), not
 * eight 16-byte ones: the two-lane loop's samples were on its stores
 * (perf of the fluid day: a quarter fewer samples in the shares' fill,
 * docs/performance-log.md, twenty-seventh session). Where the sixteens stop. */
__attribute__((target("avx2,avx512f"))) static uint32_t
fill_shares_eights(double *out, uint32_t i, uint32_t e, double v) {
  const __m512d vv = _mm512_set1_pd(v);
  for (; i + 16 <= e; i += 16) {
    _mm512_storeu_pd(out + i, vv);
    _mm512_storeu_pd(out + i + 8, vv);
  }
  return i;
}
#endif

void inf__fill_shares(double *out, uint32_t i, uint32_t e, double v) {
#ifdef SIM_LANES_AVX2
  if (e - i >= 16 && sim_lanes_512())
    i = fill_shares_eights(out, i, e, v);
#endif
  const sim_d2 vv = {v, v};
  for (; i + 16 <= e; i += 16) {
    sim_d2_put(out + i, vv);
    sim_d2_put(out + i + 2, vv);
    sim_d2_put(out + i + 4, vv);
    sim_d2_put(out + i + 6, vv);
    sim_d2_put(out + i + 8, vv);
    sim_d2_put(out + i + 10, vv);
    sim_d2_put(out + i + 12, vv);
    sim_d2_put(out + i + 14, vv);
  }
  for (; i < e; i++)
    out[i] = v;
}
