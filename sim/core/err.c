/* err.c - names and messages of the SIM_E* codes, and sim_error. */
#include "err.h"

#include <stdio.h>

const char *sim_err_name(int code) {
  switch (code) {
  case SIM_OK:
    return "SIM_OK";
#define XX(name, value, text)                                                  \
  case SIM_##name:                                                             \
    return "SIM_" #name;
    SIM_ERRNO_MAP(XX)
#undef XX
  }
  return "SIM_UNKNOWN";
}

const char *sim_strerror(int code) {
  switch (code) {
  case SIM_OK:
    return "success";
#define XX(name, value, text)                                                  \
  case SIM_##name:                                                             \
    return text;
    SIM_ERRNO_MAP(XX)
#undef XX
  }
  return "unknown error";
}

int sim_error_vset(sim_error *err, int code, const char *fmt, va_list ap) {
  if (err == NULL)
    return code;
  err->code = code;
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  return code;
}

int sim_error_set(sim_error *err, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sim_error_vset(err, code, fmt, ap);
  va_end(ap);
  return code;
}

void sim_error_clear(sim_error *err) {
  if (err == NULL)
    return;
  err->code = SIM_OK;
  err->msg[0] = '\0';
}
