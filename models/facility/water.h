/* water.h - the outdoor air's wet bulb and an evaporative plant's water
 * (docs/MODELS.md, Cooling): the psychrometric input a cooling tower
 * follows, and its water by source.
 *
 * Wet bulb. Stull's empirical fit (R. Stull, "Wet-Bulb Temperature from
 * Relative Humidity and Air Temperature", J. Appl. Meteor. Climatol. 50,
 * 2267-2269, 2011, eq. 1), at sea-level pressure:
 *
 *   Tw = T atan(0.151977 (RH + 8.313659)^1/2) + atan(T + RH)
 *        - atan(RH - 1.676331) + 0.00391838 RH^3/2 atan(0.023101 RH)
 *        - 4.686035
 *
 * with T in degC and RH in %. Stull states it for RH 5-99% and T -20 to
 * 50 degC, within -1 to +0.65 K of the psychrometric wet bulb there.
 *
 * Water. A cooling tower rejects heat mostly by evaporating some of the
 * water it circulates. The rule of thumb (Perry's Chemical Engineers'
 * Handbook; SPX Cooling Technologies, "Cooling Tower Fundamentals") puts
 * evaporation at 0.00085 of the circulation per degree F of range, that
 * is 0.00085 x 1.8 per K: with the circulation Q / (c_p range), the range
 * cancels and evaporation is 1.53e-3 / c_p kg per J rejected, 1.316 L per
 * kWh (the rest of the heat leaves as sensible heat in the air). Drift is
 * a share of the circulation (what the drift eliminators let through).
 * Blowdown keeps the dissolved solids at the cycles of concentration N:
 * the solids that come in with the make-up leave in blowdown and drift,
 * so blowdown + drift = evaporation / (N - 1). Make-up is the sum. */
#ifndef MODELS_WATER_H
#define MODELS_WATER_H

/* Stull's wet bulb, degC, from the dry bulb (degC) and relative humidity
 * (%). RH is held to Stull's 5-99% (outside it the fit bends away) and the
 * result to at most the dry bulb; NaN for a non-finite input. */
double water_wet_bulb_c(double dry_c, double rh_pct);

/* Water by source per joule of heat a cooling tower rejects, kg/J (1 kg
 * is 1 L). */
typedef struct water_rates {
  double evaporation, blowdown, drift;
  double total; /* make-up: the sum */
} water_rates;

/* Evaporation per joule rejected, kg/J: 0.00085 x 1.8 / c_p. */
#define WATER_EVAP_KG_PER_J (0.00085 * 1.8 / 4186.0)

/* The rates for a tower at cycles of concentration cycles (> 1), drift
 * drift_share of the circulation and water range range_k (K). Blowdown is
 * never negative: drift above evaporation / (N - 1) would hold the solids
 * lower without it. */
water_rates water_tower_rates(double cycles, double drift_share,
                              double range_k);

#endif
