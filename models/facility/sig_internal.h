/* sig_internal.h - what sig.c (the signals) and sig_scn.c (their
 * schemas and checks) share. */
#ifndef MODELS_SIG_INTERNAL_H
#define MODELS_SIG_INTERNAL_H

#include "sig.h"

#define DAY_S 86400.0
#define PI 3.14159265358979323846

/* The mean of the daylight shape max(0, sin) over a day: the mix's check
 * holds gas above solar's swing with it, and the mix's signal scales the
 * swing by it. */
static inline double sig__shape_mean(const sig_mix *m) {
  return (m->sunset_s - m->sunrise_s) / DAY_S * 2 / PI;
}

#endif
