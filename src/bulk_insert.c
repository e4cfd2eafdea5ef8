/*
 * bulk_insert.c
 *		Many rows into a plain table the way COPY FROM writes them.
 *
 * A step writes every window it fires into the result table; a hopping
 * pipeline fires millions.  Through INSERT ... SELECT each row goes through
 * the executor one by one; here rows go into the heap in batches
 * (table_multi_insert, as COPY does) and then into the table's indexes.
 * That is only the same as an INSERT for a plain table that the current
 * user may insert into, whose columns are exactly the ones given, of
 * exactly those types, not a partition (whose bounds INSERT checks), with
 * no triggers, no row security, no generated columns and no deferred
 * unique checks; for any other table the caller takes the executor's
 * path, which does everything (and raises the errors) an INSERT would.
 * NOT NULL and CHECK constraints and unique indexes are enforced here as
 * INSERT does.
 */
#include "compat.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "bulk_insert.h"

/*
 * Rows per table_multi_insert.  COPY buffers up to a thousand, in slots it
 * makes once; a step makes its slots anew, and making a thousand cost a
 * step that fires a thousand windows more than the batches save.
 */
#define BATCH_ROWS 100

/*
 * Where each given column is in the table (attno - 1), or false if the
 * table is not one this path can write as INSERT would.
 */
static bool
plain_target(Relation rel, int ncols, const char **names, Oid *types, int *attidx)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			live = 0;

	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relispartition ||
		rel->trigdesc != NULL ||
		check_enable_rls(RelationGetRelid(rel), InvalidOid, true) != RLS_NONE ||
		(desc->constr && desc->constr->has_generated_stored))
		return false;
	for (int a = 0; a < desc->natts; a++)
		if (!TupleDescAttr(desc, a)->attisdropped)
			live++;
	if (live != ncols)
		return false;
	for (int c = 0; c < ncols; c++)
	{
		AttrNumber	att = get_attnum(RelationGetRelid(rel), names[c]);
		Form_pg_attribute attr;

		if (att <= 0)
			return false;
		attr = TupleDescAttr(desc, att - 1);
		if (attr->atttypid != types[c] || attr->atttypmod != -1)
			return false;
		attidx[c] = att - 1;
	}
	return true;
}

/* Whether every unique index checks at once (none waits for commit). */
static bool
immediate_indexes(ResultRelInfo *rri)
{
	for (int i = 0; i < rri->ri_NumIndices; i++)
		if (!rri->ri_IndexRelationDescs[i]->rd_index->indimmediate)
			return false;
	return true;
}

/* A range table of the one relation, asking INSERT on the given columns. */
static RangeTblEntry *
insert_rte(Relation rel, int ncols, const int *attidx)
{
	RangeTblEntry *rte = makeNode(RangeTblEntry);

	rte->rtekind = RTE_RELATION;
	rte->relid = RelationGetRelid(rel);
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	rte->requiredPerms = ACL_INSERT;
	for (int c = 0; c < ncols; c++)
		rte->insertedCols = bms_add_member(rte->insertedCols,
										   attidx[c] + 1 - FirstLowInvalidHeapAttributeNumber);
	return rte;
}

/* Writes n filled slots into the heap, then each into the indexes. */
static void
flush(Relation rel, ResultRelInfo *rri, EState *estate, TupleTableSlot **slots,
	  int n, BulkInsertState bistate)
{
	table_multi_insert(rel, slots, n, GetCurrentCommandId(true), 0, bistate);
	for (int i = 0; i < n; i++)
		(void) ExecInsertIndexTuples(rri, slots[i], estate, false, false, NULL, NIL);
}

bool
bulk_insert(Oid relid, int ncols, const char **names, Oid *types, int nrows,
			BulkRowFiller fill, void *arg)
{
	Relation	rel = table_open(relid, RowExclusiveLock);
	int		   *attidx = palloc(sizeof(int) * ncols);
	Datum	   *values = palloc(sizeof(Datum) * ncols);
	bool	   *nulls = palloc(sizeof(bool) * ncols);
	EState	   *estate;
	ResultRelInfo *rri;
	RangeTblEntry *rte;
	TupleDesc	desc;
	TupleTableSlot *slots[BATCH_ROWS];
	BulkInsertState bistate;
	MemoryContext batchcxt;
	MemoryContext old;
	int			nslots = Min(nrows, BATCH_ROWS);
	int			n = 0;

	if (!plain_target(rel, ncols, names, types, attidx) ||
		!ExecCheckRTEPerms(rte = insert_rte(rel, ncols, attidx)))
	{
		table_close(rel, NoLock);
		return false;
	}
	estate = CreateExecutorState();
	ExecInitRangeTable(estate, list_make1(rte));
	rri = makeNode(ResultRelInfo);
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	ExecOpenIndices(rri, false);
	if (!immediate_indexes(rri))
	{
		ExecCloseIndices(rri);
		FreeExecutorState(estate);
		table_close(rel, NoLock);
		return false;
	}
	/*
	 * Steps write a chunk's few windows at a time: make only the slots
	 * needed.  They share a copy of the descriptor that is not reference
	 * counted, since each pin of the relation's own is remembered by the
	 * resource owner, and a thousand pins of one descriptor cost more there
	 * than writing the rows.
	 */
	desc = CreateTupleDescCopy(RelationGetDescr(rel));
	for (int i = 0; i < nslots; i++)
		slots[i] = MakeSingleTupleTableSlot(desc, table_slot_callbacks(rel));
	bistate = GetBulkInsertState();
	batchcxt = AllocSetContextCreate(CurrentMemoryContext, "windowing bulk insert",
									 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(batchcxt);
	for (int r = 0; r < nrows; r++)
	{
		TupleTableSlot *slot = slots[n];

		ExecClearTuple(slot);
		memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
		memset(nulls, 0, sizeof(bool) * ncols);
		fill(arg, r, values, nulls);
		for (int c = 0; c < ncols; c++)
		{
			slot->tts_values[attidx[c]] = values[c];
			slot->tts_isnull[attidx[c]] = nulls[c];
		}
		ExecStoreVirtualTuple(slot);
		if (rel->rd_att->constr)
			ExecConstraints(rri, slot, estate);
		if (++n == BATCH_ROWS || r == nrows - 1)
		{
			flush(rel, rri, estate, slots, n, bistate);
			n = 0;
			ResetPerTupleExprContext(estate);
			MemoryContextReset(batchcxt);
		}
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(batchcxt);
	FreeBulkInsertState(bistate);
	for (int i = 0; i < nslots; i++)
		ExecDropSingleTupleTableSlot(slots[i]);
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
	table_close(rel, NoLock);
	return true;
}
