/* rack_runs.c - the fleet's units (rack.h): runs of GPUs that share their
 * load and cap, and the racks' update run by run.
 *
 * This is a deliberate change of outputs in their last bits against the
 * per-GPU update (rack.c update_rack): a run of k GPUs at power p adds k p
 * to its rack's sum, where the GPU-by-GPU loop added p k times, which
 * rounds differently (a relative 1e-16 or so a sum; test_rack holds the
 * two within 1e-13). Each GPU's own power is the same bits either way. */
#include <math.h>
#include <string.h>

#include "bits.h"
#include "lanes.h"
#include "rack_internal.h"
#include "vec.h"

void rack__free_units(rack_fleet *f) {
  const sim_allocator *a = f->alloc;
  sim_free(a, f->unit_key);
  sim_free(a, f->run_first);
  sim_free(a, f->run_len);
  sim_free(a, f->run_rack);
  sim_free(a, f->run_type);
  sim_free(a, f->rack_run);
  sim_free(a, f->run_power_w);
  sim_free(a, f->run_cap_w);
  sim_free(a, f->run_sm);
  sim_free(a, f->run_mem);
  sim_free(a, f->run_busy);
  sim_free(a, f->gpu_run);
  sim_free(a, f->run_k);
  sim_free(a, f->rack_pattern);
  sim_free(a, f->rack_memo);
  f->rack_memo = NULL;
  f->gpu_run = f->rack_pattern = NULL;
  f->run_k = NULL;
  f->unit_key = f->run_first = f->run_len = f->rack_run = f->run_rack = NULL;
  f->run_type = NULL;
  f->run_power_w = f->run_cap_w = NULL;
  f->run_sm = f->run_mem = f->run_busy = NULL;
  f->nruns = 0;
  f->run_room = 0;
  f->caps_unfilled = f->loads_unfilled = false;
}

/* The per-run arrays are allocated when the runs are made, at their count
 * (runs_room); what is per GPU or per rack, here. */
int rack_fleet_keep_units(rack_fleet *f) {
  if (f->unit_key != NULL)
    return SIM_OK;
  const sim_allocator *a = f->alloc;
  f->unit_key = sim_calloc(a, f->n, sizeof *f->unit_key);
  f->gpu_run = sim_calloc(a, f->n, sizeof *f->gpu_run);
  f->rack_run = sim_calloc(a, (size_t)f->nracks + 1, sizeof *f->rack_run);
  f->rack_pattern = sim_calloc(a, f->nracks, sizeof *f->rack_pattern);
  f->rack_memo = sim_calloc(a, f->nracks, sizeof *f->rack_memo);
  if (!f->unit_key || !f->gpu_run || !f->rack_run || !f->rack_pattern ||
      !f->rack_memo) {
    rack__free_units(f);
    return SIM_ENOMEM;
  }
  f->runs_stale = true;
  return SIM_OK;
}

/* Room in every per-run array for need runs (sim_vec_reserve, each array
 * on its own copy of the room: they come out equal; after a failure the
 * room kept is the old one, which the arrays that grew exceed). */
static bool runs_room(rack_fleet *f, uint32_t need) {
  const struct {
    void *items;
    size_t size;
  } arrays[] = {
      {&f->run_first, sizeof *f->run_first},
      {&f->run_len, sizeof *f->run_len},
      {&f->run_rack, sizeof *f->run_rack},
      {&f->run_type, sizeof *f->run_type},
      {&f->run_k, sizeof *f->run_k},
      {&f->run_power_w, sizeof(double)},
      {&f->run_cap_w, sizeof(double)},
      {&f->run_sm, sizeof(double)},
      {&f->run_mem, sizeof(double)},
      {&f->run_busy, sizeof(double)},
  };
  size_t room = f->run_room;
  for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++) {
    room = f->run_room;
    if (sim_vec_reserve(f->alloc, arrays[k].items, &room, need,
                        arrays[k].size) != SIM_OK)
      return false;
  }
  f->run_room = room;
  return true;
}

/* GPU j like GPU i in key and cap (their loads not yet filled). */
static bool gpu_keyed_alike(const rack_fleet *f, uint32_t i, uint32_t j) {
  return f->unit_key[i] == f->unit_key[j] &&
         memcmp(&f->cap_w[i], &f->cap_w[j], sizeof(double)) == 0;
}

