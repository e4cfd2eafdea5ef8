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
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "launcher.h"
#include "queue_helper.h"
#include "queue_reader.h"

#define HELPER_MAGIC 0x57494e48
#define HELPER_KEY_SHARED 1
#define HELPER_KEY_QUEUE 2
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
	Size		hi_len;
	Size		lo_len;			/* 0: no tick_lo */
	char		ticks[FLEXIBLE_ARRAY_MEMBER];	/* tick_hi, then tick_lo */
} HelperShared;

/* What leads each row in a batch; the row's bytes follow, aligned. */
typedef struct RowHeader
{
	uint32		len;
	ItemPointerData self;
} RowHeader;

#define BATCH_HEAD MAXALIGN(sizeof(int64))
#define ROW_HEAD MAXALIGN(sizeof(RowHeader))

struct QueueHelper
{
	dsm_segment *seg;
	shm_mq_handle *mq;
	BackgroundWorkerHandle *worker;
	Oid			source;
	char	   *next;			/* the next row of the batch received */
	int64		left;			/* rows of that batch not given yet */
	bool		ended;			/* the helper sent the tick's end */
};

/* A segment holding what the helper is told and the queue of its rows. */
static dsm_segment *
helper_segment(Oid source, Oid index, Datum tick_hi, Datum tick_lo, int64 after_seq,
			   shm_mq **mq)
{
	Size		hi_len = VARSIZE_ANY(DatumGetPointer(tick_hi));
	Size		lo_len = tick_lo ? VARSIZE_ANY(DatumGetPointer(tick_lo)) : 0;
	Size		shared_size = offsetof(HelperShared, ticks) + hi_len + lo_len;
	shm_toc_estimator e;
	dsm_segment *seg;
	shm_toc    *toc;
	HelperShared *sh;

	shm_toc_initialize_estimator(&e);
	shm_toc_estimate_chunk(&e, shared_size);
	shm_toc_estimate_chunk(&e, HELPER_QUEUE_BYTES);
	shm_toc_estimate_keys(&e, 2);
	seg = dsm_create(shm_toc_estimate(&e), DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (seg == NULL)
		return NULL;
	toc = shm_toc_create(HELPER_MAGIC, dsm_segment_address(seg), shm_toc_estimate(&e));
	sh = shm_toc_allocate(toc, shared_size);
	sh->leader = MyProc;
	sh->leader_pid = MyProcPid;
	sh->database = MyDatabaseId;
	sh->user = GetUserId();
	sh->source = source;
	sh->index = index;
	sh->after_seq = after_seq;
	sh->hi_len = hi_len;
	sh->lo_len = lo_len;
	memcpy(sh->ticks, DatumGetPointer(tick_hi), hi_len);
	if (lo_len > 0)
		memcpy(sh->ticks + hi_len, DatumGetPointer(tick_lo), lo_len);
	shm_toc_insert(toc, HELPER_KEY_SHARED, sh);
	*mq = shm_mq_create(shm_toc_allocate(toc, HELPER_QUEUE_BYTES), HELPER_QUEUE_BYTES);
	shm_toc_insert(toc, HELPER_KEY_QUEUE, *mq);
	shm_mq_set_receiver(*mq, MyProc);
	return seg;
}

/*
 * A helper reading the rows of queue "source" in the tick past after_seq,
 * or NULL if there is no free worker slot or shared memory for one; the
 * caller then reads them itself.
 */
QueueHelper *
queue_helper_start(Oid source, Oid index, Datum tick_hi, Datum tick_lo, int64 after_seq)
{
	BackgroundWorker bgw;
	QueueHelper *h = palloc0(sizeof(QueueHelper));
	shm_mq	   *mq;

	h->seg = helper_segment(source, index, tick_hi, tick_lo, after_seq, &mq);
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
	h->source = source;
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

/* The helper's work: every row of the tick, then the end of it. */
static void
send_tick(HelperShared *sh, shm_mq_handle *mq)
{
	Datum		tick_hi = PointerGetDatum(sh->ticks);
	Datum		tick_lo = sh->lo_len > 0 ? PointerGetDatum(sh->ticks + sh->hi_len) : (Datum) 0;
	QueueScan  *qs = queue_scan_begin_rows(sh->source, sh->index, tick_hi, tick_lo,
										   sh->after_seq);
	StringInfoData batch;
	HeapTuple	tuple;
	int64		n = 0;
	bool		sending = true;

	initStringInfo(&batch);
	batch.len = BATCH_HEAD;
	while (sending && (tuple = queue_scan_next_tuple(qs)) != NULL)
	{
		append_row(&batch, tuple);
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
	SetUserIdAndSecContext(sh->user, SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, "reading a tick of a queue");
	send_tick(sh, shm_mq_attach(mq, seg, NULL));
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	dsm_detach(seg);
}
