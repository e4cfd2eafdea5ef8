/*
 * queue_reader.h
 *		Reading a tick's rows from the queue's heap, in arrival order.
 */
#ifndef WINDOWING_QUEUE_READER_H
#define WINDOWING_QUEUE_READER_H

#include "postgres.h"

#include "access/htup.h"
#include "access/tupdesc.h"
#include "nodes/pg_list.h"

typedef struct QueueScan QueueScan;

extern QueueScan *queue_scan_begin(Oid source, const AttrNumber *columns,
								   int ncolumns, List *inputs, Datum tick_hi,
								   Datum tick_lo, int64 after_seq, int64 max_rows);
extern QueueScan *queue_scan_begin_rows(Oid source, Oid index, Datum tick_hi,
										Datum tick_lo, int64 after_seq,
										const AttrNumber *columns, int ncolumns);
extern bool queue_scan_next(QueueScan *qs, Datum *vals, bool *nulls);
extern HeapTuple queue_scan_next_tuple(QueueScan *qs);
extern TupleDesc queue_scan_desc(QueueScan *qs);
extern void queue_scan_end(QueueScan *qs);

#endif							/* WINDOWING_QUEUE_READER_H */
