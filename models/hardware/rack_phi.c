/* rack_phi.c - runs' clocks a stretch at a time through the fleet's
 * cache of solved clocks (rack_internal.h; its one-by-one lookups are
 * rack.c's), and a rack's clocks for its sums (rack__phis_at): the
 * cache's misses solved together. */
#include "bits.h"
#include "rack.h"
#include "rack_internal.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>

/* A stretch's misses: their caps, loads, places in the stretch and
 * cache entries (NULL: no cache). The recent entries in front of the
 * cache (rack_phi_gate) are the one-by-one lookups' only: a stretch's
 * keys (the request level's, at its peak) seldom come again soon, and
 * looking there and writing them cost its period about 70 k
 * instructions (1.20 M -> 1.31 M in rack__runs_phi_remember). */
typedef struct runs_misses {
  double cap[RACK_RUNS_BATCH];
  gpu_load l[RACK_RUNS_BATCH];
  uint32_t at[RACK_RUNS_BATCH];
  rack_phi_memo *slot[RACK_RUNS_BATCH];
  uint32_t n;
} runs_misses;

/* n >= 1 misses of one type t solved into phi: a lone one alone (no
 * type's view to share), else together (gpu_load_clocks_under_caps). */
static void misses_of_type(const rack_fleet *f, uint16_t t, uint32_t n,
                           const double *cap, const gpu_load *l, double *phi) {
  if (n == 1)
    phi[0] = gpu_load_clock_under_cap(f->types[t], cap[0], l[0]);
  else
    gpu_load_clocks_under_caps(f->types[t], n, cap, l, phi);
}

/* The stretch's caps, loads and cache entries (NULL: none), each
 * entry's line asked for: at the request level's peak the stretch's
 * keys are new and their entries' lines in memory, and asked for
 * together their waits overlap, where the lookups' loop, one after
 * another, waited on each (43% of rack__runs_phi_remember's samples on
 * the entry's first read). */
typedef struct runs_keys {
  double cap[RACK_RUNS_BATCH];
  gpu_load l[RACK_RUNS_BATCH];
  rack_phi_memo *slot[RACK_RUNS_BATCH];
} runs_keys;

/* Whether a stretch's keys have cache entries: not while the gate is
 * sparse (under one read in RACK_PHI_SPARSE_HITS hits), when its keys
 * are solved without a read or a write. At bench-10k's request peak 96%
 * of the stretches' keys met the gate sparse and 2.7% of them were
 * found there, and each key's entry is a line from memory: read or
 * written, every key's cost more than the solves it spared (the
 * thirty-first session's), and so did one key's in RACK_PHI_SAMPLE and
 * in 64 (perf of the peak: rack__runs_phi_remember 1.41-1.63% of the
 * samples, 1.04-1.19% at one in 64, 0.57% with none). The one-by-one
 * lookups (rack.c's) and the racks' sums (rack__phis_at) still read
 * while sparse, and their hits end the sparse state. A key not looked
 * up is solved, the same bits. */
static bool keys_looked_up(const rack_fleet *f) {
  return f->phi_memo != NULL && !f->phi_gate->sparse;
}

static void runs_keys_of(const rack_fleet *f, uint16_t t, uint32_t q,
                         const uint32_t *rack, uint32_t n, bool look,
                         runs_keys *k) {
  for (uint32_t j = 0; j < n; j++) {
    assert(f->run_type[q + j] == t);
    k->cap[j] = rack_run_cap_w(f, q + j, rack[j]);
    k->l[j] = rack_run_load(f, q + j);
    k->slot[j] = look ? rack__memo_slot(f, t, k->cap[j], k->l[j]) : NULL;
    if (k->slot[j] != NULL)
      __builtin_prefetch(k->slot[j], 1);
  }
}

/* Whether key j's entry holds its clock, read as the gate reads. */
static bool key_found(const rack_fleet *f, const runs_keys *k, uint32_t j,
                      uint16_t t) {
  const rack_phi_memo *e = k->slot[j];
  return e != NULL && rack__memo_hit(f, e, t, k->cap[j], k->l[j], false);
}

/* The n keys' clocks into phi through their cache entries: the hits
 * read, the misses solved together and written to their entries in
 * order, as one by one. */
