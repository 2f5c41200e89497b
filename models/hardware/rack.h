/* rack.h - racks of GPUs: the fleet's per-GPU hot state as structure of
 * arrays, rack power limits, non-GPU IT power, and the static split of a
 * facility power budget into per-GPU caps.
 *
 * A rack's IT power is its power at the inlet, as The Green Grid counts
 * it: GPUs, the host (CPUs, memory, NICs, switches, storage, fans) and
 * the power conversion's losses inside the rack. A group with a system
 * (system.h) holds gpus_per_rack / system->gpus servers, each drawing
 * what sys_server_power gives for its GPUs, at host load host_load x
 * their mean activity. A group without one has other_idle_w..other_max_w
 * of host power, linear in the GPUs' mean activity, and its conversion
 * curve (conv) at the DC power's share of the rack's limit. Given with a
 * system, other_idle_w / other_max_w replace its parts and fans (its
 * supplies stay). Without a system the limit bounds the DC power (GPUs
 * and host), as it always did; with one it bounds the inlet power.
 *
 * The struct is visible on purpose: a control tick over 100k GPUs is a few
 * tight loops over these arrays, and models (workloads, power control)
 * read and write them directly. Cold data (types, names) stays apart. */
#ifndef MODELS_RACK_H
#define MODELS_RACK_H

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "bits.h"
#include "err.h"
#include "gpu.h"
#include "system.h"

/* A point of a power-conversion efficiency curve: at this share of the
 * rack's limit, this share of the power drawn reaches the IT equipment. */
typedef sys_eff_point rack_conv_point; /* one curve, one interpolation */

/* What the factory asks for: count racks alike. */
typedef struct rack_group_spec {
  const char *name;
  const gpu_spec *gpu;
  uint32_t count;
  uint32_t gpus_per_rack;
  double limit_w;      /* the rack's power limit */
  double other_idle_w; /* non-GPU IT power (CPUs, NICs, switches, fans) */
  double other_max_w;  /* ... at full activity */
  const rack_conv_point *conv; /* efficiency curve, by load; borrowed */
  size_t nconv;                /* 0: lossless */
  double r_th; /* junction over coolant per W of GPU power; NaN: unknown */
  const sys_spec *system; /* NULL: other_idle_w..other_max_w is the host */
  double host_load;       /* with a system: the host's load at full
                             activity */
  bool other_given;       /* with a system: other_* replace its parts */
  /* The per-GPU power limit an operator sets (nvidia-smi -pl; MLPerf's
   * MaxQ systems): no cap a split or a policy writes goes above it.
   * INFINITY or 0: none beyond the GPU's own maximum. */
  double gpu_limit_w;
} rack_group_spec;

/* The most stretches of one load a fleet keeps (rack_fleet's known): a
 * fluid day's three services hand over four, the drive's chunks of one
 * group's replicas joined. */
#define RACK_KNOWN_MAX 16

