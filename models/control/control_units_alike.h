/* control_units_alike.h - control_units.c's search for the stretches of
 * a direct rack's units alike the one before in load and worth (its
 * refresh_direct), and their refresh (refresh_alike): the fluid mode's
 * units come in long ones, a service's replicas in one state. Only
 * control_units.c includes it. */
#ifndef MODELS_CONTROL_UNITS_ALIKE_H
#define MODELS_CONTROL_UNITS_ALIKE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bits.h"
#include "lanes.h"
#include "power.h"

/* A unit's worth, weight then c, read as one pair. */
_Static_assert(offsetof(power_unit, c) == offsetof(power_unit, weight) + 8,
               "a unit's weight and c are next to each other");
static inline sim_u2 worth_at(const power_unit *p) {
  return sim_u2_at((const char *)p + offsetof(power_unit, weight));
}

/* Units k .. k + 3's ten pairs of words (load and worth) xor-ed against
 * load (s, m, b) and worth wc and or-ed into one pair: zeros where all
 * four are alike. */
static inline sim_u2 four_diff(const double *sm, const double *mem,
                               const double *busy, const power_unit *p,
                               size_t k, sim_u2 s, sim_u2 m, sim_u2 b,
                               sim_u2 wc) {
  return (sim_u2_at(sm + k) ^ s) | (sim_u2_at(sm + k + 2) ^ s) |
         (sim_u2_at(mem + k) ^ m) | (sim_u2_at(mem + k + 2) ^ m) |
         (sim_u2_at(busy + k) ^ b) | (sim_u2_at(busy + k + 2) ^ b) |
         (worth_at(p + k) ^ wc) | (worth_at(p + k + 1) ^ wc) |
         (worth_at(p + k + 2) ^ wc) | (worth_at(p + k + 3) ^ wc);
}

/* Eight shares from x on at the pair sh2's (its word twice), four
 * stores of two. */
static inline void put_eight(double *x, sim_u2 sh2) {
  sim_u2_put(x, sh2);
  sim_u2_put(x + 2, sh2);
  sim_u2_put(x + 4, sh2);
  sim_u2_put(x + 6, sh2);
}

#ifdef SIM_LANES_AVX2
/* Units k and k + 1's worth pairs in one register, xored with wc (the
 * pair twice). */
__attribute__((target("avx2"))) static inline __m256i
worth2_xor(const power_unit *p, size_t k, __m256i wc) {
  const char *a = (const char *)(p + k) + offsetof(power_unit, weight);
  __m128i lo = _mm_loadu_si128((const __m128i *)a);
  __m128i hi = _mm_loadu_si128((const __m128i *)(a + sizeof *p));
  return _mm256_xor_si256(
      _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1), wc);
}

/* alike_end's eight a turn, four words a register (AVX2, where the CPU
 * has it): a load and its xor one instruction, the ten registers of two
 * four_diff in six for the loads and four for the worth, so about half
 * the instructions; each turn's eight shares (at sh2) stored once it
 * passed, two stores of four (where put_eight's pairs took four).
 * Returns where the first turn with a difference starts (or the last
 * turn's end): the same k as the two-lane loop. */