static void keys_through_cache(const rack_fleet *f, uint16_t t,
                               const runs_keys *k, uint32_t n, double *phi) {
  runs_misses m;
  double solved[RACK_RUNS_BATCH];
  m.n = 0;
  for (uint32_t j = 0; j < n; j++) {
    rack_phi_memo *e = k->slot[j];
    if (key_found(f, k, j, t)) {
      phi[j] = e->phi;
    } else {
      m.cap[m.n] = k->cap[j], m.l[m.n] = k->l[j], m.at[m.n] = j;
      m.slot[m.n++] = e;
    }
  }
  if (m.n > 0)
    misses_of_type(f, t, m.n, m.cap, m.l, solved);
  for (uint32_t i = 0; i < m.n; i++) { /* in order, as one by one */
    phi[m.at[i]] = solved[i];
    if (m.slot[i] != NULL)
      *m.slot[i] = (rack_phi_memo){m.cap[i],    m.l[i].sm, m.l[i].mem,
                                   m.l[i].busy, solved[i], t};
  }
}

/* Without the cache (keys_looked_up false) every key is a miss: the
 * stretch solved together into phi straight from its keys, with no
 * copy of them as misses. */
void rack__runs_phi_remember(const rack_fleet *f, uint32_t q,
                             const uint32_t *rack, uint32_t n, double *phi,
                             rack_phi_last *last) {
  assert(n >= 1 && n <= RACK_RUNS_BATCH);
  uint16_t t = f->run_type[q];
  bool look = keys_looked_up(f);
  runs_keys k;
  runs_keys_of(f, t, q, rack, n, look, &k);
  if (look)
    keys_through_cache(f, t, &k, n, phi);
  else
    misses_of_type(f, t, n, k.cap, k.l, phi);
  gpu_load ln = rack_run_load(f, q + n - 1);
  *last = (rack_phi_last){rack_run_cap_w(f, q + n - 1, rack[n - 1]),
                          ln.sm,
                          ln.mem,
                          ln.busy,
                          phi[n - 1],
                          t};
}

/* *last made for run q at cap and the clock phi. */
static void last_of_run(const rack_fleet *f, uint32_t q, double cap,
                        double phi, rack_phi_last *last) {
  gpu_load l = rack_run_load(f, q);
  *last = (rack_phi_last){cap, l.sm, l.mem, l.busy, phi, f->run_type[q]};
}

double rack__run_phi_solve(const rack_fleet *f, uint32_t q, uint32_t rack,
                           rack_phi_last *last) {
  double cap = rack_run_cap_w(f, q, rack);
  last_of_run(f, q, cap,
              gpu_load_clock_under_cap(f->types[f->run_type[q]], cap,
                                       rack_run_load(f, q)),
              last);
  return last->phi;
}

void rack__runs_phi_solve(const rack_fleet *f, uint32_t q,
                          const uint32_t *rack, uint32_t n, double *phi,
                          rack_phi_last *last) {
  assert(n >= 1 && n <= RACK_RUNS_BATCH);
  uint16_t t = f->run_type[q];
  runs_keys k;
  runs_keys_of(f, t, q, rack, n, false, &k);
  misses_of_type(f, t, n, k.cap, k.l, phi);
  last_of_run(f, q + n - 1, k.cap[n - 1], phi[n - 1], last);
}

bool rack_fleet_phis_shareable(const rack_fleet *f) {
  return gpu_solves_shareable(f->types, f->ntypes);
}

/* The misses of rack__phis_at, in order, solved: those of one type
 * next to each other together (misses_of_type). */
static void misses_solved(const rack_fleet *f, uint32_t n, const uint16_t *type,
                          const double *cap, const gpu_load *l, double *phi) {
  for (uint32_t i = 0, e; i < n; i = e) {
    for (e = i + 1; e < n && type[e] == type[i];)
      e++;
    misses_of_type(f, type[i], e - i, cap + i, l + i, phi + i);
  }
}

