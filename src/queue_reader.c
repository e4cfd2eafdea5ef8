/*
 * queue_reader.c
 *		Reading a tick's rows from the queue's heap, in arrival order.
 *
 * The reader is the index scan of the query pipeline.c would run (rows of
 * the tick, windowing_seq past a point, in windowing_seq order) without the
 * executor around it.  Through SQL, every row also pays for a qual of two
 * pg_visible_in_snapshot calls, a projection and a LIMIT node, which cost a
 * good part of what reading the row itself does.  Here a row's transaction
 * is judged against the tick's snapshots once per run of rows of the same
 * transaction (producers insert in batches), and the aggregates' inputs are
 * evaluated as the executor would, with the same permission checks on the
 * functions they call.  The index's entries are taken in runs that point
 * into one heap page, and the page is locked once per run rather than once
 * per row.  A queue bigger than a quarter of shared buffers is read through
 * a ring of buffers, as a sequential scan reads one, rather than through
 * all of them.
 *
 * The scan is taken only where it reads exactly what the query reads: a
 * plain heap table without inheritance children or row security, that the
 * current user may read as a whole, with a valid B-tree index led by
 * windowing_seq.  Anything else is read through SQL (tick.c chooses).  A
 * helper process runs the same scan for a tick of many rows
 * (queue_helper.c); the whole rows it passes on are given here the values
 * the scan would give them (queue_scan_project).
 */
#include "compat.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_opfamily_d.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "queue_reader.h"

struct QueueScan
{
	Relation	heap;
	Relation	index;
	IndexScanDesc scan;
	Snapshot	snapshot;
	BufferAccessStrategy strategy;	/* NULL: none */
	BlockNumber pages_read;		/* page changes, until the ring is taken */
	Buffer		page;			/* pinned: the page of the current run */
	HeapTupleData run[MaxHeapTuplesPerPage];	/* its rows, in index order */
	int			nrun;
	int			next;			/* the next row of the run to give */
	ItemPointerData ahead;		/* read from the index past the run */
	bool		has_ahead;
	bool		index_done;		/* asking again would start it over */
	TupleTableSlot *slot;
	AttrNumber	xid_column;
	const AttrNumber *columns;	/* 0: a NULL */
	int			ncolumns;
	AttrNumber	last_column;	/* the highest of xid_column and columns */
	ExprState **inputs;
	int			ninputs;
	ExprContext *econtext;		/* the inputs' per-row memory */
	Datum		tick_hi;
	Datum		tick_lo;		/* (Datum) 0: none */
	Datum		last_xid;		/* the transaction judged last, and its verdict */
	bool		last_in_tick;
	bool		judged;
};

/* Does the SQL reader read this table as the scan would? */
static bool
plainly_readable(Relation heap)
{
	Oid			relid = RelationGetRelid(heap);

	return heap->rd_rel->relkind == RELKIND_RELATION &&
		heap->rd_tableam == GetHeapamTableAmRoutine() &&
		!has_subclass(relid) &&
		check_enable_rls(relid, InvalidOid, true) == RLS_NONE &&
		pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK;
}

/* A valid, ascending, whole-table B-tree index led by windowing_seq. */
static Relation
seq_index(Relation heap, AttrNumber seq_column)
{
	List	   *indexes = RelationGetIndexList(heap);
	ListCell   *lc;

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index form = index->rd_index;

		if (form->indisvalid && form->indkey.values[0] == seq_column &&
			index->rd_rel->relam == BTREE_AM_OID &&
			index->rd_opfamily[0] == INTEGER_BTREE_FAM_OID &&
			(index->rd_indoption[0] & INDOPTION_DESC) == 0 &&
			heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL))
			return index;
		index_close(index, AccessShareLock);
	}
	return NULL;
}

/*
 * A scan of the given queue heap and index, ready to read the rows visible
 * in snapshot tick_hi and not in tick_lo ((Datum) 0 for none).
 */
