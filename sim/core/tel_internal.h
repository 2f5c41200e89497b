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

/* The metrics a sink was told of (tel_metric.c). note keeps m's
 * declaration (replacing one of the same key), commit writes the units,
 * long_names and groups attributes through the sink's put_summary_str,
 * free forgets them; reserved says whether a key is one of those three. */
int tel__metric_note(tel_sink *s, const tel_metric *m);
int tel__metric_commit(tel_sink *s);
void tel__metric_free(tel_sink *s);
int tel__metric_reserved(const char *key);

#endif