/* GPU j like GPU i: key, load and cap, to the bit. */
static bool gpu_alike(const rack_fleet *f, uint32_t i, uint32_t j) {
  return gpu_keyed_alike(f, i, j) &&
         memcmp(&f->activity[i], &f->activity[j], sizeof(double)) == 0 &&
         memcmp(&f->mem[i], &f->mem[j], sizeof(double)) == 0 &&
         memcmp(&f->busy[i], &f->busy[j], sizeof(double)) == 0;
}

/* Rack r's group and run lengths, hashed (FNV-1a's step). */
static uint64_t pattern_hash(const rack_fleet *f, uint32_t r) {
  uint64_t h = 0xcbf29ce484222325ULL ^ f->group[r];
  for (uint32_t q = f->rack_run[r]; q < f->rack_run[r + 1]; q++)
    h = (h ^ f->run_len[q]) * 0x100000001b3ULL;
  return h;
}

/* Racks a and b alike in group and run lengths. */
static bool same_pattern(const rack_fleet *f, uint32_t a, uint32_t b) {
  uint32_t qa = f->rack_run[a], qb = f->rack_run[b];
  uint32_t n = f->rack_run[a + 1] - qa;
  return f->group[a] == f->group[b] && f->rack_run[b + 1] - qb == n &&
         memcmp(&f->run_len[qa], &f->run_len[qb], n * sizeof *f->run_len) == 0;
}

/* Each rack's pattern: the first rack alike in group and run lengths,
 * found through an open-addressed table of the patterns seen (rack + 1;
 * 0 empty). Out of memory, each rack is its own: never wrong, only
 * slower. */
static void make_patterns(rack_fleet *f) {
  size_t size = 2;
  while (size < 2 * (size_t)f->nracks)
    size *= 2;
  uint32_t *seen = sim_calloc(f->alloc, size, sizeof *seen);
  for (uint32_t r = 0; r < f->nracks; r++) {
    f->rack_pattern[r] = r;
    size_t i = seen != NULL ? pattern_hash(f, r) & (size - 1) : 0;
    for (; seen != NULL && seen[i] != 0; i = (i + 1) & (size - 1))
      if (same_pattern(f, seen[i] - 1, r)) {
        f->rack_pattern[r] = seen[i] - 1;
        break;
      }
    if (seen != NULL && seen[i] == 0)
      seen[i] = r + 1;
  }
  sim_free(f->alloc, seen);
}

/* Runs break at every rack, every server of a system rack, every change
 * of key and every GPU unlike the one before (a run only ever merges
 * GPUs the per-GPU update would give the same power): each GPU's run and
 * each rack's first, counted. */
static uint32_t mark_runs(rack_fleet *f) {
  uint32_t q = 0;
  for (uint32_t r = 0; r < f->nracks; r++) {
    const rack_group_spec *g = &f->groups[f->group[r]];
    uint32_t per = g->system != NULL ? (uint32_t)g->system->gpus : f->count[r];
    uint32_t first = f->first[r], end = first + f->count[r];
    f->rack_run[r] = q;
    for (uint32_t i = first; i < end; i++) {
      if (i == first || (i - first) % per == 0 || !gpu_alike(f, i - 1, i))
        q++;
      f->gpu_run[i] = q - 1;
    }
  }
  f->rack_run[f->nracks] = q;
  return q;
}

/* The runs made from the GPUs' keys, loads and caps, in arrays at their
 * count. Out of memory for them, units are off (rack__free_units): the
 * per-GPU update from then on, never wrong, only slower (and its sums'
 * last bits are the per-GPU loop's). */
