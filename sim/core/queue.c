/* queue.c - the pending-event set of the engine: a d-ary min-heap on
 * (time, seq) while it is small, a radix heap on the time when it is
 * large. Engine layer; it sees only alloc.h and err.h.
 *
 * Switching. Up to EVQ_TO_RADIX (16384) entries they sit in the heap; the
 * push that finds that many moves them all into the radix heap, and the
 * pop that finds EVQ_TO_HEAP (4096) or fewer moves them back. Each move is
 * O(n) and paid for by at least 12288 pushes or pops in between. The heap
 * keeps its arrays while the radix heap is used, so going back never
 * allocates; if the radix heap cannot be allocated, the heap goes on.
 * Why both (issue 13; measured on the shared 2-core EPYC, CPU time, best
 * of interleaved runs; tests/bench/bench_queue.c, hold model): the heap is
 * the faster at 1e3 pending, where it fits the L1 cache, and the radix
 * heap from about 1e4 on (queue alone, M pops+pushes/s: 1e3 24.7 against
 * 25.4; 1e5 18.9 against 11.1; 1e6 11.6 against 2.5). The 1 h reference
 * day holds only about 950 pending events on average, so it runs on the
 * heap; the radix heap alone took as long there (2.64 s of user time
 * against 2.63) with the queue at 14.6% of the profile against 11.1%: its
 * pushes append to chain tails that are cold at that size. The switching
 * queue against the heap alone, M events/s (evq, engine, cancel columns,
 * best of two interleaved runs of each):
 * 1e3 24.4 18.7 8.6 against 25.3 19.0 8.7; 1e4 18.4 14.7 6.4 against
 * 18.8 15.0 6.8 (the cancel run's tombstones take it past the switch);
 * 1e5 18.2 13.1 4.7 against 12.8 9.0 2.8; 1e6 13.7 6.4 1.8 against 4.2
 * 3.2 0.8. Reference day, 1 h: 2.60 s of user time against
 * 2.59 (best of five; medians 2.63 and 2.60), and in each of five
 * profiles evq_pop took 1 to 1.5 points more (10.2-10.7% against
 * 8.6-9.7%) although the heap's path compiles to the same instructions
 * but the check of radix; not explained (code alignment?).
 *
 * The heap. Entries sit in heap order in two parallel arrays: key[i] holds
 * (time, seq) packed into one 128-bit unsigned integer and slot[i] the
 * slot. The children of node i are D*i+1 .. D*i+D, and no key is greater
 * than its children's. seq is unique, so no two keys are equal and the pop
 * order is fully determined by the pushes, whatever the heap shape.
 *
 * Both arrays grow by doubling through the allocator hook and never
 * shrink, so once the queue has reached its working size push and pop do
 * not allocate (docs/PERFORMANCE.md: no allocation on the hot path).
 *
 * Why these choices (measured with tests/bench/bench_queue.c, hold model,
 * 1e5 pending, on the 2.3 GHz Xeon of the project's machines):
 * - Packed keys: the time's sign bit flipped, then the seq, compare as one
 *   128-bit integer, two instructions and no branch. Comparing the two
 *   fields with && and || made the compiler branch, which mispredicts half
 *   the time on random keys: 5.4 M pops+pushes/s with 24-byte entries
 *   against 9.4 with packed keys, both 4-ary.
 * - The slot beside the key rather than in it: with 16-byte keys a cache
 *   line holds four, and 1e5 keys (1.6 MB) stay within the 2 MB L2 cache.
 *   Moving the slot in its own array costs almost nothing.
 * - D = 8 rather than 4: 8 children span two lines but the heap is a
 *   third shallower, and the walk down is bound by the latency of each
 *   level: 10.3 against 9.4 M/s. A binary heap gives 6.3.
 * - Pop moves the hole at the root down to a leaf along the smaller
 *   children without comparing against the element that will fill it, then
 *   sifts the last element up from there (Floyd's bottom-up variant): the
 *   last element is a leaf, so it belongs near the bottom anyway.
 * - Beyond the L2 cache, pop prefetches the grandchildren of each node it
 *   visits: +25% at 1e6 pending, but -10% at 1e5, hence only there.
 * Tried and dropped: aligning child groups to cache lines (no change), and
 * a lazy pop whose hole the next push fills (no change). A ladder queue
 * would be faster still at 1e6 but needs tuning to the time
 * distribution; the radix heap below needs none.
 *
 * The radix heap. Times are stored with the sign bit flipped (u = time ^
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
#include "queue.h"

#include <assert.h>
#include <string.h>

#include "err.h"
#include "vec.h"

/* Flipping the sign bit maps int64 order onto uint64 order. */
#define SIGN_BIT ((uint64_t)1 << 63)

