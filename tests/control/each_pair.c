/* each_pair.c - the two threads' "for each" (each_pair.h) that the
 * control-each test checks and its benchmark times: one copy. */
#include "each_pair.h"

#include <sched.h>
#include <string.h>

#include "err.h"

static void pair_run(each_pair *p, size_t from) {
  double t0 = p->clock != NULL ? p->clock() : 0;
  for (size_t i = from; i < p->n; i += 2)
    p->rc[i] = p->fn(p->fctx, i);
  if (p->clock != NULL)
    p->half_s[from] = p->clock() - t0;
}

static void *pair_worker(void *arg) {
  each_pair *p = arg;
  unsigned seen = 0;
  for (;;) {
    unsigned g;
    while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen) {
      if (atomic_load_explicit(&p->quit, memory_order_acquire))
        return NULL;
      sched_yield();
    }
    seen = g;
    pair_run(p, 1);
    atomic_store_explicit(&p->done, g, memory_order_release);
  }
}

int each_pair_start(each_pair *p, double (*clock)(void)) {
  memset(p, 0, sizeof *p);
  p->clock = clock;
  return pthread_create(&p->thread, NULL, pair_worker, p) == 0 ? SIM_OK
                                                               : SIM_ENOMEM;
}

void each_pair_stop(each_pair *p) {
  atomic_store_explicit(&p->quit, true, memory_order_release);
  pthread_join(p->thread, NULL);
}

int each_pair_each(void *ctx, size_t n, int (*fn)(void *, size_t), void *fctx) {
  each_pair *p = ctx;
  if (n > EACH_PAIR_MAX)
    return SIM_ERANGE;
  p->n = n, p->fn = fn, p->fctx = fctx;
  unsigned g = atomic_load_explicit(&p->gen, memory_order_relaxed) + 1;
  atomic_store_explicit(&p->gen, g, memory_order_release);
  pair_run(p, 0);
  while (atomic_load_explicit(&p->done, memory_order_acquire) != g)
    sched_yield(); /* the worker's half: as long as the caller's */
  for (size_t i = 0; i < n; i++)
    if (p->rc[i] != SIM_OK)
      return p->rc[i];
  return SIM_OK;
}
