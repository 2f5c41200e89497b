/* queue.c - the pending-event set of the engine: a radix heap on the
 * event time, equal times in seq order. Engine layer; it sees only
 * alloc.h and err.h.
 *
 * Design. Times are stored with the sign bit flipped (u = time ^ 2^63),
 * which maps int64 order onto uint64 order. The queue keeps a key last:
 * the time of the last pop, or lower when a push went below it. Every
 * entry has u >= last and sits in bucket bitlen(u ^ last) (0 .. 64), so
 * bucket 0 holds the entries at time last and bucket b >= 1 those whose
 * highest bit differing from last is bit b - 1. Buckets with a lower index
 * hold smaller times. Invariants:
 * - Bucket 0 (the ring) keeps seq and slot only, sorted by seq, in a ring
 *   buffer that holds at least n entries; the smallest entry of the queue
 *   is its head whenever it is not empty.
 * - Buckets 1 .. 64 are chains of blocks of EVQ_B entries, all blocks full
 *   but the tail. Each chain keeps its smallest (time, seq) entry, so peek
 *   never has to search; mask has bit b - 1 set iff bucket b is not empty.
 * - When the ring runs empty, pop takes the lowest non-empty chain, sets
 *   last to its smallest time and places each of its entries again: they
 *   all land in lower buckets (they share the bits of last above the
 *   chain's), those at time last in the ring. The buckets above keep their
 *   index, since the new last agrees with the old one on those bits. Each
 *   entry thus moves down at most 64 times, and in practice a few times.
 * - Equal times come out in seq order: the entries of one time always sit
 *   in one bucket, and pushes and moves append to it, so with increasing
 *   seqs (the engine's counter) each chain holds a time's entries in seq
 *   order and the ring only ever appends. Another order is still correct:
 *   the ring inserts in order, at O(ring size) per entry out of order.
 * - A push below last (the engine never does this: it refuses the past)
 *   lowers last to it. With d = bitlen(u ^ last), bucket d is empty then
 *   and the entries of buckets 0 .. d-1 all belong in bucket d of the new
 *   last, so only those move; the buckets above d stay.
 *
 * Memory. Blocks come from one array (indices, not pointers, so it can be
 * resized) with a free list through block.next. Both the ring and the
 * block array grow by doubling in push only and never shrink. Push keeps
 * enough blocks that no move can run out: a move never holds more than
 * n / EVQ_B full blocks plus one part-filled tail per chain (64) and the
 * block being read, so ceil(n / EVQ_B) + EVQ_SPARE blocks do. Hence pop
 * and compact never allocate, and a push right after a pop (as the
 * engine's periodic events do) never fails.
 *
 * Why a radix heap, measured against the 8-ary heap on 128-bit keys that
 * it replaced (tests/bench/bench_queue.c, hold model, and the reference
 * day): see the figures below the includes. */
#include "queue.h"

#include <assert.h>
#include <string.h>

#include "err.h"
#include "vec.h"

/* Flipping the sign bit maps int64 order onto uint64 order. */
#define SIGN_BIT ((uint64_t)1 << 63)

/* The index of no block: the end of a chain or of the free list. */
#define NO_BLOCK UINT32_MAX

enum {
  EVQ_B = 16,                         /* entries per block */
  EVQ_R = 4,                          /* bits per digit */
  EVQ_DIGITS = 1 << EVQ_R,            /* buckets per level */
  EVQ_CHAINS = 64 / EVQ_R * EVQ_DIGITS, /* chained buckets */
  EVQ_WORDS = EVQ_CHAINS / 64,        /* words of the mask */
  EVQ_SPARE = EVQ_CHAINS + 2, /* blocks beyond ceil(n / EVQ_B) */
  EVQ_MIN_CAP = 64,           /* first size of the ring */
};

/* One entry of a chain. */
typedef struct item {
  uint64_t t; /* time with the sign bit flipped */
  uint64_t seq;
  uint32_t slot;
} item;

typedef struct block {
  item e[EVQ_B];
  uint32_t next; /* the next block of its chain or of the free list */
} block;

/* Bucket b >= 1. An empty chain has head and tail NO_BLOCK and fill
 * EVQ_B, so that the first add takes a block. */
