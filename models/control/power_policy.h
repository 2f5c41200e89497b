/* power_policy.h - the registry of power-allocation policies (power.h):
 * one X-macro list feeds the policies' enum, their scenario names and
 * their split functions, so the three cannot drift apart (as sim/core/err.h's
 * SIM_ERRNO_MAP does for error codes). Adding a policy is one row here
 * and one split function (docs/ARCHITECTURE.md, "How to add a power
 * policy"). */
#ifndef MODELS_POWER_POLICY_H
#define MODELS_POWER_POLICY_H
#include <stddef.h>

#include "power.h"

/* XX(ENUM, name, split function, split from a memo or NULL): in the
 * order of the scenario schema's names; the first is the default. */
#define POWER_POLICY_MAP(XX)                                                   \
  XX(STATIC, static, power_split_static, NULL)                                 \
  XX(PROPORTIONAL, proportional, power_split_proportional, NULL)               \
  XX(PRIORITY, priority, power_split_priority, NULL)                           \
  XX(EFFICIENCY, efficiency, power_split_efficiency,                           \
     power_split_efficiency_from)                                              \
  XX(UNIFORM_FLOOR, uniform_floor, power_split_uniform_floor, NULL)

typedef enum power_policy {
#define XX(e, name, fn, from) POWER_##e,
  POWER_POLICY_MAP(XX)
#undef XX
      POWER_NPOLICIES
} power_policy;

/* Each policy's split (power_policy_ops.split's contract), defined in the
 * policy's own file. */
#define XX(e, name, fn, from)                                                  \
  void fn(const power_unit *units, size_t n, double budget_w, double *cap);
POWER_POLICY_MAP(XX)
#undef XX

/* The policy of index (a power_policy), or NULL when there is none. The
 * result is static: do not free. */
const power_policy_ops *power_policy_by_index(int index);

/* The policies' names in enum order, NULL-terminated, for the scenario
 * schema. */
extern const char *const power_policy_names[];

#endif
