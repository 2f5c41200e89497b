/* queue_radix.c - the radix heap of the event queue (queue.c switches
 * to it from the heap when the queue is large; queue_internal.h has the
 * state both share). Times are stored with the sign bit flipped (u = time ^
 * 2^63), which maps int64 order onto uint64 order. It keeps a key last:
 * the time of the last pop, or lower when a push went below it. Every
 * entry has u >= last. Those with u == last sit in the ring (bucket 0),
 * the others in one of 256 chains, chosen by the base-16 digit where u
 * first differs from last (the level, 0 .. 15) and u's own digit there;
 * a chain with a lower index holds smaller times. Invariants:
 * - The ring keeps seq and slot only, sorted by seq, in a ring buffer
 *   that holds at least n entries; when it is not empty its head is the
 *   smallest entry.
 * - Chains are lists of blocks of EVQ_B entries, all full but the tail.
 *   Each chain keeps its smallest (time, seq) entry, so peek never
 *   searches; mask has bit i set iff chain i is not empty.
 * - When the ring runs empty, pop takes the lowest chain, sets last to its
 *   smallest time and places each of its entries again: they land in lower
 *   levels or the ring. The other chains keep their index, since the new
 *   last agrees with the old one on every digit above the chain's level
 *   and the digits at that level are unchanged. An entry moves at most
 *   once per level (2.5 times per pop on the reference day, 3.3 to 5.3 in
 *   the hold model at 1e3 to 1e6).
 * - Equal times come out in seq order: a time's entries always sit in one
 *   bucket and pushes and moves append, so with increasing seqs (the
 *   engine's counter) each chain holds them in seq order and the ring only
 *   appends. Another order is still correct: the ring inserts in order, at
 *   O(ring size) per entry out of order (once, after a switch from the
 *   heap, whose array is not in seq order).
 * - A push below last (the engine never makes one: it refuses the past)
 *   lowers last to it. The chain where the old last would go relative to
 *   the new one is empty then, and the entries of all lower chains and the
 *   ring belong in it, so only those move.
 * Memory: blocks come from one array (indices, not pointers, so it can be
 * resized) with a free list through block.next. The ring and the block
 * array grow by doubling in push only. Push keeps enough blocks that no
 * move can run out: a move never holds more than n / EVQ_B full blocks
 * plus one part-filled tail per chain and the block being read, so
 * ceil(n / EVQ_B) + EVQ_SPARE blocks do. Hence pop and compact never
 * allocate, and a push right after a pop never fails. The price is
 * memory: the ring takes 16 bytes an entry (sized for all of them, in
 * case all have one time) and the blocks 24.5, both doubling, where the
 * heap takes 20. A hold-model process peaked at 47 MB with 1e6 pending
 * against 30 with the heap alone (1e5: 8.3 against 5.7 MB). A ring that
 * grows only as far as the ties need would save most of the difference;
 * not done.
 * Tried and dropped: a radix heap on bits rather than digits (65 buckets,
 * commit eaa0e47): each entry moved twice as often (5.7 to 10.2 times per
 * pop), which made it slower than the heap at 1e3 (18.8 against 24.9
 * M/s). Digits of 4 bits rather than 8: 256 chains keep the spare blocks
 * at 100 KB, where 8-bit digits (2048 chains) would need 800 KB. */
#include "queue_internal.h"

#include <assert.h>
#include <string.h>

#include "err.h"
#include "vec.h"

/* ---- The radix heap ---------------------------------------------------- */

static const chain EMPTY_CHAIN = {NO_BLOCK, NO_BLOCK, EVQ_B, {0, 0, 0}};

void evq__rdx_init(evq *q) {
  for (size_t i = 0; i < EVQ_CHAINS; i++)
    q->b[i] = EMPTY_CHAIN;
}

/* ---- Bits and keys --------------------------------------------------- */

/* The number of bits of x (> 0): 1 + the index of its highest set bit. */
static inline unsigned bitlen(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return 64 - (unsigned)__builtin_clzll(x);
#else
  unsigned n = 0;
  for (; x != 0; x >>= 1)
    n++;
  return n;
#endif
}

/* The chain of t, given x = t ^ last (> 0): the level is the digit where
 * they first differ, from the top, and the digit t's own there. */
