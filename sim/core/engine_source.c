/* engine_source.c - event sources (engine.h, sim_engine_source): streams
 * of events that the run loop takes in (time, seq) order with the queued
 * ones without queueing them. Engine layer, beside engine.c, whose state
 * it shares through engine_internal.h.
 *
 * Why: issue 24 asks for arrivals "generated inline between pending
 * events". An inference service's arrivals are a stream, each scheduled
 * by the one before, so at most one is pending: its key can sit beside
 * the queue rather than in it. A push and a pop an arrival (about 200
 * instructions) become a compare in the run loop. The twenty-first
 * session ran an event inline only when it was the next of all right
 * after its handler, one arrival in eight at bench-10k's peak, and lost
 * (docs/performance-log.md); a source is taken whenever it is first.
 *
 * Invariants (with engine.c's):
 * - A source's pending event has the seq e->seq had when it was set and
 *   counts among the live events; none pending: seq SEQ_FREE and time
 *   SIM_TIME_MAX, a key after every pending one.
 * - e->src_first names the pending source first in (time, seq) and
 *   e->src_time, e->src_seq are its key (engine__source_first), or
 *   NO_SOURCE when none is pending.
 * - Each source holds a pool slot whose seq is SEQ_SOURCE, so that no
 *   queue entry is live for it, but while engine__renumber runs: then
 *   its pending event is a queued entry of that slot, live, and takes its
 *   new seq as the others do; afterwards the entry stays, a tombstone. */
#include "engine_internal.h"
#include "vec.h"

enum { SOURCES_MIN = 4 };

/* Doubles the sources' array; SIM_ENOMEM leaves it as it was. */
static int sources_grow(sim_engine *e) {
  size_t cap = e->cap_src;
  if (sim_vec_reserve(&e->alloc, &e->src, &cap,
                      cap == 0 ? SOURCES_MIN : cap + 1,
                      sizeof *e->src) != SIM_OK)
    return SIM_ENOMEM;
  e->cap_src = cap < NO_SOURCE ? (uint32_t)cap : NO_SOURCE - 1;
  return SIM_OK;
}

int sim_engine_source(sim_engine *e, uint32_t kind, uint32_t *source) {
  if (source == NULL || kind >= e->nhandlers)
    return sim_engine_fail(e, SIM_EINVAL, "source: no handler of kind %lu",
                           (unsigned long)kind);
  /* run_loop, which a run without sources takes, would not see it */
  if (e->running)
    return sim_engine_fail(e, SIM_ESTATE, "source: added during a run");
  if (e->nsrc == NO_SOURCE - 1)
    return sim_engine_fail(e, SIM_ERANGE, "source: too many");
  uint32_t slot;
  if ((e->nsrc == e->cap_src && sources_grow(e) != SIM_OK) ||
      engine__slot_take(e, &slot) != SIM_OK)
    return sim_engine_fail(e, SIM_ENOMEM, "source: out of memory");
  e->slots[slot].seq = SEQ_SOURCE;
  e->src[e->nsrc] = (ev_source){
      .time = SIM_TIME_MAX, .seq = SEQ_FREE, .kind = kind, .slot = slot};
  *source = e->nsrc++;
  return SIM_OK;
}

int sim_engine_source_at(sim_engine *e, uint32_t source, sim_time at,
                         uint64_t a, uint64_t b) {
  if (source >= e->nsrc)
    return sim_engine_fail(e, SIM_EINVAL, "source %lu: no such source",
                           (unsigned long)source);
  if (at < e->now)
    return sim_engine_fail(e, SIM_EINVAL,
                           "source: event at %lld ns is before now (%lld ns)",
                           (long long)at, (long long)e->now);
  if (engine__seq_ready(e) != SIM_OK)
    return sim_engine_fail(e, SIM_ENOMEM, "source: out of memory renumbering");
  ev_source *s = &e->src[source];
  e->live += s->seq == SEQ_FREE;
  s->time = at;
  s->seq = e->seq++;
  s->a = a;
  s->b = b;
  /* Set again, the first looks for the next; else the others' first
   * stands, and this one comes before it or not (an arrival's: its
   * handler sets the next after run_source found the others' first). */
  if (e->src_first == source)
    engine__source_first(e);
  else if (engine__key_before(at, s->seq, e->src_time, e->src_seq)) {
    e->src_first = source;
    e->src_time = at;
    e->src_seq = s->seq;
  }
  return SIM_OK;
}

bool sim_engine_source_off(sim_engine *e, uint32_t source) {
  if (source >= e->nsrc || e->src[source].seq == SEQ_FREE)
    return false;
  e->src[source].seq = SEQ_FREE;
  e->src[source].time = SIM_TIME_MAX;
  e->live--;
  engine__source_first(e);
  return true;
}
