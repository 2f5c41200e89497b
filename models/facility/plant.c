/* plant.c - the cooling plant of plant.h. */
#include "plant.h"

#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "water.h"

const tel_column plant_columns[PLANT_NCOLS] = {
    [PLANT_TEMP] = {"temp_c", "degC", "loop temperature at sample time"},
    [PLANT_POWER] = {"cooling_power_w", "W",
                     "chiller, pump and fan power, mean over the interval"},
    [PLANT_HEAT] = {"heat_removed_w", "W",
                    "heat removed from the loop, mean over the interval"},
    [PLANT_FREE] = {"free_share", "1",
                    "share of the heat removed without the chiller"},
};

void plant_fini(plant *p) {
  for (size_t l = 0; p->loops != NULL && l < p->nloops; l++)
    cool_loop_destroy(p->loops[l]);
  const sim_allocator *a = p->alloc;
  sim_free(a, p->loops);
  sim_free(a, p->names);
  sim_free(a, p->row);
  sim_free(a, p->col);
  sim_free(a, p->share);
  sim_free(a, p->main_loop);
  sim_free(a, p->power_w);
  sim_free(a, p->heat_w);
  sim_free(a, p->free_w);
  sim_free(a, p->reject_w);
  sim_free(a, p->reject_run_j);
  sim_free(a, p->cool_j);
  sim_free(a, p->heat_j);
  sim_free(a, p->free_j);
  memset(p, 0, sizeof *p);
}

static int alloc_plant(plant *p, size_t nl, size_t ng, size_t nlinks) {
  const sim_allocator *a = p->alloc;
  p->loops = sim_calloc(a, nl ? nl : 1, sizeof *p->loops);
  p->names = sim_calloc(a, nl ? nl : 1, sizeof *p->names);
  p->row = sim_calloc(a, nl + 1, sizeof *p->row);
  p->col = sim_calloc(a, nlinks + 1, sizeof *p->col);
  p->share = sim_calloc(a, nlinks + 1, sizeof *p->share);
  p->main_loop = sim_calloc(a, ng + 1, sizeof *p->main_loop);
  double **per_loop[] = {&p->power_w, &p->heat_w,   &p->free_w,
                         &p->cool_j,  &p->heat_j,   &p->free_j,
                         &p->reject_w, &p->reject_run_j};
  bool ok =
      p->loops && p->names && p->row && p->col && p->share && p->main_loop;
  for (size_t k = 0; k < sizeof per_loop / sizeof per_loop[0]; k++)
    ok = ok &&
         (*per_loop[k] = sim_calloc(a, nl ? nl : 1, sizeof(double))) != NULL;
  return ok ? SIM_OK : SIM_ENOMEM;
}

/* A link with its place in the caller's list, to sort by (loop, group)
 * and keep the first of a pair given twice. */
typedef struct ranked {
  plant_link link;
  size_t at;
} ranked;

static int by_loop_group(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->link.loop != y->link.loop)
    return x->link.loop < y->link.loop ? -1 : 1;
  if (x->link.group != y->link.group)
    return x->link.group < y->link.group ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at;
}

/* The share loop l takes of group g, 0 when none (its row is sorted). */
static double share_of(const plant *p, size_t l, size_t g) {
  size_t lo = p->row[l], hi = p->row[l + 1];
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (p->col[mid] < g)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < p->row[l + 1] && p->col[lo] == g ? p->share[lo] : 0;
}

/* The loop of each group taking most of its heat, the first of equals:
 * links by loop, so earlier loops come first. */
static void find_main_loops(plant *p) {
  for (size_t g = 0; g < p->ngroups; g++)
    p->main_loop[g] = -1;
  for (size_t l = 0; l < p->nloops; l++)
    for (size_t k = p->row[l]; k < p->row[l + 1]; k++) {
      long *m = &p->main_loop[p->col[k]];
      if (p->share[k] > 0 &&
          (*m < 0 || p->share[k] > share_of(p, (size_t)*m, p->col[k])))
        *m = (long)l;
    }
}

/* Fills the rows from the links, sorted by loop then group, pairs given
 * twice kept once. SIM_OK or SIM_ENOMEM. */
static int fill_rows(plant *p, const plant_link *links, size_t nlinks) {
  ranked *r = sim_calloc(p->alloc, nlinks + 1, sizeof *r);
  if (r == NULL)
    return SIM_ENOMEM;
  size_t n = 0;
  for (size_t k = 0; k < nlinks; k++)
    if (links[k].loop < p->nloops && links[k].group < p->ngroups)
      r[n++] = (ranked){links[k], k};
  qsort(r, n, sizeof *r, by_loop_group);
  size_t m = 0;
  for (size_t k = 0; k < n; k++) {
    if (k > 0 && r[k].link.loop == r[k - 1].link.loop &&
        r[k].link.group == r[k - 1].link.group)
      continue;
    p->col[m] = r[k].link.group;
    p->share[m] = r[k].link.share;
    p->row[r[k].link.loop + 1] = ++m;
  }
  for (size_t l = 0; l < p->nloops; l++) /* loops with no links */
    if (p->row[l + 1] < p->row[l])
      p->row[l + 1] = p->row[l];
  sim_free(p->alloc, r);
  find_main_loops(p);
  return SIM_OK;
}

