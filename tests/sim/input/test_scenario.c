/* test_scenario.c - the schema-driven loader: values, defaults, every kind
 * of bad input with its FILE:LINE:COLUMN, overrides, check hooks, and the
 * resolved scenario reading back to the same values. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

typedef struct item {
  int64_t k;
} item;

typedef struct inner {
  double x_s;
} inner;

typedef struct conf {
  char *name;
  int64_t count;
  double power_w;
  double ratio;
  bool on;
  int mode;
  inner in;
  item *items;
  size_t nitems;
  char **tags;
  size_t ntags;
  double optional_w;
} conf;

static const char *const modes[] = {"alpha", "beta", NULL};

static const scn_field item_fields[] = {
    {.key = "k",
     .type = SCN_INT,
     .offset = offsetof(item, k),
     .min = 0,
     .max = 100,
     .flags = SCN_REQUIRED,
     .help = "k help"},
};
static const scn_schema item_schema =
    SCN_SCHEMA("item", item, item_fields, .check = NULL);

static const scn_field inner_fields[] = {
    {.key = "x",
     .type = SCN_QUANTITY,
     .offset = offsetof(inner, x_s),
     .dim = UNITS_TIME,
     .dflt = "1 s"},
};
static const scn_schema inner_schema =
    SCN_SCHEMA("inner", inner, inner_fields, .check = NULL);

/* A check hook: count above 5 needs power above 1 kW. */
static int check_conf(void *obj, const scn_loc *loc, void *user,
                      sim_error *err) {
  conf *c = obj;
  if (user != NULL)
    ++*(int *)user;
  if (c->count > 5 && c->power_w <= 1000)
    return scn_fail(loc, "power", err, "raise it", "too little power");
  if (c->nitems > 1 && c->items[1].k == 42)
    return scn_fail(loc, "items.1.k", err, NULL, "42 is not allowed");
  return SIM_OK;
}

static const scn_field conf_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(conf, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "name help"},
    {.key = "count",
     .type = SCN_INT,
     .offset = offsetof(conf, count),
     .min = 1,
     .max = 10,
     .dflt = "3"},
    {.key = "power",
     .type = SCN_QUANTITY,
     .offset = offsetof(conf, power_w),
     .dim = UNITS_POWER,
     .min = 0,
     .max = HUGE_VAL,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "power help"},
    {.key = "ratio",
     .type = SCN_QUANTITY,
     .offset = offsetof(conf, ratio),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .dflt = "50%"},
    {.key = "on",
     .type = SCN_BOOL,
     .offset = offsetof(conf, on),
     .dflt = "false"},
    {.key = "mode",
     .type = SCN_ENUM,
     .offset = offsetof(conf, mode),
     .names = modes,
     .dflt = "alpha"},
    {.key = "inner",
     .type = SCN_MAP,
     .offset = offsetof(conf, in),
     .sub = &inner_schema},
    {.key = "items",
     .type = SCN_LIST,
     .offset = offsetof(conf, items),
     .sub = &item_schema,
     .count_offset = offsetof(conf, nitems)},
    {.key = "tags",
     .type = SCN_STRINGS,
     .offset = offsetof(conf, tags),
     .count_offset = offsetof(conf, ntags)},
    {.key = "optional",
     .type = SCN_QUANTITY,
     .offset = offsetof(conf, optional_w),
     .dim = UNITS_POWER},
};
static const scn_schema conf_schema =
    SCN_SCHEMA("test scenario", conf, conf_fields, .check = check_conf);

static int bind(const char *text, conf *c, sim_error *err) {
  memset(c, 0, sizeof *c);
  return scn_bind_string("t.yaml", text, &conf_schema, c, NULL, err);
}

