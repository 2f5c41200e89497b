/* tel.h - telemetry: the interface between models and output writers.
 * A model declares its columns once (a table of name, units, long name) in
 * a group; a sink (the HDF5 writer, or a memory sink for tests) consumes
 * the declarations and appends one row per sample. Adding a column never
 * changes a sink. */
#ifndef SIM_TEL_H
#define SIM_TEL_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct tel_column {
  const char *name;      /* dataset name, e.g. "power_w" */
  const char *units;     /* e.g. "W"; "1" for dimensionless */
  const char *long_name; /* e.g. "facility power drawn from the feed" */
} tel_column;

/* A group of columns sampled together. Without an axis (axis_name NULL,
 * width 1) each column is a 1-D series [time]; with one, each is 2-D
 * [time, width] even for width 1 (one rack is still a rack), and the
 * second axis is named by axis_name with one label per position. */
typedef struct tel_group {
  const char *name; /* "facility", "racks", "services/chat", ... */
  const tel_column *columns;
  size_t ncolumns;
  size_t width;
  const char *axis_name;          /* "rack"; NULL for a 1-D group */
  const char *const *axis_labels; /* width labels; NULL for a 1-D group */
} tel_group;

/* A table written once, whole: /NAME with one 1-D dataset per column over
 * a row axis (a job per row, say). A column holds numbers (values, nrows
 * of them, with units) or text (texts, nrows strings; units ignored). */
typedef struct tel_table_column {
  const char *name, *units, *long_name;
  const double *values;     /* or NULL for a text column */
  const char *const *texts; /* for a text column */
} tel_table_column;

typedef struct tel_table {
  const char *name; /* "jobs" */
  const tel_table_column *columns;
  size_t ncolumns, nrows; /* nrows may be 0 */
  /* The row axis ("job"), or NULL for none: a sink that keeps dimensions
   * (the HDF5 writer) adds the row numbers 0..nrows-1 under this name as
   * every column's dimension scale, so netCDF readers see a named
   * dimension. It must not be a column's name. */
  const char *axis_name;
} tel_table;

/* A /summary metric, declared once, beside the model that computes it:
 * the one declaration behind the file's value, its units and long_names
 * attributes, `aifsim run`'s printout, the Python tables and the list in
 * docs/OUTPUT.md. Rows are constant data (string literals): a model's rows
 * live in its file, and whoever writes the summary loops over them. */
typedef struct tel_metric {
  const char *key;       /* the /summary attribute, e.g. "energy_mwh" */
  const char *units;     /* "MWh"; "1" dimensionless; NULL for a text */
  const char *long_name; /* what a table calls it: "Facility energy" */
  const char *group;     /* the table's group: "Run", "Energy", "Power",
                            "Work", "Grid" or "Reliability" */
} tel_metric;

/* A table of metrics with the values they take, as an X-macro
 * TABLE(X) of X(key, units, long name, group, value expression): the
 * rows come from TEL_METRIC_ROW and the values, where the expression's
 * names are in scope, from TEL_METRIC_VALUE, so each metric is written
 * once and a row cannot drift from its value. */
#define TEL_METRIC_ROW(key, units, long_name, group, value)                    \
  {key, units, long_name, group},
#define TEL_METRIC_VALUE(key, units, long_name, group, value) (double)(value),

typedef struct tel_sink tel_sink;

/* What a sink implements. Every call returns SIM_OK or a SIM_E* code with
 * the detail in sink->err. Rules every sink keeps (tel.c checks the
 * declarations for all of them):
 * - names are relative paths without empty, "." or ".." parts; columns are
 *   unique within a group and are neither "time" nor the axis name;
 * - rows of a group come in time order (equal times allowed), finite;
 * - a summary or metadata key put again replaces the old value; a text
 *   name may be put once; the metadata key "complete" is the sink's own;
 * - after commit, and after the first I/O error, every call but destroy
 *   fails (SIM_ESTATE, or that first error again). */
