/* power_policy.c - the registry of allocation policies, built from
 * POWER_POLICY_MAP (power_policy.h). */
#include "power_policy.h"

static const power_policy_ops policies[POWER_NPOLICIES] = {
#define XX(e, name, fn, from) {#name, fn, from},
    POWER_POLICY_MAP(XX)
#undef XX
};

const char *const power_policy_names[] = {
#define XX(e, name, fn, from) #name,
    POWER_POLICY_MAP(XX)
#undef XX
        NULL};

const power_policy_ops *power_policy_by_index(int index) {
  return index >= 0 && index < POWER_NPOLICIES ? &policies[index] : NULL;
}
