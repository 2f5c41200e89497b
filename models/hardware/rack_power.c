/* rack_power.c - the pieces of a rack's power that the per-GPU update
 * (rack.c) and the run-by-run one (rack_runs.c) share: a server's power,
 * a GPU's load share, a plain rack's host and losses, the conversion
 * curve, a dark rack. */
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

void rack__darken(rack_fleet *f, uint32_t r) {
  uint32_t first = f->first[r], end = first + f->count[r];
  for (uint32_t i = first; i < end; i++)
    f->power_w[i] = 0;
  for (uint32_t q = f->rack_run != NULL ? f->rack_run[r] : 0;
       f->rack_run != NULL && q < f->rack_run[r + 1]; q++)
    f->run_power_w[q] = 0;
  f->throttled[r] = 0;
  f->activity_mean[r] = 0;
  f->gpu_power_w[r] = 0;
  f->rack_power_w[r] = 0;
  f->loss_w[r] = f->fan_w[r] = 0;
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

void rack__server_add(const rack_fleet *f, uint32_t r, double gpu, double act,
                      rack__servers *sv) {
  const rack_group_spec *g = &f->groups[f->group[r]];
  uint32_t per = (uint32_t)g->system->gpus;
  double ns = f->count[r] / per;
  double span = f->other_max_w[r] - f->other_idle_w[r];
  act /= per;
  double other = (f->other_idle_w[r] + span * act) / ns;
  rack__server_memo *m = sv->memo;
  if (m->g != g || m->gpu != sim_bits(gpu) || m->a != sim_bits(act) ||
      m->other != sim_bits(other)) {
    sys_power p = rack__server_power(g, gpu, act, other);
    *m = (rack__server_memo){g,        sim_bits(gpu),  sim_bits(act),
                             sim_bits(other), p.wall_w, p.psu_loss_w,
                             p.fan_w};
  }
  sv->wall += m->wall;
  sv->loss += m->loss;
  sv->fan += m->fan;
}

void rack__servers_done(rack_fleet *f, uint32_t r, const rack__servers *sv) {
  f->rack_power_w[r] = sv->wall;
  f->loss_w[r] = sv->loss;
  f->fan_w[r] = sv->fan;
}

/* Each server GPU by GPU: its GPUs' power and load shares (caps and jobs
 * may differ between servers). */
void rack__system_rack(rack_fleet *f, uint32_t r) {
  uint32_t per = (uint32_t)f->groups[f->group[r]].system->gpus;
  uint32_t first = f->first[r];
  rack__server_memo memo = {0};
  rack__servers sv = {0, 0, 0, &memo};
  for (uint32_t i = first; i < first + f->count[r]; i += per) {
    double gpu = 0, act = 0;
    for (uint32_t j = i; j < i + per; j++) {
      gpu += f->power_w[j];
      act += rack__load_share(f, j);
    }
    rack__server_add(f, r, gpu, act, &sv);
  }
  rack__servers_done(f, r, &sv);
}

/* Each group's sum is carried in a register while its racks follow one
 * another (the fleet lays them out group by group) and stored when the
 * group changes: added to its slot in memory every rack, each add waited
 * for the last one's store (perf of bench-10k's fluid day: nearly all of
 * the cooling's own samples, in its groups' heat). */
void rack_fleet_group_sums(const rack_fleet *f, const double *x, double *sum) {
  for (size_t g = 0; g < f->ngroups; g++)
    sum[g] = 0;
  if (f->nracks == 0)
    return;
  uint32_t g = f->group[0];
  double s = 0;
  for (uint32_t r = 0; r < f->nracks; r++) {
    if (f->group[r] != g) {
      sum[g] = s;
      g = f->group[r];
      s = sum[g];
    }
    s += x[r];
  }
  sum[g] = s;
}