__attribute__((target("avx2"))) static size_t
alike_eights_avx2(const double *sm, const double *mem, const double *busy,
                  const power_unit *p, size_t k, size_t n, uint64_t s,
                  uint64_t m, uint64_t b, uint64_t w, uint64_t c, double *share,
                  sim_u2 sh2) {
  const __m256i vs = _mm256_set1_epi64x((long long)s),
                vm = _mm256_set1_epi64x((long long)m),
                vb = _mm256_set1_epi64x((long long)b),
                wc = _mm256_set_epi64x((long long)c, (long long)w, (long long)c,
                                       (long long)w),
                sh4 = _mm256_broadcastsi128_si256((__m128i)sh2);
  for (; k + 8 <= n; k += 8) {
    __m256i d = _mm256_or_si256(
        _mm256_or_si256(
            _mm256_or_si256(sim_x4_xor(sm + k, vs), sim_x4_xor(sm + k + 4, vs)),
            _mm256_or_si256(sim_x4_xor(mem + k, vm),
                            sim_x4_xor(mem + k + 4, vm))),
        _mm256_or_si256(sim_x4_xor(busy + k, vb), sim_x4_xor(busy + k + 4, vb)));
    d = _mm256_or_si256(
        d, _mm256_or_si256(
               _mm256_or_si256(worth2_xor(p, k, wc), worth2_xor(p, k + 2, wc)),
               _mm256_or_si256(worth2_xor(p, k + 4, wc),
                               worth2_xor(p, k + 6, wc))));
    if (!_mm256_testz_si256(d, d))
      break;
    _mm256_storeu_si256((__m256i *)(share + k), sh4);
    _mm256_storeu_si256((__m256i *)(share + k + 4), sh4);
  }
  return k;
}
#else
/* Never called: wide is false without AVX2 (control_units.c). */
static inline size_t alike_eights_avx2(const double *sm, const double *mem,
                                       const double *busy, const power_unit *p,
                                       size_t k, size_t n, uint64_t s,
                                       uint64_t m, uint64_t b, uint64_t w,
                                       uint64_t c, double *share, sim_u2 sh2) {
  (void)sm, (void)mem, (void)busy, (void)p, (void)n;
  (void)s, (void)m, (void)b, (void)w, (void)c, (void)share, (void)sh2;
  return k;
}
#endif

/* The end of the stretch of units from k on (k < n, k > 0) alike unit
 * k - 1 in their load (load j of sm, mem, busy) and worth (p[j]'s weight
 * and c), to the bit: each such unit's load is the unit before's (so the
 * last base's key) and its worth the unit before's, so it takes the base
 * and its mark is its n_alike. Its first units one at a time (a compare
 * and branch a word, the first eight: the request level's stretches are
 * short; none where the stretch goes on from a fill chunk's end, go_on),
 * then eight a turn (two four_diff, one test: the turn's
 * count and the test once for eight units; where wide, through AVX2,
 * alike_eights_avx2), four once, the last few one at a time. Each unit
 * found alike is given the share sh as it is passed (share[j]): the
 * stores go with the compares, whose loop is bound by its instructions,
 * where a loop of their own after it waited on the share array's lines,
 * which have left the cache since the last allocation. */
static inline size_t alike_end(const double *sm, const double *mem,
                               const double *busy, const power_unit *p,
                               size_t k, size_t n, bool wide, bool go_on,
                               double *share, double sh) {
  const uint64_t s = sim_bits_at(sm, k - 1), m = sim_bits_at(mem, k - 1),
                 b = sim_bits_at(busy, k - 1), w = sim_bits(p[k - 1].weight),
                 c = sim_bits(p[k - 1].c);
#define UNIT_DIFFERS(j)                                                        \
  (sim_bits_at(sm, j) != s || sim_bits_at(mem, j) != m ||                      \
   sim_bits_at(busy, j) != b || sim_bits(p[j].weight) != w ||                  \
   sim_bits(p[j].c) != c)
  for (size_t first = go_on ? k : n - k < 8 ? n : k + 8; k < first; k++) {
    if (UNIT_DIFFERS(k))
      return k;
    share[k] = sh;
  }
  const double shp[2] = {sh, sh};
  const sim_u2 vs = {s, s}, vm = {m, m}, vb = {b, b}, wc = {w, c},
               sh2 = sim_u2_at(shp);
  if (wide)
    k = alike_eights_avx2(sm, mem, busy, p, k, n, s, m, b, w, c, share, sh2);
  else
    for (; k + 8 <= n; k += 8) {
      if (!sim_u2_zero(four_diff(sm, mem, busy, p, k, vs, vm, vb, wc) |
                       four_diff(sm, mem, busy, p, k + 4, vs, vm, vb, wc)))
        break;
      put_eight(share + k, sh2);
    }
  if (k + 4 <= n &&
      sim_u2_zero(four_diff(sm, mem, busy, p, k, vs, vm, vb, wc))) {
    sim_u2_put(share + k, sh2);
    sim_u2_put(share + k + 2, sh2);
    k += 4;
  }
  for (; k < n; k++) {
    if (UNIT_DIFFERS(k))
      break;
    share[k] = sh;
  }
#undef UNIT_DIFFERS
  return k;
}