static QueueScan *
scan_of(Relation heap, Relation index, Datum tick_hi, Datum tick_lo)
{
	QueueScan  *qs = palloc0(sizeof(QueueScan));

	qs->heap = heap;
	qs->index = index;
	qs->xid_column = get_attnum(RelationGetRelid(heap), "windowing_xid");
	qs->last_column = qs->xid_column;
	qs->econtext = CreateStandaloneExprContext();
	qs->tick_hi = tick_hi;
	qs->tick_lo = tick_lo;
	qs->slot = MakeSingleTupleTableSlot(RelationGetDescr(heap), &TTSOpsHeapTuple);
	qs->econtext->ecxt_scantuple = qs->slot;
	qs->page = InvalidBuffer;
	/* a snapshot taken now, as a statement run now would have */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	qs->snapshot = GetActiveSnapshot();
	return qs;
}

/* The columns each row gives (0: a NULL). */
static void
set_columns(QueueScan *qs, const AttrNumber *columns, int ncolumns)
{
	qs->columns = columns;
	qs->ncolumns = ncolumns;
	for (int c = 0; c < ncolumns; c++)
		qs->last_column = Max(qs->last_column, columns[c]);
}

/* Starts the index scan at the first row past after_seq. */
static void
start_index_scan(QueueScan *qs, int64 after_seq)
{
	ScanKeyData key;

	qs->scan = index_beginscan(qs->heap, qs->index, qs->snapshot, 1, 0);
	ScanKeyInit(&key, 1, BTGreaterStrategyNumber, F_INT8GT, Int64GetDatum(after_seq));
	index_rescan(qs->scan, &key, 1, NULL, 0);
}

/*
 * At most how many rows past after_seq the tick has: the index's last
 * arrival number, less after_seq.  One descent of the index.
 */
int64
queue_scan_rows_past(QueueScan *qs, int64 after_seq)
{
	IndexScanDesc scan = index_beginscan(qs->heap, qs->index, qs->snapshot, 0, 0);
	int64		last = after_seq;
	bool		isnull;

	scan->xs_want_itup = true;
	index_rescan(scan, NULL, 0, NULL, 0);
	if (index_getnext_tid(scan, BackwardScanDirection) != NULL)
	{
		Datum		seq = index_getattr(scan->xs_itup, 1, scan->xs_itupdesc, &isnull);

		if (!isnull)
			last = DatumGetInt64(seq);
	}
	index_endscan(scan);
	return last - after_seq;
}

/* Created or emptied (given a new file) in this transaction. */
static bool
new_here(Relation rel)
{
	return rel->rd_createSubid != InvalidSubTransactionId ||
		rel->rd_firstRelfilenodeSubid != InvalidSubTransactionId;
}

/*
 * Whether another process (a helper) reads what this transaction would:
 * not from a queue or index new in it, whose rows others cannot see.
 * (Steps run in READ COMMITTED only, and the locks the transaction holds
 * do not stop a helper: see queue_helper.c.)
 */
bool
queue_scan_seen_by_others(QueueScan *qs)
{
	return !new_here(qs->heap) && !new_here(qs->index);
}

/*
 * The columns whose values give a row's vals (the scan's columns, then its
 * inputs), or NULL if an input is more than a column of the queue.
 */
AttrNumber *
queue_scan_value_columns(QueueScan *qs, List *inputs)
{
	AttrNumber *attnos = palloc(sizeof(AttrNumber) * (qs->ncolumns + qs->ninputs));
	ListCell   *lc;
	int			n = 0;

	for (int c = 0; c < qs->ncolumns; c++)
		attnos[n++] = qs->columns[c];
	foreach(lc, inputs)
	{
		Var		   *var = lfirst(lc);

		if (!IsA(var, Var) || var->varattno <= 0 || var->varlevelsup != 0)
			return NULL;
		attnos[n++] = var->varattno;
	}
	return attnos;
}

/*
 * A scan of queue "source" for the rows visible in snapshot tick_hi and not
 * in tick_lo ((Datum) 0 for none), each giving the given columns, then the
 * given expressions over the row; NULL if the queue must be read through
 * SQL.  Its rows are read once queue_scan_start says from where.
 */
