/* record_deflate.c - the series' filter pipeline run on a second thread.
 *
 * Why: shuffle and deflate of every full chunk inside H5Dwrite cost the
 * simulation thread about a tenth of a fluid run's time. A full block is
 * instead handed to one worker thread, which does what HDF5's pipeline
 * (shuffle, deflate, fletcher32: record_series.c's dcpl) would do to each
 * of the block's chunks; the main thread stores the results with
 * H5Dwrite_chunk. HDF5 is a serial build and not thread-safe, so every
 * HDF5 call stays on the main thread.
 *
 * Same bytes: the blocks wait in a FIFO and are written, in order, before
 * the next HDF5 call of any kind (h5w__ready drains, and so does every
 * flush that writes itself), with the calls today's path makes per
 * block (extend, write) in the same order. So the file sees the same
 * sequence of operations whatever the thread's timing, and the chunks
 * hold the same bytes as zlib is the one HDF5 links.
 *
 * Each group has two buffer sets: it fills one while the other waits in
 * the queue or in the worker; the worker filters each chunk in place in
 * its buffer (padded for that: h5w__chunk_room). At commit each group's
 * last rows, padded to a chunk, are queued too, and the main thread,
 * which waits for them, filters chunks beside the worker (pop_done).
 * A chunk of one value (flat_chunk) is filtered once and its stored bytes
 * copied after. */
#include "record_internal.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include <zlib.h>

#include "alloc.h"

/* The order of the filters in the dcpl, whose bits make a chunk's mask. */
#define H5W_FILTER_DEFLATE_BIT (1u << 1)

/* A chunk whose 8-byte words are one value (a column constant over a
 * block: zeros, a capacity, a count that stays) stores the same bytes
 * every time: bench-10k's fluid day filtered 1 MiB chunks of three such
 * contents 28 times, 12 ms of zlib each (deflate inserts every byte of a
 * run in its hash chains).
 * The last FLAT_KEPT are kept, by size and word; the bytes stored are
 * small (1 KiB for 1 MiB), and kept only up to FLAT_ROOM. */
#define FLAT_KEPT 8
#define FLAT_ROOM ((size_t)64 << 10)

typedef struct flat_chunk {
  size_t n;           /* bytes filtered; 0: none kept here */
  uint64_t word;      /* every word of them */
  unsigned char *out; /* the bytes stored, checksum included */
  size_t size;
  uint32_t mask;
} flat_chunk;

typedef struct h5w_pipe {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t work, done;
  h5w_job *head, *tail; /* queued, oldest first */
  h5w_job *todo;        /* the first queued job the worker has not taken */
  int stop;
  int level;
  unsigned char *scratch;     /* the worker's: one chunk shuffled */
  unsigned char *mine;        /* the main thread's, made when it first helps */
  flat_chunk flat[FLAT_KEPT]; /* under the mutex */
  size_t flat_next;           /* the one replaced next */
} h5w_pipe;

/* ---- The pipeline ------------------------------------------------------ */

/* The room deflate gets: HDF5's deflate filter gives compress2 this much
 * and, when the output does not fit, skips deflate for the chunk. */
static size_t deflate_room(size_t n) {
  return (size_t)(ceil((double)n * 1.001) + 12);
}

size_t h5w__chunk_room(size_t n) { return deflate_room(n) + 4; }

/* sets * stride doubles, not zeroed: a row is written before it is read,
 * and a last block's padding is zeroed when it is (h5w__hand_over_tail).
 * Why: zeroing cost a wide group's megabytes of page faults at the run's
 * start, for buffers a short run barely fills. NULL on overflow. */
double *h5w__buffers(size_t sets, size_t stride) {
  if (stride != 0 && sets > SIZE_MAX / sizeof(double) / stride)
    return NULL;
  return sim_alloc(NULL, sets * stride * sizeof(double));
}

/* Fletcher's checksum as HDF5's fletcher32 filter defines it: over 16-bit
 * big-endian words (an odd last byte is the high byte of a word), both
 * sums folded to 16 bits plus carry ((x & 0xffff) + (x >> 16)) after
 * every 360 words, which keeps them below 2^32, after the odd byte, and
 * once more at the end. */
