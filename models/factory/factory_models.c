/* factory_models.c - the factory's models, one row each, in the order of
 * every stage of a run (factory_model.h): a model the factory runs is a
 * row here (or, with a scenario key of its own, a row of factory.h's
 * FACTORY_MODEL_MAP, which lands at the end) and nowhere else in the
 * factory. The power stage runs down the rows, so a row reads what the
 * rows above it set (smoothing follows the racks' own load, cooling
 * takes the heat, the chain adds its losses and the battery, last of the
 * power, sets what the grid sees); the rows after are the books, the
 * workloads and the grid code's verdict on the run. Creation runs down
 * them too: faults need the plant's loops, power control's first split
 * all of the facility. */
#include "factory_model.h"

#include "factory.h"

extern const factory_model factory_model_smoothing, factory_model_cooling,
    factory_model_faults, factory_model_electrical, factory_model_battery,
    factory_model_control, factory_model_power_quality, factory_model_grid,
    factory_model_work, factory_model_grid_code, factory_model_steering,
    factory_model_disturbance;
#define XX(key, type, schema, on, desc, help) extern const factory_model desc;
FACTORY_MODEL_MAP(XX)
#undef XX

const factory_model *const factory_models[] = {
    &factory_model_smoothing,     &factory_model_cooling,
    &factory_model_faults,        &factory_model_electrical,
    &factory_model_battery,       &factory_model_control,
    &factory_model_steering,
    &factory_model_power_quality, &factory_model_grid,
    &factory_model_disturbance,   &factory_model_work,          &factory_model_grid_code,
#define XX(key, type, schema, on, desc, help) &desc,
    FACTORY_MODEL_MAP(XX)
#undef XX
};

const size_t factory_nmodels = sizeof factory_models / sizeof factory_models[0];
