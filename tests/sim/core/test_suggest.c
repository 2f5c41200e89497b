/* test_suggest.c - "did you mean": the closest known name, whatever its
 * case, the same at every place that refuses a name (issue 27: `h100`
 * got no suggestion). */
#include "test_util.h"

#include <string.h>

#include "suggest.h"

/* The built-in GPU types, in catalog order (scenarios/catalog/gpus.yaml). */
static const char *const gpus[] = {"H100-SXM", "H100-PCIe", "A100-SXM",
                                   "A100-PCIe", "L40S",     "L4",
                                   "RTX-4090", "RTX-4080",  "H200",
                                   "B200",     "GB200",     "GB300",
                                   NULL};
static const char *const policies[] = {"static",     "proportional",
                                       "priority",   "efficiency",
                                       "uniform_floor", NULL};
static const char *const units[] = {"W", "kW", "MW", "GW", NULL};
static const char *const keys[] = {"cap", "policy", "allocation_period",
                                   "budget", "budget_margin", NULL};

typedef struct suggest_case {
  const char *name;
  const char *const *known;
  const char *unknown;
  const char *expect; /* NULL: no suggestion */
} suggest_case;

static const suggest_case rows[] = {
    /* Case is ignored: equal names are the closest of all. */
    {"lower-case type", gpus, "gb200", "GB200"},
    {"capitalised policy", policies, "Static", "static"},
    {"upper-case unit", units, "KW", "kW"},
    {"lower-case unit", units, "mw", "MW"},
    /* A name that starts a known one: the first in catalog order. */
    {"h100 is an H100-SXM", gpus, "h100", "H100-SXM"},
    {"a100 is an A100-SXM", gpus, "a100", "A100-SXM"},
    {"a longer name", gpus, "H100-SXM5", "H100-SXM"},
    {"a policy's start", policies, "prop", "proportional"},
    /* A typo of one or two edits. */
    {"one edit", policies, "effciency", "efficiency"},
    {"two edits", keys, "buget_margn", "budget_margin"},
    {"edit and case", gpus, "rtx4090", "RTX-4090"},
    {"a key's typo", keys, "polcy", "policy"},
    /* Nothing close: no suggestion rather than a wild one. */
    {"far", policies, "maximum", NULL},
    {"short and different", units, "x", NULL},
    {"one letter is no prefix", gpus, "h", NULL},
    {"one edit in three letters", keys, "cep", "cap"},
    {"three edits", keys, "bdgtmrgn", NULL},
};

static void suggests(void **state) {
  const suggest_case *c = *state;
  sim_suggest s;
  sim_suggest_init(&s, c->unknown);
  for (size_t i = 0; c->known[i] != NULL; i++)
    sim_suggest_add(&s, c->known[i]);
  const char *got = sim_suggest_best(&s);
  if (c->expect == NULL) {
    if (got != NULL)
      fail_msg("'%s': suggested '%s', expected none", c->unknown, got);
    return;
  }
  if (got == NULL || strcmp(got, c->expect) != 0)
    fail_msg("'%s': suggested '%s', expected '%s'", c->unknown,
             got ? got : "(none)", c->expect);
}

/* The text names the suggestion, or is empty; it is cut to the buffer. */
static void text_and_truncation(void **state) {
  (void)state;
  sim_suggest s;
  char buf[64];
  sim_suggest_init(&s, "h100");
  sim_suggest_add(&s, "H100-SXM");
  assert_int_equal(sim_suggest_text(&s, buf, sizeof buf), 25);
  assert_string_equal(buf, "did you mean 'H100-SXM'? ");
  char small[8];
  assert_int_equal(sim_suggest_text(&s, small, sizeof small), 7);
  assert_string_equal(small, "did you");
  sim_suggest_init(&s, "zzz");
  sim_suggest_add(&s, "H100-SXM");
  assert_int_equal(sim_suggest_text(&s, buf, sizeof buf), 0);
  assert_string_equal(buf, "");
  sim_suggest_add(&s, NULL); /* ignored */
  assert_null(sim_suggest_best(&s));
}

/* Names beyond 63 characters are never close (the distance is capped). */
static void long_names_are_not_close(void **state) {
  (void)state;
  char a[100], b[100];
  memset(a, 'x', 80);
  a[80] = '\0';
  memcpy(b, a, sizeof a);
  b[79] = 'y';
  sim_suggest s;
  sim_suggest_init(&s, a);
  sim_suggest_add(&s, b);
  /* Not equal and no edit distance: only the prefix rule could match. */
  assert_null(sim_suggest_best(&s));
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, suggests, rows);
  TEST_ADD(tests, n, text_and_truncation);
  TEST_ADD(tests, n, long_names_are_not_close);
  return _cmocka_run_group_tests("suggest", tests, n, NULL, NULL);
}