typedef struct rack_fleet {
  const sim_allocator *alloc; /* what the fleet lives on; NULL: the C lib */

  /* Per GPU, n entries each. What each GPU is doing is a gpu_load (gpu.h)
   * in three arrays, set by whoever drives the GPU; a synthetic level a
   * is {a, 0, a}. */
  uint32_t n;
  double *activity; /* the load's sm: SM activity in [0, 1] */
  double *mem;      /* the load's mem: HBM traffic share, [0, 1] */
  double *busy;     /* the load's busy: share of time a kernel runs */
  /* Power limit in force. With units and the runs fresh, the runs' caps
   * (run_cap_w) are the truth while caps_unfilled: control writes a cap
   * once a run, and this is filled only for a reader that asks
   * (rack_fleet_gpu_caps). */
  double *cap_w;
  /* Power drawn, from rack_fleet_update. With units, the runs' powers
   * (run_power_w) are the truth and this is filled only when a reader
   * asks: read it through rack_fleet_gpu_power. */
  double *power_w;
  uint32_t *rack; /* the rack it sits in */
  uint16_t *type; /* index into types */

  /* Per rack, nracks entries each. */
  uint32_t nracks;
  uint32_t *first, *count; /* GPUs first .. first + count - 1 */
  uint32_t *group;         /* index into groups */
  double *limit_w;
  double *other_idle_w, *other_max_w;
  double *activity_mean; /* mean power share of the GPUs' loads at full
                            clock (gpu_load_share), from rack_fleet_update */
  double *gpu_power_w;   /* sum over its GPUs */
  double *rack_power_w;  /* at its inlet: GPUs, host, fans, losses */
  double *loss_w;        /* conversion (PSU) losses, part of rack_power_w */
  double *fan_w;         /* a system's fans, part of rack_power_w */
  double *thermal_cap_w; /* the GPU power that holds the junction at the
                            slowdown temperature; INFINITY: no limit */
  uint32_t *throttled;   /* GPUs held below their cap by it */
  char **names;          /* "group-3" */
  /* Faults (fault.h), all false at creation. A dark rack (its PDU or
   * breaker tripped) draws nothing: rack_fleet_update gives its GPUs,
   * its other IT and its losses 0 W. An emergency rack (its cooling loop
   * lost capacity) has its GPUs at their minimum cap: see
   * rack_fleet_apply_emergency. */
  bool *dark;
  bool *emergency;

  /* Per GPU type and per group. */
  const gpu_spec **types;
  size_t ntypes;
  rack_group_spec *groups;
  size_t ngroups;

  /* Per type, precomputed for the hot loop: idle, the busy floor, the
   * memory power, the SM part, its dynamic share and the memory speed at
   * the lowest clock, and tdp - idle. */
  double *t_idle, *t_busy, *t_mem, *t_sm, *t_dmin, *t_smin, *t_span;
  /* Per group: the highest per-GPU cap (rack_group_ceiling_w). */
  double *ceiling_w;

  /* The clocks rack_gpu_phi solved last, by type, cap and load (a
   * direct-mapped cache; NULL: none). The GPUs of a replica, a stage or a
   * service in the fluid mode share all three, but the callers ask once
   * for them (rack_phi_last): of what reaches the cache in bench-10k's
   * fluid day about one read in five hits. */
  struct rack_phi_memo *phi_memo;
  /* Whether the cache is read at all (rack_internal.h's rack_phi_gate):
   * its reads, not its answers, are what it changes. */
  struct rack_phi_gate *phi_gate;
  /* The last clock summed over a rack from 0 (rack_fleet_rack_phi_sum):
   * phi added n times made sum; cap_sum the same for a cap (phi the cap:
   * rack_fleet_rack_caps_added from 0). n 0 at creation: none. */
  struct rack_phi_sum {
    double phi, sum;
    uint32_t n;
  } * phi_sum, *cap_sum;
  /* rack_fleet_rack_sample's sums of x added n times from 0, by x and n
   * (RACK_SAMPLE_KEPT of them, direct-mapped): racks alike in their caps
   * or their clocks, not always in a row, ask the same. */
  struct rack_phi_sum *sample_kept;
  /* Runs known_q0 .. known_q0 + known_n - 1's clocks (known_phi[q -
   * known_q0]) as solved for the fleet's caps and loads now, read by a
   * sample's racks' sums in place of a solve (rack_fleet_phis_known);
   * known_n 0: none. */
  const double *known_phi;
  uint32_t known_q0, known_n;
  /* Per group, rack_fleet_group_worst_w's last answer (worst_memo[g];
   * groups alike in what it reads share the first one's). */
  struct rack_worst_memo *worst_memos, **worst_memo;

  /* Units (rack_runs.c): GPUs that share their load and cap, so the tick
   * works once for them. Each GPU has a key (its slot; 0: free), set by
   * whoever places work (rack_set_unit_key). A run is a stretch of
   * adjacent GPUs of one rack (and one server) with one key and, when it
   * was made, the same load and cap to the bit; whoever writes a load or
   * a cap writes one to every GPU of a slot, a unit or a rack, so a run
   * stays alike until the keys change. unit_key NULL: no runs, every GPU
   * on its own (the per-GPU reference). */
  uint32_t *unit_key;
  bool runs_stale; /* keys changed since the runs were made */
  uint32_t nruns;
  size_t run_room;     /* the per-run arrays' room, from nruns up */
  uint64_t runs_made;  /* how many times they were made (from 1) */
  bool power_unfilled; /* power_w behind run_power_w */
  /* A run's load, while the runs are fresh: made from its first GPU's
   * when the runs are made, written once a run by the drives
   * (rack_set_run_load), or with its first GPU's (rack_set_load). The
   * GPUs' (activity, mem, busy) are behind it while loads_unfilled, until
   * rack_fleet_gpu_loads fills them (or the runs go stale, which fills
   * them first). Three arrays, not a gpu_load each: the update compares
   * a run's bits field by field. */
  double *run_sm, *run_mem, *run_busy;
  bool loads_unfilled;
  /* Stretches of runs [q0, q1) that hold one load l since a fill wrote
   * it (rack_set_run_loads_fill: a fluid service's group), none of their
   * runs' loads written since: a reader comparing those runs' loads with
   * l's bits compares their caps alone (rack_known_at). A write to a
   * run's load drops the stretches it falls in (a write between
   * known_lo and known_hi, the stretches' bounds, looks); making the
   * runs drops all. */
  struct rack_known {
    uint32_t q0, q1;
    gpu_load l;
  } known[RACK_KNOWN_MAX];
  uint32_t nknown, known_lo, known_hi;
  uint32_t *run_first; /* a run's first GPU */
  uint32_t *run_len;   /* and how many */
  uint32_t *run_rack;  /* its GPUs' rack (a run never crosses one) */
  uint16_t *run_type;  /* and their type (a rack is of one) */
  double *run_k;       /* run_len as a double (the update's factor) */
  uint32_t *rack_run;  /* rack r's runs: rack_run[r] .. rack_run[r + 1] */
  double *run_power_w; /* each GPU of the run draws it, from the update */
  /* A run's cap, while the runs are fresh: made from its first GPU's when
   * the runs are made, written once a run by control
   * (rack_set_run_cap), and again from the GPUs' after a writer per GPU
   * (rack_fleet_caps_written). cap_w is behind it while caps_unfilled. */
  double *run_cap_w;
  bool caps_unfilled;
  uint32_t *gpu_run; /* per GPU: its run */
  /* Per rack: its runs' pattern, the first rack alike in group and run
   * lengths (the update takes a rack like one updated before whole). */
  uint32_t *rack_pattern;
  /* Per rack, a rack's update kept for its pattern's racks
   * (rack_internal.h's rack__rack_memo, at the pattern's first rack). */
  struct rack__rack_memo *rack_memo;
  uint64_t eval_gen; /* the updates' run evaluations so far (rack__carry) */
} rack_fleet;

