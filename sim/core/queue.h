/* queue.h - the pending-event set of the engine (evq).
 * A priority queue of (time, seq, slot) triples ordered by time, then seq.
 * It knows nothing of handlers or payloads: the engine keeps those in its
 * event pool and uses the slot to find them. Stale entries (cancelled
 * events) are the engine's business; evq_compact drops them in one pass. */
#ifndef SIM_QUEUE_H
#define SIM_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"

typedef struct evq evq;

/* One pending entry. seq is unique per engine, so (time, seq) is a total
 * order and equal times come out first-in, first-out. seq < EVQ_SEQS:
 * the heap keeps it in 32 bits beside the slot (queue.c), and a caller
 * whose count reaches EVQ_SEQS renumbers what is queued (evq_renumber). */
typedef struct evq_entry {
  int64_t time;
  uint64_t seq;
  uint32_t slot;
} evq_entry;

/* Creates an empty queue using alloc (NULL: the C library). Returns NULL when
 * out of memory. The caller owns the queue; free it with evq_destroy. */
evq *evq_create(const sim_allocator *alloc);

/* Frees the queue; evq_destroy(NULL) does nothing. */
void evq_destroy(evq *q);

/* Adds an entry. Returns SIM_OK or SIM_ENOMEM (the queue is unchanged). */
int evq_push(evq *q, evq_entry e);

/* evq_push of the entry (time, seq, slot), its parts in registers: the
 * engine's pushes, where an entry passed by value went through memory.
 * slot | EVQ_TRACKED (slot < EVQ_TRACKED) asks the queue to keep the
 * entry's place for evq_decrease; pops and peeks give the slot without
 * the bit. Keep it for one entry of a slot at a time (evq_untrack). */
int evq_push_at(evq *q, int64_t time, uint64_t seq, uint32_t slot);

#define EVQ_TRACKED ((uint32_t)1 << 31)

/* One more than the largest seq the queue takes. */
#define EVQ_SEQS ((uint64_t)1 << 32)

/* Gives the entry (time, seq, slot), pushed tracked, the smaller key
 * (to_time, to_seq) in place: as if it had been removed and that entry
 * pushed. false, nothing changed, when the queue does not know where it
 * is (the radix heap holds the entries, or they passed through it since)
 * or the key would not decrease: then the caller removes it its own way. */
bool evq_decrease(evq *q, uint32_t slot, uint64_t seq, int64_t to_time,
                  uint64_t to_seq);

/* Stops keeping the place of the entry (slot, seq), which stays queued:
 * for an entry the caller will treat as removed, so that a later tracked
 * entry of the same slot keeps its place alone. */
void evq_untrack(evq *q, uint32_t slot, uint64_t seq);

/* The smallest entry, without removing it; false when empty. */
bool evq_peek(const evq *q, evq_entry *out);

/* evq_peek for a caller about to pop: a heap pop leaves the root vacant
 * for the next push to fill, and this fills it, as the pop would, where
 * evq_peek searches the root's children and leaves the work to the pop. */
bool evq_first(evq *q, evq_entry *out);

/* Removes the smallest entry into *out; false when empty. */
bool evq_pop(evq *q, evq_entry *out);

/* Removes the smallest entry into *out if it comes before the key
 * (time, seq) (seq < EVQ_SEQS); else, or when empty, false and nothing
 * removed: for the engine's run loop, which takes whichever is first of
 * the queue's entries and an event source's (engine.c), so that a
 * source's event first costs no pop and put-back. */
bool evq_pop_before(evq *q, int64_t time, uint64_t seq, evq_entry *out);

/* on: the heap's walks down ask for the lines of the next level but one
 * as they go (four entries, one or two lines), for a caller whose work
 * between two queue operations evicts the heap from the first-level
 * cache, so that each level's loads wait on its compare alone; off (the
 * default): where the heap stays cached the asks only cost. Changes no
 * order: the pops are the keys' order whatever the walks. */
void evq_prefetch(evq *q, bool on);

/* Number of entries held, stale ones included. */
size_t evq_size(const evq *q);

/* Gives the n entries held the seqs 0 .. n-1 in their (time, seq)
 * order, so that equal times keep theirs, and tells fn(ctx, slot, seq)
 * each entry's new seq. O(n log n), allocates nothing while the heap
 * holds the entries; the radix heap's first come to the heap (and
 * lose the places kept, as an entry that passes through it does).
 * SIM_OK, or SIM_ENOMEM with nothing changed. */
typedef void (*evq_renumber_fn)(void *ctx, uint32_t slot, uint64_t seq);
int evq_renumber(evq *q, evq_renumber_fn fn, void *ctx);

/* Keeps only the entries for which keep(ctx, entry) is true and restores the
 * heap order: O(n). Used by the engine when tombstones pile up. */
typedef bool (*evq_keep_fn)(void *ctx, const evq_entry *e);
void evq_compact(evq *q, evq_keep_fn keep, void *ctx);

#endif
