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
 */
#include "compat.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shm_mq.h"
#include "storage/shm_toc.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"

#include "launcher.h"
#include "owner.h"
#include "queue_helper.h"
#include "queue_reader.h"

#define HELPER_MAGIC 0x57494e48
#define HELPER_KEY_SHARED 1
#define HELPER_KEY_QUEUE 2
#define HELPER_KEY_COLUMNS 3
#define HELPER_QUEUE_BYTES (4 * 1024 * 1024)
#define HELPER_BATCH_BYTES (64 * 1024)

int			read_helper_rows = 1000000;

/* What the step tells its helper. */
typedef struct HelperShared
{
	PGPROC	   *leader;			/* the step's process, leading its lock group */
	int			leader_pid;
	Oid			database;
	Oid			user;
	Oid			source;
	Oid			index;
	int64		after_seq;
	int			nvalues;		/* columns sent (HELPER_KEY_COLUMNS); 0: rows */
	Size		hi_len;
	Size		lo_len;			/* 0: no tick_lo */
	char		ticks[FLEXIBLE_ARRAY_MEMBER];	/* tick_hi, then tick_lo */
} HelperShared;

/*
 * What leads each row in a batch of rows; the row's bytes follow, aligned.
 * In a batch of values, a row is its length (uint32), its nulls, then its
 * Datums, aligned; a by-reference one is the offset in the row of its
 * bytes, which follow.
 */
typedef struct RowHeader
{
	uint32		len;
	ItemPointerData self;
} RowHeader;

#define BATCH_HEAD MAXALIGN(sizeof(int64))
#define ROW_HEAD MAXALIGN(sizeof(RowHeader))
#define VALUES_AT(n) MAXALIGN(sizeof(uint32) + (n))

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

