/* electrical.c - the facility's power chain of electrical.h: the schema
 * with each default's source, and the loss arithmetic. */
#include "electrical.h"

#include <math.h>
#include <stddef.h>


/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

#define TERM(k, member, def, h)                                                \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY,                                            \
    .offset = offsetof(elec_device, member), .dim = UNITS_FRACTION, .min = 0,  \
    .max = 0.5, .dflt = def, .help = h                                         \
  }

/* One schema per device, so each carries its own defaults. */
#define DEVICE_SCHEMA(var, label, a0, a1, a2)                                  \
  static const scn_field var##_fields[] = {                                    \
      TERM("no_load", no_load, a0, "loss at any load, a share of the rating"), \
      TERM("proportional", proportional, a1,                                   \
           "loss per unit of load share, a share of the rating"),              \
      TERM("square_law", square_law, a2,                                       \
           "loss per unit of load share squared, a share of the rating"),      \
  };                                                                           \
  static const scn_schema var##_schema =                                       \
      SCN_SCHEMA(label, elec_device, var##_fields, .check = NULL)

/* The transformer (medium to low voltage): 0.2% no-load (core) and 0.8%
 * square-law (copper) losses, 1.0% at full load: inside the 0.40-1.90%
 * full-load losses of IEEE Std 3001.5-2013, Table 1 (after Hickok, 1978).
 * The split between core and copper is an assumption (core losses are
 * typically a fifth to a quarter of the full-load losses of a
 * distribution transformer). */
DEVICE_SCHEMA(transformer, "transformer", "0.2%", "0%", "0.8%");

/* The UPS, double conversion: 1% no-load, 2% proportional, 1% square-law
 * of its rating gives an efficiency of 89.2, 94.1, 95.7 and 96.2% at 10,
 * 25, 50 and 100% load. Current units are quoted at 94-97% from 25% to
 * full load, lower at light load, and no-load losses are "over 40% of
 * all UPS losses" at typical loads (APC/Schneider, "Definitions of
 * losses", 2012; White Paper 108, Avelar, "Making Large UPS Systems More
 * Efficient", rev. 2, on the curve's shape). The coefficients are fitted
 * to those points here, not read off one vendor's datasheet; WP113's
 * table for legacy UPSs (as remembered: about 4% no-load and 5%
 * proportional) is far lossier. */
DEVICE_SCHEMA(ups, "UPS", "1%", "2%", "1%");

/* Distribution: PDUs, busway and cables. WP113 puts wiring and switchgear
 * at about 1% square-law (from memory of its table, not re-read); PDUs
 * without transformers (415 V distribution, as AI halls use) keep a
 * small no-load draw for metering and control, 0.2% (assumption). */
DEVICE_SCHEMA(distribution, "distribution", "0.2%", "0%", "1%");

static const scn_field elec_fields[] = {
    {.key = "losses",
     .type = SCN_BOOL,
     .offset = offsetof(elec_config, losses),
     .dflt = "true",
     .help = "model the chain's losses and fixed load; false: a lossless "
             "chain"},
    {.key = "rating",
     .type = SCN_QUANTITY,
     .offset = offsetof(elec_config, rating_w),
     .dim = UNITS_POWER,
     .min = 0,
     .max = HUGE_VAL,
     .flags = SCN_POSITIVE,
     .help = "what the transformer, UPS and distribution are rated for; "
             "default: the racks' total power limit"},
    {.key = "transformer",
     .type = SCN_MAP,
     .offset = offsetof(elec_config, transformer),
     .sub = &transformer_schema,
     .help = "its loss curve: no_load, proportional, square_law"},
    {.key = "ups",
     .type = SCN_MAP,
     .offset = offsetof(elec_config, ups),
     .sub = &ups_schema,
     .help = "its loss curve: no_load, proportional, square_law"},
    {.key = "distribution",
     .type = SCN_MAP,
     .offset = offsetof(elec_config, distribution),
     .sub = &distribution_schema,
     .help = "PDUs, busway and wiring: no_load, proportional, square_law"},
    /* Lighting and controls: WP113 counts lighting at about 1% of the
     * rated load, fixed (from memory of its table, not re-read). A hall of
     * dense AI racks lights less floor per watt, so this is high for it;
     * the controls, BMS and security draw the same whatever the IT load. */
    {.key = "fixed_load",
     .type = SCN_QUANTITY,
     .offset = offsetof(elec_config, fixed_share),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 0.5,
     .dflt = "1%",
     .help = "lighting and controls, a share of the rating, drawn at any "
             "load"},
};

const scn_schema elec_schema =
    SCN_SCHEMA("electrical", elec_config, elec_fields, .check = NULL);

/* ------------------------------------------------------------------ */
/* Losses                                                              */
/* ------------------------------------------------------------------ */

double elec_device_loss_w(const elec_device *d, double rating_w, double out_w) {
  if (!(rating_w > 0))
    return 0;
  double x = out_w / rating_w;
  return rating_w * (d->no_load + d->proportional * x + d->square_law * x * x);
}

elec_losses elec_chain_losses(const elec_config *c, double load_w) {
  elec_losses l = {0};
  double r = c->rating_w;
  if (!c->losses || !(r > 0))
    return l;
  l.distribution_w = elec_device_loss_w(&c->distribution, r, load_w);
  double ups_out = load_w + l.distribution_w;
  l.ups_w = elec_device_loss_w(&c->ups, r, ups_out);
  l.fixed_w = c->fixed_share * r;
  l.transformer_w =
      elec_device_loss_w(&c->transformer, r, ups_out + l.ups_w + l.fixed_w);
  l.total_w = l.distribution_w + l.ups_w + l.fixed_w + l.transformer_w;
  return l;
}

double elec_overhead_w(const elec_config *c, double load_w) {
  return elec_chain_losses(c, load_w).total_w;
}
