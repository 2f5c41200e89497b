/* cmd_quick.c - `--quick`: the overrides of a file's `# quick:` line.
 *
 * A scenario or sweep file may carry one comment line
 *
 *     # quick: --set duration=1d --set power_quality.window=1min
 *
 * naming the --set options that shorten it to a few seconds (the gallery
 * documents each file's, and tests/cli/test_scenarios.sh runs every file
 * with them). `--quick` puts them in front of the command line's own
 * --set options, so an option the user gives wins over the file's. The
 * line holds only `--set KEY=VALUE` pairs separated by blanks; a value
 * cannot contain a blank (there is no quoting), which every key the
 * scenarios shorten by (durations, windows, counts) obeys. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd_internal.h"

static const char marker[] = "# quick:";

/* Reads path's first `# quick:` line (without the marker) into o->quick,
 * with its line number in *line. 1 if found, 0 if the file has none, -1
 * (message printed) if it cannot be read or the line is too long. */
static int find_line(const char *path, options *o, int *line) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "aifsim: %s: %s\n", path, strerror(errno));
    return -1;
  }
  char buf[sizeof o->quick + sizeof marker];
  int found = 0;
  for (*line = 1; !found && fgets(buf, sizeof buf, f) != NULL; ++*line) {
    size_t len = strlen(buf);
    bool whole = len > 0 && (buf[len - 1] == '\n' || feof(f));
    const char *rest = buf + sizeof marker - 1;
    if (strncmp(buf, marker, sizeof marker - 1) == 0) {
      if (!whole || strlen(rest) >= sizeof o->quick) {
        fprintf(stderr, "aifsim: %s:%d:1: the '# quick:' line is longer "
                "than %zu characters\n", path, *line, sizeof o->quick - 1);
        fclose(f);
        return -1;
      }
      memcpy(o->quick, rest, strlen(rest) + 1);
      found = 1;
    }
    while (!whole && fgets(buf, sizeof buf, f) != NULL) /* skip the rest */
      whole = buf[strlen(buf) - 1] == '\n';
  }
  fclose(f);
  --*line;
  return found;
}

/* The next blank-separated word of *s, NUL-terminated in place, or NULL. */
static char *next_word(char **s) {
  char *p = *s;
  while (isspace((unsigned char)*p))
    p++;
  if (*p == '\0')
    return NULL;
  char *w = p;
  while (*p != '\0' && !isspace((unsigned char)*p))
    p++;
  if (*p != '\0')
    *p++ = '\0';
  *s = p;
  return w;
}

static int bad_word(const options *o, int line, const char *word,
                    const char *why) {
  /* The column of word on its line: the marker, then its offset. */
  size_t col = sizeof marker + (size_t)(word - o->quick);
  fprintf(stderr, "aifsim: %s:%d:%zu: %s\n", o->scenario, line, col, why);
  return EXIT_BAD_INPUT;
}

/* Splits o->quick into KEY=VALUE words in sets[]; their count in *n. */
static int split(options *o, int line, const char **sets, size_t *n) {
  char *rest = o->quick, *w;
  *n = 0;
  while ((w = next_word(&rest)) != NULL) {
    if (strcmp(w, "--set") != 0)
      return bad_word(o, line, w, "the '# quick:' line holds only "
                      "'--set KEY=VALUE' options");
    char *v = next_word(&rest);
    if (v == NULL || strchr(v, '=') == NULL)
      return bad_word(o, line, v != NULL ? v : w, "'--set' on the "
                      "'# quick:' line needs KEY=VALUE");
    if (*n >= MAX_SETS)
      return bad_word(o, line, v, "too many --set options");
    sets[(*n)++] = v;
  }
  if (*n == 0)
    return bad_word(o, line, o->quick, "the '# quick:' line is empty");
  return 0;
}

int cmd__apply_quick(options *o) {
  if (!o->quick_asked)
    return 0;
  if (o->scenario == NULL)
    return 0; /* the command reports the missing file */
  int line, found = find_line(o->scenario, o, &line);
  if (found < 0)
    return EXIT_BAD_INPUT;
  if (found == 0) {
    fprintf(stderr, "aifsim: %s: --quick: the file has no '# quick:' line "
            "(a comment such as '# quick: --set duration=1h' names the "
            "overrides that shorten it)\n", o->scenario);
    return EXIT_BAD_INPUT;
  }
  const char *quick[MAX_SETS];
  size_t n;
  int rc = split(o, line, quick, &n);
  if (rc != 0)
    return rc;
  if (n + o->nsets > MAX_SETS)
    return cmd__usage_error("more than %s --set options with --quick",
                            "256");
  memmove(o->sets + n, o->sets, o->nsets * sizeof *o->sets);
  memcpy(o->sets, quick, n * sizeof *quick);
  o->nsets += n;
  return 0;
}