void rack__build_runs(rack_fleet *f) {
  rack_fleet_gpu_loads(f); /* filled when the keys changed; to be sure */
  rack_fleet_gpu_caps(f);
  uint32_t q = mark_runs(f);
  if (!runs_room(f, q)) {
    rack__free_units(f);
    return;
  }
  for (uint32_t i = 0; i < f->n; i++) { /* the racks' GPUs are 0 .. n - 1 */
    uint32_t k = f->gpu_run[i];
    if (i == 0 || f->gpu_run[i - 1] != k) {
      f->run_first[k] = i;
      f->run_len[k] = 0;
    }
    f->run_len[k]++;
  }
  f->nruns = q;
  for (uint32_t k = 0; k < q; k++) {
    uint32_t i = f->run_first[k];
    f->run_k[k] = f->run_len[k];
    f->run_cap_w[k] = f->cap_w[i];
    f->run_rack[k] = f->rack[i];
    f->run_type[k] = f->type[i];
    rack__set_run_arrays(f, k, rack_gpu_load(f, i));
  }
  make_patterns(f);
  memset(f->rack_memo, 0, f->nracks * sizeof *f->rack_memo);
  f->runs_stale = false;
  f->runs_made++;
  rack_known_forget(f); /* the runs' indices are new */
}

/* GPU j like GPU i in what is filled of key, load and cap, to the bit. */
static bool gpu_filled_alike(const rack_fleet *f, uint32_t i, uint32_t j) {
  bool loads = f->loads_unfilled ||
               (memcmp(&f->activity[i], &f->activity[j], sizeof(double)) == 0 &&
                memcmp(&f->mem[i], &f->mem[j], sizeof(double)) == 0 &&
                memcmp(&f->busy[i], &f->busy[j], sizeof(double)) == 0);
  bool caps = f->caps_unfilled ||
              memcmp(&f->cap_w[i], &f->cap_w[j], sizeof(double)) == 0;
  return f->unit_key[i] == f->unit_key[j] && loads && caps;
}

uint32_t rack_fleet_first_unlike(const rack_fleet *f) {
  for (uint32_t q = 0; f->unit_key != NULL && q < f->nruns; q++) {
    uint32_t i = f->run_first[q];
    if (!f->caps_unfilled &&
        memcmp(&f->cap_w[i], &f->run_cap_w[q], sizeof(double)) != 0)
      return i; /* a writer per GPU without rack_fleet_caps_written */
    if (!f->loads_unfilled && (!sim_same_bits(f->activity[i], f->run_sm[q]) ||
                               !sim_same_bits(f->mem[i], f->run_mem[q]) ||
                               !sim_same_bits(f->busy[i], f->run_busy[q])))
      return i; /* a run's first GPU written apart from its run */
    for (uint32_t j = i + 1; j < i + f->run_len[q]; j++)
      if (!gpu_filled_alike(f, i, j) || f->gpu_run[j] != q ||
          (!f->power_unfilled &&
           memcmp(&f->power_w[i], &f->power_w[j], sizeof(double)) != 0))
        return j;
  }
  return RACK_NO_GPU;
}

bool rack_fleet_runs_alike(const rack_fleet *f) {
  return rack_fleet_first_unlike(f) == RACK_NO_GPU;
}

/* GPU i (a run's first) evaluated: P = min(P(1, L), cap, thermal cap),
 * never below P(phi_min, L), as update_rack (rack.c) has it. Out of line
 * on purpose: inlined, its dozen doubles crowded the hot loop
 * (server_runs) out of registers, which then reloaded its arrays and
 * sums from the stack every run (42 instructions a run); it runs for
 * about 1 run in 16. */
static __attribute__((noinline)) rack__run_eval
run_evaluate(const rack_fleet *f, uint32_t q, double tcap) {
  uint16_t t = f->run_type[q];
  double idle = f->t_idle[t], cap = f->run_cap_w[q];
  double m = f->t_mem[t] * f->run_mem[q];
  double s = f->t_busy[t] * f->run_busy[q] + f->t_sm[t] * f->run_sm[q];
  double full = idle + m + s;
  double floor = idle + m * f->t_smin[t] + s * f->t_dmin[t];
  double c = rack_cap_min(cap, tcap);
  double capped = c > floor ? c : floor;
  double share = (full - idle) * (1 / f->t_span[t]); /* can ask above TDP */
  return (rack__run_eval){sim_bits_at(f->run_cap_w, q),
                          sim_bits_at(f->run_sm, q),
                          sim_bits_at(f->run_mem, q),
                          sim_bits_at(f->run_busy, q),
                          full <= c ? full : capped,
                          share < 1 ? share : 1,
                          rack__share_of(f, t, rack_run_load(f, q)),
                          tcap < cap && full > tcap,
                          sim_bits_at(&tcap, 0),
                          t,
                          true};
}

