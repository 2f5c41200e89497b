/* test_scheduler_layout.h - what the scheduler tests share: racks laid end
 * to end, schedulers made on them, and the checks of a placed gang
 * (test_scheduler.c, test_scheduler_passes.c, test_scheduler_random.c).
 * Header only. */
#ifndef TEST_SCHEDULER_LAYOUT_H
#define TEST_SCHEDULER_LAYOUT_H

#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler.h"

#define ANY SCHED_ANY_TYPE

/* ---- Helpers --------------------------------------------------------- */

/* Racks laid end to end from GPU 0. */
typedef struct layout {
  sched_rack racks[16];
  size_t n;
  uint32_t ngpus;
} layout;

/* Appends n racks of size GPUs in domains of domain GPUs. */
static inline void add_racks(layout *l, size_t n, uint32_t size,
                             uint32_t domain, uint32_t type) {
  for (size_t i = 0; i < n; i++) {
    assert_true(l->n < N_OF(l->racks));
    l->racks[l->n++] = (sched_rack){l->ngpus, size, type, domain};
    l->ngpus += size;
  }
}

static inline sched *create(const layout *l, sched_policy policy,
                            sched_admission admission) {
  sim_error err = {0};
  sched *s =
      sched_create(l->racks, l->n, l->ngpus, policy, admission, NULL, &err);
  if (s == NULL)
    fail_msg("sched_create: %s", err.msg);
  return s;
}

static inline sched *create_placer(const layout *l) {
  return create(l, SCHED_FCFS, SCHED_ADMIT_AND_CAP);
}

/* The rack holding GPU g, or -1. */
static inline int rack_at(const layout *l, uint32_t g) {
  for (size_t r = 0; r < l->n; r++)
    if (g >= l->racks[r].first && g - l->racks[r].first < l->racks[r].count)
      return (int)r;
  return -1;
}

/* Takes every GPU, then frees the first free[d] GPUs of each domain d
 * (racks in order, their domains in order): a fragmented fleet. */
static inline void leave_free(sched *s, const layout *l,
                              const uint32_t *pattern) {
  uint32_t *all = malloc(l->ngpus * sizeof *all);
  assert_non_null(all);
  assert_true(sched_place(s, l->ngpus, ANY, all));
  assert_int_equal(sched_free_gpus(s, ANY), 0);
  size_t d = 0;
  for (size_t r = 0; r < l->n; r++) {
    const sched_rack *k = &l->racks[r];
    for (uint32_t lo = k->first; lo < k->first + k->count; lo += k->domain) {
      for (uint32_t i = 0; i < pattern[d]; i++)
        all[i] = lo + i;
      sched_release(s, all, pattern[d++]);
    }
  }
  free(all);
}

/* Fails unless gpus[0..n) rise strictly (rack then index order, as the
 * racks here are laid out in index order) and lie in racks of type. */
static inline void assert_gang(const layout *l, const uint32_t *gpus,
                               uint32_t n, uint32_t type) {
  for (uint32_t i = 0; i < n; i++) {
    int r = rack_at(l, gpus[i]);
    if (r < 0 || (type != ANY && l->racks[r].type != type))
      fail_msg("GPU %u (rack %d) is not of type %u", gpus[i], r, type);
    if (i > 0 && gpus[i] <= gpus[i - 1])
      fail_msg("GPU %u follows GPU %u", gpus[i], gpus[i - 1]);
  }
}

#endif
