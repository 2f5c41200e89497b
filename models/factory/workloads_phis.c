/* workloads_phis.c - the services' replicas' clocks from their packed
 * runs each control tick (workloads_internal.h's work__replica_phis,
 * workloads_tick.c's replica_clocks): a replica like the one before
 * takes its clock, eight or sixteen compared a turn; the others solved.
 * Moved out of workloads_tick.c, whole (682 lines). */
#include "workloads.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>

#include "bits.h"
#include "lanes.h"
#include "workloads_internal.h"

/* Whether run run's load is l: always where the replica's load was
 * compared already (held: r->held, every run of a replica holds its
 * load), else the run's own from the fleet. */
static inline bool run_load_is(const rack_fleet *fl, uint32_t run,
                               const gpu_load *l, bool held) {
  return held || work__load_of_run_is(fl, run, l);
}

/* The runs of replicas in order (r->seq) from the fleet: replica k's
 * load and cap at [k] (its run runs[0] + k), read in place. */
typedef struct seq_runs {
  const double *sm, *mem, *busy, *cap;
} seq_runs;

static inline seq_runs seq_runs_of(const rack_fleet *fl, const work_reps *r) {
  uint32_t q = r->runs[0];
  return (seq_runs){fl->run_sm + q, fl->run_mem + q, fl->run_busy + q,
                    fl->run_cap_w + q};
}

/* Whether replica j of s has load l and cap cap, to the bit. */
static inline bool seq_hit(const seq_runs *s, uint32_t j, const gpu_load *l,
                           double cap) {
  return sim_same_bits(l->sm, s->sm[j]) && sim_same_bits(l->mem, s->mem[j]) &&
         sim_same_bits(l->busy, s->busy[j]) && sim_same_bits(cap, s->cap[j]);
}

/* Replicas k .. of r (their loads held, r->held) while each is like the
 * run before it in every run: its load last's (the replica before's, as
 * last holds that one's) and each run's type and cap last's; their clock
 * is last's (the minimum from 1 of it), and last stays as it is. The
 * first replica that is not, or r->n. No call in the loop, and out of
 * line: its pointers and last's keys stay in registers (a variant with
 * the runs' loads as a parameter, inlined twice, spilled five more a
 * replica: 17 k instructions a tick at bench-10k). */
__attribute__((noinline)) static uint32_t
hits_from(const rack_fleet *fl, const work_reps *r, uint32_t k,
          const rack_phi_last *last, double *phi) {
  const double *cap_w = fl->run_cap_w, *thermal = fl->thermal_cap_w;
  const uint32_t *run0 = r->run0, *runs = r->runs, *rack = r->rack;
  const uint16_t *type = r->type;
  const gpu_load l = {last->sm, last->mem, last->busy};
  double l_cap = last->cap, p = work__min_of(1, last->phi);
  uint32_t l_type = last->type, n = r->n;
  if (k >= n)
    return n;
  for (uint32_t q = run0[k]; k < n; k++) {
    if (!work__load_of_run_is(fl, runs[q], &l)) /* its first run's, as its own */
      return k;
    uint32_t end = run0[k + 1];
    do {
      double cap = rack_cap_min(cap_w[runs[q]], thermal[rack[q]]);
      if (l_type != type[q] || !sim_same_bits(l_cap, cap))
        return k;
    } while (++q < end);
    phi[k] = p;
  }
  return n;
}

/* hits_from for replicas of one run each (r->run0[k] == k: bench-10k's
 * services), rack by rack: a rack's GPUs are of one type (rack.c) and
 * share its thermal cap, so the type is compared once a rack. Where the
 * rack's thermal cap is above last's cap, a run's cap held to it is
 * last's exactly when the run's own is (to the bit: held below its own,
 * it would be the thermal cap, which is not last's), so the run's own
 * is compared; elsewhere it is held first, as in hits_from. Out of line
 * for the same reason. */
