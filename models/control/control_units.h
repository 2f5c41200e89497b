/* control_units.h - the policy's units (control.c's step 4), inside power
 * control: one per workload slot and rack, one per rack's free GPUs,
 * built from the fleet and the workloads, and their caps written back.
 *
 * They are built once for a layout (the GPUs' slots, the racks'
 * usability) and then refreshed in place every allocation: of a unit's
 * range and power model only what its load, its group's ceiling and its
 * rack's thermal cap move is written again (the rest follows from its
 * GPU type, fixed with the layout), and what the workloads say of its
 * slot is asked for every unit in one call (control_hooks.slot_units).
 * The caps go back per stretch of adjacent GPUs of one unit. */
#ifndef MODELS_CONTROL_UNITS_H
#define MODELS_CONTROL_UNITS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "power.h"
#include "rack.h"

/* A GPU no workload holds: control.h's CONTROL_NO_SLOT (control.c holds
 * them equal; this header is below control.h). */
#define CONTROL_UNITS_FREE UINT32_MAX

/* Fills what the work of each of n units is worth (control_hooks'
 * slot_units). */
typedef void (*control_units_fn)(void *ctx, const uint32_t *key, size_t n,
                                 power_unit *u);

/* What a unit's range and power model are made from (besides its GPU
 * type, fixed with its GPU): its GPU's load, its group's ceiling and its
 * rack's thermal cap. */
typedef struct control_unit_in {
  double sm, mem, busy, room, thermal_w;
} control_unit_in;

/* The last unit base made and what it was made from: units made one
 * after another mostly share them (a service's replicas, a job's
 * stages). */
typedef struct control_unit_memo {
  const gpu_spec *g; /* NULL: none */
  control_unit_in in;
  power_unit unit;
  double share; /* gpu_load_share of its load */
  /* The GPUs each base of this build or refresh was made for, in the
   * order made (made_cap of them at most; nmade counts them all): every
   * other unit took the base of the unit before it. */
  uint32_t *made_at;
  size_t nmade, made_cap;
} control_unit_memo;

/* The policy's loads smoothed over control periods
 * (power.activity_smoothing; control_units_smooth.c): per fleet GPU, an
 * exponential mean of the loads its unit was made from. Only the units'
 * range and power model (demand, activity) take it; their shares
 * (control_units.cu->share, the racks' other IT the budget predicts)
 * and the racks' power keep the period's own load. */
typedef struct control_smooth {
  double tau_s;            /* the time constant; off where !(tau_s > 0) */
  double *sm, *mem, *busy; /* per fleet GPU: its smoothed load */
  double *at;              /* per fleet GPU: when last folded in, s */
  double now, last;        /* this allocation's time and the last's, s */
  double k;                /* a period's weight: 1 - exp(-(now - last) / tau) */
  size_t n;                /* GPUs the arrays hold */
} control_smooth;

/* No unit (control__units_map_runs). */
#define CONTROL_UNITS_NONE UINT32_MAX

