/* validate_row.h - one row of docs/VALIDATION.md (tools/validate.py): a
 * published figure against the model's, emitted where a test computes
 * the figure. Nothing is written unless the environment variable
 * AIFSIM_VALIDATE names a file; then the row is appended to it as one
 * tab-separated line:
 *   VALIDATE kind basis topic figure source conditions unit published
 *   model lo hi band
 * (numbers as %.17g), in one O_APPEND write, so that test processes may
 * share the file. The row is within its band when lo <= model <= hi
 * (use -INFINITY or INFINITY for an open side); band_text says the band
 * in words. Tabs and newlines in the strings become spaces. Emit the row
 * before the assertion that holds the band, so that a failing band still
 * shows in the table.
 *
 * Every row states its kind (docs/VALIDATION.md, "Kinds"), and basis says
 * in a few words why it is of that kind: what was fitted or set to the
 * figure, what the formula is, whose bar it is, or what was held out.
 * Only validation rows count in the report's headline. A row whose kind
 * is not one of the four is written as kind "?", which validate.py
 * refuses, naming the figure. */
#ifndef VALIDATE_ROW_H
#define VALIDATE_ROW_H

/* Topics, in the order of the table. */
#define VALIDATE_SEED "seed tables"
#define VALIDATE_SERVING "serving"
#define VALIDATE_TRAINING "training"
#define VALIDATE_FACILITY "facility"
#define VALIDATE_GRID "grid"
#define VALIDATE_WORKLOADS "workloads"

/* What a comparison can tell. 0 is no kind, so a zeroed value is refused. */
typedef enum validate_kind {
  /* Arithmetic, a formula the model implements, or data entry: the model
   * cannot disagree unless the code is wrong. */
  VALIDATE_KIND_IDENTITY = 1,
  /* A parameter was fitted or set to this figure, or to the data it comes
   * from (the fit set of tools/calibrate.py, or a constant set by hand
   * against the figure). */
  VALIDATE_KIND_CALIBRATION,
  /* An issue's (or the seed's) own target, not a measurement. */
  VALIDATE_KIND_BAR,
  /* A measurement nothing was fitted to, nor to the data it comes from. */
  VALIDATE_KIND_VALIDATION,
} validate_kind;

void validate_row(validate_kind kind, const char *basis, const char *topic,
                  const char *figure, const char *source,
                  const char *conditions, const char *unit, double published,
                  double model, double lo, double hi, const char *band_text);

/* validate_row with a band of published x (1 - rel) to published x (1 +
 * rel), written "+-N%". */
void validate_row_rel(validate_kind kind, const char *basis, const char *topic,
                      const char *figure, const char *source,
                      const char *conditions, const char *unit,
                      double published, double model, double rel);

/* The kind's name as the table writes it ("identity", ...), or "?". */
const char *validate_kind_name(validate_kind kind);

#endif
