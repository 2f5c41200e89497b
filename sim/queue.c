/* queue.c - the pending-event set of the engine: a d-ary min-heap on
 * (time, seq). Engine layer; it sees only alloc.h and err.h.
 *
 * Design. Entries sit in heap order in two parallel arrays: key[i] holds
 * (time, seq) packed into one 128-bit unsigned integer and slot[i] the
 * slot. The children of node i are D*i+1 .. D*i+D, and no key is greater
 * than its children's. seq is unique, so no two keys are equal and the pop
 * order is fully determined by the pushes, whatever the heap shape.
 *
 * Both arrays grow by doubling through the allocator hook and never
 * shrink, so once the queue has reached its working size push and pop do
 * not allocate (DESIGN section 11: no allocation on the hot path).
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
 * distribution.
 * Also tried and dropped (issue 13, commit eaa0e47): a radix heap on the
 * time (65 buckets by the highest bit differing from the last pop, equal
 * times in a ring in seq order, chains of 32-entry blocks). Interleaved
 * runs on the shared 2-core EPYC (CPU time, best of each): the queue alone
 * is faster from 1e4 pending on (1e5: 13-15 against 6-9 M/s) but slower
 * at 1e3 (18-19 against 24-25), since each entry moves down 6 to 10
 * times (5.7, 7.4, 9.0, 10.2 moves per pop at 1e3 .. 1e6). On the real
 * workload it lost: the 1 h reference day took 2.78 s of user time
 * against 2.66 (best of three), and the queue's share of the profile rose
 * from 10.4% (evq_pop 9.1%) to 15.4% (moves 8.9%, push 3.9%): most of
 * its pushes land 1 ms to 4 s ahead (bits 20 to 31), so entries move
 * through many levels, and appends to cold chain tails miss the cache. With base-16 digits instead of
 * bits (256 chains by the first differing digit and the entry's digit
 * there, 16-entry blocks) each entry moves half as often (3.3 .. 5.3 moves
 * per pop) and the queue alone matched the heap at 1e3 (24.7 against 25.4
 * M/s) and beat it at 1e5 (18.9 against 11.1) and 1e6 (11.6 against 2.5),
 * but the reference day still took as long (2.64 s against 2.63 best of
 * three) with the queue at 14.6% of the profile against 11.1%: push alone
 * took 5.2%, its appends to cold chain tails missing the cache, where the
 * heap's push touches only its hot last leaf and top levels. The reason:
 * the reference day holds only about 950 pending events on average (8.3 M
 * pushes in the 1 h slice, counted with the radix heap), where the heap
 * fits the L1 cache; the radix heap pays from about 1e4 pending on. A
 * queue that switches from the heap to the radix heap past ~1e4 entries
 * (and back with some hysteresis) would take both; not tried. The radix
 * heaps are commits eaa0e47 (bits) and ea1a9fd (base-16 digits). */
#include "queue.h"

#include "err.h"
#include "vec.h"

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

/* Flipping the sign bit maps int64 order onto uint64 order. */
#define SIGN_BIT ((uint64_t)1 << 63)

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
  EVQ_D = 8,         /* children per node */
  EVQ_MIN_CAP = 64,  /* first size of the arrays */
  EVQ_FAR = 1 << 17, /* from here (2 MB of keys, the L2 cache of the
                        project's machines) pop prefetches */
};

_Static_assert(EVQ_D == 8, "min_child plays a tournament of 8");

/* A hint to load an address into the cache; no effect where unknown. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

struct evq {
  evq_key *key;   /* heap order; key[0] is the smallest */
  uint32_t *slot; /* slot[i] goes with key[i] */
  size_t n;       /* entries held */
  size_t cap;     /* entries both arrays can hold */
  sim_allocator alloc;
};

evq *evq_create(const sim_allocator *alloc) {
  if (alloc == NULL)
    alloc = sim_allocator_default();
  evq *q = sim_alloc(alloc, sizeof *q);
  if (q == NULL)
    return NULL;
  *q = (evq){.key = NULL, .slot = NULL, .n = 0, .cap = 0, .alloc = *alloc};
  return q;
}

void evq_destroy(evq *q) {
  if (q == NULL)
    return;
  sim_allocator alloc = q->alloc;
  sim_free(&alloc, q->key);
  sim_free(&alloc, q->slot);
  sim_free(&alloc, q);
}

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

int evq_push(evq *q, evq_entry e) {
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

bool evq_peek(const evq *q, evq_entry *out) {
  if (q->n == 0)
    return false;
  *out = entry_at(q, 0);
  return true;
}

bool evq_pop(evq *q, evq_entry *out) {
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

size_t evq_size(const evq *q) { return q->n; }

void evq_compact(evq *q, evq_keep_fn keep, void *ctx) {
  size_t n = 0;
  for (size_t i = 0; i < q->n; i++) {
    evq_entry e = entry_at(q, i);
    if (!keep(ctx, &e))
      continue;
    q->key[n] = q->key[i];
    q->slot[n++] = q->slot[i];
  }
  q->n = n;
  /* Floyd's heapify: sift down every parent, the last first. O(n), since
   * most nodes are near the bottom and move little. */
  for (size_t i = n > 1 ? (n - 2) / EVQ_D + 1 : 0; i-- > 0;)
    sift_down(q, i);
}
