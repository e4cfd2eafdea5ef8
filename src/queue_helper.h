/*
 * queue_helper.h
 *		A second process that reads a big tick's rows for a step.
 */
#ifndef WINDOWING_QUEUE_HELPER_H
#define WINDOWING_QUEUE_HELPER_H

#include "postgres.h"

#include "access/htup.h"
#include "utils/relcache.h"

typedef struct QueueHelper QueueHelper;

/* windowing.read_helper_rows: 0 never starts one */
extern int	queue_helper_min_rows;

extern QueueHelper *queue_helper_start(Relation heap, Relation index, Datum tick_hi,
									   Datum tick_lo, int64 after_seq,
									   const AttrNumber *attnos, int nvalues);
extern bool queue_helper_next(QueueHelper *h, HeapTuple tuple);
extern bool queue_helper_next_values(QueueHelper *h, Datum *vals, bool *nulls);
extern void queue_helper_end(QueueHelper *h);

extern PGDLLEXPORT void windowing_queue_helper_main(Datum arg);

#endif							/* WINDOWING_QUEUE_HELPER_H */
