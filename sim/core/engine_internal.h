/* engine_internal.h - what engine.c and engine_source.c share: the
 * engine's state (the event pool, the handler registry, the event
 * sources), the seq's renumbering, and the steps of the sources that the
 * run loop takes in line. Engine layer; no model sees this. */
#ifndef SIM_ENGINE_INTERNAL_H
#define SIM_ENGINE_INTERNAL_H

#include "engine.h"
#include "queue.h"

/* The seq of a free slot; real seqs count up from 0 and never get here. */
#define SEQ_FREE UINT64_MAX

/* The index of no slot: the end of the free list. */
#define NO_SLOT UINT32_MAX

/* Slots in all at most: an index leaves the queue's EVQ_TRACKED bit free
 * (and slot + 1 fits a handle). */
#define SLOTS_MAX EVQ_TRACKED

/* The seq of a source's pool slot: never a queue entry's, so that a
 * source's entries in the queue (only renumbering puts them there) are
 * tombstones except while it renumbers (engine__renumber). */
#define SEQ_SOURCE (UINT64_MAX - 1)

/* The index of no source. */
#define NO_SOURCE UINT32_MAX

/* One more than the largest handler kind. */
#define KIND_LIMIT ((uint32_t)1 << 29)

/* 32 bytes, so that a slot never straddles two cache lines: the run loop
 * reads one slot per event, in time order, not address order. */
typedef struct ev_slot {
  uint64_t a;            /* payload; the next free slot while free */
  uint64_t b;            /* payload */
  uint64_t seq;          /* seq of the live queue entry, or SEQ_FREE */
  unsigned kind : 29;    /* handler */
  unsigned periodic : 1; /* the period is in period[slot] */
  unsigned movable : 1;  /* of a movable kind: when[slot] is kept */
  unsigned moved : 1;    /* moved later: due[slot] is past its entry */
  uint32_t gen;          /* bumped whenever the slot is freed */
} ev_slot;

_Static_assert(sizeof(ev_slot) == 32, "a slot fills half a cache line");

/* A movable event's queued time and the time it is due, which
 * sim_engine_move may have put later (then the slot's moved bit is set).
 * Parallel to the slots: only a move and a queued entry coming up with
 * the moved bit set read it, and only queueing a movable slot writes it. */
typedef struct ev_when {
  sim_time queued, due;
} ev_when;

typedef struct ev_handler {
  const char *name; /* borrowed */
  sim_handle_fn fn;
  void *ctx;
  bool movable; /* its events can be moved (sim_engine_movable) */
} ev_handler;

/* An event source (sim_engine_source): a stream of events of one kind,
 * at most one pending, that is never queued. Its pending event's key is
 * (time, seq), the seq taken from the engine's count when the event was
 * set, as a push takes it, so that it sorts among queued events as a
 * scheduled one would; seq is SEQ_FREE when none is pending. */
typedef struct ev_source {
  sim_time time;
  uint64_t seq;   /* none pending: SEQ_FREE, and time SIM_TIME_MAX */
  uint64_t a, b;  /* payload */
  uint32_t kind;  /* handler */
  uint32_t slot;  /* a pool slot of its own, for renumbering (SEQ_SOURCE) */
} ev_source;

struct sim_engine {
  sim_allocator alloc;
  evq *q;
  ev_slot *slots;
  sim_time *period;   /* of periodic events; parallel to slots, kept apart
                         because most events are not periodic */
  ev_when *when;      /* where each slot is queued and where it is due */
  uint32_t nslots;    /* slots in use or on the free list */
  uint32_t free_head; /* first free slot; NO_SLOT when none */
  ev_handler *handlers;
  uint32_t nhandlers, cap_handlers;
  sim_time now;
  uint64_t seq;   /* the seq of the next queue entry */
  uint64_t seqs;  /* renumber when seq gets here (EVQ_SEQS; tests less) */
  uint64_t nrun;  /* events run */
  size_t live;    /* pending events */
  size_t tombs;   /* stale queue entries */
  uint64_t nfail; /* calls of sim_engine_fail, to spot silent failures */
  bool stop;      /* sim_engine_stop was called */
  bool running;   /* inside sim_engine_run */
  const volatile sig_atomic_t *watch; /* stops the run when nonzero */
  ev_source *src;     /* the event sources (engine_source.c) */
  uint32_t nsrc, cap_src;
  uint32_t src_first; /* the pending source first in (time, seq), or
                         NO_SOURCE; its key cached for the run loop: */
  sim_time src_time;
  uint64_t src_seq;
  sim_follow_fn follow; /* the followers' hook (engine_follow.c), or NULL */
  void *follow_ctx;
  sim_time passed; /* the last time the followers were brought to; with no
                      hook SIM_TIME_MAX, so that the run loop's test of
                      each event's time against it never calls one */
  sim_error err;
};

/* Calls the followers' hook at t (engine.c; engine_follow.c): counts what they ran,
 * and on success t is passed. SIM_OK or the hook's code, with the
 * engine's message set. */
int engine__follow(sim_engine *e, sim_time t, bool through);

/* evq_compact's filter: only live entries stay (engine.c). */
bool engine__entry_live(void *ctx, const evq_entry *q);

/* Gives the queued entries and the sources' pending events the seqs
 * 0 .. n-1 in their order (engine.c). SIM_OK or SIM_ENOMEM. */
int engine__renumber(sim_engine *e);

/* Whether e->seq can be taken, renumbering first if not (the queue keeps
 * seqs in 32 bits). SIM_OK or SIM_ENOMEM. */
static inline int engine__seq_ready(sim_engine *e) {
  return e->seq < e->seqs ? SIM_OK : engine__renumber(e);
}

/* Takes a pool slot off the free list into *idx (engine.c). */
int engine__slot_take(sim_engine *e, uint32_t *idx);

/* Whether the key (t, seq) comes before (t2, seq2). */
static inline bool engine__key_before(sim_time t, uint64_t seq, sim_time t2,
                                      uint64_t seq2) {
  return t < t2 || (t == t2 && seq < seq2);
}

/* Finds the pending source first in (time, seq) and caches its key. A
 * few sources (an inference service's arrivals each): a scan. One with
 * none pending has the key (SIM_TIME_MAX, SEQ_FREE), before none. */
static inline void engine__source_first(sim_engine *e) {
  const ev_source *src = e->src; /* in registers: the loop stores none */
  uint32_t n = e->nsrc, first = NO_SOURCE;
  sim_time t = SIM_TIME_MAX;
  uint64_t seq = SEQ_FREE;
  for (uint32_t i = 0; i < n; i++) {
    const ev_source *s = &src[i];
    if (engine__key_before(s->time, s->seq, t, seq)) {
      first = i;
      t = s->time;
      seq = s->seq;
    }
  }
  e->src_first = first;
  e->src_time = t;
  e->src_seq = seq;
}

/* Whether a source's event is pending at or before until. */
static inline bool engine__source_due(const sim_engine *e, sim_time until) {
  return e->src_first != NO_SOURCE && e->src_time <= until;
}

#endif