/* The sums of a rack's pass over its runs, in their order. */
typedef struct run_pass {
  double gsum, asum; /* the rack's GPU power and activity shares */
  uint32_t held;
  uint32_t q;           /* the next run */
  double tcap;          /* the rack's thermal cap */
  rack__run_eval *last; /* the run evaluated last (the update's carry) */
  bool evaluated;       /* *last made here (a new one: rack__carry's gen) */
} run_pass;

/* Whether GPU i's cap and load are e's inputs, to the bit: one branch
 * for the four (a NaN is like itself; 0 and -0 differ). */
static inline bool run_inputs_are(uint64_t cap, uint64_t sm, uint64_t mem,
                                  uint64_t busy, const rack__run_eval *e) {
  return ((cap ^ e->cap) | (sm ^ e->sm) | (mem ^ e->mem) | (busy ^ e->busy)) ==
         0;
}

/* Runs q .. qend - 1 (one server's): each run's power written, k times
 * it and its shares added to the rack's sums and the server's. What the
 * loop carries is all locals: stores to run_power_w could alias the
 * pass's own doubles, which were then stored and read again each run.
 * A run like the last one evaluated, to the bit, takes its answer; its
 * GPUs' count is read as a double (run_k), held counted only when the
 * thermal cap holds the answer. alike (a constant where it is called):
 * every run is known to be at the last evaluation (runs_all_at), so
 * none is compared again. */
static inline __attribute__((always_inline)) void
server_runs(rack_fleet *f, uint32_t qend, run_pass *ps, double *gpu_out,
            double *act_out, bool alike) {
  const double *run_k = f->run_k;
  const double *cap = f->run_cap_w, *sm = f->run_sm, *mem = f->run_mem;
  const double *busy = f->run_busy;
  double *run_power = f->run_power_w;
  rack__run_eval e = *ps->last;
  bool evaluated = false; /* else *ps->last stands: no copy back */
  double gsum = ps->gsum, asum = ps->asum, gpu = 0, act = 0;
  uint32_t held = ps->held;
  for (uint32_t q = ps->q; q < qend; q++) {
    if (!alike &&
        !run_inputs_are(sim_bits_at(cap, q), sim_bits_at(sm, q),
                        sim_bits_at(mem, q), sim_bits_at(busy, q), &e)) {
      e = run_evaluate(f, q, ps->tcap);
      evaluated = true;
    }
    double k = run_k[q];
    if (!alike) /* else the compare gave it e's (runs_all_at) */
      run_power[q] = e.p; /* its GPUs' at rack_fleet_gpu_power */
    if (e.held)
      held += f->run_len[q];
    gsum += k * e.p;
    asum += k * e.share;
    gpu += k * e.p;
    act += k * e.load_share;
  }
  ps->gsum = gsum;
  ps->asum = asum;
  ps->held = held;
  ps->q = qend;
  if (evaluated) {
    rack__eval_copy(ps->last, &e);
    ps->evaluated = true;
  }
  *gpu_out = gpu;
  *act_out = act;
}

/* Whether runs q .. qend - 1 all have e's inputs, to the bit, each run
 * given e's power on the way (a rack unlike it has its pass write them
 * again). Two runs a turn, their xors or-ed into one register and tested
 * once at the end: no branch a run, and no early way out (a rack unlike
 * e, about 1 in 10, is then gone through in its pass anyway). */
