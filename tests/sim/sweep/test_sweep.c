/* test_sweep.c - sweeps (sweep.c) with fake hooks in place of the factory:
 * point order, ranges with units, zipped axes, replicate seeds, shards
 * that cover every point once (Slurm array tasks, srun tasks, and both),
 * and bad sweep files with their positions. The run is in
 * test_sweep_run.c. */
#include "test_sweep_fake.h"

/* ---- Point order, ranges, zips, seeds ---------------------------------- */

typedef struct order_case {
  const char *name;
  const char *body; /* after "base: base.yaml\n" */
  const char *points;
} order_case;

static const order_case orders[] = {
    {"no axes: one point", "", ""},
    {"last axis fastest",
     "axes:\n  - {key: a, values: [1, 2]}\n  - {key: b, values: [x, y, z]}\n",
     "a=1 b=x|a=1 b=y|a=1 b=z|a=2 b=x|a=2 b=y|a=2 b=z"},
    {"seeds innermost", "axes: [{key: a, values: [1, 2]}]\nseeds: [7, 9]\n",
     "a=1 seed=7|a=1 seed=9|a=2 seed=7|a=2 seed=9"},
    {"replicates from the base seed", "replicates: 3\n",
     "seed=42|seed=43|seed=44"},
    {"replicates from a set seed", "set: [seed=10]\nreplicates: 2\n",
     "seed=10|seed=11"},
    {"range in kW",
     "axes: [{key: p, range: {from: 500kW, to: 700kW, step: "
     "100kW}}]\n",
     "p=500kW|p=600kW|p=700kW"},
    {"range steps in another unit",
     "axes: [{key: p, range: {from: 500kW, to: 1MW, step: 0.25MW}}]\n",
     "p=500kW|p=750kW|p=1000kW"},
    {"range of tenths reads cleanly",
     "axes: [{key: f, range: {from: 0.1, to: 0.5, step: 0.1}}]\n",
     "f=0.1|f=0.2|f=0.3|f=0.4|f=0.5"},
    {"range with spaces and hours",
     "axes: [{key: d, range: {from: 1 h, to: 2 h, step: 30 min}}]\n",
     "d=1 h|d=1.5 h|d=2 h"},
    {"range in percent",
     "axes: [{key: l, range: {from: 50%, to: 70%, step: 10%}}]\n",
     "l=50%|l=60%|l=70%"},
    {"range short of its end",
     "axes: [{key: n, range: {from: 1, to: 10, step: 4}}]\n", "n=1|n=5|n=9"},
    {"zip varies together",
     "axes:\n  - zip:\n      - {key: a, values: [1, 2]}\n"
     "      - {key: b, range: {from: 10, to: 20, step: 10}}\n"
     "  - {key: c, values: [p, q]}\n",
     "a=1 b=10 c=p|a=1 b=10 c=q|a=2 b=20 c=p|a=2 b=20 c=q"},
    {"values as written",
     "axes: [{key: 'racks[0].load', values: ['{pattern: constant}', "
     "\"x y\"]}]\n",
     "racks[0].load={pattern: constant}|racks[0].load=x y"},
};

static void points_come_in_order(void **state) {
  const order_case *c = *state;
  char text[2048], got[4096];
  fake f = {0};
  sim_error err = {0};
  snprintf(text, sizeof text, "base: base.yaml\n%s", c->body);
  sweep *s = load_text("order.yaml", text, &f, &err);
  if (s == NULL)
    fail_msg("%s", err.msg);
  points_text(s, got, sizeof got);
  assert_string_equal(got, c->points);
  assert_int_equal(f.checks, (int)sweep_npoints(s) + 1); /* + the base */
  sweep_destroy(s);
}

