/*
 * heap_rows.h
 *		Rows of windowing's own tables written without the executor
 *		(heap_rows.c).
 */
#ifndef WINDOWING_HEAP_ROWS_H
#define WINDOWING_HEAP_ROWS_H

#include "postgres.h"

#include "access/htup.h"
#include "storage/itemptr.h"
#include "nodes/execnodes.h"
#include "utils/relcache.h"

/*
 * A table's indexes, to enter a row that heap_insert or a non-HOT
 * heap_update put in a new place, as the executor would.
 */
typedef struct RowIndexes
{
	int			n;
	Relation   *rels;
	IndexInfo **infos;
	TupleTableSlot *slot;
} RowIndexes;

extern Relation windowing_table_open(const char *name, LOCKMODE lock);
extern void row_indexes_open(RowIndexes *ix, Relation rel);
extern void row_indexes_insert(RowIndexes *ix, Relation rel, HeapTuple tuple);
extern void row_indexes_close(RowIndexes *ix);
extern void row_indexes_enter(Relation rel, HeapTuple tuple);
extern void heap_rows_deleted(Relation rel, ItemPointer tid);
extern void heap_rows_reuse(Relation rel, Size len, BlockNumber *pages);

#endif							/* WINDOWING_HEAP_ROWS_H */
