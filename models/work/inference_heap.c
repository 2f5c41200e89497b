/* inference_heap.c - the private containers of an inference service: the
 * request pool with its lists, each replica's decoding heap and the
 * service's routing tree (inference_internal.h). Everything names
 * requests and replicas by index. */
#include "inference_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

/* ------------------------------------------------------------------ */
/* Request pool and lists                                              */
/* ------------------------------------------------------------------ */

void inf__req_free(inf_service *s) {
  for (uint32_t k = 0; s->rep != NULL && k < s->nrep; k++)
    sim_free(s->alloc, s->rep[k].heap);
  sim_free(s->alloc, s->rep_mem);
  sim_free(s->alloc, s->route.node);
  sim_free(s->alloc, s->due);
  sim_free(s->alloc, s->bt);
  sim_free(s->alloc, s->pool_mem);
  sim_free(s->alloc, s->iv.ttft);
  sim_free(s->alloc, s->iv.tpot);
}

/* The pool's bytes at 64-byte lines: the allocator's 16-byte alignment
 * left three requests in four, or all of them, across two lines, and
 * each is read at its arrival, its admission, its prefill's end and its
 * completion, seconds apart. */
_Static_assert(sizeof(request) == 64, "a request is one cache line");
#define POOL_LINE ((uintptr_t)64)

/* The pool grown to cap slots: a new block, its first line boundary the
 * pool, the slots copied (growing in place would keep realloc's offset). */
static int pool_move(inf_service *s, size_t cap) {
  request *mem = sim_alloc(s->alloc, (cap + 1) * sizeof *mem);
  if (mem == NULL)
    return SIM_ENOMEM;
  request *p = sim_align_up(mem, POOL_LINE);
  if (s->pool_cap > 0)
    memcpy(p, s->pool, s->pool_cap * sizeof *p);
  sim_free(s->alloc, s->pool_mem);
  s->pool_mem = mem;
  s->pool = p;
  return SIM_OK;
}

static int pool_grow(inf_service *s) {
  if (s->pool_cap >= UINT32_MAX / 2)
    return SIM_ENOMEM;
  /* sim_vec_reserve's doubling: the first growth makes 1024 slots */
  size_t cap = sim_vec_grown_cap(
      s->pool_cap, s->pool_cap ? s->pool_cap + 1 : 1024, sizeof *s->pool);
  if (cap == 0 || cap > SIZE_MAX / sizeof *s->pool - 1 ||
      pool_move(s, cap) != SIM_OK)
    return SIM_ENOMEM;
  request *p = s->pool;
  for (uint32_t i = s->pool_cap; i < cap; i++)
    p[i].next = i + 1 < cap ? i + 1 : s->free_head;
  s->free_head = s->pool_cap;
  s->pool_cap = (uint32_t)cap;
  return SIM_OK;
}

/* A free slot, or NONE when out of memory. */
uint32_t inf__pool_take(inf_service *s) {
  if (s->free_head == NONE && pool_grow(s) != SIM_OK)
    return NONE;
  uint32_t i = s->free_head;
  s->free_head = s->pool[i].next;
  return i;
}

/* Gives back every request of list l; returns how many. */
static uint64_t list_empty(inf_service *s, req_list *l) {
  uint64_t n = 0;
  uint32_t i;
  for (; (i = inf__list_pop(s->pool, l)) != NONE; n++)
    inf__pool_give(s, i);
  return n;
}

uint64_t inf__replica_empty(inf_service *s, replica *r) {
  uint64_t n = list_empty(s, &r->waiting); /* first: the pool's order */
  n += list_empty(s, &r->prefill);
  for (; r->nheap > 0; n++)
    inf__pool_give(s, r->heap[--r->nheap].i);
  return n;
}

void inf__replica_drop(inf_service *s, replica *r) {
  s->tot.dropped += inf__replica_empty(s, r);
  r->kv_used = r->v = r->ctx_base = 0;
  inf__kv_clear(s, (uint32_t)(r - s->rep));
  r->pre_left = 0;
  r->phase = IDLE;
  r->load = (gpu_load){0, 0, 0};
  r->compute = 0;
  r->next_s = INFINITY;
}

/* ------------------------------------------------------------------ */
/* The decoding heap: smallest finish tag first, lower index on ties    */
/* ------------------------------------------------------------------ */

static bool finishes_first(const heap_entry *a, const heap_entry *b) {
  return a->tag < b->tag || (a->tag == b->tag && a->i < b->i);
}

static void heap_swap(heap_entry *h, uint32_t i, uint32_t j) {
  heap_entry t = h[i];
  h[i] = h[j];
  h[j] = t;
}