__attribute__((noinline)) static uint32_t
hits_one(const rack_fleet *fl, const work_reps *r, uint32_t k,
         const rack_phi_last *last, double *phi) {
  const double *cap_w = fl->run_cap_w;
  const uint32_t *runs = r->runs, *rack = r->rack;
  const gpu_load l = {last->sm, last->mem, last->busy};
  const double l_cap = last->cap, p = work__min_of(1, last->phi);
  const uint32_t n = r->n;
  while (k < n) {
    const uint32_t rk = rack[k];
    const double th = fl->thermal_cap_w[rk];
    if (last->type != r->type[k])
      return k;
    uint32_t e = k;
    if (th > l_cap) {
      for (; e < n && rack[e] == rk; e++) {
        if (!work__load_of_run_is(fl, runs[e], &l) ||
            !sim_same_bits(l_cap, cap_w[runs[e]]))
          return e;
        phi[e] = p;
      }
    } else {
      for (; e < n && rack[e] == rk; e++) {
        if (!work__load_of_run_is(fl, runs[e], &l) ||
            !sim_same_bits(l_cap, rack_cap_min(cap_w[runs[e]], th)))
          return e;
        phi[e] = p;
      }
    }
    k = e;
  }
  return n;
}

/* hits_one where every rack of the fleet is of last's GPU type and has
 * its thermal cap above last's cap (racks_alike): no rack to look at, a
 * replica costs its load's compare, its run's cap and the store. */
__attribute__((noinline)) static uint32_t
hits_plain(const rack_fleet *fl, const work_reps *r, uint32_t k,
           const rack_phi_last *last, double *phi) {
  const double *cap_w = fl->run_cap_w;
  const uint32_t *runs = r->runs;
  const gpu_load l = {last->sm, last->mem, last->busy};
  const double l_cap = last->cap, p = work__min_of(1, last->phi);
  const uint32_t n = r->n;
#pragma GCC unroll 2 /* the loop's count a turn, each replica's exit kept */
  for (; k < n; k++) {
    assert(r->type[k] == last->type);
    if (!work__load_of_run_is(fl, runs[k], &l) ||
        !sim_same_bits(l_cap, cap_w[runs[k]]))
      return k;
    phi[k] = p;
  }
  return n;
}

/* Replicas k .. k + 3's loads (two pairs of each word: sm, mem, busy)
 * and caps (two pairs) of s xor-ed against l's words and cap c (each
 * pair's two lanes alike), or-ed into one pair: zeros where all four
 * hit. */
static inline sim_u2 four_miss(const seq_runs *s, uint32_t k, sim_u2 ls,
                               sim_u2 lm, sim_u2 lb, sim_u2 c) {
  return (sim_u2_at(s->sm + k) ^ ls) | (sim_u2_at(s->sm + k + 2) ^ ls) |
         (sim_u2_at(s->mem + k) ^ lm) | (sim_u2_at(s->mem + k + 2) ^ lm) |
         (sim_u2_at(s->busy + k) ^ lb) | (sim_u2_at(s->busy + k + 2) ^ lb) |
         (sim_u2_at(s->cap + k) ^ c) | (sim_u2_at(s->cap + k + 2) ^ c);
}

/* What a replica of hits_seq's eights hits: last's load's, cap's and
 * clock's bits (its clock held to 1). */
typedef struct hit_bits {
  uint64_t sm, mem, busy, cap, phi;
} hit_bits;

/* hits_seq's eights from k on, two lanes a register (SSE2, or plain
 * words): two four_miss and one test a turn, then four once. Where
 * every replica of a turn hits, its clocks stored; the first replica
 * of the first turn that does not, or where fewer than four are left. */
static inline uint32_t hits_pairs(const seq_runs *s, uint32_t k, uint32_t n,
                                  const hit_bits *h, double *phi) {
  const sim_u2 ls = {h->sm, h->sm}, lm = {h->mem, h->mem},
               lb = {h->busy, h->busy}, c = {h->cap, h->cap},
               pp = {h->phi, h->phi};
  for (; k + 8 <= n && sim_u2_zero(four_miss(s, k, ls, lm, lb, c) |
                                   four_miss(s, k + 4, ls, lm, lb, c));
       k += 8) {
    sim_u2_put(phi + k, pp);
    sim_u2_put(phi + k + 2, pp);
    sim_u2_put(phi + k + 4, pp);
    sim_u2_put(phi + k + 6, pp);
  }
  if (k + 4 <= n && sim_u2_zero(four_miss(s, k, ls, lm, lb, c))) {
    sim_u2_put(phi + k, pp);
    sim_u2_put(phi + k + 2, pp);
    k += 4;
  }
  return k;
}

#ifdef SIM_LANES_AVX2
/* four_miss four lanes a register: replicas k .. k + 3's words of each
 * kind as one register, xor-ed against l's (l[0] sm, l[1] mem, l[2]
 * busy, l[3] cap) and or-ed into one. */
