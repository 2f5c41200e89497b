/* queue.c - the pending-event set of the engine: a d-ary min-heap on
 * (time, seq) while it is small, a radix heap on the time when it is
 * large. Engine layer; it sees only alloc.h and err.h.
 *
 * Switching. Up to EVQ_TO_RADIX (16384) entries they sit in the heap; the
 * push that finds that many moves them all into the radix heap, and the
 * pop that finds EVQ_TO_HEAP (4096) or fewer moves them back. Each move is
 * O(n) and paid for by at least 12288 pushes or pops in between. The heap
 * keeps its array while the radix heap is used, so going back never
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
 * The heap. Entries sit in heap order in one array: key[i] holds
 * (time, seq, slot) packed into one 128-bit unsigned integer. The children of
 * node i are D*i+1 .. D*i+D, and no key is greater than its children's. seq is
 * unique, so no two keys are equal and the pop order is fully determined by the
 * pushes, whatever the heap shape.
 *
 * Places. For an entry pushed with slot | EVQ_TRACKED, pos[slot] keeps
 * a place from which evq_decrease finds it and walks it up: the engine's
 * move of a movable event earlier (engine.c). The place is written where
 * the entry is put (a push's or a sift's end, a compaction) or moved
 * down (sift_up), not where a walk down moves it up a level (walk_down,
 * hole_down): so the entry sits at its place or at one of its ancestors,
 * and locate tries those, at most a walk up. Writing the place at every
 * level of every walk cost most of what the tombstones saved (bench-10k's
 * request-level peak, a period: 26 k moves of tracked entries, the
 * pushes 84 k instructions more, the peak -69 k; kept here only where
 * put or moved down, the pushes 12 k fewer than before the places, the
 * peak -170 k, with 0.42 ancestors tried a decrease). Only tracked
 * entries pay the write; an untracked queue pays a test of the slot's
 * bit where an entry is put or moved down. The radix heap keeps no
 * places: its entries lose the bit, and evq_decrease refuses them.
 *
 * The array grows by doubling through the allocator hook and never
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
 * - The slot in the key's low word, beside a seq of 32 bits (issue 24,
 *   twenty-fourth session; in an array of its own before): a level of a
 *   walk moves one 16-byte key and reads no second array, and bench-10k's
 *   peak (2,352 entries pending) holds 37.6 KB, not 47 KB. A seq of 32
 *   bits runs out after 2^32 pushes (a request-level day pushes about
 *   2e8); then the engine renumbers what is queued (evq_renumber), which
 *   keeps every order. Smaller entries would not hold the three: the time
 *   takes 64 bits (nanoseconds, SIM_TIME_MAX for never), the slot 31.
 * - D = 2 (issue 24, fifteenth session; D = 8 before). At 1e5 pending
 *   D = 8 was the faster (10.3 against 9.4 M/s for 4, 6.3 for 2), but
 *   the radix heap takes over from 2^14 now, and at the sizes the heap
 *   still holds the binary one costs fewer instructions a level (one
 *   compare and one move, against a tournament of seven compares) for
 *   three times the levels: bench-10k at request level, 1,149 entries
 *   pending on average, 519 k -> 394 k instructions a period in the
 *   walks (docs/performance-log.md, fifteenth session). Hold model, M
 *   pops+pushes/s of the queue alone (engine column), D = 8 / 4 / 2:
 *   1e3 25.2 (20.9) / 28.7 (22.5) / 29.9 (23.3); 1e4 18.2 (15.2) / 17.2
 *   (14.2) / 17.6 (14.4): faster at 1e3, 3-5% slower at 1e4.
 * - Pop moves the hole at the root down to a leaf along the smaller
 *   children without comparing against the element that will fill it, then
 *   sifts the last element up from there (Floyd's bottom-up variant): the
 *   last element is a leaf, so it belongs near the bottom anyway.
 * - Beyond the L2 cache, pop prefetches the grandchildren of each node it
 *   visits: +25% at 1e6 pending, but -10% at 1e5, hence only there
 *   (measured with D = 8; the heap gets there only when the radix heap
 *   cannot be allocated). Where the caller's work between two queue
 *   operations evicts the heap from the first-level cache (the engine's
 *   request level, evq_prefetch), both walks down prefetch them at any
 *   size: with D = 2 the four are one or two lines (issue 24, thirtieth
 *   session, docs/performance-log.md).
 * - Pop leaves the root vacant (hole) and the next operation fills it: a
 *   push puts its entry there and walks down only as far as it belongs
 *   (fill_root), anything else moves the last entry in as above
 *   (close_hole). In the hold model (random keys, which belong near the
 *   bottom) this made no difference in time. In the engine almost every
 *   handler schedules its next event, mostly due soon (an arrival's
 *   successor, a replica's next change), so a pop and a push become one
 *   short walk: bench-10k at request level 8.21 M -> 8.08 M instructions a
 *   simulated second (docs/performance-log.md, tenth session), the same pops.
 *   The order of pops is the keys' (unique), so it does not change.
 * Tried and dropped: aligning child groups to cache lines (no change). A
 * ladder queue would be faster still at 1e6 but needs tuning to the time
 * distribution; the radix heap needs none. The radix heap, its
 * invariants and its measurements are in queue_radix.c. */
