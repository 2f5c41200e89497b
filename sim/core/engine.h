/* engine.h - the discrete-event engine: clock, handler registry, event pool,
 * run loop, cancellation, periodic events, event sources and fluid progress.
 * It knows nothing of GPUs: models register handlers and schedule events
 * that carry two 64-bit words of payload (indices, generations). */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "err.h"

/* Simulated time: integer nanoseconds from the scenario start, so ordering is
 * exact and periodic ticks never drift. */
typedef int64_t sim_time;

#define SIM_NS ((sim_time)1)
#define SIM_US ((sim_time)1000)
#define SIM_MS ((sim_time)1000000)
#define SIM_SEC ((sim_time)1000000000)
#define SIM_MIN (60 * SIM_SEC)
#define SIM_HOUR (3600 * SIM_SEC)
#define SIM_TIME_MAX INT64_MAX

/* Seconds as a double, for physics. */
/* Divided, not multiplied by 1e-9: a correctly rounded division keeps whole
 * seconds whole (3900 s, not 3900.0000000000005). */
static inline double sim_time_to_s(sim_time t) { return (double)t / 1e9; }

typedef struct sim_engine sim_engine;

/* A scheduled event as a handler sees it. */
typedef struct sim_event {
  sim_time time;
  uint32_t kind; /* the handler it was scheduled for */
  uint64_t a, b; /* payload, copied at scheduling time */
} sim_event;

/* Names a pending event so it can be cancelled in O(1). The zero value names
 * nothing; a handle of an event that ran or was cancelled goes stale and
 * cancelling it again is a no-op. A periodic event keeps its handle. */
typedef struct sim_handle {
  uint32_t slot; /* pool slot + 1; 0 = none */
  uint32_t gen;
} sim_handle;

/* A handler returns SIM_OK, or an error code that stops the run; the run
 * returns that code and sim_engine_errmsg tells why (see sim_engine_fail). */
typedef int (*sim_handle_fn)(sim_engine *e, void *ctx, const sim_event *ev);

/* Creates an engine at time 0. alloc may be NULL (the C library). Returns
 * NULL when out of memory. Free with sim_engine_destroy. */
sim_engine *sim_engine_create(const sim_allocator *alloc);

/* Frees the engine and every pending event; NULL does nothing. */
void sim_engine_destroy(sim_engine *e);

/* The allocator the engine was created with (the C library's when it was
 * given NULL), for the models that run on it; never NULL. Valid while the
 * engine lives; do not free. */
const sim_allocator *sim_engine_allocator(const sim_engine *e);

/* Registers a handler; *kind receives its id for scheduling. name is
 * borrowed (a string literal) and used in messages. SIM_OK or SIM_ENOMEM. */
int sim_engine_register(sim_engine *e, const char *name, sim_handle_fn fn,
                        void *ctx, uint32_t *kind);

/* Lets events of kind (registered) be moved by sim_engine_move: those
 * scheduled from now on. Only these pay for a move's bookkeeping (a second
 * store at every queueing). SIM_OK, or SIM_EINVAL (no such kind). */
int sim_engine_movable(sim_engine *e, uint32_t kind);

/* Schedules kind at absolute time at (>= now, else SIM_EINVAL) with payload
 * (a, b). handle may be NULL. SIM_OK, SIM_EINVAL or SIM_ENOMEM. */
int sim_engine_schedule(sim_engine *e, sim_time at, uint32_t kind, uint64_t a,
                        uint64_t b, sim_handle *handle);

/* Schedules kind first at time first (>= now) and then every period (> 0)
 * until cancelled or the run ends. The engine reschedules it before the
 * handler runs, so the handle stays valid. */
int sim_engine_every(sim_engine *e, sim_time first, sim_time period,
                     uint32_t kind, uint64_t a, uint64_t b, sim_handle *handle);

/* Cancels the event named by *handle, if still pending, and clears *handle.
 * Returns true if an event was cancelled. O(1). */
bool sim_engine_cancel(sim_engine *e, sim_handle *handle);

/* Moves the pending one-shot event named by handle to time at (>= now),
 * keeping the handle. Its place among events of the same time: moved
 * earlier than the time it was queued at, it is queued anew now (as a
 * cancel and a schedule would place it); moved later, it keeps its entry
 * and is queued at its new time when that entry comes up, so it follows
 * the events of that time scheduled before then. Either way it runs once,
 * at its last time, and counts as one event. SIM_OK, or SIM_EINVAL (no
 * such pending event, a periodic one, one of a kind not made movable
 * before it was scheduled, or at before now) or SIM_ENOMEM,
 * with the engine's message set. */
int sim_engine_move(sim_engine *e, sim_handle handle, sim_time at);

/* Event sources: streams of events of one kind, at most one pending a
 * stream (each usually set by the handler of the one before, as a
 * service's arrivals), that are never queued: the run loop takes a
 * source's event when it is first of all in (time, seq) order, a compare
 * where a scheduled event costs a push and a pop (engine_source.c).
 * Everything else is as if each event had been scheduled when it was
 * set: its place among events of the same time, the count of events run
 * and pending, budgets, until, stop and watch. */

/* Adds a source of events of kind (registered), none pending, and puts
 * its id in *source. Not during a run: SIM_ESTATE. SIM_OK, SIM_EINVAL,
 * SIM_ERANGE or SIM_ENOMEM. */
