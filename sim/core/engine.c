/* engine.c - the discrete-event engine: clock, handler registry, event
 * pool, run loop, O(1) cancellation and periodic events (fluid progress:
 * engine_fluid.c; event sources, which the run loop takes with the
 * queue: engine_source.c; the seqs' renumbering: engine_renumber.c;
 * followers: engine_follow.c; the state all see: engine_internal.h).
 * Engine layer: it sees queue.h, alloc.h and err.h, and no model.
 *
 * Design. Every pending event owns one slot of the pool (an array that
 * grows by doubling and never shrinks; free slots form a LIFO list through
 * their payload word a). The queue holds (time, seq, slot) entries only; the
 * slot keeps the handler kind, the payload, a generation and the seq of the
 * one queue entry that is live for it (the period of a periodic event sits
 * in a parallel array, as few events have one). Invariants:
 * - A slot is free iff its seq is SEQ_FREE; a handle (slot + 1, gen) names
 *   a pending event iff that slot is in use with that generation.
 * - A queue entry is live iff slots[entry.slot].seq == entry.seq; any other
 *   entry is a tombstone. Seqs are not reused until a renumbering, which
 *   drops the tombstones first, so no tombstone ever matches its slot.
 * - live + tombstones == evq_size(q).
 * - A live entry whose slot has the moved bit stands for an event moved
 *   later (sim_engine_move): when it comes up it is queued again at
 *   when[slot].due under a fresh seq, not run.
 * - when[slot] is kept (written at every queueing) only for slots with the
 *   movable bit, events of a kind sim_engine_movable named: a write to a
 *   second array on every push cost the hold model with a cancel per event
 *   a quarter of its speed at 1e5 pending (4.1-4.6 -> 3.1 M events/s).
 * - The queue keeps the heap position of a movable slot's entry only
 *   (pushed with EVQ_TRACKED), so that a move earlier walks that entry
 *   up in place (evq_decrease) under the fresh seq a push would give it:
 *   the same key, so the same order, and no tombstone to pop (bench-10k
 *   at its request-level peak: 709 moves earlier a period, 703 tombstone
 *   pops before). Where the queue does not know the place (its radix
 *   heap holds the entries) a move earlier leaves a tombstone as a
 *   cancel does.
 * A generation wraps after 2^32 reuses of one slot, so a handle kept that
 * long could name a newer event; no run reuses a slot that often while
 * holding on to a handle of it.
 * Cancelling frees the slot at once and bumps its generation, so the
 * caller's handle and every copy of it go stale in O(1); the queue entry
 * is dropped when it reaches the top (Redis ae.c does the same with
 * AE_DELETED_EVENT_ID). Why not remove it from the heap at once: that
 * needs the entry's heap index kept for every slot and updated on every
 * move, which slows every push and pop to speed up cancels (movable
 * slots' positions are kept, above, for their moves). Tombstones instead
 * cost memory, so the queue is compacted when they outnumber live events
 * (and exceed 1024): the O(n) pass is paid for by at least n/2 cancels. */
#include "engine.h"

#include <assert.h>
#include <stdarg.h>

#include "engine_internal.h"
#include "vec.h"

/* A hint to load an address into the cache; no effect where unknown.
 * COLD keeps a rare path (the pool's growth) out of the function that
 * calls it, so the common path saves fewer registers; ALWAYS_INLINE puts
 * the scheduling's steps in line in its two public entries. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#define NOINLINE __attribute__((noinline))
#define COLD __attribute__((noinline, cold))
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define PREFETCH(p) ((void)(p))
#define NOINLINE
#define COLD
#define ALWAYS_INLINE inline
#endif

enum {
  COMPACT_MIN = 1024, /* below this many tombstones, never compact */
  SLOTS_MIN = 64,     /* first size of the pool */
  SLOTS_FAR = 32768,  /* from this many (1 MB) the run loop prefetches */
  HANDLERS_MIN = 8,   /* first size of the registry */
};