static bool runs_all_at(rack_fleet *f, uint32_t q, uint32_t qend,
                        const rack__run_eval *e) {
  const double *cap = f->run_cap_w, *sm = f->run_sm, *mem = f->run_mem;
  const double *busy = f->run_busy;
  double *power = f->run_power_w;
  sim_u2 ec = {e->cap, e->cap}, es = {e->sm, e->sm};
  sim_u2 em = {e->mem, e->mem}, eb = {e->busy, e->busy};
  double p2[2] = {e->p, e->p};
  sim_u2 odd = {0, 0}, odd2 = {0, 0};
  for (; q + 4 <= qend; q += 4) { /* four runs a turn: the loop's share */
    odd |= (sim_u2_at(cap + q) ^ ec) | (sim_u2_at(sm + q) ^ es) |
           (sim_u2_at(mem + q) ^ em) | (sim_u2_at(busy + q) ^ eb);
    odd2 |= (sim_u2_at(cap + q + 2) ^ ec) | (sim_u2_at(sm + q + 2) ^ es) |
            (sim_u2_at(mem + q + 2) ^ em) | (sim_u2_at(busy + q + 2) ^ eb);
    memcpy(power + q, p2, sizeof p2);
    memcpy(power + q + 2, p2, sizeof p2);
  }
  if (q + 2 <= qend) {
    odd |= (sim_u2_at(cap + q) ^ ec) | (sim_u2_at(sm + q) ^ es) |
           (sim_u2_at(mem + q) ^ em) | (sim_u2_at(busy + q) ^ eb);
    memcpy(power + q, p2, sizeof p2);
    q += 2;
  }
  odd |= odd2;
  uint64_t last = 0;
  if (q < qend) {
    last = (sim_bits_at(cap, q) ^ e->cap) | (sim_bits_at(sm, q) ^ e->sm) |
           (sim_bits_at(mem, q) ^ e->mem) | (sim_bits_at(busy, q) ^ e->busy);
    power[q] = e->p;
  }
  return sim_u2_zero(odd) && last == 0;
}

#ifdef SIM_LANES_AVX2
/* A run's inputs, each broadcast to the four lanes of a register. */
typedef struct run_key4 {
  __m256i cap, sm, mem, busy;
} run_key4;

/* Non-zero lanes where runs q..q+3 differ from e in any input. */
__attribute__((target("avx2"))) static inline __m256i
unlike4_at(const rack_fleet *f, uint32_t q, const run_key4 *e) {
  return _mm256_or_si256(_mm256_or_si256(sim_x4_xor(f->run_cap_w + q, e->cap),
                                         sim_x4_xor(f->run_sm + q, e->sm)),
                         _mm256_or_si256(sim_x4_xor(f->run_mem + q, e->mem),
                                         sim_x4_xor(f->run_busy + q, e->busy)));
}

/* runs_all_at, four runs a register (AVX2, where the CPU has it: about
 * half the instructions a run of two a register). Eight runs a turn in
 * two registers, then four, then the last one to three through masks
 * (a lane off reads 0, and its xor with e is masked off again). */
__attribute__((target("avx2"))) static bool
runs_all_at_avx2(rack_fleet *f, uint32_t q, uint32_t qend,
                 const rack__run_eval *e) {
  double *power = f->run_power_w;
  const run_key4 k4 = {_mm256_set1_epi64x((long long)e->cap),
                       _mm256_set1_epi64x((long long)e->sm),
                       _mm256_set1_epi64x((long long)e->mem),
                       _mm256_set1_epi64x((long long)e->busy)};
  __m256d p4 = _mm256_set1_pd(e->p);
  __m256i odd = _mm256_setzero_si256(), odd2 = _mm256_setzero_si256();
  for (; q + 8 <= qend; q += 8) {
    odd = _mm256_or_si256(odd, unlike4_at(f, q, &k4));
    odd2 = _mm256_or_si256(odd2, unlike4_at(f, q + 4, &k4));
    _mm256_storeu_pd(power + q, p4);
    _mm256_storeu_pd(power + q + 4, p4);
  }
  if (q + 4 <= qend) {
    odd = _mm256_or_si256(odd, unlike4_at(f, q, &k4));
    _mm256_storeu_pd(power + q, p4);
    q += 4;
  }
  if (q < qend) {
    __m256i k = sim_x4_first(qend - q);
    __m256i x = _mm256_or_si256(
        _mm256_or_si256(sim_x4_xor_masked(f->run_cap_w + q, k4.cap, k),
                        sim_x4_xor_masked(f->run_sm + q, k4.sm, k)),
        _mm256_or_si256(sim_x4_xor_masked(f->run_mem + q, k4.mem, k),
                        sim_x4_xor_masked(f->run_busy + q, k4.busy, k)));
    odd2 = _mm256_or_si256(odd2, _mm256_and_si256(x, k));
    _mm256_maskstore_pd(power + q, k, p4);
  }
  odd = _mm256_or_si256(odd, odd2);
  return _mm256_testz_si256(odd, odd);
}
#endif

