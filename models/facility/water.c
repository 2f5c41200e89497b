/* water.c - wet bulb and a cooling tower's water, as water.h states them. */
#include "water.h"

#include <math.h>

/* Stull's range of relative humidity. */
#define RH_MIN 5.0
#define RH_MAX 99.0

double water_wet_bulb_c(double dry_c, double rh_pct) {
  if (!isfinite(dry_c) || !isfinite(rh_pct))
    return NAN;
  double rh = rh_pct < RH_MIN ? RH_MIN : rh_pct > RH_MAX ? RH_MAX : rh_pct;
  double t = dry_c;
  double tw = t * atan(0.151977 * sqrt(rh + 8.313659)) + atan(t + rh) -
              atan(rh - 1.676331) +
              0.00391838 * pow(rh, 1.5) * atan(0.023101 * rh) - 4.686035;
  /* Air cannot be cooled by evaporation above its own temperature; the
   * fit's +0.65 K error could say so near saturation. */
  return tw < t ? tw : t;
}

water_rates water_tower_rates(double cycles, double drift_share,
                              double range_k) {
  water_rates w = {0};
  w.evaporation = WATER_EVAP_KG_PER_J;
  /* Circulation per joule: 1 / (c_p range). */
  w.drift = drift_share / (4186.0 * range_k);
  double bd = w.evaporation / (cycles - 1) - w.drift;
  w.blowdown = bd > 0 ? bd : 0;
  w.total = w.evaporation + w.blowdown + w.drift;
  return w;
}
