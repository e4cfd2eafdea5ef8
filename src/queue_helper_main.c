/*
 * queue_helper_main.c
 *		The queue helper process: reads a tick's rows with the queue scan
 *		(queue_reader.c) and sends them to the step that started it, in
 *		batches through its shared-memory queue (queue_helper.c is the
 *		step's side, where the design is described).
 */
#include "compat.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/shm_mq.h"
#include "storage/shm_toc.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/datum.h"

#include "owner.h"
#include "queue_helper.h"
#include "queue_helper_int.h"
#include "queue_reader.h"

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