void rack__phis_at(const rack_fleet *f, uint32_t n, const uint16_t *type,
                   const double *cap, const gpu_load *l, double *phi) {
  assert(n <= RACK_RUNS_BATCH);
  uint16_t m_type[RACK_RUNS_BATCH];
  double m_cap[RACK_RUNS_BATCH], solved[RACK_RUNS_BATCH];
  gpu_load m_l[RACK_RUNS_BATCH];
  uint32_t at[RACK_RUNS_BATCH], m = 0;
  rack_phi_memo *slot[RACK_RUNS_BATCH][2];
  /* while the gate is sparse, the cache read and written as by the
   * one-by-one lookups (their thinning: key_kept says why) */
  bool thin = f->phi_memo != NULL && f->phi_gate->sparse;
  for (uint32_t k = 0; k < n; k++) {
    /* a hit read now: a miss's entry kept below may overwrite it */
    if (f->phi_memo != NULL &&
        rack__memo_find(f, type[k], cap[k], l[k], slot[m], thin))
      phi[k] = slot[m][0]->phi;
    else
      m_type[m] = type[k], m_cap[m] = cap[k], m_l[m] = l[k], at[m++] = k;
  }
  misses_solved(f, m, m_type, m_cap, m_l, solved);
  for (uint32_t i = 0; i < m; i++) { /* in order, as one by one */
    phi[at[i]] = solved[i];
    if (f->phi_memo != NULL)
      rack__memo_keep(f, slot[i], m_type[i], m_cap[i], m_l[i], solved[i],
                      thin);
  }
}

/* ------------------------------------------------------------------ */
/* Clocks known to the fleet at a sample (rack_fleet_phis_known)       */
/* ------------------------------------------------------------------ */

void rack_fleet_phis_known(rack_fleet *f, uint32_t q0, uint32_t n,
                           const double *phi) {
  f->known_phi = n > 0 ? phi : NULL;
  f->known_q0 = q0;
  f->known_n = n;
}

/* Not where an input is NaN: a replica's clock is the least of 1 and its
 * run's, which is its run's only when the run's is a number (in
 * [phi_min, 1], gpu.h). */
bool rack__phi_known(const rack_fleet *f, uint32_t q, double cap, gpu_load l,
                     double *phi) {
  uint32_t k = q - f->known_q0; /* wraps below q0: out of range */
  if (k >= f->known_n || isnan(cap) || isnan(l.sm) || isnan(l.mem) ||
      isnan(l.busy))
    return false;
  *phi = f->known_phi[k];
  return true;
}

void rack__phis_known_at(const rack_fleet *f, uint32_t n, const uint32_t *run,
                         uint16_t *type, double *cap, gpu_load *l,
                         double *phi) {
  uint32_t left[RACK_RUNS_BATCH], m = 0;
  for (uint32_t k = 0; k < n; k++) {
    if (rack__phi_known(f, run[k], cap[k], l[k], &phi[k]))
      continue;
    left[m] = k; /* m <= k: compacted in place, in order */
    type[m] = type[k];
    cap[m] = cap[k];
    l[m++] = l[k];
  }
  if (m == 0)
    return;
  double solved[RACK_RUNS_BATCH];
  rack__phis_at(f, m, type, cap, l, solved);
  for (uint32_t i = 0; i < m; i++)
    phi[left[i]] = solved[i];
}

/* ------------------------------------------------------------------ */
/* Runs' keys: a clock kept from one solve to a later read              */
/* ------------------------------------------------------------------ */

void rack_runs_key(const rack_fleet *f, uint32_t q0, uint32_t n,
                   rack_run_key *key) {
  for (uint32_t k = 0; k < n; k++) {
    uint32_t q = q0 + k;
    key[k] = (rack_run_key){f->run_sm[q], f->run_mem[q], f->run_busy[q],
                            rack_run_cap_w(f, q, f->run_rack[q])};
  }
}

/* Bits, not values: a NaN key is its own (its clock is the solve's of
 * that NaN), and -0 is not 0 to a solve that divides. */
bool rack_runs_key_same(const rack_fleet *f, uint32_t q0, uint32_t n,
                        const rack_run_key *key) {
  for (uint32_t k = 0; k < n; k++) {
    uint32_t q = q0 + k;
    if (!sim_same_bits(key[k].sm, f->run_sm[q]) ||
        !sim_same_bits(key[k].mem, f->run_mem[q]) ||
        !sim_same_bits(key[k].busy, f->run_busy[q]) ||
        !sim_same_bits(key[k].cap, rack_run_cap_w(f, q, f->run_rack[q])))
      return false;
  }
  return true;
}
