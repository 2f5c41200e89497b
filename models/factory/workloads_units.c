/* workloads_units.c - what the units' work is worth to the power policy
 * (workloads.h work_slot_units): control asks it of every unit each
 * allocation, a chunk of units a call; a stretch of one service's
 * consecutive replicas takes its compute shares in one call. Moved out
 * of workloads_tick.c, whole. */
#include "workloads.h"

#include <stddef.h>

#include "lanes.h"
#include "workloads_internal.h"

const uint32_t *work_gpu_slots(const work *w) { return w->gpu_slot; }

uint64_t work_gpu_slot_changes(const work *w) { return w->slot_changes; }

/* Keys k[e ..) against the keys they would be (k0 + e, ...; no lane
 * carries or wraps while k0 + m fits in 32 bits): eight a turn as two
 * vectors of four, one test for the eight; then four once. Where the
 * keys checked so stop: about 2 instructions a key, where four a turn
 * as two words took 3 and one at a time 6. */
static inline size_t key_eights(const uint32_t *k, size_t e, size_t m,
                                uint32_t b) {
  const uint32_t be = b + (uint32_t)e;
  sim_u4 want0 = {be, be + 1, be + 2, be + 3}, want1 = want0 + 4;
  for (; e + 8 <= m; e += 8, want0 += 8, want1 += 8)
    if (!sim_u4_zero((sim_u4_at(k + e) ^ want0) |
                     (sim_u4_at(k + e + 4) ^ want1)))
      break;
  if (e + 4 <= m && sim_u4_zero(sim_u4_at(k + e) ^ want0))
    e += 4;
  return e;
}

#ifdef SIM_LANES_AVX2
/* key_eights from key 0 on, sixteen a turn in two registers of eight
 * (AVX2, where the CPU has it), then eight once. */
__attribute__((target("avx2"), noinline)) static size_t
key_sixteens(const uint32_t *k, size_t m, uint32_t b) {
  const __m256i step = _mm256_set1_epi32(16);
  __m256i want0 = _mm256_add_epi32(_mm256_set1_epi32((int)b),
                                   _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)),
          want1 = _mm256_add_epi32(want0, _mm256_set1_epi32(8));
  size_t e = 0;
  for (; e + 16 <= m; e += 16) {
    __m256i x = _mm256_or_si256(sim_x4_xor(k + e, want0),
                                sim_x4_xor(k + e + 8, want1));
    if (!_mm256_testz_si256(x, x))
      break;
    want0 = _mm256_add_epi32(want0, step);
    want1 = _mm256_add_epi32(want1, step);
  }
  if (e + 8 <= m) {
    __m256i x = sim_x4_xor(k + e, want0);
    if (_mm256_testz_si256(x, x))
      e += 8;
  }
  return e;
}
#endif

/* Sixteen a turn where AVX2 is, eight elsewhere (key_eights after
 * either), the rest one at a time. From key 0 (itself, trivially), so a
 * chunk's stretch of 256 is sixteen turns of sixteen, nothing left over. */
size_t work__key_stretch(const uint32_t *k, size_t m) {
  const uint64_t k0 = k[0];
  size_t e = 0;
  if (k0 + m <= UINT32_MAX) {
#ifdef SIM_LANES_AVX2
    if (sim_lanes_wide())
      e = key_sixteens(k, m, (uint32_t)k0);
#endif
    e = key_eights(k, e, m, (uint32_t)k0);
  }
  while (e < m && k[e] == k0 + e)
    e++;
  return e;
}

/* How many of keys key[j .. n) are one service's consecutive replicas
 * from slot key[j] (a service slot) on: slots key[j], key[j] + 1, ..., at
 * most CHUNK. The services' slots are theirs in replica order
 * (lay_out_slots), so a stretch stays in the service while it is shorter
 * than the replicas left from key[j]'s part: no slot need be read. */
size_t work__replica_stretch(const work *w, const uint32_t *key, size_t j,
                             size_t n) {
  const slot *s0 = &w->slots[key[j]];
  size_t m = (size_t)w->cfg->services[s0->owner].replicas - s0->part;
  m = m < n - j ? m : n - j;
  m = m < WORK_CHUNK ? m : WORK_CHUNK;
  return work__key_stretch(key + j, m);
}

/* A unit's class (its word shared with its GPU count n), priority,
 * weight and c: its first 32 bytes (power.h), so replica_units stores a
 * unit's worth as one store of 32 bytes (two of 16 where AVX2 is not),
 * n put back in its word. */
_Static_assert(sizeof(int) == 4 && offsetof(power_unit, cls) == 0 &&
                   offsetof(power_unit, n) == 4 &&
                   offsetof(power_unit, priority) == 8 &&
                   offsetof(power_unit, weight) == 16 &&
                   offsetof(power_unit, c) == 24,
               "a unit's class, n, priority, weight and c in 32 bytes");