/* The last base's key and fields, kept in locals by refresh_rack: a
 * store to a unit might otherwise be the memo's, so each would be read
 * again every unit. */
typedef struct base_view {
  uint64_t ks, km, kb;
  double hi, demand, act, sh;
} base_view;

/* Where refresh_direct writes, from a rack's first unit on (its units'
 * marks and shares, the GPUs they were made from), in locals: a store to
 * a unit might otherwise be to control_units', so each would be read
 * again every unit. put: where the lazy refresh puts back a unit left
 * unmarked as it marks it (cu->u from the rack's first unit on), NULL
 * where it does not (not lazy, or with assertions on: then every unit is
 * put back a chunk at a time, control__units_put_back); nput counts them. */
typedef struct direct_out {
  uint8_t *alike;
  const uint8_t *n_alike;
  double *share;
  const uint32_t *gpu;
  power_unit *put;
  size_t *nput;
} direct_out;

_Static_assert(offsetof(power_unit, demand) == offsetof(power_unit, hi) + 8,
               "a unit's hi and demand are next to each other");

/* A unit's hi and demand (hd) and activity, as a base gives them. */
static inline void store_base(power_unit *p, sim_u2 hd, double act) {
  sim_u2_put((char *)p + offsetof(power_unit, hi), hd);
  p->activity = act;
}

/* Unit p, left unmarked, put back at to: what a refresh writes of it,
 * its range's top and demand (hd), activity and the worth the fill gave
 * it (class, priority, weight, c). */
static inline void put_unit_now(power_unit *to, const power_unit *p, sim_u2 hd,
                                double act) {
  store_base(to, hd, act);
  to->cls = p->cls;
  to->priority = p->priority;
  to->weight = p->weight;
  to->c = p->c;
}

/* Units k .. e - 1 of a stretch that its marks leave unmarked (n_alike
 * 0: as many GPUs as the unit before, not) put back with the base's
 * fields (o.put): a zero next to the last taken at once (a training
 * job's stages, each of its own GPU count, are such a stretch of
 * zeros), the next after ones found by memchr. */
static void unmarked_put(direct_out o, const power_unit *p, sim_u2 hd,
                         double act, size_t k, size_t e) {
  for (; k < e; k++) {
    if (o.n_alike[k] != 0) {
      const uint8_t *z = memchr(o.n_alike + k, 0, e - k);
      if (z == NULL)
        return;
      k = (size_t)(z - o.n_alike);
    }
    put_unit_now(o.put + k, p + k, hd, act);
    ++*o.nput;
  }
}

/* Units k .. e - 1 of alike_end's stretch refreshed (their shares
 * alike_end's): the base's fields stored (hi and demand as one pair),
 * each marked as its GPU count says (refresh_one with d and dw 0,
 * without the compares). Where the lazy refresh puts back as it
 * marks (o.put), a marked unit's fields are unread (refresh_one and
 * alike_end read a unit before's worth alone): only the unmarked units'
 * are stored, straight into the units (at bench-10k's fluid tick three
 * stores a unit for some 2,200 units, into a window nobody reads them
 * from, saved). */
static inline void refresh_alike(direct_out o, power_unit *p,
                                 const base_view *b, size_t k, size_t e) {
  if (e - k >= 16) /* a call, where the bytes one at a time cost 5 each */
    memcpy(o.alike + k, o.n_alike + k, e - k);
  else
    for (size_t j = k; j < e; j++)
      o.alike[j] = o.n_alike[j];
  const double hd[2] = {b->hi, b->demand};
  const sim_u2 hd2 = sim_u2_at(hd);
  const double act = b->act;
  if (o.put != NULL) {
    unmarked_put(o, p, hd2, act, k, e);
    return;
  }
  for (; k + 4 <= e; k += 4) { /* four a turn: the request level's path */
    store_base(p + k, hd2, act);
    store_base(p + k + 1, hd2, act);
    store_base(p + k + 2, hd2, act);
    store_base(p + k + 3, hd2, act);
  }
  for (; k < e; k++)
    store_base(p + k, hd2, act);
}

#endif
