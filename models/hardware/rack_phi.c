/* rack_phi.c - the fleet's cache of the clocks its GPUs' caps allow
 * (rack_gpu_phi and the callers that take runs' clocks): a clock is
 * gpu_load_clock_under_cap's answer for a type, cap and load, kept by
 * the three to the bit, so a hit is that answer. */
#include "bits.h"
#include "rack.h"
#include "rack_internal.h"

#include <assert.h>
#include <stdint.h>

/* One clock solved: the type, cap and load it was solved for. */
typedef struct rack_phi_memo {
  double cap, sm, mem, busy, phi;
  uint32_t type; /* UINT32_MAX: empty */
} rack_phi_memo;

/* Entries of the cache, a power of two: 4,096, over 4,096 GPUs 16,384
 * (768 KiB). At bench-10k's request-level peak, 1,890 new pairs a period,
 * 4,096 had pushed out a third of those asked again the next period
 * (1,893 -> 1,845 solves a period); a small fleet keeps its footprint. */
static inline unsigned phi_memo_bits(uint32_t gpus) {
  return gpus > 4096 ? 14 : 12;
}

struct rack_phi_memo *rack__phi_memo_new(const sim_allocator *a,
                                         uint32_t gpus) {
  size_t n = (size_t)1 << phi_memo_bits(gpus);
  rack_phi_memo *m = sim_calloc(a, n, sizeof *m);
  for (size_t k = 0; m != NULL && k < n; k++)
    m[k].type = UINT32_MAX;
  return m;
}

/* Same to the bit (a NaN is like itself; -0 and 0 differ: a miss). */
static bool memo_is(const rack_phi_memo *m, uint32_t type, double cap,
                    gpu_load l) {
  return m->type == type && sim_bits(m->cap) == sim_bits(cap) &&
         sim_bits(m->sm) == sim_bits(l.sm) &&
         sim_bits(m->mem) == sim_bits(l.mem) &&
         sim_bits(m->busy) == sim_bits(l.busy);
}

double rack_gpu_phi(const rack_fleet *f, uint32_t i) {
  return rack__phi_at(f, f->type[i], rack_gpu_cap_w(f, i), rack_gpu_load(f, i));
}

/* The cache's entry for a type, cap and load (phi_memo_at's). */
static inline rack_phi_memo *memo_slot(const rack_fleet *f, uint32_t type,
                                       double cap, gpu_load l) {
  uint64_t h = (sim_bits(cap) * 0x9e3779b97f4a7c15ULL) ^
               (sim_bits(l.sm) * 0xc2b2ae3d27d4eb4fULL) ^
               (sim_bits(l.mem) * 0x165667b19e3779f9ULL) ^
               (sim_bits(l.busy) * 0xd6e8feb86659fd93ULL) ^ type;
  h ^= h >> 29;
  return &f->phi_memo[(h * 0x9e3779b97f4a7c15ULL) >>
                      (64 - phi_memo_bits(f->n))];
}

/* rack__phi_at, in line in rack__run_phi_remember (at the request level's
 * peak nearly every replica's clock; the call passed l through memory). */
static inline double phi_memo_at(const rack_fleet *f, uint32_t type, double cap,
                                 gpu_load l) {
  if (f->phi_memo == NULL)
    return gpu_load_clock_under_cap(f->types[type], cap, l);
  rack_phi_memo *m = memo_slot(f, type, cap, l);
  if (!memo_is(m, type, cap, l))
    *m = (rack_phi_memo){cap,
                         l.sm,
                         l.mem,
                         l.busy,
                         gpu_load_clock_under_cap(f->types[type], cap, l),
                         type};
  return m->phi;
}

double rack__phi_at(const rack_fleet *f, uint32_t type, double cap,
                    gpu_load l) {
  return phi_memo_at(f, type, cap, l);
}

double rack__phi_remember(const rack_fleet *f, uint32_t i,
                          rack_phi_last *last) {
  gpu_load l = rack_gpu_load(f, i);
  *last = (rack_phi_last){rack_gpu_cap_w(f, i), l.sm,      l.mem, l.busy,
                          rack_gpu_phi(f, i),   f->type[i]};
  return last->phi;
}

double rack__run_phi_remember(const rack_fleet *f, uint32_t q, uint32_t rack,
                              rack_phi_last *last) {
  uint16_t t = f->run_type[q];
  gpu_load l = rack_run_load(f, q);
  double cap = rack_run_cap_w(f, q, rack);
  *last =
      (rack_phi_last){cap, l.sm, l.mem, l.busy, phi_memo_at(f, t, cap, l), t};
  return last->phi;
}

/* A stretch's misses: their caps, loads, places in the stretch and
 * cache entries (NULL: no cache). */
typedef struct runs_misses {
  double cap[RACK_RUNS_BATCH];
  gpu_load l[RACK_RUNS_BATCH];
  uint32_t at[RACK_RUNS_BATCH];
  rack_phi_memo *slot[RACK_RUNS_BATCH];
  uint32_t n;
} runs_misses;

void rack__runs_phi_remember(const rack_fleet *f, uint32_t q,
                             const uint32_t *rack, uint32_t n, double *phi,
                             rack_phi_last *last) {
  assert(n >= 1 && n <= RACK_RUNS_BATCH);
  uint16_t t = f->run_type[q];
  runs_misses m;
  double solved[RACK_RUNS_BATCH];
  m.n = 0;
  for (uint32_t j = 0; j < n; j++) {
    assert(f->run_type[q + j] == t);
    double c = rack_run_cap_w(f, q + j, rack[j]);
    gpu_load lj = rack_run_load(f, q + j);
    rack_phi_memo *e = f->phi_memo != NULL ? memo_slot(f, t, c, lj) : NULL;
    if (e != NULL && memo_is(e, t, c, lj)) {
      phi[j] = e->phi;
    } else {
      m.cap[m.n] = c, m.l[m.n] = lj, m.at[m.n] = j;
      m.slot[m.n++] = e;
    }
  }
  if (m.n > 0)
    gpu_load_clocks_under_caps(f->types[t], m.n, m.cap, m.l, solved);
  for (uint32_t i = 0; i < m.n; i++) { /* in order, as one by one */
    phi[m.at[i]] = solved[i];
    if (m.slot[i] != NULL)
      *m.slot[i] = (rack_phi_memo){m.cap[i],    m.l[i].sm, m.l[i].mem,
                                   m.l[i].busy, solved[i], t};
  }
  gpu_load ln = rack_run_load(f, q + n - 1);
  *last = (rack_phi_last){rack_run_cap_w(f, q + n - 1, rack[n - 1]),
                          ln.sm,
                          ln.mem,
                          ln.busy,
                          phi[n - 1],
                          t};
}