/* Whether the runs stand for the keys now (made by the last update, no
 * key changed since): then each run's GPUs share load, cap and power. */
static inline bool rack_fleet_runs_fresh(const rack_fleet *f) {
  return f->unit_key != NULL && !f->runs_stale;
}

/* GPU i's load; the GPUs' loads must be filled (rack_fleet_gpu_loads)
 * when a writer left them behind the runs'. */
static inline gpu_load rack_gpu_load(const rack_fleet *f, uint32_t i) {
  assert(!f->loads_unfilled);
  return (gpu_load){f->activity[i], f->mem[i], f->busy[i]};
}

/* Run q's load (the runs fresh): each of its GPUs'. */
static inline gpu_load rack_run_load(const rack_fleet *f, uint32_t q) {
  return (gpu_load){f->run_sm[q], f->run_mem[q], f->run_busy[q]};
}

/* The known stretches (rack_fleet's known) that meet runs [q0, q1)
 * dropped, their loads being written (rack_run_loads.c). */
void rack__known_drop(rack_fleet *f, uint32_t q0, uint32_t q1);

static inline void rack__set_run_arrays(rack_fleet *f, uint32_t q, gpu_load l) {
  /* Else no stretch holds q: with none kept known_hi is 0, one compare. */
  if (q < f->known_hi && q >= f->known_lo)
    rack__known_drop(f, q, q + 1);
  f->run_sm[q] = l.sm;
  f->run_mem[q] = l.mem;
  f->run_busy[q] = l.busy;
}

/* GPU i's load set; with the runs fresh, a run's first GPU sets its
 * run's too (a writer per GPU writes every GPU of a run alike, as for
 * caps), so the runs stay the truth for the tick's readers. */
static inline void rack_set_load(rack_fleet *f, uint32_t i, gpu_load l) {
  f->activity[i] = l.sm;
  f->mem[i] = l.mem;
  f->busy[i] = l.busy;
  if (rack_fleet_runs_fresh(f) && f->run_first[f->gpu_run[i]] == i)
    rack__set_run_arrays(f, f->gpu_run[i], l);
}

