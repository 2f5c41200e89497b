/* steer_scn.c - the scenario's power.groups and power.load_target
 * (steer.h): their schemas and what spans them and the rack groups. */
#include "steer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const scn_field group_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(power_group_config, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "the group's name, e.g. inference"},
    {.key = "racks",
     .type = SCN_STRINGS,
     .offset = offsetof(power_group_config, racks),
     .count_offset = offsetof(power_group_config, nracks),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "the rack groups in it, by name: [nvl72-a, nvl72-b]"},
    {.key = "cap",
     .type = SCN_QUANTITY,
     .offset = offsetof(power_group_config, cap_w),
     .dim = UNITS_POWER,
     .min = 0,
     .max = HUGE_VAL,
     .flags = SCN_POSITIVE,
     .help = "its GPUs' caps add up to this at most, before borrowing; "
             "default: none (the facility's split's share)"},
    {.key = "priority",
     .type = SCN_INT,
     .offset = offsetof(power_group_config, priority),
     .min = -1000000,
     .max = 1000000,
     .dflt = "0",
     .help = "higher borrows first, and from groups of its priority or "
             "lower only"},
    {.key = "borrow",
     .type = SCN_BOOL,
     .offset = offsetof(power_group_config, borrow),
     .dflt = "true",
     .help = "it may go above its own budget with what others leave"},
    {.key = "lend",
     .type = SCN_BOOL,
     .offset = offsetof(power_group_config, lend),
     .dflt = "true",
     .help = "what it leaves unused may go to borrowers"},
};

const scn_schema steer_group_schema =
    SCN_SCHEMA("power group", power_group_config, group_fields, .check = NULL);

static const scn_field target_fields[] = {
    {.key = "from",
     .type = SCN_QUANTITY,
     .offset = offsetof(power_target_step, from_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = HUGE_VAL,
     .flags = SCN_REQUIRED,
     .help = "from this time of the run on, e.g. 2 h"},
    {.key = "target",
     .type = SCN_QUANTITY,
     .offset = offsetof(power_target_step, target_w),
     .dim = UNITS_POWER,
     .min = 0,
     .max = HUGE_VAL,
     .flags = SCN_POSITIVE,
     .help = "the facility power the grid asks for, e.g. 15 MW; absent: "
             "no target from then on"},
};

const scn_schema steer_target_schema = SCN_SCHEMA(
    "load target step", power_target_step, target_fields, .check = NULL);

static int find(const char *const *names, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0)
      return (int)i;
  return -1;
}

/* Rack r of group p is a rack group, in no group before it (seen: the
 * group that took each rack group + 1). */
static int check_rack(const power_group_config *groups, size_t p, size_t r,
                      const char *const *names, size_t n, size_t *seen,
                      const scn_loc *loc, sim_error *err) {
  const power_group_config *g = &groups[p];
  char where[96];
  snprintf(where, sizeof where, "power.groups.%zu.racks.%zu", p, r);
  int k = find(names, n, g->racks[r]);
  if (k < 0)
    return scn_fail(loc, where, err, "name a rack group (racks[].name)",
                    "no rack group is called '%s'", g->racks[r]);
  if (seen[k] != 0)
    return scn_fail(loc, where, err,
                    "a rack group's GPUs have one budget: one power group",
                    "rack group '%s' is in power group '%s' already",
                    g->racks[r], groups[seen[k] - 1].name);
  seen[k] = p + 1;
  return SIM_OK;
}

static int check_groups(const power_group_config *groups, size_t ngroups,
                        const char *const *names, size_t n, size_t *seen,
                        const scn_loc *loc, sim_error *err) {
  char where[96];
  for (size_t p = 0; p < ngroups; p++) {
    for (size_t q = 0; q < p; q++)
      if (strcmp(groups[q].name, groups[p].name) == 0) {
        snprintf(where, sizeof where, "power.groups.%zu.name", p);
        return scn_fail(loc, where, err, "names identify the groups",
                        "two power groups are called '%s'", groups[p].name);
      }
    if (groups[p].nracks == 0) {
      snprintf(where, sizeof where, "power.groups.%zu.racks", p);
      return scn_fail(loc, where, err, "e.g. racks: [nvl72]",
                      "power group '%s' has no rack groups", groups[p].name);
    }
    for (size_t r = 0; r < groups[p].nracks; r++) {
      int rc = check_rack(groups, p, r, names, n, seen, loc, err);
      if (rc != SIM_OK)
        return rc;
    }
  }
  return SIM_OK;
}

int steer_check(const power_group_config *groups, size_t ngroups,
                const power_target_step *target, size_t ntarget,
                const char *const *names, size_t n, const scn_loc *loc,
                sim_error *err) {
  char where[96];
  if (ngroups > STEER_MAX_GROUPS)
    return scn_fail(loc, "power.groups", err, NULL,
                    "%zu power groups: at most %d", ngroups, STEER_MAX_GROUPS);
  for (size_t k = 1; k < ntarget; k++)
    if (!(target[k].from_s > target[k - 1].from_s)) {
      snprintf(where, sizeof where, "power.load_target.%zu.from", k);
      return scn_fail(loc, where, err, "list the steps in time order",
                      "a step must come after the one before it");
    }
  size_t *seen = calloc(n + 1, sizeof *seen);
  if (seen == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  int rc = check_groups(groups, ngroups, names, n, seen, loc, err);
  free(seen);
  return rc;
}