#include "queue.h"

#include <assert.h>
#include <string.h>

#include "err.h"
#include "queue_internal.h"
#include "vec.h"

enum {
  EVQ_D = 2,              /* children per node */
  EVQ_MIN_CAP = 64,       /* first size of the array */
  EVQ_FAR = 1 << 17,      /* from here (2 MB of keys, the L2 cache of the
                             project's machines) pop prefetches */
  EVQ_TO_RADIX = 1 << 14, /* a push from this many on switches to the
                             radix heap */
  EVQ_TO_HEAP = 1 << 12,  /* a pop from this many down switches back */
};

_Static_assert(EVQ_D == 2, "min_child compares two");
/* A hint to load an address into the cache; no effect where unknown. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif
/* ---- The heap ---------------------------------------------------------- */

/* Makes the array hold need entries at least, doubling; SIM_ENOMEM
 * leaves the entries and cap as they were. */
static int grow_to(evq *q, size_t need) {
  /* Asking for EVQ_MIN_CAP at least keeps the first size. */
  if (need < EVQ_MIN_CAP)
    need = EVQ_MIN_CAP;
  return sim_vec_reserve(&q->alloc, &q->key, &q->cap, need, sizeof *q->key);
}

/* Writes key k at i, and i as its entry's place when it is tracked:
 * where an entry is put or moved down. An untracked queue (the hold
 * model) never takes the branch. */
static inline void put(evq *q, size_t i, evq_key k) {
  q->key[i] = k;
  uint32_t s = key_slot(k);
  if (s & EVQ_TRACKED)
    q->pos[s & ~EVQ_TRACKED] = (uint32_t)i;
}

/* Puts k into the hole at i, moving greater parents down, no higher
 * than top (0, or under a vacant root its children's last, EVQ_D). In
 * line in its callers (a push past a filled root, a hole's close). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline void
sift_up(evq *q, size_t i, size_t top, evq_key k) {
  while (i > top) {
    size_t p = (i - 1) / EVQ_D;
    if (!key_less(k, q->key[p]))
      break;
    put(q, i, q->key[p]);
    i = p;
  }
  put(q, i, k);
}

/* The smaller of the children c and c + 1 (when c + 1 < n) of one node;
 * c < n. The compare's flag added, not branched on (a branch on random
 * keys mispredicts half the time). */
static inline size_t min_child(const evq_key *k, size_t c, size_t n) {
  if (c + 1 < n)
    return c + key_less(k[c + 1], k[c]);
  return c;
}

/* Asks for the lines of the four grandchildren under the children c
 * and c + 1 (the pairs at 2c + 1 and 2c + 3; one line or two), one pair
 * of which a walk down reads next: its loads wait then on this level's
 * compare alone, not on a load from the second-level cache as well. The
 * addresses are computed as integers: the grandchildren may lie past
 * the array, and a prefetch does not fault. Where the heap stays in the
 * first-level cache (the hold model) the asks only cost, hence q->ask
 * (evq_prefetch) or a heap past the second-level cache (EVQ_FAR). */
static inline void ask_grandchildren(const evq_key *key, size_t c) {
  uintptr_t g = (uintptr_t)key + (EVQ_D * c + 1) * sizeof *key;
  PREFETCH((const void *)g);
  PREFETCH((const void *)(g + 3 * sizeof *key));
}

/* Moves the hole at i down to a leaf of the first n entries along the
 * smaller children and returns where it ended; ask: the grandchildren
 * asked for at each level. In line in close_hole (the renumbering's
 * sort, its other caller, had the compiler put it out of line: 11.4 k
 * instructions a peak period more), a constant ask there. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline size_t
hole_down(evq *q, size_t i, size_t n, bool ask) {
  for (size_t c = EVQ_D * i + 1; c < n; c = EVQ_D * i + 1) {
    if (ask)
      ask_grandchildren(q->key, c);
    size_t m = min_child(q->key, c, n);
    q->key[i] = q->key[m]; /* up: its place stays an ancestor's */
    i = m;
  }
  return i;
}