/* Whether GPU i's load is l, to the bit (callers cache clocks on it). */
static inline bool rack_load_is(const rack_fleet *f, uint32_t i, gpu_load l) {
  assert(!f->loads_unfilled);
  return f->activity[i] == l.sm && f->mem[i] == l.mem && f->busy[i] == l.busy;
}

/* GPU i's load now, whichever holds it: its run's with the runs fresh
 * (the GPUs' may be behind), else its own (then filled). */
static inline gpu_load rack_gpu_load_now(const rack_fleet *f, uint32_t i) {
  return rack_fleet_runs_fresh(f) ? rack_run_load(f, f->gpu_run[i])
                                  : rack_gpu_load(f, i);
}

/* The power a GPU is held to: the lower of its cap and its rack's thermal
 * cap. fmin's rules (a NaN loses), inlined: the fleet's update and the
 * workloads' pacing call it for every GPU every period, and libm's fmin
 * is a call. The one place min(cap, thermal cap) is written. */
static inline double rack_cap_min(double cap, double thermal) {
  return thermal < cap || isnan(cap) ? thermal : cap;
}

/* GPU i's cap held to its rack's thermal cap; the GPUs' caps must be
 * filled (rack_fleet_gpu_caps) when a writer left them behind. */
static inline double rack_gpu_cap_w(const rack_fleet *f, uint32_t i) {
  assert(!f->caps_unfilled);
  return rack_cap_min(f->cap_w[i], f->thermal_cap_w[f->rack[i]]);
}

/* Run q's cap held to its rack's thermal cap (the runs fresh): what
 * rack_gpu_cap_w gives for each of its GPUs, read from the run. */
static inline double rack_run_cap_w(const rack_fleet *f, uint32_t q,
                                    uint32_t rack) {
  return rack_cap_min(f->run_cap_w[q], f->thermal_cap_w[rack]);
}

/* Turns units on: every GPU's key 0 (free), runs made at the next
 * rack_fleet_update. SIM_OK or SIM_ENOMEM. */
int rack_fleet_keep_units(rack_fleet *f);

/* Every GPU's load (the arrays activity, mem, busy) filled from its
 * run's when the writers left them behind (rack_set_run_load): whoever
 * reads a GPU's load calls it first (the per-GPU paths, the client API).
 * Logically const. */
void rack_fleet_gpu_loads(rack_fleet *f);

/* Run q's load, with the runs fresh: the run's only, its GPUs' when
 * asked (rack_fleet_gpu_loads). The same loads as writing every GPU of
 * the run, for every reader that reads runs (rack_run_load). */
static inline void rack_set_run_load(rack_fleet *f, uint32_t q, gpu_load l) {
  rack__set_run_arrays(f, q, l);
  f->loads_unfilled = true;
}

/* Load l to runs runs[0 .. n), as rack_set_run_load one by one writes it
 * (a job stage's runs): the known stretches looked at only where one is
 * kept, not once a run. Inline: a call a stage cost the fluid tick more
 * than the looks. */
static inline void rack_set_runs_load(rack_fleet *f, const uint32_t *runs,
                                      uint32_t n, gpu_load l) {
  if (f->known_hi > 0) { /* each write looks (rack__set_run_arrays) */
    for (uint32_t k = 0; k < n; k++)
      rack_set_run_load(f, runs[k], l);
    return;
  }
  for (uint32_t k = 0; k < n; k++) { /* none kept, and none made here */
    f->run_sm[runs[k]] = l.sm;
    f->run_mem[runs[k]] = l.mem;
    f->run_busy[runs[k]] = l.busy;
  }
  f->loads_unfilled = f->loads_unfilled || n > 0;
}

/* Loads l[0 .. n) to runs q0 .. q0 + n - 1 (the runs fresh), as
 * rack_set_run_load one by one would write them, to the bit: the runs'
 * only, the GPUs' noted behind (loads_unfilled) when n > 0; n == 0 writes
 * nothing. For a list of replicas whose runs follow each other (the
 * services', from the factory's drive). */
void rack_set_run_loads_seq(rack_fleet *f, uint32_t q0, const gpu_load *l,
                            size_t n);