/* Whether runs q .. qend - 1 all have e's cap, to the bit, each run given
 * e's power on the way (runs_all_at for runs whose loads are known to be
 * e's: their caps alone compared). */
static bool caps_all_at(rack_fleet *f, uint32_t q, uint32_t qend,
                        const rack__run_eval *e) {
  const double *cap = f->run_cap_w;
  double *power = f->run_power_w;
  sim_u2 ec = {e->cap, e->cap}, odd = {0, 0};
  double p2[2] = {e->p, e->p};
  for (; q + 2 <= qend; q += 2) {
    odd |= sim_u2_at(cap + q) ^ ec;
    memcpy(power + q, p2, sizeof p2);
  }
  uint64_t last = 0;
  if (q < qend) {
    last = sim_bits_at(cap, q) ^ e->cap;
    power[q] = e->p;
  }
  return sim_u2_zero(odd) && last == 0;
}

#ifdef SIM_LANES_AVX2
/* caps_all_at, four runs a register (AVX2): eight a turn in two, then
 * four, then the last one to three through masks. */
__attribute__((target("avx2"))) static bool
caps_all_at_avx2(rack_fleet *f, uint32_t q, uint32_t qend,
                 const rack__run_eval *e) {
  const double *cap = f->run_cap_w;
  double *power = f->run_power_w;
  const __m256i ec = _mm256_set1_epi64x((long long)e->cap);
  __m256d p4 = _mm256_set1_pd(e->p);
  __m256i odd = _mm256_setzero_si256(), odd2 = _mm256_setzero_si256();
  for (; q + 8 <= qend; q += 8) {
    odd = _mm256_or_si256(odd, sim_x4_xor(cap + q, ec));
    odd2 = _mm256_or_si256(odd2, sim_x4_xor(cap + q + 4, ec));
    _mm256_storeu_pd(power + q, p4);
    _mm256_storeu_pd(power + q + 4, p4);
  }
  if (q + 4 <= qend) {
    odd = _mm256_or_si256(odd, sim_x4_xor(cap + q, ec));
    _mm256_storeu_pd(power + q, p4);
    q += 4;
  }
  if (q < qend) {
    __m256i k = sim_x4_first(qend - q);
    odd2 = _mm256_or_si256(
        odd2, _mm256_and_si256(sim_x4_xor_masked(cap + q, ec, k), k));
    _mm256_maskstore_pd(power + q, k, p4);
  }
  odd = _mm256_or_si256(odd, odd2);
  return _mm256_testz_si256(odd, odd);
}
#endif

/* The known stretch (rack.h's rack_known_at) that holds every one of
 * runs q .. qend - 1, or NULL: the one found last (c->known) looked at
 * first, as the racks follow their runs and a stretch holds several. */
static inline const struct rack_known *
known_whole(const rack_fleet *f, rack__carry *c, uint32_t q, uint32_t qend) {
  const struct rack_known *k = &f->known[c->known];
  if (c->known >= f->nknown || q < k->q0 || q >= k->q1) {
    k = rack_known_at(f, q);
    if (k == NULL)
      return NULL;
    c->known = (uint32_t)(k - f->known);
  }
  return qend <= k->q1 ? k : NULL;
}

/* Whether load l is e's, to the bit. */
static inline bool load_is_eval(gpu_load l, const rack__run_eval *e) {
  return ((sim_bits(l.sm) ^ e->sm) | (sim_bits(l.mem) ^ e->mem) |
          (sim_bits(l.busy) ^ e->busy)) == 0;
}

/* Whether a rack's runs q .. qend - 1 all have e's inputs, to the bit
 * (then each was given e's power): where a known stretch kn holds them
 * all (its load e's) their caps alone are read, else every input of
 * every run. bench-10k's fluid services hand over their loads as known
 * stretches, about 2,100 of a tick's 2,245 runs: the update read some
 * 50 KB of loads a tick to find what the stretches say. */
