/* import_logs.c - the job logs `aifsim import` reads (import.h,
 * docs/IMPORT.md): Slurm's `sacct --parsable2`, the Standard Workload
 * Format of the Parallel Workloads Archive (Chapin et al. 1999, "Benchmarks
 * and standards for the evaluation of parallel job schedulers", JSSPP; the
 * archive's page lists the 18 fields), and the SenseTime Helios
 * cluster_log.csv (Hu et al., SC '21, github.com/S-Lab-System-Group/
 * HeliosData). Every message is PATH:LINE:COLUMN. */
#include "import.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "sig.h"
#include "vec.h"

/* Logs of a large cluster over months run to a few hundred MB; a replay
 * of more than this is a job for a sample of it. */
#define IMP_MAX_BYTES ((size_t)256 << 20)

/* Splits line in place at sep (a space: runs of blanks) into at most
 * CSV_MAX_FIELDS fields; returns how many. */
static size_t split_at(char *line, char sep, char **f) {
  size_t n = 0;
  char *p = line;
  if (sep == ' ') {
    while (n < CSV_MAX_FIELDS) {
      p += strspn(p, " \t");
      if (*p == '\0')
        break;
      f[n++] = p;
      p += strcspn(p, " \t");
      if (*p != '\0')
        *p++ = '\0';
    }
    return n;
  }
  f[n++] = p;
  for (; *p != '\0' && n < CSV_MAX_FIELDS; p++)
    if (*p == sep) {
      *p = '\0';
      f[n++] = p + 1;
    }
  return n;
}

static void copy_text(char *dst, size_t size, const char *src) {
  snprintf(dst, size, "%s", src);
}

/* A new job at the end of the log, or NULL when out of memory. */
static imp_job *push_job(imp_log *log, long line) {
  if (sim_vec_reserve(NULL, &log->jobs, &log->cap, log->n + 1,
                      sizeof *log->jobs) != SIM_OK)
    return NULL;
  imp_job *j = &log->jobs[log->n++];
  memset(j, 0, sizeof *j);
  j->line = line;
  return j;
}

void imp_log_fini(imp_log *log) {
  free(log->jobs);
  memset(log, 0, sizeof *log);
}

/* A time "YYYY-MM-DD[T ]HH:MM:SS" into *s; *missing for the words
 * sacct writes for a time that never came (Unknown, None, empty). */
static int read_time(csv_reader *r, const char *field, const char *column,
                     double *s, bool *missing) {
  *missing = field[0] == '\0' || strcmp(field, "Unknown") == 0 ||
             strcmp(field, "None") == 0;
  if (*missing)
    return SIM_OK;
  size_t bad = 0;
  if (sig_parse_time(field, s, &bad) != 0)
    return csv_fail(r, field, column,
                    "not a time YYYY-MM-DDTHH:MM:SS (at character %zu)",
                    bad + 1);
  return SIM_OK;
}

/* ---- Slurm sacct --parsable2 ------------------------------------------ */

/* The columns of sacct this reads; gres is the first of the GPU columns
 * the header has. */
typedef struct sacct_cols {
  long id, submit, start, end, state, partition, gres;
  const char *gres_name;
} sacct_cols;

static int sacct_header(csv_reader *r, sacct_cols *c) {
  static const char *const gpu_cols[] = {"AllocTRES", "AllocGRES", "ReqTRES",
                                         "ReqGRES", "Gres"};
  char *h[CSV_MAX_FIELDS], *line = csv_next_line(r);
  if (line == NULL)
    return csv_fail(r, NULL, NULL, "the file is empty; expected sacct's "
                                   "--parsable2 header");
  size_t n = split_at(line, '|', h);
  *c = (sacct_cols){csv_column(h, n, "JobID"),     csv_column(h, n, "Submit"),
                    csv_column(h, n, "Start"),     csv_column(h, n, "End"),
                    csv_column(h, n, "State"),     csv_column(h, n, "Partition"),
                    -1,                            NULL};
  for (size_t k = 0; k < 5 && c->gres < 0; k++)
    if ((c->gres = csv_column(h, n, gpu_cols[k])) >= 0)
      c->gres_name = gpu_cols[k];
  if (c->id < 0 || c->submit < 0 || c->start < 0 || c->end < 0 ||
      c->state < 0 || c->gres < 0)
    return csv_fail(r, h[0], NULL,
                    "a sacct --parsable2 header needs JobID, Submit, Start, "
                    "End, State and AllocTRES (or AllocGRES, ReqTRES, "
                    "ReqGRES, Gres); run sacct --parsable2 --format="
                    "JobID,Partition,Submit,Start,End,State,AllocTRES");
  return SIM_OK;
}

/* GPUs in a TRES list ("cpu=8,gres/gpu=4,gres/gpu:a100=4": the untyped
 * count, else the first typed one) or a GRES one ("gpu:4",
 * "gpu:a100:4(IDX:0-3)"); none: 0. */