/* Load l to runs q0 .. q0 + n - 1, as rack_set_run_loads_seq with n
 * copies of l writes it, to the bit (a fluid service's stretch of
 * replicas in one group); the runs then a known stretch of l. */
void rack_set_run_loads_fill(rack_fleet *f, uint32_t q0, size_t n, gpu_load l);

/* No known stretch kept (a writer about to fill them all again, in
 * order: its stretches then join the list without a look at others). */
static inline void rack_known_forget(rack_fleet *f) {
  f->nknown = f->known_lo = f->known_hi = 0;
}

/* The known stretch that holds run q (rack_fleet's known: each of its
 * runs at its load l since a fill), or NULL. */
static inline const struct rack_known *rack_known_at(const rack_fleet *f,
                                                     uint32_t q) {
  for (uint32_t k = 0; q >= f->known_lo && q < f->known_hi && k < f->nknown;
       k++)
    if (q >= f->known[k].q0 && q < f->known[k].q1)
      return &f->known[k];
  return NULL;
}

/* Every GPU's cap (the array cap_w) filled from its run's when control
 * wrote them once a run (rack_set_run_cap): whoever reads a GPU's cap or
 * writes caps per GPU calls it first. Logically const. */
void rack_fleet_gpu_caps(rack_fleet *f);

/* Every GPU of rack r at cap: with the runs fresh, its runs' caps only
 * (the GPUs' filled when asked; the others' stay behind if they were),
 * else its GPUs'. */
void rack_set_rack_cap(rack_fleet *f, uint32_t r, double cap);

/* Every rack r at caps[group[r]], as rack_set_rack_cap rack by rack. */
void rack_set_group_caps(rack_fleet *f, const double *caps);

/* After a writer per GPU (a split, the minimum caps, an emergency, a
 * test): the runs' caps taken again from their first GPUs, so the runs
 * stay the truth for the tick's readers. The writer keeps a run's GPUs
 * alike (one cap a group, a rack or a unit), as for loads. */
void rack_fleet_caps_written(rack_fleet *f);

/* Run q's cap, with the runs fresh: the run's only, its GPUs' when asked
 * (rack_fleet_gpu_caps). */
static inline void rack_set_run_cap(rack_fleet *f, uint32_t q, double cap) {
  f->run_cap_w[q] = cap;
  f->caps_unfilled = true;
}

/* GPU i now belongs to unit key (a slot + 1; 0: free). The runs go stale,
 * so the GPUs' loads are filled from them first, while they still say
 * which GPUs share a load. */
static inline void rack_set_unit_key(rack_fleet *f, uint32_t i, uint32_t key) {
  if (f->unit_key != NULL && f->unit_key[i] != key) {
    if (f->loads_unfilled)
      rack_fleet_gpu_loads(f);
    if (f->caps_unfilled)
      rack_fleet_gpu_caps(f);
    f->unit_key[i] = key;
    f->runs_stale = true;
  }
}

/* No GPU: what rack_fleet_first_unlike returns when every run is alike. */
#define RACK_NO_GPU UINT32_MAX

/* The first GPU whose load, cap, key or power differs from its run's
 * first GPU's, to the bit (or whose run index is not its run's; or a
 * run's first GPU whose filled load or cap is not its run's), or
 * RACK_NO_GPU; a load or power not yet filled (rack_fleet_gpu_loads,
 * rack_fleet_gpu_power) is not compared. The invariant every writer
 * keeps by writing per slot, unit or rack: rack_fleet_update asserts it
 * after each update when built without NDEBUG (the debug and ASan
 * builds; it reads every GPU). */
uint32_t rack_fleet_first_unlike(const rack_fleet *f);

/* Each GPU's power now (W, the array power_w), filled from its run's
 * when the update left it behind (units: the tick writes per run; only
 * the client API, the samples' hottest GPU and the per-GPU books read
 * GPUs). Not thread-safe; logically const. */
const double *rack_fleet_gpu_power(rack_fleet *f);

/* The most any GPU of rack r draws now, W: fmax from 0 over its GPUs'
 * powers (rack_fleet_gpu_power), taken over its runs' while the GPUs' are
 * behind them (a run's GPUs draw its power, so it is the same number),
 * without filling the fleet's GPUs. */
