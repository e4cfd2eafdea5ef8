/*
 * queue_helper.c
 *		A second process that reads a big tick's rows for a step.
 *
 * Reading the queue in arrival order, through its windowing_seq index, is
 * about half of a big step.  When a step expects many rows
 * (windowing.read_helper_rows), a dynamic background worker runs that scan
 * (queue_reader.c) and passes the tick's rows, as they are on their heap
 * pages, through a shared-memory queue, while the step works on the rows
 * before them.  The step gets the rows it would have read itself, in the
 * same order: the helper keeps those committed in the tick, and its
 * snapshot, taken later than the step's, sees all of them.  Parallel query
 * has workers for this, but a process in parallel mode may not write, and a
 * step writes fired windows as it goes.
 *
 * Where the aggregates' inputs are columns of the queue, the helper sends
 * the columns the step reads, and the step takes them as they come; else
 * it sends the rows, and the step takes their columns and computes the
 * inputs itself.
 *
 * The helper runs in the step's database as the step's user, and joins the
 * step's lock group, as parallel workers do: the step's own locks never
 * hold it up, and a lock someone waits for behind the step does not either
 * (it would wait for the step, which waits for the helper).  Rows come in
 * batches, each led by its number of rows; a batch of none ends the tick.
 * A step that finds no free worker slot reads for itself; one whose helper
 * stops before the end of the tick fails, and so does a helper whose step
 * went away.
 *
 * This file is the step's side; the helper process is queue_helper_main.c,
 * and queue_helper_int.h what the two share.
 */
#include "compat.h"

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/proc.h"
#include "storage/shm_mq.h"
#include "storage/shm_toc.h"
#include "utils/rel.h"

#include "bgworker.h"
#include "queue_helper.h"
#include "queue_helper_int.h"

int			queue_helper_min_rows = 1000000;

struct QueueHelper
{
	dsm_segment *seg;
	shm_mq_handle *mq;
	BackgroundWorkerHandle *worker;
	Oid			source;
	int			nvalues;		/* 0: it sends rows */
	bool	   *byref;			/* each value's */
	char	   *next;			/* the next row of the batch received */
	int64		left;			/* rows of that batch not given yet */
	bool		ended;			/* the helper sent the tick's end */
};

/* A segment holding what the helper is told and the queue of its rows. */
static dsm_segment *
helper_segment(Relation heap, Relation index, Datum tick_hi, Datum tick_lo,
			   int64 after_seq, const AttrNumber *attnos, int nvalues, shm_mq **mq)
{
	Size		hi_len = VARSIZE_ANY(DatumGetPointer(tick_hi));
	Size		lo_len = tick_lo ? VARSIZE_ANY(DatumGetPointer(tick_lo)) : 0;
	Size		shared_size = offsetof(HelperShared, ticks) + hi_len + lo_len;
	Size		columns_size = sizeof(AttrNumber) * Max(nvalues, 1);
	shm_toc_estimator e;
	dsm_segment *seg;
	shm_toc    *toc;
	HelperShared *sh;
	AttrNumber *columns;

	shm_toc_initialize_estimator(&e);
	shm_toc_estimate_chunk(&e, shared_size);
	shm_toc_estimate_chunk(&e, columns_size);
	shm_toc_estimate_chunk(&e, HELPER_QUEUE_BYTES);
	shm_toc_estimate_keys(&e, 3);
	seg = dsm_create(shm_toc_estimate(&e), DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (seg == NULL)
		return NULL;
	toc = shm_toc_create(HELPER_MAGIC, dsm_segment_address(seg), shm_toc_estimate(&e));
	sh = shm_toc_allocate(toc, shared_size);
	sh->leader = MyProc;
	sh->leader_pid = MyProcPid;
	sh->database = MyDatabaseId;
	sh->user = GetUserId();
	sh->source = RelationGetRelid(heap);
	sh->index = RelationGetRelid(index);
	sh->after_seq = after_seq;
	sh->nvalues = nvalues;
	sh->hi_len = hi_len;
	sh->lo_len = lo_len;
	memcpy(sh->ticks, DatumGetPointer(tick_hi), hi_len);
	if (lo_len > 0)
		memcpy(sh->ticks + hi_len, DatumGetPointer(tick_lo), lo_len);
	shm_toc_insert(toc, HELPER_KEY_SHARED, sh);
	columns = shm_toc_allocate(toc, columns_size);
	if (nvalues > 0)
		memcpy(columns, attnos, sizeof(AttrNumber) * nvalues);
	shm_toc_insert(toc, HELPER_KEY_COLUMNS, columns);
	*mq = shm_mq_create(shm_toc_allocate(toc, HELPER_QUEUE_BYTES), HELPER_QUEUE_BYTES);
	shm_toc_insert(toc, HELPER_KEY_QUEUE, *mq);
	shm_mq_set_receiver(*mq, MyProc);
	return seg;
}

/*
 * A helper reading the rows of the queue in the tick past after_seq, or
 * NULL if there is no free worker slot or shared memory for one; the caller
 * then reads them itself.  With nvalues > 0 it sends each row's values of
 * columns attnos (0: a NULL), else the rows.
 */
QueueHelper *
queue_helper_start(Relation heap, Relation index, Datum tick_hi, Datum tick_lo,
				   int64 after_seq, const AttrNumber *attnos, int nvalues)
{
	BackgroundWorker bgw;
	QueueHelper *h = palloc0(sizeof(QueueHelper));
	shm_mq	   *mq;

	h->seg = helper_segment(heap, index, tick_hi, tick_lo, after_seq, attnos, nvalues, &mq);
	if (h->seg == NULL)
		return NULL;
	BecomeLockGroupLeader();
	bgworker_init(&bgw, "windowing_queue_helper_main", "windowing queue helper",
							BGW_NEVER_RESTART);
	bgw.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(h->seg));
	bgw.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&bgw, &h->worker))
	{
		dsm_detach(h->seg);
		return NULL;
	}

	/*
	 * Not waiting for the helper to start: it may be done (its rows in the
	 * queue) by then.  With the handle, a helper that stops before it
	 * attaches ends a receive.
	 */
	h->mq = shm_mq_attach(mq, h->seg, h->worker);
	h->source = RelationGetRelid(heap);
	h->nvalues = nvalues;
	h->byref = by_reference(RelationGetDescr(heap), attnos, nvalues);
	return h;
}

