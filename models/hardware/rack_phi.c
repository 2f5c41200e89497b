/* rack_phi.c - runs' clocks a stretch at a time through the fleet's
 * cache of solved clocks (rack_internal.h; its one-by-one lookups are
 * rack.c's): the cache's misses solved together. */
#include "bits.h"
#include "rack.h"
#include "rack_internal.h"

#include <assert.h>
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
    rack_phi_memo *e =
        f->phi_memo != NULL ? rack__memo_slot(f, t, c, lj) : NULL;
    if (e != NULL && rack__memo_hit(f, e, t, c, lj)) {
      phi[j] = e->phi;
    } else {
      m.cap[m.n] = c, m.l[m.n] = lj, m.at[m.n] = j;
      m.slot[m.n++] = e;
    }
  }
  if (m.n == 1) /* no lanes to fill */
    solved[0] = gpu_load_clock_under_cap(f->types[t], m.cap[0], m.l[0]);
  else if (m.n > 1)
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
