/* each_pair.h - a control_each_fn (control_set_each) on two threads,
 * shared by tests/control/test_control_each.c and tests/bench/
 * bench_control_each.c: the caller runs the even indices of a call and
 * one worker the odd ones, at once, each index on the same thread every
 * call. The worker spins (yielding) on a generation count: the splits
 * are some 100 us, and a wake-up would cost a good part of that. */
#ifndef TESTS_EACH_PAIR_H
#define TESTS_EACH_PAIR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define EACH_PAIR_MAX 1024 /* indices a call at most */

typedef struct each_pair {
  pthread_t thread;
  atomic_uint gen, done; /* calls posted, and finished by the worker */
  atomic_bool quit;
  size_t n;
  int (*fn)(void *, size_t);
  void *fctx;
  int rc[EACH_PAIR_MAX];
  /* The benchmark's clock, or NULL (a test never reads one): with it,
   * half_s holds the last call's halves, by thread. */
  double (*clock)(void);
  double half_s[2];
} each_pair;

/* Zeroes *p, sets its clock (NULL for none) and starts its worker:
 * SIM_OK, or SIM_ENOMEM if the thread cannot start. */
int each_pair_start(each_pair *p, double (*clock)(void));

/* Stops and joins the worker. */
void each_pair_stop(each_pair *p);

/* control_each_fn on the pair (ctx): fn(fctx, i) for i < n, i on thread
 * i % 2; the first failing index's code, or SIM_ERANGE (nothing run) for
 * more than EACH_PAIR_MAX indices. */
int each_pair_each(void *ctx, size_t n, int (*fn)(void *, size_t), void *fctx);

#endif