static void good_document_fills_values_and_defaults(void **state) {
  (void)state;
  conf c;
  sim_error err = {0};
  int rc = bind("name: plant\npower: 2 MW\nmode: beta\ninner: {x: 250 ms}\n"
                "items:\n  - k: 1\n  - k: 2\ntags: [a, 'b c']\n",
                &c, &err);
  if (rc != SIM_OK)
    fail_msg("%s", err.msg);
  assert_string_equal(c.name, "plant");
  assert_int_equal(c.count, 3);
  assert_true(c.power_w == 2e6);
  assert_true(c.ratio == 0.5);
  assert_false(c.on);
  assert_int_equal(c.mode, 1);
  assert_true(c.in.x_s == 0.25);
  assert_int_equal(c.nitems, 2);
  assert_int_equal(c.items[1].k, 2);
  assert_int_equal(c.ntags, 2);
  assert_string_equal(c.tags[1], "b c");
  assert_true(isnan(c.optional_w));
  scn_release(&conf_schema, &c);
  assert_null(c.name);
}

typedef struct bad_case {
  const char *name;
  const char *text;
  const char *where;   /* "t.yaml:LINE:COL" */
  const char *message; /* substring */
} bad_case;

static const bad_case bad[] = {
    {"empty", "", "t.yaml:1:1", "empty"},
    {"comments only", "# nothing\n", "t.yaml:1:1", "empty"},
    {"syntax", "name: a\npower: 1 W\n  x: 2\n", "t.yaml:2:8", "syntax"},
    {"not a mapping", "- a\n- b\n", "t.yaml:1:3", "must be a mapping"},
    {"unknown key", "name: a\npower: 1 W\npwoer: 2 W\n", "t.yaml:3:1",
     "unknown key 'pwoer'"},
    {"unknown nested", "name: a\npower: 1 W\ninner: {y: 1 s}\n", "t.yaml:3:9",
     "unknown key 'y' in inner"},
    {"missing required", "power: 1 W\n", "t.yaml:1:1",
     "missing required key 'name'"},
    {"missing in item", "name: a\npower: 1 W\nitems:\n  - {}\n", "t.yaml:3:1",
     "missing required key 'k'"},
    {"missing unit", "name: a\npower: 20\n", "t.yaml:2:10", "missing unit"},
    {"wrong dimension", "name: a\npower: 3 MWh\n", "t.yaml:2:10",
     "unit of energy"},
    {"quoted wrong unit", "name: a\npower: \"3 kWs\"\n", "t.yaml:2:11",
     "unknown unit"},
    {"zero", "name: a\npower: 0 W\n", "t.yaml:2:8", "greater than zero"},
    {"negative", "name: a\npower: -5 kW\n", "t.yaml:2:8", "greater than zero"},
    {"int range", "name: a\npower: 1 W\ncount: 11\n", "t.yaml:3:8",
     "between 1 and 10"},
    {"not an int", "name: a\npower: 1 W\ncount: 4.5\n", "t.yaml:3:8",
     "must be an integer"},
    {"fraction range", "name: a\npower: 1 W\nratio: 150%\n", "t.yaml:3:8",
     "between"},
    {"bool", "name: a\npower: 1 W\non: yes\n", "t.yaml:3:5", "true or false"},
    {"enum", "name: a\npower: 1 W\nmode: gamma\n", "t.yaml:3:7",
     "cannot be 'gamma'"},
    {"map as scalar", "name: a\npower: 1 W\ninner: 5\n", "t.yaml:3:8",
     "must be a mapping"},
    {"list as map", "name: a\npower: 1 W\nitems: {k: 1}\n", "t.yaml:3:9",
     "must be a list"},
    {"scalar as list item", "name: a\npower: 1 W\nitems: [3]\n", "t.yaml:3:9",
     "each item of 'items' must be a mapping"},
    {"null value", "name: a\npower:\n", "t.yaml:2:1", "has no value"},
    {"empty name", "name: ''\npower: 1 W\n", "t.yaml:1:8", "must not be empty"},
    {"alias", "name: &n a\npower: 1 W\ntags: [*n]\n", "t.yaml:3:", "aliases"},
    {"duplicate", "name: a\nname: b\npower: 1 W\n", "t.yaml:2:1", "duplicate"},
    {"two documents", "name: a\npower: 1 W\n---\nname: b\n", "t.yaml:4:1",
     "second YAML document"},
    {"check hook", "name: a\ncount: 6\npower: 1 kW\n", "t.yaml:3:8",
     "too little power"},
    {"check hook path", "name: a\npower: 1 W\nitems: [{k: 1}, {k: 42}]\n",
     "t.yaml:3:21", "42 is not allowed"},
    {"tab indent", "name: a\npower: 1 W\ninner:\n\tx: 1 s\n",
     "t.yaml:4:", "syntax"},
    {"unterminated quote", "name: \"a\npower: 1 W\n", "t.yaml:", "syntax"},
    /* Strict UTF-8: libfyaml's directive scanner loops for ever on an
     * overlong form (fuzz_sweep's finding), so none reaches it. */
    {"overlong after a directive", "%12\xe0\x94\xa8)))\n", "t.yaml:1:4",
     "not UTF-8 text (byte 0xe0)"},
    {"overlong 2-byte", "name: \xc0\xaf\n", "t.yaml:1:7", "byte 0xc0"},
    {"surrogate", "name: \xed\xa0\x80\n", "t.yaml:1:7", "byte 0xed"},
    {"above U+10FFFF", "name: \xf4\x90\x80\x80\n", "t.yaml:1:7",
     "byte 0xf4"},
    {"cut short", "name: a\xe2\x82", "t.yaml:1:8", "byte 0xe2"},
};

