/*
 * heap_rows.c
 *		Rows of windowing's own tables written without the executor.
 *
 * A step writes a few rows of windowing's tables whatever its size: its
 * state_log row, its pipeline's progress, and at a fold the rows of
 * window_state.  Through a statement, each would cost an executor's start
 * and end, which is most of a small step; here they go into the heap
 * (heap_insert, heap_update), then into the table's indexes, as the
 * executor would enter them.  None of these tables has a trigger or a
 * constraint that such a write would pass by.
 */
#include "compat.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "heap_rows.h"

/* Windowing's table "name", opened under "lock". */
Relation
windowing_table_open(const char *name, LOCKMODE lock)
{
	return table_open(get_relname_relid(name, get_namespace_oid("windowing", false)), lock);
}

void
row_indexes_open(RowIndexes *ix, Relation rel)
{
	List	   *oids = RelationGetIndexList(rel);
	ListCell   *lc;

	ix->n = 0;
	ix->rels = palloc(sizeof(Relation) * list_length(oids));
	ix->infos = palloc(sizeof(IndexInfo *) * list_length(oids));
	foreach(lc, oids)
	{
		ix->rels[ix->n] = index_open(lfirst_oid(lc), RowExclusiveLock);
		ix->infos[ix->n] = BuildIndexInfo(ix->rels[ix->n]);
		ix->n++;
	}
	ix->slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsHeapTuple);
}

/*
 * Enters "tuple", just written to rel's heap, into its indexes, unless it
 * is a heap-only tuple (a HOT update), which they reach through the
 * root of its chain.
 */
void
row_indexes_insert(RowIndexes *ix, Relation rel, HeapTuple tuple)
{
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];

	if (HeapTupleIsHeapOnly(tuple))
		return;
	ExecStoreHeapTuple(tuple, ix->slot, false);
	for (int i = 0; i < ix->n; i++)
	{
		FormIndexDatum(ix->infos[i], ix->slot, NULL, values, isnull);
		index_insert(ix->rels[i], values, isnull, &tuple->t_self, rel,
					 ix->rels[i]->rd_index->indisunique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
					 false, ix->infos[i]);
	}
	ExecClearTuple(ix->slot);
}

void
row_indexes_close(RowIndexes *ix)
{
	for (int i = 0; i < ix->n; i++)
		index_close(ix->rels[i], RowExclusiveLock);
	ExecDropSingleTupleTableSlot(ix->slot);
}

/*
 * Enters one row, just written to rel's heap, into its indexes: those of
 * a heap-only tuple are not even opened, as a step's progress is most
 * often written.
 */
void
row_indexes_enter(Relation rel, HeapTuple tuple)
{
	RowIndexes	ix;

	if (HeapTupleIsHeapOnly(tuple))
		return;
	row_indexes_open(&ix, rel);
	row_indexes_insert(&ix, rel, tuple);
	row_indexes_close(&ix);
}