sim_engine *sim_engine_create(const sim_allocator *alloc) {
  if (alloc == NULL)
    alloc = sim_allocator_default();
  sim_engine *e = sim_calloc(alloc, 1, sizeof *e);
  if (e == NULL)
    return NULL;
  e->alloc = *alloc;
  e->free_head = NO_SLOT;
  e->seqs = EVQ_SEQS;
  e->src_first = NO_SOURCE; /* and its key after every pending one */
  e->src_time = SIM_TIME_MAX;
  e->src_seq = SEQ_FREE;
  e->passed = SIM_TIME_MAX; /* no followers */
  e->q = evq_create(alloc);
  if (e->q == NULL) {
    sim_free(alloc, e);
    return NULL;
  }
  return e;
}

void sim_engine_destroy(sim_engine *e) {
  if (e == NULL)
    return;
  sim_allocator alloc = e->alloc;
  evq_destroy(e->q);
  sim_free(&alloc, e->slots);
  sim_free(&alloc, e->period);
  sim_free(&alloc, e->when);
  sim_free(&alloc, e->handlers);
  sim_free(&alloc, e->src);
  sim_free(&alloc, e);
}

/* ---- Errors ---------------------------------------------------------- */

int sim_engine_fail(sim_engine *e, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sim_error_vset(&e->err, code, fmt, ap);
  va_end(ap);
  e->nfail++;
  return code;
}

const char *sim_engine_errmsg(const sim_engine *e) { return e->err.msg; }

const sim_allocator *sim_engine_allocator(const sim_engine *e) {
  return &e->alloc;
}

/* ---- Registry -------------------------------------------------------- */

/* Doubles the handler array; SIM_ENOMEM leaves it as it was. */
static int handlers_grow(sim_engine *e) {
  size_t cap = e->cap_handlers;
  size_t need = cap == 0 ? HANDLERS_MIN : cap + 1;
  if (sim_vec_reserve(&e->alloc, &e->handlers, &cap, need,
                      sizeof *e->handlers) != SIM_OK)
    return SIM_ENOMEM;
  /* Registering stops at KIND_LIMIT, so room past it is never used. */
  e->cap_handlers = cap > KIND_LIMIT ? KIND_LIMIT : (uint32_t)cap;
  return SIM_OK;
}

int sim_engine_register(sim_engine *e, const char *name, sim_handle_fn fn,
                        void *ctx, uint32_t *kind) {
  if (fn == NULL || name == NULL || kind == NULL)
    return sim_engine_fail(e, SIM_EINVAL, "register: a NULL argument");
  if (e->nhandlers == KIND_LIMIT) /* the slot's kind has 29 bits */
    return sim_engine_fail(e, SIM_ERANGE, "register %s: too many", name);
  if (e->nhandlers == e->cap_handlers && handlers_grow(e) != SIM_OK)
    return sim_engine_fail(e, SIM_ENOMEM, "register %s: out of memory", name);
  e->handlers[e->nhandlers] = (ev_handler){name, fn, ctx, false};
  *kind = e->nhandlers++;
  return SIM_OK;
}

int sim_engine_movable(sim_engine *e, uint32_t kind) {
  if (kind >= e->nhandlers)
    return sim_engine_fail(e, SIM_EINVAL, "no handler of kind %lu",
                           (unsigned long)kind);
  e->handlers[kind].movable = true;
  return SIM_OK;
}

/* ---- Event pool ------------------------------------------------------ */

/* Doubles the pool and threads the new slots onto the free list so that
 * the lowest index comes out first. SIM_ENOMEM leaves the pool in use as
 * it was (one array may have grown already, which the next attempt
 * reuses). */
COLD static int pool_grow(sim_engine *e) {
  uint32_t n = e->nslots;
  if (n >= SLOTS_MAX)
    return SIM_ENOMEM;
  size_t need = n == 0 ? SLOTS_MIN : (size_t)n + 1;
  size_t pcap = n, wcap = n, scap = n;
  if (sim_vec_reserve(&e->alloc, &e->period, &pcap, need, sizeof *e->period) !=
          SIM_OK ||
      sim_vec_reserve(&e->alloc, &e->when, &wcap, need, sizeof *e->when) !=
          SIM_OK ||
      sim_vec_reserve(&e->alloc, &e->slots, &scap, need, sizeof *e->slots) !=
          SIM_OK)
    return SIM_ENOMEM;
  size_t got = scap < pcap ? scap : pcap;
  got = got < wcap ? got : wcap;
  uint32_t cap = got < SLOTS_MAX ? (uint32_t)got : SLOTS_MAX;
  for (uint32_t i = cap; i-- > n;) {
    e->slots[i] = (ev_slot){.a = e->free_head, .seq = SEQ_FREE};
    e->free_head = i;
  }
  e->nslots = cap;
  return SIM_OK;
}

