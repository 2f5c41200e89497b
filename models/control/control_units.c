/* control_units.c - the policy's units: built for a layout, refreshed in
 * place every allocation (control_units.h; their runs and caps in
 * control_units_runs.c). */
#include "control_units.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "bits.h"
#include "control_units_alike.h"
#include "gpu.h"
#include "vec.h"

int control__units_init(control_units *cu, const rack_fleet *fl,
                        const sim_allocator *a) {
  *cu = (control_units){.alloc = a};
  cu->of_gpu = sim_calloc(a, fl->n + 1, sizeof *cu->of_gpu);
  cu->group_first = sim_calloc(a, fl->ngroups + 1, sizeof *cu->group_first);
  cu->built_slot = sim_calloc(a, fl->n + 1, sizeof *cu->built_slot);
  cu->built_usable = sim_calloc(a, fl->nracks + 1, sizeof *cu->built_usable);
  cu->rack_unit = sim_calloc(a, fl->nracks + 1, sizeof *cu->rack_unit);
  cu->rack_direct = sim_calloc(a, fl->nracks + 1, sizeof *cu->rack_direct);
  cu->rack_joins = sim_calloc(a, fl->nracks + 1, sizeof *cu->rack_joins);
  return cu->of_gpu == NULL || cu->group_first == NULL ||
                 cu->built_slot == NULL || cu->built_usable == NULL ||
                 cu->rack_unit == NULL || cu->rack_direct == NULL ||
                 cu->rack_joins == NULL
             ? SIM_ENOMEM
             : SIM_OK;
}

void control__units_fini(control_units *cu) {
  const sim_allocator *a = cu->alloc;
  void *arrays[] = {
      cu->u_mem,      cu->cap,          cu->key,        cu->gpu,
      cu->rack,       cu->share,        cu->run_unit,   cu->run_cap_unit,
      cu->rack_unit,  cu->unit_run,     cu->of_gpu,     cu->group_first,
      cu->slot_unit,  cu->slot_stamp,   cu->built_slot, cu->built_usable,
      cu->span_first, cu->span_len,     cu->span_unit,  cu->alike,
      cu->n_alike,    cu->base.made_at, cu->cap_run,    cu->cap_unit,
      cu->cap_len,    cu->rack_direct,  cu->rack_joins, cu->win_mem,
      cu->free_at};
  for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++)
    sim_free(a, arrays[k]);
  control__units_smooth_free(cu);
  *cu = (control_units){.alloc = a};
}

/* ------------------------------------------------------------------ */
/* One unit                                                            */
/* ------------------------------------------------------------------ */

/* A base's fields that follow from its load (demand, activity; the rest
 * left): P(1, L) once for both, the activity gpu_load_share's terms. */
static void base_load(power_unit *u, const gpu_spec *g, gpu_load l,
                      double thermal_w) {
  double fixed = g->idle_w, full = gpu_load_power(g, 1, l);
  double dyn = full - fixed, sm_span = g->tdp_w - fixed;
  u->demand = fmin(full, thermal_w);
  u->activity = dyn / sm_span;
  assert(sim_same_bits(u->activity, gpu_load_share(g, l)));
}

/* A unit's range, demand and power model from its GPUs' type g, load l,
 * room (the group's ceiling) and thermal cap, before its slot's work. */
static power_unit unit_base(const gpu_spec *g, gpu_load l, double room,
                            double thermal_w) {
  /* The policies see P = idle + span a phi^gamma, span = tdp - idle;
   * the busy floor follows the clock with the SM part (gpu.h), and the
   * memory power with them (below its knee it falls with the clock: a
   * policy that took it as fixed would never cap decode below it). */
  power_unit u = {.n = 0,
                  .lo = g->cap_min_w,
                  .hi = fmax(g->cap_min_w, fmin(g->cap_max_w, room)),
                  .cls = POWER_OTHER,
                  .idle = g->idle_w,
                  .span = g->tdp_w - g->idle_w,
                  .gamma = g->gamma,
                  .phi_min = gpu_phi_min(g)};
  base_load(&u, g, l, thermal_w);
  return u;
}

/* What a unit of GPU i in rack r is made from now (its load its run's
 * while the runs are fresh). */
