/* test_cooling_loop.h - what the cooling tests share: binding a loop's
 * config, making the loop and stepping it (test_cooling.c,
 * test_cooling_throttle.c). Header only. */
#ifndef TEST_COOLING_LOOP_H
#define TEST_COOLING_LOOP_H

#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>

#include "cooling.h"
#include "plant.h"
#include "validate_row.h"

static inline int bind(const char *text, cool_loop_config *c, sim_error *err) {
  memset(c, 0, sizeof *c);
  return scn_bind_string("loop.yaml", text, &cool_loop_schema, c, NULL, err);
}

static inline void bind_ok(const char *text, cool_loop_config *c) {
  sim_error err = {0};
  if (bind(text, c, &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

#define LIQUID "name: dlc\nkind: liquid\ncapacity: 1 MW\n"
#define AIR "name: crah\nkind: air\ncapacity: 1 MW\n"

static inline cool_loop *make_loop(const cool_loop_config *c) {
  sim_error err = {0};
  cool_loop *l = cool_loop_create(c, NULL, &err);
  if (l == NULL)
    fail_msg("%s", err.msg);
  return l;
}

static inline void step_ok(cool_loop *l, double q, double outdoor, double dt,
                           cool_step *s) {
  sim_error err = {0};
  if (cool_loop_step(l, q, outdoor, dt, s, &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

#endif
