/* crew.c - a crew of member engines that follow a leader (crew.h), run on
 * the caller's thread and workers. Engine layer: it sees engine.h and
 * alloc.h, and no model.
 *
 * Design. sim_crew_lead gives each member to one thread for good (its
 * data stays in that core's caches) and starts threads 1 .. T-1; thread 0
 * is whichever thread runs the leader. A job (bring the members to t, or
 * run a function on each) is posted by writing it and bumping gen; each
 * worker claims its share (its members) for that job, runs them in member
 * order, stores the results on its own cache lines and counts busy down;
 * the caller runs its own share meanwhile, then waits for busy to reach 0
 * and reads the results. The first failure in member order wins,
 * whichever thread saw it, so that the outcome does not depend on the
 * number of threads.
 *
 * A late worker. On a machine whose cores are taken by other work, a
 * worker may not be running when a job comes, and the caller would wait
 * a time slice (milliseconds) for it. So the caller, done with its own
 * share, claims any share not claimed yet and runs it itself: a share is
 * claimed by one compare-and-swap of its `taken` from an older job's
 * number to this one's, by its worker or by the caller, never both, and
 * whoever claims it counts busy down. A share moves whole (its members
 * stay together) and only when its worker is late: a running worker
 * spins and claims within a fraction of a microsecond of the post, long
 * before the caller is done with its own share, so on a quiet machine
 * each member stays on its thread. Which thread runs a share changes no
 * result. A worker reads the job only once it holds its share, and the
 * caller writes the next job only after every share is done, so the two
 * never touch the job at once.
 *
 * The wait. A job between two leader events is short (bench-10k's
 * request-level peak: about 2,000 member events a second of simulated
 * time, some 0.2 ms a thread) and comes 86,400 times a day, so a sleep
 * and a wake-up each time (a futex round trip, tens of microseconds until
 * the woken thread runs) would cost as much as the job. A waiting thread
 * spins first, with a pause instruction, for at most SPIN_NS, about three
 * of the leader's control ticks at that peak (0.37 ms each on average),
 * offering its core to others (sched_yield) after the first 50 us, and
 * only then sleeps on a condition variable. The waker pays the
 * mutex and the signal only when a sleeper has said so (the sleepers
 * counts): a sleeper counts itself before its last look at the word and
 * the waker writes the word before it looks at the count, both
 * sequentially consistent, so one of the two sees the other.
 *
 * A posted job (sim_crew_post). Between two member jobs a worker waits
 * while the caller runs the leader's serial work (bench-10k's request
 * level: the tick, ~28% of the day's samples with the worker idle,
 * docs/performance-log.md); a job posted then is run by a waiting worker
 * in its spin. Its word `side` goes IDLE -> POSTED (the caller, fn and
 * ctx written before) -> RUNNING (one worker's compare-and-swap) ->
 * POSTED again (fn wants more, when the worker is wanted) or DONE, and
 * back to IDLE by sim_crew_settle, which withdraws a POSTED job by a
 * compare-and-swap of its own, so fn never runs after settle returns.
 * Nothing wakes a sleeping worker for it: the job is optional. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "crew.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define CPU_PAUSE() __asm__ __volatile__("yield")
#else
#define CPU_PAUSE() ((void)0)
#endif

/* A cache line: what two threads write must not share one. */
#define LINE 64

/* How long a waiting thread spins before it sleeps, in ns (above). */
#define SPIN_NS ((int64_t)1000000)

/* How long it spins before it offers its core to other threads between
 * its looks (sched_yield: a system call, which returns at once when no
 * other thread waits for the core). With more threads than free cores
 * (a crew of 4 on 2 cores, or builds beside it) the thread it waits for
 * may be waiting for this core: pure spinning there cost a test of 4
 * threads on 2 busy cores seconds where 2 threads took 30 ms. */
#define SPIN_ALONE_NS ((int64_t)50000)

/* Pauses between two looks at the clock while spinning: the clock (about
 * 20 ns) read every 64 pauses costs little of the spin's speed. */
enum { SPIN_PAUSES = 64, MEMBERS_MIN = 4 };

typedef struct crew_member {
  sim_engine *e;
  double weight;
  unsigned thread; /* its thread, from sim_crew_lead on */
} crew_member;

