/* team.c - the team's runs (team.h): a word of generation and next chunk,
 * claimed by compare-and-swap, and workers that spin a while between runs
 * and then sleep.
 *
 * Why one word: a worker late from one run (descheduled between reading
 * the run and claiming) must never take a chunk of the next with the last
 * run's function. A claim is a compare-and-swap of the whole word, and a
 * run's function, context and count are written only while the word is
 * closed (its chunk CLOSED), so a claim that succeeds read them whole.
 * Every atomic here is sequentially consistent: a run costs a handful of
 * them, against microseconds of work a chunk.
 *
 * Why spin: the factory's tick runs every few tens of microseconds of
 * wall time in a fluid day, and waking a sleeping thread costs about as
 * much as a chunk. A worker spins for SPIN_NS after its last chunk,
 * yielding every few turns, then sleeps on a condition variable; the
 * caller signals only when someone sleeps. Without the yields, on a
 * machine with more runnable threads than cores a worker that shared the
 * caller's core spun its whole SPIN_NS while the caller waited for the
 * core: one run in eight of the racks' update took 0.2 ms instead of
 * 4 us (measured under load 8.5). */
#define _GNU_SOURCE
#include "team.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "alloc.h"

#define CLOSED UINT32_MAX
#define SPIN_NS 200000 /* 0.2 ms: a few ticks of a fluid day */

struct sim_team {
  _Atomic uint64_t word; /* generation << 32 | next chunk */
  _Atomic(sim_team_fn) fn;
  _Atomic(void *) ctx;
  _Atomic size_t n;
  _Atomic size_t done;
  _Atomic int sleepers;
  _Atomic bool stop;
  uint32_t gen; /* the caller's: the last run's generation */
  unsigned nworkers;
  pthread_mutex_t mu;
  pthread_cond_t wake;
  pthread_t worker[SIM_TEAM_MAX_LANES - 1];
};

static inline uint64_t word_of(uint32_t gen, uint32_t chunk) {
  return (uint64_t)gen << 32 | chunk;
}
static inline uint32_t gen_of(uint64_t w) { return (uint32_t)(w >> 32); }
static inline uint32_t chunk_of(uint64_t w) { return (uint32_t)w; }

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Takes and does chunks of the run of word w's generation until none are
 * left or the run is over. */
static void take_chunks(sim_team *t, uint64_t w) {
  uint32_t gen = gen_of(w);
  for (;;) {
    sim_team_fn fn = atomic_load(&t->fn);
    void *ctx = atomic_load(&t->ctx);
    size_t n = atomic_load(&t->n);
    if (gen_of(w) != gen || chunk_of(w) == CLOSED || chunk_of(w) >= n)
      return;
    if (atomic_compare_exchange_weak(&t->word, &w, w + 1)) {
      fn(ctx, chunk_of(w));
      atomic_fetch_add(&t->done, 1);
      w = atomic_load(&t->word);
    }
  }
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The word of a run newer than generation seen, open for claims; 0 once
 * the team stops. Spins SPIN_NS, then sleeps until signalled. */
static uint64_t next_run(sim_team *t, uint32_t seen) {
  int64_t until = now_ns() + SPIN_NS;
  for (unsigned i = 1;; i++) {
    uint64_t w = atomic_load(&t->word);
    if (atomic_load(&t->stop))
      return 0;
    if (gen_of(w) != seen && chunk_of(w) != CLOSED)
      return w;
    relax();
    /* Give way now and then: on a busy machine a spinning worker may sit
     * on the caller's core while the caller waits for that core. */
    if (i % 64 == 0) {
      if (now_ns() > until)
        break;
      sched_yield();
    }
  }
  pthread_mutex_lock(&t->mu);
  atomic_fetch_add(&t->sleepers, 1);
  uint64_t w = atomic_load(&t->word);
  while (!atomic_load(&t->stop) && gen_of(w) == seen) {
    pthread_cond_wait(&t->wake, &t->mu);
    w = atomic_load(&t->word);
  }
  atomic_fetch_sub(&t->sleepers, 1);
  pthread_mutex_unlock(&t->mu);
  /* A run seen closed is being published: look again, spinning. */
  return atomic_load(&t->stop) ? 0 : next_run(t, seen);
}

static void *worker(void *arg) {
  sim_team *t = arg;
  uint32_t seen = 0;
  for (uint64_t w; (w = next_run(t, seen)) != 0;) {
    seen = gen_of(w);
    take_chunks(t, w);
  }
  return NULL;
}

static void wake_sleepers(sim_team *t) {
  if (atomic_load(&t->sleepers) == 0)
    return;
  pthread_mutex_lock(&t->mu);
  pthread_cond_broadcast(&t->wake);
  pthread_mutex_unlock(&t->mu);
}

sim_team *sim_team_new(unsigned lanes) {
  if (lanes < 2)
    return NULL;
  if (lanes > SIM_TEAM_MAX_LANES)
    lanes = SIM_TEAM_MAX_LANES;
  sim_team *t = sim_calloc(NULL, 1, sizeof *t);
  if (t == NULL)
    return NULL;
  if (pthread_mutex_init(&t->mu, NULL) != 0) {
    sim_free(NULL, t);
    return NULL;
  }
  if (pthread_cond_init(&t->wake, NULL) != 0) {
    pthread_mutex_destroy(&t->mu);
    sim_free(NULL, t);
    return NULL;
  }
  atomic_store(&t->word, word_of(0, CLOSED));
  while (t->nworkers < lanes - 1 &&
         pthread_create(&t->worker[t->nworkers], NULL, worker, t) == 0)
    t->nworkers++;
  if (t->nworkers == 0) {
    sim_team_free(t);
    return NULL;
  }
  return t;
}

void sim_team_free(sim_team *t) {
  if (t == NULL)
    return;
  atomic_store(&t->stop, true);
  pthread_mutex_lock(&t->mu);
  pthread_cond_broadcast(&t->wake);
  pthread_mutex_unlock(&t->mu);
  for (unsigned i = 0; i < t->nworkers; i++)
    pthread_join(t->worker[i], NULL);
  pthread_cond_destroy(&t->wake);
  pthread_mutex_destroy(&t->mu);
  sim_free(NULL, t);
}

unsigned sim_team_lanes(const sim_team *t) {
  return t == NULL ? 1 : t->nworkers + 1;
}

void sim_team_run(sim_team *t, size_t n, sim_team_fn fn, void *ctx) {
  assert(n < CLOSED);
  if (t == NULL || n < 2) {
    for (size_t c = 0; c < n; c++)
      fn(ctx, c);
    return;
  }
  uint32_t gen = ++t->gen;
  if (gen == 0) /* a worker's first "seen" is 0 */
    gen = ++t->gen;
  atomic_store(&t->word, word_of(gen, CLOSED));
  atomic_store(&t->fn, fn);
  atomic_store(&t->ctx, ctx);
  atomic_store(&t->n, n);
  atomic_store(&t->done, 0);
  atomic_store(&t->word, word_of(gen, 0));
  wake_sleepers(t);
  take_chunks(t, word_of(gen, 0));
  /* A worker inside a chunk: wait. On a machine with more threads than
   * cores it may have been descheduled, so give way now and then. */
  for (unsigned i = 1; atomic_load(&t->done) < n; i++) {
    relax();
    if (i % 1024 == 0)
      sched_yield();
  }
}

unsigned sim_team_auto_lanes(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return 1;
  int n = CPU_COUNT(&set);
  return n < 1 ? 1 : n > SIM_TEAM_MAX_LANES ? SIM_TEAM_MAX_LANES : (unsigned)n;
}
