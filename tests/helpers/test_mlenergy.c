/* test_mlenergy.c - see test_mlenergy.h. */
#include "test_mlenergy.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file's columns, by position (the header of SOURCES.md). */
enum {
  C_MODEL = 0,
  C_TASK = 1,
  C_GPU = 6,
  C_NGPUS = 7,
  C_MAX_SEQS = 11,
  C_BATCH = 12,
  C_OUTPUT = 13,
  C_POWER = 14,
  C_J_PER_TOKEN = 15,
  C_ITL = 18,
  C_NEEDED = 22
};

/* Splits line at its commas in place into at most max fields. */
static size_t split(char *line, char **field, size_t max) {
  size_t n = 0;
  for (char *s = line; n < max;) {
    field[n++] = s;
    char *comma = strchr(s, ',');
    if (comma == NULL)
      break;
    *comma = '\0';
    s = comma + 1;
  }
  return n;
}

static bool is_the_run(char **f, size_t n, double seqs) {
  return n >= C_NEEDED &&
         strcmp(f[C_MODEL], "meta-llama/Llama-3.1-8B-Instruct") == 0 &&
         strcmp(f[C_TASK], "lm-arena-chat") == 0 &&
         strcmp(f[C_GPU], "H100") == 0 && strcmp(f[C_NGPUS], "1") == 0 &&
         atof(f[C_MAX_SEQS]) == seqs;
}

bool test_mlenergy_find(double seqs, test_mlenergy_row *out) {
  FILE *fp = test_data_open("gpu_power/mlenergy_v3_llm_runs.csv");
  char line[1024];
  bool found = false;
  while (!found && fgets(line, sizeof line, fp) != NULL) {
    char *f[24];
    size_t n = split(line, f, 24);
    if (!is_the_run(f, n, seqs))
      continue;
    *out = (test_mlenergy_row){atof(f[C_MAX_SEQS]), atof(f[C_BATCH]),
                               atof(f[C_OUTPUT]),   atof(f[C_J_PER_TOKEN]),
                               atof(f[C_POWER]),    atof(f[C_ITL])};
    found = true;
  }
  fclose(fp);
  return found;
}
