/* test_inference_route.c - the routing tree of an inference service
 * (models/work/inference_heap.c) against the scan of the keys it
 * replaced the routing heap for: the smallest key (up before down, then
 * load, then index) after every update, for fleets of several sizes
 * whose loads move by one as arrivals and completions move them, with
 * replicas going down and up, loads past the bitmaps' (ROUTE_LOADS: the
 * tree's) and fleets past their three levels (the tree alone). Equal
 * minima would route differently, so the test asks for the very key the
 * heap's top held. And a replica
 * emptied (inf__replica_empty, a replica going down) gives its requests
 * back to the pool in order: queue, prefill, then the heap from its last,
 * so the slots later arrivals take are the ones they always took. And a
 * replica's decoding heap pops by finish tag, the lower index on ties. */
#include "test_util.h"

#include "inference_internal.h"

/* The key inference_heap.c gives a replica (load_key). */
static uint64_t key_of(bool down, uint64_t load, uint32_t k) {
  return (uint64_t)down << 63 | load << 32 | k;
}

static uint64_t scan_min(const uint64_t *key, uint32_t n) {
  uint64_t m = UINT64_MAX;
  for (uint32_t k = 0; k < n; k++)
    m = key[k] < m ? key[k] : m;
  return m;
}

/* Numerical Recipes' 64-bit LCG; the high bits are the good ones. */
static uint32_t lcg(uint64_t *x) {
  *x = *x * 6364136223846793005u + 1442695040888963407u;
  return (uint32_t)(*x >> 33);
}

typedef struct route_case {
  const char *name;
  uint32_t n;    /* replicas */
  uint32_t down; /* one update in down is a replica going down or up */
  uint64_t seed;
  uint32_t grow; /* a load moves up in grow - 1 of grow (0: 1 of 2) */
} route_case;

static const route_case cases[] = {
    {"one replica", 1, 0, 1, 0},
    {"two replicas", 2, 0, 2, 0},
    {"three: a padded tree", 3, 8, 3, 0},
    {"a power of two", 64, 16, 4, 0},
    {"one past a power of two", 65, 16, 5, 0},
    {"a service of bench-10k", 720, 50, 6, 0},
    {"bench-10k's replicas in one service", 2164, 0, 7, 0},
    {"downs often", 100, 3, 8, 0},
    {"loads past the bitmaps'", 40, 9, 9, 3},
    {"loads past them, downs rare", 130, 400, 10, 4},
    {"one past a bitmap's 64^2", 4097, 30, 11, 0},
    {"past a load's three levels: the tree alone", 262145, 20, 12, 0},
};

/* The buckets' marks are exactly their words' (inference_internal.h,
 * route_tree): a sum word's bit for each nonzero bits word, a top bit
 * for each nonzero sum word, a loads bit for each nonzero top. An update
 * sets the marks above a word only when the word was empty, so a mark
 * left or missing would route wrongly later. */
static void assert_marks(const route_tree *t) {
  if (t->bits == NULL)
    return;
  for (uint32_t load = 0; load < ROUTE_LOADS; load++) {
    for (uint32_t w = 0; w < t->words; w++) {
      bool any = t->bits[(size_t)load * t->words + w] != 0;
      uint64_t sum = t->sums[(size_t)load * t->nsum + w / 64];
      assert_int_equal(any, (sum >> (w % 64)) & 1);
    }
    for (uint32_t s = 0; s < t->nsum; s++) {
      bool any = t->sums[(size_t)load * t->nsum + s] != 0;
      assert_int_equal(any, (t->top[load] >> s) & 1);
    }
    assert_int_equal(t->top[load] != 0, (t->loads >> load) & 1);
  }
}

/* Whether the next load change is up. */
static bool grows(const route_case *c, uint64_t *x) {
  return c->grow ? lcg(x) % c->grow != 0 : lcg(x) % 2 == 0;
}

static void test_route(void **state) {
  const route_case *c = *state;
  const sim_allocator *a = sim_allocator_default();
  route_tree t = {0};
  assert_int_equal(inf__route_init(a, &t, c->n), SIM_OK);
  uint64_t *key = test_calloc(c->n, sizeof *key);
  uint64_t *load = test_calloc(c->n, sizeof *load);
  bool *down = test_calloc(c->n, sizeof *down);
  for (uint32_t k = 0; k < c->n; k++)
    key[k] = key_of(false, 0, k);
  assert_true(inf__route_min(&t) == scan_min(key, c->n));
  uint64_t x = c->seed;
  int steps = c->n > 10000 ? 500 : 20000; /* the scan is O(n) a step */
  for (int step = 0; step < steps; step++) {
    uint32_t k = lcg(&x) % c->n;
    /* Arrivals go to the lightest; completions leave anywhere. */
    if (lcg(&x) % 2 == 0)
      k = (uint32_t)inf__route_min(&t);
    if (c->down > 0 && lcg(&x) % c->down == 0) {
      down[k] = !down[k];
      load[k] = 0; /* a replica that goes down drops what it holds */
    } else if (grows(c, &x) || load[k] == 0) {
      load[k]++;
    } else {
      load[k]--;
    }
    key[k] = key_of(down[k], load[k], k);
    inf__route_set(&t, k, key[k]);
    if (inf__route_min(&t) != scan_min(key, c->n))
      fail_msg("step %d: tree %llx, scan %llx", step,
               (unsigned long long)inf__route_min(&t),
               (unsigned long long)scan_min(key, c->n));
    if (c->n <= 4097 && step % 97 == 0) /* O(words x loads) a check */
      assert_marks(&t);
  }
  assert_marks(&t);
  test_free(down);
  test_free(load);
  test_free(key);
  sim_free(a, t.node);
}