QueueScan *
queue_scan_open(Oid source, const AttrNumber *columns, int ncolumns,
				List *inputs, Datum tick_hi, Datum tick_lo)
{
	Relation	heap = table_open(source, AccessShareLock);
	Relation	index;
	QueueScan  *qs;
	ListCell   *lc;
	int			i = 0;

	if (!plainly_readable(heap) ||
		(index = seq_index(heap, get_attnum(source, "windowing_seq"))) == NULL)
	{
		table_close(heap, NoLock);
		return NULL;
	}
	qs = scan_of(heap, index, tick_hi, tick_lo);
	set_columns(qs, columns, ncolumns);
	qs->ninputs = list_length(inputs);
	qs->inputs = palloc(sizeof(ExprState *) * Max(qs->ninputs, 1));
	foreach(lc, inputs)
		qs->inputs[i++] = ExecInitExpr(lfirst(lc), NULL);
	return qs;
}

/* The scan reads the heap from the first row past after_seq. */
void
queue_scan_start(QueueScan *qs, int64 after_seq)
{
	start_index_scan(qs, after_seq);
}

/* The queue and its arrival-number index, for a helper reading them. */
void
queue_scan_relations(QueueScan *qs, Relation *heap, Relation *index)
{
	*heap = qs->heap;
	*index = qs->index;
}

/*
 * The same rows through the given index, for a helper process: whole (see
 * queue_scan_next_tuple), or as the given columns (queue_scan_next).  The
 * step that started the helper checked the queue and chose the index, in
 * its transaction.
 */
QueueScan *
queue_scan_begin_rows(Oid source, Oid index, Datum tick_hi, Datum tick_lo,
					  int64 after_seq, const AttrNumber *columns, int ncolumns)
{
	QueueScan  *qs = scan_of(table_open(source, AccessShareLock),
							 index_open(index, AccessShareLock), tick_hi, tick_lo);

	set_columns(qs, columns, ncolumns);
	start_index_scan(qs, after_seq);
	return qs;
}

/* Committed in tick_hi, not in tick_lo: pg_visible_in_snapshot's rule. */
static bool
in_tick(QueueScan *qs, Datum xid)
{
	if (qs->judged && xid == qs->last_xid)
		return qs->last_in_tick;
	qs->last_xid = xid;
	qs->judged = true;
	qs->last_in_tick =
		DatumGetBool(DirectFunctionCall2(pg_visible_in_snapshot, xid, qs->tick_hi)) &&
		(qs->tick_lo == (Datum) 0 ||
		 !DatumGetBool(DirectFunctionCall2(pg_visible_in_snapshot, xid, qs->tick_lo)));
	return qs->last_in_tick;
}

/*
 * The index's next entries that point into one heap page, up to the first
 * pointing elsewhere (kept for the next run); 0 when the index has no more.
 */
static int
next_tids(QueueScan *qs, ItemPointerData *tids)
{
	int			n = 0;
	ItemPointer tid;

	if (qs->has_ahead)
		tids[n++] = qs->ahead;
	qs->has_ahead = false;
	while (n < MaxHeapTuplesPerPage && !qs->index_done)
	{
		tid = index_getnext_tid(qs->scan, ForwardScanDirection);
		qs->index_done = tid == NULL;
		if (tid == NULL)
			break;
		if (n > 0 && ItemPointerGetBlockNumber(tid) != ItemPointerGetBlockNumber(&tids[0]))
		{
			qs->ahead = *tid;
			qs->has_ahead = true;
			break;
		}
		tids[n++] = *tid;
	}
	return n;
}

/*
 * The next run of rows visible to the snapshot that the index puts on one
 * heap page; false when there are none.  The page is locked once for the
 * run, as a sequential scan locks it once for all its rows, instead of once
 * per row; the rows stay readable under the pin alone, since nothing moves
 * a tuple on a page others hold pinned.
 */
