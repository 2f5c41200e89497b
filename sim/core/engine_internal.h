/* engine_internal.h - what engine.c and engine_source.c share: the
 * engine's state (the event pool, the handler registry, the event
 * sources), the seq's renumbering, and the steps of the sources that the
 * run loop takes in line. Engine layer; no model sees this. */
#ifndef SIM_ENGINE_INTERNAL_H
#define SIM_ENGINE_INTERNAL_H

#include "alloc.h"
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
  uint32_t slot;  /* a pool slot of its own, for renumbering (SEQ_SOURCE);
                     a group's head: NO_SLOT (its members have theirs) */
  uint32_t group; /* a group's head: its group (engine_group.c); else
                     NO_GROUP */
} ev_source;

/* The index of no group: a plain source's group. */
#define NO_GROUP UINT32_MAX

/* A member of a source group: its pending event's key (time, seq) and
 * the time it is due, later than time when moved later (as a moved
 * queue entry's when.due); none pending: (SIM_TIME_MAX, SEQ_FREE). */
typedef struct ev_member {
  sim_time time;
  uint64_t seq;
  sim_time due;
  uint64_t b; /* payload; a is the member's index */
} ev_member;

/* A source group (sim_engine_group): n members in a tournament tree whose
 * root, the member first in (time, seq), is the key of the group's head
 * source in e->src, so that the run loop and the sources' first see a
 * group as one source. node[leaves + i] = i (n for the padding past n,
 * whose member m[n] is never pending); node[k] = the one first of
 * node[2k] and node[2k + 1]; node[1] the root. */
typedef struct ev_group {
  ev_member *m;   /* n + 1 */
  uint32_t *node; /* 2 * leaves */
  uint32_t *slot; /* a pool slot a member, for renumbering (SEQ_SOURCE) */
  uint32_t n, leaves, head;
  uint32_t running; /* the member whose event runs, its key still in the
                       tree (engine_group.c); else NO_MEMBER */
} ev_group;

/* The index of no member. */
#define NO_MEMBER UINT32_MAX

/* A member's key and due time with no event pending. */
#define ENGINE_NO_MEMBER_EVENT                                                 \
  ((ev_member){.time = SIM_TIME_MAX, .seq = SEQ_FREE, .due = SIM_TIME_MAX})

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
  ev_group *grp; /* the source groups (engine_group.c) */
  uint32_t ngrp, cap_grp;
  sim_error err;
};

/* Gives the queued entries and the sources' pending events the seqs
 * 0 .. n-1 in their order (engine.c). SIM_OK or SIM_ENOMEM. */
int engine__renumber(sim_engine *e);

/* Whether e->seq can be taken, renumbering first if not (the queue keeps
 * seqs in 32 bits). SIM_OK or SIM_ENOMEM. */
static inline int engine__seq_ready(sim_engine *e) {
  return e->seq < e->seqs ? SIM_OK : engine__renumber(e);
}

/* engine_source.c's: why a source or a group is refused (SIM_OK: it is
 * not), and a source added, of group (NO_GROUP: a plain one). */
int engine__source_check(sim_engine *e, uint32_t kind);
int engine__source_add(sim_engine *e, uint32_t kind, uint32_t group,
                       uint32_t *source);

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

/* Source i's key was set: the cached first found again if it was i,
 * else i is first if it comes before it. One compare where another
 * source is first (an arrival's next, set after run_source found it). */
static inline void engine__source_keyed(sim_engine *e, uint32_t i) {
  const ev_source *s = &e->src[i];
  if (e->src_first == i)
    engine__source_first(e);
  else if (engine__key_before(s->time, s->seq, e->src_time, e->src_seq)) {
    e->src_first = i;
    e->src_time = s->time;
    e->src_seq = s->seq;
  }
}

/* Whether a source's event is pending at or before until. */
static inline bool engine__source_due(const sim_engine *e, sim_time until) {
  return e->src_first != NO_SOURCE && e->src_time <= until;
}

/* ---- Source groups (engine_group.c), the steps engine.c takes too ---- */

/* Member i's key changed: the path from its leaf up is made right again,
 * carrying the winner's key up. A node whose winner is the one it was,
 * and not i, has the same key as before, and so has everything above
 * it: the walk stops there. True if it reached the root (its key may
 * have changed). */
static inline bool engine__group_fix(ev_group *g, uint32_t i) {
  const ev_member *m = g->m;
  uint32_t *node = g->node, w = i;
  sim_time wt = m[i].time;
  uint64_t ws = m[i].seq;
  for (uint32_t k = g->leaves + i; k > 1; k >>= 1) {
    uint32_t sib = node[k ^ 1];
    if (engine__key_before(m[sib].time, m[sib].seq, wt, ws)) {
      w = sib;
      wt = m[sib].time;
      ws = m[sib].seq;
    }
    if (node[k >> 1] == w && w != i)
      return false;
    node[k >> 1] = w;
  }
  return true;
}