static inline unsigned chain_of(uint64_t t, uint64_t x) {
  unsigned level = (bitlen(x) - 1) / EVQ_R;
  return level * EVQ_DIGITS +
         (unsigned)(t >> (level * EVQ_R) & (EVQ_DIGITS - 1));
}

/* The index of the lowest set bit of x (> 0). */
static inline unsigned low_bit(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return (unsigned)__builtin_ctzll(x);
#else
  unsigned n = 0;
  for (; (x & 1) == 0; x >>= 1)
    n++;
  return n;
#endif
}

/* (t, seq) order. With a 128-bit type it compiles without a branch. */
static inline bool item_less(const item *x, const item *y) {
#ifdef __SIZEOF_INT128__
  __extension__ typedef unsigned __int128 u128;
  return ((u128)x->t << 64 | x->seq) < ((u128)y->t << 64 | y->seq);
#else
  return x->t < y->t || (x->t == y->t && x->seq < y->seq);
#endif
}

/* A stored time back to int64; written to avoid an implementation-defined
 * conversion of values above INT64_MAX. */
static inline int64_t time_of(uint64_t t) {
  uint64_t u = t ^ SIGN_BIT;
  return u <= INT64_MAX ? (int64_t)u : -(int64_t)~u - 1;
}

/* ---- Blocks and chains ----------------------------------------------- */

/* Takes a free block; push has made sure there is one. */
static uint32_t block_take(evq *q) {
  uint32_t k = q->free_blk;
  assert(k != NO_BLOCK);
  q->free_blk = q->blk[k].next;
  q->blk[k].next = NO_BLOCK;
  return k;
}

static void block_give(evq *q, uint32_t k) {
  q->blk[k].next = q->free_blk;
  q->free_blk = k;
}

/* Entries in block k of chain c. */
static inline uint32_t block_fill(const evq *q, const chain *c, uint32_t k) {
  return q->blk[k].next == NO_BLOCK ? c->fill : EVQ_B;
}

/* Appends it to chain i. */
static inline void chain_add(evq *q, unsigned i, item it) {
  chain *c = &q->b[i];
  if (c->fill == EVQ_B) {
    uint32_t k = block_take(q);
    if (c->tail == NO_BLOCK) {
      c->head = k;
      c->min = it;
      q->mask[i / 64] |= (uint64_t)1 << (i % 64);
    } else {
      q->blk[c->tail].next = k;
    }
    c->tail = k;
    c->fill = 0;
  }
  q->blk[c->tail].e[c->fill++] = it;
  if (item_less(&it, &c->min))
    c->min = it;
}

/* Adds (seq, slot) to the ring at time last, in seq order: an append
 * unless seq is smaller than the tail's. The ring has room. */
static inline void ring_add(evq *q, uint64_t seq, uint32_t slot) {
  size_t m = q->rcap - 1, i = q->nring++;
  for (; i > 0 && q->ring[(q->head + i - 1) & m].seq > seq; i--)
    q->ring[(q->head + i) & m] = q->ring[(q->head + i - 1) & m];
  q->ring[(q->head + i) & m] = (tie){seq, slot};
}

/* Puts it in its bucket relative to last (it.t >= last). */
static inline void place(evq *q, item it) {
  uint64_t x = it.t ^ q->last;
  if (x == 0)
    ring_add(q, it.seq, it.slot);
  else
    chain_add(q, chain_of(it.t, x), it);
}

/* Empties chain i and places its entries again relative to last;
 * each block goes back to the free list once read. */
static void chain_drain(evq *q, unsigned i) {
  chain c = q->b[i];
  q->b[i] = EMPTY_CHAIN;
  q->mask[i / 64] &= ~((uint64_t)1 << (i % 64));
  for (uint32_t k = c.head; k != NO_BLOCK;) {
    uint32_t m = block_fill(q, &c, k), next = q->blk[k].next;
    for (uint32_t j = 0; j < m; j++)
      place(q, q->blk[k].e[j]);
    block_give(q, k);
    k = next;
  }
}

/* Moves the lowest chain down when the ring is empty (and the queue not):
 * last becomes its smallest time. */
static unsigned lowest(const evq *q) {
  unsigned w = 0;
  while (q->mask[w] == 0)
    w++;
  return w * 64 + low_bit(q->mask[w]);
}

static void refill(evq *q) {
  unsigned i = lowest(q);
  q->last = q->b[i].min.t;
  q->head = 0;
  chain_drain(q, i);
}