static int sacct_gpus(csv_reader *r, const char *field, const char *column,
                      int64_t *gpus) {
  *gpus = 0;
  const char *p = strstr(field, "gres/gpu=");
  if (p == NULL && (p = strstr(field, "gres/gpu:")) != NULL)
    p = strchr(p, '=');
  else if (p != NULL)
    p += strlen("gres/gpu");
  if (p == NULL && strncmp(field, "gpu:", 4) == 0) {
    p = field + strcspn(field, "(,");
    while (p > field && p[-1] >= '0' && p[-1] <= '9')
      p--;
    p--; /* the ':' before the count */
  }
  if (p == NULL)
    return SIM_OK;
  char *end;
  long long v = strtoll(p + 1, &end, 10);
  if (end == p + 1 || v < 0 || v > 1000000)
    return csv_fail(r, field, column, "no GPU count in '%.60s'", field);
  *gpus = v;
  return SIM_OK;
}

/* One line of sacct: a job, a step to skip, or a job that never ran. */
static int sacct_line(csv_reader *r, imp_log *log, const sacct_cols *c,
                      char **f, size_t n) {
  long need = c->id;
  const long cols[] = {c->submit, c->start, c->end, c->state, c->gres};
  for (size_t k = 0; k < 5; k++)
    need = cols[k] > need ? cols[k] : need;
  if ((long)n <= need)
    return csv_fail(r, f[n - 1], NULL, "%zu fields; the header has %ld or more",
                    n, need + 1);
  if (strchr(f[c->id], '.') != NULL) {
    log->steps++;
    return SIM_OK;
  }
  imp_job j = {.line = r->line};
  bool no_submit, no_start, no_end;
  int rc = read_time(r, f[c->submit], "Submit", &j.submit_s, &no_submit);
  if (rc == SIM_OK)
    rc = read_time(r, f[c->start], "Start", &j.start_s, &no_start);
  if (rc == SIM_OK)
    rc = read_time(r, f[c->end], "End", &j.end_s, &no_end);
  if (rc == SIM_OK)
    rc = sacct_gpus(r, f[c->gres], c->gres_name, &j.gpus);
  if (rc != SIM_OK)
    return rc;
  if (no_submit || no_start || no_end) {
    log->unstarted++;
    return SIM_OK;
  }
  copy_text(j.id, sizeof j.id, f[c->id]);
  copy_text(j.partition, sizeof j.partition,
            c->partition >= 0 && c->partition < (long)n ? f[c->partition] : "");
  f[c->state][strcspn(f[c->state], " ")] = '\0'; /* "CANCELLED by 0" */
  copy_text(j.state, sizeof j.state, f[c->state]);
  imp_job *dst = push_job(log, r->line);
  if (dst == NULL)
    return csv_fail(r, NULL, NULL, "out of memory");
  *dst = j;
  return SIM_OK;
}

static int read_sacct(csv_reader *r, imp_log *log) {
  sacct_cols c = {-1, -1, -1, -1, -1, -1, -1, NULL};
  int rc = sacct_header(r, &c);
  char *line, *f[CSV_MAX_FIELDS];
  while (rc == SIM_OK && (line = csv_next_line(r)) != NULL)
    if (line[0] != '\0')
      rc = sacct_line(r, log, &c, f, split_at(line, '|', f));
  return rc;
}

/* ---- Standard Workload Format ------------------------------------------ */

/* Fields of an SWF line (1-based in the format's definition). */
enum { SWF_JOB = 0, SWF_SUBMIT = 1, SWF_WAIT = 2, SWF_RUN = 3, SWF_PROCS = 4,
       SWF_REQ_PROCS = 7, SWF_STATUS = 10, SWF_QUEUE = 14, SWF_FIELDS = 18 };

static int swf_number(csv_reader *r, char **f, int k, double *v) {
  static const char *const names[SWF_FIELDS] = {
      "1 job number", "2 submit time", "3 wait time", "4 run time",
      "5 allocated processors", "6", "7", "8 requested processors", "9",
      "10", "11 status", "12", "13", "14", "15 queue", "16", "17", "18"};
  return csv_number(r, f[k], names[k], NULL, 1, v);
}

static int swf_line(csv_reader *r, imp_log *log, double per_gpu, char **f,
                    size_t n) {
  if (n != SWF_FIELDS)
    return csv_fail(r, n > 0 ? f[n - 1] : NULL, NULL,
                    "%zu fields; an SWF job line has 18", n);
  double v[SWF_FIELDS];
  static const int used[] = {SWF_SUBMIT, SWF_WAIT,   SWF_RUN,  SWF_PROCS,
                             SWF_REQ_PROCS, SWF_STATUS, SWF_QUEUE};
  for (size_t k = 0; k < sizeof used / sizeof used[0]; k++) {
    int rc = swf_number(r, f, used[k], &v[used[k]]);
    if (rc != SIM_OK)
      return rc;
  }
  if (v[SWF_SUBMIT] < 0 || v[SWF_WAIT] < 0 || v[SWF_RUN] < 0) {
    log->unstarted++; /* -1: the log does not know */
    return SIM_OK;
  }
  double procs = v[SWF_PROCS] > 0 ? v[SWF_PROCS] : v[SWF_REQ_PROCS];
  imp_job *j = push_job(log, r->line);
  if (j == NULL)
    return csv_fail(r, NULL, NULL, "out of memory");
  copy_text(j->id, sizeof j->id, f[SWF_JOB]);
  copy_text(j->partition, sizeof j->partition, f[SWF_QUEUE]);
  copy_text(j->state, sizeof j->state, f[SWF_STATUS]);
  j->submit_s = v[SWF_SUBMIT];
  j->start_s = v[SWF_SUBMIT] + v[SWF_WAIT];
  j->end_s = j->start_s + v[SWF_RUN];
  j->gpus = procs > 0 ? (int64_t)ceil(procs / per_gpu - 1e-9) : 0;
  return SIM_OK;
}