typedef struct chain {
  uint32_t head, tail;
  uint32_t fill; /* entries in the tail block */
  item min;      /* the smallest (t, seq) held, when not empty */
} chain;

/* An entry of the ring: its time is last. */
typedef struct tie {
  uint64_t seq;
  uint32_t slot;
} tie;

struct evq {
  uint64_t last; /* every bucket index is relative to it */
  uint64_t mask[EVQ_WORDS]; /* bit i set iff chain i is not empty */
  size_t n;      /* entries held */
  size_t cap;    /* entries push can hold without growing */
  tie *ring;     /* bucket 0; rcap is a power of two */
  size_t head, nring, rcap;
  block *blk;
  size_t nblk;       /* blocks allocated */
  uint32_t free_blk; /* the free list */
  chain b[EVQ_CHAINS]; /* b[level * EVQ_DIGITS + digit] */
  sim_allocator alloc;
};

static const chain EMPTY_CHAIN = {NO_BLOCK, NO_BLOCK, EVQ_B, {0, 0, 0}};

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
  return level * EVQ_DIGITS + (unsigned)(t >> (level * EVQ_R) & (EVQ_DIGITS - 1));
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

/* Appends it to bucket i + 1. */
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

/* Empties bucket i + 1 and places its entries again relative to last;
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

/* ---- Life cycle and growth ------------------------------------------- */

evq *evq_create(const sim_allocator *alloc) {
  if (alloc == NULL)
    alloc = sim_allocator_default();
  evq *q = sim_alloc(alloc, sizeof *q);
  if (q == NULL)
    return NULL;
  *q = (evq){.free_blk = NO_BLOCK, .alloc = *alloc};
  for (size_t i = 0; i < EVQ_CHAINS; i++)
    q->b[i] = EMPTY_CHAIN;
  return q;
}

void evq_destroy(evq *q) {
  if (q == NULL)
    return;
  sim_allocator alloc = q->alloc;
  sim_free(&alloc, q->ring);
  sim_free(&alloc, q->blk);
  sim_free(&alloc, q);
}

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
      sim_vec_reserve(&q->alloc, &q->blk, &cap, need, sizeof *q->blk) !=
          SIM_OK)
    return SIM_ENOMEM;
  if (cap >= NO_BLOCK)
    cap = NO_BLOCK - 1;
  for (size_t k = cap; k-- > old;)
    block_give(q, (uint32_t)k);
  q->nblk = cap;
  return SIM_OK;
}

/* Makes room for one more entry: the ring and the spare blocks. */
static int grow(evq *q) {
  size_t need = q->n + 1 > EVQ_MIN_CAP ? q->n + 1 : EVQ_MIN_CAP;
  if (need > q->rcap && ring_grow(q, need) != SIM_OK)
    return SIM_ENOMEM;
  size_t blocks = (need + EVQ_B - 1) / EVQ_B + EVQ_SPARE;
  if (blocks > q->nblk && blocks_grow(q, blocks) != SIM_OK)
    return SIM_ENOMEM;
  size_t by_blocks = (q->nblk - EVQ_SPARE) * EVQ_B;
  q->cap = q->rcap < by_blocks ? q->rcap : by_blocks;
  return SIM_OK;
}

/* ---- The queue ------------------------------------------------------- */

int evq_push(evq *q, evq_entry e) {
  if (q->n == q->cap && grow(q) != SIM_OK)
    return SIM_ENOMEM;
  item it = {(uint64_t)e.time ^ SIGN_BIT, e.seq, e.slot};
  if (it.t < q->last)
    lower(q, it.t);
  place(q, it);
  q->n++;
  return SIM_OK;
}

bool evq_peek(const evq *q, evq_entry *out) {
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

bool evq_pop(evq *q, evq_entry *out) {
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

size_t evq_size(const evq *q) { return q->n; }

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

/* Keeps the entries of bucket i + 1 that keep accepts, in order, in the
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

void evq_compact(evq *q, evq_keep_fn keep, void *ctx) {
  size_t n = q->nring > 0 ? ring_compact(q, keep, ctx) : 0;
  for (unsigned w = 0; w < EVQ_WORDS; w++)
    for (uint64_t bits = q->mask[w]; bits != 0; bits &= bits - 1)
      n += chain_compact(q, w * 64 + low_bit(bits), keep, ctx);
  q->n = n;
}
