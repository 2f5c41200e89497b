/* control_units_runs.c - the policy's units against the fleet's runs: the
 * map from runs to units (which unit a run's load and cap are), and the
 * units' caps written back, once a run where the runs are fresh, GPU by
 * GPU where not, and the spans of a unit's adjacent GPUs
 * (control_units.h). */
#include <assert.h>
#include <string.h>

#include "bits.h"
#include "control_units.h"
#include "vec.h"

/* ------------------------------------------------------------------ */
/* The spans                                                           */
/* ------------------------------------------------------------------ */

/* The stretches of adjacent GPUs of one unit (control_units.h; moved
 * here from control_units.c, whole). */
int control__units_make_spans(control_units *cu, const rack_fleet *fl) {
  size_t s = 0;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    if (!rack_fleet_rack_usable(fl, r))
      continue;
    for (uint32_t i = fl->first[r]; i < fl->first[r] + fl->count[r]; i++) {
      uint32_t u = cu->of_gpu[i];
      if (s > 0 && cu->span_unit[s - 1] == u &&
          cu->span_first[s - 1] + cu->span_len[s - 1] == i) {
        cu->span_len[s - 1]++;
        continue;
      }
      size_t c[3] = {cu->spans_cap, cu->spans_cap, cu->spans_cap};
      const sim_allocator *a = cu->alloc;
      if (sim_vec_reserve(a, &cu->span_first, &c[0], s + 1,
                          sizeof *cu->span_first) != SIM_OK ||
          sim_vec_reserve(a, &cu->span_len, &c[1], s + 1,
                          sizeof *cu->span_len) != SIM_OK ||
          sim_vec_reserve(a, &cu->span_unit, &c[2], s + 1,
                          sizeof *cu->span_unit) != SIM_OK)
        return SIM_ENOMEM;
      cu->spans_cap = c[0];
      cu->span_first[s] = i;
      cu->span_len[s] = 1;
      cu->span_unit[s] = u;
      s++;
    }
  }
  cu->nspans = s;
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* The runs                                                            */
/* ------------------------------------------------------------------ */

/* Run q's unit: the one made from its first GPU, if any (of_gpu holds
 * stale units for racks the build passed over: only a unit made from
 * that very GPU is its). */
static uint32_t unit_of_run(const control_units *cu, const rack_fleet *fl,
                            uint32_t q) {
  uint32_t i = fl->run_first[q], u = cu->of_gpu[i];
  return u < cu->n && cu->gpu[u] == i ? u : CONTROL_UNITS_NONE;
}

#ifndef NDEBUG
/* Whether every GPU of every run of a usable rack is of its run's cap
 * unit: a run never crosses a unit (a unit is a slot's GPUs in a rack, a
 * run one key's adjacent GPUs in a rack). Reads every GPU: debug only. */
static bool runs_within_units(const control_units *cu, const rack_fleet *fl) {
  for (uint32_t q = 0; q < fl->nruns; q++)
    for (uint32_t k = 0;
         cu->run_cap_unit[q] != CONTROL_UNITS_NONE && k < fl->run_len[q]; k++)
      if (cu->of_gpu[fl->run_first[q] + k] != cu->run_cap_unit[q])
        return false;
  return true;
}
#endif

/* Each run's cap unit: its first GPU's unit in a rack with units (a
 * usable one, where every GPU has a unit of this build); rack_direct and
 * rack_joins. */
static void map_run_caps(control_units *cu, const rack_fleet *fl) {
  for (uint32_t r = 0; r < fl->nracks; r++) {
    size_t u = cu->rack_unit[r], e = cu->rack_unit[r + 1];
    bool units = u < e, direct = fl->rack_run[r + 1] - fl->rack_run[r] == e - u;
    for (uint32_t q = fl->rack_run[r]; q < fl->rack_run[r + 1]; q++, u++) {
      cu->run_cap_unit[q] =
          units ? cu->of_gpu[fl->run_first[q]] : CONTROL_UNITS_NONE;
      direct = direct && cu->run_unit[q] == u;
    }
    cu->rack_direct[r] = direct;
  }
  for (uint32_t r = 1; r < fl->nracks; r++) {
    size_t p = cu->rack_unit[r - 1], u = cu->rack_unit[r],
           e = cu->rack_unit[r + 1];
    cu->rack_joins[r] =
        cu->rack_direct[r - 1] && cu->rack_direct[r] && p < u && u < e &&
        fl->rack_run[r] == fl->rack_run[r - 1] + (u - p) &&
        fl->types[fl->type[cu->gpu[u]]] == fl->types[fl->type[cu->gpu[p]]];
  }
  assert(runs_within_units(cu, fl));
}

/* The cap map's stretches (cap_run): runs with a cap unit, each the unit
 * after the run before's; the arrays hold nruns stretches. */
static void map_cap_stretches(control_units *cu, const rack_fleet *fl) {
  size_t k = 0;
  for (uint32_t q = 0; q < fl->nruns; q++) {
    uint32_t u = cu->run_cap_unit[q];
    if (u == CONTROL_UNITS_NONE)
      continue; /* a dark or emergency rack's run keeps its cap */
    if (k > 0 && cu->cap_run[k - 1] + cu->cap_len[k - 1] == q &&
        cu->cap_unit[k - 1] + cu->cap_len[k - 1] == u) {
      cu->cap_len[k - 1]++;
      continue;
    }
    cu->cap_run[k] = q;
    cu->cap_unit[k] = u;
    cu->cap_len[k] = 1;
    k++;
  }
  cu->ncap_stretches = k;
}