static control_unit_in inputs(const rack_fleet *fl, uint32_t i, uint32_t r) {
  gpu_load l = rack_gpu_load_now(fl, i);
  return (control_unit_in){l.sm, l.mem, l.busy, fl->ceiling_w[fl->group[r]],
                           fl->thermal_cap_w[r]};
}

/* To the bit, as the units were made before (a NaN like itself). */
static bool same_in(const control_unit_in *a, const control_unit_in *b) {
  return ((sim_bits(a->sm) ^ sim_bits(b->sm)) |
          (sim_bits(a->mem) ^ sim_bits(b->mem)) |
          (sim_bits(a->busy) ^ sim_bits(b->busy)) |
          (sim_bits(a->room) ^ sim_bits(b->room)) |
          (sim_bits(a->thermal_w) ^ sim_bits(b->thermal_w))) == 0;
}

/* The last base made again for a unit of GPU type g made from in (where
 * it was made from other inputs: units made one after another mostly
 * share theirs), for the unit of GPU i: noted (made_at), so that every
 * unit not noted is known alike the one before in its base. Of the same
 * type and ceiling, only the load's fields are made (at request level
 * most units' loads differ: a base a unit). */
static void remake_base(control_unit_memo *m, const gpu_spec *g,
                        const control_unit_in *in, uint32_t i) {
  gpu_load l = {in->sm, in->mem, in->busy};
  if (m->g == g && sim_same_bits(m->in.room, in->room))
    base_load(&m->unit, g, l, in->thermal_w);
  else
    m->unit = unit_base(g, l, in->room, in->thermal_w);
  m->g = g;
  m->in = *in;
  m->share = m->unit.activity; /* gpu_load_share(g, l): unit_base */
  if (m->nmade < m->made_cap)
    m->made_at[m->nmade] = i;
  m->nmade++;
}

/* Unit u (its GPU and rack set) made from its state now, its GPU count
 * kept: the base's fields and the free GPUs' worth (a slot's: later). */
static void make_unit(control_units *cu, const rack_fleet *fl, size_t u) {
  uint32_t i = cu->gpu[u], n = cu->u[u].n;
  const gpu_spec *g = fl->types[fl->type[i]];
  control_unit_in in = inputs(fl, i, cu->rack[u]);
  if (control__units_smoothing(cu)) {
    gpu_load l = control__units_smoothed(cu, i, (gpu_load){in.sm, in.mem,
                                                           in.busy});
    in.sm = l.sm, in.mem = l.mem, in.busy = l.busy;
  }
  if (cu->base.g != g || !same_in(&cu->base.in, &in))
    remake_base(&cu->base, g, &in, i);
  cu->u[u] = cu->base.unit;
  cu->u[u].n = n;
  cu->share[u] = cu->base.share;
}

/* Where the units' loads are read: unit u's at sm[at[u]], mem[at[u]],
 * busy[at[u]]: its run's with the runs fresh (cu->unit_run into the
 * runs' arrays), else its GPU's (cu->gpu into the GPUs'). */
typedef struct unit_loads {
  const double *sm, *mem, *busy;
  const uint32_t *at;
} unit_loads;

/* The last base made again for load j of ls, for the unit of GPU i
 * (out of the refresh's loop, which keeps its pointers in registers). */
static __attribute__((noinline)) void
remake_for(control_unit_memo *m, const unit_loads *ls, const gpu_spec *g,
           uint32_t j, uint32_t i, double room, double thermal) {
  control_unit_in in = {ls->sm[j], ls->mem[j], ls->busy[j], room, thermal};
  remake_base(m, g, &in, i);
}

/* The last base's key and fields (control_units_alike.h's base_view). */
static inline base_view base_view_of(const control_unit_memo *m) {
  return (base_view){sim_bits(m->in.sm),
                     sim_bits(m->in.mem),
                     sim_bits(m->in.busy),
                     m->unit.hi,
                     m->unit.demand,
                     m->unit.activity,
                     m->share};
}

/* Units u .. e - 1, one rack's (GPU type g, its group's ceiling room, its
 * thermal cap), with their loads now (ls), their worth filled already.
 * The last base's key holds for the rack's part where rack_same; where
 * not, the first unit is made anew (the key's SM activity set unlike its
 * load's), which makes it hold. Each unit is marked alike the one before
 * (cu->alike) where its GPUs are as many, its worth (weight, c) the same
 * bits and its base not made anew for it (its load the key's): the
 * marks' pass of its own (mark_worth) folded in, while the unit is at
 * hand. put: where a unit left unmarked is put back as it is marked
 * (direct_out's put, cu->u), or NULL. */
