/* control.h - power control (DESIGN 4.8): the configuration of how the
 * facility cap becomes the GPUs' caps. The policies that share a budget
 * are power.h and power_policy.h. */
#ifndef MODELS_CONTROL_H
#define MODELS_CONTROL_H

#include "power_policy.h"

/* How the GPUs' budget under the cap is worked out: the static split's
 * worst-case reserve, or that or more, predicted from the last period. */
typedef enum power_budget { BUDGET_RESERVE, BUDGET_PREDICT } power_budget;

typedef struct power_config {
  double cap_w;               /* the facility power cap (contracted capacity) */
  int policy;                 /* power_policy */
  double allocation_period_s; /* how often a dynamic policy reallocates;
                                 0: every control tick */
  int budget;                 /* power_budget */
  double budget_margin;       /* predict: the share of the cap kept back */
} power_config;

#endif