typedef struct control_units {
  const sim_allocator *alloc;
  /* The units, u[-1] a unit of zeros (u_mem[0], u_mem_cap of them in
   * all): the refresh compares each unit's worth with the one before's
   * without a test for the first. */
  power_unit *u, *u_mem;
  size_t u_mem_cap;
  double *cap;          /* the policy's cap per unit */
  double *share;        /* gpu_load_share of its GPU's load in the period
                           (the load it was made from, but smoothed) */
  uint32_t *key;        /* the slot a unit stands for, CONTROL_UNITS_FREE */
  uint32_t *gpu, *rack; /* the GPU and rack each unit was made from */
  size_t n, units_cap;
  uint32_t *of_gpu;    /* per fleet GPU: its unit (usable racks) */
  size_t *group_first; /* units of group g: [first[g], first[g + 1]) */
  size_t *rack_unit;   /* units of rack r: [rack_unit[r], rack_unit[r + 1]) */
  /* Per slot: its unit in the rack being built, valid where the slot's
   * stamp is the rack's (each rack's build takes a new stamp). */
  size_t *slot_unit;
  uint64_t *slot_stamp, stamp;
  size_t slots_cap;
  /* What the units were last built from (the GPUs' slots, the racks'
   * usability): while those hold, the units are refreshed in place. */
  uint32_t *built_slot;
  bool *built_usable, built;
  /* With a holder's count of slot changes (control__units_build's
   * slots_changed): the count the units were built at; built_slot is
   * then not kept. */
  uint64_t built_changes;
  bool built_by_count;
  control_unit_memo base;
  /* Stretches of adjacent GPUs of one unit, in fleet order. */
  uint32_t *span_first, *span_len, *span_unit;
  size_t nspans, spans_cap;
  uint64_t builds; /* how many times the units were built anew */
  /* Per fleet run, the unit made from its first GPU (CONTROL_UNITS_NONE
   * where none is), for the runs of the fleet's make run_map_runs and
   * the units' build run_map_builds, valid where run_map_ok. */
  uint32_t *run_unit;
  /* Per fleet run, the unit whose cap it takes (any run of a usable rack;
   * CONTROL_UNITS_NONE in a dark or emergency rack), valid with run_unit:
   * the caps are written once a run through it. */
  uint32_t *run_cap_unit;
  size_t run_units_cap;
  /* The same map in stretches, valid with run_unit: runs cap_run[k] ..
   * cap_run[k] + cap_len[k] - 1 take the caps of units cap_unit[k] on,
   * one each (a unit is mostly one run, and units and runs both go in
   * fleet order), so the caps are copied a stretch at a time. */
  uint32_t *cap_run, *cap_unit, *cap_len; /* run_units_cap of each */
  size_t ncap_stretches;
  /* Per unit, valid with run_unit: the run of the GPU it was made from
   * (that GPU's load is its run's), so the refresh reads the runs'
   * loads, not the GPUs' (which lag them while the runs are fresh). */
  uint32_t *unit_run;
  size_t unit_runs_cap;
  /* Per rack, valid with run_unit: nonzero where its runs are its units
   * one to one, in order (run rack_run[r] + k is unit rack_unit[r] + k's
   * first and only run), so a run's unit is found without run_unit. */
  uint8_t *rack_direct;
  /* Per rack, valid with run_unit: nonzero where it and the rack before
   * are direct and not empty, its runs follow that rack's, and its GPU
   * type is that rack's (what refresh_units' stretches of direct racks
   * ask of a rack, but for its ceiling and thermal cap, which move). */
  uint8_t *rack_joins;
  uint64_t run_map_runs, run_map_builds;
  bool run_map_ok;
  /* The policy's runs, as the build or refresh knows them (split_from's
   * alike): per unit, nonzero where it is alike the unit before in every
   * field the policy reads. n_alike: per unit, whether its GPUs are as
   * many as the unit before's (fixed with the layout). Both hold
   * fl->n + 1 units (units never outnumber GPUs); marks_ok says whether
   * alike is whole for this allocation. */
  uint8_t *alike, *n_alike;
  uint64_t marks_builds; /* the build n_alike is of */
  bool marks_ok;
  /* Set by the caller before a build: whoever reads the units reads only
   * those the marks leave unmarked, each for its run (split_from's runs).
   * A refresh then fills and refreshes every chunk in a window of its
   * own (win: CONTROL_UNITS_CHUNK + 1 units, win[0] the unit before the
   * chunk's first) and puts back in u only the units left unmarked: the
   * 216 KB of bench-10k's units are no longer written every allocation
   * for its some 70 runs (control_units_window.c). */
  bool lazy;
  /* A lazy refresh that put back more than a quarter of the units (the
   * request level's runs are one or two units: every one copied again)
   * is not tried again for CONTROL_UNITS_LAZY_WAIT refreshes, whole; nput
   * counts the units put back by the refresh under way. */
  size_t lazy_wait, nput;
  power_unit *win, *win_mem; /* win: win_mem's, 32 bytes aligned */
  /* The units of free GPUs, in order (with each build): the fill leaves
   * them, so their worth in the window is put as the build made it. */
  uint32_t *free_at;
  size_t nfree, free_cap;
  control_smooth smooth; /* the loads the units are made from, smoothed */
} control_units;

/* Empty units for fleet fl on a: SIM_OK or SIM_ENOMEM (then
 * control__units_fini frees what was made). */
int control__units_init(control_units *cu, const rack_fleet *fl,
                        const sim_allocator *a);
void control__units_fini(control_units *cu);

/* Units asked of the fill a call: a chunk's units (25 KB) are still in
 * the first-level cache when refreshed and marked. With 1,024 (106 KB
 * of the 104-byte units it was measured with) the refresh read them
 * back from the second level, 4,400 first-level misses a tick of
 * bench-10k fluid more (callgrind's cache model). */
enum { CONTROL_UNITS_CHUNK = 256 };

enum { CONTROL_UNITS_LAZY_WAIT = 63 };

/* Every usable rack's units, group by group, with each one's state now
 * and what its slot's work is worth (fill, with ctx, asked a chunk of
 * CONTROL_UNITS_CHUNK units a call, each chunk's marks of alike made
 * while it is in cache),
 * for the GPUs' slots gpu_slot: built anew when the layout changed,
 * refreshed in place when not. changes (NULL: none): the holder's count of slot
 * changes; the slots are the built ones while it is the built count, and
 * compared GPU by GPU without it. SIM_OK or SIM_ENOMEM. */
int control__units_build(control_units *cu, const rack_fleet *fl,
                         const uint32_t *gpu_slot, const uint64_t *changes,
                         control_units_fn fill, void *ctx);

/* The units' marks of alike the unit before (split_from's alike) for
 * this allocation's units, or NULL when they could not be kept (out of
 * memory): the policy then compares the units. */
const uint8_t *control__units_alike(const control_units *cu);

/* With the runs fresh (rack_fleet_runs_fresh), cu->run_unit made for
 * them: per fleet run, the unit made from its first GPU, or
 * CONTROL_UNITS_NONE (a dark or emergency rack's runs, a unit's runs
 * after its first). A unit's load is that GPU's, so its share
 * (cu->share) is that run's, to the bit, while the loads are as the last
 * build read them. Remade only when the runs or the units were.
 * SIM_OK or SIM_ENOMEM. */