/* Puts k at i of the entries before end, moving smaller children
 * up: the classic walk down, which stops where k belongs. The loop runs
 * over the nodes with two children (i < pairs), a last lone child after
 * it: the loop through min_child tested for the lone child at every
 * level (35 instructions a level, 30 now; an event pushed for a
 * busy replica's next change walks 8 to 11 levels at bench-10k's peak).
 * hole_down split the same way counted 24 -> 23 a level and more a call:
 * no gain, so it stays as it was. ask: as hole_down's, a constant in
 * each caller, so that each compiles a loop of its own. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline void
walk_down(evq *q, size_t i, size_t end, evq_key k, bool ask) {
  evq_key *key = q->key;
  /* i has two children below end while i < pairs */
  size_t pairs = end > 0 ? (end - 1) / EVQ_D : 0;
  while (i < pairs) {
    size_t c = EVQ_D * i + 1;
    if (ask)
      ask_grandchildren(key, c);
    const evq_key *kc = key + c;
    size_t right = key_less(kc[1], kc[0]);
    evq_key km = kc[right];
    if (!key_less(km, k))
      goto place;
    key[i] = km; /* up: its place stays an ancestor's */
    i = c + right;
  }
  size_t c = EVQ_D * i + 1;
  if (c < end && key_less(key[c], k)) {
    key[i] = key[c];
    i = c;
  }
place:
  put(q, i, k);
}

/* Sift-down of the entry at i, for heapify: there the entry usually
 * stays high, so the bottom-up walk does not pay. */
static void sift_down(evq *q, size_t i) {
  walk_down(q, i, q->n, q->key[i], false);
}

/* Puts k into the vacant root of the n entries at 1 .. n. A new
 * event is mostly due soon, so it stays near the root. In line in the
 * push (walk_down's call and its saved registers a push less). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline void
fill_root(evq *q, size_t n, evq_key k) {
  if (q->ask)
    walk_down(q, 0, n + 1, k, true);
  else
    walk_down(q, 0, n + 1, k, false);
}

/* Fills the vacant root with the last entry, as an eager pop would have. */
static void close_hole(evq *q) {
  q->hole = false;
  size_t n = q->n;
  if (n == 0)
    return;
  size_t hole = q->ask || n >= EVQ_FAR ? hole_down(q, 0, n, true)
                                        : hole_down(q, 0, n, false);
  sift_up(q, hole, 0, q->key[n]);
}

static int heap_push(evq *q, evq_key k) {
  if (q->hole) { /* the pop's hole taken by the push: no walk to a leaf */
    q->hole = false;
    fill_root(q, q->n++, k);
    return SIM_OK;
  }
  if (q->n == q->cap && grow_to(q, q->cap + 1) != SIM_OK)
    return SIM_ENOMEM;
  sift_up(q, q->n++, 0, k);
  return SIM_OK;
}

/* The entry at position i. */
static evq_entry entry_at(const evq *q, size_t i) {
  evq_key k = q->key[i];
  return (evq_entry){.time = key_time(k),
                     .seq = key_seq(k),
                     .slot = key_slot(k) & ~EVQ_TRACKED};
}

/* Under a vacant root the smallest entry is the root's smallest child. */
static bool heap_peek(const evq *q, evq_entry *out) {
  if (q->n == 0)
    return false;
  *out = entry_at(q, q->hole ? min_child(q->key, 1, q->n + 1) : 0);
  return true;
}

/* Takes the root and leaves it vacant: the engine's handler usually pushes
 * its next event at once, and that push fills the root (fill_root) in
 * place of this pop's walk to a leaf and the push's walk up. */
static bool heap_pop(evq *q, evq_entry *out) {
  if (q->hole)
    close_hole(q);
  if (q->n == 0)
    return false;
  *out = entry_at(q, 0);
  q->hole = --q->n > 0;
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
  if (q->hole)
    close_hole(q);
  size_t n = 0;
  for (size_t i = 0; i < q->n; i++) {
    evq_entry e = entry_at(q, i);
    if (!keep(ctx, &e))
      continue;
    put(q, n++, q->key[i]);
  }
  q->n = n;
  heapify(q);
}

/* ---- Places kept for evq_decrease ------------------------------------ */

/* Makes room in pos for slot's place (slot < EVQ_TRACKED); SIM_ENOMEM
 * leaves pos as it was. New places start at 0, a value locate checks
 * like any other. */
