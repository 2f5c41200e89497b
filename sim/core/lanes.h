/* lanes.h - sixteen bytes as two or four lanes, for the tick's loops that
 * compare stretches of values to the bit or add two chains at once.
 *
 * GCC's and clang's vector extension: one SSE2 register on x86-64, plain
 * words elsewhere. Lane by lane the operations are the scalar ones, so two
 * doubles added as a pair have the bits the two scalar adds would have.
 * Loads and stores go through memcpy, so any address will do (the arrays
 * they read are doubles and words, 8- or 4-aligned). One header, so the
 * types and the portable shuffle are written once. */
#ifndef SIM_LANES_H
#define SIM_LANES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef double sim_d2 __attribute__((vector_size(16)));   /* two doubles */
typedef uint64_t sim_u2 __attribute__((vector_size(16))); /* two words */
typedef uint32_t sim_u4 __attribute__((vector_size(16))); /* four 32-bit */
typedef int64_t sim_i2 __attribute__((vector_size(16)));  /* a pick's lanes */

static inline sim_d2 sim_d2_at(const void *x) {
  sim_d2 v;
  memcpy(&v, x, sizeof v);
  return v;
}

static inline sim_u2 sim_u2_at(const void *x) {
  sim_u2 v;
  memcpy(&v, x, sizeof v);
  return v;
}

static inline sim_u4 sim_u4_at(const void *x) {
  sim_u4 v;
  memcpy(&v, x, sizeof v);
  return v;
}

static inline void sim_d2_put(void *x, sim_d2 v) { memcpy(x, &v, sizeof v); }
static inline void sim_u2_put(void *x, sim_u2 v) { memcpy(x, &v, sizeof v); }
static inline void sim_u4_put(void *x, sim_u4 v) { memcpy(x, &v, sizeof v); }

/* Whether every bit of the sixteen bytes is zero: an or of xors that
 * came out zero means every lane compared equal, to the bit. */
static inline bool sim_u2_zero(sim_u2 v) { return (v[0] | v[1]) == 0; }
static inline bool sim_u4_zero(sim_u4 v) { return sim_u2_zero((sim_u2)v); }

/* Lane i of a then lane j of b, i and j constants 0 or 1 (one shufpd or
 * movsd on x86-64). clang and GCC name the shuffle differently. */
#if defined(__clang__)
#define SIM_D2_PICK(a, i, b, j) __builtin_shufflevector(a, b, i, 2 + (j))
#else
#define SIM_D2_PICK(a, i, b, j) __builtin_shuffle(a, b, (sim_i2){i, 2 + (j)})
#endif

/* The wide paths: four 64-bit or eight 32-bit lanes a register (AVX2)
 * where the CPU has it, chosen at run time, so one binary runs anywhere;
 * the two-lane code elsewhere and while sim_lanes_narrow is set (the
 * tests run both paths and require the same answers). Both paths only
 * compare and move words, so they give the same bits. */
extern bool sim_lanes_narrow;

/* The tests' second switch: the AVX2 paths even where the CPU has
 * AVX-512, so a test runs all three tiers and requires the same answers. */
extern bool sim_lanes_no512;

#if defined(__GNUC__) && defined(__x86_64__)
#define SIM_LANES_AVX2 1
#include <immintrin.h>

static inline bool sim_lanes_wide(void) {
  return !sim_lanes_narrow && __builtin_cpu_supports("avx2");
}

/* The 64-byte paths: eight doubles a register and 32 vector registers
 * (AVX-512 F, VL and DQ), for loops bound by the instructions they issue
 * rather than by their chains. Chosen at run time like the AVX2 ones; a
 * CPU without them (or valgrind, which hides them) takes the AVX2 path,
 * which gives the same bits. */
static inline bool sim_lanes_512(void) {
  return sim_lanes_wide() && !sim_lanes_no512 &&
         __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
}

/* The four words from x on, xored with e (a word's bits four times). */
__attribute__((target("avx2"))) static inline __m256i
sim_x4_xor(const void *x, __m256i e) {
  return _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)x), e);
}

/* Four doubles a register (AVX2's 32 bytes), for the wide paths' sums:
 * lane by lane the scalar operations, as sim_d2's. Only in functions
 * built for AVX2 (a 32-byte vector passed elsewhere changes the ABI). */
typedef double sim_d4 __attribute__((vector_size(32)));

__attribute__((target("avx2"))) static inline sim_d4 sim_d4_at(const void *x) {
  sim_d4 v;
  memcpy(&v, x, sizeof v);
  return v;
}

__attribute__((target("avx2"))) static inline void sim_d4_put(void *x,
                                                              sim_d4 v) {
  memcpy(x, &v, sizeof v);
}

/* x in each of the four lanes. */
__attribute__((target("avx2"))) static inline sim_d4 sim_d4_all(double x) {
  return (sim_d4){x, x, x, x};
}

/* Lanes i, j, k and l of a's four then b's (4 .. 7), constants: one
 * vunpcklpd, vunpckhpd or vperm2f128 for the patterns of a transpose. */
typedef int64_t sim_i4 __attribute__((vector_size(32)));
#if defined(__clang__)
#define SIM_D4_PICK(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
#define SIM_D4_PICK(a, b, i, j, k, l)                                          \
  __builtin_shuffle(a, b, (sim_i4){i, j, k, l})
#endif

/* The four vectors' lanes as rows of a 4 x 4 matrix, transposed into
 * the sixteen doubles from to: lane i of a, b, c and d at to + 4 i. */
__attribute__((target("avx2"))) static inline void
sim_d4_transpose_put(double *to, sim_d4 a, sim_d4 b, sim_d4 c, sim_d4 d) {
  sim_d4 ab0 = SIM_D4_PICK(a, b, 0, 4, 2, 6),
         ab1 = SIM_D4_PICK(a, b, 1, 5, 3, 7);
  sim_d4 cd0 = SIM_D4_PICK(c, d, 0, 4, 2, 6),
         cd1 = SIM_D4_PICK(c, d, 1, 5, 3, 7);
  sim_d4_put(to, SIM_D4_PICK(ab0, cd0, 0, 1, 4, 5));
  sim_d4_put(to + 4, SIM_D4_PICK(ab1, cd1, 0, 1, 4, 5));
  sim_d4_put(to + 8, SIM_D4_PICK(ab0, cd0, 2, 3, 6, 7));
  sim_d4_put(to + 12, SIM_D4_PICK(ab1, cd1, 2, 3, 6, 7));
}

/* The lanes of four whose mask k is set (sim_x4_first), the rest 0: a
 * masked load reads nothing past them. */
__attribute__((target("avx2"))) static inline __m256i
sim_x4_xor_masked(const void *x, __m256i e, __m256i k) {
  return _mm256_xor_si256(_mm256_maskload_epi64((const long long *)x, k), e);
}

/* The mask of the first n of four lanes, n in 0 .. 4. */
__attribute__((target("avx2"))) static inline __m256i
sim_x4_first(unsigned n) {
  static const int64_t tail[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(tail + 4 - n));
}
#else
static inline bool sim_lanes_wide(void) { return false; }
static inline bool sim_lanes_512(void) { return false; }
#endif

#endif