static void columns_have_normalized_keys(void **state) {
  (void)state;
  fake f = {0};
  sim_error err = {0};
  sweep *s = load_text("columns.yaml",
                       "base: base.yaml\n"
                       "axes:\n"
                       "  - {key: 'racks[1].count', values: [4, 8]}\n"
                       "  - {key: power.cap, values: [1MW]}\n"
                       "replicates: 2\n",
                       &f, &err);
  assert_non_null(s);
  assert_int_equal(sweep_ncolumns(s), 3);
  assert_string_equal(sweep_column_key(s, 0), "racks.1.count");
  assert_string_equal(sweep_column_key(s, 1), "power.cap");
  assert_string_equal(sweep_column_key(s, 2), "seed");
  assert_string_equal(sweep_point_value(s, 3, 0), "8");
  assert_string_equal(sweep_point_value(s, 3, 2), "43");
  assert_string_equal(sweep_base(s), test_out_path("base.yaml"));
  assert_string_equal(sweep_base_written(s), "base.yaml");
  sweep_destroy(s);
}

static void point_files_are_numbered(void **state) {
  (void)state;
  char path[256];
  fake f = {0};
  sim_error err = {0};
  sweep *s = load_text(
      "wide.yaml",
      "base: base.yaml\naxes: [{key: n, range: {from: 0, to: 10000, step: "
      "1}}]\n",
      &f, &err);
  assert_non_null(s);
  assert_int_equal(sweep_npoints(s), 10001);
  assert_int_equal(sweep_point_path(s, "d/", 42, ".h5", path, sizeof path),
                   SIM_OK);
  assert_string_equal(path, "d/point-00042.h5");
  assert_int_equal(sweep_point_path(s, "d", 7, ".x", path, 8), SIM_ERANGE);
  sweep_destroy(s);
  s = load_text("narrow.yaml", "base: base.yaml\nreplicates: 2\n", &f, &err);
  assert_non_null(s);
  assert_int_equal(sweep_point_path(s, "d", 1, ".h5", path, sizeof path),
                   SIM_OK);
  assert_string_equal(path, "d/point-0001.h5");
  sweep_destroy(s);
}

/* ---- Shards ------------------------------------------------------------ */

static void shards_cover_every_point_once(void **state) {
  (void)state;
  static const size_t sizes[] = {1, 2, 7, 18, 100};
  for (size_t k = 0; k < N_OF(sizes); k++)
    for (size_t n = 1; n <= 9; n++)
      for (size_t p = 0; p < sizes[k]; p++) {
        int owners = 0;
        for (size_t i = 0; i < n; i++) {
          sweep_shard sh = {i, n};
          owners += sweep_shard_has(&sh, p);
        }
        if (owners != 1)
          fail_msg("point %zu of %zu in %d of %zu shards", p, sizes[k], owners,
                   n);
      }
}

typedef struct shard_case {
  const char *name;
  const char *text;
  int ok;
  size_t index, count;
} shard_case;

static const shard_case shard_texts[] = {
    {"0/3", "0/3", 1, 0, 3},
    {"2/3", "2/3", 1, 2, 3},
    {"3/3 out of range", "3/3", 0, 0, 0},
    {"no slash", "1", 0, 0, 0},
    {"zero shards", "0/0", 0, 0, 0},
    {"negative", "-1/3", 0, 0, 0},
    {"trailing text", "1/3x", 0, 0, 0},
    {"letters", "a/b", 0, 0, 0},
};

static void shard_option_parses(void **state) {
  const shard_case *c = *state;
  sweep_shard sh = {99, 99};
  sim_error err = {0};
  int rc = sweep_shard_parse(c->text, &sh, &err);
  if (c->ok) {
    assert_int_equal(rc, SIM_OK);
    assert_int_equal(sh.index, c->index);
    assert_int_equal(sh.count, c->count);
  } else {
    assert_int_equal(rc, SIM_EINPUT);
    assert_non_null(strstr(err.msg, "--shard"));
  }
}

typedef struct slurm_case {
  const char *name;
  const char *id, *min, *step, *count;
  int rc, found;
  size_t index, count_out;
} slurm_case;

static const slurm_case slurm[] = {
    {"not an array", NULL, NULL, NULL, NULL, SIM_OK, 0, 0, 0},
    {"0-5, task 3", "3", "0", "1", "6", SIM_OK, 1, 3, 6},
    {"1-6, task 6", "6", "1", "1", "6", SIM_OK, 1, 5, 6},
    {"0-10:2, task 4", "4", "0", "2", "6", SIM_OK, 1, 2, 6},
    {"no min or step", "2", NULL, NULL, "4", SIM_OK, 1, 2, 4},
    {"gaps cannot map", "9", "1", "1", "3", SIM_EINPUT, 1, 0, 0},
    {"garbage", "x", "0", "1", "3", SIM_EINPUT, 1, 0, 0},
};