static void refresh_rack(control_units *cu, const unit_loads *ls, size_t u,
                         size_t e, power_unit *p, const gpu_spec *g,
                         double room, double thermal, bool rack_same,
                         power_unit *put) {
  control_unit_memo *m = &cu->base;
  /* The arrays in locals too: the remake's call might otherwise be taken
   * to change any of them. */
  const double *sm = ls->sm, *mem = ls->mem, *busy = ls->busy;
  const uint32_t *at = ls->at;
  double *share = cu->share;
  const uint8_t *n_alike = cu->n_alike; /* 0 or 1; n_alike[0] is 0 */
  uint8_t *alike = cu->alike;
  base_view b = base_view_of(m);
  if (!rack_same && u < e)
    b.ks = ~sim_bits_at(sm, at[u]);
  for (; u < e; u++, p++) {
    uint32_t j = at[u];
    uint64_t d = (sim_bits_at(sm, j) ^ b.ks) | (sim_bits_at(mem, j) ^ b.km) |
                 (sim_bits_at(busy, j) ^ b.kb);
    /* The worth read again from the unit before, not held: registers are
     * short here. The first unit's before is u[-1], zeros; its n_alike
     * (0) unmarks it. */
    uint64_t dw = (sim_bits(p->weight) ^ sim_bits(p[-1].weight)) |
                  (sim_bits(p->c) ^ sim_bits(p[-1].c));
    const uint8_t a = n_alike[u] & ((d | dw) == 0);
    alike[u] = a;
    if (d != 0) {
      remake_for(m, ls, g, j, cu->gpu[u], room, thermal);
      b = base_view_of(m);
    }
    p->hi = b.hi;
    p->demand = b.demand;
    p->activity = b.act;
    share[u] = b.sh;
    if (put != NULL && a == 0) {
      const double hd[2] = {b.hi, b.demand};
      put_unit_now(put + u, p, sim_u2_at(hd), b.act);
      cu->nput++;
    }
  }
}

#ifndef NDEBUG
/* Whether the last base's key is load k of ls (the asserts' check of
 * refresh_direct's compare). */
static inline bool key_is(const control_unit_memo *m, const unit_loads *ls,
                          size_t k) {
  return sim_same_bits(m->in.sm, ls->sm[k]) &&
         sim_same_bits(m->in.mem, ls->mem[k]) &&
         sim_same_bits(m->in.busy, ls->busy[k]);
}
#endif

/* One unit's refresh (refresh_rack's loop body): unit k of the rack (p),
 * its load (load k of ls) unlike the last base's where d is nonzero; its
 * worth against the unit before's, its mark (0 where unlike: the unit is
 * known unlike the one before), its base made anew where d says; put
 * back where left unmarked (o.put). */
static inline __attribute__((always_inline)) void
refresh_one(control_unit_memo *m, const unit_loads *ls, direct_out o, size_t k,
            power_unit *p, uint64_t d, base_view *b, const gpu_spec *g,
            double room, double thermal, bool unlike) {
  uint64_t dw = (sim_bits(p->weight) ^ sim_bits(p[-1].weight)) |
                (sim_bits(p->c) ^ sim_bits(p[-1].c));
  const uint8_t a = unlike ? 0 : o.n_alike[k] & ((d | dw) == 0);
  o.alike[k] = a;
  if (d != 0) {
    remake_for(m, ls, g, (uint32_t)k, o.gpu[k], room, thermal);
    *b = base_view_of(m);
  }
  p->hi = b->hi;
  p->demand = b->demand;
  p->activity = b->act;
  o.share[k] = b->sh;
  if (o.put != NULL && a == 0) {
    const double hd[2] = {b->hi, b->demand};
    put_unit_now(o.put + k, p, sim_u2_at(hd), b->act);
    ++*o.nput;
  }
}

/* The units' worth asked of the fill (fill->fn with fill->ctx) from
 * fill->filled on, a chunk a call, until units up to need are filled
 * (the chunks are the same wherever they are asked from). */