/* Takes a slot off the free list into *idx, growing the pool if needed. */
static int slot_take(sim_engine *e, uint32_t *idx) {
  if (e->free_head == NO_SLOT && pool_grow(e) != SIM_OK)
    return SIM_ENOMEM;
  *idx = e->free_head;
  e->free_head = (uint32_t)e->slots[*idx].a;
  return SIM_OK;
}

int engine__slot_take(sim_engine *e, uint32_t *idx) {
  return slot_take(e, idx);
}

/* Returns a slot to the free list. bump: the slot was handed out, so its
 * handles must go stale. */
static void slot_release(sim_engine *e, uint32_t idx, bool bump) {
  ev_slot *s = &e->slots[idx];
  s->seq = SEQ_FREE;
  s->gen += bump;
  s->a = e->free_head;
  e->free_head = idx;
}

/* The slot named by h if it holds a pending event, else NULL. */
static ev_slot *slot_of(const sim_engine *e, sim_handle h) {
  uint32_t idx = h.slot - 1; /* slot 0 wraps to NO_SLOT */
  if (idx >= e->nslots)
    return NULL;
  ev_slot *s = &e->slots[idx];
  return s->gen == h.gen && s->seq != SEQ_FREE ? s : NULL;
}

/* The queue's slot of slot idx: a movable one's entry tracked, so that
 * a move earlier can walk it up in place (evq_decrease). */
static inline uint32_t queue_slot(bool movable, uint32_t idx) {
  return movable ? idx | EVQ_TRACKED : idx;
}

/* evq_compact's filter: only live entries stay. */
bool engine__entry_live(void *ctx, const evq_entry *q) {
  const sim_engine *e = ctx;
  return e->slots[q->slot].seq == q->seq;
}

static ALWAYS_INLINE int seq_ready(sim_engine *e) { /* e->seq fits */
  return engine__seq_ready(e);
}

/* Queues slot idx at time at under a fresh seq. movable is the slot's
 * bit, passed by the caller, which knows it (a moved entry's requeue
 * needs no read of the slot for it). SIM_OK or SIM_ENOMEM. */
static ALWAYS_INLINE int enqueue(sim_engine *e, uint32_t idx, sim_time at,
                                 bool movable) {
  ev_slot *s = &e->slots[idx];
  if (seq_ready(e) != SIM_OK ||
      evq_push_at(e->q, at, e->seq, queue_slot(movable, idx)) != SIM_OK)
    return SIM_ENOMEM;
  s->seq = e->seq++;
  s->moved = 0;
  if (movable) /* else untouched: a cache miss saved */
    e->when[idx] = (ev_when){at, at};
  return SIM_OK;
}

/* ---- Scheduling ------------------------------------------------------ */

/* The common path of schedule and every; arguments already checked. */
static ALWAYS_INLINE int add_event(sim_engine *e, sim_time at, sim_time period,
                                   uint32_t kind, uint64_t a, uint64_t b,
                                   sim_handle *handle) {
  uint32_t idx;
  if (slot_take(e, &idx) != SIM_OK)
    return sim_engine_fail(e, SIM_ENOMEM, "scheduling: out of memory");
  ev_slot *s = &e->slots[idx];
  s->a = a;
  s->b = b;
  s->kind = kind;
  s->periodic = period > 0;
  bool movable = e->handlers[kind].movable;
  s->movable = movable;
  if (period > 0) /* else untouched: a cache miss saved */
    e->period[idx] = period;
  if (enqueue(e, idx, at, movable) != SIM_OK) {
    slot_release(e, idx, false); /* no handle was given out */
    return sim_engine_fail(e, SIM_ENOMEM, "scheduling: out of memory");
  }
  e->live++;
  if (handle != NULL)
    *handle = (sim_handle){.slot = idx + 1, .gen = s->gen};
  return SIM_OK;
}

