/* mlenergy_repeats.c - ML.ENERGY's request repeats per run; see
 * mlenergy_repeats.h. */
#include "mlenergy_repeats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

enum { K_TASK, K_MODEL, K_GPU, K_GPUS, K_SEQS, K_REPEATS, K_UNIQUE, K_N };
static const char *const names[K_N] = {
    "task",         "model_id",            "gpu_model",   "num_gpus",
    "max_num_seqs", "num_request_repeats", "num_requests"};

static int columns(csv_reader *rd, long col[K_N]) {
  char *h[CSV_MAX_FIELDS];
  size_t n = 0;
  int rc = csv_header(rd, h, &n, "task,model_id,...");
  for (int k = 0; rc == SIM_OK && k < K_N; k++)
    if ((col[k] = csv_column(h, n, names[k])) < 0)
      rc = csv_fail(rd, NULL, names[k], "missing column");
  return rc;
}

/* The counts of one row: each a whole number of its range. */
static int counts(csv_reader *rd, char **f, const long col[K_N],
                  mlr_repeat *r) {
  static const struct {
    int k;
    int64_t max;
    const char *unit;
  } c[] = {{K_GPUS, 1024, "GPUs"},
           {K_SEQS, 1 << 20, "sequences"},
           {K_REPEATS, 1000, "repeats"},
           {K_UNIQUE, 1000000, "requests"}};
  int64_t v[4];
  for (size_t i = 0; i < 4; i++) {
    int rc = csv_count(rd, f[col[c[i].k]], names[c[i].k], c[i].max,
                       c[i].unit, &v[i]);
    if (rc != SIM_OK)
      return rc;
  }
  r->gpus = (int)v[0];
  r->max_seqs = (double)v[1];
  r->repeats = (int)v[2];
  r->unique = (int)v[3];
  if (r->repeats < 1 || r->unique < 1)
    return csv_fail(rd, f[col[r->repeats < 1 ? K_REPEATS : K_UNIQUE]],
                    names[r->repeats < 1 ? K_REPEATS : K_UNIQUE],
                    "must be at least 1");
  return SIM_OK;
}

static int parse(csv_reader *rd, char *line, const long col[K_N],
                 mlr_repeat *r) {
  char *f[CSV_MAX_FIELDS];
  size_t nf = csv_split(line, f);
  for (int k = 0; k < K_N; k++)
    if ((size_t)col[k] >= nf)
      return csv_fail(rd, NULL, names[k], "missing field");
  memset(r, 0, sizeof *r);
  snprintf(r->task, sizeof r->task, "%s", f[col[K_TASK]]);
  snprintf(r->model_id, sizeof r->model_id, "%s", f[col[K_MODEL]]);
  snprintf(r->gpu_model, sizeof r->gpu_model, "%s", f[col[K_GPU]]);
  return counts(rd, f, col, r);
}

int mlr_repeats_load(const char *path, mlr_repeat **rows, size_t *n,
                     sim_error *err) {
  csv_reader rd;
  long col[K_N];
  size_t cap = 0;
  *rows = NULL;
  *n = 0;
  int rc = csv_open(&rd, path, (size_t)16 << 20, err);
  if (rc != SIM_OK)
    return rc;
  rc = columns(&rd, col);
  for (char *line; rc == SIM_OK && (line = csv_next_line(&rd)) != NULL;) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 256;
      mlr_repeat *p = realloc(*rows, cap * sizeof *p);
      if (p == NULL) {
        rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
        break;
      }
      *rows = p;
    }
    rc = parse(&rd, line, col, &(*rows)[*n]);
    *n += rc == SIM_OK;
  }
  csv_close(&rd);
  return rc;
}

const mlr_repeat *mlr_repeats_find(const mlr_repeat *rows, size_t n,
                                   const char *task, const char *model_id,
                                   const char *gpu_model, int gpus,
                                   double max_seqs) {
  for (size_t i = 0; i < n; i++) {
    const mlr_repeat *r = &rows[i];
    if (r->gpus == gpus && r->max_seqs == max_seqs &&
        strcmp(r->task, task) == 0 && strcmp(r->model_id, model_id) == 0 &&
        strcmp(r->gpu_model, gpu_model) == 0)
      return r;
  }
  return NULL;
}