typedef struct unit_fill {
  control_units_fn fn;
  void *ctx;
  size_t filled;
  /* lazy: the last chunk filled, at .. filled - 1, in cu->win (free_k:
   * control__units_window_move's); else in cu->u itself. */
  bool lazy;
  size_t at, free_k;
} unit_fill;

static void fill_to(control_units *cu, unit_fill *f, size_t need) {
  size_t j = f->filled;
  const size_t chunk = CONTROL_UNITS_CHUNK;
  for (; j < need; j = j + chunk < cu->n ? j + chunk : cu->n) {
    size_t e = cu->n - j < chunk ? cu->n : j + chunk;
    if (f->lazy) {
      control__units_window_move(cu, f->at, j, e, &f->free_k);
      f->fn(f->ctx, cu->key + j, e - j, cu->win + 1);
    } else
      f->fn(f->ctx, cu->key + j, e - j, cu->u + j);
    f->at = j;
  }
  f->filled = j;
}

/* Whether the refresh puts back each unit it leaves unmarked as it marks
 * it (lazy, control__units_put_inline), so that the window's marked
 * units are not read after their refresh. */
static inline bool window_unread(const unit_fill *f) {
  return f->lazy && control__units_put_inline();
}

/* Where unit j (of the last chunk filled) is refreshed. */
static inline power_unit *unit_at(control_units *cu, const unit_fill *f,
                                  size_t j) {
  assert(j >= f->at && j < f->filled);
  return f->lazy ? cu->win + 1 + (j - f->at) : cu->u + j;
}

/* refresh_rack for units u0 .. u0 + n - 1 (n > 0, p the first's, their
 * worth filled) of a rack whose runs are its units, in order
 * (rack_direct): unit u0 + k's load is load k of ls, no gather. After
 * each unit the last base's key is its load, so a unit's load is
 * compared with the unit before's, not the key's (the same answer, the
 * key's words not in registers). In the fluid mode the units alike come
 * in long stretches (bench-10k: some 17 bases a tick for 2,245 units),
 * each found by compares alone (alike_end) and stored (refresh_alike); a
 * unit that ends one goes through refresh_one. The units are one chunk's
 * (refresh_units cuts the racks joined at the chunks' ends): a stretch
 * over a chunk's end goes on from the next chunk's first unit, which
 * refresh_one finds alike the unit before, as alike_end would.
 * put_now: each unit left unmarked put back as it is marked, and nobody
 * reads a marked unit's base fields (refresh_alike). */
static void refresh_direct(control_units *cu, const unit_loads *ls, size_t u0,
                           size_t n, power_unit *p, const gpu_spec *g,
                           double room, double thermal, bool rack_same,
                           bool put_now) {
  const bool wide = sim_lanes_wide();
  control_unit_memo *m = &cu->base;
  const double *sm = ls->sm, *mem = ls->mem, *busy = ls->busy;
  const direct_out o = {cu->alike + u0,
                        cu->n_alike + u0,
                        cu->share + u0,
                        cu->gpu + u0,
                        put_now ? cu->u + u0 : NULL,
                        &cu->nput};
  base_view b = base_view_of(m);
  uint64_t d = (rack_same ? 0u : 1u) |
               ((sim_bits_at(sm, 0) ^ b.ks) | (sim_bits_at(mem, 0) ^ b.km) |
                (sim_bits_at(busy, 0) ^ b.kb));
  refresh_one(m, ls, o, 0, p, d, &b, g, room, thermal, false);
  for (size_t k = 1; k < n;) {
    size_t e = alike_end(sm, mem, busy, p, k, n, wide, false, o.share, b.sh);
    assert(key_is(m, ls, k - 1) && (e == k || key_is(m, ls, e - 1)));
    if (e > k)
      refresh_alike(o, p, &b, k, e);
    if ((k = e) == n)
      break;
    d = (sim_bits_at(sm, k) ^ sim_bits_at(sm, k - 1)) |
        (sim_bits_at(mem, k) ^ sim_bits_at(mem, k - 1)) |
        (sim_bits_at(busy, k) ^ sim_bits_at(busy, k - 1));
    /* It ends the stretch: unlike the unit before in load or worth. */
    refresh_one(m, ls, o, k, p + k, d, &b, g, room, thermal, true);
    k++;
  }
}