double rack_fleet_rack_max_power_w(const rack_fleet *f, uint32_t r);

/* The sum of rack r's GPUs' clocks (rack_gpu_phi), GPU by GPU in order,
 * a GPU whose cap and load equal (==) the GPU's before taking its clock:
 * what the samples' mean clock adds. With the runs fresh it goes run by
 * run, a run's clock added once for each of its GPUs (the same terms in
 * the same order), from the runs' caps and loads. */
double rack_fleet_rack_phi_sum(const rack_fleet *f, uint32_t r);

/* The sum of rack r's GPUs' caps (cap_w), added GPU by GPU in order; with
 * the GPUs' caps behind the runs', a run's cap added once for each of
 * its GPUs (the same terms in the same order), without filling them. */
double rack_fleet_rack_cap_sum(const rack_fleet *f, uint32_t r);

/* sum plus rack r's GPUs' caps, added to it GPU by GPU in order (as
 * rack_fleet_rack_cap_sum, from sum rather than 0). */
double rack_fleet_rack_caps_added(const rack_fleet *f, uint32_t r, double sum);

/* Whether every run's GPUs are alike: rack_fleet_first_unlike finds none. */
bool rack_fleet_runs_alike(const rack_fleet *f);

/* Builds the fleet for the groups (copied; the gpu specs are borrowed and
 * must outlive the fleet). Every GPU starts idle, capped at its TDP.
 * The fleet allocates on alloc (NULL means the C library), which must
 * outlive it. Returns NULL with err set when out of memory or when a group
 * is empty; then nothing is left allocated. Free with rack_fleet_destroy. */
rack_fleet *rack_fleet_create(const rack_group_spec *groups, size_t ngroups,
                              const sim_allocator *alloc, sim_error *err);

/* Frees the fleet; NULL does nothing. */
void rack_fleet_destroy(rack_fleet *f);

/* Recomputes every GPU's power from its load and cap (P(phi, L) at
 * the clock the cap allows), the per-rack sums, non-GPU power, fans and
 * conversion losses; a dark rack's are all 0 (its activity mean too).
 * Returns the fleet's IT power at the racks' inlets in W; *loss_w (may be
 * NULL) receives the conversion losses inside it. */
double rack_fleet_update(rack_fleet *f, double *loss_w);

/* Servers in a rack of group g: gpus_per_rack / system->gpus, or 1
 * without a system. */
uint32_t rack_group_servers(const rack_group_spec *g);

/* One rack of group g with every GPU drawing gpu_w and the host at full
 * activity: its power at the inlet, W. Without a system the losses are
 * taken at the curve's lowest efficiency, as a reserve must. Monotone in
 * gpu_w. */
double rack_group_worst_w(const rack_group_spec *g, double gpu_w);

/* rack_group_worst_w of f's group g, the same bits, its last answer
 * kept in f (a fits function of rack_fleet_split asks each group at
 * each of the bisection's trials, at one cap where groups are alike:
 * groups alike in all the answer reads share what is kept). */
double rack_fleet_group_worst_w(const rack_fleet *f, size_t g, double gpu_w);

/* One rack of group g at its most (every GPU at TDP, or at the group's
 * gpu_power_limit when lower; host at full load; for a system without a
 * GPU limit every part at its maximum): what its limit defaults to. */
double rack_group_full_w(const rack_group_spec *g);

/* The highest per-GPU cap group g allows: what its rack limit leaves a
 * GPU with the host at full activity, at most the GPU's maximum cap and
 * the group's gpu_power_limit; below the GPU's minimum cap when even that
 * does not fit. */
double rack_group_ceiling_w(const rack_group_spec *g);

/* The efficiency of group g's power conversion at a load share (of the
 * rack's limit): the curve interpolated linearly, held at its ends. */
double rack_efficiency(const rack_group_spec *g, double load);

/* The lowest efficiency on group g's curve (1 without one): reserving
 * DC / eta_min for losses never falls short, whatever the load. */
double rack_group_min_efficiency(const rack_group_spec *g);

/* The lowest over every group's curve. */
double rack_fleet_min_efficiency(const rack_fleet *f);

/* The normalised clock GPU i runs at under its cap and activity
 * (gpu_load_clock_under_cap's, to the bit: a GPU like one solved before
 * takes that one's answer). */