/* Checks what schedule and every share; SIM_OK or SIM_EINVAL. */
static int check_event(sim_engine *e, sim_time at, uint32_t kind) {
  if (at < e->now)
    return sim_engine_fail(e, SIM_EINVAL,
                           "event at %lld ns is before now (%lld ns)",
                           (long long)at, (long long)e->now);
  if (kind >= e->nhandlers)
    return sim_engine_fail(e, SIM_EINVAL, "no handler of kind %lu",
                           (unsigned long)kind);
  return SIM_OK;
}

int sim_engine_schedule(sim_engine *e, sim_time at, uint32_t kind, uint64_t a,
                        uint64_t b, sim_handle *handle) {
  int rc = check_event(e, at, kind);
  if (rc != SIM_OK)
    return rc;
  return add_event(e, at, 0, kind, a, b, handle);
}

int sim_engine_every(sim_engine *e, sim_time first, sim_time period,
                     uint32_t kind, uint64_t a, uint64_t b,
                     sim_handle *handle) {
  if (period <= 0)
    return sim_engine_fail(e, SIM_EINVAL, "period %lld ns is not positive",
                           (long long)period);
  int rc = check_event(e, first, kind);
  if (rc != SIM_OK)
    return rc;
  return add_event(e, first, period, kind, a, b, handle);
}

/* Counts one more stale entry, compacting the queue when they outnumber
 * the live ones. */
static void add_tomb(sim_engine *e) {
  e->tombs++;
  if (e->tombs > COMPACT_MIN && e->tombs > e->live) {
    evq_compact(e->q, engine__entry_live, e);
    e->tombs = 0;
  }
}

bool sim_engine_cancel(sim_engine *e, sim_handle *handle) {
  if (handle == NULL)
    return false;
  ev_slot *s = slot_of(e, *handle);
  uint32_t idx = handle->slot - 1;
  *handle = (sim_handle){0, 0};
  if (s == NULL)
    return false;
  if (s->movable) /* its entry, a tombstone now, no longer the slot's */
    evq_untrack(e->q, idx, s->seq);
  slot_release(e, idx, true);
  e->live--;
  add_tomb(e);
  return true;
}

/* Why move refuses: no pending one-shot event, not of a movable kind, or
 * before now. Out of line, as move_earlier. */
COLD static int move_refused(sim_engine *e, const ev_slot *s, sim_time at) {
  if (s == NULL || s->periodic)
    return sim_engine_fail(e, SIM_EINVAL, "move: no pending one-shot event");
  if (!s->movable)
    return sim_engine_fail(e, SIM_EINVAL,
                           "move: %s events are not movable (sim_engine_movable)",
                           e->handlers[s->kind].name);
  return sim_engine_fail(e, SIM_EINVAL, "move: %lld ns is before now (%lld ns)",
                         (long long)at, (long long)e->now);
}

/* Slot idx's event (s), queued at w->queued, moved to at before it. Out
 * of line: a move later (three in four at bench-10k's request-level
 * peak) then saves no registers (sim_engine_move 58 -> 32 instructions
 * a call, docs/performance-log.md, twenty-third session). */
NOINLINE static int move_earlier(sim_engine *e, ev_slot *s, ev_when *w,
                                 uint32_t idx, sim_time at) {
  /* The entry walks up in place under the fresh seq a push would give it,
   * so the same key and the same order as below, without a tombstone to
   * pop. */
  if (seq_ready(e) == SIM_OK && evq_decrease(e->q, idx, s->seq, at, e->seq)) {
    s->seq = e->seq++;
    s->moved = 0;
    *w = (ev_when){at, at};
    return SIM_OK;
  }
  /* Where the queue does not know its place (the radix heap holds the
   * entries): that entry becomes a tombstone (its seq no longer matches)
   * and a new one is queued, as a cancel and a schedule would, but under
   * the same slot, so the handle stays. */
  if (enqueue(e, idx, at, true) != SIM_OK)
    return sim_engine_fail(e, SIM_ENOMEM, "move: out of memory");
  add_tomb(e);
  return SIM_OK;
}