/* The last of the direct racks from r on (r's units u .. *e) whose
 * units refresh as one stretch, *e moved to their end: each rack after r
 * direct, not empty, its runs following the one before's and of r's GPU
 * type, ceiling and thermal cap. After a rack the last base is of its
 * type, ceiling and thermal cap (rack_same held, or its first unit made
 * one), so the next rack's first unit is compared with the unit before
 * as refresh_units would. The stretch may be any length: it is refreshed
 * a chunk's part at a time (refresh_parts). */
static uint32_t direct_racks(const control_units *cu, const rack_fleet *fl,
                             uint32_t r, size_t u, size_t *e, const gpu_spec *g,
                             double room, double thermal) {
  const uint32_t q = fl->rack_run[r];
  (void)q, (void)g, (void)u; /* the asserts' */
  for (uint32_t s = r + 1; s < fl->nracks; r = s++) {
    /* rack_joins: direct, not empty, its runs following and its type the
     * rack before's, so the stretch's from r on (r is direct, not empty). */
    if (!cu->rack_joins[s] ||
        !sim_same_bits(fl->ceiling_w[fl->group[s]], room) ||
        !sim_same_bits(fl->thermal_cap_w[s], thermal))
      break;
    assert(cu->rack_direct[s] && cu->rack_unit[s + 1] != *e &&
           fl->rack_run[s] == q + (*e - u) &&
           fl->types[fl->type[cu->gpu[*e]]] == g);
    *e = cu->rack_unit[s + 1];
  }
  return r;
}

/* Units u .. e - 1 of racks of GPU type g, ceiling room and thermal cap
 * (one rack, or direct racks joined: by_runs, their runs from q on) a
 * chunk's part at a time, its worth filled (f) as its first is reached:
 * after a part the last base is of this type, ceiling and thermal cap, so
 * rack_same holds for the next. */
static void refresh_parts(control_units *cu, unit_fill *f,
                          const unit_loads *ls, size_t u, size_t e,
                          bool by_runs, uint32_t q, const gpu_spec *g,
                          double room, double thermal) {
  const control_unit_memo *m = &cu->base;
  for (size_t a = u, z; a < e; a = z) {
    if (a == f->filled)
      fill_to(cu, f, a + 1);
    z = e < f->filled ? e : f->filled;
    bool rack_same = m->g == g && sim_same_bits(room, m->in.room) &&
                     sim_same_bits(thermal, m->in.thermal_w);
    power_unit *p = unit_at(cu, f, a);
    if (!by_runs) {
      refresh_rack(cu, ls, a, z, p, g, room, thermal, rack_same,
                   window_unread(f) ? cu->u : NULL);
      continue;
    }
    const size_t at = q + (a - u);
    unit_loads rl = {ls->sm + at, ls->mem + at, ls->busy + at, NULL};
    refresh_direct(cu, &rl, a, z - a, p, g, room, thermal, rack_same,
                   window_unread(f));
  }
}

/* Every unit with its state now and its worth (fill, with ctx), marked
 * alike the one before where it is (refresh_rack). A unit's GPU type is
 * its GPU's, fixed while the layout holds, and so are the fields that
 * follow from the type alone (lo, idle, span, gamma, phi_min) and the free
 * GPUs' worth: only what the load, the ceiling and the thermal cap move is
 * written (hi, demand, activity; the load's share), the same bits a whole
 * make_unit gives. A rack's units are adjacent (rack_unit), and what a
 * unit takes from its rack (its GPU type: a rack is of one group; its
 * group's ceiling; its thermal cap) is read once a rack and held against
 * the last base's key there; in a rack whose runs are its units
 * (rack_direct) the units after its first go through refresh_direct. The
 * worth is asked a chunk at a time as the refresh reaches it
 * (refresh_parts), so it is in cache when the units are refreshed; with
 * cu->lazy, in a window of its own, the units left unmarked put back. */
