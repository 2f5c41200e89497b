/* control_scn.c - the scenario's `power` key: the cap and how power
 * control shares it (control.h's power_config). */
#include "control.h"

#include <math.h>
#include <stddef.h>

static const char *const budget_names[] = {"reserve", "predict", NULL};

static const scn_field power_fields[] = {
    {.key = "cap",
     .type = SCN_QUANTITY,
     .offset = offsetof(power_config, cap_w),
     .dim = UNITS_POWER,
     .min = 0,
     .max = HUGE_VAL,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "the facility power cap (contracted capacity), e.g. 18 MW"},
    {.key = "policy",
     .type = SCN_ENUM,
     .offset = offsetof(power_config, policy),
     .names = power_policy_names,
     .dflt = "static",
     .help = "how the GPUs' share of the cap is split: static (the same cap "
             "for all), proportional (by demand), priority (inference, then "
             "training, then the rest) or efficiency (marginal useful work "
             "per watt)"},
    {.key = "allocation_period",
     .type = SCN_QUANTITY,
     .offset = offsetof(power_config, allocation_period_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = 86400,
     .dflt = "0 s",
     .help = "how often a dynamic policy shares the budget again, a "
             "multiple of control_period; 0 s: every control tick"},
    {.key = "budget",
     .type = SCN_ENUM,
     .offset = offsetof(power_config, budget),
     .names = budget_names,
     .dflt = "reserve",
     .help = "the GPUs' budget: reserve (the worst case of other IT, losses "
             "and cooling kept back) or predict (from the coming period's "
             "other IT and the last period's losses and cooling per IT "
             "watt, when that is more)"},
    /* 2%: not a published figure; what the prediction misses is mostly
     * the cooling's lag behind its heat, and with 2% the policies peak at
     * 95.4% of the cap on powercap-policies (tests/test_work.c). */
    {.key = "budget_margin",
     .type = SCN_QUANTITY,
     .offset = offsetof(power_config, budget_margin),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 0.5,
     .dflt = "2%",
     .help = "predict: the share of the cap kept back for what the "
             "prediction misses"},
    /* No default (NaN: off), so that the resolved scenario of a file
     * without it is as before. */
    {.key = "activity_smoothing",
     .type = SCN_QUANTITY,
     .offset = offsetof(power_config, activity_smoothing_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = 86400,
     .help = "the time constant of the exponential mean of the GPUs' loads "
             "a dynamic policy prices and caps them by, e.g. 1 min; absent "
             "or 0 s: the last period's alone (the GPUs draw at the "
             "period's own load either way)"},
    {.key = "groups",
     .type = SCN_LIST,
     .offset = offsetof(power_config, groups),
     .sub = &steer_group_schema,
     .count_offset = offsetof(power_config, ngroups),
     .flags = SCN_OMIT_EMPTY,
     .help = "power groups: [{name, racks: [rack groups], cap, priority, "
             "borrow, lend}]; a group's GPUs share one budget, borrow what "
             "groups of its priority or lower leave unused, and lend theirs"},
    {.key = "load_target",
     .type = SCN_LIST,
     .offset = offsetof(power_config, load_target),
     .sub = &steer_target_schema,
     .count_offset = offsetof(power_config, nload_target),
     .flags = SCN_OMIT_EMPTY,
     .help = "the grid's load target in steps: [{from: 0 h, target: 15 MW}, "
             "{from: 4 h}]; the facility is held under it as under the cap"},
};

const scn_schema control_power_schema =
    SCN_SCHEMA("power", power_config, power_fields, .check = NULL);