/* Why a move and not a cancel and a schedule: a model that moves its one
 * pending event every control period (an inference replica whose clock
 * the power policy sets) left a tombstone and pushed an entry each time,
 * 2,164 a second in bench-10k. Moved later, the entry stays and is
 * requeued, not run, when it comes up: one push however often it moved. */
int sim_engine_move(sim_engine *e, sim_handle handle, sim_time at) {
  ev_slot *s = slot_of(e, handle);
  if (s == NULL || s->periodic || !s->movable || at < e->now)
    return move_refused(e, s, at);
  uint32_t idx = handle.slot - 1;
  ev_when *w = &e->when[idx];
  if (at < w->queued)
    return move_earlier(e, s, w, idx, at);
  w->due = at;
  s->moved = at > w->queued;
  return SIM_OK;
}

bool sim_engine_pending(const sim_engine *e, sim_handle handle) {
  return slot_of(e, handle) != NULL;
}

/* ---- Run loop -------------------------------------------------------- */

/* A popped slot queued again at at (a periodic event's next tick, a moved
 * event's due time): only a renumbering can fail here (renumber), and
 * then the event is dropped and the run fails. */
static int requeue(sim_engine *e, uint32_t idx, sim_time at, bool movable) {
  if (enqueue(e, idx, at, movable) == SIM_OK)
    return SIM_OK;
  slot_release(e, idx, true);
  e->live--;
  return sim_engine_fail(e, SIM_ENOMEM, "run: out of memory renumbering");
}

/* Puts the slot of the event just popped back in the queue for its next
 * tick, or frees it. */
static int retire(sim_engine *e, uint32_t idx, sim_time t) {
  sim_time period = e->slots[idx].periodic ? e->period[idx] : 0;
  if (period > 0 && t <= SIM_TIME_MAX - period)
    return requeue(e, idx, t + period, e->slots[idx].movable);
  slot_release(e, idx, true);
  e->live--;
  return SIM_OK;
}

/* Counts the event *ev, the clock at its time, run and calls its
 * handler; returns the handler's status, a message set if it failed
 * without one. */
static ALWAYS_INLINE int call_handler(sim_engine *e, const sim_event *ev) {
  e->nrun++;
  /* Copied out: the handler may register more and move the array. */
  ev_handler h = e->handlers[ev->kind];
  uint64_t nfail = e->nfail;
  int rc = h.fn(e, h.ctx, ev);
  if (rc != SIM_OK && e->nfail == nfail)
    sim_engine_fail(e, rc, "handler %s failed at %lld ns: %s", h.name,
                    (long long)ev->time, sim_strerror(rc));
  return rc;
}

/* Runs the live event q: sets the clock, retires the slot (so that a
 * periodic event's handle names its next tick while its handler runs,
 * and a one-shot's slot can be reused by what the handler schedules),
 * then calls the handler. Returns the handler's status. */
static ALWAYS_INLINE int dispatch(sim_engine *e, const evq_entry *q) {
  const ev_slot *s = &e->slots[q->slot];
  sim_event ev = {.time = q->time, .kind = s->kind, .a = s->a, .b = s->b};
  e->now = q->time;
  if (retire(e, q->slot, q->time) != SIM_OK)
    return SIM_ENOMEM;
  return call_handler(e, &ev);
}

/* Entry *q, just popped, back unrun: its (time, seq) keep its place,
 * and a push right after a pop never allocates (queue.c). */
static void put_back(sim_engine *e, const evq_entry *q) {
  const ev_slot *s = &e->slots[q->slot];
  bool live = s->seq == q->seq; /* a tombstone stays untracked */
  int rc = evq_push_at(e->q, q->time, q->seq,
                       queue_slot(live && s->movable, q->slot));
  assert(rc == SIM_OK);
  (void)rc;
}

/* Pops the next entry into *q when it is due by until; else (or when the
 * queue is empty) false, the entry put back: the same (time, seq), so the
 * same order, and a push right after a pop never allocates (queue.c).
 * One call a pop: a peek first (evq_first) cost a call and a copy of the
 * entry for every event, and the put-back comes once a run. */
static bool pop_due(sim_engine *e, sim_time until, evq_entry *q) {
  if (!evq_pop(e->q, q))
    return false;
  if (q->time <= until)
    return true;
  put_back(e, q);
  return false;
}

