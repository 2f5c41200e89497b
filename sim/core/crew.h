/* crew.h - a crew of member engines that follow a leader engine
 * (sim_engine_follow), run on up to N threads: before the leader runs its
 * first event at a new time, every member runs its events up to that time,
 * each member always on the same thread, the threads at once.
 *
 * A member's handlers must touch only what is that member's own (its
 * model's state, its generator): whatever reads or changes several
 * members, or what the leader's events see, belongs in a leader event,
 * which runs while no member does. Then every member's events, and so
 * every result, are the same whatever the number of threads and however
 * the leader's run is cut: threads decide only which core runs which
 * member between two of the leader's events. With more than one thread
 * the members' allocators must be safe to call from several threads (the
 * C library's is). Engine layer: it knows no model. */
#ifndef SIM_CREW_H
#define SIM_CREW_H

#include <stddef.h>

#include "alloc.h"
#include "engine.h"

typedef struct sim_crew sim_crew;

/* A crew of at most `threads` threads (>= 1; 1 runs every member on the
 * caller's thread). NULL: out of memory (or threads 0). */
sim_crew *sim_crew_create(const sim_allocator *a, unsigned threads);

/* Adds a member engine (not owned), weight > 0 its expected share of the
 * work. Before sim_crew_lead only (else SIM_ESTATE). SIM_OK, SIM_EINVAL
 * (a NULL member, a weight not positive and finite) or SIM_ENOMEM. */
int sim_crew_add(sim_crew *c, sim_engine *member, double weight);

/* Makes the members follow leader (sim_engine_follow) and starts the
 * workers: min(threads, members) threads in all, the caller's one of
 * them; the members given to them by weight, the largest first to the
 * least loaded. Once only (else SIM_ESTATE). SIM_OK, or SIM_ENOMEM (a
 * thread that could not start: none is left running and the leader has
 * no hook). A member's failure stops the leader's run with the member's
 * code and message. The crew must outlive the leader's runs. */
int sim_crew_lead(sim_crew *c, sim_engine *leader);

/* Runs fn(ctx, i) for every member i, each on its member's thread (every
 * one on the caller's before sim_crew_lead), and returns when all have;
 * the first failing member's code in member order (for a leader event's
 * per-service work, e.g. re-pricing at new clocks). fn runs for every
 * member even when one fails, so the same work is done on any number of
 * threads. Not from a member's handler. */
int sim_crew_each(sim_crew *c, int (*fn)(void *ctx, size_t member), void *ctx);

/* The threads the crew runs on: after sim_crew_lead min(threads,
 * members) (at least 1), before it the most it was created with. */
unsigned sim_crew_threads(const sim_crew *c);

/* Joins the workers and frees the crew; NULL does nothing. The members
 * and the leader are left as they are: the leader's hook must not be run
 * again (sim_engine_follow(leader, NULL, NULL) first if it will run). */
void sim_crew_destroy(sim_crew *c);

#endif
