/* engine_group.c - source groups (engine.h, sim_engine_group): many
 * sources of one kind, each with at most one pending event that can be
 * moved as a queued one (sim_engine_move), kept as one source of the run
 * loop. Engine layer, beside engine.c and engine_source.c, whose state it
 * shares through engine_internal.h.
 *
 * Why: an inference service's replicas each keep one pending event at
 * their next change, scheduled, moved (the power policy moves most
 * replicas' clocks every period) and run about 3,400 times a period at
 * bench-10k's request-level peak: a push, a move's bookkeeping and a pop
 * each in the queue (docs/PERFORMANCE.md, twenty-seventh session). A
 * group keeps them in a tournament tree whose root is one source's key,
 * so a change walks one path of the tree, most often stopping within a
 * level or two, and the run loop compares one key.
 *
 * Invariants (with engine_source.c's):
 * - A member's pending event has the key (time, seq) a queue entry of it
 *   would have: seq taken from e->seq when it was set, moved earlier, or
 *   came up moved later (then at its due time, not run, not counted), as
 *   engine.c's enqueue, move_earlier and run_entry take it; due > time
 *   iff it was moved later. It counts among the live events.
 * - The group's head source (e->src[head], group set, no slot) has the
 *   root member's key; its a, b are unused.
 * - While a member's event runs its key stays in the tree (g->running):
 *   its handler most often sets it again at once, and then one walk of
 *   the tree does where a free and a set did two; engine__group_done
 *   frees it after the handler if it did not.
 * - Each member holds a pool slot whose seq is SEQ_SOURCE but while
 *   engine__renumber runs (as a plain source's, engine_source.c). */
#include "engine_internal.h"
#include "vec.h"


enum { GROUPS_MIN = 2 };

/* Group g's arrays for n members, every one with none pending, and a
 * pool slot each: SIM_OK or SIM_ENOMEM (engine__group_free frees what was got). */
static int group_init(sim_engine *e, ev_group *g, uint32_t n) {
  uint32_t leaves = 1;
  while (leaves < n)
    leaves *= 2;
  *g = (ev_group){
      .n = n, .leaves = leaves, .head = NO_SOURCE, .running = NO_MEMBER};
  g->m = sim_calloc(&e->alloc, (size_t)n + 1, sizeof *g->m);
  g->node = sim_calloc(&e->alloc, 2 * (size_t)leaves, sizeof *g->node);
  g->slot = sim_calloc(&e->alloc, n, sizeof *g->slot);
  if (g->m == NULL || g->node == NULL || g->slot == NULL)
    return SIM_ENOMEM;
  for (uint32_t i = 0; i <= n; i++)
    g->m[i] = ENGINE_NO_MEMBER_EVENT;
  for (uint32_t i = 0; i < leaves; i++)
    g->node[leaves + i] = i < n ? i : n;
  for (uint32_t k = leaves; k-- > 1;)
    g->node[k] = g->node[2 * k]; /* all tie: the left one */
  for (uint32_t i = 0; i < n; i++) {
    if (engine__slot_take(e, &g->slot[i]) != SIM_OK)
      return SIM_ENOMEM;
    e->slots[g->slot[i]].seq = SEQ_SOURCE;
  }
  return SIM_OK;
}

int sim_engine_group(sim_engine *e, uint32_t kind, uint32_t n,
                     uint32_t *group) {
  if (group == NULL || n == 0 || n > SLOTS_MAX / 2)
    return sim_engine_fail(e, SIM_EINVAL, "group: no place for its id, or "
                                          "%lu members",
                           (unsigned long)n);
  int rc = engine__source_check(e, kind);
  if (rc != SIM_OK)
    return rc;
  size_t cap = e->cap_grp;
  if (e->ngrp == NO_GROUP - 1)
    return sim_engine_fail(e, SIM_ERANGE, "group: too many");
  if (e->ngrp == e->cap_grp) {
    if (sim_vec_reserve(&e->alloc, &e->grp, &cap,
                        cap == 0 ? GROUPS_MIN : cap + 1,
                        sizeof *e->grp) != SIM_OK)
      return sim_engine_fail(e, SIM_ENOMEM, "group: out of memory");
    e->cap_grp = cap < NO_GROUP ? (uint32_t)cap : NO_GROUP - 1;
  }
  uint32_t gi = e->ngrp++; /* kept whatever follows: destroy frees it */
  ev_group *g = &e->grp[gi];
  if (group_init(e, g, n) != SIM_OK) {
    engine__group_free(&e->alloc, g);
    *g = (ev_group){.head = NO_SOURCE, .running = NO_MEMBER};
    return sim_engine_fail(e, SIM_ENOMEM, "group: out of memory");
  }
  rc = engine__source_add(e, kind, gi, &g->head);
  if (rc != SIM_OK)
    return rc;
  *group = gi;
  return SIM_OK;
}