__attribute__((target("avx2"))) static inline __m256i
four_miss4(const seq_runs *s, uint32_t k, const __m256i l[4]) {
  __m256i a = sim_x4_xor(s->sm + k, l[0]), b = sim_x4_xor(s->mem + k, l[1]);
  __m256i d = sim_x4_xor(s->busy + k, l[2]), e = sim_x4_xor(s->cap + k, l[3]);
  return _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(d, e));
}

/* hits_pairs four lanes a register (AVX2, where the CPU has it): the
 * same replicas hit, the same clocks stored, about half the
 * instructions. Each turn asks for the four arrays' lines 32 replicas
 * ahead: they were written a tick ago and come from the second level,
 * faster asked for than found missing (perf of the fluid day: about a
 * sixth fewer samples here). */
__attribute__((target("avx2"), noinline)) static uint32_t
hits_quads(const seq_runs *s, uint32_t k, uint32_t n, const hit_bits *h,
           double *phi) {
  const __m256i l[4] = {_mm256_set1_epi64x((long long)h->sm),
                        _mm256_set1_epi64x((long long)h->mem),
                        _mm256_set1_epi64x((long long)h->busy),
                        _mm256_set1_epi64x((long long)h->cap)};
  const __m256d pp = _mm256_castsi256_pd(_mm256_set1_epi64x((long long)h->phi));
  for (; k + 8 <= n; k += 8) {
    __builtin_prefetch(s->sm + k + 32);
    __builtin_prefetch(s->mem + k + 32);
    __builtin_prefetch(s->busy + k + 32);
    __builtin_prefetch(s->cap + k + 32);
    __m256i x = _mm256_or_si256(four_miss4(s, k, l), four_miss4(s, k + 4, l));
    if (!_mm256_testz_si256(x, x))
      break;
    _mm256_storeu_pd(phi + k, pp);
    _mm256_storeu_pd(phi + k + 4, pp);
  }
  if (k + 4 <= n) {
    __m256i x = four_miss4(s, k, l);
    if (_mm256_testz_si256(x, x)) {
      _mm256_storeu_pd(phi + k, pp);
      k += 4;
    }
  }
  return k;
}
#endif

/* hits_plain where replica k's run is runs[0] + k (r->seq): the loads
 * and caps read in place (seq_runs), without the runs' indices; past
 * the first eight replicas (the request level's stretches are short)
 * eight a turn, four once (hits_quads, or hits_pairs without AVX2), the
 * last few one at a time. The same replicas hit, the same clock stored. */
__attribute__((noinline)) static uint32_t
hits_seq(const rack_fleet *fl, const work_reps *r, uint32_t k,
         const rack_phi_last *last, double *phi) {
  const seq_runs s = seq_runs_of(fl, r);
  const gpu_load l = {last->sm, last->mem, last->busy};
  const double l_cap = last->cap, p = work__min_of(1, last->phi);
  const uint32_t n = r->n;
  for (uint32_t first = n - k < 8 ? n : k + 8; k < first; k++) {
    assert(r->type[k] == last->type && r->runs[k] == r->runs[0] + k);
    if (!seq_hit(&s, k, &l, l_cap))
      return k;
    phi[k] = p;
  }
  if (k + 4 <= n) {
    const hit_bits h = {sim_bits(l.sm), sim_bits(l.mem), sim_bits(l.busy),
                        sim_bits(l_cap), sim_bits(p)};
#ifdef SIM_LANES_AVX2
    if (sim_lanes_wide()) { /* the caps alone where the loads are known */
      if (fl->known_hi > 0) /* none kept at the request level: no call */
        k = work__hits_known(fl, r->runs[0], k, n, l, l_cap, p, phi);
      k = hits_quads(&s, k, n, &h, phi);
    } else
#endif
      k = hits_pairs(&s, k, n, &h, phi);
  }
  for (; k < n && seq_hit(&s, k, &l, l_cap); k++)
    phi[k] = p;
  return k;
}

/* What every rack of the fleet shares now: its GPUs' type
 * (RACK_PHI_NONE where two racks' differ) and the lowest thermal cap
 * (NaN where one is). */
typedef struct racks_alike {
  uint32_t type;
  double thermal;
} racks_alike;

