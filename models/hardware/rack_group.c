/* rack_group.c - a rack group's figures that a fleet's split and its
 * reserve ask of it (rack.h): its servers, its losses curve's lowest
 * efficiency, one rack's power at the inlet with the host at full
 * activity (rack_group_worst_w), and that power kept by the fleet
 * (rack_fleet_group_worst_w) for its groups alike in what it reads. */
#include <math.h>

#include "rack_internal.h"

uint32_t rack_group_servers(const rack_group_spec *g) {
  return g->system != NULL ? g->gpus_per_rack / (uint32_t)g->system->gpus : 1;
}

double rack_group_min_efficiency(const rack_group_spec *g) {
  double lo = 1;
  for (size_t i = 0; i < g->nconv; i++)
    lo = fmin(lo, g->conv[i].efficiency);
  for (size_t i = 0; g->system != NULL && i < g->system->psu.ncurve; i++)
    lo = fmin(lo, g->system->psu.curve[i].efficiency);
  return lo;
}

double rack_group_worst_w(const rack_group_spec *g, double gpu_w) {
  double n = g->gpus_per_rack;
  if (g->system == NULL)
    return (n * gpu_w + g->other_max_w) / rack_group_min_efficiency(g);
  double ns = rack_group_servers(g);
  return ns *
         rack__server_power(g, n / ns * gpu_w, 1, g->other_max_w / ns).wall_w;
}

double rack_fleet_group_worst_w(const rack_fleet *f, size_t g, double gpu_w) {
  rack_worst_memo *m = f->worst_memo[g];
  if (!m->valid || m->w != sim_bits(gpu_w))
    *m = (rack_worst_memo){sim_bits(gpu_w),
                           rack_group_worst_w(&f->groups[g], gpu_w), true};
  return m->worst;
}

/* Whether groups a and b give one rack_group_worst_w for every gpu_w:
 * alike in all it reads (the specs it points to are borrowed, constant
 * while the fleet lives; the losses curve is read without a system). */
static bool worst_alike(const rack_group_spec *a, const rack_group_spec *b) {
  return a->system == b->system && a->gpu == b->gpu &&
         a->gpus_per_rack == b->gpus_per_rack &&
         a->other_given == b->other_given &&
         sim_same_bits(a->other_max_w, b->other_max_w) &&
         sim_same_bits(a->host_load, b->host_load) &&
         (a->system != NULL || (a->conv == b->conv && a->nconv == b->nconv));
}

void rack__worst_memos_share(rack_fleet *f) {
  for (size_t g = 0; g < f->ngroups; g++) {
    size_t h = 0;
    while (h < g && !worst_alike(&f->groups[h], &f->groups[g]))
      h++;
    f->worst_memo[g] = &f->worst_memos[h];
  }
}
