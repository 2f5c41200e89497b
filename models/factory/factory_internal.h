/* factory_internal.h - what factory.c and factory_scn.c share. */
#ifndef MODELS_FACTORY_INTERNAL_H
#define MODELS_FACTORY_INTERNAL_H

#include <math.h>
#include <stddef.h>

#include "factory.h"

/* Seconds to engine time, rounded to the nearest nanosecond. */
static inline sim_time factory__to_ns(double s) {
  return (sim_time)llround(s * 1e9);
}

/* The share of rack group g's heat that loop l takes: its heat_share if
 * it serves g (a loop naming no racks serves them all), else 0. */
double factory__loop_share(const factory_config *c, size_t l, size_t g);

/* The checks of the services and training jobs that need the catalogs and
 * the fleet (work_scn.c); reads request traces. */
int factory__check_work(factory_scenario *sc, const scn_loc *loc,
                        sim_error *err);

/* The facility the scenario leaves out (factory_facility.c): default
 * loops from each group's GPU, the outdoor temperature they need, the
 * electrical chain's rating. Called by check_factory once the groups are
 * checked and before the loops are. */
int factory__default_facility(factory_scenario *sc, const scn_loc *loc,
                              sim_error *err);

#endif