/* (time, seq) as one unsigned integer whose order is the heap's order. */
#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 evq_key;

static inline evq_key key_make(uint64_t time_bits, uint64_t seq) {
  return (evq_key)time_bits << 64 | seq;
}
static inline uint64_t key_hi(evq_key k) { return (uint64_t)(k >> 64); }
static inline uint64_t key_lo(evq_key k) { return (uint64_t)k; }
static inline bool key_less(evq_key x, evq_key y) { return x < y; }
#else
/* Without a 128-bit type: correct, but the compiler may branch. */
typedef struct evq_key {
  uint64_t hi, lo;
} evq_key;

static inline evq_key key_make(uint64_t time_bits, uint64_t seq) {
  return (evq_key){time_bits, seq};
}
static inline uint64_t key_hi(evq_key k) { return k.hi; }
static inline uint64_t key_lo(evq_key k) { return k.lo; }
static inline bool key_less(evq_key x, evq_key y) {
  return (x.hi < y.hi) | ((x.hi == y.hi) & (x.lo < y.lo));
}
#endif

static inline evq_key key_of(const evq_entry *e) {
  return key_make((uint64_t)e->time ^ SIGN_BIT, e->seq);
}

/* The time back from a key; written to avoid an implementation-defined
 * conversion of values above INT64_MAX. */
static inline int64_t key_time(evq_key k) {
  uint64_t u = key_hi(k) ^ SIGN_BIT;
  return u <= INT64_MAX ? (int64_t)u : -(int64_t)~u - 1;
}

enum {
  EVQ_D = 8,              /* children per node */
  EVQ_MIN_CAP = 64,       /* first size of the arrays */
  EVQ_FAR = 1 << 17,      /* from here (2 MB of keys, the L2 cache of the
                             project's machines) pop prefetches */
  EVQ_TO_RADIX = 1 << 14, /* a push from this many on switches to the
                             radix heap */
  EVQ_TO_HEAP = 1 << 12,  /* a pop from this many down switches back */
};

_Static_assert(EVQ_D == 8, "min_child plays a tournament of 8");

/* Keeps the radix heap's operations out of the public functions, so that
 * the heap's path through them compiles much as it would alone (inlined,
 * evq_pop's share of the reference day rose from 9.5% to 10.6%). */
#if defined(__GNUC__) || defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

/* A hint to load an address into the cache; no effect where unknown. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* ---- The radix heap's types ------------------------------------------- */

/* The index of no block: the end of a chain or of the free list. */
#define NO_BLOCK UINT32_MAX

