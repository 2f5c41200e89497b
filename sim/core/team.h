/* team.h - a tick's independent pieces on more than one core.
 *
 * A team is the calling thread and lanes - 1 worker threads. A run hands
 * it chunks 0 .. n-1 of one function; the caller and the workers take
 * them in turn from a shared counter, and the run returns when every
 * chunk is done. The caller never waits for a chunk nobody has started:
 * a worker that is asleep or descheduled leaves its chunks to the
 * caller, so a team is never slower than its work plus a handful of
 * atomic operations.
 *
 * The contract that keeps results the same bytes with any number of
 * lanes: a chunk reads only what no chunk of the same run writes, and
 * writes only memory that is its own (its rows of an array, its
 * services, its racks). What is added up across chunks is added up
 * after the run, by the caller, in chunk order. A chunk cannot fail:
 * whatever may fail (an allocation) happens before the run.
 *
 * A NULL team, or one of one lane, runs the chunks in order on the
 * caller, with no thread and no atomics: the tests and the library's
 * default. Runs do not nest, and a team is used by one thread (the
 * simulation's) at a time. */
#ifndef SIM_TEAM_H
#define SIM_TEAM_H

#include <stddef.h>

typedef struct sim_team sim_team;

/* A run's chunk: do piece `chunk` of what ctx describes. */
typedef void (*sim_team_fn)(void *ctx, size_t chunk);

/* The most lanes a team takes (more cores are left to other runs). */
enum { SIM_TEAM_MAX_LANES = 8 };

/* A team of `lanes` (at most SIM_TEAM_MAX_LANES), with as many of its
 * workers as could be started; NULL for one lane, or when memory or
 * every thread is missing: the runs then go on the caller alone, which
 * gives the same results. */
sim_team *sim_team_new(unsigned lanes);

/* Stops and joins the workers (NULL: nothing). */
void sim_team_free(sim_team *t);

/* The team's lanes; 1 for NULL. */
unsigned sim_team_lanes(const sim_team *t);

/* fn(ctx, 0) .. fn(ctx, n - 1), each once, on any of the team's lanes;
 * returns when all are done, with their writes visible to the caller. */
void sim_team_run(sim_team *t, size_t n, sim_team_fn fn, void *ctx);

/* The lanes a run should use when asked for "auto": the CPUs this
 * process may run on (its affinity), at most SIM_TEAM_MAX_LANES and at
 * least 1. */
unsigned sim_team_auto_lanes(void);

#endif
