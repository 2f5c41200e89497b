/* fake_model.c - the tiny model of the engine tests (fake_model.h). */
#include "fake_model.h"

#include <stdlib.h>

/* Appends ev to the log; SIM_ENOMEM if it cannot grow. */
static int log_append(fake_model *m, const sim_event *ev) {
  if (m->n == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 256;
    fake_entry *log = realloc(m->log, cap * sizeof *log);
    if (log == NULL)
      return SIM_ENOMEM;
    m->log = log;
    m->cap = cap;
  }
  m->log[m->n++] = (fake_entry){ev->time, ev->kind, ev->a, ev->b};
  return SIM_OK;
}

/* Carries out one scripted action at now. */
static int act(fake_model *m, fake_action *x, sim_time now) {
  sim_engine *e = m->engine;
  switch (x->op) {
  case FAKE_CANCEL:
    x->result = sim_engine_cancel(e, x->handle);
    return SIM_OK;
  case FAKE_SCHEDULE:
    return sim_engine_schedule(e, now + x->delay, m->kind, x->a, x->b,
                               x->handle);
  case FAKE_EVERY:
    return sim_engine_every(e, now + x->delay, x->period, m->kind, x->a, x->b,
                            x->handle);
  case FAKE_STOP:
    sim_engine_stop(e);
    return SIM_OK;
  }
  return SIM_EINVAL;
}

static int handle(sim_engine *e, void *ctx, const sim_event *ev) {
  fake_model *m = ctx;
  if (log_append(m, ev) != SIM_OK)
    return sim_engine_fail(e, SIM_ENOMEM, "fake model: log full");
  if (++m->handled == m->fail_at) {
    if (m->fail_silently)
      return m->fail_code;
    return sim_engine_fail(e, m->fail_code, "fake failure at event %llu",
                           (unsigned long long)m->handled);
  }
  for (size_t i = 0; i < m->nactions; i++) {
    if (m->actions[i].on_a != ev->a)
      continue;
    int rc = act(m, &m->actions[i], ev->time);
    if (rc != SIM_OK)
      return rc;
  }
  return m->hook != NULL ? m->hook(m, ev) : SIM_OK;
}

int fake_model_init(fake_model *m, sim_engine *e, const char *name) {
  *m = (fake_model){.engine = e, .fail_code = SIM_EIO};
  return sim_engine_register(e, name, handle, m, &m->kind);
}

void fake_model_fini(fake_model *m) {
  free(m->log);
  m->log = NULL;
  m->n = m->cap = 0;
}

fake_action *fake_model_on(fake_model *m, fake_action x) {
  if (m->nactions == FAKE_MAX_ACTIONS)
    return NULL;
  x.result = -1;
  m->actions[m->nactions] = x;
  return &m->actions[m->nactions++];
}

int fake_model_schedule(fake_model *m, sim_time at, uint64_t a, uint64_t b,
                        sim_handle *handle) {
  return sim_engine_schedule(m->engine, at, m->kind, a, b, handle);
}