static uint32_t fletcher32(const unsigned char *p, size_t n) {
  uint32_t a = 0, b = 0;
  for (size_t words = n / 2; words > 0;) {
    size_t k = words < 360 ? words : 360;
    words -= k;
    for (; k > 0; k--, p += 2) {
      a += (uint32_t)p[0] << 8 | p[1];
      b += a;
    }
    a = (a & 0xffff) + (a >> 16);
    b = (b & 0xffff) + (b >> 16);
  }
  if (n % 2 != 0) {
    a += (uint32_t)p[0] << 8;
    b += a;
    a = (a & 0xffff) + (a >> 16);
    b = (b & 0xffff) + (b >> 16);
  }
  a = (a & 0xffff) + (a >> 16);
  b = (b & 0xffff) + (b >> 16);
  return b << 16 | a;
}

/* HDF5's shuffle of 8-byte elements: byte j of element i goes to
 * j * count + i. One element is left as it is, as HDF5 leaves it. */
static void shuffle8(unsigned char *out, const unsigned char *in, size_t n) {
  size_t count = n / 8;
  if (count <= 1) {
    memcpy(out, in, n);
    return;
  }
  for (size_t i = 0; i < count; i++)
    for (size_t j = 0; j < 8; j++)
      out[j * count + i] = in[i * 8 + j];
}

/* Filters the n bytes of one chunk at buf in place, as HDF5 stores it:
 * shuffled (into scratch, n bytes), deflated back into buf at level, and
 * the checksum appended little-endian. buf has h5w__chunk_room(n) bytes.
 * A compress2 that fails is what HDF5's optional deflate skips: the
 * shuffled bytes are stored and the mask says deflate was not applied.
 * The stored size; the filter mask in *mask. */
size_t h5w__filter_chunk(unsigned char *buf, size_t n, unsigned char *scratch,
                         int level, uint32_t *mask) {
  shuffle8(scratch, buf, n);
  uLongf size = (uLongf)deflate_room(n);
  *mask = 0;
  if (compress2(buf, &size, scratch, (uLong)n, level) != Z_OK) {
    memcpy(buf, scratch, n);
    size = (uLongf)n;
    *mask = H5W_FILTER_DEFLATE_BIT;
  }
  uint32_t sum = fletcher32(buf, size);
  for (int i = 0; i < 4; i++)
    buf[size + (size_t)i] = (unsigned char)(sum >> (8 * i));
  return (size_t)size + 4;
}

/* ---- Chunks of one value --------------------------------------------- */

/* Whether the n bytes at p are one 8-byte word repeated; *word that word.
 * Each byte equals the one 8 before it. */
static bool one_word(const unsigned char *p, size_t n, uint64_t *word) {
  if (n < sizeof *word || n % sizeof *word != 0)
    return false;
  memcpy(word, p, sizeof *word);
  return memcmp(p, p + sizeof *word, n - sizeof *word) == 0;
}

/* The kept chunk of n bytes of word, or NULL. Under the mutex. */
static const flat_chunk *flat_find(const h5w_pipe *p, size_t n, uint64_t word) {
  for (size_t i = 0; i < FLAT_KEPT; i++)
    if (p->flat[i].n == n && p->flat[i].word == word)
      return &p->flat[i];
  return NULL;
}

/* Keeps the size stored bytes at buf of n bytes of word, in place of the
 * oldest kept; without the memory, keeps nothing. Under the mutex. */
static void flat_keep(h5w_pipe *p, size_t n, uint64_t word,
                      const unsigned char *buf, size_t size, uint32_t mask) {
  if (size > FLAT_ROOM || flat_find(p, n, word) != NULL)
    return;
  unsigned char *out = sim_alloc(NULL, size);
  if (out == NULL)
    return;
  memcpy(out, buf, size);
  flat_chunk *k = &p->flat[p->flat_next];
  p->flat_next = (p->flat_next + 1) % FLAT_KEPT;
  sim_free(NULL, k->out);
  *k = (flat_chunk){n, word, out, size, mask};
}

/* h5w__filter_chunk at the pipe's level, a chunk of one value copied from
 * the kept one when there is one, and kept when not. Called without the
 * mutex. */
