/*
 * pipeline.h
 *		The processing step of a continuous pipeline.
 *
 * One step reads the queue rows committed since the pipeline's cursor,
 * assigns them to windows, moves the watermark, fires windows, writes
 * results, late rows and the new cursor.  It runs inside the caller's
 * transaction, so a step is exactly once: it commits whole or not at all.
 * windowing.process() and the background worker run the same step.
 */
#ifndef WINDOWING_PIPELINE_H
#define WINDOWING_PIPELINE_H

#include "postgres.h"

#include "datatype/timestamp.h"

#include "catalog.h"

extern char *pipeline_clock_setting;
extern int	pipeline_step_memory;

/*
 * Runs one step of a part of a pipeline in the current transaction, consuming at
 * most max_rows rows (<= 0: all that are committed now) for at most max_ms
 * milliseconds (<= 0: no limit, as for process()); a step also ends once it
 * has allocated windowing.step_memory.  The caller must have the privileges
 * of the pipeline's owner (a superuser, as the worker, has), and the step
 * runs as that owner.  SPI must not be connected.  Returns the rows
 * consumed.
 *
 * With find_row, a step of a pipeline with on_error 'stop' that fails on a
 * row (its aggregate input or transition) first finds the row, at the cost
 * of a subtransaction per step; pipeline_failed_row() then gives its
 * arrival number, and false when no row is known to be at fault.  With
 * 'route' such rows go to the late table and the step goes on.
 */
extern int64 pipeline_step(const PipelinePart *p, int64 max_rows, int max_ms, bool find_row,
						   bool *more);
extern bool pipeline_failed_row(int64 *seq);
extern TimestampTz pipeline_clock(void);
extern int64 pipeline_idle_watermark(int64 rows, TimestampTz last_row_at, TimestampTz now,
									 int64 idle_timeout, bool is_ts, int64 delay);
extern int64 pipeline_duration(const Interval *iv, bool is_ts, const char *what);
extern void pipeline_lock(const char *name, int part);
extern bool pipeline_try_lock(const char *name, int part);
extern Oid	pipeline_locked_table(const PipelineRunning *running);
extern int	pipeline_parts(const char *name, bool lock);
extern void pipeline_catch_up(const char *name, int part, char *until, int64 watermark);

#endif							/* WINDOWING_PIPELINE_H */