#ifdef SIM_LANES_AVX2
/* replica_units' stores, e units' class and priority (cp), weight 1 and
 * c (c[i]) as one store of 32 bytes a unit (AVX2, where the CPU has it):
 * the register is cp, 1 and c[i - 3 .. i]'s last lane, blended from
 * the load (so c[-3 .. -1] must be readable), and the unit's own n,
 * broadcast from it and blended into its word. In a window of units 32
 * bytes aligned (control_units_window.c) each store is one line's. */
__attribute__((target("avx2"), always_inline)) static inline void
worth_put_avx2(power_unit *u, const double *c, __m256d head) {
  __m256i x = _mm256_castpd_si256(_mm256_blend_pd(head, _mm256_loadu_pd(c - 3), 8));
  x = _mm256_blend_epi32(x, _mm256_set1_epi32((int)u->n), 2);
  _mm256_storeu_si256((__m256i *)u, x);
}

/* Four units a turn by hand (the pragma's unroll was not taken with the
 * blend of n: seven instructions a unit, five so). */
__attribute__((target("avx2"), noinline)) static void
worth_puts_avx2(power_unit *u, const double *c, size_t e, sim_u2 cp) {
  const __m256d head = _mm256_castsi256_pd(_mm256_set_epi64x(
      0, 0x3FF0000000000000 /* 1.0 */, (long long)cp[1], (long long)cp[0]));
  size_t i = 0;
  for (; i + 4 <= e; i += 4) {
    worth_put_avx2(u + i, c + i, head);
    worth_put_avx2(u + i + 1, c + i + 1, head);
    worth_put_avx2(u + i + 2, c + i + 2, head);
    worth_put_avx2(u + i + 3, c + i + 3, head);
  }
  for (; i < e; i++)
    worth_put_avx2(u + i, c + i, head);
}
#endif

/* Units j .. of a stretch of one service's consecutive replicas
 * (work__replica_stretch: a rack's replicas, in order) take their compute
 * shares in one call (inf_compute_shares), or where the members took
 * them with the loads (w->comp_taken) from there, the same doubles;
 * returns the unit after it. Their class and priority as a unit made of
 * zeros holds them (work__class_priority). The shares land three doubles
 * into their buffer, for worth_puts_avx2's loads. */
static size_t replica_units(const work *w, const uint32_t *key, size_t j,
                            size_t n, power_unit *u) {
  const slot *s0 = &w->slots[key[j]];
  size_t e = work__replica_stretch(w, key, j, n);
  double cbuf[3 + WORK_CHUNK], *c = cbuf + 3;
  if (w->comp_taken) {
    c = w->rep_comp + 3 + w->svc_rep0[s0->owner] + s0->part;
  } else {
    cbuf[0] = cbuf[1] = cbuf[2] = 0; /* not the whole buffer: 67 stores */
    inf_compute_shares(w->svc[s0->owner], s0->part, (uint32_t)e, c);
  }
  const int64_t priority = w->cfg->services[s0->owner].priority;
#ifdef SIM_LANES_AVX2
  if (sim_lanes_wide()) {
    worth_puts_avx2(u + j, c, e,
                    work__class_priority(POWER_INFERENCE, priority));
    return j + e;
  }
#endif
#pragma GCC unroll 4
  for (size_t i = 0; i < e; i++) { /* n shares cls's word: fields */
    power_unit *p = u + j + i;
    p->cls = POWER_INFERENCE;
    p->priority = priority;
    p->weight = 1;
    p->c = c[i];
  }
  return j + e;
}

/* Units j .. of a job's stages (slot key[j] one of job's), as long as
 * the units after it are the same job's (a rack's stages of it, in a
 * row): each takes the job's worth, read once; returns the unit after
 * them. The fields one at a time, as before: a unit's n is left as it
 * was. About 80 units a bench-10k tick, 25 instructions each one
 * at a time, the job read again for each. */
static size_t job_units(const work *w, const uint32_t *key, size_t j,
                        size_t n, uint32_t owner, power_unit *u) {
  const double c = 1 - w->jobs[work__job_of(w, owner)].comm_share;
  const int64_t priority = w->jobs[work__job_of(w, owner)].priority;
  do {
    u[j].weight = 1;
    u[j].cls = POWER_TRAINING;
    u[j].c = c;
    u[j].priority = priority;
    j++;
  } while (j < n && key[j] != NO_SLOT && w->slots[key[j]].owner == owner);
  return j;
}

/* One call per allocation for every unit (not one each): control asks
 * it of about 2,200 units a tick in bench-10k. */
void work_slot_units(const work *w, const uint32_t *key, size_t n,
                     power_unit *u) {
  for (size_t j = 0; j < n;) {
    if (key[j] == NO_SLOT) {
      j++;
      continue; /* free GPUs: no work */
    }
    const uint32_t owner = w->slots[key[j]].owner;
    j = work__is_job(w, owner) ? job_units(w, key, j, n, owner, u)
                               : replica_units(w, key, j, n, u);
  }
}