NOINLINE static int pos_grow(evq *q, uint32_t slot) {
  size_t cap = q->pcap;
  if (sim_vec_reserve(&q->alloc, &q->pos, &cap, (size_t)slot + 1,
                      sizeof *q->pos) != SIM_OK)
    return SIM_ENOMEM;
  memset(q->pos + q->pcap, 0, (cap - q->pcap) * sizeof *q->pos);
  q->pcap = cap;
  return SIM_OK;
}

/* Where the heap holds the tracked entry (slot, seq), into *at; false
 * when it does not know (the radix heap holds the entries, or the entry
 * came back from it untracked). The entry sits at its kept place or at
 * one of its ancestors (queue.c's header), each checked: seqs are
 * unique, so a match is that entry. */
static bool locate(const evq *q, uint32_t slot, uint64_t seq, size_t *at) {
  if (q->radix || slot >= q->pcap)
    return false;
  /* under a vacant root the entries sit at 1 .. n */
  size_t first = q->hole, end = q->n + q->hole;
  uint64_t lo = key_lo(key_make(0, seq, slot | EVQ_TRACKED));
  for (size_t i = q->pos[slot];; i = (i - 1) / EVQ_D) {
    if (i >= first && i < end && key_lo(q->key[i]) == lo) {
      *at = i;
      return true;
    }
    if (i == 0)
      return false;
  }
}

/* ---- Renumbering ------------------------------------------------------ */

/* Sorts the heap's n entries ascending in place, no memory asked for:
 * heapsort's pops, each smallest to the end just freed, then the
 * descending array reversed. A sorted array is a heap. */
static void heap_sort(evq *q) {
  evq_key *key = q->key;
  for (size_t m = q->n; m > 1; m--) {
    evq_key min = key[0];
    sift_up(q, hole_down(q, 0, m - 1, false), 0, key[m - 1]);
    key[m - 1] = min;
  }
  for (size_t i = 0, j = q->n; i + 1 < j; i++, j--) {
    evq_key t = key[i];
    key[i] = key[j - 1];
    key[j - 1] = t;
  }
}

/* The heap's entries numbered in their order, sorted first: their keys
 * keep the order, so the array stays a heap. */
static void heap_renumber(evq *q, evq_renumber_fn fn, void *ctx) {
  if (q->hole)
    close_hole(q);
  heap_sort(q);
  for (size_t i = 0; i < q->n; i++) {
    evq_key k = q->key[i];
    put(q, i, key_make(key_hi(k), i, key_slot(k)));
    fn(ctx, key_slot(k) & ~EVQ_TRACKED, i);
  }
}

/* ---- Switching between the two ---------------------------------------- */

/* Moves the heap's entries into the radix heap, relative to the smallest
 * (a push below it until the next pop lowers last once, at most O(n)).
 * SIM_ENOMEM (no room for the radix heap) leaves the heap as it was. The
 * entries go over in (time, seq) order, popped: then every time's entries
 * are appended in seq order, where the heap's array order would have made
 * the ring insert, O(k^2) for k equal times. O(n log n), once. */
NOINLINE static int to_radix(evq *q) {
  if (q->n + 1 > q->room && evq__rdx_grow(q) != SIM_OK)
    return SIM_ENOMEM;
  size_t n = q->n;
  evq_entry e;
  assert(!q->hole); /* evq_push fills a hole instead */
  q->last = key_hi(q->key[0]);
  while (evq_pop(q, &e)) /* the heap's pop: radix is still false */
    evq__rdx_place(q, (uint64_t)e.time ^ SIGN_BIT, e.seq, e.slot);
  q->n = n;
  q->radix = true;
  return SIM_OK;
}

/* Moves the radix heap's entries back into the heap's array, which held
 * more when the radix heap took over (evq_renumber grows it first), and
 * heapifies them: no allocation. */
NOINLINE static void to_heap(evq *q) {
  assert(q->n <= q->cap);
  evq__rdx_to_heap(q);
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
  evq__rdx_init(q);
  return q;
}

void evq_destroy(evq *q) {
  if (q == NULL)
    return;
  sim_allocator alloc = q->alloc;
  sim_free(&alloc, q->key);
  sim_free(&alloc, q->pos);
  sim_free(&alloc, q->ring);
  sim_free(&alloc, q->blk);
  sim_free(&alloc, q);
}