static size_t filter_or_recall(h5w_pipe *p, unsigned char *buf, size_t n,
                               unsigned char *scratch, uint32_t *mask) {
  uint64_t word;
  if (!one_word(buf, n, &word))
    return h5w__filter_chunk(buf, n, scratch, p->level, mask);
  pthread_mutex_lock(&p->mu);
  const flat_chunk *k = flat_find(p, n, word);
  size_t size = k != NULL ? k->size : 0;
  if (k != NULL) {
    memcpy(buf, k->out, size);
    *mask = k->mask;
  }
  pthread_mutex_unlock(&p->mu);
  if (k != NULL)
    return size;
  size = h5w__filter_chunk(buf, n, scratch, p->level, mask);
  pthread_mutex_lock(&p->mu);
  flat_keep(p, n, word, buf, size, *mask);
  pthread_mutex_unlock(&p->mu);
  return size;
}

/* The bytes of dataset d of a job (0 time, 1 + c column c). */
static unsigned char *job_data(const h5w_job *j, size_t d) {
  return d == 0 ? (unsigned char *)j->tbuf
                : (unsigned char *)(j->vbuf + (d - 1) * j->stride);
}

/* The threads take a job's datasets one at a time, so the main thread,
 * when it waits for a job, filters beside the worker (the commit's last
 * blocks: a chunk each, whatever their rows, which zlib's run over the
 * padding makes the dearest). Called with the mutex held; returns with
 * it held, having released it while it filtered. */
static void filter_next(h5w_pipe *p, unsigned char *scratch) {
  h5w_job *j = p->todo;
  size_t d = j->claimed++;
  if (j->claimed == j->nsets)
    p->todo = j->next;
  pthread_mutex_unlock(&p->mu);
  size_t n = (d == 0 ? j->rows : j->rows * j->width) * sizeof(double);
  j->size[d] = filter_or_recall(p, job_data(j, d), n, scratch, &j->mask[d]);
  pthread_mutex_lock(&p->mu);
  if (++j->filtered == j->nsets) {
    j->done = 1;
    pthread_cond_signal(&p->done);
  }
}

static void *worker(void *arg) {
  h5w_pipe *p = arg;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (p->todo == NULL && !p->stop)
      pthread_cond_wait(&p->work, &p->mu);
    if (p->todo == NULL)
      break;
    filter_next(p, p->scratch);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* ---- The main thread's side ------------------------------------------- */

static void pipe_free(h5w_pipe *p) {
  for (size_t i = 0; i < FLAT_KEPT; i++)
    sim_free(NULL, p->flat[i].out);
  sim_free(NULL, p->scratch);
  sim_free(NULL, p->mine);
  sim_free(NULL, p);
}

/* The worker, started on the first full block. NULL when memory or a
 * thread is missing: the writer then filters on its own thread, as
 * HDF5 does, which gives the same file. */
static h5w_pipe *pipe_start(int level) {
  h5w_pipe *p = sim_calloc(NULL, 1, sizeof *p);
  if (p == NULL)
    return NULL;
  p->level = level;
  p->scratch = sim_alloc(NULL, H5W_CHUNK_ELEMS * sizeof(double));
  if (p->scratch == NULL || pthread_mutex_init(&p->mu, NULL) != 0) {
    pipe_free(p);
    return NULL;
  }
  int ok = pthread_cond_init(&p->work, NULL) == 0;
  ok = ok && pthread_cond_init(&p->done, NULL) == 0;
  ok = ok && pthread_create(&p->thread, NULL, worker, p) == 0;
  if (!ok) { /* a cond that failed to init is not destroyed: never used */
    pthread_mutex_destroy(&p->mu);
    pipe_free(p);
    return NULL;
  }
  return p;
}

/* Stops and joins the worker; jobs it has not taken are dropped (the
 * caller has drained, or the file is being removed). */
void h5w__pipe_stop(h5w *w) {
  h5w_pipe *p = w->pipe;
  if (p == NULL)
    return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  p->todo = NULL;
  pthread_cond_signal(&p->work);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, NULL);
  for (h5w_job *j = p->head; j != NULL; j = j->next)
    j->queued = 0;
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->mu);
  pipe_free(p);
  w->pipe = NULL;
}