/* Text in every script the scenarios may hold is accepted. */
static void utf8_text_is_accepted(void **state) {
  (void)state;
  conf c;
  sim_error err = {0};
  assert_int_equal(bind("name: \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "
                        "\xed\x9f\xbf \xf4\x8f\xbf\xbf\"\npower: 1 W\n",
                        &c, &err),
                   SIM_OK);
  scn_release(&conf_schema, &c);
}

static void bad_document_is_rejected_with_position(void **state) {
  const bad_case *b = *state;
  conf c;
  sim_error err = {0};
  int rc = bind(b->text, &c, &err);
  assert_int_equal(rc, SIM_EINPUT);
  assert_int_equal(err.code, SIM_EINPUT);
  if (strncmp(err.msg, b->where, strlen(b->where)) != 0 ||
      strstr(err.msg, b->message) == NULL)
    fail_msg("got '%s', want '%s...' with '%s'", err.msg, b->where, b->message);
  /* Nothing is left to free: a failed bind cleans up after itself. */
  for (size_t i = 0; i < sizeof c; i++)
    assert_int_equal(((unsigned char *)&c)[i], 0);
}

static void hints_name_the_fix(void **state) {
  (void)state;
  conf c;
  sim_error err = {0};
  bind("name: a\npower: 1 W\ncuont: 3\n", &c, &err);
  assert_non_null(strstr(err.msg, "hint: did you mean 'count'?"));
  bind("name: a\npower: 1 W\nmode: gamma\n", &c, &err);
  assert_non_null(strstr(err.msg, "one of: alpha, beta"));
  bind("name: a\ncount: 6\npower: 1 kW\n", &c, &err);
  assert_non_null(strstr(err.msg, "hint: raise it"));
}

static void check_hook_sees_user_pointer(void **state) {
  (void)state;
  conf c = {0};
  int calls = 0;
  sim_error err = {0};
  assert_int_equal(scn_bind_string("t.yaml", "name: a\npower: 1 W\n",
                                   &conf_schema, &c, &calls, &err),
                   SIM_OK);
  assert_int_equal(calls, 1);
  scn_release(&conf_schema, &c);
}

static scn_doc *read(const char *text) {
  sim_error err = {0};
  scn_doc *d = scn_doc_read_string("t.yaml", text, strlen(text), &err);
  if (d == NULL)
    fail_msg("%s", err.msg);
  return d;
}

