/* control_nop.h - the control hooks a test's factory leaves idle: no
 * workloads to drive, no facility power to set (0 W), no requests. */
#ifndef TESTS_CONTROL_NOP_H
#define TESTS_CONTROL_NOP_H
#include <stdint.h>

#include "control.h"

static inline void control_nop_drive(void *ctx, sim_time now) {
  (void)ctx;
  (void)now;
}

static inline int control_nop_power(void *ctx, sim_time now,
                                    double *facility_w) {
  (void)ctx;
  (void)now;
  *facility_w = 0;
  return SIM_OK;
}

static inline void control_nop_request_counts(void *ctx, uint64_t *done,
                                              uint64_t *met) {
  (void)ctx;
  *done = *met = 0;
}

#endif
