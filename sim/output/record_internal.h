/* record_internal.h - what the files of the HDF5 writer (record.h)
 * share: the sink's state and the helpers each file gives the others.
 * record.c creates, commits and destroys the sink; record_fail.c reports
 * errors, closes handles and writes attributes; record_series.c declares
 * groups and writes their rows; record_deflate.c filters full blocks on
 * a worker thread; record_root.c writes the summary, metadata, texts and
 * tables. The design and the sink's states are
 * described in record.c. */
#ifndef SIM_RECORD_INTERNAL_H
#define SIM_RECORD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include <hdf5.h>

#include "record.h"
#include "tel_internal.h"
#include "writelock.h"

#define H5W_CHUNK_ROWS 4096
#define H5W_DEFLATE 4
/* Chunks of about 1 MiB at most: big enough to compress well and few
 * enough for the chunk index, small enough that a wide group (thousands
 * of racks or GPUs) keeps little in memory per column. */
#define H5W_CHUNK_ELEMS (((size_t)1 << 20) / sizeof(double))

#define H5W_DETAIL 256 /* bytes of HDF5's error text kept in a message */

enum { H5W_OPEN, H5W_COMMITTED, H5W_FAILED };

/* A block handed to the worker (record_deflate.c): its buffers, and
 * after filtering, each dataset's stored chunk in place and its mask. A
 * full block, or at commit a group's last rows padded to a chunk. */
typedef struct h5w_job {
  struct h5w_job *next; /* in the queue */
  size_t group;         /* index in the sink's groups */
  hsize_t row;          /* the block's first row in the file */
  size_t rows, width;   /* the group's block and width */
  size_t filled;        /* rows of data (rows, or fewer in the last) */
  size_t stride;        /* doubles per column in vbuf */
  size_t nsets;         /* datasets: time, then the columns */
  double *tbuf, *vbuf;  /* the set the group does not fill */
  size_t *size;         /* [nsets] bytes stored */
  uint32_t *mask;       /* [nsets] filters skipped */
  size_t claimed;       /* datasets taken by a thread (under the mutex) */
  size_t filtered;      /* datasets filtered (under the mutex) */
  int done;             /* all filtered (under the queue's mutex) */
  int queued;           /* in the queue (main thread only) */
} h5w_job;

typedef struct h5w_pipe h5w_pipe;

typedef struct h5w_group {
  tel_group *decl; /* our own copy (tel_internal.h) */
  hid_t gid;
  hid_t time;   /* the "time" dataset, scale of dimension 0 */
  hid_t labels; /* the axis dataset, scale of dimension 1; width 1: none */
  hid_t *cols;  /* one dataset per column */
  size_t block; /* rows per chunk and per write */
  size_t chunk_width;
  size_t nbuf;   /* rows buffered, < block between calls */
  hsize_t nrows; /* rows in the file */
  double last_time;
  double *tbuf; /* [block] times, in tstride doubles */
  double *vbuf; /* [ncolumns][stride]: each column's [block][width] rows
                   together, with room to filter them in place */
  size_t tstride, stride;
  h5w_job *job;  /* the second buffer set, from the first full block */
  h5w_job *tail; /* the last rows at commit, in tbuf and vbuf */
} h5w_group;

typedef struct h5w {
  tel_sink base; /* first, so a tel_sink * is an h5w * */
  char *path;    /* the final name */
  char *partial; /* path + ".partial", written until commit */
  int state;
  int created;      /* partial exists and is ours to remove */
  int keep_partial; /* destroy before commit keeps it, marked complete=0 */
  wlock lock;       /* PATH.lock, held from create to commit or destroy */
  size_t chunk_rows;
  int deflate; /* 0 = no filters */
  hid_t file, summary;
  hid_t str_type; /* variable-length UTF-8 string */
  hid_t lcpl, gcpl, dapl;
  h5w_group *groups;
  size_t ngroups, gcap;
  char time_units[96]; /* "s" or "seconds since ORIGIN" (time_units_init) */
  int worker;          /* full blocks filtered on a thread (default 1) */
  h5w_pipe *pipe;      /* the worker, once started */
} h5w;

typedef herr_t (*close_fn)(hid_t);

/* Errors, handles and attributes (record_fail.c) */
int h5w__disk_fail(h5w *w, int e);
int h5w__io_fail(h5w *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int h5w__no_memory(h5w *w, const char *what);
int h5w__closed(h5w *w, int rc, int closes);
int h5w__close_id(hid_t *id, close_fn fn);
/* Whether HDF5 ran out of memory in this process (no call on a file
 * after that: record_fail.c). */
bool h5w__hdf5_spent(void);
void h5w__hdf5_spend(void);
int h5w__check_state(h5w *w, const char *what);
int h5w__put_attr(h5w *w,          /* the sink, for messages */
                  hid_t loc,       /* file (root), group or dataset */
                  const char *obj, /* its path, for messages */
                  const char *key, /* attribute name */
                  hid_t ftype,     /* type in the file */
                  hid_t mtype,     /* type of *buf */
                  const void *buf);
int h5w__put_str_attr(h5w *w, hid_t loc, const char *obj, const char *key,
                      const char *value);
int h5w__put_series_attrs(h5w *w, hid_t dset, const char *obj,
                          const char *units, const char *long_name);

/* Groups, time coordinates and rows (record_series.c) */
int h5w__make_parents(h5w *w, const char *name);
int h5w__time_units_init(h5w *w, const char *origin, sim_error *err);
herr_t h5w__whole_dcpl(hsize_t n, bool numeric, hid_t *dcpl_out);
int h5w__group_close(h5w_group *hg);
void h5w__group_free(h5w_group *hg);
const h5w_group *h5w__find_group(const h5w *w, const char *name);
int h5w__open_group(tel_sink *s, const tel_group *g, size_t *id);
int h5w__check_room(h5w *w, hsize_t bytes);
int h5w__flush_group(h5w *w, h5w_group *hg);
int h5w__append(tel_sink *s, size_t id, double time_s, const double *values);

/* Summary, metadata, texts and tables (record_root.c) */
int h5w__put_summary(tel_sink *s, const char *key, double value);
int h5w__put_summary_str(tel_sink *s, const char *key, const char *value);
int h5w__put_meta_str(tel_sink *s, const char *key, const char *value);
int h5w__put_int_attr(h5w *w, const char *key, int64_t value);
int h5w__put_meta_int(tel_sink *s, const char *key, int64_t value);
int h5w__put_text(tel_sink *s, const char *name, const char *text);
int h5w__put_group_attr(tel_sink *s, const char *group, const char *key,
                        double value);
int h5w__put_table(tel_sink *s, const tel_table *t);

/* Commit (record.c) */
void h5w__divert(h5w *w, struct rlimit *saved);
/* Tests: whether full blocks go to the worker thread; before the first
 * row. Either way the file has the same bytes. */
void h5w__set_worker(tel_sink *s, int on);

/* The worker (record_deflate.c) */
size_t h5w__chunk_room(size_t n);
double *h5w__buffers(size_t sets, size_t stride);
size_t h5w__filter_chunk(unsigned char *buf, size_t n, unsigned char *scratch,
                         int level, uint32_t *mask);
int h5w__hand_over(h5w *w, h5w_group *hg, bool *handed);
int h5w__hand_over_tail(h5w *w, h5w_group *hg, bool *handed);
int h5w__drain(h5w *w);
int h5w__ready(h5w *w, const char *what);
void h5w__pipe_stop(h5w *w);
void h5w__job_free(h5w_group *hg);

#endif