typedef enum job_kind { JOB_FOLLOW, JOB_EACH, JOB_FOR } job_kind;

typedef struct crew_job {
  job_kind kind;
  sim_time t;                       /* JOB_FOLLOW: bring them to t */
  bool through;                     /* JOB_FOLLOW: their events at t too */
  int (*fn)(void *ctx, size_t i);   /* JOB_EACH, JOB_FOR */
  void *ctx;                        /* JOB_EACH, JOB_FOR */
  size_t n;                         /* JOB_FOR: the items */
} crew_job;

/* A thread's members and its results of the last job; on cache lines of
 * its own, as its thread writes them while the others run. */
typedef struct crew_thread {
  _Alignas(LINE) sim_crew *crew;
  const size_t *members; /* indices, ascending */
  size_t n;
  double load; /* the members' weights: the partition's measure */
  uint64_t ran;  /* events its members ran */
  size_t failed; /* its first failing member, or SIZE_MAX */
  int rc;        /* that member's code */
  pthread_t id;  /* workers only */
  /* The last job whose share was claimed, by its worker or the caller
   * (the file's comment). On a line apart from the results: the caller
   * tries it while the worker writes them. */
  _Alignas(LINE) _Atomic uint64_t taken;
} crew_thread;

struct sim_crew {
  sim_allocator alloc;
  void *raw; /* the allocation this struct sits in, aligned to a line */
  unsigned max_threads, nthreads;
  unsigned started; /* workers running: threads 1 .. started */
  bool led;
  bool sync_ready; /* mu and the conditions initialised */
  sim_engine *leader;
  crew_member *members;
  size_t n, cap;
  size_t *order;     /* the members grouped by thread (crew_thread.members) */
  void *threads_raw; /* threads' allocation, aligned to a line */
  crew_thread *threads;
  crew_job job; /* written before gen is bumped, read after */
  pthread_mutex_t mu;
  pthread_cond_t posted, finished;
  /* Written by the caller, read by the workers. */
  _Alignas(LINE) _Atomic uint64_t gen; /* jobs posted */
  _Atomic unsigned asleep_gen;         /* workers asleep on posted */
  _Atomic bool quit;                   /* the workers are to return */
  /* Written by the workers, read by the caller. */
  _Alignas(LINE) _Atomic uint64_t busy; /* shares not yet done */
  _Atomic unsigned asleep_busy;         /* the caller asleep on finished */
  /* The posted job (the file's comment): fn and ctx written by the
   * caller while side is SIDE_IDLE; done and gen0 by the worker that
   * holds it RUNNING. */
  sim_crew_side_fn side_fn;
  void *side_ctx;
  bool side_done;
  uint64_t side_gen0; /* the last gen its worker had seen */
  _Alignas(LINE) _Atomic uint64_t side;
  _Atomic bool side_stop;       /* settle waits: fn is to return */
  _Atomic unsigned asleep_side; /* the caller asleep on finished for it */
};

enum { SIDE_IDLE, SIDE_POSTED, SIDE_RUNNING, SIDE_DONE };

/* ---- Waiting --------------------------------------------------------- */

static void wake(sim_crew *c, _Atomic unsigned *asleep, pthread_cond_t *cond);

/* A worker's turn at the posted job, if one waits: true if it ran fn.
 * seen: the last member job the worker saw, so that one posted since
 * (even before it took the job) makes it wanted at once. */
static bool side_run(sim_crew *c, uint64_t seen) {
  uint64_t posted = SIDE_POSTED;
  /* Not taken again while settle waits: its withdrawal then wins at once
   * rather than racing the worker's next take. */
  if (atomic_load_explicit(&c->side_stop, memory_order_relaxed) ||
      atomic_load_explicit(&c->side, memory_order_relaxed) != SIDE_POSTED ||
      !atomic_compare_exchange_strong(&c->side, &posted, SIDE_RUNNING))
    return false;
  c->side_gen0 = seen;
  bool done = c->side_fn(c->side_ctx);
  c->side_done = c->side_done || done;
  atomic_store(&c->side, done ? SIDE_DONE : SIDE_POSTED);
  wake(c, &c->asleep_side, &c->finished);
  return true;
}