int sim_engine_source(sim_engine *e, uint32_t kind, uint32_t *source);

/* Sets the source's pending event at time at (>= now) with payload
 * (a, b), in place of any it had: the same as cancelling that one and
 * scheduling this. SIM_OK, SIM_EINVAL or SIM_ENOMEM. */
int sim_engine_source_at(sim_engine *e, uint32_t source, sim_time at,
                         uint64_t a, uint64_t b);

/* Cancels the source's pending event; true if it had one. */
bool sim_engine_source_off(sim_engine *e, uint32_t source);

/* True if handle names a pending event. */
bool sim_engine_pending(const sim_engine *e, sim_handle handle);

/* Runs events in (time, scheduling order) up to and including time until.
 * Afterwards now = until unless stopped earlier. Returns SIM_OK, the code a
 * handler failed with, or SIM_ECANCELED after sim_engine_stop. Can be called
 * again to continue. */
int sim_engine_run(sim_engine *e, sim_time until);

/* As sim_engine_run, but returns after at most max_events events, so a
 * caller can bound the work between two looks at the wall clock. *done is
 * true when every event up to until ran (now = until); else now is the
 * time of the last event run, and the next call continues exactly where
 * this one stopped: the events, their order and so the results are those
 * of one sim_engine_run. */
int sim_engine_run_some(sim_engine *e, sim_time until, uint64_t max_events,
                        bool *done);

/* Followers (the lead/follow pair; sim/core/crew.h runs them): engines
 * whose events touch nothing of the leader's or of each other's, run up to
 * each time the leader comes to, before the leader's events at that time,
 * so that a leader's event sees every follower at its clock and may change
 * them (engine_follow.c). */

/* Brings followers up to time t: runs their events before t (through=false)
 * or up to and including t (through=true), then sets their clocks to t;
 * adds the events they ran to *ran. SIM_OK or the code that stops the
 * leader's run (fn has set the leader's message with sim_engine_fail). */
typedef int (*sim_follow_fn)(void *ctx, sim_time t, bool through,
                             uint64_t *ran);

/* The leader calls fn before it runs or drops its first event at each time
 * later than the last it passed (through=false), and when a run reaches its
 * until (through=true). The followers' events count in the leader's
 * sim_engine_events_run and in run_some's max_events (a follower's run is
 * not cut by it: the budget is checked between the leader's events). NULL:
 * none. One hook an engine; not set from a handler. */
void sim_engine_follow(sim_engine *leader, sim_follow_fn fn, void *ctx);

/* Runs the events before t, then now = t (t >= now). Returns as
 * sim_engine_run. */
int sim_engine_run_before(sim_engine *e, sim_time t);

/* Asks the run loop to return after the current event. */
void sim_engine_stop(sim_engine *e);

/* Makes every run stop, as sim_engine_stop does, before its next event
 * whenever *flag is nonzero (read after each event): for a flag a signal
 * handler sets, which cannot call sim_engine_stop. NULL: none. The flag
 * must outlive the engine's runs. Stopping never changes what the events
 * that ran did, so watching costs no determinism. */
void sim_engine_watch(sim_engine *e, const volatile sig_atomic_t *flag);

/* Records a failure message (for handlers) and returns code. */
int sim_engine_fail(sim_engine *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The message of the last failure; "" when none. Valid until the next call
 * that fails; do not free. */
const char *sim_engine_errmsg(const sim_engine *e);

sim_time sim_engine_now(const sim_engine *e);

/* Events run so far, and events pending (live ones, not tombstones). */
uint64_t sim_engine_events_run(const sim_engine *e);
size_t sim_engine_events_pending(const sim_engine *e);

/* For tests: the count of queue entries at which the engine renumbers
 * its pending events' entries 0 .. n-1 in their order (the queue keeps a
 * seq in 32 bits; engine.c, renumber). By default and at most 2^32; a
 * test sets a few hundred (or 1) so that a short run renumbers many
 * times, which must not change the order of any event. */
void sim_engine_renumber_at(sim_engine *e, uint64_t seqs);

/* Fluid progress (docs/ARCHITECTURE.md, fluid mode): remaining work drained at a rate, with
 * the completion event rescheduled whenever the rate changes, so there is no
 * polling. Embedded in a model's state; zero-initialised is idle. */
typedef struct sim_fluid {
  double remaining; /* work left as of `since`, in the model's units */
  double rate;      /* work per second */
  sim_time since;
  sim_handle done; /* the completion event, if the rate is positive */
} sim_fluid;

/* Starts work units of work at the engine's now with rate 0: a completion
 * still pending from earlier work is cancelled, nothing is scheduled. */
void sim_fluid_start(sim_engine *e, sim_fluid *f, double work);

/* Work left at time now (>= f->since), not below 0. */
double sim_fluid_remaining(const sim_fluid *f, sim_time now);

/* Advances f to now, sets the new rate and reschedules its completion event
 * (kind with payload a, b) at the time the remaining work runs out, rounded
 * up to the next nanosecond; a rate of 0 leaves none scheduled.
 * SIM_OK, SIM_EINVAL (negative rate) or SIM_ENOMEM. */
int sim_fluid_set_rate(sim_engine *e, sim_fluid *f, double rate, uint32_t kind,
                       uint64_t a, uint64_t b);

/* Cancels the completion event and records the work left at now. */
void sim_fluid_stop(sim_engine *e, sim_fluid *f);

#endif