enum {
  EVQ_B = 16,                           /* entries per block */
  EVQ_R = 4,                            /* bits per digit */
  EVQ_DIGITS = 1 << EVQ_R,              /* chains per level */
  EVQ_CHAINS = 64 / EVQ_R * EVQ_DIGITS, /* chains in all */
  EVQ_WORDS = EVQ_CHAINS / 64,          /* words of the mask */
  EVQ_SPARE = EVQ_CHAINS + 2,           /* blocks beyond ceil(n / EVQ_B) */
  EVQ_RING_MIN = 64,                    /* first size of the ring */
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

/* One chain. An empty chain has head and tail NO_BLOCK and fill
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

/* Both structures; radix says which holds the entries. */
struct evq {
  size_t n;   /* entries held */
  bool radix; /* the entries are in the radix heap, else in the heap */
  /* The heap. Its arrays keep their size while the radix heap is used,
   * so that going back never allocates. */
  evq_key *key;   /* heap order; key[0] is the smallest */
  uint32_t *slot; /* slot[i] goes with key[i] */
  size_t cap;     /* entries both arrays can hold */
  /* The radix heap. */
  uint64_t last;            /* every bucket index is relative to it */
  uint64_t mask[EVQ_WORDS]; /* bit i set iff chain i is not empty */
  size_t room;              /* entries its push can hold without growing */
  tie *ring;                /* bucket 0; rcap is a power of two */
  size_t head, nring, rcap;
  block *blk;
  size_t nblk;         /* blocks allocated */
  uint32_t free_blk;   /* the free list */
  chain b[EVQ_CHAINS]; /* b[level * EVQ_DIGITS + digit] */
  sim_allocator alloc;
};

/* ---- The heap ---------------------------------------------------------- */

/* Doubles both arrays; SIM_ENOMEM leaves the entries and cap as they were
 * (one array may have grown already, which the next attempt reuses). */
static int grow(evq *q) {
  /* Asking for EVQ_MIN_CAP at least keeps the first size. */
  size_t need = q->cap == 0 ? EVQ_MIN_CAP : q->cap + 1;
  size_t kcap = q->cap, scap = q->cap;
  if (sim_vec_reserve(&q->alloc, &q->key, &kcap, need, sizeof *q->key) !=
          SIM_OK ||
      sim_vec_reserve(&q->alloc, &q->slot, &scap, need, sizeof *q->slot) !=
          SIM_OK)
    return SIM_ENOMEM;
  q->cap = kcap;
  return SIM_OK;
}

/* Puts (k, s) into the hole at i, moving greater parents down. */
static void sift_up(evq *q, size_t i, evq_key k, uint32_t s) {
  while (i > 0) {
    size_t p = (i - 1) / EVQ_D;
    if (!key_less(k, q->key[p]))
      break;
    q->key[i] = q->key[p];
    q->slot[i] = q->slot[p];
    i = p;
  }
  q->key[i] = k;
  q->slot[i] = s;
}

/* The smaller of two positions; the select compiles to a conditional
 * move. */
static inline size_t min2(const evq_key *k, size_t x, size_t y) {
  return key_less(k[y], k[x]) ? y : x;
}

/* The smallest of the children c .. min(c + D, n) - 1 of one node; c < n.
 * A full set is played as a three-round tournament: independent compares
 * first, so the depth of the dependency chain is 3, not 7. */
static inline size_t min_child(const evq_key *k, size_t c, size_t n) {
  if (c + EVQ_D <= n) {
    size_t m0 = c + key_less(k[c + 1], k[c]);
    size_t m1 = c + 2 + key_less(k[c + 3], k[c + 2]);
    size_t m2 = c + 4 + key_less(k[c + 5], k[c + 4]);
    size_t m3 = c + 6 + key_less(k[c + 7], k[c + 6]);
    return min2(k, min2(k, m0, m1), min2(k, m2, m3));
  }
  size_t m = c;
  for (size_t j = c + 1; j < n; j++)
    m = min2(k, m, j);
  return m;
}

/* Moves the hole at i down to a leaf of the first n entries along the
 * smaller children and returns where it ended. */
static size_t hole_down(evq *q, size_t i, size_t n) {
  for (size_t c = EVQ_D * i + 1; c < n; c = EVQ_D * i + 1) {
    size_t m = min_child(q->key, c, n);
    q->key[i] = q->key[m];
    q->slot[i] = q->slot[m];
    i = m;
  }
  return i;
}

/* hole_down for heaps larger than the cache: while the children of a node
 * are compared, it asks for all its grandchildren (16 lines), one of whose
 * groups the next step will read. Memory bandwidth is traded for latency;
 * that pays only when the levels below come from L3 or RAM. */
static size_t hole_down_far(evq *q, size_t i, size_t n) {
  for (size_t c = EVQ_D * i + 1; c < n; c = EVQ_D * i + 1) {
    size_t g = EVQ_D * c + 1;
    for (size_t j = 0; j < EVQ_D * EVQ_D && g + j < n; j += 4)
      PREFETCH(&q->key[g + j]);
    size_t m = min_child(q->key, c, n);
    q->key[i] = q->key[m];
    q->slot[i] = q->slot[m];
    i = m;
  }
  return i;
}

/* Classic sift-down of the entry at i, for heapify: there the entry
 * usually stays high, so the bottom-up walk does not pay. */
static void sift_down(evq *q, size_t i) {
  evq_key k = q->key[i];
  uint32_t s = q->slot[i];
  for (size_t c = EVQ_D * i + 1; c < q->n; c = EVQ_D * i + 1) {
    size_t m = min_child(q->key, c, q->n);
    if (!key_less(q->key[m], k))
      break;
    q->key[i] = q->key[m];
    q->slot[i] = q->slot[m];
    i = m;
  }
  q->key[i] = k;
  q->slot[i] = s;
}

static int heap_push(evq *q, evq_entry e) {
  if (q->n == q->cap && grow(q) != SIM_OK)
    return SIM_ENOMEM;
  sift_up(q, q->n++, key_of(&e), e.slot);
  return SIM_OK;
}

/* The entry at position i. */
static evq_entry entry_at(const evq *q, size_t i) {
  evq_key k = q->key[i];
  return (evq_entry){.time = key_time(k), .seq = key_lo(k), .slot = q->slot[i]};
}

static bool heap_peek(const evq *q, evq_entry *out) {
  if (q->n == 0)
    return false;
  *out = entry_at(q, 0);
  return true;
}

static bool heap_pop(evq *q, evq_entry *out) {
  if (q->n == 0)
    return false;
  *out = entry_at(q, 0);
  size_t n = --q->n;
  if (n == 0)
    return true;
  size_t hole = n < EVQ_FAR ? hole_down(q, 0, n) : hole_down_far(q, 0, n);
  sift_up(q, hole, q->key[n], q->slot[n]);
  return true;
}

/* Floyd's heapify: sift down every parent, the last first. O(n), since
 * most nodes are near the bottom and move little. */
static void heapify(evq *q) {
  for (size_t i = q->n > 1 ? (q->n - 2) / EVQ_D + 1 : 0; i-- > 0;)
    sift_down(q, i);
}

/* Keeps the entries keep accepts and restores the heap order. */
static void heap_compact(evq *q, evq_keep_fn keep, void *ctx) {
  size_t n = 0;
  for (size_t i = 0; i < q->n; i++) {
    evq_entry e = entry_at(q, i);
    if (!keep(ctx, &e))
      continue;
    q->key[n] = q->key[i];
    q->slot[n++] = q->slot[i];
  }
  q->n = n;
  heapify(q);
}

/* ---- The radix heap ---------------------------------------------------- */

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
static int rdx_grow(evq *q) {
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

NOINLINE static int rdx_push(evq *q, evq_entry e) {
  if (q->n == q->room && rdx_grow(q) != SIM_OK)
    return SIM_ENOMEM;
  item it = {(uint64_t)e.time ^ SIGN_BIT, e.seq, e.slot};
  if (it.t < q->last)
    lower(q, it.t);
  place(q, it);
  q->n++;
  return SIM_OK;
}

NOINLINE static bool rdx_peek(const evq *q, evq_entry *out) {
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

NOINLINE static bool rdx_pop(evq *q, evq_entry *out) {
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

static void rdx_compact(evq *q, evq_keep_fn keep, void *ctx) {
  size_t n = q->nring > 0 ? ring_compact(q, keep, ctx) : 0;
  for (unsigned w = 0; w < EVQ_WORDS; w++)
    for (uint64_t bits = q->mask[w]; bits != 0; bits &= bits - 1)
      n += chain_compact(q, w * 64 + low_bit(bits), keep, ctx);
  q->n = n;
}

/* ---- Switching between the two ---------------------------------------- */

/* Moves the heap's entries into the radix heap, relative to the smallest
 * (a push below it until the next pop lowers last once, at most O(n)).
 * SIM_ENOMEM (no room for the radix heap) leaves the heap as it was. The
 * entries go over in (time, seq) order, popped: then every time's entries
 * are appended in seq order, where the heap's array order would have made
 * the ring insert, O(k^2) for k equal times. O(n log n), once. */
NOINLINE static int to_radix(evq *q) {
  if (q->n + 1 > q->room && rdx_grow(q) != SIM_OK)
    return SIM_ENOMEM;
  size_t n = q->n;
  evq_entry e;
  q->last = key_hi(q->key[0]);
  while (evq_pop(q, &e)) /* the heap's pop: radix is still false */
    place(q, (item){(uint64_t)e.time ^ SIGN_BIT, e.seq, e.slot});
  q->n = n;
  q->radix = true;
  return SIM_OK;
}

/* Copies the entries of chain i to the heap arrays from *n on and
 * frees the chain. */
static void chain_to_heap(evq *q, unsigned i, size_t *n) {
  chain *c = &q->b[i];
  for (uint32_t k = c->head; k != NO_BLOCK; k = q->blk[k].next)
    for (uint32_t j = 0, m = block_fill(q, c, k); j < m; j++) {
      const item *it = &q->blk[k].e[j];
      q->key[*n] = key_make(it->t, it->seq);
      q->slot[(*n)++] = it->slot;
    }
  blocks_give(q, c->head);
  *c = EMPTY_CHAIN;
}

/* Moves the radix heap's entries back into the heap arrays, which held
 * more when the radix heap took over, and heapifies them: no allocation. */
NOINLINE static void to_heap(evq *q) {
  assert(q->n <= q->cap);
  size_t n = 0, m = q->rcap - 1;
  for (size_t i = 0; i < q->nring; i++) {
    tie r = q->ring[(q->head + i) & m];
    q->key[n] = key_make(q->last, r.seq);
    q->slot[n++] = r.slot;
  }
  q->nring = 0;
  q->head = 0;
  for (unsigned w = 0; w < EVQ_WORDS; w++) {
    for (uint64_t bits = q->mask[w]; bits != 0; bits &= bits - 1)
      chain_to_heap(q, w * 64 + low_bit(bits), &n);
    q->mask[w] = 0;
  }
  assert(n == q->n);
  q->radix = false;
  heapify(q);
}

/* ---- The queue ------------------------------------------------------- */

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
  sim_free(&alloc, q->key);
  sim_free(&alloc, q->slot);
  sim_free(&alloc, q->ring);
  sim_free(&alloc, q->blk);
  sim_free(&alloc, q);
}

int evq_push(evq *q, evq_entry e) {
  /* Without room for the radix heap, the heap goes on. */
  if (q->radix || (q->n >= EVQ_TO_RADIX && to_radix(q) == SIM_OK))
    return rdx_push(q, e);
  return heap_push(q, e);
}

bool evq_peek(const evq *q, evq_entry *out) {
  return q->radix ? rdx_peek(q, out) : heap_peek(q, out);
}

bool evq_pop(evq *q, evq_entry *out) {
  if (q->radix) {
    if (q->n > EVQ_TO_HEAP)
      return rdx_pop(q, out);
    to_heap(q);
  }
  return heap_pop(q, out);
}

size_t evq_size(const evq *q) { return q->n; }

void evq_compact(evq *q, evq_keep_fn keep, void *ctx) {
  if (q->radix)
    rdx_compact(q, keep, ctx);
  else
    heap_compact(q, keep, ctx);
}