static int64_t clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Whether *word has what a waiter waits for: value (equal) or anything
 * else (!equal). */
static bool arrived(_Atomic uint64_t *word, uint64_t value, bool equal,
                    memory_order mo) {
  return (atomic_load_explicit(word, mo) == value) == equal;
}

/* Waits until *word equals value (equal) or differs from it (!equal):
 * spins for at most SPIN_NS, then sleeps on cond, having counted itself
 * in *asleep (the file's comment says why the wake cannot be lost). A
 * worker's (side) runs a posted job while it spins. */
static void wait_for(sim_crew *c, _Atomic uint64_t *word, uint64_t value,
                     bool equal, _Atomic unsigned *asleep,
                     pthread_cond_t *cond, bool side) {
  int64_t start = -1, spun = 0;
  for (unsigned i = 1;; i++) {
    if (arrived(word, value, equal, memory_order_acquire))
      return;
    if (side && side_run(c, value)) { /* a worker's wait: the posted job */
      start = -1;
      continue;
    }
    CPU_PAUSE();
    if (i % SPIN_PAUSES != 0)
      continue;
    int64_t now = clock_ns();
    if (start < 0)
      start = now;
    spun = now - start;
    if (spun > SPIN_NS)
      break;
    if (spun > SPIN_ALONE_NS) /* whoever it waits for may need this core */
      sched_yield();
  }
  pthread_mutex_lock(&c->mu);
  atomic_fetch_add(asleep, 1);
  while (!arrived(word, value, equal, memory_order_seq_cst))
    pthread_cond_wait(cond, &c->mu);
  atomic_fetch_sub(asleep, 1);
  pthread_mutex_unlock(&c->mu);
}

/* Wakes the sleepers on cond, after a sequentially consistent write of
 * the word they wait on: nothing to pay when none sleeps. */
static void wake(sim_crew *c, _Atomic unsigned *asleep, pthread_cond_t *cond) {
  if (atomic_load(asleep) == 0)
    return;
  pthread_mutex_lock(&c->mu);
  pthread_cond_broadcast(cond);
  pthread_mutex_unlock(&c->mu);
}

/* ---- Jobs ------------------------------------------------------------ */

/* Brings member m to the job's time; counts its events in *ran. */
static int member_follow(sim_engine *m, const crew_job *job, uint64_t *ran) {
  uint64_t before = sim_engine_events_run(m);
  int rc = job->through ? sim_engine_run(m, job->t)
                        : sim_engine_run_before(m, job->t);
  *ran += sim_engine_events_run(m) - before;
  return rc;
}

/* Thread th's items of a JOB_FOR, every one even after a failure: items
 * k, k + T, k + 2T ... for thread k of T, the same thread each time. */
static void thread_for(const sim_crew *c, crew_thread *th,
                       const crew_job *job) {
  size_t failed = SIZE_MAX;
  int first = SIM_OK;
  for (size_t i = (size_t)(th - c->threads); i < job->n; i += c->nthreads) {
    int rc = job->fn(job->ctx, i);
    if (rc != SIM_OK && failed == SIZE_MAX) {
      failed = i;
      first = rc;
    }
  }
  th->ran = 0;
  th->failed = failed;
  th->rc = first;
}

/* Does the job for thread th's members, in member order, every one even
 * after a failure, and stores its results. */
static void thread_run(const sim_crew *c, crew_thread *th,
                       const crew_job *job) {
  if (job->kind == JOB_FOR) {
    thread_for(c, th, job);
    return;
  }
  uint64_t ran = 0;
  size_t failed = SIZE_MAX;
  int first = SIM_OK;
  for (size_t k = 0; k < th->n; k++) {
    size_t i = th->members[k];
    int rc = job->kind == JOB_FOLLOW ? member_follow(c->members[i].e, job, &ran)
                                     : job->fn(job->ctx, i);
    if (rc != SIM_OK && failed == SIZE_MAX) {
      failed = i;
      first = rc;
    }
  }
  th->ran = ran;
  th->failed = failed;
  th->rc = first;
}

/* Claims share th for job g: true for the one claimant (its worker or
 * the caller). */
static bool claim(crew_thread *th, uint64_t g) {
  uint64_t prev = atomic_load(&th->taken);
  return prev < g && atomic_compare_exchange_strong(&th->taken, &prev, g);
}

