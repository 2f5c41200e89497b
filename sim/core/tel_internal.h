/* tel_internal.h - what the telemetry sinks share beyond tel.h. */
#ifndef SIM_TEL_INTERNAL_H
#define SIM_TEL_INTERNAL_H

#include "tel.h"

/* A deep copy of a group declaration (names, columns, labels) in one
 * allocation, so a sink keeps what it was told even after the caller's
 * declaration is gone (a model that failed half-way through building).
 * NULL when out of memory. Free with tel__group_destroy. */
tel_group *tel__group_dup(const tel_group *g);

void tel__group_destroy(tel_group *g);

#endif