static void slurm_array_gives_the_shard(void **state) {
  const slurm_case *c = *state;
  sweep_shard sh = {99, 99};
  bool found = true;
  sim_error err = {0};
  int rc = sweep_shard_from_slurm(c->id, c->min, c->step, c->count, &sh, &found,
                                  &err);
  assert_int_equal(rc, c->rc);
  assert_int_equal(found, c->found);
  if (rc == SIM_OK && found) {
    assert_int_equal(sh.index, c->index);
    assert_int_equal(sh.count, c->count_out);
  }
}

typedef struct step_case {
  const char *name;
  const char *procid, *ntasks;
  int rc, found;
  size_t index, count;
} step_case;

static const step_case steps[] = {
    {"not a step", NULL, NULL, SIM_OK, 0, 0, 0},
    {"procid alone (a batch script)", "0", NULL, SIM_OK, 0, 0, 0},
    {"srun -n 2, task 1", "1", "2", SIM_OK, 1, 1, 2},
    {"srun -n 1", "0", "1", SIM_OK, 1, 0, 1},
    {"procid out of range", "2", "2", SIM_EINPUT, 1, 0, 0},
    {"no tasks", "0", "0", SIM_EINPUT, 1, 0, 0},
    {"garbage", "x", "2", SIM_EINPUT, 1, 0, 0},
};

static void srun_task_gives_the_shard(void **state) {
  const step_case *c = *state;
  sweep_shard sh = {99, 99};
  bool found = true;
  sim_error err = {0};
  int rc = sweep_shard_from_step(c->procid, c->ntasks, &sh, &found, &err);
  assert_int_equal(rc, c->rc);
  assert_int_equal(found, c->found);
  if (rc == SIM_OK && found) {
    assert_int_equal(sh.index, c->index);
    assert_int_equal(sh.count, c->count);
  } else if (rc != SIM_OK) {
    assert_non_null(strstr(err.msg, "SLURM_PROCID"));
  }
}

/* An array task's shard split by its srun tasks: the tasks of one array
 * task own exactly its points, each once. */
static void split_shards_cover_their_shard_once(void **state) {
  (void)state;
  for (size_t a = 1; a <= 4; a++)
    for (size_t t = 1; t <= 3; t++)
      for (size_t p = 0; p < 50; p++)
        for (size_t i = 0; i < a; i++) {
          sweep_shard outer = {i, a};
          int owners = 0;
          for (size_t k = 0; k < t; k++) {
            sweep_shard sh = sweep_shard_split(outer, (sweep_shard){k, t});
            owners += sweep_shard_has(&sh, p);
          }
          if (owners != (sweep_shard_has(&outer, p) ? 1 : 0))
            fail_msg("point %zu: %d owners among %zu tasks of shard %zu/%zu", p,
                     owners, t, i, a);
        }
  sweep_shard whole =
      sweep_shard_split((sweep_shard){0, 0}, (sweep_shard){0, 0});
  assert_int_equal(whole.count, 1);
}

/* ---- Bad sweep files --------------------------------------------------- */

typedef struct bad_case {
  const char *name;
  const char *text;
  const char *pos; /* "LINE:COLUMN" */
  const char *substr;
} bad_case;