/* Lowers last to u (< last) before a push of u: the ring and the chains
 * below the level where u and last first differ all go to one chain,
 * empty until then. */
static void lower(evq *q, uint64_t u) {
  uint64_t old = q->last;
  unsigned d = chain_of(old, u ^ old);
  assert((q->mask[d / 64] >> (d % 64) & 1) == 0);
  size_t m = q->rcap - 1;
  q->last = u;
  for (size_t i = 0; i < q->nring; i++) {
    tie r = q->ring[(q->head + i) & m];
    chain_add(q, d, (item){old, r.seq, r.slot});
  }
  q->nring = 0;
  q->head = 0;
  for (unsigned w = 0; w * 64 < d; w++) {
    uint64_t low = q->mask[w];
    if (d < (w + 1) * 64)
      low &= ((uint64_t)1 << (d % 64)) - 1;
    for (; low != 0; low &= low - 1)
      chain_drain(q, w * 64 + low_bit(low));
  }
}

/* ---- Growth of the radix heap ------------------------------------------ */

/* Grows the ring to hold need entries; a wrapped ring is unwrapped into
 * the new room. SIM_ENOMEM leaves it as it was. */
static int ring_grow(evq *q, size_t need) {
  size_t old = q->rcap, cap = old;
  if (sim_vec_reserve(&q->alloc, &q->ring, &cap, need, sizeof *q->ring) !=
      SIM_OK)
    return SIM_ENOMEM;
  while ((cap & (cap - 1)) != 0) /* a power of two, for the index mask */
    cap &= cap - 1;
  if (q->head + q->nring > old) /* the wrapped part goes after old */
    memcpy(q->ring + old, q->ring,
           (q->head + q->nring - old) * sizeof *q->ring);
  q->rcap = cap;
  return SIM_OK;
}

/* Grows the block array to hold need blocks and frees the new ones, the
 * lowest index first. SIM_ENOMEM leaves it as it was. */
static int blocks_grow(evq *q, size_t need) {
  size_t old = q->nblk, cap = old;
  if (need >= NO_BLOCK ||
      sim_vec_reserve(&q->alloc, &q->blk, &cap, need, sizeof *q->blk) != SIM_OK)
    return SIM_ENOMEM;
  if (cap >= NO_BLOCK)
    cap = NO_BLOCK - 1;
  for (size_t k = cap; k-- > old;)
    block_give(q, (uint32_t)k);
  q->nblk = cap;
  return SIM_OK;
}

/* Makes room for one more entry: the ring and the spare blocks. */
int evq__rdx_grow(evq *q) {
  size_t need = q->n + 1 > EVQ_RING_MIN ? q->n + 1 : EVQ_RING_MIN;
  if (need > q->rcap && ring_grow(q, need) != SIM_OK)
    return SIM_ENOMEM;
  size_t blocks = (need + EVQ_B - 1) / EVQ_B + EVQ_SPARE;
  if (blocks > q->nblk && blocks_grow(q, blocks) != SIM_OK)
    return SIM_ENOMEM;
  size_t by_blocks = (q->nblk - EVQ_SPARE) * EVQ_B;
  q->room = q->rcap < by_blocks ? q->rcap : by_blocks;
  return SIM_OK;
}

/* ---- The radix heap's operations -------------------------------------- */

NOINLINE int evq__rdx_push(evq *q, evq_entry e) {
  if (q->n == q->room && evq__rdx_grow(q) != SIM_OK)
    return SIM_ENOMEM;
  item it = {(uint64_t)e.time ^ SIGN_BIT, e.seq, e.slot};
  if (it.t < q->last)
    lower(q, it.t);
  place(q, it);
  q->n++;
  return SIM_OK;
}

NOINLINE bool evq__rdx_peek(const evq *q, evq_entry *out) {
  if (q->n == 0)
    return false;
  if (q->nring > 0) {
    tie r = q->ring[q->head];
    *out = (evq_entry){.time = time_of(q->last), .seq = r.seq, .slot = r.slot};
  } else {
    const item *m = &q->b[lowest(q)].min;
    *out = (evq_entry){.time = time_of(m->t), .seq = m->seq, .slot = m->slot};
  }
  return true;
}

NOINLINE bool evq__rdx_pop(evq *q, evq_entry *out) {
  if (q->n == 0)
    return false;
  if (q->nring == 0)
    refill(q);
  tie r = q->ring[q->head];
  q->head = (q->head + 1) & (q->rcap - 1);
  q->nring--;
  q->n--;
  *out = (evq_entry){.time = time_of(q->last), .seq = r.seq, .slot = r.slot};
  return true;
}

