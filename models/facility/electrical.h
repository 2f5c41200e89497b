/* electrical.h - the facility's power chain between the meter and the
 * racks: a transformer, the UPS and the distribution (PDUs, busway,
 * wiring), each with its losses as a curve of its load, and a fixed
 * facility load (lighting, controls). Config structs load through
 * elec_schema, so a scenario can hold an `electrical:` map.
 *
 * The model is Rasmussen's (APC/Schneider White Paper 113, "Electrical
 * Efficiency Modeling for Data Centers", rev. 2): a device rated P_r
 * that delivers P loses
 *
 *   L(P) = P_r (a0 + a1 x + a2 x^2),   x = P / P_r,
 *
 * a no-load term a0 (magnetising current, fans, control boards), a term
 * proportional to the power it processes (switching), and a square-law
 * term (I^2 R in windings and cables), each a share of its rating. So its
 * efficiency P / (P + L) falls steeply at light load, where a0 dominates,
 * and a facility's PUE rises when its IT load is low (WP113, "Effect of
 * under-loading").
 *
 * The chain, from the racks up: the distribution delivers the racks'
 * feed (IT, rack conversion losses, smoothing); the UPS delivers that
 * plus the distribution's losses; the transformer delivers that plus the
 * UPS's losses and the fixed load. Cooling plant is fed around the UPS
 * and its transformer is not modelled (a simplification: it would add
 * about 1% of the cooling power). The losses' heat goes to the electrical
 * rooms, whose cooling is not modelled either. */
#ifndef MODELS_ELECTRICAL_H
#define MODELS_ELECTRICAL_H

#include <stdbool.h>

#include "scenario.h"

/* One device's loss curve: shares of its rating. */
typedef struct elec_device {
  double no_load;      /* a0: lost at any load, even none */
  double proportional; /* a1: per unit of load share */
  double square_law;   /* a2: per unit of load share squared */
} elec_device;

/* The chain as a scenario gives it. Plain data. */
typedef struct elec_config {
  bool losses;     /* false: a lossless chain and no fixed load */
  double rating_w; /* every device's rating; NaN until the factory fills it
                      with its racks' total power limit */
  elec_device transformer, ups, distribution;
  double fixed_share; /* lighting and controls, a share of the rating */
} elec_config;

/* The schema of the `electrical:` map; every key has a default. */
extern const scn_schema elec_schema;

/* What the chain loses when it delivers load_w to the racks. W. */
typedef struct elec_losses {
  double distribution_w, ups_w, transformer_w;
  double fixed_w; /* lighting and controls */
  double total_w; /* the sum: what the meter sees beyond load_w */
} elec_losses;

/* A device's loss when it delivers out_w at rating rating_w; 0 for a
 * rating that is not positive. */
double elec_device_loss_w(const elec_device *d, double rating_w, double out_w);

/* The chain's losses and fixed load when it delivers load_w (>= 0) to the
 * racks; all 0 when losses are off or the rating is not set. */
elec_losses elec_chain_losses(const elec_config *c, double load_w);

/* elec_chain_losses(c, load_w).total_w. */
double elec_overhead_w(const elec_config *c, double load_w);

#endif