static racks_alike racks_alike_of(const rack_fleet *fl) {
  racks_alike a = {RACK_PHI_NONE, INFINITY};
  bool first = true;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    if (fl->count[r] == 0)
      continue;
    uint32_t t = fl->type[fl->first[r]];
    a.type = first || t == a.type ? t : RACK_PHI_NONE;
    first = false;
    double th = fl->thermal_cap_w[r];
    a.thermal = th < a.thermal || isnan(th) ? th : a.thermal;
    if (a.type == RACK_PHI_NONE || isnan(a.thermal))
      break;
  }
  return a;
}

bool work__racks_type(const rack_fleet *fl, uint32_t *type) {
  *type = RACK_PHI_NONE;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    if (fl->count[r] == 0)
      return false;
    uint32_t t = fl->type[fl->first[r]];
    *type = r == 0 || t == *type ? t : RACK_PHI_NONE;
  }
  return true;
}

bool work__runs_seq(const uint32_t *run0, const uint32_t *runs, uint32_t n) {
  if (n == 0 || run0[n] != n)
    return false;
  for (uint32_t k = 1; k < n; k++)
    if (runs[k] != runs[0] + k)
      return false;
  return true;
}

/* racks_alike_of with the racks' type known (r->typed: every rack holds
 * GPUs, so none is passed over): the thermal caps' minimum alone, the
 * same values met in the same order, so the same answer where the type
 * is one. A tick's racks_alike_of was 2.7 k instructions at bench-10k,
 * most of them the type, which never changes. */
static racks_alike racks_alike_typed(const rack_fleet *fl, const work_reps *r) {
  racks_alike a = {r->racks_type, INFINITY};
  if (a.type == RACK_PHI_NONE)
    return a;
  const double *thermal = fl->thermal_cap_w;
  for (uint32_t k = 0; k < fl->nracks && !isnan(a.thermal); k++)
    a.thermal =
        thermal[k] < a.thermal || isnan(thermal[k]) ? thermal[k] : a.thermal;
  return a;
}

/* Run run's clock remembered in last: through the fleet's cache, or
 * solved where r is a thread's (r->solo), the same bits. */
static double run_phi(const rack_fleet *fl, const work_reps *r, uint32_t run,
                      uint32_t rack, rack_phi_last *last) {
  return r->solo ? rack__run_phi_solve(fl, run, rack, last)
                 : rack__run_phi_remember(fl, run, rack, last);
}

/* Replica k's clock, the slowest of its runs': a run like last (type,
 * cap and load) takes last's clock, another is solved and remembered in
 * last (rack_run_phi_near's rule). held: every run of the replica holds
 * its load, compared once (its first run's); after the first run last's
 * load is the replica's either way. */
static void replica_phi(const rack_fleet *fl, const work_reps *r, uint32_t k,
                        rack_phi_last *last, double *phi, bool held) {
  gpu_load l = {last->sm, last->mem, last->busy};
  bool same = held && work__load_of_run_is(fl, r->runs[r->run0[k]], &l);
  double p = 1;
  uint32_t q = r->run0[k], end = r->run0[k + 1];
  do {
    uint32_t run = r->runs[q];
    double cap = rack_run_cap_w(fl, run, r->rack[q]);
    l = (gpu_load){last->sm, last->mem, last->busy};
    bool load_like = held ? same : run_load_is(fl, run, &l, false);
    if (!load_like || last->type != r->type[q] ||
        !sim_same_bits(last->cap, cap))
      run_phi(fl, r, run, r->rack[q], last);
    same = held; /* last's load is now the replica's */
    p = work__min_of(p, last->phi);
  } while (++q < end);
  phi[k] = p;
}

/* The end of the stretch of replicas from k (unlike last, seq_from has
 * found) each unlike the one before in its load or cap, at most
 * RACK_RUNS_BATCH of them: the next one alike, hits_seq's. Each of the
 * stretch takes its own clock and last the last one's, as one by one;
 * one whose cap a thermal cap holds is solved at its held cap there as
 * it would be after seq_from's leaving, and the stretch's last one is
 * tested as before. */
static uint32_t misses_end(const seq_runs *s, uint32_t k, uint32_t n) {
  uint32_t end = n - k < RACK_RUNS_BATCH ? n : k + RACK_RUNS_BATCH;
  for (uint32_t j = k + 1; j < end; j++) {
    gpu_load l = {s->sm[j - 1], s->mem[j - 1], s->busy[j - 1]};
    if (seq_hit(s, j, &l, s->cap[j - 1]))
      return j;
  }
  return end;
}