int plant_init(plant *p, const cool_loop_config *loops, size_t nloops,
               const plant_link *links, size_t nlinks, size_t ngroups,
               const sim_allocator *alloc, sim_error *err) {
  memset(p, 0, sizeof *p);
  p->alloc = alloc;
  p->nloops = nloops;
  p->ngroups = ngroups;
  if (alloc_plant(p, nloops, ngroups, nlinks) != SIM_OK ||
      fill_rows(p, links, nlinks) != SIM_OK) {
    plant_fini(p);
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  for (size_t l = 0; l < nloops; l++) {
    p->names[l] = loops[l].name;
    sim_error mine = {0};
    p->loops[l] = cool_loop_create(&loops[l], alloc, &mine);
    if (p->loops[l] == NULL) {
      plant_fini(p);
      return sim_error_set(err, mine.code, "%s", mine.msg);
    }
  }
  return SIM_OK;
}

double plant_loop_heat_w(const plant *p, size_t l, const double *group_heat_w) {
  double q = 0;
  for (size_t k = p->row[l]; k < p->row[l + 1]; k++)
    q += p->share[k] * group_heat_w[p->col[k]];
  return q;
}

int plant_step(plant *p, const double *group_heat_w, double outdoor_c,
               double wet_c, double dt_s, sim_error *err) {
  p->total_w = 0;
  for (size_t l = 0; l < p->nloops; l++) {
    cool_step s;
    int rc = cool_loop_step_wet(p->loops[l],
                                plant_loop_heat_w(p, l, group_heat_w),
                                outdoor_c, wet_c, dt_s, &s, err);
    if (rc != SIM_OK)
      return rc;
    p->power_w[l] = s.energy_j / dt_s;
    p->heat_w[l] = s.removed_j / dt_s;
    p->free_w[l] = s.free_j / dt_s;
    /* A tower rejects the heat it removed and the plant's own power. */
    bool evap =
        cool_loop_config_of(p->loops[l])->rejection == COOL_EVAPORATIVE;
    p->reject_w[l] = evap ? p->heat_w[l] + p->power_w[l] : 0;
    p->total_w += p->power_w[l];
  }
  return SIM_OK;
}

plant_water plant_water_used(const plant *p) {
  plant_water w = {0};
  for (size_t l = 0; l < p->nloops; l++) {
    const cool_loop_config *c = cool_loop_config_of(p->loops[l]);
    if (c->rejection != COOL_EVAPORATIVE)
      continue;
    water_rates r = water_tower_rates(c->cycles, c->drift_share, c->range_k);
    w.evaporation_kg += r.evaporation * p->reject_run_j[l];
    w.blowdown_kg += r.blowdown * p->reject_run_j[l];
    w.drift_kg += r.drift * p->reject_run_j[l];
  }
  w.total_kg = w.evaporation_kg + w.blowdown_kg + w.drift_kg;
  return w;
}

void plant_accumulate(plant *p, double dt_s) {
  for (size_t l = 0; l < p->nloops; l++) {
    p->reject_run_j[l] += p->reject_w[l] * dt_s;
    p->cool_j[l] += p->power_w[l] * dt_s;
    p->heat_j[l] += p->heat_w[l] * dt_s;
    p->free_j[l] += p->free_w[l] * dt_s;
  }
}

int plant_links(const cool_loop_config *loops, size_t nloops,
                const char *const *names, size_t ngroups, plant_link **links,
                size_t *nlinks, sim_error *err) {
  size_t n = 0;
  for (size_t l = 0; l < nloops; l++)
    n += loops[l].nracks > 0 ? loops[l].nracks : ngroups;
  sim_names *ix = sim_names_create(ngroups, NULL);
  plant_link *out = malloc((n + 1) * sizeof *out);
  *links = out;
  *nlinks = 0;
  if (ix == NULL || out == NULL) {
    sim_names_destroy(ix);
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  for (size_t g = 0; g < ngroups; g++)
    sim_names_add(ix, names[g], g, NULL); /* the first of a name */
  for (size_t l = 0; l < nloops; l++) {
    const cool_loop_config *c = &loops[l];
    for (size_t k = 0; k < (c->nracks > 0 ? c->nracks : ngroups); k++) {
      long g = c->nracks > 0 ? sim_names_find(ix, c->racks[k]) : (long)k;
      if (g >= 0)
        out[(*nlinks)++] = (plant_link){l, (size_t)g, c->heat_share};
    }
  }
  sim_names_destroy(ix);
  return SIM_OK;
}

double plant_loop_share(const cool_loop_config *loop, const char *group) {
  if (loop->nracks == 0)
    return loop->heat_share;
  for (size_t k = 0; k < loop->nracks; k++)
    if (strcmp(loop->racks[k], group) == 0)
      return loop->heat_share;
  return 0;
}

double plant_steady_w(const plant *p, const double *group_heat_w,
                      double outdoor_c, double wet_c) {
  double sum = 0;
  for (size_t l = 0; l < p->nloops; l++) {
    const cool_loop_config *c = cool_loop_config_of(p->loops[l]);
    sum += cool_steady_total_w(c, cool_loop_derate(p->loops[l]),
                               plant_loop_heat_w(p, l, group_heat_w),
                               outdoor_c, wet_c);
  }
  return sum;
}

int plant_set_derate(plant *p, size_t l, double share) {
  return l < p->nloops ? cool_loop_set_derate(p->loops[l], share) : SIM_EINVAL;
}

void plant_sample(plant *p, double dt_s, double *row) {
  size_t n = p->nloops;
  for (size_t l = 0; l < n; l++) {
    row[PLANT_TEMP * n + l] = cool_loop_temp_c(p->loops[l]);
    row[PLANT_POWER * n + l] = p->cool_j[l] / dt_s;
    row[PLANT_HEAT * n + l] = p->heat_j[l] / dt_s;
    row[PLANT_FREE * n + l] =
        p->heat_j[l] > 0 ? p->free_j[l] / p->heat_j[l] : 1;
    p->cool_j[l] = p->heat_j[l] = p->free_j[l] = 0;
  }
}