static bool
next_run(QueueScan *qs)
{
	ItemPointerData tids[MaxHeapTuplesPerPage];
	int			n;

	qs->nrun = qs->next = 0;
	while (qs->nrun == 0 && (n = next_tids(qs, tids)) > 0)
	{
		BlockNumber block = ItemPointerGetBlockNumber(&tids[0]);

		if (!BufferIsValid(qs->page) || BufferGetBlockNumber(qs->page) != block)
		{
			if (BufferIsValid(qs->page))
				ReleaseBuffer(qs->page);
			/*
			 * A scan of more than a quarter of shared buffers goes on through
			 * a ring of buffers, as a sequential scan of a big table would;
			 * asked when the scan starts, the table's size would cost a
			 * small step a system call.
			 */
			if (qs->strategy == NULL && ++qs->pages_read > (BlockNumber) NBuffers / 4)
				qs->strategy = GetAccessStrategy(BAS_BULKREAD);
			qs->page = ReadBufferExtended(qs->heap, MAIN_FORKNUM, block, RBM_NORMAL,
										  qs->strategy);
		}
		heap_page_prune_opt(qs->heap, qs->page);
		LockBuffer(qs->page, BUFFER_LOCK_SHARE);
		for (int i = 0; i < n; i++)
			if (heap_hot_search_buffer(&tids[i], qs->heap, qs->page, qs->snapshot,
									   &qs->run[qs->nrun], NULL, true))
				qs->nrun++;
		LockBuffer(qs->page, BUFFER_LOCK_UNLOCK);
	}
	return qs->nrun > 0;
}

/* The descriptor of the queue's rows. */
TupleDesc
queue_scan_desc(QueueScan *qs)
{
	return RelationGetDescr(qs->heap);
}

/*
 * The tick's next row, whole, or NULL when there is none.  It lasts until
 * the next call.
 */
HeapTuple
queue_scan_next_tuple(QueueScan *qs)
{
	while (qs->next < qs->nrun || next_run(qs))
	{
		HeapTuple	tuple = &qs->run[qs->next++];
		bool		isnull;
		Datum		xid;

		ExecStoreHeapTuple(tuple, qs->slot, false);
		xid = slot_getattr(qs->slot, qs->xid_column, &isnull);
		if (!isnull && in_tick(qs, xid))
			return tuple;
	}
	return NULL;
}

/* The row in the slot as the columns, then the expressions. */
static void
project_slot(QueueScan *qs, Datum *vals, bool *nulls)
{
	/* most rows' inputs allocate nothing: skip the call then */
	if (!qs->econtext->ecxt_per_tuple_memory->isReset ||
		qs->econtext->ecxt_per_tuple_memory->firstchild != NULL)
		ResetExprContext(qs->econtext);
	slot_getsomeattrs(qs->slot, qs->last_column);
	for (int i = 0; i < qs->ncolumns; i++)
	{
		AttrNumber	c = qs->columns[i];

		nulls[i] = c == 0 || qs->slot->tts_isnull[c - 1];
		vals[i] = nulls[i] ? (Datum) 0 : qs->slot->tts_values[c - 1];
	}
	for (int i = 0; i < qs->ninputs; i++)
		vals[qs->ncolumns + i] = ExecEvalExprSwitchContext(qs->inputs[i], qs->econtext,
														   &nulls[qs->ncolumns + i]);
}

/*
 * The next row of the tick into vals/nulls (the columns, then the
 * expressions); false when there is none.  The values last until the next
 * call.
 */
bool
queue_scan_next(QueueScan *qs, Datum *vals, bool *nulls)
{
	/* the scan's own rows are in the slot already */
	if (queue_scan_next_tuple(qs) == NULL)
		return false;
	project_slot(qs, vals, nulls);
	return true;
}

/* The values queue_scan_next would give for a row read elsewhere. */
void
queue_scan_project(QueueScan *qs, HeapTuple tuple, Datum *vals, bool *nulls)
{
	ExecStoreHeapTuple(tuple, qs->slot, false);
	project_slot(qs, vals, nulls);
}

void
queue_scan_end(QueueScan *qs)
{
	if (qs->scan)
		index_endscan(qs->scan);
	if (BufferIsValid(qs->page))
		ReleaseBuffer(qs->page);
	if (qs->strategy)
		FreeAccessStrategy(qs->strategy);
	PopActiveSnapshot();
	ExecDropSingleTupleTableSlot(qs->slot);
	FreeExprContext(qs->econtext, true);
	index_close(qs->index, NoLock);
	table_close(qs->heap, NoLock);
}
