/* mlenergy_repeats.h - how many unique requests each ML.ENERGY v3 run
 * sent and how many times it sent their list whole
 * (data/gpu_power/mlenergy_v3_request_repeats.csv, copied from the
 * benchmark's sweeps.yaml and benchmark.yaml files; data/SOURCES.md).
 * mlenergy_runs.c serves a run that repeated its list with a prompt pool
 * of its unique requests (inference.h, "Shared prompts"). */
#ifndef MLENERGY_REPEATS_H
#define MLENERGY_REPEATS_H

#include <stddef.h>

#include "err.h"

typedef struct mlr_repeat {
  char task[32], model_id[96], gpu_model[16];
  int gpus;         /* num_gpus */
  double max_seqs;  /* max_num_seqs */
  int repeats;      /* num_request_repeats: times the list was sent */
  int unique;       /* num_requests: the list's requests */
} mlr_repeat;

/* Reads the CSV at path: *rows malloc'ed (free it), *n of them. SIM_OK,
 * or SIM_EIO / SIM_EINPUT (FILE:LINE:COLUMN) / SIM_ENOMEM with err set. */
int mlr_repeats_load(const char *path, mlr_repeat **rows, size_t *n,
                     sim_error *err);

/* The row of a run, or NULL when the configs do not list it. */
const mlr_repeat *mlr_repeats_find(const mlr_repeat *rows, size_t n,
                                   const char *task, const char *model_id,
                                   const char *gpu_model, int gpus,
                                   double max_seqs);

#endif