/* ---- Compaction ------------------------------------------------------ */

/* Keeps the ring's entries that keep accepts, in order; returns how many. */
static size_t ring_compact(evq *q, evq_keep_fn keep, void *ctx) {
  size_t m = q->rcap - 1, w = 0;
  for (size_t i = 0; i < q->nring; i++) {
    tie r = q->ring[(q->head + i) & m];
    evq_entry e = {.time = time_of(q->last), .seq = r.seq, .slot = r.slot};
    if (keep(ctx, &e))
      q->ring[(q->head + w++) & m] = r;
  }
  q->nring = w;
  return w;
}

/* Frees the blocks of a chain from k on. */
static void blocks_give(evq *q, uint32_t k) {
  while (k != NO_BLOCK) {
    uint32_t next = q->blk[k].next;
    block_give(q, k);
    k = next;
  }
}

/* Keeps the entries of chain i that keep accepts, in order, in the
 * chain's first blocks; frees the rest. Returns how many it kept. */
static size_t chain_compact(evq *q, unsigned i, evq_keep_fn keep, void *ctx) {
  chain *c = &q->b[i];
  uint32_t wk = c->head, wj = 0;
  size_t kept = 0;
  for (uint32_t k = c->head; k != NO_BLOCK; k = q->blk[k].next) {
    for (uint32_t j = 0, m = block_fill(q, c, k); j < m; j++) {
      item it = q->blk[k].e[j];
      evq_entry e = {.time = time_of(it.t), .seq = it.seq, .slot = it.slot};
      if (!keep(ctx, &e))
        continue;
      if (wj == EVQ_B) { /* the writer stays behind the reader */
        wk = q->blk[wk].next;
        wj = 0;
      }
      q->blk[wk].e[wj++] = it;
      if (kept++ == 0 || item_less(&it, &c->min))
        c->min = it;
    }
  }
  if (kept == 0) {
    blocks_give(q, c->head);
    *c = EMPTY_CHAIN;
    q->mask[i / 64] &= ~((uint64_t)1 << (i % 64));
    return 0;
  }
  blocks_give(q, q->blk[wk].next);
  q->blk[wk].next = NO_BLOCK;
  c->tail = wk;
  c->fill = wj;
  return kept;
}

void evq__rdx_compact(evq *q, evq_keep_fn keep, void *ctx) {
  size_t n = q->nring > 0 ? ring_compact(q, keep, ctx) : 0;
  for (unsigned w = 0; w < EVQ_WORDS; w++)
    for (uint64_t bits = q->mask[w]; bits != 0; bits &= bits - 1)
      n += chain_compact(q, w * 64 + low_bit(bits), keep, ctx);
  q->n = n;
}

/* ---- Switching ------------------------------------------------------- */

/* place, for queue.c's move of the heap's entries into the radix heap. */
void evq__rdx_place(evq *q, uint64_t t, uint64_t seq, uint32_t slot) {
  place(q, (item){t, seq, slot});
}

/* Copies the entries of chain i to the heap's array from *n on and
 * frees the chain. */
static void chain_to_heap(evq *q, unsigned i, size_t *n) {
  chain *c = &q->b[i];
  for (uint32_t k = c->head; k != NO_BLOCK; k = q->blk[k].next)
    for (uint32_t j = 0, m = block_fill(q, c, k); j < m; j++) {
      const item *it = &q->blk[k].e[j];
      q->key[(*n)++] = key_make(it->t, it->seq, it->slot);
    }
  blocks_give(q, c->head);
  *c = EMPTY_CHAIN;
}

void evq__rdx_to_heap(evq *q) {
  size_t n = 0, m = q->rcap - 1;
  for (size_t i = 0; i < q->nring; i++) {
    tie r = q->ring[(q->head + i) & m];
    q->key[n++] = key_make(q->last, r.seq, r.slot);
  }
  q->nring = 0;
  q->head = 0;
  for (unsigned w = 0; w < EVQ_WORDS; w++) {
    for (uint64_t bits = q->mask[w]; bits != 0; bits &= bits - 1)
      chain_to_heap(q, w * 64 + low_bit(bits), &n);
    q->mask[w] = 0;
  }
  assert(n == q->n);
}