/* hits_seq's stretches from k on and each replica between them solved
 * at once, while last stays below every rack's thermal cap (the test
 * work__replica_phis makes after a replica): a replica unlike last in
 * its load or its run's cap is one replica_phi would solve (the racks
 * alike, its run's held cap is unlike last's too), so it is, with no
 * call to hits_seq for a stretch of none. At the request level's peak
 * nearly every replica is unlike the one before: a stretch of those
 * (misses_end) is solved together (rack__runs_phi_remember), the same
 * clocks and last as one by one. */
static uint32_t seq_from(const rack_fleet *fl, const work_reps *r, uint32_t k,
                         rack_phi_last *last, double *phi, racks_alike a) {
  const seq_runs s = seq_runs_of(fl, r);
  while (k < r->n) {
    gpu_load l = {last->sm, last->mem, last->busy};
    if (seq_hit(&s, k, &l, last->cap)) {
      k = hits_seq(fl, r, k, last, phi);
      continue;
    }
    uint32_t end = misses_end(&s, k, r->n);
    assert(r->type[end - 1] == a.type &&
           r->runs[end - 1] == r->runs[0] + end - 1);
    if (end - k == 1) /* one alone (the fluid level's): no batch to make */
      phi[k] = run_phi(fl, r, r->runs[0] + k, r->rack[k], last);
    else if (r->solo)
      rack__runs_phi_solve(fl, r->runs[0] + k, r->rack + k, end - k, phi + k,
                           last);
    else
      rack__runs_phi_remember(fl, r->runs[0] + k, r->rack + k, end - k, phi + k,
                              last);
    for (; k < end; k++)
      phi[k] = work__min_of(1, phi[k]);
    if (!(last->type == a.type && a.thermal > last->cap))
      break;
  }
  return k;
}

/* The replicas' clocks, one after another from last (replica_phi). The
 * loads the runs' in the fleet; r->held: every run of a replica holds
 * the replica's load (then compared once a replica, its first run's),
 * else each run's compared (the first period after the runs are made,
 * before the drive wrote the replicas' loads). With the loads held, after a
 * replica the stretch of replicas whose every run hits (most: a
 * service's replicas in one state share load and cap) goes through
 * hits_from; where every replica is one run, through hits_plain when
 * every rack is of last's type with its thermal cap above last's cap
 * (racks_alike, once a call; seq_from where the runs are in order,
 * r->seq: hits_seq's stretches and the misses between), else hits_one. */
void work__replica_phis(const rack_fleet *fl, const work_reps *r, double *phi,
                        rack_phi_last *last) {
  bool held = r->held;
  bool one = r->run0[r->n] == r->n; /* one run a replica: each has one */
  racks_alike a = !held || !one ? (racks_alike){0}
                  : r->typed    ? racks_alike_typed(fl, r)
                                : racks_alike_of(fl);
  for (uint32_t k = 0; k < r->n;) {
    replica_phi(fl, r, k, last, phi, held);
    if (!held)
      k++;
    else if (!one)
      k = hits_from(fl, r, k + 1, last, phi);
    else if (a.type != RACK_PHI_NONE && last->type == a.type &&
             a.thermal > last->cap)
      k = r->seq ? seq_from(fl, r, k + 1, last, phi, a)
                 : hits_plain(fl, r, k + 1, last, phi);
    else
      k = hits_one(fl, r, k + 1, last, phi);
  }
}

bool work__reps_part_made(const work_reps *all, uint32_t k0, uint32_t n,
                          uint32_t *run0) {
  const uint32_t q0 = all->run0[k0];
  for (uint32_t k = 0; k <= n; k++)
    run0[k] = all->run0[k0 + k] - q0;
  return work__runs_seq(run0, all->runs + q0, n);
}

work_reps work__reps_part(const work_reps *all, uint32_t k0, uint32_t n,
                          const uint32_t *run0, bool seq) {
  const uint32_t q0 = all->run0[k0];
  return (work_reps){.n = n,
                     .run0 = run0,
                     .runs = all->runs + q0,
                     .rack = all->rack + q0,
                     .type = all->type + q0,
                     .held = all->held,
                     .seq = seq,
                     .typed = all->typed,
                     .racks_type = all->racks_type,
                     .solo = true};
}