/* Member i of g changed its key: the tree, then the head's key and the
 * sources' first. */
static inline void engine__member_keyed(sim_engine *e, ev_group *g,
                                        uint32_t i) {
  if (!engine__group_fix(g, i))
    return;
  const ev_member *root = &g->m[g->node[1]];
  ev_source *h = &e->src[g->head];
  h->time = root->time;
  h->seq = root->seq;
  engine__source_keyed(e, g->head);
}

/* Member i of g left with none pending (the live count is the caller's). */
static inline void engine__member_free(sim_engine *e, ev_group *g,
                                       uint32_t i) {
  g->m[i] = ENGINE_NO_MEMBER_EVENT;
  engine__member_keyed(e, g, i);
}

/* The head of group gi comes up first of all (run_source): its root
 * member moved later is queued at its due time under a fresh seq, as
 * run_entry requeues a moved entry, not run nor counted, and false
 * returned (*rc SIM_OK, or SIM_ENOMEM renumbering: then it is dropped);
 * else it is no longer pending, *ev is its event and true returned, its
 * key left in the tree until engine__group_done. */
static inline bool engine__group_take(sim_engine *e, uint32_t gi,
                                      sim_event *ev, int *rc) {
  ev_group *g = &e->grp[gi];
  uint32_t r = g->node[1];
  ev_member *m = &g->m[r];
  *rc = SIM_OK;
  if (m->due > m->time) {
    if (engine__seq_ready(e) != SIM_OK) {
      engine__member_free(e, g, r);
      e->live--;
      *rc = sim_engine_fail(e, SIM_ENOMEM, "run: out of memory renumbering");
      return false;
    }
    m->time = m->due;
    m->seq = e->seq++;
    engine__member_keyed(e, g, r);
    return false;
  }
  *ev = (sim_event){
      .time = m->time, .kind = e->src[g->head].kind, .a = r, .b = m->b};
  g->running = r;
  e->live--;
  return true;
}

/* After the handler of g's running member: its key out of the tree
 * unless the handler set it again. */
static inline void engine__group_done(sim_engine *e, ev_group *g) {
  uint32_t r = g->running;
  if (r == NO_MEMBER)
    return;
  g->running = NO_MEMBER;
  engine__member_free(e, g, r);
}

/* The groups' part of renumbering: each member with a key in the tree
 * queued as a live entry of its slot (SIM_ENOMEM: some may be), then the
 * new seqs taken back, the entries left as tombstones. The new seqs keep
 * the members' order, so the trees stand; the heads take their roots'
 * new seqs (the caller finds the sources' first). */
static inline int engine__groups_queue(sim_engine *e) {
  for (uint32_t gi = 0; gi < e->ngrp; gi++) {
    const ev_group *g = &e->grp[gi];
    for (uint32_t i = 0; i < g->n && g->head != NO_SOURCE; i++) {
      const ev_member *m = &g->m[i];
      if (m->seq == SEQ_FREE)
        continue;
      if (evq_push_at(e->q, m->time, m->seq, g->slot[i]) != SIM_OK)
        return SIM_ENOMEM;
      e->slots[g->slot[i]].seq = m->seq;
    }
  }
  return SIM_OK;
}

static inline void engine__groups_unqueue(sim_engine *e) {
  for (uint32_t gi = 0; gi < e->ngrp; gi++) {
    ev_group *g = &e->grp[gi];
    if (g->head == NO_SOURCE)
      continue;
    for (uint32_t i = 0; i < g->n; i++) {
      ev_slot *slot = &e->slots[g->slot[i]];
      if (slot->seq == SEQ_SOURCE)
        continue;
      g->m[i].seq = slot->seq;
      slot->seq = SEQ_SOURCE;
      e->tombs++;
    }
    e->src[g->head].seq = g->m[g->node[1]].seq;
  }
}

/* Frees group g's arrays. */
static inline void engine__group_free(const sim_allocator *a, ev_group *g) {
  sim_free(a, g->m);
  sim_free(a, g->node);
  sim_free(a, g->slot);
}

/* Frees the groups (sim_engine_destroy). */
static inline void engine__groups_free(sim_engine *e) {
  for (uint32_t gi = 0; gi < e->ngrp; gi++)
    engine__group_free(&e->alloc, &e->grp[gi]);
  sim_free(&e->alloc, e->grp);
}

#endif
