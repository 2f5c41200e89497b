/* err.h - status codes shared by every layer of aifsim.
 * Library code returns SIM_OK or a negative SIM_E* code and keeps the detail
 * in a message on its context; only main turns a code into an exit status. */
#ifndef SIM_ERR_H
#define SIM_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* One list feeds the enum, the names and the messages, so they cannot drift
 * apart. */
#define SIM_ERRNO_MAP(XX)                                                      \
  XX(ENOMEM, -1, "out of memory")                                              \
  XX(EINVAL, -2, "invalid argument")                                           \
  XX(EINPUT, -3, "bad input")                                                  \
  XX(EIO, -4, "input/output error")                                            \
  XX(ERANGE, -5, "value out of range")                                         \
  XX(ENOTFOUND, -6, "not found")                                               \
  XX(ESTATE, -7, "operation not valid in this state")                          \
  XX(ECANCELED, -8, "stopped")                                                 \
  XX(EBUSY, -9, "in use by another process")

enum {
  SIM_OK = 0,
#define XX(name, code, text) SIM_##name = (code),
  SIM_ERRNO_MAP(XX)
#undef XX
};

/* The symbolic name of a code ("SIM_EIO"); "SIM_UNKNOWN" for others. */
const char *sim_err_name(int code);

/* A short message for a code ("input/output error"). */
const char *sim_strerror(int code);

/* A status with its detail: what a failing call leaves for its caller.
 * Embedded in callers' structs or on the stack; no destroy needed. */
typedef struct sim_error {
  int code;
  char msg[1024];
} sim_error;

/* Records code and a printf-style message in err (err may be NULL) and
 * returns code, so a failing path reads `return sim_error_set(err, ...)`. */
int sim_error_set(sim_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int sim_error_vset(sim_error *err, int code, const char *fmt, va_list ap);

/* Resets err to SIM_OK with an empty message. */
void sim_error_clear(sim_error *err);

#endif