/* Share th done: the last one wakes the caller if it sleeps. */
static void share_done(sim_crew *c) {
  if (atomic_fetch_sub(&c->busy, 1) == 1)
    wake(c, &c->asleep_busy, &c->finished);
}

static void *worker_main(void *arg) {
  crew_thread *th = arg;
  sim_crew *c = th->crew;
  uint64_t seen = 0;
  for (;;) {
    wait_for(c, &c->gen, seen, false, &c->asleep_gen, &c->posted, true);
    seen = atomic_load(&c->gen);
    if (atomic_load(&c->quit))
      return NULL;
    if (!claim(th, seen))
      continue; /* the caller ran it */
    crew_job job = c->job;
    thread_run(c, th, &job);
    share_done(c);
  }
}

/* Hands the job to the workers (none: nothing to hand); its number. */
static uint64_t post(sim_crew *c, const crew_job *job) {
  if (c->started == 0)
    return 0;
  c->job = *job;
  atomic_store_explicit(&c->busy, c->started, memory_order_relaxed);
  uint64_t g = atomic_fetch_add(&c->gen, 1) + 1; /* publishes job, busy */
  wake(c, &c->asleep_gen, &c->posted);
  return g;
}

/* Runs the job on every thread and gathers: the events run in *ran, the
 * first failing member in member order in *failed and its code returned
 * (SIM_OK: none). */
static int crew_run(sim_crew *c, const crew_job *job, uint64_t *ran,
                    size_t *failed) {
  uint64_t g = post(c, job);
  thread_run(c, &c->threads[0], job);
  for (unsigned k = 1; k <= c->started; k++)
    if (claim(&c->threads[k], g)) { /* a late worker's share */
      thread_run(c, &c->threads[k], job);
      share_done(c);
    }
  if (c->started > 0)
    wait_for(c, &c->busy, 0, true, &c->asleep_busy, &c->finished, false);
  int rc = SIM_OK;
  *failed = SIZE_MAX;
  for (unsigned k = 0; k < c->nthreads; k++) {
    const crew_thread *th = &c->threads[k];
    *ran += th->ran;
    if (th->failed < *failed) {
      *failed = th->failed;
      rc = th->rc;
    }
  }
  return rc;
}

/* The leader's hook (sim_follow_fn): a posted job settled first, as it
 * may touch what the members do. */
static int crew_follow(void *ctx, sim_time t, bool through, uint64_t *ran) {
  sim_crew *c = ctx;
  (void)sim_crew_settle(c);
  crew_job job = {.kind = JOB_FOLLOW, .t = t, .through = through};
  size_t failed;
  int rc = crew_run(c, &job, ran, &failed);
  if (rc == SIM_OK)
    return SIM_OK;
  return sim_engine_fail(c->leader, rc, "%s",
                         sim_engine_errmsg(c->members[failed].e));
}

/* Runs fn(ctx, i) for i = 0 .. n-1 on the caller's thread (no threads
 * yet, or one item), every one even after a failure: the first failing
 * item's code, as crew_run's is. */
static int run_here(size_t n, int (*fn)(void *ctx, size_t i), void *ctx) {
  int first = SIM_OK;
  for (size_t i = 0; i < n; i++) {
    int rc = fn(ctx, i);
    if (rc != SIM_OK && first == SIM_OK)
      first = rc;
  }
  return first;
}

int sim_crew_each(sim_crew *c, int (*fn)(void *ctx, size_t member),
                  void *ctx) {
  if (!c->led)
    return run_here(c->n, fn, ctx);
  crew_job job = {.kind = JOB_EACH, .fn = fn, .ctx = ctx};
  uint64_t ran = 0;
  size_t failed;
  return crew_run(c, &job, &ran, &failed);
}

int sim_crew_for(sim_crew *c, size_t n, int (*fn)(void *ctx, size_t i),
                 void *ctx) {
  if (!c->led || n < 2)
    return run_here(n, fn, ctx);
  crew_job job = {.kind = JOB_FOR, .fn = fn, .ctx = ctx, .n = n};
  uint64_t ran = 0;
  size_t failed;
  return crew_run(c, &job, &ran, &failed);
}

/* ---- The posted job -------------------------------------------------- */

