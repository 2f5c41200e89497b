/* validate_row.h - one row of docs/VALIDATION.md (tools/validate.py): a
 * published figure against the model's, emitted where a test computes
 * the figure. Nothing is written unless the environment variable
 * AIFSIM_VALIDATE names a file; then the row is appended to it as one
 * tab-separated line:
 *   VALIDATE topic figure source conditions unit published model lo hi band
 * (numbers as %.17g), in one O_APPEND write, so that test processes may
 * share the file. The row is within its band when lo <= model <= hi
 * (use -INFINITY or INFINITY for an open side); band_text says the band
 * in words. Tabs and newlines in the strings become spaces. Emit the row
 * before the assertion that holds the band, so that a failing band still
 * shows in the table. */
#ifndef VALIDATE_ROW_H
#define VALIDATE_ROW_H

/* Topics, in the order of the table. */
#define VALIDATE_SEED "seed tables"
#define VALIDATE_SERVING "serving"
#define VALIDATE_TRAINING "training"
#define VALIDATE_FACILITY "facility"
#define VALIDATE_GRID "grid"
#define VALIDATE_WORKLOADS "workloads"

void validate_row(const char *topic, const char *figure, const char *source,
                  const char *conditions, const char *unit, double published,
                  double model, double lo, double hi, const char *band_text);

/* validate_row with a band of published x (1 - rel) to published x (1 +
 * rel), written "+-N%". */
void validate_row_rel(const char *topic, const char *figure, const char *source,
                      const char *conditions, const char *unit,
                      double published, double model, double rel);

#endif