static void refresh_units(control_units *cu, const rack_fleet *fl,
                          control_units_fn fill, void *ctx) {
  /* With the runs fresh, mapped for these runs and units (the build maps
   * them first): the runs' loads, compact, where the GPUs' lag. */
  unit_loads ls = {fl->activity, fl->mem, fl->busy, cu->gpu};
  bool direct = rack_fleet_runs_fresh(fl); /* rack_direct stands */
  if (control__units_smoothing(cu)) { /* each unit's own, by its GPU */
    control__units_smooth_all(cu, fl);
    const control_smooth *sm = &cu->smooth;
    ls = (unit_loads){sm->sm, sm->mem, sm->busy, cu->gpu};
    direct = false;
  } else if (direct) {
    assert(control__units_mapped(cu, fl));
    ls = (unit_loads){fl->run_sm, fl->run_mem, fl->run_busy, cu->unit_run};
  }
  const bool wait = cu->lazy && cu->lazy_wait > 0;
  cu->lazy_wait -= wait;
  unit_fill f = {fill, ctx, 0,
                 cu->lazy && !wait && control__units_window_ready(cu), 0, 0};
  cu->nput = 0;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    size_t u = cu->rack_unit[r], e = cu->rack_unit[r + 1];
    if (u == e)
      continue; /* dark or in emergency */
    const gpu_spec *g = fl->types[fl->type[cu->gpu[u]]];
    double room = fl->ceiling_w[fl->group[r]], thermal = fl->thermal_cap_w[r];
    bool by_runs = direct && cu->rack_direct[r];
    uint32_t q = by_runs ? fl->rack_run[r] : 0;
    if (by_runs)
      r = direct_racks(cu, fl, r, u, &e, g, room, thermal);
    assert(!by_runs || (cu->unit_run[u] == q &&
                        cu->unit_run[e - 1] == q + (e - 1 - u)));
    refresh_parts(cu, &f, &ls, u, e, by_runs, q, g, room, thermal);
  }
  fill_to(cu, &f, cu->n); /* none left: every unit a rack's */
  if (f.lazy && !control__units_put_inline() && cu->n > 0)
    control__units_put_back(cu, f.at, f.filled);
  if (f.lazy && 4 * cu->nput > cu->n) /* short runs: whole for a while */
    cu->lazy_wait = CONTROL_UNITS_LAZY_WAIT;
}

/* ------------------------------------------------------------------ */
/* Building                                                            */
/* ------------------------------------------------------------------ */

/* Parallel arrays: one growth each, on copies of the capacity. */
static int reserve_units(control_units *cu, size_t need) {
  const sim_allocator *a = cu->alloc;
  size_t c[6] = {cu->units_cap, cu->units_cap, cu->units_cap,
                 cu->units_cap, cu->units_cap, cu->units_cap};
  int rc = sim_vec_reserve(a, &cu->u_mem, &cu->u_mem_cap, need + 1,
                           sizeof *cu->u_mem);
  if (cu->u_mem != NULL) { /* the unit before the first */
    cu->u_mem[0] = (power_unit){0};
    cu->u = cu->u_mem + 1;
  }
  if (rc != SIM_OK ||
      sim_vec_reserve(a, &cu->cap, &c[1], need, sizeof *cu->cap) != SIM_OK ||
      sim_vec_reserve(a, &cu->key, &c[2], need, sizeof *cu->key) != SIM_OK ||
      sim_vec_reserve(a, &cu->gpu, &c[3], need, sizeof *cu->gpu) != SIM_OK ||
      sim_vec_reserve(a, &cu->rack, &c[4], need, sizeof *cu->rack) != SIM_OK ||
      sim_vec_reserve(a, &cu->share, &c[5], need, sizeof *cu->share) != SIM_OK)
    return SIM_ENOMEM;
  cu->units_cap = c[1];
  return SIM_OK;
}

/* Room in the per-slot arrays for slot k (grown zeroed: stamp 0 is no
 * rack's). */
static int reserve_slot(control_units *cu, uint32_t k) {
  size_t cap_u = cu->slots_cap, cap_s = cu->slots_cap, need = (size_t)k + 1;
  if (need <= cu->slots_cap)
    return SIM_OK;
  if (sim_vec_reserve(cu->alloc, &cu->slot_unit, &cap_u, need,
                      sizeof *cu->slot_unit) != SIM_OK ||
      sim_vec_reserve(cu->alloc, &cu->slot_stamp, &cap_s, need,
                      sizeof *cu->slot_stamp) != SIM_OK)
    return SIM_ENOMEM;
  memset(cu->slot_stamp + cu->slots_cap, 0,
         (cap_s - cu->slots_cap) * sizeof *cu->slot_stamp);
  cu->slots_cap = cap_s < cap_u ? cap_s : cap_u;
  return SIM_OK;
}