/* The oldest job once it is filtered, out of the queue: meanwhile the
 * main thread filters what the worker has not taken (without the
 * memory for it, it only waits). */
static h5w_job *pop_done(h5w_pipe *p) {
  pthread_mutex_lock(&p->mu);
  h5w_job *j = p->head;
  if (!j->done && p->mine == NULL)
    p->mine = sim_alloc(NULL, H5W_CHUNK_ELEMS * sizeof(double));
  while (!j->done) {
    if (p->todo != NULL && p->mine != NULL)
      filter_next(p, p->mine);
    else
      pthread_cond_wait(&p->done, &p->mu);
  }
  p->head = j->next;
  if (p->head == NULL)
    p->tail = NULL;
  pthread_mutex_unlock(&p->mu);
  j->queued = 0;
  return j;
}

/* Stores the filtered chunks of a job as today's path stores a block:
 * for time and then each column, extend and write. The extent ends at
 * the last row of data: a last block's padding is HDF5's fill of an
 * edge chunk (zeros, the default fill value of a float64). */
static int write_job(h5w *w, const h5w_job *j) {
  h5w_group *hg = &w->groups[j->group];
  const tel_group *g = hg->decl;
  hsize_t size[2] = {j->row + j->filled, g->width};
  hsize_t offset[2] = {j->row, 0};
  for (size_t d = 0; d < j->nsets; d++) {
    hid_t dset = d == 0 ? hg->time : hg->cols[d - 1];
    herr_t r = H5Dset_extent(dset, size);
    if (r >= 0)
      r = H5Dwrite_chunk(dset, H5P_DEFAULT, j->mask[d], offset, j->size[d],
                         job_data(j, d));
    if (r < 0)
      return h5w__io_fail(w, "write rows %llu to %llu of /%s/%s",
                          (unsigned long long)j->row,
                          (unsigned long long)size[0], g->name,
                          d == 0 ? "time" : g->columns[d - 1].name);
  }
  return SIM_OK;
}

/* Writes every queued block, oldest first; after a failure the rest are
 * only taken off the queue (the sink has failed). */
int h5w__drain(h5w *w) {
  int rc = SIM_OK;
  while (w->pipe != NULL && w->pipe->head != NULL) {
    h5w_job *j = pop_done(w->pipe);
    if (rc == SIM_OK)
      rc = write_job(w, j);
  }
  return rc;
}

/* h5w__check_state, then the queued blocks written: every call of the
 * sink that may call HDF5 starts here (the file's comment says why). */
int h5w__ready(h5w *w, const char *what) {
  int rc = h5w__check_state(w, what);
  return rc != SIM_OK ? rc : h5w__drain(w);
}

/* A job of hg (group id) in *out: with the second buffer set of hg (the
 * full blocks'), or without (the tail's, which filters hg's own). */
static int job_init(h5w_group *hg, size_t id, bool buffers, h5w_job **out) {
  h5w_job *j = *out = sim_calloc(NULL, 1, sizeof *j);
  if (j == NULL)
    return SIM_ENOMEM;
  j->group = id;
  j->rows = j->filled = hg->block;
  j->width = hg->decl->width;
  j->stride = hg->stride;
  j->nsets = 1 + hg->decl->ncolumns;
  j->size = sim_calloc(NULL, j->nsets, sizeof *j->size);
  j->mask = sim_calloc(NULL, j->nsets, sizeof *j->mask);
  if (j->size == NULL || j->mask == NULL)
    return SIM_ENOMEM;
  if (!buffers)
    return SIM_OK;
  j->tbuf = h5w__buffers(1, hg->tstride);
  j->vbuf = h5w__buffers(hg->decl->ncolumns, hg->stride);
  return j->tbuf == NULL || j->vbuf == NULL ? SIM_ENOMEM : SIM_OK;
}

/* Frees *jp; its buffers too if they are its own. */
static void job_free(h5w_job **jp, bool buffers) {
  h5w_job *j = *jp;
  if (j == NULL)
    return;
  sim_free(NULL, j->size);
  sim_free(NULL, j->mask);
  if (buffers) {
    sim_free(NULL, j->tbuf);
    sim_free(NULL, j->vbuf);
  }
  sim_free(NULL, j);
  *jp = NULL;
}

