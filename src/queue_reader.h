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
#include "utils/relcache.h"

typedef struct QueueScan QueueScan;

extern QueueScan *queue_scan_open(Oid source, const AttrNumber *columns,
								  int ncolumns, List *inputs, Datum tick_hi,
								  Datum tick_lo);
extern int64 queue_scan_rows_past(QueueScan *qs, int64 after_seq);
extern bool queue_scan_seen_by_others(QueueScan *qs);
extern AttrNumber *queue_scan_value_columns(QueueScan *qs, List *inputs);
extern void queue_scan_relations(QueueScan *qs, Relation *heap, Relation *index);
extern void queue_scan_start(QueueScan *qs, int64 after_seq);
extern void queue_scan_project(QueueScan *qs, HeapTuple tuple, Datum *vals,
							   bool *nulls);
extern QueueScan *queue_scan_begin_rows(Oid source, Oid index, Datum tick_hi,
										Datum tick_lo, int64 after_seq,
										const AttrNumber *columns, int ncolumns);
extern bool queue_scan_next(QueueScan *qs, Datum *vals, bool *nulls);
extern HeapTuple queue_scan_next_tuple(QueueScan *qs);
extern TupleDesc queue_scan_desc(QueueScan *qs);
extern void queue_scan_end(QueueScan *qs);

#endif							/* WINDOWING_QUEUE_READER_H */