static void heap_up(heap_entry *h, uint32_t i) {
  while (i > 0 && finishes_first(&h[i], &h[(i - 1) / 2])) {
    heap_swap(h, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
}

static void heap_down(heap_entry *h, uint32_t n, uint32_t i) {
  for (;;) {
    uint32_t l = 2 * i + 1, m = i;
    if (l < n && finishes_first(&h[l], &h[m]))
      m = l;
    if (l + 1 < n && finishes_first(&h[l + 1], &h[m]))
      m = l + 1;
    if (m == i)
      return;
    heap_swap(h, i, m);
    i = m;
  }
}

/* Room for want requests, so pushes after admission cannot fail. */
int inf__heap_reserve(const sim_allocator *a, replica *r, uint32_t want) {
  size_t cap = r->heap_cap;
  if (want > UINT32_MAX / 2 ||
      sim_vec_reserve(a, &r->heap, &cap, want, sizeof *r->heap) != SIM_OK)
    return SIM_ENOMEM;
  r->heap_cap = (uint32_t)cap;
  return SIM_OK;
}

void inf__heap_push(replica *r, const request *pool, uint32_t i) {
  assert(r->nheap < r->heap_cap);
  r->heap[r->nheap] = (heap_entry){pool[i].tag, i};
  heap_up(r->heap, r->nheap++);
}

uint32_t inf__heap_pop(replica *r) {
  uint32_t top = r->heap[0].i;
  r->heap[0] = r->heap[--r->nheap];
  heap_down(r->heap, r->nheap, 0);
  return top;
}

/* ------------------------------------------------------------------ */
/* Routing: replicas by load, in bitmaps and a tournament tree         */
/* ------------------------------------------------------------------ */

/* Whether key (load_key's) is kept in t's buckets: an up replica's whose
 * load is below ROUTE_LOADS, when t has buckets. */
static bool bucketed(const route_tree *t, uint64_t key) {
  return t->bits != NULL && key < (uint64_t)ROUTE_LOADS << 32;
}

/* Puts a bucketed key's replica in its load's bitmap and marks the words
 * above it. In line: a call cost a third of an update. */
static inline __attribute__((always_inline)) void bucket_set(route_tree *t,
                                                             uint64_t key) {
  uint32_t load = (uint32_t)(key >> 32), k = (uint32_t)key;
  uint32_t w = k / 64, s = w / 64;
  t->bits[(size_t)load * t->words + w] |= 1ull << (k % 64);
  t->sums[(size_t)load * t->nsum + s] |= 1ull << (w % 64);
  t->top[load] |= 1ull << s;
  t->loads |= 1ull << load;
}

/* Takes a bucketed key's replica out of its load's bitmap, clearing the
 * marks above it that no longer have a bit under them. */
static inline __attribute__((always_inline)) void bucket_clear(route_tree *t,
                                                               uint64_t key) {
  uint32_t load = (uint32_t)(key >> 32), k = (uint32_t)key;
  uint32_t w = k / 64, s = w / 64;
  uint64_t *word = &t->bits[(size_t)load * t->words + w];
  if ((*word &= ~(1ull << (k % 64))) != 0)
    return;
  uint64_t *sum = &t->sums[(size_t)load * t->nsum + s];
  if ((*sum &= ~(1ull << (w % 64))) != 0)
    return;
  if ((t->top[load] &= ~(1ull << s)) == 0)
    t->loads &= ~(1ull << load);
}

/* Every one of t's n replicas at load 0 (t's bitmaps all 0 before). */
static void fill_load_0(route_tree *t, uint32_t n) {
  for (uint32_t k = 0; k < n; k++)
    t->bits[k / 64] |= 1ull << (k % 64);
  for (uint32_t w = 0; w < t->words; w++)
    t->sums[w / 64] |= 1ull << (w % 64);
  for (uint32_t s = 0; s < t->nsum; s++)
    t->top[0] |= 1ull << s;
  t->loads = 1;
}

/* Why a tree and not a heap: a replica's load moves by one at a time and
 * most replicas share a few loads, so an indexed heap sifted a replica
 * that went from 0 to 1 past every other idle one, to the bottom (about
 * 250 instructions an update in bench-10k). The tree's update walks from
 * the leaf to the root and stops where a node keeps its minimum. Its
 * root is the smallest key, which names the same replica the heap's top
 * did: keys are distinct (they hold the index), so the order is total.
 *
 * Why buckets beside it: an arrival raises the smallest key, so its walk
 * always went to the root (11 levels, about 120 instructions, for 1,200
 * replicas), and so did most completions. Keys of up replicas below
 * ROUTE_LOADS are kept as bits instead, one bitmap a load, whose first
 * set bit is the lightest index at that load: a few instructions an
 * update. They are below every other key (a larger load, or down), so
 * the first bit of the first load with one is the smallest key. The
 * tree holds the others, the bucketed ones as UINT64_MAX there. */
int inf__route_init(const sim_allocator *a, route_tree *t, uint32_t n) {
  uint32_t leaves = 1;
  while (leaves < n) {
    if (leaves > UINT32_MAX / 4)
      return SIM_ENOMEM;
    leaves *= 2;
  }
  size_t words = ((size_t)n + 63) / 64, nsum = (words + 63) / 64;
  bool bucket = nsum <= 64; /* a load's sum words fit one top word */
  size_t size =
      2 * (size_t)leaves + n + (bucket ? ROUTE_LOADS * (words + nsum) : 0);
  uint64_t *node = sim_calloc(a, size, sizeof *node);
  if (node == NULL)
    return SIM_ENOMEM;
  *t = (route_tree){.node = node,
                    .key = node + 2 * (size_t)leaves,
                    .bits = bucket ? node + 2 * (size_t)leaves + n : NULL,
                    .leaves = leaves,
                    .words = (uint32_t)words,
                    .nsum = (uint32_t)nsum};
  if (bucket)
    t->sums = t->bits + ROUTE_LOADS * words;
  /* Padding leaves hold the largest key, so they never win. */
  for (uint32_t k = 0; k < leaves; k++)
    t->node[leaves + k] = bucket || k >= n ? UINT64_MAX : k;
  for (uint32_t i = leaves - 1; i >= 1; i--) {
    uint64_t l = t->node[2 * i], r = t->node[2 * i + 1];
    t->node[i] = l < r ? l : r;
  }
  for (uint32_t k = 0; k < n; k++)
    t->key[k] = k;
  if (bucket && n > 0)
    fill_load_0(t, n);
  return SIM_OK;
}

static void tree_set(route_tree *t, uint32_t k, uint64_t key) {
  uint64_t *v = t->node;
  uint32_t i = t->leaves + k;
  v[i] = key;
  for (i /= 2; i >= 1; i /= 2) {
    uint64_t l = v[2 * i], r = v[2 * i + 1], m = l < r ? l : r;
    if (v[i] == m)
      return; /* the minimum above is unchanged too */
    v[i] = m;
  }
}

/* bucket_clear(t, old) then bucket_set(t, key) for one replica's two
 * bucketed keys: its word, sum word and bits worked out once, and the
 * marks above its new word set only when that word was empty (a mark is
 * set exactly when a word under it is nonzero, so they are already). */
static inline __attribute__((always_inline)) void
bucket_move(route_tree *t, uint64_t old, uint64_t key) {
  uint32_t k = (uint32_t)key, w = k / 64, s = w / 64;
  uint32_t from = (uint32_t)(old >> 32), to = (uint32_t)(key >> 32);
  uint64_t bit = 1ull << (k % 64), wbit = 1ull << (w % 64);
  uint64_t *word = &t->bits[(size_t)from * t->words + w];
  if ((*word &= ~bit) == 0) {
    uint64_t *sum = &t->sums[(size_t)from * t->nsum + s];
    if ((*sum &= ~wbit) == 0 && (t->top[from] &= ~(1ull << s)) == 0)
      t->loads &= ~(1ull << from);
  }
  word = &t->bits[(size_t)to * t->words + w];
  uint64_t was = *word;
  *word = was | bit;
  if (was == 0) {
    t->sums[(size_t)to * t->nsum + s] |= wbit;
    t->top[to] |= 1ull << s;
    t->loads |= 1ull << to;
  }
}

/* A move into, out of or within the tree: out of line, for the rare
 * update. */
static __attribute__((noinline)) void
route_set_tree(route_tree *t, uint32_t k, uint64_t old, uint64_t key) {
  bool was = bucketed(t, old), is = bucketed(t, key);
  if (was)
    bucket_clear(t, old);
  if (is)
    bucket_set(t, key);
  if (!(was && is)) /* into or out of the tree, or within it */
    tree_set(t, k, is ? UINT64_MAX : key);
}

/* inf__route_set in line: inf__load_changed's, twice a request. */
static inline __attribute__((always_inline)) void
route_update(route_tree *t, uint32_t k, uint64_t key) {
  uint64_t old = t->key[k];
  t->key[k] = key;
  /* Both bucketed: the bound is a power of two. Nearly every update. */
  if (t->bits != NULL && (old | key) < (uint64_t)ROUTE_LOADS << 32)
    bucket_move(t, old, key);
  else
    route_set_tree(t, k, old, key);
}

void inf__route_set(route_tree *t, uint32_t k, uint64_t key) {
  route_update(t, k, key);
}

/* Replica k's place in the routing order as one integer: up before down,
 * then by load, then by index. The tree holds these keys, so a
 * comparison reads neither replica. */
static uint64_t load_key(const inf_service *s, uint32_t k) {
  const replica *r = &s->rep[k];
  uint64_t load = (uint64_t)r->waiting.n + in_batch(r);
  if (load > INT32_MAX)
    load = INT32_MAX; /* more requests than memory could hold */
  return (uint64_t)r->down << 63 | load << 32 | k;
}

void inf__load_changed(inf_service *s, uint32_t k) {
  route_update(&s->route, k, load_key(s, k));
}
