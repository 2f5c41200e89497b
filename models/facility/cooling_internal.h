/* cooling_internal.h - what cooling.c and cooling_schema.c share: the
 * bounds on a loop's supply setpoint; and the tests' switch to the plain
 * integration. */
#ifndef MODELS_COOLING_INTERNAL_H
#define MODELS_COOLING_INTERNAL_H

/* Air above ASHRAE's widest allowable envelope (class A4, 5-45 degC) is
 * no supply a server is built for. */
#define AIR_SUPPLY_MAX_C 45.0
/* The schema's bounds on any loop's supply (its row "supply"). */
#define SUPPLY_MIN_C 5.0
#define SUPPLY_MAX_C 60.0

#include <stdbool.h>

#include "cooling.h"

/* With plain, l's steps integrate by GSL's driver alone, not by the one
 * step of cooling_rk8pd.h where it would give the same bits (the tests
 * compare the two). */
void cool__loop_set_plain(cool_loop *l, bool plain);

#endif
