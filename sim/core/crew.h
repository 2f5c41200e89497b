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

#include <stdbool.h>
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

/* Runs fn(ctx, i) for i = 0 .. n-1, item i on thread i % T of the crew's
 * T threads (the same thread every call, so its data stays in that
 * core's caches; every one on the caller's before sim_crew_lead or when
 * n < 2), and returns when all have: the first failing item's code in
 * item order. Every item runs even when one fails. The items must touch
 * disjoint memory (for a leader event's work split by something other
 * than the members, e.g. the power policy's split of each rack group).
 * Not from a member's handler. */
int sim_crew_for(sim_crew *c, size_t n, int (*fn)(void *ctx, size_t i),
                 void *ctx);

/* A job posted beside the members' (sim_crew_post), for an idle worker
 * while the caller goes on with work of its own: fn(ctx) is called on a
 * worker waiting for the next member job, and called again (on a worker
 * free again) while it returns false, until it returns true (done) or
 * the caller settles it. fn should return false soon once
 * sim_crew_wanted says the worker is wanted, having left its work at a
 * point it can go on from. */
typedef bool (*sim_crew_side_fn)(void *ctx);

/* Posts fn(ctx) for a worker (above), first settling any job posted
 * before. The job is optional: it may never run (no worker, or none free
 * before sim_crew_settle), so a result must not depend on how much of it
 * ran. It may touch what the members' events touch, as the crew settles
 * it before it brings the members on; it must not touch what the
 * caller, a sim_crew_each or a sim_crew_for touches until then (those
 * may run beside it). True if posted; false with one thread or before
 * sim_crew_lead (nothing will run). Not from a member's handler. */
bool sim_crew_post(sim_crew *c, sim_crew_side_fn fn, void *ctx);

/* From a posted job's fn: whether its worker is wanted (a member job was
 * posted, or the caller settles), so fn should return. */
bool sim_crew_wanted(const sim_crew *c);

/* Ends the posted job, if any: withdraws it if no worker runs it now
 * (its fn is not called again), else asks it to stop (sim_crew_wanted)
 * and waits until it returns. After it, whatever fn wrote is the
 * caller's to read. Whether fn ever returned true (done). The crew calls
 * it itself before it brings the members on and when destroyed. */
bool sim_crew_settle(sim_crew *c);

/* The threads the crew runs on: after sim_crew_lead min(threads,
 * members) (at least 1), before it the most it was created with. */
unsigned sim_crew_threads(const sim_crew *c);

/* Joins the workers and frees the crew; NULL does nothing. The members
 * and the leader are left as they are: the leader's hook must not be run
 * again (sim_engine_follow(leader, NULL, NULL) first if it will run). */
void sim_crew_destroy(sim_crew *c);

#endif
