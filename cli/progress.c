/* progress.c - the progress line of progress.h. */
#include "progress.h"

#include <math.h>
#include <unistd.h>

void progress_init(progress *p, FILE *out, bool quiet) {
  p->out = out;
  p->enabled = !quiet && out != NULL && isatty(fileno(out));
  p->last_draw_s = -1;
  p->width = 0;
}

char *progress_hms(double seconds, char *buf, size_t size) {
  if (!isfinite(seconds) || seconds < 0)
    seconds = 0;
  long s = (long)seconds;
  long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
  if (d > 0)
    snprintf(buf, size, "%ldd %02ld:%02ld:%02ld", d, h, m, sec);
  else
    snprintf(buf, size, "%02ld:%02ld:%02ld", h, m, sec);
  return buf;
}

void progress_update(progress *p, double sim_s, double total_s, uint64_t events,
                     double wall_s) {
  if (!p->enabled || (p->last_draw_s >= 0 && wall_s - p->last_draw_s < 0.1))
    return;
  p->last_draw_s = wall_s;
  double done = total_s > 0 ? sim_s / total_s : 1;
  double rate = wall_s > 0 ? (double)events / wall_s : 0;
  double eta = done > 0 ? wall_s * (1 - done) / done : 0;
  char t[32], left[32];
  int n = fprintf(p->out, "\r  sim %s  %5.1f%%  %.3g events/s  ETA %s",
                  progress_hms(sim_s, t, sizeof t), 100 * done, rate,
                  progress_hms(eta, left, sizeof left));
  if (n < p->width)
    fprintf(p->out, "%*s", p->width - n, "");
  p->width = n;
  fflush(p->out);
}

void progress_done(progress *p) {
  if (!p->enabled || p->width == 0)
    return;
  fprintf(p->out, "\r%*s\r", p->width, "");
  fflush(p->out);
  p->width = 0;
}

int64_t progress_next_slice(int64_t last, double last_wall_s, double target_s) {
  if (last < 1)
    last = 1;
  double grown = 4.0 * (double)last;
  double next = last_wall_s > 0 ? (double)last * target_s / last_wall_s : grown;
  if (!(next < grown)) /* also NaN */
    next = grown;
  if (next > 4e18) /* int64_t nanoseconds: about 126 years */
    next = 4e18;
  return next < 1 ? 1 : (int64_t)next;
}
