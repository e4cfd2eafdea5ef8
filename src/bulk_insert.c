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

struct BulkInsert
{
	Relation	rel;
	int			ncols;
	int		   *attidx;			/* each given column's place in the table */
	Datum	   *values;
	bool	   *nulls;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleDesc	desc;			/* the slots' */
	TupleTableSlot *slots[BATCH_ROWS];
	int			nslots;			/* made so far */
	int			n;				/* filled */
	BulkInsertState bistate;
	MemoryContext batchcxt;		/* the filled rows' values */
};

BulkInsert *
bulk_insert_begin(Oid relid, int ncols, const char **names, Oid *types)
{
	Relation	rel = table_open(relid, RowExclusiveLock);
	int		   *attidx = palloc(sizeof(int) * ncols);
	BulkInsert *b;
	RangeTblEntry *rte;

	if (!plain_target(rel, ncols, names, types, attidx) ||
		!ExecCheckRTEPerms(rte = insert_rte(rel, ncols, attidx)))
	{
		table_close(rel, NoLock);
		return NULL;
	}
	b = palloc0(sizeof(BulkInsert));
	b->rel = rel;
	b->ncols = ncols;
	b->attidx = attidx;
	b->estate = CreateExecutorState();
	ExecInitRangeTable(b->estate, list_make1(rte));
	b->rri = makeNode(ResultRelInfo);
	InitResultRelInfo(b->rri, rel, 1, NULL, 0);
	ExecOpenIndices(b->rri, false);
	if (!immediate_indexes(b->rri))
	{
		ExecCloseIndices(b->rri);
		FreeExecutorState(b->estate);
		table_close(rel, NoLock);
		return NULL;
	}
	b->values = palloc(sizeof(Datum) * ncols);
	b->nulls = palloc(sizeof(bool) * ncols);

	/*
	 * The slots share a copy of the descriptor that is not reference
	 * counted, since each pin of the relation's own is remembered by the
	 * resource owner, and a thousand pins of one descriptor cost more there
	 * than writing the rows.
	 */
	b->desc = CreateTupleDescCopy(RelationGetDescr(rel));
	b->bistate = GetBulkInsertState();
	b->batchcxt = AllocSetContextCreate(CurrentMemoryContext, "windowing bulk insert",
										ALLOCSET_DEFAULT_SIZES);
	return b;
}

/* Writes the filled slots into the heap, then each into the indexes. */
static void
flush(BulkInsert *b)
{
	table_multi_insert(b->rel, b->slots, b->n, GetCurrentCommandId(true), 0, b->bistate);
	for (int i = 0; i < b->n; i++)
		(void) ExecInsertIndexTuples(b->rri, b->slots[i], b->estate, false, false, NULL, NIL);
	b->n = 0;
	ResetPerTupleExprContext(b->estate);
	MemoryContextReset(b->batchcxt);
}

void
bulk_insert_add(BulkInsert *b, BulkRowFiller fill, void *arg, int i)
{
	MemoryContext old;
	TupleTableSlot *slot;

	/* a step that writes a few rows makes only the slots it needs */
	if (b->n == b->nslots)
		b->slots[b->nslots++] = MakeSingleTupleTableSlot(b->desc, table_slot_callbacks(b->rel));
	slot = b->slots[b->n];
	old = MemoryContextSwitchTo(b->batchcxt);
	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	memset(b->nulls, 0, sizeof(bool) * b->ncols);
	fill(arg, i, b->values, b->nulls);
	for (int c = 0; c < b->ncols; c++)
	{
		slot->tts_values[b->attidx[c]] = b->values[c];
		slot->tts_isnull[b->attidx[c]] = b->nulls[c];
	}
	ExecStoreVirtualTuple(slot);
	if (b->rel->rd_att->constr)
		ExecConstraints(b->rri, slot, b->estate);
	MemoryContextSwitchTo(old);
	if (++b->n == BATCH_ROWS)
		flush(b);
}

void
bulk_insert_end(BulkInsert *b)
{
	if (b->n > 0)
		flush(b);
	MemoryContextDelete(b->batchcxt);
	FreeBulkInsertState(b->bistate);
	for (int i = 0; i < b->nslots; i++)
		ExecDropSingleTupleTableSlot(b->slots[i]);
	ExecCloseIndices(b->rri);
	FreeExecutorState(b->estate);
	table_close(b->rel, NoLock);
	pfree(b);
}

bool
bulk_insert(Oid relid, int ncols, const char **names, Oid *types, int nrows,
			BulkRowFiller fill, void *arg)
{
	BulkInsert *b = bulk_insert_begin(relid, ncols, names, types);

	if (b == NULL)
		return false;
	for (int r = 0; r < nrows; r++)
		bulk_insert_add(b, fill, arg, r);
	bulk_insert_end(b);
	return true;
}