/* The popped entry q: a tombstone dropped, an event moved later queued
 * again at its due time, else run. SIM_OK, or what stops the run. */
static ALWAYS_INLINE int run_entry(sim_engine *e, const evq_entry *q) {
  if (e->slots[q->slot].seq != q->seq) {
    e->tombs--;
    return SIM_OK;
  }
  if (e->slots[q->slot].moved) /* requeued at its time, not run */
    return requeue(e, q->slot, e->when[q->slot].due, true) != SIM_OK
               ? SIM_ENOMEM
               : SIM_OK;
  return dispatch(e, q);
}

/* The hook called (engine_follow.c says why): what the followers ran
 * counted, whatever happened; t passed if they got there. */
NOINLINE int engine__follow(sim_engine *e, sim_time t, bool through) {
  uint64_t ran = 0, nfail = e->nfail;
  int rc = e->follow(e->follow_ctx, t, through, &ran);
  e->nrun = ran > UINT64_MAX - e->nrun ? UINT64_MAX : e->nrun + ran;
  if (rc == SIM_OK) {
    e->passed = t;
    return SIM_OK;
  }
  if (e->nfail == nfail) /* a hook that failed without a message */
    sim_engine_fail(e, rc, "followers failed at %lld ns: %s", (long long)t,
                    sim_strerror(rc));
  return rc;
}

/* Brings the followers up to t before the leader's first entry at t is
 * run or dropped: one compare an event, as with no hook passed is
 * SIM_TIME_MAX. */
static ALWAYS_INLINE int follow_to(sim_engine *e, sim_time t) {
  return t > e->passed ? engine__follow(e, t, false) : SIM_OK;
}

/* A run loop's status when it ends: SIM_ECANCELED if stopped. */
static int stopped(sim_engine *e) {
  if (e->stop)
    return sim_engine_fail(e, SIM_ECANCELED, "run: stopped at %lld ns",
                           (long long)e->now);
  return SIM_OK;
}

/* Pops and runs events up to until, while fewer than limit have run in
 * all (e->nrun). */
static int run_loop(sim_engine *e, sim_time until, uint64_t limit) {
  evq_entry q, next;
  while (!e->stop && e->nrun < limit && pop_due(e, until, &q)) {
    /* The slot is a likely cache miss (pool slots are touched in time
     * order, not address order): asked for before the watch's read. */
    PREFETCH(&e->slots[q.slot]);
    /* Read after every event: a signal handler sets it at any time, and
     * one event is microseconds (a control tick of 2e6 GPUs, 40 ms). The
     * entry goes back unrun. */
    if (e->watch != NULL && *e->watch != 0) {
      put_back(e, &q);
      e->stop = true;
      break;
    }
    int rc = follow_to(e, q.time);
    if (rc != SIM_OK) { /* the entry back unrun, as for a stop */
      put_back(e, &q);
      return rc;
    }
    /* A pool larger than the L2 cache misses further, and a radix heap's
     * pop is short: fetch the next event's slot too, while this one runs
     * (hold model, 1e5 pending: 7.6 rather than 7.1 M events/s). A small
     * pool stays cached, and there the extra peek cost 0.7% of the
     * reference day. */
    if (e->nslots > SLOTS_FAR && evq_peek(e->q, &next))
      PREFETCH(&e->slots[next.slot]);
    rc = run_entry(e, &q);
    if (rc != SIM_OK)
      return rc;
  }
  return stopped(e);
}

/* Source i's pending event, the next of all, run: no longer pending, and
 * the next source found before its handler sets its successor. */
static int run_source(sim_engine *e, uint32_t i) {
  ev_source *s = &e->src[i];
  sim_event ev = {.time = s->time, .kind = s->kind, .a = s->a, .b = s->b};
  s->seq = SEQ_FREE;
  s->time = SIM_TIME_MAX;
  e->live--;
  engine__source_first(e);
  e->now = ev.time;
  return call_handler(e, &ev);
}