static inline __attribute__((always_inline)) bool
rack_runs_at(rack_fleet *f, uint32_t q, uint32_t qend,
             const rack__run_eval *e, const struct rack_known *kn, bool wide) {
#ifdef SIM_LANES_AVX2
  if (wide)
    return kn != NULL ? caps_all_at_avx2(f, q, qend, e)
                      : runs_all_at_avx2(f, q, qend, e);
#endif
  (void)wide;
  return kn != NULL ? caps_all_at(f, q, qend, e) : runs_all_at(f, q, qend, e);
}

/* Whether m's rack (kept for rack r's pattern) was evaluated from c's e
 * (the same inputs, GPU type and thermal cap: at once where m holds that
 * evaluation itself, c's gen) with rack r's host range and limit. */
static inline __attribute__((always_inline)) bool
memo_fits(const rack_fleet *f, uint32_t r, const rack__rack_memo *m,
          const rack__carry *c) {
  const rack__run_eval *o = &m->e, *e = &c->e;
  return m->valid && m->other_idle == sim_bits_at(f->other_idle_w, r) &&
         m->other_max == sim_bits_at(f->other_max_w, r) &&
         m->limit == sim_bits_at(f->limit_w, r) &&
         (m->gen == c->gen ||
          (o->cap == e->cap && o->sm == e->sm && o->mem == e->mem &&
           o->busy == e->busy && o->tcap == e->tcap && o->type == e->type));
}

/* Rack r's update kept in m, its runs all at e: field by field (as a
 * compound literal, GCC built the memo on the stack and copied it in
 * sixteen-byte moves, two of which loaded words just stored in parts:
 * stores not forwarded, about 8% of update_all_wide's samples). */
static inline void memo_put(rack__rack_memo *m, const rack_fleet *f, uint32_t r,
                            const rack__carry *c) {
  rack__eval_copy(&m->e, &c->e);
  m->gen = c->gen;
  m->held = f->throttled[r];
  m->other_idle = sim_bits_at(f->other_idle_w, r);
  m->other_max = sim_bits_at(f->other_max_w, r);
  m->limit = sim_bits_at(f->limit_w, r);
  m->mean = f->activity_mean[r];
  m->gpu = f->gpu_power_w[r];
  m->rack = f->rack_power_w[r];
  m->loss = f->loss_w[r];
  m->fan = f->fan_w[r];
  m->valid = true;
}

/* Rack r given m's sums (its runs were given m's power, e's, as they
 * were compared: runs_all_at). */
static inline __attribute__((always_inline)) void
memo_give(rack_fleet *f, uint32_t r, const rack__rack_memo *m) {
  f->throttled[r] = m->held;
  f->activity_mean[r] = m->mean;
  f->gpu_power_w[r] = m->gpu;
  f->rack_power_w[r] = m->rack;
  f->loss_w[r] = m->loss;
  f->fan_w[r] = m->fan;
}

/* Rack r run by run, one pass: each run's power, k times it to the
 * rack's sums and to its server's (runs never cross a server: a server's
 * end is its last GPU's run), the servers' power through their supplies
 * as they close; the GPUs' own powers wait for a reader
 * (rack_fleet_gpu_power). The same terms in the same order as
 * update_rack's sums and rack__system_rack's. alike: its runs are all at
 * c->e (runs_all_at found it, and no rack kept for its pattern fits). */
