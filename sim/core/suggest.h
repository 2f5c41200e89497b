/* suggest.h - "did you mean": the known name closest to an unknown one.
 * Every place that refuses a name (scenario keys, enums such as
 * power.policy, units, GPU types, models, precisions, rack groups) feeds
 * its known names through one sim_suggest, so suggestions behave the
 * same everywhere: case is ignored, a name that starts another
 * (`h100` for `H100-SXM`) counts as close, and otherwise the edit
 * distance must be small. Part of the engine's core: no allocation, no
 * dependency. */
#ifndef SIM_SUGGEST_H
#define SIM_SUGGEST_H

#include <stddef.h>

/* The search for the closest candidate. Embedded in the caller's frame;
 * borrows name and every candidate until the last call. */
typedef struct sim_suggest {
  const char *name; /* the unknown name */
  const char *best; /* the closest candidate so far, or NULL */
  size_t score;     /* its score: lower is closer */
} sim_suggest;

/* Starts a search for names close to name. */
void sim_suggest_init(sim_suggest *s, const char *name);

/* Considers candidate. Of equally close candidates the first added wins,
 * so catalog order decides ties. */
void sim_suggest_add(sim_suggest *s, const char *candidate);

/* The closest candidate, or NULL when none is close. Closeness, best
 * first: equal ignoring case; one starts the other ignoring case (both at
 * least 2 characters); at most 2 edits ignoring case, and fewer than half
 * the name's length. */
const char *sim_suggest_best(const sim_suggest *s);

/* Writes "did you mean 'X'? " into buf, or "" when nothing is close;
 * returns the length written (truncated to size). */
size_t sim_suggest_text(const sim_suggest *s, char *buf, size_t size);

#endif