static void overrides_replace_and_create(void **state) {
  (void)state;
  scn_doc *d = read("name: a\npower: 1 W\nitems: [{k: 1}, {k: 2}]\n");
  sim_error err = {0};
  assert_int_equal(scn_doc_set(d, "power=3 MW", &err), SIM_OK);
  assert_int_equal(scn_doc_set(d, "inner.x=2 h", &err), SIM_OK);
  assert_int_equal(scn_doc_set(d, "items[1].k=7", &err), SIM_OK);
  assert_int_equal(scn_doc_set(d, "items.0.k=5", &err), SIM_OK);
  assert_int_equal(scn_doc_set(d, "tags=[x, y]", &err), SIM_OK);
  assert_string_equal(scn_doc_scalar(d, "power"), "3 MW");
  conf c = {0};
  if (scn_bind(d, &conf_schema, &c, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_true(c.power_w == 3e6);
  assert_true(c.in.x_s == 7200);
  assert_int_equal(c.items[0].k, 5);
  assert_int_equal(c.items[1].k, 7);
  assert_int_equal(c.ntags, 2);
  scn_release(&conf_schema, &c);
  scn_doc_destroy(d);
}

/* A key is matched as written: "a # b" is a key with a hash in it, not
 * "a" and a comment, so setting it twice replaces it (found by
 * fuzz_scenario: the second --set created its parent again, the append
 * failed as a duplicate and the new mapping leaked). */
static void override_keys_match_as_written(void **state) {
  (void)state;
  scn_doc *d = read("name: a\n");
  sim_error err = {0};
  assert_int_equal(scn_doc_set(d, "t#x.y=1", &err), SIM_OK);
  assert_int_equal(scn_doc_set(d, "t#x.y=2", &err), SIM_OK);
  assert_string_equal(scn_doc_scalar(d, "t#x.y"), "2");
  scn_doc_destroy(d);
}

typedef struct set_case {
  const char *name;
  const char *assignment;
  int set_rc;          /* of scn_doc_set */
  const char *message; /* from set or bind */
} set_case;

static const set_case sets[] = {
    {"no equals", "power", SIM_EINPUT, "--set power:1:1: expected KEY=VALUE"},
    {"no value", "power=", SIM_EINPUT, "expected KEY=VALUE"},
    {"no key", "=5", SIM_EINPUT, "expected KEY=VALUE"},
    {"index out of range", "items.5.k=1", SIM_EINPUT, "out of range"},
    {"set item out of range", "items.5=1", SIM_EINPUT, "out of range"},
    {"through a scalar", "name.x=1", SIM_EINPUT, "not a mapping"},
    {"unknown key", "pwr=5 W", SIM_OK, "--set pwr=5 W:1:1: unknown key 'pwr'"},
    {"bad unit", "power=5 Wh", SIM_OK, "--set power=5 Wh:1:9: 'power'"},
    {"bad nested", "inner.x=5 W", SIM_OK, "--set inner.x=5 W:1:11:"},
    /* libfyaml loops for ever on a directive with bytes that are not
     * UTF-8 (fuzz_scenario's finding): refused first, not echoed. */
    {"directive, not UTF-8", "power=% h\x80\x80", SIM_EINPUT,
     "--set: not UTF-8 text (byte 0x80 at character 10)"},
    {"not UTF-8", "power=5 \xff", SIM_EINPUT, "not UTF-8 text (byte 0xff"},
    /* A key with stray spaces was "out of memory" (issue 28): an error
     * at the space. */
    {"space before =", "power =5 W", SIM_EINPUT,
     "--set power =5 W:1:6: the key has a space in it"},
    {"space first", " power=5 W", SIM_EINPUT, "--set  power=5 W:1:1: the key"},
    {"space inside", "inner .x=5 W", SIM_EINPUT, "--set inner .x=5 W:1:6:"},
    {"tab in key", "inner.\tx=5 W", SIM_EINPUT, ":1:7: the key has a space"},
    /* No upper bound of its own: the largest power of all (issue 28: 1e304
     * W passed check, and the run failed at its end). */
    {"beyond every power", "power=1e304 W", SIM_OK,
     "--set power=1e304 W:1:7: 'power' is 1e304 W; a power may be at most "
     "100 GW"},
};

static void bad_overrides_point_at_the_override(void **state) {
  const set_case *s = *state;
  scn_doc *d = read("name: a\npower: 1 W\nitems: [{k: 1}]\n");
  sim_error err = {0};
  int rc = scn_doc_set(d, s->assignment, &err);
  assert_int_equal(rc, s->set_rc);
  if (rc == SIM_OK) {
    conf c = {0};
    assert_int_equal(scn_bind(d, &conf_schema, &c, NULL, &err), SIM_EINPUT);
  }
  if (strstr(err.msg, s->message) == NULL)
    fail_msg("got '%s', want '%s'", err.msg, s->message);
  scn_doc_destroy(d);
}

/* The resolved text binds to the same values and emits the same text. */
static void emit_round_trips(void **state) {
  (void)state;
  conf a, b;
  sim_error err = {0};
  assert_int_equal(bind("name: \"q\\\"uote\"\npower: 1234.5678 kW\non: true\n"
                        "ratio: 0.3\nitems: [{k: 3}]\ntags: ['x: y', '#z']\n",
                        &a, &err),
                   SIM_OK);
  char *t1 = scn_emit(&conf_schema, &a);
  assert_non_null(t1);
  if (bind(t1, &b, &err) != SIM_OK)
    fail_msg("%s\n%s", err.msg, t1);
  char *t2 = scn_emit(&conf_schema, &b);
  assert_string_equal(t1, t2);
  assert_string_equal(a.name, b.name);
  assert_true(a.power_w == b.power_w && a.ratio == b.ratio && b.on);
  assert_string_equal(b.tags[0], "x: y");
  assert_null(strstr(t1, "optional"));
  free(t1);
  free(t2);
  scn_release(&conf_schema, &a);
  scn_release(&conf_schema, &b);
}

static void limits_on_the_input(void **state) {
  (void)state;
  sim_error err = {0};
  size_t big = SCN_MAX_BYTES + 10;
  char *text = malloc(big);
  memset(text, '#', big);
  assert_null(scn_doc_read_string("big.yaml", text, big, &err));
  assert_non_null(strstr(err.msg, "big.yaml:1:1:"));
  assert_non_null(strstr(err.msg, "at most"));
  memcpy(text, "name: a\npo\0wer: 1 W\n", 20);
  assert_null(scn_doc_read_string("nul.yaml", text, 20, &err));
  assert_non_null(strstr(err.msg, "nul.yaml:2:3: NUL byte"));
  memset(text, '[', 100000);
  assert_null(scn_doc_read_string("deep.yaml", text, 100000, &err));
  assert_non_null(strstr(err.msg, "deep.yaml:1:"));
  free(text);
  assert_null(scn_doc_read_file("/nonexistent/x.yaml", &err));
  assert_int_equal(err.code, SIM_EIO);
  assert_non_null(strstr(err.msg, "/nonexistent/x.yaml"));
}

static void scalar_lookup(void **state) {
  (void)state;
  scn_doc *d = read("name: a\ninner: {x: 3 s}\nitems: [{k: 1}]\n");
  assert_string_equal(scn_doc_scalar(d, "inner.x"), "3 s");
  assert_string_equal(scn_doc_scalar(d, "items.0.k"), "1");
  assert_null(scn_doc_scalar(d, "inner"));
  assert_null(scn_doc_scalar(d, "missing"));
  assert_string_equal(scn_doc_name(d), "t.yaml");
  scn_doc_destroy(d);
  scn_doc_destroy(NULL);
}

/* A scenario of 1 MiB whose parse takes tens of MB (a sequence of 250 Ki
 * items: libfyaml keeps a token and a node for each). Static, not
 * malloc'd: test_with_room skips by a long jump (ASan builds), which
 * would leak a heap copy. */
static char *big_sequence(size_t *len) {
  enum { ITEMS = 250 * 1024 };
  static char text[ITEMS * 4 + 8];
  memcpy(text, "x:\n", 3);
  for (size_t i = 0; i < ITEMS - 1; i++)
    memcpy(text + 3 + 4 * i, "- 1\n", 4);
  *len = 3 + 4 * (size_t)(ITEMS - 1);
  text[*len] = '\0';
  return text;
}

/* In the child: 0 when the read failed with SIM_ENOMEM in the parse. */
static int read_big(void *ctx) {
  const char *text = ctx;
  sim_error err = {0};
  scn_doc *doc = scn_doc_read_string("big.yaml", text, strlen(text), &err);
  if (doc != NULL)
    return 3;
  if (err.code == SIM_ENOMEM &&
      strcmp(err.msg, "big.yaml: out of memory parsing it") == 0)
    return 0;
  fprintf(stderr, "child: %s (%s)\n", err.msg, sim_err_name(err.code));
  return err.code == SIM_ENOMEM ? 1 : 2;
}

/* libfyaml allocates with malloc and tells a failed allocation by no
 * document and no diagnostic, as for an empty file: under a real limit,
 * 4 MB above what the process maps (the copy of the text fits, the parse
 * does not), the read must fail as out of memory (exit 1), never as
 * "the scenario is empty" (an input error, exit 2). */
static void parse_out_of_memory_is_not_an_input_error(void **state) {
  (void)state;
  size_t len;
  char *text = big_sequence(&len);
  assert_in_range(len, 1000000, SCN_MAX_BYTES);
  assert_int_equal(test_with_room((size_t)4 << 20, read_big, text), 0);
}

/* Fills malloc's free memory with blocks of size bytes; returns the
 * last, each holding the one before. */
static void *fill_with(size_t size, void *last) {
  for (void **b; (b = malloc(size)) != NULL; last = b)
    *b = last;
  return last;
}

/* In the child: malloc's free memory cut to *ctx blocks of 256 bytes
 * (the address space filled with them, then with ever smaller ones, and
 * that many of the 256-byte ones freed), then a small scenario read. 0
 * when it parsed, 1 when it failed out of memory naming the file, 2 for
 * any other outcome. */
static int read_small(void *ctx) {
  static const char text[] = "name: small\nduration: 1h\n";
  void *last = fill_with(256, NULL);
  for (size_t size = 128; size >= 16; size /= 2)
    (void)fill_with(size, NULL);
  for (size_t k = *(const size_t *)ctx; k > 0 && last != NULL; k--) {
    void *next = *(void **)last;
    free(last);
    last = next;
  }
  sim_error err = {0};
  scn_doc *doc = scn_doc_read_string("small.yaml", text, strlen(text), &err);
  if (doc != NULL) {
    scn_doc_destroy(doc);
    return 0;
  }
  if (err.code == SIM_ENOMEM && strncmp(err.msg, "small.yaml: ", 12) == 0)
    return 1;
  fprintf(stderr, "child: %s (%s)\n", err.msg, sim_err_name(err.code));
  return 2;
}

/* With malloc's free memory stepped up from nothing by 256 bytes, the
 * read fails at each of its allocations in turn (the copy, libfyaml's
 * diagnostics, its parser, the parse) until it parses: every failure is
 * out of memory and names the file (a bare "out of memory" left the user
 * guessing which input), none crashes (libfyaml 0.7.12 did where its
 * input's allocation failed: scenario.c, input_room), and some fail, or
 * the check checked nothing. */
static void every_out_of_memory_names_the_file(void **state) {
  (void)state;
  int failed = 0, rc = 1;
  for (size_t k = 0; k <= 1024 && rc == 1; k++) {
    rc = test_with_room(64 << 10, read_small, &k);
    assert_in_range(rc, 0, 1);
    failed += rc;
  }
  assert_true(failed > 0);
  assert_int_equal(rc, 0);
}

int main(void) {
  struct CMUnitTest tests[128];
  size_t n = 0;
  tests[n++] = (struct CMUnitTest)cmocka_unit_test(
      good_document_fills_values_and_defaults);
  TEST_ROWS(tests, n, bad_document_is_rejected_with_position, bad);
  TEST_ROWS(tests, n, bad_overrides_point_at_the_override, sets);
  TEST_ADD(tests, n, hints_name_the_fix);
  TEST_ADD(tests, n, utf8_text_is_accepted);
  TEST_ADD(tests, n, check_hook_sees_user_pointer);
  TEST_ADD(tests, n, overrides_replace_and_create);
  TEST_ADD(tests, n, override_keys_match_as_written);
  TEST_ADD(tests, n, emit_round_trips);
  TEST_ADD(tests, n, limits_on_the_input);
  TEST_ADD(tests, n, scalar_lookup);
  TEST_ADD(tests, n, parse_out_of_memory_is_not_an_input_error);
  TEST_ADD(tests, n, every_out_of_memory_names_the_file);
  return _cmocka_run_group_tests("scenario", tests, n, NULL, NULL);
}
