/* suggest.c - the closest known name (suggest.h). */
#include "suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Scores: 0 equal ignoring case, 1 a prefix, 2 + the edit distance. */
#define SCORE_NONE ((size_t)-1)
enum { MAX_EDITS = 2, MAX_LEN = 63 };

static int fold(char c) { return tolower((unsigned char)c); }

/* Edit distance ignoring case (Levenshtein, one row); names longer than
 * MAX_LEN are never close. */
static size_t distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b), row[MAX_LEN + 1];
  if (la > MAX_LEN || lb > MAX_LEN)
    return SCORE_NONE;
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t sub = diag + (fold(a[i - 1]) != fold(b[j - 1]));
      size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
      row[j] = sub < best ? sub : best;
      diag = up;
    }
  }
  return row[lb];
}

/* Whether the shorter of a and b starts the longer, ignoring case. */
static int is_prefix(const char *a, const char *b) {
  size_t n = 0;
  while (a[n] != '\0' && b[n] != '\0' && fold(a[n]) == fold(b[n]))
    n++;
  return n >= 2 && (a[n] == '\0' || b[n] == '\0');
}

static size_t score(const char *name, const char *candidate) {
  size_t d = distance(name, candidate);
  if (d == 0)
    return 0;
  if (is_prefix(name, candidate))
    return 1;
  if (d <= MAX_EDITS && 2 * d < strlen(name))
    return 2 + d;
  return SCORE_NONE;
}

void sim_suggest_init(sim_suggest *s, const char *name) {
  *s = (sim_suggest){.name = name, .best = NULL, .score = SCORE_NONE};
}

void sim_suggest_add(sim_suggest *s, const char *candidate) {
  if (candidate == NULL || s->name == NULL)
    return;
  size_t v = score(s->name, candidate);
  if (v < s->score) {
    s->score = v;
    s->best = candidate;
  }
}

const char *sim_suggest_best(const sim_suggest *s) { return s->best; }

size_t sim_suggest_text(const sim_suggest *s, char *buf, size_t size) {
  if (size == 0)
    return 0;
  buf[0] = '\0';
  if (s->best == NULL)
    return 0;
  int n = snprintf(buf, size, "did you mean '%s'? ", s->best);
  if (n < 0)
    return 0;
  return (size_t)n < size ? (size_t)n : size - 1;
}
