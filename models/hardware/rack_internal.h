/* rack_internal.h - what rack.c and rack_runs.c share: a server's power,
 * a GPU's load share, a plain rack's host and losses, and the runs. */
#ifndef MODELS_RACK_INTERNAL_H
#define MODELS_RACK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "bits.h"
#include "rack.h"

/* rack_power.c: one server of a system group at GPU power gpu_w and
 * mean activity a (other_w: its share of the group's other_* when given). */
sys_power rack__server_power(const rack_group_spec *g, double gpu_w, double a,
                             double other_w);

/* The answer rack_fleet_group_worst_w gave last for a group (w its
 * gpu_w's bits; valid false: none yet). Every tenth tick of bench-10k's
 * fluid day the fleet's split bisects its share in 56 trials, each
 * asking both groups at one cap, and the two groups are alike: the
 * second asks what the first just did. (Sixteen answers kept, by gpu_w,
 * found no more: a split's 56 caps push the last split's out.) */
typedef struct rack_worst_memo {
  uint64_t w;
  double worst;
  bool valid;
} rack_worst_memo;

/* rack_group.c: each of f's groups given its memo of rack_group_worst_w
 * (f->worst_memo[g]), the first group's alike in everything the answer
 * reads (the same system and GPU spec, rack size, host load and other_*,
 * the losses curve without a system): those give one answer for one
 * gpu_w, so they share it. */
void rack__worst_memos_share(rack_fleet *f);

/* A GPU's activity as the rest of the rack sees it, of GPU type t at
 * load l (a run's; or GPU i's): the share of its idle-to-TDP span its
 * load asks at full clock, at most 1 (the rack's activity_mean averages
 * the same). fmin(1, x) written out, NaN giving 1 as fmin does: libm's
 * is a call, made for every GPU of a system rack every period, so inline
 * here, not a call either (once a run). */
static inline double rack__share_of(const rack_fleet *f, uint16_t t,
                                    gpu_load l) {
  double full = f->t_busy[t] * l.busy + f->t_mem[t] * l.mem + f->t_sm[t] * l.sm;
  double x = full / f->t_span[t];
  return x < 1 ? x : 1;
}

static inline double rack__load_share(const rack_fleet *f, uint32_t i) {
  return rack__share_of(f, f->type[i], rack_gpu_load(f, i));
}


/* rack_power.c: rack r's host power and losses without a system, from its
 * GPU power and activity mean. */
void rack__plain_rack(rack_fleet *f, uint32_t r);

/* The server rack__server_power gave last: its group and inputs (to
 * the bit) and what it gave at the inlet, in losses and in fans. A
 * server like it takes them: bench-10k's fluid update asks about 37
 * servers a tick (one a GB200-NVL72 rack), of which about 10 are like
 * the server before (racks of alike sums not taken whole). g NULL: none
 * yet. */
typedef struct rack__server_memo {
  const rack_group_spec *g;
  uint64_t gpu, a, other;
  double wall, loss, fan;
} rack__server_memo;

/* A system rack's servers' power, added server by server in their
 * order: at the inlet, the supplies' losses, the fans; memo the server
 * last asked (kept by the caller, from rack to rack). */
typedef struct rack__servers {
  double wall, loss, fan;
  rack__server_memo *memo;
} rack__servers;

/* rack_power.c: one server of rack r whose GPUs draw gpu W in all at
 * load shares summing to act (rack__load_share), added to *sv; and the
 * sums written as the rack's inlet power, losses and fans. */
void rack__server_add(const rack_fleet *f, uint32_t r, double gpu, double act,
                      rack__servers *sv);
void rack__servers_done(rack_fleet *f, uint32_t r, const rack__servers *sv);

/* rack_power.c: a system rack GPU by GPU (the per-GPU update, rack.c):
 * each server from its GPUs' powers and load shares. */
void rack__system_rack(rack_fleet *f, uint32_t r);

/* One run's inputs (its first GPU's cap and load, to the bit), its GPU
 * type and its rack's thermal cap, and what update_rack's expressions
 * make of them: the power, the activity share the rack averages, the
 * load share a server averages (rack__load_share), whether the thermal
 * cap holds it. Runs are most often alike in all of them, within a rack
 * (the slots of one service side by side, at one load and one cap) and
 * from rack to rack (its replicas across racks): bench-10k's fluid mode
 * has about 16 runs a rack and 0.6% of runs unlike the run before, so a
 * run like the last one evaluated takes its answer, bit for bit the
 * same. valid false: none yet. */
typedef struct rack__run_eval {
  uint64_t cap, sm, mem, busy;
  double p, share, load_share;
  uint32_t held;
  uint64_t tcap;
  uint16_t type;
  bool valid;
} rack__run_eval;

