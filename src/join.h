/*
 * join.h
 *		A step of a join pipeline (join.c).
 */
#ifndef WINDOWING_JOIN_H
#define WINDOWING_JOIN_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "nodes/execnodes.h"

#include "catalog.h"

/*
 * One step of join pipeline "def", loaded with its progress: reads the new
 * rows of both inputs (if consume_rows; at most max_rows of each, if
 * positive, the rest left for the next step), moves the watermark (to at least
 * "watermark" if has_watermark; an input idle for idle_timeout microseconds,
 * -1 for none, follows the clock "now"), writes pairs, late rows and
 * progress.  True if it left an input's rows for the next step.  Needs SPI
 * connected, as the pipeline's owner.
 */
extern bool join_step(const PipelineDef *def, PipelineProgress *progress, int64 max_rows,
					  bool consume_rows, bool has_watermark, int64 watermark, TimestampTz now,
					  int64 idle_timeout);

/*
 * The windows of window join "def" that have not fired, or the rows an
 * interval join keeps, as open_windows() shows them, into rsi's tuplestore.  Needs SPI connected, as the
 * pipeline's owner.
 */
extern void join_open_windows(const PipelineDef *def, PipelineProgress *progress,
							  ReturnSetInfo *rsi);

#endif							/* WINDOWING_JOIN_H */