static const bad_case bad[] = {
    {"not a mapping", "- a\n", "1:3", "mapping"},
    {"no base", "axes: []\n", "1:1", "missing required key 'base'"},
    {"unknown key", "base: b.yaml\ncolour: red\n", "2:1", "unknown key"},
    {"unknown axis key", "base: b.yaml\naxes:\n  - {key: a, valeus: [1]}\n",
     "3:14", "did you mean 'values'"},
    {"axis without key", "base: b.yaml\naxes:\n  - {values: [1]}\n", "3:6",
     "needs a key"},
    {"axis with nothing", "base: b.yaml\naxes:\n  - {key: a}\n", "3:6",
     "either values or a range"},
    {"values and range",
     "base: b.yaml\naxes:\n  - {key: a, values: [1], range: {from: 1, to: "
     "2, step: 1}}\n",
     "3:6", "either values or a range"},
    {"empty values", "base: b.yaml\naxes:\n  - {key: a, values: []}\n", "3:6",
     "either values or a range"},
    {"mapping as a value",
     "base: b.yaml\naxes:\n  - {key: a, values: [{x: 1}]}\n", "3:24",
     "single value"},
    {"key with '='", "base: b.yaml\naxes:\n  - {key: a=1, values: [1]}\n",
     "3:11", "not a key path"},
    {"range without step",
     "base: b.yaml\naxes:\n  - {key: a, range: {from: 1, to: 2}}\n", "3:22",
     "from, to and step"},
    {"range step of another unit",
     "base: b.yaml\naxes:\n"
     "  - {key: p, range: {from: 500kW, to: 700kW, step: 5min}}\n",
     "3:52", "'min' is a unit of time; expected power"},
    {"range end of another unit",
     "base: b.yaml\naxes:\n"
     "  - {key: p, range: {from: 500kW, to: 2h, step: 1kW}}\n",
     "3:39", "does not go with 'from'"},
    {"range from no number",
     "base: b.yaml\naxes:\n  - {key: p, range: {from: lots, to: 2, step: "
     "1}}\n",
     "3:28", "not a number"},
    {"range step zero",
     "base: b.yaml\naxes:\n  - {key: p, range: {from: 1, to: 2, step: 0}}\n",
     "3:44", "above zero"},
    {"range downwards",
     "base: b.yaml\naxes:\n  - {key: p, range: {from: 5, to: 2, step: 1}}\n",
     "3:35", "below 'from'"},
    {"range too long",
     "base: b.yaml\naxes:\n"
     "  - {key: p, range: {from: 1, to: 1000000, step: 1}}\n",
     "3:22", "more than 100000 values"},
    {"grid too large",
     "base: b.yaml\naxes:\n"
     "  - {key: p, range: {from: 1, to: 1000, step: 1}}\n"
     "  - {key: q, range: {from: 1, to: 1000, step: 1}}\n"
     "  - {key: r, range: {from: 1, to: 1000, step: 1}}\n",
     "3:6", "more than 1000000 points"},
    {"zip of unequal lengths",
     "base: b.yaml\naxes:\n  - zip:\n      - {key: a, values: [1, 2]}\n"
     "      - {key: b, values: [1, 2, 3]}\n",
     "5:10", "'b' has 3 values but 'a' has 2"},
    {"zip with a key outside",
     "base: b.yaml\naxes:\n  - key: a\n    zip: [{key: b, values: [1]}]\n",
     "3:5", "inside 'zip'"},
    {"zip inside a zip", "base: b.yaml\naxes:\n  - zip: [{key: a, zip: []}]\n",
     "3:20", "unknown key 'zip'"},
    {"the same key twice",
     "base: b.yaml\naxes:\n  - {key: a, values: [1]}\n"
     "  - {key: 'a', values: [2]}\n",
     "4:12", "already an axis (axes.0)"},
    {"a key also in set",
     "base: b.yaml\nset: [a=1]\naxes:\n  - {key: a, values: [1]}\n", "4:11",
     "also set for every point"},
    {"seeds and replicates", "base: b.yaml\nseeds: [1]\nreplicates: 2\n",
     "3:13", "not both"},
    {"a seed that is no number", "base: b.yaml\nseeds: [1, two]\n", "2:12",
     "whole number"},
    {"a seed with a sign", "base: b.yaml\nseeds: [1, +2]\n", "2:12",
     "whole number"},
    {"replicates zero", "base: b.yaml\nreplicates: 0\n", "2:13",
     "between 1 and 100000"},
    {"seed axis and seeds",
     "base: b.yaml\naxes: [{key: seed, values: [1]}]\nreplicates: 2\n", "3:13",
     "already an axis"},
    /* What the scenario loader rejects, mapped to the sweep file. */
    {"unknown scenario key at the axis key",
     "base: b.yaml\naxes:\n  - {key: power.cap, values: [1]}\n"
     "  - {key: bad.key, values: [1, 2]}\n",
     "4:11", "point 0: unknown key"},
    {"bad value at the value",
     "base: b.yaml\naxes:\n  - {key: a, values: [1, BAD, 3]}\n", "3:26",
     "point 1: bad value\n  hint: not BAD"},
    {"bad value of a zip",
     "base: b.yaml\naxes:\n  - zip:\n      - {key: a, values: [1, 2]}\n"
     "      - {key: b, values: [3, BAD]}\n",
     "5:30", "point 1: bad value"},
    {"bad range value at its from",
     "base: b.yaml\naxes:\n  - {key: a, range: {from: BAD, to: BAD, step: "
     "1}}\n",
     "3:28", "not a number"},
    {"bad seed at the seed", "base: b.yaml\nseeds: [1, 2]\nset: [seed=BAD]\n",
     "3:7", "bad value"},
    {"bad fixed set at the set", "base: b.yaml\nset: [x=1, y=BAD]\n", "2:12",
     "bad value"},
    {"impossible combination at the point's first value",
     "base: b.yaml\naxes:\n  - {key: a, values: [1, 2]}\n"
     "  - {key: b, values: [1, 2]}\n",
     "3:26", "point 3 (a=2 b=2): base.yaml:3:4: a and b cannot"},
    {"missing base at base", "base: missing.yaml\n", "1:7",
     "the base scenario: "},
};