static int read_swf(csv_reader *r, imp_log *log, double per_gpu) {
  char *line, *f[CSV_MAX_FIELDS];
  int rc = SIM_OK;
  while (rc == SIM_OK && (line = csv_next_line(r)) != NULL) {
    char *p = line + strspn(line, " \t");
    if (*p != '\0' && *p != ';') /* ';' opens the header's comments */
      rc = swf_line(r, log, per_gpu, f, split_at(line, ' ', f));
  }
  return rc;
}

/* ---- SenseTime Helios cluster_log.csv ---------------------------------- */

static int helios_line(csv_reader *r, imp_log *log, const long *c, char **f,
                       size_t n) {
  for (int k = 0; k < 7; k++)
    if (c[k] >= (long)n)
      return csv_fail(r, f[n - 1], NULL,
                      "%zu fields; the header has %ld or more", n, c[k] + 1);
  imp_job j = {.line = r->line};
  bool miss[3];
  int rc = csv_count(r, f[c[1]], "gpu_num", 1000000, "GPUs", &j.gpus);
  if (rc == SIM_OK)
    rc = read_time(r, f[c[4]], "submit_time", &j.submit_s, &miss[0]);
  if (rc == SIM_OK)
    rc = read_time(r, f[c[5]], "start_time", &j.start_s, &miss[1]);
  if (rc == SIM_OK)
    rc = read_time(r, f[c[6]], "end_time", &j.end_s, &miss[2]);
  if (rc != SIM_OK)
    return rc;
  if (miss[0] || miss[1] || miss[2]) {
    log->unstarted++;
    return SIM_OK;
  }
  copy_text(j.id, sizeof j.id, f[c[0]]);
  copy_text(j.partition, sizeof j.partition, f[c[2]]);
  copy_text(j.state, sizeof j.state, f[c[3]]);
  imp_job *dst = push_job(log, r->line);
  if (dst == NULL)
    return csv_fail(r, NULL, NULL, "out of memory");
  *dst = j;
  return SIM_OK;
}

static int read_helios(csv_reader *r, imp_log *log) {
  static const char *const names[7] = {"job_id", "gpu_num", "vc", "state",
                                       "submit_time", "start_time",
                                       "end_time"};
  static const char want[] = "job_id,user,vc,gpu_num,cpu_num,node_num,state,"
                             "submit_time,start_time,end_time,duration,queue";
  char *h[CSV_MAX_FIELDS], *line, *f[CSV_MAX_FIELDS];
  size_t n;
  long c[7];
  int rc = csv_header(r, h, &n, want);
  for (int k = 0; k < 7 && rc == SIM_OK; k++)
    if ((c[k] = csv_column(h, n, names[k])) < 0)
      rc = csv_fail(r, h[0], NULL, "no column '%s'; a Helios log has %s",
                    names[k], want);
  while (rc == SIM_OK && (line = csv_next_line(r)) != NULL)
    if (line[0] != '\0')
      rc = helios_line(r, log, c, f, csv_split(line, f));
  return rc;
}

/* ---- The log ------------------------------------------------------------ */

/* Jobs that held no GPU leave the log (a GPU factory replays GPU jobs),
 * counted; and every job must end after it starts and start after its
 * submission. */
static int check_jobs(csv_reader *r, imp_log *log) {
  size_t kept = 0;
  for (size_t i = 0; i < log->n; i++) {
    imp_job *j = &log->jobs[i];
    if (j->start_s < j->submit_s || j->end_s < j->start_s) {
      r->line = j->line;
      r->line_start = NULL;
      return csv_fail(r, NULL, NULL,
                      "job %s: submitted %.0f s, started %.0f s, ended %.0f s "
                      "(on the log's clock): out of order",
                      j->id, j->submit_s, j->start_s, j->end_s);
    }
    if (j->gpus == 0)
      log->no_gpus++;
    else
      log->jobs[kept++] = *j;
  }
  log->n = kept;
  return SIM_OK;
}

int imp_log_read(imp_log *log, imp_format f, const char *path,
                 double procs_per_gpu, sim_error *err) {
  csv_reader r;
  int rc = csv_open(&r, path, IMP_MAX_BYTES, err);
  if (rc != SIM_OK)
    return rc;
  rc = f == IMP_SACCT ? read_sacct(&r, log)
       : f == IMP_SWF ? read_swf(&r, log, procs_per_gpu)
                      : read_helios(&r, log);
  if (rc == SIM_OK)
    rc = check_jobs(&r, log);
  csv_close(&r);
  return rc;
}
