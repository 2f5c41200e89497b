/* scheduler_fit.h - NVLink domains in buckets by their free GPUs, so the
 * scheduler's best fit (scheduler.c, best_fit_domain) is found without
 * scanning every rack. Internal to the scheduler; its own test holds it to
 * the scan it replaces (tests/work/test_scheduler_fit.c).
 *
 * Domains are numbered 0 .. n - 1 and each belongs to a class (the
 * scheduler's classes are the racks' GPU types). The best fit for n GPUs
 * in a set of classes is the domain with the fewest free GPUs that still
 * holds n, ties to the lowest number: what a scan in number order keeping
 * the first strict minimum finds. Each class keeps, for every free count
 * f, a two-level bitset of its domains with f free (bit i of the class's
 * i-th domain in number order, and a summary bit per nonzero word), so a
 * query looks at most (largest domain + 1) buckets of each class, each in
 * O(domains / 4096) words, and a change of a domain's count is O(1). */
#ifndef MODELS_SCHEDULER_FIT_H
#define MODELS_SCHEDULER_FIT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"

/* Every class, for sched__fit_best. */
#define SCHED_FIT_ALL UINT32_MAX

typedef struct sched_fit sched_fit;

/* Buckets for ndom domains: domain d is of class cls[d] (< nclass) and
 * holds up to size[d] GPUs, free[d] of them free now. NULL when out of
 * memory. The arrays are read, not kept. */
sched_fit *sched__fit_create(const uint32_t *cls, const uint32_t *size,
                             const uint32_t *free, size_t ndom, size_t nclass,
                             const sim_allocator *alloc);
void sched__fit_destroy(sched_fit *f);

/* Domain d's free count goes from `from` (what it was) to `to`. */
void sched__fit_move(sched_fit *f, uint32_t d, uint32_t from, uint32_t to);

/* The best fit for n >= 1 GPUs among the domains of class cls (or of
 * every class, SCHED_FIT_ALL): writes its number to dom and returns true,
 * or returns false, dom untouched, if no such domain holds n. */
bool sched__fit_best(const sched_fit *f, uint32_t n, uint32_t cls,
                     uint32_t *dom);

#endif