static void bad_sweep_is_rejected_with_position(void **state) {
  const bad_case *c = *state;
  fake f = {0};
  sim_error err = {0};
  char prefix[4200];
  const char *path = sweep_file("bad.yaml", c->text);
  sweep_hooks h = {fake_check, fake_run, NULL, &f, NULL, NULL, false};
  sweep *s = sweep_load(path, NULL, 0, &h, &err);
  if (s != NULL)
    fail_msg("loaded; expected '%s'", c->substr);
  assert_int_equal(err.code, SIM_EINPUT);
  snprintf(prefix, sizeof prefix, "%s:%s: ", path, c->pos);
  if (strncmp(err.msg, prefix, strlen(prefix)) != 0 ||
      strstr(err.msg, c->substr) == NULL)
    fail_msg("got '%s'\nwant '%s...%s'", err.msg, prefix, c->substr);
}

static void command_line_sets_are_fixed(void **state) {
  (void)state;
  fake f = {0};
  sim_error err = {0};
  sweep_hooks h = {fake_check, fake_run, NULL, &f, NULL, NULL, false};
  const char *path = sweep_file(
      "cli.yaml", "base: b.yaml\nset: [x=1]\naxes: [{key: a, values: [1]}]\n");
  const char *good[] = {"y=2", "seed=5"}, *dup[] = {"a=3"},
             *wrong[] = {"z=BAD"};
  size_t n;
  sweep *s = sweep_load(path, good, 2, &h, &err);
  assert_non_null(s);
  const char *const *fixed = sweep_fixed_sets(s, &n);
  assert_int_equal(n, 3);
  assert_string_equal(fixed[0], "x=1");
  assert_string_equal(fixed[2], "seed=5");
  sweep_destroy(s);
  assert_null(sweep_load(path, dup, 1, &h, &err));
  assert_non_null(strstr(err.msg, "--set a=3:1:1: 'a' is an axis"));
  assert_null(sweep_load(path, wrong, 1, &h, &err));
  assert_non_null(strstr(err.msg, "--set z=BAD:1:3: bad value"));
}

int main(void) {
  struct CMUnitTest tests[160];
  size_t n = 0;
  TEST_ROWS(tests, n, points_come_in_order, orders);
  TEST_ADD(tests, n, columns_have_normalized_keys);
  TEST_ADD(tests, n, point_files_are_numbered);
  TEST_ADD(tests, n, shards_cover_every_point_once);
  TEST_ROWS(tests, n, shard_option_parses, shard_texts);
  TEST_ROWS(tests, n, slurm_array_gives_the_shard, slurm);
  TEST_ROWS(tests, n, srun_task_gives_the_shard, steps);
  TEST_ADD(tests, n, split_shards_cover_their_shard_once);
  TEST_ROWS(tests, n, bad_sweep_is_rejected_with_position, bad);
  TEST_ADD(tests, n, command_line_sets_are_fixed);
  return _cmocka_run_group_tests("sweep", tests, n, NULL, NULL);
}