typedef struct empty_case {
  const char *name;
  uint32_t waiting, prefill, heap; /* requests in each */
} empty_case;

static const empty_case empties[] = {
    {"empty", 0, 0, 0},   {"a queue", 3, 0, 0},   {"a prefill", 0, 2, 0},
    {"a batch", 0, 0, 4}, {"all three", 2, 3, 5},
};

/* Fills replica r's lists and heap from s's pool, in the order taken. */
static void fill(inf_service *s, replica *r, const empty_case *c,
                 uint32_t *taken) {
  uint32_t n = 0;
  /* taken before s->pool is read: a take may grow (move) the pool, and a
   * call's arguments are evaluated in an unspecified order (clang read
   * the pool first, still NULL, and crashed) */
  for (uint32_t j = 0; j < c->waiting; j++) {
    taken[n] = inf__pool_take(s);
    inf__list_push(s->pool, &r->waiting, taken[n++]);
  }
  for (uint32_t j = 0; j < c->prefill; j++) {
    taken[n] = inf__pool_take(s);
    inf__list_push(s->pool, &r->prefill, taken[n++]);
  }
  assert_int_equal(inf__heap_reserve(s->alloc, r, c->heap + 1), SIM_OK);
  for (uint32_t j = 0; j < c->heap; j++) {
    taken[n] = inf__pool_take(s);
    s->pool[taken[n]].tag = 10.0 - j; /* pushed in reverse tag order */
    inf__heap_push(r, s->pool, taken[n++]);
  }
}

static void test_empty(void **state) {
  const empty_case *c = *state;
  inf_service s = {.alloc = sim_allocator_default(), .free_head = NONE};
  replica r = {0};
  uint32_t taken[16], n = c->waiting + c->prefill + c->heap;
  fill(&s, &r, c, taken);
  uint32_t want[16]; /* the free list after: the last given first */
  for (uint32_t j = 0; j < c->waiting + c->prefill; j++)
    want[n - 1 - j] = taken[j];
  for (uint32_t j = 0; j < c->heap; j++) /* the heap's array from its end */
    want[c->heap - 1 - j] = r.heap[r.nheap - 1 - j].i;
  assert_int_equal(inf__replica_empty(&s, &r), n);
  assert_int_equal(r.waiting.n + r.prefill.n + r.nheap, 0);
  for (uint32_t j = 0; j < n; j++)
    assert_int_equal(inf__pool_take(&s), want[j]);
  sim_free(s.alloc, r.heap);
  sim_free(s.alloc, s.pool_mem); /* s.pool is within it */
}

typedef struct pop_case {
  const char *name;
  uint32_t n;    /* requests pushed */
  uint32_t tags; /* distinct tags drawn from (ties when fewer than n) */
  uint64_t seed;
} pop_case;

static const pop_case pops[] = {
    {"one", 1, 1, 1},
    {"all tied", 9, 1, 2},
    {"a few ties", 40, 7, 3},
    {"no ties", 64, 1u << 30, 4},
    {"large, ties", 300, 50, 5},
};

/* A replica's decoding heap pops its requests by finish tag, the lower
 * pool index first on ties (the order the completions are counted in),
 * with pushes and pops mixed, its tags read from the pool at the push:
 * against a scan of what it holds. */
static void test_pops(void **state) {
  const pop_case *c = *state;
  inf_service s = {.alloc = sim_allocator_default(), .free_head = NONE};
  replica r = {0};
  bool *in = test_calloc(c->n, sizeof *in);
  uint64_t x = c->seed;
  uint32_t pushed = 0, held = 0;
  assert_int_equal(inf__heap_reserve(s.alloc, &r, c->n), SIM_OK);
  while (pushed < c->n || held > 0) {
    if (pushed < c->n && (held == 0 || lcg(&x) % 3 != 0)) {
      uint32_t i = inf__pool_take(&s);
      assert_int_equal(i, pushed);
      s.pool[i].tag = (double)(lcg(&x) % c->tags) * 0.5;
      inf__heap_push(&r, s.pool, i);
      in[i] = true;
      pushed++, held++;
      continue;
    }
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < pushed; i++)
      if (in[i] && (best == UINT32_MAX || s.pool[i].tag < s.pool[best].tag))
        best = i;
    assert_true(r.heap[0].tag == s.pool[best].tag);
    assert_int_equal(inf__heap_pop(&r), best);
    in[best] = false;
    held--;
  }
  assert_int_equal(r.nheap, 0);
  test_free(in);
  sim_free(s.alloc, r.heap);
  sim_free(s.alloc, s.pool_mem); /* s.pool is within it */
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, test_route, cases);
  TEST_ROWS(tests, n, test_empty, empties);
  TEST_ROWS(tests, n, test_pops, pops);
  return _cmocka_run_group_tests("inference_route", tests, n, NULL, NULL);
}
