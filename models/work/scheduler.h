/* scheduler.h - the queue of training jobs and where gangs go (docs/MODELS.md,
 * Scheduler). Pure bookkeeping, no engine: the factory calls sched_pass when a
 * job arrives or ends, and starts what it returns.
 *
 * Placement packs a gang into as few racks and NVLink domains as it can:
 * a gang that fits one domain goes to the domain with the fewest free
 * GPUs that still holds it (best fit, so large holes stay for large
 * gangs); a larger one takes the racks with the most free GPUs first and
 * its last part best-fit, so it spans the fewest racks. Within each rack
 * the same rule picks the domains for the rack's part (fullest-free
 * first, the last part best-fit), so it spans the fewest domains, and
 * within a domain GPUs are taken in index order. Ties go to the lower
 * index, so placement is deterministic.
 *
 * Queue order: priority (higher first), then arrival, then submission.
 * FCFS starts jobs in that order while the head fits and stops at the
 * first that does not. EASY backfill (Lifka 1995; Mu'alem & Feitelson
 * 2001) gives the head a reservation at the earliest time enough GPUs of
 * its type free up (the shadow time, from the running jobs' estimated
 * ends) and lets later jobs start now if they fit now and either end by
 * the shadow time or use only GPUs the head will not need then (the
 * extra GPUs, used up by each such start). The reservation is computed
 * once, when the head blocks, from the running jobs given and those the
 * pass started before it. Types: SCHED_ANY_TYPE overlaps every type; a
 * job whose type cannot overlap the head's backfills whenever it fits.
 *
 * Admission: admit-and-cap starts whatever fits (the power policy then
 * caps it); power-aware starts a job only if its estimated extra power
 * fits the headroom the caller gives, which each start uses up. A job
 * held back for power blocks the queue under FCFS and is the head with a
 * reservation under EASY. The reservation holds GPUs, not power: later
 * jobs may use the headroom left, since the scheduler has no estimate of
 * when running jobs give power back. */
#ifndef MODELS_SCHEDULER_H
#define MODELS_SCHEDULER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "err.h"
#include "scenario.h"

/* Any GPU type. */
#define SCHED_ANY_TYPE UINT32_MAX

typedef struct sched_rack {
  uint32_t first, count; /* GPUs first .. first + count - 1 */
  uint32_t type;         /* GPU type index */
  uint32_t domain;       /* GPUs per NVLink domain; divides count */
} sched_rack;

typedef enum sched_policy { SCHED_FCFS, SCHED_EASY } sched_policy;
typedef enum sched_admission {
  SCHED_ADMIT_AND_CAP,
  SCHED_POWER_AWARE
} sched_admission;

/* How training jobs are queued and admitted, as a scenario gives it. */
typedef struct sched_config {
  int policy;    /* sched_policy: fcfs or easy */
  int admission; /* sched_admission: admit_and_cap or power_aware */
} sched_config;

/* The scenario's `scheduler` key (scheduler_scn.c): policy, admission. */
extern const scn_schema sched_schema;

typedef struct sched_job {
  size_t id; /* the caller's */
  uint32_t gpus;
  uint32_t type; /* or SCHED_ANY_TYPE */
  int64_t priority;
  double arrival_s;
  double runtime_s; /* estimate, for backfill */
  double power_w;   /* estimated extra power when it runs */
} sched_job;

/* A job that holds GPUs now, as the caller estimates it. */
typedef struct sched_running {
  double end_s;
  uint32_t gpus, type; /* type: of its GPUs, or SCHED_ANY_TYPE (any) */
} sched_running;

typedef struct sched sched;

/* A scheduler over racks (copied) with ngpus GPUs in all, all free; GPUs
 * in no rack are never placed. NULL with err set on bad racks (SIM_EINPUT:
 * no GPUs, a domain not dividing the count, a range past ngpus or
 * overlapping another, type SCHED_ANY_TYPE) or no memory (SIM_ENOMEM).
 * The scheduler allocates on alloc (NULL means the C library), which must
 * outlive it. Free with sched_destroy. */
sched *sched_create(const sched_rack *racks, size_t nracks, uint32_t ngpus,
                    sched_policy policy, sched_admission admission,
                    const sim_allocator *alloc, sim_error *err);

/* Frees the scheduler and its queue; NULL does nothing. */
void sched_destroy(sched *s);

/* The number of free GPUs of a type (SCHED_ANY_TYPE: all). */
uint32_t sched_free_gpus(const sched *s, uint32_t type);

/* Places a gang of n GPUs of type now: writes their indices to out (n
 * entries, in rack then index order) and marks them taken. False, with
 * nothing changed, if fewer than n GPUs of type are free (they always fit
 * otherwise, across racks if need be). n = 0 places nothing and is true. */
bool sched_place(sched *s, uint32_t n, uint32_t type, uint32_t *out);

/* Takes every free GPU of rack r out of placement (a fault darkened it),
 * writing their indices to out (room for the rack's count) and returning
 * how many; sched_release gives them back. */
uint32_t sched_take_rack(sched *s, uint32_t r, uint32_t *out);

/* Frees GPUs taken by sched_place. Freeing a free GPU or one in no rack
 * is a programmer error: an assert, and ignored under NDEBUG. */
void sched_release(sched *s, const uint32_t *gpus, uint32_t n);

/* The racks a set of GPUs spans (for tests and the /jobs table). Each
 * rack's GPUs must be together in the list, as sched_place writes them:
 * it counts changes of rack along the list. */
uint32_t sched_racks_spanned(const sched *s, const uint32_t *gpus, uint32_t n);

/* Queues a job. SIM_OK or SIM_ENOMEM. A job larger than every GPU of its
 * type can never start: the caller rejects it before (sched_capacity). */
int sched_submit(sched *s, const sched_job *job);

/* GPUs of a type, free or not (SCHED_ANY_TYPE: all in racks). */
uint32_t sched_capacity(const sched *s, uint32_t type);

/* Takes the queued job with the caller's id out of the queue (a client
 * holding it back); whether it was there. */
bool sched_withdraw(sched *s, size_t id);

/* Jobs waiting in the queue. */
size_t sched_queued(const sched *s);

/* Called for each job a pass starts, with its placed GPUs (job->gpus of
 * them; job and gpus valid during the call). A non-OK return stops the
 * pass and is returned by it; that job stays queued and its GPUs free.
 * It must not call back into the scheduler. */
typedef int (*sched_start_fn)(void *ctx, const sched_job *job,
                              const uint32_t *gpus);

/* One scheduling pass at now_s: starts queued jobs by the policy and the
 * admission rule (headroom_w: power available for new jobs; INFINITY
 * under admit-and-cap, where it is ignored), given the running jobs (all
 * that hold GPUs; their count is at most the GPUs'). Started jobs leave
 * the queue. SIM_OK or start's code; it cannot fail otherwise. */
int sched_pass(sched *s, double now_s, double headroom_w,
               const sched_running *running, size_t nrunning,
               sched_start_fn start, void *ctx);

#endif
