/* rack_internal.h - what rack.c and rack_runs.c share: a server's power,
 * a GPU's load share, a plain rack's host and losses, and the runs. */
#ifndef MODELS_RACK_INTERNAL_H
#define MODELS_RACK_INTERNAL_H

#include "rack.h"

/* rack_phi.c: the fleet's cache of clocks for gpus GPUs, every entry
 * empty; NULL when out of memory. */
struct rack_phi_memo *rack__phi_memo_new(const sim_allocator *a, uint32_t gpus);

/* rack_power.c: one server of a system group at GPU power gpu_w and
 * mean activity a (other_w: its share of the group's other_* when given). */
sys_power rack__server_power(const rack_group_spec *g, double gpu_w, double a,
                             double other_w);

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

/* A system rack's servers' power, added server by server in their
 * order: at the inlet, the supplies' losses, the fans. */
typedef struct rack__servers {
  double wall, loss, fan;
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

/* A rack whose runs all took one evaluation (e), and what its update
 * gave. A later rack of the same run pattern (rack_pattern: the same
 * group and run lengths, so the same servers), host range and limit,
 * with every run at e too, adds the same terms in the same order: the
 * same sums, bit for bit. valid false: none yet. */
typedef struct rack__rack_memo {
  rack__run_eval e;
  uint32_t pattern, held;
  uint64_t other_idle, other_max, limit;
  double mean, gpu, rack, loss, fan;
  bool valid;
} rack__rack_memo;

/* What one update carries from rack to rack: the run evaluated last and
 * the racks kept, one a pattern (direct-mapped by it: the racks of a
 * service, of a job, of free GPUs take turns). Zeroed ({0}) at the
 * update's start. */
#define RACK_MEMO_BITS 3
typedef struct rack__carry {
  rack__run_eval e;
  rack__rack_memo rack[1 << RACK_MEMO_BITS];
} rack__carry;

/* rack_runs.c: the runs made again from the keys, loads and caps now;
 * rack r's GPUs updated run by run, through what the update carries (c);
 * the runs' arrays freed. */
void rack__build_runs(rack_fleet *f);
void rack__update_runs(rack_fleet *f, uint32_t r, rack__carry *c);
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

#endif
