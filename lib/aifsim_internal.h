/* aifsim_internal.h - what the command (cli/cmd_run.c) reads of a handle
 * beyond include/aifsim.h, to print its summary as it always has: the
 * scenario as loaded, the finished run's summary and the sink's /summary
 * declarations, and the factory for the test builds' hooks. Not part of
 * the library's interface: lib/aifsim.map keeps these names local. The
 * run itself (open, steps, finish) goes through aifsim.h alone. */
#ifndef LIB_AIFSIM_INTERNAL_H
#define LIB_AIFSIM_INTERNAL_H

#include <aifsim.h>

#include "factory.h"
#include "tel.h"

/* The scenario, once loaded (NULL before). */
const factory_scenario *aifsim__scenario(const aifsim *a);
/* The summary, once aifsim_finish has succeeded (NULL before). */
const factory_summary *aifsim__summary(const aifsim *a);
/* The sink the run writes to: its /summary declarations and values. */
const tel_sink *aifsim__sink(const aifsim *a);
/* The factory, once built (NULL before). */
factory *aifsim__factory(aifsim *a);

/* For the library's other files (aifsim_work.c): records a failure on a
 * and returns its code; and SIM_OK when a is open, else the failure
 * (call names the call in the message). */
int aifsim__fail(aifsim *a, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int aifsim__check_open(aifsim *a, const char *call);

#endif