/* Waits for the helper's next batch; false once it ended the tick. */
static bool
receive_batch(QueueHelper *h)
{
	Size		nbytes;
	void	   *data;

	while (h->left == 0 && !h->ended)
	{
		if (shm_mq_receive(h->mq, &nbytes, &data, false) != SHM_MQ_SUCCESS)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("queue helper process stopped before the end of the tick"),
					 errhint("The server log has the helper's error, if it had one.")));
		memcpy(&h->left, data, sizeof(int64));
		h->ended = h->left == 0;
		h->next = (char *) data + BATCH_HEAD;
	}
	return h->left > 0;
}

/*
 * The tick's next row into "tuple", pointing into the batch received; it
 * stays valid until the next call.  False at the end of the tick.
 */
bool
queue_helper_next(QueueHelper *h, HeapTuple tuple)
{
	RowHeader	rh;

	if (!receive_batch(h))
		return false;
	memcpy(&rh, h->next, sizeof(rh));
	tuple->t_len = rh.len;
	tuple->t_self = rh.self;
	tuple->t_tableOid = h->source;
	tuple->t_data = (HeapTupleHeader) (h->next + ROW_HEAD);
	h->next += ROW_HEAD + MAXALIGN(rh.len);
	h->left--;
	return true;
}

/*
 * The tick's next row's values into vals and nulls, by-reference ones
 * pointing into the batch received; they stay valid until the next call.
 * False at the end of the tick.
 */
bool
queue_helper_next_values(QueueHelper *h, Datum *vals, bool *nulls)
{
	uint32		len;

	if (!receive_batch(h))
		return false;
	memcpy(&len, h->next, sizeof(len));
	memcpy(nulls, h->next + sizeof(len), h->nvalues);
	memcpy(vals, h->next + VALUES_AT(h->nvalues), sizeof(Datum) * h->nvalues);
	for (int i = 0; i < h->nvalues; i++)
		if (h->byref[i] && !nulls[i])
			vals[i] = PointerGetDatum(h->next + vals[i]);
	h->next += len;
	h->left--;
	return true;
}

/* Lets the helper go: one still sending finds the queue detached and stops. */
void
queue_helper_end(QueueHelper *h)
{
	shm_mq_detach(h->mq);
	dsm_detach(h->seg);
	/* free its worker slot for the next step's helper */
	if (h->ended)
		(void) WaitForBackgroundWorkerShutdown(h->worker);
	pfree(h->worker);
	pfree(h->byref);
	pfree(h);
}
