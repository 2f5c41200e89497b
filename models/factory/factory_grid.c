/* factory_grid.c - the run as the grid sees it: the power-quality figures
 * in the summary, the grid-connection figures from them, and the verdict
 * against the scenario's grid code (gridcode.h), at the end of the run. */
#include "factory.h"

#include <math.h>
#include <string.h>

#include "factory_internal.h"

void factory__close_grid(factory_summary *s, const pq_result *pq) {
  s->max_ramp_w_per_s = pq->max_ramp_w_per_s;
  s->oscillation_j = pq->oscillation_j;
  s->oscillation_w_rms = pq->oscillation_w_rms;
  memcpy(s->ramp_up_w_per_s, pq->ramp_up_w_per_s, sizeof s->ramp_up_w_per_s);
  memcpy(s->ramp_down_w_per_s, pq->ramp_down_w_per_s,
         sizeof s->ramp_down_w_per_s);
  s->band_share = pq->band_share;
  memcpy(s->sub_share, pq->sub_share, sizeof s->sub_share);
  s->dynamic_range_w = pq->dynamic_range_w;
  s->dynamic_range_share = pq->dynamic_range_share;
}

/* The larger of a window's ramps up and down; NaN if neither is known. */
double factory__max_ramp(const factory_summary *s, size_t k) {
  double up = s->ramp_up_w_per_s[k], down = s->ramp_down_w_per_s[k];
  return isnan(up) && isnan(down) ? NAN : fmax(up, down);
}

/* The figures in gcode_metric order. The computational share is the IT
 * energy's share of the facility's (The Green Grid's IT: servers with
 * their supplies and fans), standing for ERCOT's share of demand. */
static void grid_values(const factory_summary *s, double *v) {
  v[GCODE_PEAK_POWER] = s->peak_power_w;
  v[GCODE_COMPUTE_SHARE] = s->energy_j > 0 ? s->it_energy_j / s->energy_j : NAN;
  v[GCODE_RAMP_1S] = factory__max_ramp(s, 0);
  v[GCODE_RAMP_1MIN] = factory__max_ramp(s, 1);
  v[GCODE_RAMP_10MIN] = factory__max_ramp(s, 2);
  for (size_t k = 0; k < PQ_NRAMPS; k++) {
    v[GCODE_RAMP_UP_1S + 2 * k] = s->ramp_up_w_per_s[k];
    v[GCODE_RAMP_DOWN_1S + 2 * k] = s->ramp_down_w_per_s[k];
  }
  v[GCODE_BAND_SHARE] = s->band_share;
  for (size_t b = 0; b < PQ_NSUBBANDS; b++)
    v[GCODE_SHARE_BELOW_1HZ + b] = s->sub_share[b];
  v[GCODE_DYNAMIC_RANGE] = s->dynamic_range_w;
  v[GCODE_DYNAMIC_RANGE_SHARE] = s->dynamic_range_share;
  v[GCODE_RIDE_THROUGH] = s->ride_through_met;
  v[GCODE_GRID_LOST] = s->dist_lost_w;
  v[GCODE_GRID_OFF] = s->dist_off_s;
}

int factory__finish_grid(factory *f, factory_summary *s, sim_error *err) {
  double v[GCODE_NMETRICS];
  grid_values(s, v);
  const gcode *code = f->sc->code.name != NULL ? &f->sc->code : NULL;
  s->grid_verdict[0] = '\0';
  if (code != NULL)
    gcode_describe(code, v, s->grid_verdict, sizeof s->grid_verdict);
  if (f->sink == NULL)
    return SIM_OK;
  return gcode_write(code, f->cfg->grid_code, v, f->sink, err);
}