/* The unit of slot k in the rack being built; *u = SIZE_MAX if none yet.
 * free_unit: the rack's unit of free GPUs. */
static int find_unit(control_units *cu, uint32_t k, size_t free_unit,
                     size_t *u) {
  *u = SIZE_MAX;
  if (k == CONTROL_UNITS_FREE) {
    *u = free_unit;
    return SIM_OK;
  }
  if (reserve_slot(cu, k) != SIM_OK)
    return SIM_ENOMEM;
  if (cu->slot_stamp[k] == cu->stamp)
    *u = cu->slot_unit[k];
  return SIM_OK;
}

/* A new unit of slot k (CONTROL_UNITS_FREE: the free GPUs) in rack r, made
 * from GPU i; its index in *u. */
static int new_unit(control_units *cu, const rack_fleet *fl, uint32_t k,
                    uint32_t r, uint32_t i, size_t *u) {
  *u = cu->n;
  if (reserve_units(cu, *u + 1) != SIM_OK)
    return SIM_ENOMEM;
  cu->key[*u] = k;
  cu->gpu[*u] = i;
  cu->rack[*u] = r;
  cu->u[*u].n = 0;
  make_unit(cu, fl, *u);
  cu->n++;
  if (k != CONTROL_UNITS_FREE) {
    cu->slot_unit[k] = *u;
    cu->slot_stamp[k] = cu->stamp;
  }
  return SIM_OK;
}

/* The units of rack r: one per slot it holds GPUs of, one for its free
 * GPUs, in the order the GPUs first name them. */
static int rack_units(control_units *cu, const rack_fleet *fl,
                      const uint32_t *gpu_slot, uint32_t r) {
  size_t free_unit = SIZE_MAX;
  cu->stamp++;
  for (uint32_t i = fl->first[r]; i < fl->first[r] + fl->count[r]; i++) {
    uint32_t k = gpu_slot[i];
    size_t u;
    if (find_unit(cu, k, free_unit, &u) != SIM_OK ||
        (u == SIZE_MAX && new_unit(cu, fl, k, r, i, &u) != SIM_OK))
      return SIM_ENOMEM;
    if (k == CONTROL_UNITS_FREE)
      free_unit = u;
    cu->u[u].n++;
    cu->of_gpu[i] = (uint32_t)u;
  }
  return SIM_OK;
}

/* Whether the GPUs' slots and the racks' usability are those the units
 * were built from; records them as the ones to build from when not. */
static bool same_layout(control_units *cu, const rack_fleet *fl,
                        const uint32_t *gpu_slot, const uint64_t *changes) {
  bool same = cu->built && (changes != NULL) == cu->built_by_count &&
              (changes != NULL ? *changes == cu->built_changes
                               : memcmp(cu->built_slot, gpu_slot,
                                        fl->n * sizeof *gpu_slot) == 0);
  for (uint32_t r = 0; r < fl->nracks; r++) {
    bool usable = rack_fleet_rack_usable(fl, r);
    same = same && cu->built_usable[r] == usable;
    cu->built_usable[r] = usable;
  }
  cu->built_by_count = changes != NULL;
  if (!same && changes != NULL)
    cu->built_changes = *changes;
  else if (!same)
    memcpy(cu->built_slot, gpu_slot, fl->n * sizeof *gpu_slot);
  return same;
}

/* ------------------------------------------------------------------ */
/* The policy's runs                                                   */
/* ------------------------------------------------------------------ */

/* Which units have as many GPUs as the one before, once a build (the
 * counts are the layout's). */
static void mark_counts(control_units *cu, const rack_fleet *fl) {
  if (cu->marks_builds == cu->builds)
    return;
  for (size_t u = 0; u < cu->n; u++)
    cu->n_alike[u] = u > 0 && cu->u[u].n == cu->u[u - 1].n;
  /* A group's first unit, whose mark the policy does not read (its
   * alike[0]), unmarked: it is the first of its run, put back (lazy). */
  for (uint32_t g = 0; g < fl->ngroups; g++)
    if (cu->group_first[g] < cu->n)
      cu->n_alike[cu->group_first[g]] = 0;
  cu->marks_builds = cu->builds;
}

