/*
 * queue.c
 *		Reclaiming the storage of consumed queue rows.
 *
 * Queue rows are never deleted one by one: that would leave the table to
 * vacuum, and a queue written at hundreds of thousands of rows a second
 * outruns autovacuum.  Instead, once a queue grows past
 * windowing.queue_truncate_size, the worker empties it in bulk, like PgQ's
 * rotation: it takes the table's ACCESS EXCLUSIVE lock, lets every
 * pipeline of the queue consume what is committed (no producer can add a
 * row meanwhile), and TRUNCATEs it, all in one transaction.  A lock
 * request that waits holds back every producer that comes after it, for
 * as long as it waits; so the worker takes the lock only at a moment when
 * no producer holds the table, trying again soon after (worker.c), until
 * the queue is twice that size: then it waits in line, at most
 * windowing.queue_lock_timeout, which bounds how long producers stall.  A
 * queue with a paused or failed pipeline is left alone, since that pipeline
 * has yet to read its rows, and so is a queue whose owner chose to keep its
 * rows (retention 'keep', held by the queue's trigger).  So is a queue one
 * of whose pipelines another session holds, or has one of its tables
 * locked (pipeline_locked_table), until that lock goes: the worker would
 * wait for it (for a table, with the queue locked and every producer
 * behind it).
 *
 * Steps run as each pipeline's owner and the TRUNCATE as the table's
 * owner, so no user code (a TRUNCATE trigger, an aggregate) ever runs with
 * the worker's superuser rights.
 */
#include "compat.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "catalog.h"
#include "distributed.h"
#include "owner.h"
#include "pipeline.h"
#include "plans.h"
#include "queue.h"

int			queue_truncate_size = 16384;	/* kB */
int			queue_lock_timeout = 100;	/* ms */

/* The parts of a queue's pipelines; false if one of them is not running. */
static bool
running_readers(Oid source, List **readers)
{
	bool		all_running;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	all_running = catalog_queue_readers(source, TopTransactionContext, readers);
	SPI_finish();
	return all_running && *readers != NIL;
}

/* Empties the queue as its owner: its TRUNCATE triggers are that owner's code. */
static void
truncate_queue(Oid source, const char *qualified)
{
	int			nest;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	nest = distributed_shard_changes_begin();
	if (owner_execute(owner_of_table(source), psprintf("TRUNCATE %s", qualified),
					  0, NULL, NULL) != SPI_OK_UTILITY)
		elog(ERROR, "could not truncate %s", qualified);
	distributed_shard_changes_end(nest);
	SPI_finish();
}

/*
 * Waits at most queue_lock_timeout for the queue's ACCESS EXCLUSIVE lock;
 * false if producers held it longer.  The wait runs in a subtransaction so
 * a timeout only ends the attempt.
 */
