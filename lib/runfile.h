/* runfile.h - what makes an HDF5 file a run's, shared by `aifsim run`
 * (cli/cmd_run.c) and the library (lib/aifsim.c), so that both write the
 * same bytes: the root attributes (format, version, scenario, seed, the
 * overrides, the start date) and the time origin the writer gives every
 * time coordinate. */
#ifndef LIB_RUNFILE_H
#define LIB_RUNFILE_H

#include <stddef.h>
#include <stdint.h>

#include "factory.h"
#include "tel.h"

/* The run's t = 0 as ISO 8601 in UTC, "2023-07-01T00:00:00Z", in buf;
 * NULL when the scenario gives no start date. The writer makes it the
 * origin of every time coordinate (record.h). */
const char *runfile_time_origin(const factory_config *cfg, char *buf,
                                size_t size);

/* utc_s (seconds since 1970 in UTC) as ISO 8601 with a "Z", to the
 * microsecond without trailing zeros, in buf; NULL when it does not fit. */
const char *runfile_utc_text(double utc_s, char *buf, size_t size);

/* The root attributes of a run of sc with its nsets overrides ("key=value",
 * one a line in the attribute overrides) and, when sweep_point >= 0, its
 * point of a sweep. SIM_OK or the sink's error. */
int runfile_write_meta(tel_sink *sink, const factory_scenario *sc,
                       const char *const *sets, size_t nsets,
                       int64_t sweep_point);

#endif
