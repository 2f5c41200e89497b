/* test_mlenergy.h - the ML.ENERGY leaderboard runs (data/gpu_power/
 * mlenergy_v3_llm_runs.csv, see data/SOURCES.md) that the
 * inference tests hold the models to: Llama-3.1-8B-Instruct serving the
 * lm-arena-chat workload on one H100 at a given max_num_seqs. */
#ifndef TEST_MLENERGY_H
#define TEST_MLENERGY_H
#include <stdbool.h>

typedef struct test_mlenergy_row {
  double max_seqs, avg_batch, avg_output, j_per_token, power_w, itl_ms;
} test_mlenergy_row;

/* The run at max_num_seqs = seqs; false if the row is absent. Fails the
 * test when the file is missing. */
bool test_mlenergy_find(double seqs, test_mlenergy_row *out);

#endif