static __attribute__((noinline)) void rack_pass(rack_fleet *f, uint32_t r,
                                                rack__carry *c, bool alike) {
  const rack_group_spec *g = &f->groups[f->group[r]];
  uint32_t first = f->first[r], end = first + f->count[r];
  uint32_t per = g->system != NULL ? (uint32_t)g->system->gpus : f->count[r];
  run_pass ps = {
      .q = f->rack_run[r], .tcap = f->thermal_cap_w[r], .last = &c->e};
  rack__servers sv = {0, 0, 0, &c->server};
  for (uint32_t i = first; i < end; i += per) {
    double gpu, act;
    /* The last server's runs end with the rack's: its GPU's run is not
     * read (gpu_run is per GPU, 40 KB at bench-10k, and its line was
     * mostly out of the first-level cache: about a tenth of rack_pass's
     * samples, at racks of one server). */
    uint32_t qend =
        i + per >= end ? f->rack_run[r + 1] : f->gpu_run[i + per - 1] + 1;
    if (alike) /* every run at *ps.last (runs_all_at): none compared */
      server_runs(f, qend, &ps, &gpu, &act, true);
    else
      server_runs(f, qend, &ps, &gpu, &act, false);
    if (g->system != NULL)
      rack__server_add(f, r, gpu, act, &sv);
  }
  if (ps.evaluated)
    c->gen = ++f->eval_gen;
  f->throttled[r] = ps.held;
  f->activity_mean[r] = ps.asum / f->count[r];
  f->gpu_power_w[r] = ps.gsum;
  if (g->system != NULL)
    rack__servers_done(f, r, &sv);
  else
    rack__plain_rack(f, r);
}

/* Rack r: the run evaluated last (c->e, by an earlier rack of this update
 * too) stands while the GPU type and the thermal cap are its, and the
 * load of a known stretch that holds the rack (else its first run is
 * evaluated, as its pass would first: a rack of one service after one of
 * another is then still found alike, and may be taken whole); a rack
 * whose runs all take it (runs_all_at, four runs a register where wide)
 * and that is like the rack kept for its pattern (f->rack_memo) takes
 * that rack's sums whole (its servers too: runs never cross a server, so
 * alike run lengths in one group are alike servers). */
static inline __attribute__((always_inline)) void
update_runs(rack_fleet *f, uint32_t r, rack__carry *c, bool wide) {
  uint32_t q = f->rack_run[r], qend = f->rack_run[r + 1];
  double tcap = f->thermal_cap_w[r];
  const struct rack_known *kn = known_whole(f, c, q, qend);
  if (!c->e.valid || c->e.type != f->run_type[q] ||
      c->e.tcap != sim_bits_at(&tcap, 0) ||
      (kn != NULL && !load_is_eval(kn->l, &c->e))) {
    c->e = run_evaluate(f, q, tcap);
    c->gen = ++f->eval_gen;
  }
  bool alike = rack_runs_at(f, q, qend, &c->e, kn, wide);
  rack__rack_memo *m = &f->rack_memo[f->rack_pattern[r]];
  if (alike && memo_fits(f, r, m, c)) {
    m->gen = c->gen; /* e's inputs are m's: the next fit at once */
    memo_give(f, r, m);
    return;
  }
  rack_pass(f, r, c, alike);
  if (alike)
    memo_put(m, f, r, c);
}

/* The racks' loop here, rack by rack, update_runs in line in it: a rack
 * taken whole is then no call, and the sums stay in registers but around
 * a rack's pass (as a call a rack, 19 instructions a rack went in its
 * entry, exit and the sums' loads and stores). wide (a constant where it
 * is called): the runs compared through AVX2. */
static inline __attribute__((always_inline)) void
update_all(rack_fleet *f, double *total, double *losses, bool wide) {
  rack__carry carry = {0};
  double sum = *total, loss = *losses;
  for (uint32_t r = 0; r < f->nracks; r++) {
    if (f->dark[r]) {
      rack__darken(f, r);
      continue;
    }
    update_runs(f, r, &carry, wide);
    sum += f->rack_power_w[r];
    loss += f->loss_w[r];
  }
  *total = sum;
  *losses = loss;
}

#ifdef SIM_LANES_AVX2
/* The loop built for AVX2, its runs' compares in line in it (a call a
 * rack to them, with their set-up, cost about 20 instructions a rack).
 * GCC left memo_fits and memo_give out of line in it: they are
 * always_inline. */
__attribute__((target("avx2"))) static void
update_all_wide(rack_fleet *f, double *total, double *losses) {
  update_all(f, total, losses, true);
}
#endif

static void update_all_narrow(rack_fleet *f, double *total, double *losses) {
  update_all(f, total, losses, false);
}

void rack__update_all_runs(rack_fleet *f, double *total, double *losses) {
#ifdef SIM_LANES_AVX2
  if (sim_lanes_wide()) {
    update_all_wide(f, total, losses);
    return;
  }
#endif
  update_all_narrow(f, total, losses);
}