/* *to = *e field by field: a copy of the struct whole went through the
 * stack in sixteen-byte moves that loaded words just stored in parts
 * (the store not forwarded: about a tenth of rack_pass's samples in the
 * fluid day, at its copy back). */
static inline void rack__eval_copy(rack__run_eval *to,
                                   const rack__run_eval *e) {
  to->cap = e->cap;
  to->sm = e->sm;
  to->mem = e->mem;
  to->busy = e->busy;
  to->p = e->p;
  to->share = e->share;
  to->load_share = e->load_share;
  to->held = e->held;
  to->tcap = e->tcap;
  to->type = e->type;
  to->valid = e->valid;
}

/* A rack whose runs all took one evaluation (e), and what its update
 * gave. A rack of the same run pattern (rack_pattern: the same group and
 * run lengths, so the same servers), host range and limit, with every
 * run at e too, adds the same terms in the same order: the same sums,
 * bit for bit, in this update or a later one (nothing else the update
 * reads changes while the runs stand). One is kept a pattern
 * (f->rack_memo, at the pattern's first rack), from update to update,
 * emptied when the runs are made again (the patterns with them): within
 * an update a pattern's racks of one service, of a job, of free GPUs take
 * turns, and a rack whose runs kept their inputs since the last update
 * finds its own sums. (Kept for one update only, bench-10k's fluid tick
 * was 434.4 k instructions, 432.7 k now; two a pattern, the one used
 * last first, found 1 rack in 170 more for more compares and moves:
 * 433.6 k.) valid false: none yet. */
typedef struct rack__rack_memo {
  rack__run_eval e;
  uint32_t held;
  uint64_t other_idle, other_max, limit;
  double mean, gpu, rack, loss, fan;
  uint64_t gen; /* e's evaluation's number (rack__carry's gen) */
  bool valid;
} rack__rack_memo;

/* What one update carries from rack to rack: the run evaluated last,
 * the server, and the known stretch found last. Zeroed ({0}) at the
 * update's start. gen: e's evaluation's number (f->eval_gen when it was
 * made, from 1 on, never again): a rack's memo of the same number holds
 * e itself, so its fit needs none of e's inputs compared. */
typedef struct rack__carry {
  rack__run_eval e;
  uint64_t gen;
  rack__server_memo server;
  uint32_t known; /* the known stretch found last (f->known's index) */
} rack__carry;

/* rack_power.c: dark rack r's GPUs, runs and sums given 0 W. */
void rack__darken(rack_fleet *f, uint32_t r);

/* rack_runs.c: the runs made again from the keys, loads and caps now;
 * every rack's GPUs updated run by run (a dark one darkened), its inlet
 * power and losses added to *total and *losses rack by rack; the runs'
 * arrays freed. */
void rack__build_runs(rack_fleet *f);
void rack__update_all_runs(rack_fleet *f, double *total, double *losses);
void rack__free_units(rack_fleet *f);

/* sum with x added n times, in order: four adds a turn, the same adds
 * with a quarter of the loop's tests (the samples and control's budgets
 * add every rack's caps, GPU by GPU). */
static inline double rack__add_times(double sum, double x, uint32_t n) {
  for (; n >= 4; n -= 4) {
    sum += x;
    sum += x;
    sum += x;
    sum += x;
  }
  for (; n > 0; n--)
    sum += x;
  return sum;
}

/* The fleet's cache of solved clocks (rack.h's phi_memo), in line for
 * rack.c's lookups and rack_phi.c's stretches (hot loops). One clock
 * solved: the type, cap and load it was solved for. */
typedef struct rack_phi_memo {
  double cap, sm, mem, busy, phi;
  uint32_t type; /* UINT32_MAX: empty */
} rack_phi_memo;

/* Entries of the cache, a power of two: 4,096, over 4,096 GPUs 16,384
 * (768 KiB). At bench-10k's request-level peak, 1,890 new pairs a period,
 * 4,096 had pushed out a third of those asked again the next period
 * (1,893 -> 1,845 solves a period); a small fleet keeps its footprint. */
static inline unsigned rack__phi_memo_bits(uint32_t gpus) {
  return gpus > 4096 ? 14 : 12;
}