bool sim_crew_post(sim_crew *c, sim_crew_side_fn fn, void *ctx) {
  (void)sim_crew_settle(c);
  if (c->started == 0)
    return false;
  c->side_fn = fn;
  c->side_ctx = ctx;
  c->side_done = false;
  atomic_store(&c->side, SIDE_POSTED); /* publishes fn, ctx */
  return true;
}

bool sim_crew_wanted(const sim_crew *c) {
  return atomic_load_explicit(&c->side_stop, memory_order_relaxed) ||
         atomic_load_explicit(&c->gen, memory_order_relaxed) != c->side_gen0;
}

bool sim_crew_settle(sim_crew *c) {
  if (atomic_load_explicit(&c->side, memory_order_relaxed) == SIDE_IDLE)
    return false;
  atomic_store(&c->side_stop, true);
  for (;;) {
    uint64_t s = atomic_load(&c->side);
    if (s == SIDE_RUNNING) {
      wait_for(c, &c->side, SIDE_RUNNING, false, &c->asleep_side,
               &c->finished, false);
      continue;
    }
    if (atomic_compare_exchange_strong(&c->side, &s, SIDE_IDLE))
      break; /* withdrawn (POSTED) or ended (DONE) */
  }
  atomic_store(&c->side_stop, false);
  return c->side_done;
}

/* ---- Building -------------------------------------------------------- */

sim_crew *sim_crew_create(const sim_allocator *a, unsigned threads) {
  if (a == NULL)
    a = sim_allocator_default();
  if (threads == 0)
    return NULL;
  void *raw = sim_alloc(a, sizeof(sim_crew) + LINE);
  if (raw == NULL)
    return NULL;
  sim_crew *c = sim_align_up(raw, LINE);
  memset(c, 0, sizeof *c);
  c->alloc = *a;
  c->raw = raw;
  c->max_threads = threads;
  c->nthreads = 1;
  atomic_init(&c->gen, 0);
  atomic_init(&c->asleep_gen, 0);
  atomic_init(&c->busy, 0);
  atomic_init(&c->quit, false);
  atomic_init(&c->asleep_busy, 0);
  atomic_init(&c->side, SIDE_IDLE);
  atomic_init(&c->side_stop, false);
  atomic_init(&c->asleep_side, 0);
  if (pthread_mutex_init(&c->mu, NULL) != 0)
    goto fail;
  if (pthread_cond_init(&c->posted, NULL) != 0) {
    pthread_mutex_destroy(&c->mu);
    goto fail;
  }
  if (pthread_cond_init(&c->finished, NULL) != 0) {
    pthread_cond_destroy(&c->posted);
    pthread_mutex_destroy(&c->mu);
    goto fail;
  }
  c->sync_ready = true;
  return c;
fail:
  sim_free(a, raw);
  return NULL;
}

int sim_crew_add(sim_crew *c, sim_engine *member, double weight) {
  if (c->led)
    return SIM_ESTATE;
  if (member == NULL || !(weight > 0) || !isfinite(weight))
    return SIM_EINVAL;
  if (c->n == c->cap) {
    size_t cap = c->cap == 0 ? MEMBERS_MIN : 2 * c->cap;
    crew_member *m = sim_resize(&c->alloc, c->members, cap * sizeof *m);
    if (m == NULL)
      return SIM_ENOMEM;
    c->members = m;
    c->cap = cap;
  }
  c->members[c->n++] = (crew_member){.e = member, .weight = weight};
  return SIM_OK;
}

/* Whether member i goes before member j in the partition's order: the
 * heavier first, equal weights in member order (so ties are settled the
 * same on every machine). */
static bool heavier(const crew_member *m, size_t i, size_t j) {
  return m[i].weight > m[j].weight || (m[i].weight == m[j].weight && i < j);
}

/* The least loaded thread, the first of equals. */
static unsigned least_loaded(const sim_crew *c) {
  unsigned best = 0;
  for (unsigned k = 1; k < c->nthreads; k++)
    if (c->threads[k].load < c->threads[best].load)
      best = k;
  return best;
}

/* Gives each member to a thread: the heaviest first, each to the least
 * loaded (the greedy rule for even sums; with a day's three services of
 * 500, 350 and 150 requests/s on two threads, 500 | 350 + 150). Then
 * c->order lists each thread's members in member order. */