/* Units u .. e - 1 marked alike the one before where their GPUs are as
 * many and their worth (what the fill wrote: weight, c) is the same bits
 * (the first unit's before, u[-1], is zeros); the base is held
 * afterwards (fill_and_mark). */
static void mark_worth(control_units *cu, size_t u, size_t e) {
  const power_unit *p = cu->u;
  const uint8_t *n_alike = cu->n_alike; /* 0 or 1; n_alike[0] is 0 */
  uint8_t *alike = cu->alike;
#pragma GCC unroll 4
  for (; u < e; u++)
    alike[u] =
        n_alike[u] & (((sim_bits(p[u].weight) ^ sim_bits(p[u - 1].weight)) |
                       (sim_bits(p[u].c) ^ sim_bits(p[u - 1].c))) == 0);
}

/* The units built anew: their worth asked of the fill a chunk at a time,
 * each chunk then marked (mark_worth); then each unit a base was made for
 * unmarked: every other took the base of the unit before it (make_unit),
 * so is alike it in every field the base gives (its range, demand and
 * power model; the rest follows from its GPU type, which is the base's).
 * A refresh marks as it goes (refresh_rack). */
static void fill_and_mark(control_units *cu, const rack_fleet *fl,
                          control_units_fn fill, void *ctx) {
  control_unit_memo *m = &cu->base;
  assert(m->nmade <= m->made_cap); /* a unit's base is made once a pass */
  mark_counts(cu, fl);
  unit_fill f = {.fn = fill, .ctx = ctx};
  for (size_t j = 0; j < cu->n; j = f.filled) {
    fill_to(cu, &f, j + 1);
    mark_worth(cu, j, f.filled);
  }
  for (size_t k = 0; k < m->nmade; k++)
    cu->alike[cu->of_gpu[m->made_at[k]]] = 0;
  cu->marks_ok = true;
}

/* Every usable rack's units anew, group by group (the fleet lays racks
 * out by group, so each group's units are contiguous), and their spans. */
static int build_anew(control_units *cu, const rack_fleet *fl,
                      const uint32_t *gpu_slot) {
  cu->built = false; /* until the units are whole again */
  cu->n = 0;
  uint32_t g = 0;
  cu->group_first[0] = 0;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    for (; g < fl->group[r]; g++)
      cu->group_first[g + 1] = cu->n;
    cu->rack_unit[r] = cu->n;
    if (!rack_fleet_rack_usable(fl, r))
      continue; /* dark or in emergency: its caps are not the policy's */
    if (rack_units(cu, fl, gpu_slot, r) != SIM_OK)
      return SIM_ENOMEM;
  }
  for (; g < fl->ngroups; g++)
    cu->group_first[g + 1] = cu->n;
  cu->rack_unit[fl->nracks] = cu->n;
  if (control__units_make_spans(cu, fl) != SIM_OK ||
      control__units_list_free(cu) != SIM_OK)
    return SIM_ENOMEM;
  cu->builds++;
  cu->built = true;
  return SIM_OK;
}

/* Smoothed, the units' shares made again from the period's own loads
 * (control__units_true_shares); SIM_OK. */
static int period_shares(control_units *cu, const rack_fleet *fl) {
  if (control__units_smoothing(cu))
    control__units_true_shares(cu, fl);
  return SIM_OK;
}

int control__units_build(control_units *cu, const rack_fleet *fl,
                         const uint32_t *gpu_slot, const uint64_t *changes,
                         control_units_fn fill, void *ctx) {
  if (control__units_marks_begin(cu, fl) != SIM_OK)
    return SIM_ENOMEM;
  if (same_layout(cu, fl, gpu_slot, changes)) {
    if (control__units_map_runs(cu, fl) != SIM_OK)
      return SIM_ENOMEM; /* the refresh reads the runs' loads through it */
    mark_counts(cu, fl);
    refresh_units(cu, fl, fill, ctx); /* fills and marks as it goes */
    cu->marks_ok = true;
    return period_shares(cu, fl);
  }
  if (build_anew(cu, fl, gpu_slot) != SIM_OK)
    return SIM_ENOMEM;
  fill_and_mark(cu, fl, fill, ctx);
  return period_shares(cu, fl);
}

const uint8_t *control__units_alike(const control_units *cu) {
  return cu->marks_ok ? cu->alike : NULL;
}