double rack_gpu_phi(const rack_fleet *f, uint32_t i);

/* The last clock a caller took (rack_gpu_phi_near): the type, cap and
 * load it was for, to the bit. type RACK_PHI_NONE: none yet. */
#define RACK_PHI_NONE UINT32_MAX
typedef struct rack_phi_last {
  double cap, sm, mem, busy, phi;
  uint32_t type;
} rack_phi_last;

/* rack_gpu_phi_near's miss: GPU i's clock solved (rack_gpu_phi), remembered
 * in *last with what it was for. */
double rack__phi_remember(const rack_fleet *f, uint32_t i, rack_phi_last *last);

/* rack_run_phi_near's miss: run q's clock (its type and load, its cap
 * held to rack's thermal cap), rack_gpu_phi's bits. */
double rack__run_phi_remember(const rack_fleet *f, uint32_t q, uint32_t rack,
                              rack_phi_last *last);

/* rack__run_phi_remember for runs q .. q + n - 1 of one type, run q + j
 * in rack[j], in order: their clocks in phi, last the last run's; the
 * cache's misses solved together (gpu_load_clocks_under_caps), the same
 * bits. n in 1 .. RACK_RUNS_BATCH. */
#define RACK_RUNS_BATCH 32
void rack__runs_phi_remember(const rack_fleet *f, uint32_t q,
                             const uint32_t *rack, uint32_t n, double *phi,
                             rack_phi_last *last);

/* rack__run_phi_remember and rack__runs_phi_remember without the
 * fleet's cache: every clock solved, the same bits (a cached clock is a
 * solve's, to the bit), and nothing of the fleet written, so threads
 * may take them for runs of their own at once while the fleet stands
 * and rack_fleet_phis_shareable holds (a service's replicas on its
 * thread: workloads_crew.c). */
double rack__run_phi_solve(const rack_fleet *f, uint32_t q, uint32_t rack,
                           rack_phi_last *last);
void rack__runs_phi_solve(const rack_fleet *f, uint32_t q,
                          const uint32_t *rack, uint32_t n, double *phi,
                          rack_phi_last *last);

/* Whether the _solve calls above may run on several threads at once
 * (gpu_solves_shareable of the fleet's types, their ends made now). */
bool rack_fleet_phis_shareable(const rack_fleet *f);

/* The clock for GPU type, cap (held already) and load, through the
 * fleet's cache: rack_gpu_phi's answer for a GPU of those inputs. */
double rack__phi_at(const rack_fleet *f, uint32_t type, double cap, gpu_load l);

/* rack_gpu_phi, the same bits, for a caller that reads GPUs (runs) in an
 * order where one is mostly like the one before (a service's replicas, a
 * job's stages): one like *last takes its clock without the cache's hash,
 * which cost 78 instructions a call. Inline, and the miss out of line. */
static inline double rack_gpu_phi_near(const rack_fleet *f, uint32_t i,
                                       rack_phi_last *last) {
  assert(!f->loads_unfilled);
  if (last->type == f->type[i] &&
      sim_same_bits(last->cap, rack_gpu_cap_w(f, i)) &&
      sim_same_bits(last->sm, f->activity[i]) &&
      sim_same_bits(last->mem, f->mem[i]) &&
      sim_same_bits(last->busy, f->busy[i]))
    return last->phi;
  return rack__phi_remember(f, i, last);
}

/* rack_gpu_phi_near for run q (the runs fresh), its cap, load, rack and
 * type the run's: the same bits as for its first GPU, without reading
 * the GPUs' arrays. */
static inline double rack_run_phi_near(const rack_fleet *f, uint32_t q,
                                       rack_phi_last *last) {
  uint32_t r = f->run_rack[q];
  if (last->type == f->run_type[q] &&
      sim_same_bits(last->cap, rack_run_cap_w(f, q, r)) &&
      sim_same_bits(last->sm, f->run_sm[q]) &&
      sim_same_bits(last->mem, f->run_mem[q]) &&
      sim_same_bits(last->busy, f->run_busy[q]))
    return last->phi;
  return rack__run_phi_remember(f, q, r, last);
}

