/* scheduler_scn.c - the scenario's `scheduler` key: the queue's policy
 * and admission (scheduler.h's sched_config). */
#include "scheduler.h"

#include <stddef.h>

static const char *const sched_policy_names[] = {"fcfs", "easy", NULL};
static const char *const admission_names[] = {"admit_and_cap", "power_aware",
                                              NULL};

static const scn_field sched_fields[] = {
    {.key = "policy",
     .type = SCN_ENUM,
     .offset = offsetof(sched_config, policy),
     .names = sched_policy_names,
     .dflt = "easy",
     .help = "fcfs (in queue order) or easy (EASY backfill)"},
    {.key = "admission",
     .type = SCN_ENUM,
     .offset = offsetof(sched_config, admission),
     .names = admission_names,
     .dflt = "admit_and_cap",
     .help = "admit_and_cap (start what fits, the cap holds power) or "
             "power_aware (start only what the headroom under the cap "
             "carries)"},
};

const scn_schema sched_schema =
    SCN_SCHEMA("scheduler", sched_config, sched_fields, .check = NULL);
