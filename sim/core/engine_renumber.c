/* engine_renumber.c - the seqs' renumbering (engine_internal.h,
 * engine__renumber): the queue keeps a seq in 32 bits, so that when the
 * engine's count of seqs gets to its limit the pending events are given
 * the seqs 0 .. n-1 in their order, the event sources' with them. Engine
 * layer, beside engine.c (moved out of it whole, a rare path, to keep
 * engine.c short). */
#include "engine_internal.h"

/* A rare path: kept out of the callers' lines (as engine.c's COLD). */
#if defined(__GNUC__) || defined(__clang__)
#define COLD __attribute__((noinline, cold))
#else
#define COLD
#endif

/* evq_renumber's report: a live entry's new seq to its slot. */
static void renumbered(void *ctx, uint32_t slot, uint64_t seq) {
  ((sim_engine *)ctx)->slots[slot].seq = seq;
}

/* Renumbering's two steps for the sources: their pending events queued
 * as live entries of their slots, so that they take their places in the
 * new numbering (SIM_ENOMEM: some may be queued, and sources_unqueue
 * still takes them back); then the new seqs taken back, the entries left
 * in the queue as tombstones (engine_source.c's invariants). */
static int sources_queue(sim_engine *e) {
  for (uint32_t i = 0; i < e->nsrc; i++) {
    const ev_source *s = &e->src[i];
    if (s->seq == SEQ_FREE)
      continue;
    if (evq_push_at(e->q, s->time, s->seq, s->slot) != SIM_OK)
      return SIM_ENOMEM;
    e->slots[s->slot].seq = s->seq;
  }
  return SIM_OK;
}

static void sources_unqueue(sim_engine *e) {
  for (uint32_t i = 0; i < e->nsrc; i++) {
    ev_source *s = &e->src[i];
    ev_slot *slot = &e->slots[s->slot];
    if (slot->seq == SEQ_SOURCE)
      continue;
    s->seq = slot->seq; /* renumbered, or as it was if that failed */
    slot->seq = SEQ_SOURCE;
    e->tombs++;
  }
  engine__source_first(e);
}

/* The queue keeps seqs in 32 bits (queue.h; a request-level day pushes
 * about 2e8). Tombstones go first, so each entry left is its slot's live
 * one and takes the slot's seq along; the sources' pending events join
 * them for the numbering (and stay as tombstones); then 0 .. n-1 in
 * order, the next n. SIM_ENOMEM (nothing renumbered) from the radix heap
 * (queue.h) or a source's entry that found no room. */
COLD int engine__renumber(sim_engine *e) {
  evq_compact(e->q, engine__entry_live, e);
  e->tombs = 0;
  int rc = sources_queue(e);
  if (rc == SIM_OK)
    rc = evq_renumber(e->q, renumbered, e);
  sources_unqueue(e);
  if (rc != SIM_OK)
    return SIM_ENOMEM;
  e->seq = evq_size(e->q);
  return SIM_OK;
}