/* Rack r's figures at a sample: rack_fleet_rack_cap_sum's,
 * rack_fleet_rack_phi_sum's and rack_fleet_rack_max_power_w's answers,
 * bit for bit, in one look at its runs when they are all alike (most
 * are; rack_sample.c). last: as for rack_run_phi_near, kept by the
 * caller from rack to rack (type RACK_PHI_NONE to start). */
#define RACK_SAMPLE_KEPT 16
typedef struct rack_sample_sums {
  double cap, phi, max_power_w;
} rack_sample_sums;
rack_sample_sums rack_fleet_rack_sample(const rack_fleet *f, uint32_t r,
                                        rack_phi_last *last);

/* Runs q0 .. q0 + n - 1's clocks, phi[q - q0], solved by the caller for
 * the fleet's caps and loads as they are now (each its type's, held
 * cap's and load's solve: rack.h's bits), so that rack_fleet_rack_sample
 * reads them instead of solving them again (a run whose cap or load is
 * NaN is solved as before). Only while nothing of the fleet changes: n 0
 * takes them back (the caller does so before any change). */
void rack_fleet_phis_known(rack_fleet *f, uint32_t q0, uint32_t n,
                           const double *phi);

/* What run q's clock is solved from besides its type (fixed while the
 * runs are: runs_made): its load and its cap held to its rack's thermal
 * cap (rack_run_cap_w). Two runs' keys alike to the bit: their clocks
 * alike (rack.h's bits). */
typedef struct rack_run_key {
  double sm, mem, busy, cap;
} rack_run_key;

/* Runs q0 .. q0 + n - 1's keys into key[0 .. n). */
void rack_runs_key(const rack_fleet *f, uint32_t q0, uint32_t n,
                   rack_run_key *key);

/* Whether runs q0 .. q0 + n - 1's keys are still key's, to the bit: then
 * a clock solved when key was taken is their clock now, while the runs
 * are the same ones (the caller compares runs_made). */
bool rack_runs_key_same(const rack_fleet *f, uint32_t q0, uint32_t n,
                        const rack_run_key *key);

/* The smallest IT power the fleet can be held to by caps alone: every GPU
 * at its minimum cap and all other IT power at its maximum (its losses
 * at the curves' lowest efficiency). */
double rack_fleet_floor_w(const rack_fleet *f);

/* A budget test for a split: true if per-GPU caps group_caps[g] (one per
 * group) fit. It must be monotone: if caps fit, lower caps fit too. */
typedef bool (*rack_fits_fn)(void *ctx, const rack_fleet *f,
                             const double *group_caps);

/* The static split: gives every GPU the same fraction of its TDP, as large
 * as fits passes, within each GPU's cap range and each rack's limit (less
 * its other IT power at full activity), and sets the caps. SIM_OK, or
 * SIM_EINPUT when even the minimum caps do not fit (caps unchanged). */
int rack_fleet_split(rack_fleet *f, rack_fits_fn fits, void *ctx,
                     sim_error *err);

/* The split under a budget for the GPUs' caps in total. */
int rack_fleet_split_static(rack_fleet *f, double gpu_budget_w, sim_error *err);

/* The GPUs' caps in total for per-group caps. */
double rack_fleet_gpu_total(const rack_fleet *f, const double *group_caps);

/* Every GPU at its minimum cap: the most a cap can do. */
void rack_fleet_cap_all_min(rack_fleet *f);

/* Every GPU of an emergency rack at its minimum cap. Whoever sets caps
 * (a split, a power policy) calls it after them, so nothing undoes it
 * while the flag is up. */
void rack_fleet_apply_emergency(rack_fleet *f);

/* True for a rack neither dark nor in emergency: one whose caps a split
 * or a policy decides. */
static inline bool rack_fleet_rack_usable(const rack_fleet *f, uint32_t r) {
  return !f->dark[r] && !f->emergency[r];
}

/* Sum of other_max_w over racks: the non-GPU DC power at full activity
 * (for a system's racks, its parts and fans with the GPUs at TDP). */
double rack_fleet_other_max_w(const rack_fleet *f);

/* x, a value a rack, summed into sum, a value a group (ngroups): each
 * group's sum from +0, its racks' values added in the racks' order (the
 * adds of sum[group[r]] += x[r], the same bits). */
void rack_fleet_group_sums(const rack_fleet *f, const double *x, double *sum);

#endif