void h5w__job_free(h5w_group *hg) {
  job_free(&hg->job, true);
  job_free(&hg->tail, false);
}

/* Whether blocks of hg can go to the worker: filters on, one chunk per
 * row block (a row split over chunks has an edge chunk in its width,
 * which HDF5 pads), and the worker at hand. */
static bool can_filter(h5w *w, const h5w_group *hg) {
  if (!w->worker || w->deflate <= 0 || hg->chunk_width != hg->decl->width)
    return false;
  if (w->pipe == NULL && (w->pipe = pipe_start(w->deflate)) == NULL)
    w->worker = 0; /* no thread: filter in HDF5 from now on */
  return w->pipe != NULL;
}

/* can_filter, and *jp made (bool buffers: see job_init). */
static bool can_hand_over(h5w *w, h5w_group *hg, h5w_job **jp, bool buffers) {
  if (!can_filter(w, hg))
    return false;
  size_t id = (size_t)(hg - w->groups);
  if (*jp == NULL && job_init(hg, id, buffers, jp) != SIM_OK) {
    job_free(jp, buffers);
    return false;
  }
  return true;
}

/* Queues j, filled with the rows from hg's nrows on, for the threads. */
static void enqueue(h5w *w, const h5w_group *hg, h5w_job *j) {
  j->row = hg->nrows;
  j->done = 0;
  j->claimed = j->filtered = 0;
  j->next = NULL;
  j->queued = 1;
  h5w_pipe *p = w->pipe;
  pthread_mutex_lock(&p->mu);
  *(p->tail != NULL ? &p->tail->next : &p->head) = j;
  p->tail = j;
  if (p->todo == NULL)
    p->todo = j;
  pthread_cond_signal(&p->work);
  pthread_mutex_unlock(&p->mu);
}

/* In *out the job *jp of hg, free to queue (drained if it was queued),
 * or NULL when hg's blocks do not go to the worker or the drain failed;
 * the drain's error (the sink has failed). */
static int free_job(h5w *w, h5w_group *hg, h5w_job **jp, bool buffers,
                    h5w_job **out) {
  *out = NULL;
  if (!can_hand_over(w, hg, jp, buffers))
    return SIM_OK;
  int rc = (*jp)->queued ? h5w__drain(w) : SIM_OK;
  if (rc == SIM_OK)
    *out = *jp;
  return rc;
}

/* Queues hg's full block for the worker and gives hg the other buffer
 * set, *handed = true; or leaves it to the caller, who writes it after a
 * drain. An error of the drain (the sink has failed). */
int h5w__hand_over(h5w *w, h5w_group *hg, bool *handed) {
  h5w_job *j;
  int rc = free_job(w, hg, &hg->job, true, &j);
  *handed = false;
  if (j == NULL)
    return rc;
  double *t = hg->tbuf, *v = hg->vbuf;
  hg->tbuf = j->tbuf;
  hg->vbuf = j->vbuf;
  j->tbuf = t;
  j->vbuf = v;
  enqueue(w, hg, j);
  *handed = true;
  return SIM_OK;
}

/* Queues hg's last nbuf rows (fewer than a block, at commit) for the
 * threads, in hg's own buffers padded with zeros to a chunk: what HDF5
 * filters for an edge chunk, so H5Dwrite_chunk stores the same bytes as
 * H5Dwrite would. *handed as h5w__hand_over's; hg takes no more rows. */
int h5w__hand_over_tail(h5w *w, h5w_group *hg, bool *handed) {
  h5w_job *j;
  int rc = free_job(w, hg, &hg->tail, false, &j);
  *handed = false;
  if (j == NULL)
    return rc;
  size_t width = hg->decl->width, pad = hg->block - hg->nbuf;
  memset(hg->tbuf + hg->nbuf, 0, pad * sizeof *hg->tbuf);
  for (size_t c = 0; c < hg->decl->ncolumns; c++)
    memset(hg->vbuf + c * hg->stride + hg->nbuf * width, 0,
           pad * width * sizeof *hg->vbuf);
  j->tbuf = hg->tbuf;
  j->vbuf = hg->vbuf;
  j->filled = hg->nbuf;
  enqueue(w, hg, j);
  *handed = true;
  return SIM_OK;
}