/* Member i of group g (checked): NULL, the engine's message set, when
 * there is none. */
static ev_member *member_of(sim_engine *e, uint32_t g, uint32_t i) {
  if (g >= e->ngrp || i >= e->grp[g].n || e->grp[g].head == NO_SOURCE) {
    sim_engine_fail(e, SIM_EINVAL, "group %lu: no member %lu",
                    (unsigned long)g, (unsigned long)i);
    return NULL;
  }
  return &e->grp[g].m[i];
}

/* Why at is refused: before now (SIM_OK: it is not). */
static int check_at(sim_engine *e, sim_time at) {
  if (at < e->now)
    return sim_engine_fail(e, SIM_EINVAL,
                           "member: event at %lld ns is before now (%lld ns)",
                           (long long)at, (long long)e->now);
  return SIM_OK;
}

/* Member m (i of g) keyed at at under a fresh seq, due then. */
static int member_set(sim_engine *e, ev_group *g, uint32_t i, sim_time at) {
  if (engine__seq_ready(e) != SIM_OK)
    return sim_engine_fail(e, SIM_ENOMEM, "member: out of memory renumbering");
  ev_member *m = &g->m[i];
  m->time = m->due = at;
  m->seq = e->seq++;
  engine__member_keyed(e, g, i);
  return SIM_OK;
}

/* Whether member i of g has a pending event: the one running (its key
 * still in the tree, engine__group_take) has none. */
static bool member_pending(const ev_group *g, uint32_t i) {
  return g->m[i].seq != SEQ_FREE && i != g->running;
}

int sim_engine_member_at(sim_engine *e, uint32_t g, uint32_t i, sim_time at,
                         uint64_t b) {
  ev_member *m = member_of(e, g, i);
  if (m == NULL)
    return SIM_EINVAL;
  int rc = check_at(e, at);
  if (rc != SIM_OK)
    return rc;
  ev_group *grp = &e->grp[g];
  bool was_free = !member_pending(grp, i);
  rc = member_set(e, grp, i, at);
  if (rc == SIM_OK) {
    e->live += was_free;
    m->b = b;
    if (i == grp->running) /* its key is the new one's: nothing to free */
      grp->running = NO_MEMBER;
  }
  return rc;
}

/* As sim_engine_move: earlier than its key, keyed anew (move_earlier);
 * else only due is put later, and the key stays until it comes up. */
int sim_engine_member_move(sim_engine *e, uint32_t g, uint32_t i,
                           sim_time at) {
  ev_member *m = member_of(e, g, i);
  if (m == NULL)
    return SIM_EINVAL;
  if (!member_pending(&e->grp[g], i))
    return sim_engine_fail(e, SIM_EINVAL, "move: member %lu has no event",
                           (unsigned long)i);
  int rc = check_at(e, at);
  if (rc != SIM_OK)
    return rc;
  if (at < m->time)
    return member_set(e, &e->grp[g], i, at);
  m->due = at;
  return SIM_OK;
}

bool sim_engine_member_off(sim_engine *e, uint32_t g, uint32_t i) {
  if (g >= e->ngrp || i >= e->grp[g].n || !member_pending(&e->grp[g], i))
    return false;
  engine__member_free(e, &e->grp[g], i);
  e->live--;
  return true;
}

bool sim_engine_member_pending(const sim_engine *e, uint32_t g, uint32_t i) {
  return g < e->ngrp && i < e->grp[g].n && member_pending(&e->grp[g], i);
}

