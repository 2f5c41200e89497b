/* test_sweep_fake.h - what the sweep tests share: fake hooks in place of
 * the factory, and the sweep files and directories they read and write
 * (test_sweep.c, test_sweep_run.c). Header only. */
#ifndef TEST_SWEEP_FAKE_H
#define TEST_SWEEP_FAKE_H

#include "test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5read.h"
#include "record.h"
#include "seal.h"
#include "sweep.h"

/* ---- Fake hooks -------------------------------------------------------- */

/* What the fake scenario loader and runner do and count. */
typedef struct fake {
  int checks, runs;
  const char *fail_set; /* a run with this override fails */
} fake;

/* Metrics of the fake runs, declared as models declare theirs. */
static const tel_metric m_x = {"x", "1", "x", "Run"};
static const tel_metric m_y = {"y", "1", "y", "Run"};
static const tel_metric m_zeta = {"zeta", "W", "zeta", "Power"};
static const tel_metric m_alpha = {"alpha", "1", "alpha", "Run"};
static const tel_metric m_energy = {"energy_mwh", "MWh", "Facility energy",
                                    "Energy"};

static inline bool has_set(const char *const *sets, size_t n, const char *set) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(sets[i], set) == 0)
      return true;
  return false;
}

/* The fake's rules: keys under "bad." are unknown, the value BAD is
 * wrong, a=2 with b=2 is an impossible combination, a base named
 * missing.yaml does not exist; the seed is 42 unless set. */
static inline int fake_rules(const char *base, const char *const *sets,
                             size_t n, int64_t *seed, sim_error *err) {
  if (strstr(base, "missing.yaml") != NULL)
    return sim_error_set(err, SIM_EIO, "%s: cannot open: no such file", base);
  *seed = 42;
  for (size_t i = 0; i < n; i++) {
    const char *eq = strchr(sets[i], '=');
    if (strncmp(sets[i], "bad.", 4) == 0)
      return sim_error_set(err, SIM_EINPUT, "--set %s:1:1: unknown key",
                           sets[i]);
    if (eq != NULL && strcmp(eq + 1, "BAD") == 0)
      return sim_error_set(err, SIM_EINPUT,
                           "--set %s:1:%d: bad value\n  hint: not BAD", sets[i],
                           (int)(eq - sets[i]) + 2);
    if (strncmp(sets[i], "seed=", 5) == 0)
      *seed = atoll(sets[i] + 5);
  }
  if (has_set(sets, n, "a=2") && has_set(sets, n, "b=2"))
    return sim_error_set(err, SIM_EINPUT,
                         "base.yaml:3:4: a and b cannot both be 2");
  return SIM_OK;
}

/* The resolved scenario: the overrides, one a line. */
static inline char *fake_resolved(const char *const *sets, size_t n) {
  size_t len = 1;
  for (size_t i = 0; i < n; i++)
    len += strlen(sets[i]) + 1;
  char *s = calloc(len, 1);
  for (size_t i = 0; s != NULL && i < n; i++) {
    strcat(s, sets[i]);
    strcat(s, "\n");
  }
  return s;
}

static inline int fake_check(void *user, const char *base,
                             const char *const *sets, size_t n, int64_t *seed,
                             char **resolved, sim_error *err) {
  fake *f = user;
  f->checks++;
  int rc = fake_rules(base, sets, n, seed, err);
  if (rc == SIM_OK)
    *resolved = fake_resolved(sets, n);
  return rc;
}

/* Metrics: x is the number in the first override's value, y the point. */
static inline int write_point(const sweep_job *job, sim_error *err) {
  tel_sink *sink = h5w_create(job->out, NULL, err);
  if (sink == NULL)
    return err->code;
  char *text = fake_resolved(job->sets, job->nsets);
  const char *eq = job->nsets > 0 ? strchr(job->sets[0], '=') : NULL;
  int rc = tel_put_text(sink, "scenario", text);
  if (rc == SIM_OK)
    rc = tel_put_meta_str(sink, "format", H5R_RUN_FORMAT);
  if (rc == SIM_OK)
    rc = tel_put_summary(sink, &m_x, eq != NULL ? atof(eq + 1) : 0);
  if (rc == SIM_OK)
    rc = tel_put_summary(sink, &m_y, 0.1 * (double)job->point);
  if (rc == SIM_OK)
    rc = tel_commit(sink);
  if (rc != SIM_OK)
    sim_error_set(err, rc, "%s", tel_errmsg(sink));
  tel_destroy(sink);
  free(text);
  return rc;
}

static inline int fake_run(void *user, const sweep_job *job, sim_error *err) {
  fake *f = user;
  f->runs++;
  if (f->fail_set != NULL && has_set(job->sets, job->nsets, f->fail_set))
    return sim_error_set(err, SIM_ESTATE, "boom, \"%s\"\n  hint: h",
                         f->fail_set);
  return write_point(job, err);
}

/* ---- Files ------------------------------------------------------------- */

/* Writes text as the sweep file NAME under the tests' output folder. */
static inline const char *sweep_file(const char *name, const char *text) {
  static char path[4096];
  snprintf(path, sizeof path, "%s", test_out_path(name));
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

/* A fresh, empty directory NAME under the tests' output folder. */
static inline const char *fresh_dir(const char *name, char *buf) {
  snprintf(buf, 4096, "%s", test_out_path(name));
  DIR *d = opendir(buf);
  struct dirent *e;
  char path[8192];
  while (d != NULL && (e = readdir(d)) != NULL) {
    snprintf(path, sizeof path, "%s/%s", buf, e->d_name);
    if (e->d_name[0] != '.')
      unlink(path);
  }
  if (d != NULL)
    closedir(d);
  mkdir(buf, 0777);
  return buf;
}

static inline char *slurp(const char *dir, const char *name) {
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return NULL;
  char *buf = calloc(1 << 16, 1);
  fread(buf, 1, (1 << 16) - 1, f);
  fclose(f);
  return buf;
}

static inline bool exists_in(const char *dir, const char *name) {
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return access(path, F_OK) == 0;
}

static inline sweep *load_text(const char *name, const char *text, fake *f,
                               sim_error *err) {
  sweep_hooks h = {fake_check, fake_run, NULL, f, NULL, NULL, false};
  return sweep_load(sweep_file(name, text), NULL, 0, &h, err);
}

/* The points as "a=1 b=x|a=1 b=y|...". */
static inline void points_text(const sweep *s, char *buf, size_t size) {
  const char *sets[16];
  buf[0] = '\0';
  for (size_t p = 0; p < sweep_npoints(s); p++) {
    size_t n = sweep_point_sets(s, p, sets, 16);
    if (p > 0)
      strncat(buf, "|", size - strlen(buf) - 1);
    for (size_t i = 0; i < n; i++) {
      if (i > 0)
        strncat(buf, " ", size - strlen(buf) - 1);
      strncat(buf, sets[i], size - strlen(buf) - 1);
    }
  }
}

#endif