/* Whether the cache is worth reading. Its table is larger than the
 * caches of the CPU and a tick asks it about twenty times, so each read
 * waits on memory (perf of bench-10k's fluid day: 84% of
 * rack__run_phi_remember's samples on the slot's first compare, about
 * 110 ns a read), where a solve costs about 200 ns: a read pays where
 * more than about half of them hit. The fluid day's hit about one in
 * five (the request level's at its peak, one in thirty): there the reads
 * are skipped, and one lookup in RACK_PHI_SAMPLE reads still, to see
 * whether hits came back. A skipped read is taken as a miss: the clock
 * solved, the same bits, and written to its entry as a miss is, so the
 * cache stays filled with exact answers for when the reads come back
 * (a store does not wait on memory as a read does). Decided every
 * RACK_PHI_WINDOW reads: skip while fewer than half of them hit.
 *
 * Sparse: while fewer than one read in RACK_PHI_SPARSE_HITS hits, one
 * one-by-one lookup (rack.c's, the fluid day's) in RACK_PHI_SPARSE
 * reads (a stretch's, rack_phi.c's, none: below). The sampled reads
 * themselves hit
 * about one in 24 in the fluid day (49 of 1,187 over its first 10
 * minutes, beyond the recent entries' 3,933 of 12,984 lookups), so at
 * one in eight they cost about two reads from memory a tick for a clock
 * saved every twelve ticks: perf of the fluid day, rack__run_phi_remember
 * 1.32% -> 0.85% of the samples (four pairs), for 39 more solves in
 * those 10 minutes. Then half of its samples were on the store of a
 * miss's solve to its entry (a line from memory, as a read's), so while
 * sparse the one-by-one lookups' misses write one in RACK_PHI_SAMPLE of
 * them there (the recent entry always): enough that keys asked again
 * show in the sampled reads (about one in eight of them found) and end
 * the sparse state, from where every miss is written again. A batch's
 * lookups (rack_phi.c's) while sparse: none for a stretch's keys
 * (rack__runs_phi_remember's: solved, neither read nor written), the
 * one-by-one lookups' reads and writes for rack__phis_at's; at the
 * request level's peak the sparse state met 96% of the stretches' keys,
 * and their entries' lines (asked for, read, written) cost more than
 * the 2.7% of solves they spared, even one key's in 64
 * (docs/performance-log.md, thirty-first and thirty-second sessions). */
#define RACK_PHI_WINDOW 64
#define RACK_PHI_SAMPLE 8
#define RACK_PHI_SPARSE 64
#define RACK_PHI_SPARSE_HITS 16

/* In front of the cache, the clocks of the last keys found or solved,
 * RACK_PHI_RECENT of them by the same hash (direct-mapped: 3 KB, which
 * the tick's twenty lookups keep near the CPU): read before the cache,
 * gate or none. Of the fluid day's hits most are a key asked again
 * within a few ticks (about seven in ten within its own tick), which the
 * gate's skipped reads would otherwise solve again. One-by-one lookups
 * only (rack_phi.c says why). */
#define RACK_PHI_RECENT_BITS 6
#define RACK_PHI_RECENT (1u << RACK_PHI_RECENT_BITS)

typedef struct rack_phi_gate {
  uint32_t seen, hits; /* this window's reads, and their hits */
  uint32_t passed;     /* lookups not read since the last one read */
  bool skip;
  bool sparse; /* while skipping, RACK_PHI_SPARSE lookups a read */
  uint32_t unkept; /* misses not written since the last one, while sparse */
  rack_phi_memo recent[RACK_PHI_RECENT]; /* type UINT32_MAX: empty */
} rack_phi_gate;

/* Whether this is the n-th call since *count was last reset (then it is). */
static inline bool rack__phi_nth(uint32_t *count, uint32_t n) {
  if (++*count < n)
    return false;
  *count = 0;
  return true;
}

/* Whether this lookup reads the cache (then rack__phi_read_was); lone:
 * a one-by-one lookup (rack.c's), which alone the sparse state thins. */
static inline bool rack__phi_reads(rack_phi_gate *g, bool lone) {
  return !g->skip ||
         rack__phi_nth(&g->passed, lone && g->sparse ? RACK_PHI_SPARSE
                                                     : RACK_PHI_SAMPLE);
}

/* Whether a one-by-one miss's solve is written to its cache entry:
 * every one but while sparse, then one in RACK_PHI_SAMPLE (rack__phis_at's
 * misses the same; a stretch's none, rack_phi.c). */
static inline bool rack__phi_keeps(rack_phi_gate *g) {
  return !g->sparse || rack__phi_nth(&g->unkept, RACK_PHI_SAMPLE);
}

/* A read's outcome counted; the window's end decides the next. */
static inline void rack__phi_read_was(rack_phi_gate *g, bool hit) {
  g->hits += hit;
  if (++g->seen < RACK_PHI_WINDOW)
    return;
  g->skip = 2 * g->hits < g->seen;
  g->sparse = RACK_PHI_SPARSE_HITS * g->hits < g->seen;
  g->seen = g->hits = 0;
}

