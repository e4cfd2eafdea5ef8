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
 * constraint that such a write would pass by.  The pages a process
 * deleted rows from take its next rows once pruned (heap_rows_reuse).
 */
#include "compat.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

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

/*
 * Pages of a table from which this process deleted rows, to put its next
 * rows on once pruned.  state_log takes a row a step, most of a page each,
 * and a fold deletes them all (an interval join's step writes and deletes
 * a page-size row for about every hundred rows it keeps): an insert never
 * prunes the page it looks at, so until vacuum came by every step would
 * extend the table by a page for each, a system call and a new buffer.  A
 * page is only a hint: the insert checks its room, and goes elsewhere if
 * another took it.
 */
#define FREED_PAGES 4096

static struct
{
	RelFileNode node;			/* the table's file: a rewrite forgets them */
	int			n;
	int			next;			/* the oldest, once the ring is full */
	BlockNumber pages[FREED_PAGES];
}			freed;

/* Forgets the oldest page deleted from. */
static void
freed_pop(void)
{
	freed.next = (freed.next + 1) % FREED_PAGES;
	freed.n--;
}

/* Row "tid" of rel was deleted: its page will have room once pruned. */
void
heap_rows_deleted(Relation rel, ItemPointer tid)
{
	BlockNumber blk = ItemPointerGetBlockNumber(tid);

	if (!RelFileNodeEquals(freed.node, rel->rd_node))
	{
		freed.node = rel->rd_node;
		freed.n = freed.next = 0;
	}
	if (freed.n > 0 && freed.pages[(freed.next + freed.n - 1) % FREED_PAGES] == blk)
		return;
	/* a full ring gives up its oldest */
	if (freed.n == FREED_PAGES)
		freed_pop();
	freed.pages[(freed.next + freed.n++) % FREED_PAGES] = blk;
}

/*
 * Prunes the oldest page deleted from, once no snapshot can see its dead
 * rows, and points rel's next insert there if it has room for "len"
 * bytes.  A page whose rows may still be seen stays for a later call; one
 * that is pruned, or was, and still has no room is forgotten.  Not
 * heap_page_prune_opt: it prunes only a page nearly full, and a page that
 * held one log row is not.  "*pages" is the caller's count of rel's pages
 * (InvalidBlockNumber: none yet), kept for its next calls: while the caller
 * holds its lock only inserts, which add pages, can change it (vacuum
 * truncates under a stronger lock), so a page below it is still there.
 */
void
heap_rows_reuse(Relation rel, Size len, BlockNumber *pages)
{
	BlockNumber blk;
	Buffer		buf;
	Page		page;
	TransactionId prune_xid;
	Size		room;

	if (freed.n == 0 || !RelFileNodeEquals(freed.node, rel->rd_node))
		return;
	blk = freed.pages[freed.next];
	if (*pages == InvalidBlockNumber || blk >= *pages)
		*pages = RelationGetNumberOfBlocks(rel);
	if (blk >= *pages)
	{
		/* vacuum truncated it */
		freed_pop();
		return;
	}
	buf = ReadBuffer(rel, blk);
	page = BufferGetPage(buf);
	prune_xid = ((PageHeader) page)->pd_prune_xid;
	if (TransactionIdIsValid(prune_xid))
	{
		GlobalVisState *vistest = GlobalVisTestFor(rel);
		int			ndeleted;
		int			nnewlpdead;

		if (!GlobalVisTestIsRemovableXid(vistest, prune_xid) ||
			!ConditionalLockBufferForCleanup(buf))
		{
			ReleaseBuffer(buf);
			return;
		}
		ndeleted = heap_page_prune(rel, buf, InvalidTransactionId, vistest,
								   InvalidTransactionId, 0, &nnewlpdead, NULL);
		pgstat_update_heap_dead_tuples(rel, ndeleted - nnewlpdead);
	}
	else
		LockBuffer(buf, BUFFER_LOCK_SHARE);
	room = PageGetHeapFreeSpace(page);
	UnlockReleaseBuffer(buf);
	if (room >= MAXALIGN(len))
		RelationSetTargetBlock(rel, blk);
	freed_pop();
}