int control__units_map_runs(control_units *cu, const rack_fleet *fl);

/* control_units_runs.c: the units' spans (span_first, span_len,
 * span_unit: the stretches of adjacent GPUs of one unit) over the usable
 * racks, from of_gpu. SIM_OK or SIM_ENOMEM. */
int control__units_make_spans(control_units *cu, const rack_fleet *fl);

/* Whether cu->run_unit (and the rest of the map) stands for the fleet's
 * runs now and the units: the runs fresh, neither made anew since. */
bool control__units_mapped(const control_units *cu, const rack_fleet *fl);

/* control_units_window.c: the marks' arrays (made once, for as many
 * units as GPUs: pages never touched cost nothing) and an empty list of
 * bases made. SIM_OK or SIM_ENOMEM. */
int control__units_marks_begin(control_units *cu, const rack_fleet *fl);

/* control_units_window.c: the units of free GPUs listed (cu->free_at),
 * after a build. SIM_OK or SIM_ENOMEM. */
int control__units_list_free(control_units *cu);

/* control_units_window.c: the window made (once) for a lazy refresh;
 * false where it could not be (out of memory: the refresh is then
 * whole). */
bool control__units_window_ready(control_units *cu);

/* control_units_window.c: the window moved from the chunk of units at ..
 * j - 1 (none where j is 0) to the chunk j .. e - 1, before its fill:
 * the units of the chunk before put back in cu->u where the refresh did
 * not (control__units_put_back), its last unit made the unit before (win[0];
 * zeros before unit 0), the free GPUs' units of the new chunk given
 * their built worth (from cu->free_at[*free_k] on, *free_k moved past
 * them). */
void control__units_window_move(control_units *cu, size_t at, size_t j,
                                size_t e, size_t *free_k);

/* Whether a lazy refresh puts back each unit it leaves unmarked as it
 * marks it (the refresh's own stores, straight into cu->u: no pass over
 * the marks to find them again), as without assertions; with them, every
 * unit is put back a chunk at a time (control__units_put_back), so that
 * split_from's check of the marks against the units holds them to it. */
static inline bool control__units_put_inline(void) {
#ifdef NDEBUG
  return true;
#else
  return false;
#endif
}

/* control_units_window.c: units at .. e - 1 of the window (win[1] unit
 * at) put back in cu->u, of each what a refresh writes (its range's top,
 * demand, activity and worth): every unit, where the refresh does not
 * put back as it marks (control__units_put_inline); each marked unit
 * stands for the unit before it to whoever reads (lazy); cu->nput counts
 * those left unmarked. */
void control__units_put_back(control_units *cu, size_t at, size_t e);

/* Every usable rack's GPUs at their unit's cap, the units' caps at cap
 * (cu->cap, or the runs' own from control__units_caps_to): with the runs
 * fresh and mapped, once a run (rack_set_run_cap; the GPUs' caps filled
 * when a reader asks), else GPU by GPU. */
void control__units_write_caps(control_units *cu, rack_fleet *fl,
                               const double *cap);

/* Where the units' caps are best written: the runs' own (fl->run_cap_w,
 * unit u's cap at run u's) where the runs are mapped one to one onto the
 * units from the first (one cap stretch over every unit: bench-10k's
 * whole fleet), so control__units_write_caps has nothing to copy; else
 * cu->cap. Its caller writes every unit's cap there, or none. */
double *control__units_caps_to(control_units *cu, rack_fleet *fl);

/* control_units_smooth.c: the units of the allocation at now_s (s) made
 * from their GPUs' loads smoothed with time constant tau_s (off where
 * !(tau_s > 0): the period's loads, as without it). SIM_OK or
 * SIM_ENOMEM (the arrays, made the first time it is on). */
int control__units_smooth_begin(control_units *cu, const rack_fleet *fl,
                                double tau_s, double now_s);

/* control_units_smooth.c: the smoothed loads' arrays freed (fini). */
void control__units_smooth_free(control_units *cu);

/* Whether the units are made from smoothed loads. */
static inline bool control__units_smoothing(const control_units *cu) {
  return cu->smooth.tau_s > 0;
}

/* control_units_smooth.c: GPU i's load x folded into its smoothed load
 * (once an allocation; a GPU not folded in at the last one starts from
 * x), which it returns. */
gpu_load control__units_smoothed(control_units *cu, uint32_t i, gpu_load x);

/* control_units_smooth.c: every unit's GPU's load now folded in
 * (control__units_smoothed), before a refresh reads cu->smooth's arrays
 * through cu->gpu. */
void control__units_smooth_all(control_units *cu, const rack_fleet *fl);

/* control_units_smooth.c: each unit's share (cu->share) made again from
 * its GPU's load now, not the smoothed one its base was made from: the
 * racks' other IT follows the period's own load. */
void control__units_true_shares(control_units *cu, const rack_fleet *fl);

#endif