static void partition(sim_crew *c) {
  size_t *by_weight = c->order; /* borrowed while sorting */
  for (size_t i = 0; i < c->n; i++) {
    size_t k = i; /* insertion sort: a handful of members */
    while (k > 0 && heavier(c->members, i, by_weight[k - 1])) {
      by_weight[k] = by_weight[k - 1];
      k--;
    }
    by_weight[k] = i;
  }
  for (size_t k = 0; k < c->n; k++) {
    crew_member *m = &c->members[by_weight[k]];
    m->thread = least_loaded(c);
    c->threads[m->thread].load += m->weight;
  }
  size_t at = 0;
  for (unsigned k = 0; k < c->nthreads; k++) {
    crew_thread *th = &c->threads[k];
    th->members = &c->order[at];
    for (size_t i = 0; i < c->n; i++)
      if (c->members[i].thread == k)
        c->order[at++] = i;
    th->n = (size_t)(&c->order[at] - th->members);
  }
}

/* Tells the workers to quit and joins them. */
static void stop_workers(sim_crew *c) {
  if (c->started == 0)
    return;
  atomic_store(&c->quit, true);
  atomic_fetch_add(&c->gen, 1);
  wake(c, &c->asleep_gen, &c->posted);
  for (unsigned k = 1; k <= c->started; k++)
    pthread_join(c->threads[k].id, NULL);
  c->started = 0;
}

/* The threads' and the order's arrays for nthreads threads. */
static int threads_alloc(sim_crew *c) {
  size_t n = c->n > 0 ? c->n : 1;
  c->order = sim_calloc(&c->alloc, n, sizeof *c->order);
  c->threads_raw =
      sim_calloc(&c->alloc, 1, c->nthreads * sizeof *c->threads + LINE);
  if (c->order == NULL || c->threads_raw == NULL)
    return SIM_ENOMEM;
  c->threads = sim_align_up(c->threads_raw, LINE);
  for (unsigned k = 0; k < c->nthreads; k++)
    c->threads[k] = (crew_thread){.crew = c, .failed = SIZE_MAX};
  for (unsigned k = 0; k < c->nthreads; k++)
    atomic_init(&c->threads[k].taken, 0);
  return SIM_OK;
}

static void threads_free(sim_crew *c) {
  sim_free(&c->alloc, c->order);
  sim_free(&c->alloc, c->threads_raw);
  c->order = NULL;
  c->threads_raw = NULL;
  c->threads = NULL;
}

int sim_crew_lead(sim_crew *c, sim_engine *leader) {
  if (c->led || leader == NULL)
    return SIM_ESTATE;
  size_t most = c->n > 0 ? c->n : 1;
  c->nthreads = c->max_threads < most ? c->max_threads : (unsigned)most;
  if (threads_alloc(c) != SIM_OK) {
    threads_free(c);
    c->nthreads = 1;
    return SIM_ENOMEM;
  }
  partition(c);
  for (unsigned k = 1; k < c->nthreads; k++) {
    if (pthread_create(&c->threads[k].id, NULL, worker_main,
                       &c->threads[k]) != 0) {
      unsigned wanted = c->nthreads;
      stop_workers(c);
      threads_free(c);
      c->nthreads = 1;
      return sim_engine_fail(leader, SIM_ENOMEM,
                             "crew: thread %u of %u did not start", k + 1,
                             wanted);
    }
    c->started = k;
  }
  c->leader = leader;
  c->led = true;
  sim_engine_follow(leader, crew_follow, c);
  return SIM_OK;
}

unsigned sim_crew_threads(const sim_crew *c) {
  return c->led ? c->nthreads : c->max_threads;
}

void sim_crew_destroy(sim_crew *c) {
  if (c == NULL)
    return;
  sim_allocator alloc = c->alloc;
  (void)sim_crew_settle(c);
  stop_workers(c);
  if (c->sync_ready) {
    pthread_cond_destroy(&c->finished);
    pthread_cond_destroy(&c->posted);
    pthread_mutex_destroy(&c->mu);
  }
  threads_free(c);
  sim_free(&alloc, c->members);
  sim_free(&alloc, c->raw);
}
