/* rack_power.c - the pieces of a rack's power that the per-GPU update
 * (rack.c) and the run-by-run one (rack_runs.c) share: a server's power,
 * a GPU's load share, a plain rack's host and losses, the conversion
 * curve. */
#include "rack_internal.h"

/* One server of a system group: its GPUs draw gpu_w at mean activity a;
 * other_w is its share of the group's other_* when they replace the
 * system's parts. */
sys_power rack__server_power(const rack_group_spec *g, double gpu_w, double a,
                             double other_w) {
  const sys_spec *s = g->system;
  if (!g->other_given)
    return sys_server_power(s, g->gpu, gpu_w, a, g->host_load * a);
  sys_power p = {.gpu_w = gpu_w, .parts_w = other_w};
  p.compute_w = p.dc_w = gpu_w + other_w;
  p.wall_w = sys_wall_w(s, p.dc_w);
  p.psu_loss_w = p.wall_w - p.dc_w;
  return p;
}

/* A rack without a system: other IT linear in the GPUs' mean activity,
 * losses from the conversion curve at the DC power's share of the limit. */
void rack__plain_rack(rack_fleet *f, uint32_t r) {
  double mean = f->activity_mean[r];
  double dc = f->gpu_power_w[r] + f->other_idle_w[r] +
              (f->other_max_w[r] - f->other_idle_w[r]) * mean;
  double eta = rack_efficiency(&f->groups[f->group[r]], dc / f->limit_w[r]);
  f->loss_w[r] = dc / eta - dc;
  f->fan_w[r] = 0;
  f->rack_power_w[r] = dc + f->loss_w[r];
}

double rack_efficiency(const rack_group_spec *g, double load) {
  return sys_curve_at(g->conv, g->nconv, load);
}

void rack__system_rack(rack_fleet *f, uint32_t r, rack__server_sums sums) {
  const rack_group_spec *g = &f->groups[f->group[r]];
  uint32_t per = (uint32_t)g->system->gpus, first = f->first[r];
  uint32_t cursor = f->rack_run != NULL ? f->rack_run[r] : 0;
  double ns = f->count[r] / per, wall = 0, loss = 0, fan = 0;
  double span = f->other_max_w[r] - f->other_idle_w[r];
  for (uint32_t i = first; i < first + f->count[r]; i += per) {
    double gpu = 0, act = 0;
    sums(f, r, i, per, &gpu, &act, &cursor);
    act /= per;
    sys_power p =
        rack__server_power(g, gpu, act, (f->other_idle_w[r] + span * act) / ns);
    wall += p.wall_w;
    loss += p.psu_loss_w;
    fan += p.fan_w;
  }
  f->rack_power_w[r] = wall;
  f->loss_w[r] = loss;
  f->fan_w[r] = fan;
}