/* Room for the run map's arrays: run_unit and run_cap_unit per run, the
 * cap stretches (at most one a run), unit_run per unit. */
static int reserve_run_map(control_units *cu, const rack_fleet *fl) {
  uint32_t **per_run[] = {&cu->run_unit, &cu->run_cap_unit, &cu->cap_run,
                          &cu->cap_unit, &cu->cap_len};
  size_t got = SIZE_MAX, c = cu->unit_runs_cap;
  for (size_t k = 0; k < sizeof per_run / sizeof *per_run; k++) {
    size_t ck = cu->run_units_cap; /* each grown on a copy */
    if (sim_vec_reserve(cu->alloc, per_run[k], &ck, fl->nruns,
                        sizeof(uint32_t)) != SIM_OK)
      return SIM_ENOMEM;
    got = ck < got ? ck : got;
  }
  if (sim_vec_reserve(cu->alloc, &cu->unit_run, &c, cu->n + 1,
                      sizeof *cu->unit_run) != SIM_OK)
    return SIM_ENOMEM;
  cu->run_units_cap = got;
  cu->unit_runs_cap = c;
  return SIM_OK;
}

bool control__units_mapped(const control_units *cu, const rack_fleet *fl) {
  return rack_fleet_runs_fresh(fl) && cu->run_map_ok &&
         cu->run_map_runs == fl->runs_made && cu->run_map_builds == cu->builds;
}

int control__units_map_runs(control_units *cu, const rack_fleet *fl) {
  if (!rack_fleet_runs_fresh(fl) || control__units_mapped(cu, fl))
    return SIM_OK; /* no runs, or neither they nor the units made anew */
  cu->run_map_ok = false;
  if (reserve_run_map(cu, fl) != SIM_OK)
    return SIM_ENOMEM;
  for (uint32_t q = 0; q < fl->nruns; q++)
    cu->run_unit[q] = unit_of_run(cu, fl, q);
  for (size_t u = 0; u < cu->n; u++) /* its run's load is its GPU's */
    cu->unit_run[u] = fl->gpu_run[cu->gpu[u]];
  map_run_caps(cu, fl);
  map_cap_stretches(cu, fl);
  cu->run_map_ok = true;
  cu->run_map_runs = fl->runs_made;
  cu->run_map_builds = cu->builds;
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* The caps                                                            */
/* ------------------------------------------------------------------ */

/* Caps a copy (2 KB): glibc copies more than about 2 KB with `rep movsb`,
 * which callgrind counts a byte an instruction; at most this, it takes
 * its vector loop, which callgrind counts as it runs. */
#define CAP_COPY 256

/* With the runs fresh and mapped for them: each usable rack's run at its
 * unit's cap, once a run, a stretch of runs of successive units a copy
 * (at bench-10k the whole fleet is one); the GPUs' wait for a reader.
 * A dark or emergency rack's runs keep theirs, as its GPUs do below. */
static bool write_run_caps(const control_units *cu, rack_fleet *fl,
                           const double *cap) {
  if (!control__units_mapped(cu, fl))
    return false;
  double *run_cap = fl->run_cap_w;
  if (cap == run_cap) { /* written there (control__units_caps_to) */
    fl->caps_unfilled = true;
    return true;
  }
  for (size_t k = 0; k < cu->ncap_stretches; k++) {
    uint32_t q = cu->cap_run[k], u = cu->cap_unit[k], len = cu->cap_len[k];
    for (; len > CAP_COPY; q += CAP_COPY, u += CAP_COPY, len -= CAP_COPY)
      memcpy(run_cap + q, cap + u, CAP_COPY * sizeof *cap);
    if (len == 1)
      run_cap[q] = cap[u];
    else
      memcpy(run_cap + q, cap + u, len * sizeof *cap);
  }
  fl->caps_unfilled = true;
  return true;
}

/* The header says what (control_units.h): one stretch, run 0 on from
 * unit 0, every unit. */
double *control__units_caps_to(control_units *cu, rack_fleet *fl) {
  return control__units_mapped(cu, fl) && cu->ncap_stretches == 1 &&
                 cu->cap_run[0] == 0 && cu->cap_unit[0] == 0 &&
                 cu->cap_len[0] == cu->n
             ? fl->run_cap_w
             : cu->cap;
}

/* Every usable rack's GPUs at their unit's cap, span by span. */
static void write_gpu_caps(control_units *cu, rack_fleet *fl) {
  double *w = fl->cap_w;
  for (size_t s = 0; s < cu->nspans;) {
    double cap = cu->cap[cu->span_unit[s]];
    uint32_t first = cu->span_first[s], end = first + cu->span_len[s];
    /* The next spans on, while their units' caps are this one's (units
     * alike, a service's replicas in one state): one fill for them all. */
    for (s++; s < cu->nspans && cu->span_first[s] == end &&
              sim_same_bits(cu->cap[cu->span_unit[s]], cap);
         s++)
      end += cu->span_len[s];
    double *p = w + first, *stop = w + end;
    for (; p + 3 < stop; p += 4) { /* four a turn: alike spans merge long */
      p[0] = cap;
      p[1] = cap;
      p[2] = cap;
      p[3] = cap;
    }
    for (; p < stop; p++)
      *p = cap;
  }
}

void control__units_write_caps(control_units *cu, rack_fleet *fl,
                               const double *cap) {
  if (write_run_caps(cu, fl, cap))
    return;
  assert(cap == cu->cap);  /* the runs' own only while mapped */
  rack_fleet_gpu_caps(fl); /* a rack this skips keeps its GPUs' */
  write_gpu_caps(cu, fl);
  rack_fleet_caps_written(fl);
}
