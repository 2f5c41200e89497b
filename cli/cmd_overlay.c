/* cmd_overlay.c - `--set-file OVERLAY`: the key=value pairs of a
 * calibration overlay (scn_overlay_read) as --set options, plus two that
 * mark them in the resolved scenario (/scenario of the run):
 * calibrated_keys, the keys the overlay set, and calibration_overlay, its
 * path. A report then tells calibrated values from modelled ones
 * (docs/CALIBRATION.md). The texts live until the process exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_internal.h"
#include "scenario.h"

/* The blocks handed out, freed at exit (the options point into them). */
static void *held[8];
static size_t nheld;

static void release_all(void) {
  while (nheld > 0)
    free(held[--nheld]);
}

static int hold(void *p) {
  if (p == NULL || nheld >= sizeof held / sizeof held[0]) {
    free(p);
    return -1;
  }
  if (nheld == 0)
    atexit(release_all);
  held[nheld++] = p;
  return 0;
}

/* "calibrated_keys=["k1", "k2"]" from the overlay's key=value texts. */
static char *keys_set(char *const *kv, size_t n) {
  size_t len = sizeof "calibrated_keys=[]";
  for (size_t i = 0; i < n; i++)
    len += strcspn(kv[i], "=") + 4;
  char *s = malloc(len), *at = s;
  if (s == NULL)
    return NULL;
  at += sprintf(at, "calibrated_keys=[");
  for (size_t i = 0; i < n; i++)
    at += sprintf(at, "%s\"%.*s\"", i > 0 ? ", " : "",
                  (int)strcspn(kv[i], "="), kv[i]);
  sprintf(at, "]");
  return s;
}

static bool quotable(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (s[i] == '"' || s[i] == '\\' || (unsigned char)s[i] < 0x20)
      return false;
  return true;
}

int cmd__set_file(const char **sets, size_t *nsets, const char *path) {
  sim_error err = {0};
  char **kv;
  size_t n;
  if (nheld > 0)
    return cmd__usage_error("%s", "give --set-file once");
  if (scn_overlay_read(path, &kv, &n, &err) != SIM_OK)
    return cmd__report(&err);
  if (hold(kv) != 0)
    return cmd__usage_error("%s", "out of memory");
  for (size_t i = 0; i < n; i++)
    if (!quotable(kv[i], strcspn(kv[i], "=")))
      return cmd__usage_error("--set-file: a key of the overlay holds a "
                              "quote, a backslash or a control character: "
                              "%s", kv[i]);
  if (!quotable(path, strlen(path)))
    return cmd__usage_error("--set-file: the overlay's path holds a quote, "
                            "a backslash or a control character: %s", path);
  if (*nsets + n + 2 > MAX_SETS)
    return cmd__usage_error("more than %s --set options", "256");
  char *keys = keys_set(kv, n);
  char *file = malloc(strlen(path) + sizeof "calibration_overlay=\"\"");
  if (hold(keys) != 0 || hold(file) != 0)
    return cmd__usage_error("%s", "out of memory");
  sprintf(file, "calibration_overlay=\"%s\"", path);
  for (size_t i = 0; i < n; i++)
    sets[(*nsets)++] = kv[i];
  sets[(*nsets)++] = keys;
  sets[(*nsets)++] = file;
  return 0;
}