typedef struct tel_sink_ops {
  /* Declares a group; its id for tel_append comes back in *id. The sink
   * keeps its own copy of the declaration. */
  int (*open_group)(tel_sink *s, const tel_group *g, size_t *id);
  /* One sample: values[c * width + j] is column c at position j. */
  int (*append)(tel_sink *s, size_t id, double time_s, const double *values);
  /* A metric of the run's /summary (e.g. "energy_mwh"); the wrapper
   * keeps its declaration (tel_put_summary). */
  int (*put_summary)(tel_sink *s, const char *key, double value);
  /* A text metric of /summary (e.g. "carbon_basis"); NULL: not kept. */
  int (*put_summary_str)(tel_sink *s, const char *key, const char *value);
  /* Attributes on the root ("aifsim_version", "scenario_name", "seed"). */
  int (*put_meta_str)(tel_sink *s, const char *key, const char *value);
  int (*put_meta_int)(tel_sink *s, const char *key, int64_t value);
  /* A named text at the root (the resolved scenario, as "scenario"). */
  int (*put_text)(tel_sink *s, const char *name, const char *text);
  /* A numeric attribute on a declared group ("services/chat"); a key put
   * again replaces the old value. */
  int (*put_group_attr)(tel_sink *s, const char *group, const char *key,
                        double value);
  /* A table at the root; a name may be put once. */
  int (*put_table)(tel_sink *s, const tel_table *t);
  /* Flushes everything and marks the output complete. After commit only
   * destroy may be called. */
  int (*commit)(tel_sink *s);
  /* Frees the sink. An output that was not committed is removed, so a
   * failed run leaves nothing that looks complete. */
  void (*destroy)(tel_sink *s);
} tel_sink_ops;

/* The common head of every sink; an implementation embeds it first,
 * zero-filled but for ops. */
struct tel_sink {
  const tel_sink_ops *ops;
  sim_error err;
  double busy_s; /* wall time spent in the ops, kept by the wrappers */
  struct tel_metric_list *metrics; /* the wrappers': declared metrics */
};

/* Thin wrappers over the ops, so callers read tel_append(sink, ...). */
int tel_open_group(tel_sink *s, const tel_group *g, size_t *id);
int tel_append(tel_sink *s, size_t id, double time_s, const double *values);
/* A /summary metric and its value. The sink keeps the declaration (a
 * key put again replaces it) and at commit writes the declarations of all
 * metrics as JSON objects, key to text in the order they came, in three
 * string attributes of /summary: "units" (the numeric metrics), and
 * "long_names" and "groups" (all of them); those three keys are the
 * sink's own. A NaN value is a metric the run cannot give: it is
 * declared but no value is written. m's strings must outlive the sink. */
int tel_put_summary(tel_sink *s, const tel_metric *m, double value);
/* A text metric (m->units NULL), e.g. "carbon_basis". */
int tel_put_summary_str(tel_sink *s, const tel_metric *m, const char *value);
/* The metrics declared so far, in the order they came (n of them); valid
 * until the next put_summary or destroy. */
const tel_metric *tel_metrics(const tel_sink *s, size_t *n);
int tel_put_meta_str(tel_sink *s, const char *key, const char *value);
int tel_put_meta_int(tel_sink *s, const char *key, int64_t value);
int tel_put_text(tel_sink *s, const char *name, const char *text);
int tel_put_group_attr(tel_sink *s, const char *group, const char *key,
                       double value);
int tel_put_table(tel_sink *s, const tel_table *t);
int tel_commit(tel_sink *s);
void tel_destroy(tel_sink *s); /* NULL does nothing */
const char *tel_errmsg(const tel_sink *s);

/* Wall seconds spent in the sink's declaring, appending, table and commit
 * calls so far: the share of a run that writing its output takes. */
double tel_busy_s(const tel_sink *s);

/* A sink that keeps everything in memory, for tests and for runs that need
 * no file. Returns NULL when out of memory. */
tel_sink *tel_memory_create(void);

/* Read-back from a memory sink. tel_memory_column returns the samples of
 * one column of a group as a [rows][width] array (NULL if unknown); the
 * pointer is valid until the next append or destroy. */
const double *tel_memory_column(const tel_sink *s, const char *group,
                                const char *column, size_t *rows,
                                size_t *width);
const double *tel_memory_times(const tel_sink *s, const char *group,
                               size_t *rows);
/* A summary metric; returns SIM_ENOTFOUND if it was never put. */
int tel_memory_summary(const tel_sink *s, const char *key, double *value);
/* A text metric of the summary, or NULL if none; valid while s lives. */
const char *tel_memory_summary_str(const tel_sink *s, const char *key);
/* A text put with put_text, or NULL. */
const char *tel_memory_text(const tel_sink *s, const char *name);
/* A group's attribute; SIM_ENOTFOUND if never put. */
int tel_memory_group_attr(const tel_sink *s, const char *group, const char *key,
                          double *value);

/* A table's numeric column (NULL if unknown or text) with its row count,
 * and one cell of a text column (NULL if unknown). */
const double *tel_memory_table_column(const tel_sink *s, const char *table,
                                      const char *column, size_t *rows);
const char *tel_memory_table_text(const tel_sink *s, const char *table,
                                  const char *column, size_t row);

/* 1 after a successful commit. */
int tel_memory_committed(const tel_sink *s);

#endif