/* run_loop where sources are registered: each turn takes whichever is
 * first in (time, seq), the queue's first entry or the first source's
 * event, so that a source's events cost no push and no pop (an inference
 * arrival's, about 200 instructions, docs/performance-log.md, twenty-sixth
 * session). Apart from that loop so that a run without sources pays
 * nothing for them. The watch is read before the turn's pick, where
 * run_loop reads it after its pop and puts the entry back: the same. */
static int run_loop_sources(sim_engine *e, sim_time until, uint64_t limit) {
  evq_entry q, next;
  while (!e->stop && e->nrun < limit) {
    if (e->watch != NULL && *e->watch != 0) {
      e->stop = true;
      break;
    }
    if (engine__source_due(e, until)) {
      if (!evq_pop_before(e->q, e->src_time, e->src_seq, &q)) {
        int rc = follow_to(e, e->src_time);
        if (rc == SIM_OK)
          rc = run_source(e, e->src_first);
        if (rc != SIM_OK)
          return rc;
        continue;
      }
    } else if (!pop_due(e, until, &q))
      break;
    int rc = follow_to(e, q.time);
    if (rc != SIM_OK) {
      put_back(e, &q);
      return rc;
    }
    PREFETCH(&e->slots[q.slot]);
    /* The next entry's slot and time moved to, asked for while this
     * event's handler runs: by the next turn both had left the caches
     * (its handlers touch much between two pops), and its test of the
     * slot waited on the load (a quarter of the loop's samples). A
     * handler that pushes an earlier event wastes the asks. */
    if (evq_peek(e->q, &next)) {
      PREFETCH(&e->slots[next.slot]);
      PREFETCH(&e->when[next.slot]);
    }
    rc = run_entry(e, &q);
    if (rc != SIM_OK)
      return rc;
  }
  return stopped(e);
}

int sim_engine_run_some(sim_engine *e, sim_time until, uint64_t max_events,
                        bool *done) {
  *done = false;
  if (e->running)
    return sim_engine_fail(e, SIM_ESTATE, "run: called from a handler");
  if (until < e->now)
    return sim_engine_fail(e, SIM_EINVAL,
                           "run: until %lld ns is before now (%lld ns)",
                           (long long)until, (long long)e->now);
  uint64_t limit = max_events > UINT64_MAX - e->nrun ? UINT64_MAX
                                                     : e->nrun + max_events;
  e->running = true;
  /* A run with sources is the request level's: between two pushes its
   * handlers touch enough to evict the heap from the first-level cache,
   * so that its walks down pay for asking a level ahead (queue.c; the
   * hold model's heap, cached, would only pay the asks). */
  evq_prefetch(e->q, e->nsrc > 0);
  int rc = e->nsrc > 0 ? run_loop_sources(e, until, limit)
                       : run_loop(e, until, limit);
  evq_entry q;
  /* Out of budget with an event due by until left (a tombstone on top
   * counts: the next call drops it and ends). */
  bool more = e->nrun >= limit && ((evq_peek(e->q, &q) && q.time <= until) ||
                                    engine__source_due(e, until));
  /* Done: the followers come through until too (their events at until
   * after the leader's). */
  if (rc == SIM_OK && !more && e->follow != NULL)
    rc = engine__follow(e, until, true);
  e->running = false;
  /* A stop is used up by the run it stopped (or by a failed one), so the
   * next run continues. A stop asked for between runs stops the next one
   * before its first event. */
  e->stop = false;
  if (rc == SIM_OK && !more) {
    e->now = until;
    *done = true;
  }
  return rc;
}

int sim_engine_run(sim_engine *e, sim_time until) {
  bool done;
  return sim_engine_run_some(e, until, UINT64_MAX, &done);
}

void sim_engine_stop(sim_engine *e) { e->stop = true; }

void sim_engine_watch(sim_engine *e, const volatile sig_atomic_t *flag) {
  e->watch = flag;
}

sim_time sim_engine_now(const sim_engine *e) { return e->now; }

uint64_t sim_engine_events_run(const sim_engine *e) { return e->nrun; }

size_t sim_engine_events_pending(const sim_engine *e) { return e->live; }

void sim_engine_renumber_at(sim_engine *e, uint64_t seqs) {
  e->seqs = seqs < EVQ_SEQS ? seqs : EVQ_SEQS;
}
