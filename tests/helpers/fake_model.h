/* fake_model.h - a tiny model for engine tests.
 * It registers one handler that logs (time, kind, a, b) of every event it
 * handles, and can be scripted to cancel or schedule events, stop the run
 * or fail at the k-th event; a test hook covers anything else. */
#ifndef FAKE_MODEL_H
#define FAKE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* One handled event. */
typedef struct fake_entry {
  sim_time time;
  uint32_t kind;
  uint64_t a, b;
} fake_entry;

typedef enum fake_op {
  FAKE_CANCEL,   /* cancel *handle; its result goes to fake_action.result */
  FAKE_SCHEDULE, /* schedule (now + delay, model kind, a, b) into *handle */
  FAKE_EVERY,    /* every period from now + delay, into *handle */
  FAKE_STOP      /* sim_engine_stop */
} fake_op;

/* What to do when an event with payload a == on_a is handled. */
typedef struct fake_action {
  uint64_t on_a;
  fake_op op;
  sim_handle *handle; /* borrowed; may be NULL for FAKE_SCHEDULE */
  sim_time delay, period;
  uint64_t a, b;
  int result; /* FAKE_CANCEL: 1 if cancelled, 0 if not, -1 not run yet */
} fake_action;

typedef struct fake_model fake_model;

/* Called after logging and the scripted actions, unless the model failed.
 * Its return value is the handler's. */
typedef int (*fake_hook_fn)(fake_model *m, const sim_event *ev);

enum { FAKE_MAX_ACTIONS = 16 };

/* Visible, not opaque: tests read the log and set the knobs directly. */
struct fake_model {
  sim_engine *engine; /* borrowed */
  uint32_t kind;      /* the registered handler */
  fake_entry *log;    /* owned; n entries */
  size_t n, cap;
  uint64_t handled;   /* events handled, failed ones included */
  uint64_t fail_at;   /* fail at this (1-based) handled event; 0 never */
  int fail_code;      /* returned at fail_at */
  bool fail_silently; /* fail without calling sim_engine_fail */
  fake_action actions[FAKE_MAX_ACTIONS];
  size_t nactions;
  fake_hook_fn hook; /* may be NULL */
  void *hook_ctx;    /* for the hook's use */
};

/* Registers the model's handler as name on e and starts an empty log.
 * SIM_OK or the engine's error; on error m needs no fini. */
int fake_model_init(fake_model *m, sim_engine *e, const char *name);

/* Frees the log. */
void fake_model_fini(fake_model *m);

/* Adds a scripted action; returns a pointer to it (owned by m), or NULL
 * when FAKE_MAX_ACTIONS are taken. */
fake_action *fake_model_on(fake_model *m, fake_action act);

/* Schedules one event of the model's kind; the engine's status. */
int fake_model_schedule(fake_model *m, sim_time at, uint64_t a, uint64_t b,
                        sim_handle *handle);

#endif