/* Same to the bit (a NaN is like itself; -0 and 0 differ: a miss). */
static inline bool rack__memo_is(const rack_phi_memo *m, uint32_t type,
                                 double cap, gpu_load l) {
  return m->type == type && sim_bits(m->cap) == sim_bits(cap) &&
         sim_bits(m->sm) == sim_bits(l.sm) &&
         sim_bits(m->mem) == sim_bits(l.mem) &&
         sim_bits(m->busy) == sim_bits(l.busy);
}

/* The cache's entry e read, if the gate reads it, for type, cap and
 * load: whether it holds their clock. */
static inline bool rack__memo_hit(const rack_fleet *f, const rack_phi_memo *e,
                                  uint32_t type, double cap, gpu_load l,
                                  bool lone) {
  if (!rack__phi_reads(f->phi_gate, lone))
    return false;
  bool hit = rack__memo_is(e, type, cap, l);
  rack__phi_read_was(f->phi_gate, hit);
  return hit;
}

/* A type, cap and load hashed: the cache's entry is the top
 * rack__phi_memo_bits bits, the recent one's the top six. */
static inline uint64_t rack__memo_hash(uint32_t type, double cap, gpu_load l) {
  uint64_t h = (sim_bits(cap) * 0x9e3779b97f4a7c15ULL) ^
               (sim_bits(l.sm) * 0xc2b2ae3d27d4eb4fULL) ^
               (sim_bits(l.mem) * 0x165667b19e3779f9ULL) ^
               (sim_bits(l.busy) * 0xd6e8feb86659fd93ULL) ^ type;
  h ^= h >> 29;
  return h * 0x9e3779b97f4a7c15ULL;
}

/* The cache's entry for a type, cap and load. */
static inline rack_phi_memo *rack__memo_slot(const rack_fleet *f, uint32_t type,
                                             double cap, gpu_load l) {
  return &f->phi_memo[rack__memo_hash(type, cap, l) >>
                      (64 - rack__phi_memo_bits(f->n))];
}

/* The clock of type, cap and load looked for: in its recent entry, then
 * (if the gate reads it) in the cache's, which a hit copies to the
 * recent one. at[0] the recent entry, at[1] the cache's: true, the
 * clock is at[0]->phi; false, the solve goes to both (rack__memo_keep). */
static inline bool rack__memo_find(const rack_fleet *f, uint32_t type,
                                   double cap, gpu_load l,
                                   rack_phi_memo *at[2], bool lone) {
  uint64_t h = rack__memo_hash(type, cap, l);
  at[0] = &f->phi_gate->recent[h >> (64 - RACK_PHI_RECENT_BITS)];
  at[1] = &f->phi_memo[h >> (64 - rack__phi_memo_bits(f->n))];
  if (rack__memo_is(at[0], type, cap, l))
    return true;
  if (!rack__memo_hit(f, at[1], type, cap, l, lone))
    return false;
  *at[0] = *at[1];
  return true;
}

/* A clock solved, kept where rack__memo_find looked (at): the recent
 * entry and, as f's gate keeps (rack__phi_keeps), the cache's, stored
 * from the same registers. Copied from the cache's entry, the recent
 * one's load of the words the stores had just left there waited for the
 * entry's line from memory (half of slot_phi's samples in the fluid day,
 * where LTO puts the lookup in line). */
static inline void rack__memo_keep(const rack_fleet *f,
                                   rack_phi_memo *const at[2], uint32_t type,
                                   double cap, gpu_load l, double phi,
                                   bool lone) {
  rack_phi_memo e = {cap, l.sm, l.mem, l.busy, phi, type};
  *at[0] = e;
  if (!lone || rack__phi_keeps(f->phi_gate))
    *at[1] = e;
}

/* rack__phi_at for n keys (n at most RACK_RUNS_BATCH), key k's clock in
 * phi[k], the same bits: each looked up as rack__phi_at looks, the
 * misses then solved together (a rack's sums: at the request level's
 * peak nearly all of its runs' clocks are new, about 190 solves a
 * period) and kept in the cache in order. A key asked twice among the
 * misses is solved twice (one by one the second would find the first). */
void rack__phis_at(const rack_fleet *f, uint32_t n, const uint16_t *type,
                   const double *cap, const gpu_load *l, double *phi);

/* Run q's known clock (rack_fleet_phis_known) into *phi, if it has one
 * for these inputs (its cap held, its load): false where none. */
bool rack__phi_known(const rack_fleet *f, uint32_t q, double cap, gpu_load l,
                     double *phi);

/* rack__phis_at for n stretches whose first runs are run[0 .. n), those
 * with a clock known (rack__phi_known) taken from it, the others
 * through rack__phis_at in order (type, cap and l compacted in place). */
void rack__phis_known_at(const rack_fleet *f, uint32_t n, const uint32_t *run,
                         uint16_t *type, double *cap, gpu_load *l, double *phi);

#endif