static bool
wait_for_queue(const char *qualified)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	char	   *timeout = psprintf("%d", queue_lock_timeout);
	bool		locked = true;
	int			nest;

	BeginInternalSubTransaction(NULL);
	PG_TRY();
	{
		(void) set_config_option("lock_timeout", timeout, PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		nest = distributed_shard_changes_begin();
		if (SPI_execute(psprintf("LOCK TABLE %s IN ACCESS EXCLUSIVE MODE", qualified),
						false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not lock %s", qualified);
		distributed_shard_changes_end(nest);
		SPI_finish();
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *err;

		MemoryContextSwitchTo(cxt);
		err = CopyErrorData();
		if (err->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE)
			PG_RE_THROW();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		locked = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return locked;
}

/* Are the queue's rows to be deleted once read (retention 'consume')? */
static bool
consumed_queue(Oid source)
{
	bool		consumed;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	consumed = catalog_queue_consumes(source);
	SPI_finish();
	return consumed;
}

/* Has every pipeline of the queue consumed every row in it? */
static bool
all_consumed(Oid source, const char *qualified)
{
	bool		consumed;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	consumed = catalog_queue_consumed(source, qualified);
	SPI_finish();
	return consumed;
}

/* Does the queue's heap take at least "kb" kilobytes? */
static bool
queue_at_least(Oid source, int64 kb)
{
	Oid			argtypes[2] = {OIDOID, INT8OID};
	Datum		args[2] = {ObjectIdGetDatum(source), Int64GetDatum(kb)};
	bool		isnull;
	bool		big = false;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (plans_execute("SELECT pg_catalog.pg_relation_size($1::pg_catalog.regclass) "
					   "OPERATOR(pg_catalog.>=) ($2 OPERATOR(pg_catalog.*) 1024)",
					   2, argtypes, args, NULL, true, 1) == SPI_OK_SELECT &&
		SPI_processed == 1)
		big = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return big;
}

/*
 * Is the queue big enough to be worth emptying?  Not now if another session
 * holds or awaits its ACCESS EXCLUSIVE lock (ALTER TABLE, LOCK TABLE): the
 * worker would wait for it to read the queue's size, and every pipeline
 * with it.
 */
bool
queue_needs_reclaim(Oid source)
{
	return ConditionalLockRelationOid(source, AccessShareLock) &&
		queue_at_least(source, queue_truncate_size);
}

/*
 * Takes the locks the readers' steps take on their tables (result and late
 * tables, a join's other queue), if no session holds or awaits a
 * conflicting one (pipeline_locked_table): else the steps would wait for
 * them with the queue locked, and every producer with them.  Not on the
 * queue "source", which the reclaim locks itself.
 */
static bool
readers_tables_free(List *readers, Oid source)
{
	ListCell   *lc;
	bool		all_free = true;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	foreach(lc, readers)
	{
		PipelineRunning running = {0};

		(void) catalog_owner_if_running(lfirst(lc), &running);
		if (running.source == source)
			running.source = InvalidOid;
		if (running.right_source == source)
			running.right_source = InvalidOid;
		if (OidIsValid(pipeline_locked_table(&running)))
		{
			all_free = false;
			break;
		}
	}
	SPI_finish();
	return all_free;
}

/*
 * Empties queue "source" if its rows are to be consumed, it has grown past
 * queue_truncate_size and every pipeline reading it can consume it now,
 * in the caller's transaction.  While a pipeline steps, *stepping names
 * it, so that the caller can record an error of the step as that
 * pipeline's.
 */
QueueReclaim
queue_reclaim(Oid source, const PipelinePart *volatile *stepping)
{
	char	   *name = get_rel_name(source);
	char	   *qualified;
	List	   *readers = NIL;
	ListCell   *lc;

	if (name == NULL || !running_readers(source, &readers))
		return QUEUE_NOT_READY;
	qualified = quote_qualified_identifier(get_namespace_name(get_rel_namespace(source)), name);
	/*
	 * Pipelines first, in order of name and part, as a process() call would
	 * take them; none that a session holds (lock_if_running in worker.c).
	 */
	foreach(lc, readers)
	{
		PipelinePart *p = lfirst(lc);

		if (!pipeline_try_lock(p->name, p->part))
			return QUEUE_NOT_READY;
	}
	if (!readers_tables_free(readers, source))
		return QUEUE_NOT_READY;
	if (!ConditionalLockRelationOid(source, AccessExclusiveLock) &&
		!(queue_at_least(source, 2 * (int64) queue_truncate_size) && wait_for_queue(qualified)))
		return QUEUE_BUSY;
	/* under the lock, a change of retention is over: it shows now */
	if (!consumed_queue(source))
		return QUEUE_NOT_READY;
	foreach(lc, readers)
	{
		PipelinePart *reader = lfirst(lc);
		bool		more;

		/*
		 * A step may end early at its memory budget: until none leaves rows.
		 * Producers wait while the lock is held, so no step more than that.
		 */
		*stepping = reader;
		do
			(void) pipeline_step(reader, 0, 0, true, &more);
		while (more);
		*stepping = NULL;
	}
	if (!all_consumed(source, qualified))
		elog(ERROR, "queue %s still has rows to consume after its pipelines caught up",
			 qualified);
	truncate_queue(source, qualified);
	return QUEUE_EMPTIED;
}