int evq_push_at(evq *q, int64_t time, uint64_t seq, uint32_t slot) {
  /* Without room for the radix heap, the heap goes on. The radix heap
   * keeps no places. */
  if (q->radix || (!q->hole && q->n >= EVQ_TO_RADIX && to_radix(q) == SIM_OK))
    return evq__rdx_push(q, (evq_entry){time, seq, slot & ~EVQ_TRACKED});
  if ((slot & EVQ_TRACKED) && (slot & ~EVQ_TRACKED) >= q->pcap &&
      pos_grow(q, slot & ~EVQ_TRACKED) != SIM_OK)
    return SIM_ENOMEM;
  assert(seq < EVQ_SEQS);
  return heap_push(q, key_make((uint64_t)time ^ SIGN_BIT, seq, slot));
}

/* A smaller key walks up from the entry's place. Under a vacant root it
 * stops at the root's children: the root is filled later (close_hole or
 * fill_root), from them or from the next push. */
bool evq_decrease(evq *q, uint32_t slot, uint64_t seq, int64_t to_time,
                  uint64_t to_seq) {
  size_t i;
  assert(to_seq < EVQ_SEQS);
  evq_key k =
      key_make((uint64_t)to_time ^ SIGN_BIT, to_seq, slot | EVQ_TRACKED);
  if (!locate(q, slot, seq, &i) || !key_less(k, q->key[i]))
    return false;
  sift_up(q, i, q->hole ? EVQ_D : 0, k);
  return true;
}

void evq_untrack(evq *q, uint32_t slot, uint64_t seq) {
  size_t i;
  if (locate(q, slot, seq, &i))
    q->key[i] = key_make(key_hi(q->key[i]), seq, slot);
}

int evq_push(evq *q, evq_entry e) {
  return evq_push_at(q, e.time, e.seq, e.slot);
}

bool evq_peek(const evq *q, evq_entry *out) {
  return q->radix ? evq__rdx_peek(q, out) : heap_peek(q, out);
}

bool evq_first(evq *q, evq_entry *out) {
  if (q->hole)
    close_hole(q);
  return evq_peek(q, out);
}

bool evq_pop(evq *q, evq_entry *out) {
  if (q->radix) {
    if (q->n > EVQ_TO_HEAP)
      return evq__rdx_pop(q, out);
    to_heap(q);
  }
  return heap_pop(q, out);
}

/* evq_pop_before's rarer paths, out of its line so that its check, on
 * every event of a run with sources, saves no registers (a call from it
 * is its last step): the radix heap's first entry found (evq_peek) and
 * then popped; a pop that closes the vacant root first. */
NOINLINE static bool pop_before_radix(evq *q, int64_t time, uint64_t seq,
                                      evq_entry *out) {
  evq_entry first;
  return evq_peek(q, &first) &&
         (first.time < time || (first.time == time && first.seq < seq)) &&
         evq_pop(q, out);
}

NOINLINE static bool pop_closing(evq *q, evq_entry *out) {
  return heap_pop(q, out);
}

/* The heap's first entry is read where it lies: the root, or under a
 * vacant root the root's smaller child, which the pop's close of the
 * hole brings up. */
bool evq_pop_before(evq *q, int64_t time, uint64_t seq, evq_entry *out) {
  assert(seq < EVQ_SEQS);
  if (q->radix)
    return pop_before_radix(q, time, seq, out);
  if (q->n == 0)
    return false;
  evq_key first = q->key[q->hole ? min_child(q->key, 1, q->n + 1) : 0];
  /* slot 0 is the least a slot can be, and seqs are unique, so an entry
   * with the seq itself does not come before */
  if (!key_less(first, key_make((uint64_t)time ^ SIGN_BIT, seq, 0)))
    return false;
  return q->hole ? pop_closing(q, out) : heap_pop(q, out);
}

size_t evq_size(const evq *q) { return q->n; }

void evq_prefetch(evq *q, bool on) { q->ask = on; }

/* The radix heap's entries come to the heap's array first (grown to
 * hold them: it holds only what it held when the radix heap took over),
 * heapified for the sort; the next push past EVQ_TO_RADIX moves them
 * back. Untracked, as the radix heap's entries are. */
int evq_renumber(evq *q, evq_renumber_fn fn, void *ctx) {
  if (q->radix) {
    if (grow_to(q, q->n) != SIM_OK)
      return SIM_ENOMEM;
    to_heap(q);
  }
  heap_renumber(q, fn, ctx);
  return SIM_OK;
}

void evq_compact(evq *q, evq_keep_fn keep, void *ctx) {
  if (q->radix)
    evq__rdx_compact(q, keep, ctx);
  else
    heap_compact(q, keep, ctx);
}