/* Which of the values of columns attnos (0: a NULL) are by reference. */
static bool *
by_reference(TupleDesc desc, const AttrNumber *attnos, int n)
{
	bool	   *byref = palloc(sizeof(bool) * Max(n, 1));

	for (int i = 0; i < n; i++)
		byref[i] = attnos[i] > 0 && !TupleDescAttr(desc, attnos[i] - 1)->attbyval;
	return byref;
}

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
	windowing_bgworker_init(&bgw, "windowing_queue_helper_main", "windowing queue helper",
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

/* Adds a row to the batch: its header, then its bytes, each padded. */
static void
append_row(StringInfo buf, HeapTuple tuple)
{
	RowHeader	rh = {tuple->t_len, tuple->t_self};
	int			need = ROW_HEAD + MAXALIGN(tuple->t_len);
	char	   *to;

	enlargeStringInfo(buf, need);
	to = buf->data + buf->len;
	memset(to, 0, need);
	memcpy(to, &rh, sizeof(rh));
	memcpy(to + ROW_HEAD, tuple->t_data, tuple->t_len);
	buf->len += need;
}

/*
 * Adds a row's values to the batch: its length, nulls and Datums, then the
 * bytes of its by-reference values, each aligned.
 */
static void
append_values(StringInfo buf, TupleDesc desc, const AttrNumber *attnos,
			  const bool *byref, int n, const Datum *vals, const bool *nulls)
{
	int			start = buf->len;
	int			head = VALUES_AT(n) + sizeof(Datum) * n;
	uint32		len;

	enlargeStringInfo(buf, head);
	memset(buf->data + start, 0, head);
	memcpy(buf->data + start + sizeof(len), nulls, n);
	buf->len += head;
	for (int i = 0; i < n; i++)
	{
		Datum		d = vals[i];

		if (byref[i] && !nulls[i])
		{
			Size		size = datumGetSize(d, false, TupleDescAttr(desc, attnos[i] - 1)->attlen);

			enlargeStringInfo(buf, MAXALIGN(size));
			memset(buf->data + buf->len, 0, MAXALIGN(size));
			memcpy(buf->data + buf->len, DatumGetPointer(d), size);
			d = (Datum) (buf->len - start);
			buf->len += MAXALIGN(size);
		}
		memcpy(buf->data + start + VALUES_AT(n) + sizeof(Datum) * i, &d, sizeof(Datum));
	}
	len = buf->len - start;
	memcpy(buf->data + start, &len, sizeof(len));
}

/* Sends the batch of n rows in buf and starts the next; false if the step left. */
static bool
send_batch(shm_mq_handle *mq, StringInfo buf, int64 n)
{
	bool		sent;

	memcpy(buf->data, &n, sizeof(int64));
	sent = shm_mq_send(mq, buf->len, buf->data, false, true) == SHM_MQ_SUCCESS;
	buf->len = BATCH_HEAD;
	return sent;
}

/* Adds the tick's next row, or its values, to the batch; false at the end. */
static bool
append_next(QueueScan *qs, StringInfo batch, TupleDesc desc, const AttrNumber *attnos,
			const bool *byref, int nvalues, Datum *vals, bool *nulls)
{
	HeapTuple	tuple;

	if (nvalues > 0)
	{
		if (!queue_scan_next(qs, vals, nulls))
			return false;
		append_values(batch, desc, attnos, byref, nvalues, vals, nulls);
		return true;
	}
	if ((tuple = queue_scan_next_tuple(qs)) == NULL)
		return false;
	append_row(batch, tuple);
	return true;
}

/* The helper's work: every row of the tick, then the end of it. */
static void
send_tick(HelperShared *sh, const AttrNumber *attnos, shm_mq_handle *mq)
{
	Datum		tick_hi = PointerGetDatum(sh->ticks);
	Datum		tick_lo = sh->lo_len > 0 ? PointerGetDatum(sh->ticks + sh->hi_len) : (Datum) 0;
	QueueScan  *qs = queue_scan_begin_rows(sh->source, sh->index, tick_hi, tick_lo,
										   sh->after_seq, attnos, sh->nvalues);
	TupleDesc	desc = queue_scan_desc(qs);
	bool	   *byref = by_reference(desc, attnos, sh->nvalues);
	Datum	   *vals = palloc(sizeof(Datum) * Max(sh->nvalues, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(sh->nvalues, 1));
	StringInfoData batch;
	int64		n = 0;
	bool		sending = true;

	initStringInfo(&batch);
	batch.len = BATCH_HEAD;
	while (sending &&
		   append_next(qs, &batch, desc, attnos, byref, sh->nvalues, vals, nulls))
	{
		n++;
		if (batch.len >= HELPER_BATCH_BYTES)
		{
			sending = send_batch(mq, &batch, n);
			n = 0;
		}
	}
	if (sending && n > 0)
		sending = send_batch(mq, &batch, n);
	if (sending)
		(void) send_batch(mq, &batch, 0);
	queue_scan_end(qs);
}

void
windowing_queue_helper_main(Datum arg)
{
	dsm_segment *seg;
	shm_toc    *toc;
	HelperShared *sh;
	shm_mq	   *mq;
	OwnerContext as_user;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	seg = dsm_attach(DatumGetUInt32(arg));
	if (seg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not map the queue helper's shared memory"),
				 errdetail("The step that started the helper has ended.")));
	toc = shm_toc_attach(HELPER_MAGIC, dsm_segment_address(seg));
	if (toc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("invalid magic number in the queue helper's shared memory")));
	sh = shm_toc_lookup(toc, HELPER_KEY_SHARED, false);
	mq = shm_toc_lookup(toc, HELPER_KEY_QUEUE, false);
	shm_mq_set_sender(mq, MyProc);
	/* before any lock is taken, connecting included */
	if (!BecomeLockGroupMember(sh->leader, sh->leader_pid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the step that started the queue helper has ended")));

	/* as the pipeline worker does: connect, then become the step's user */
	BackgroundWorkerInitializeConnectionByOid(sh->database, InvalidOid,
											  BGWORKER_BYPASS_ALLOWCONN);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	owner_enter(&as_user, sh->user);
	pgstat_report_activity(STATE_RUNNING, "reading a tick of a queue");
	send_tick(sh, shm_toc_lookup(toc, HELPER_KEY_COLUMNS, false),
			  shm_mq_attach(mq, seg, NULL));
	owner_leave(&as_user);
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	dsm_detach(seg);
}
