/* plant.c - the cooling plant of plant.h. */
#include "plant.h"

#include <stdlib.h>
#include <string.h>

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
  sim_free(a, p->share);
  sim_free(a, p->power_w);
  sim_free(a, p->heat_w);
  sim_free(a, p->free_w);
  sim_free(a, p->cool_j);
  sim_free(a, p->heat_j);
  sim_free(a, p->free_j);
  memset(p, 0, sizeof *p);
}

static int alloc_plant(plant *p, size_t nl, size_t ng) {
  const sim_allocator *a = p->alloc;
  p->loops = sim_calloc(a, nl ? nl : 1, sizeof *p->loops);
  p->names = sim_calloc(a, nl ? nl : 1, sizeof *p->names);
  p->share = sim_calloc(a, nl * ng + 1, sizeof *p->share);
  double **per_loop[] = {&p->power_w, &p->heat_w, &p->free_w,
                         &p->cool_j,  &p->heat_j, &p->free_j};
  bool ok = p->loops && p->names && p->share;
  for (size_t k = 0; k < sizeof per_loop / sizeof per_loop[0]; k++)
    ok = ok &&
         (*per_loop[k] = sim_calloc(a, nl ? nl : 1, sizeof(double))) != NULL;
  return ok ? SIM_OK : SIM_ENOMEM;
}

int plant_init(plant *p, const cool_loop_config *loops, size_t nloops,
               const double *share, size_t ngroups, const sim_allocator *alloc,
               sim_error *err) {
  memset(p, 0, sizeof *p);
  p->alloc = alloc;
  p->nloops = nloops;
  p->ngroups = ngroups;
  if (alloc_plant(p, nloops, ngroups) != SIM_OK) {
    plant_fini(p);
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  memcpy(p->share, share, nloops * ngroups * sizeof *share);
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

static double loop_heat(const plant *p, size_t l, const double *group_heat_w) {
  double q = 0;
  for (size_t g = 0; g < p->ngroups; g++)
    q += p->share[l * p->ngroups + g] * group_heat_w[g];
  return q;
}

int plant_step(plant *p, const double *group_heat_w, double outdoor_c,
               double dt_s, sim_error *err) {
  p->total_w = 0;
  for (size_t l = 0; l < p->nloops; l++) {
    cool_step s;
    int rc = cool_loop_step(p->loops[l], loop_heat(p, l, group_heat_w),
                            outdoor_c, dt_s, &s, err);
    if (rc != SIM_OK)
      return rc;
    p->power_w[l] = s.energy_j / dt_s;
    p->heat_w[l] = s.removed_j / dt_s;
    p->free_w[l] = s.free_j / dt_s;
    p->total_w += p->power_w[l];
  }
  return SIM_OK;
}

void plant_accumulate(plant *p, double dt_s) {
  for (size_t l = 0; l < p->nloops; l++) {
    p->cool_j[l] += p->power_w[l] * dt_s;
    p->heat_j[l] += p->heat_w[l] * dt_s;
    p->free_j[l] += p->free_w[l] * dt_s;
  }
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
                      double outdoor_c) {
  double sum = 0;
  for (size_t l = 0; l < p->nloops; l++) {
    const cool_loop_config *c = cool_loop_config_of(p->loops[l]);
    sum += cool_steady_derated(c, cool_loop_derate(p->loops[l]),
                               loop_heat(p, l, group_heat_w), outdoor_c)
               .total_w;
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
