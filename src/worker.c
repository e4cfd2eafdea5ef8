/*
 * worker.c
 *		Steps the running pipelines of one database, each as the pipeline's
 *		owner.
 *
 * The launcher starts this worker when a database may have work.  It
 * connects as the bootstrap superuser and, round after round, lists the
 * running pipelines and runs one step of each, switched to the pipeline's
 * owner as a security-restricted operation (as VACUUM and REFRESH
 * MATERIALIZED VIEW run table owners' code), with settings changes undone
 * after the step, so an owner's code can neither take the superuser's
 * identity nor leave anything behind for the next owner's step.  The
 * worker's own SQL qualifies every operator and runs with search_path set
 * to pg_catalog, so that no ALTER DATABASE ... SET can redirect it, and its
 * transactions are READ COMMITTED and read-write, which steps need,
 * whatever the database's or role's default_transaction_isolation and
 * default_transaction_read_only; nor does a lock_timeout of theirs cut
 * short the few waits the worker has (for the pipeline catalog, which DDL
 * on the extension holds), which would make it exit on the error.  A
 * round waits for a commit into a queue to wake the worker (or for
 * windowing.poll_interval), unless a step left rows it saw committed.
 *
 * The steps of a round share a transaction until it has run for
 * windowing.worker_batch_time (a step that joins it stops at that time),
 * so that a trickle of small commits into a queue read by several
 * pipelines pays one commit, not one per pipeline; a step's results wait
 * at most that long for the commit.  Each step still sees what committed
 * before it began, as each statement of a READ COMMITTED transaction
 * does, through a snapshot of its own.  A pipeline whose last steps failed
 * steps in a transaction of its own, so that its errors roll back no
 * other pipeline's step.  A step never waits for a lock on its pipeline or
 * its tables: a pipeline that another session holds (lock_if_running), or
 * whose queue (a join's two), result or late table (a join's state
 * tables) another session has locked or is waiting to lock
 * (pipeline_locked_table), is left for a later round, and the other
 * pipelines go on.
 *
 * The worker is crash-only: a step that fails is rolled back, its error is
 * recorded on the pipeline in a transaction of its own, and the worker
 * exits for the launcher to restart after a back-off.  Everything a step
 * does is committed or never happened, so the next worker resumes exactly
 * where the last commit left off.  Five failures in a row mark a pipeline
 * failed; it is then no longer run, instead of failing forever.
 *
 * A database has a worker for each part of its pipeline of most parts:
 * worker k steps part k of every pipeline that has one (worker 0 tells the
 * launcher how many it takes), and only worker 0 empties queues.
 *
 * A worker also leaves on purpose.  When its database has no extension,
 * or nothing to run (at once if it never had, else after ten quiet seconds
 * so a pipeline paused and resumed goes on in the same process), it leaves
 * for the launcher to restart when woken.  And when another session waits
 * to drop, rename, move or copy the database: those commands wait only five
 * seconds for other sessions to leave and ask only autovacuum to, so a
 * connected worker would make them fail.  Each holds a lock on the database
 * that conflicts with the one a connecting session takes; the worker tries
 * that lock before every step, not only every round, since a round of
 * long steps outlasts the five seconds, and leaves if it is held.  Each of
 * its transactions also locks the pipeline catalog first, so that a DROP
 * EXTENSION waits for the step under way and the worker then finds no
 * extension and leaves, instead of failing on a table dropped under it.
 */
#include "compat.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_database.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "distributed.h"
#include "launcher.h"
#include "pipeline.h"
#include "queue.h"
#include "version.h"
#include "worker.h"

#define QUIET_PERIOD_MS		10000
/*
 * How often at most the worker looks at the sizes of the queues it
 * consumed: a queue grows past windowing.queue_truncate_size over many
 * steps, and the look costs a transaction and a query per queue, which a
 * trickle of one-row commits would pay at every step.  A queue whose
 * producers held its lock is tried again sooner: producers pause between
 * transactions, and the worker takes the lock only then (queue.c).
 */
#define RECLAIM_CHECK_MS	1000
#define RECLAIM_RETRY_MS	20
/*
 * How often at most the first worker looks for shards' pipelines to make
 * or drop, and exchanges their watermarks with the other nodes (a query on
 * each node); after a failed exchange (a node down), a second.
 */
#define SHARDS_CHECK_MS		1000
#define EXCHANGE_MS			100
/*
 * Rows per step, and windowing.worker_step_time: a backlog is consumed in
 * steps of at most this size and time, so that a step stays short (a DROP
 * DATABASE waits only five seconds for the worker to notice it, and the
 * database's other pipelines wait for their turn) and its memory bounded.
 * Results do not depend on them.
 */
#define STEP_ROWS			100000
/* A step that joins a shared transaction: join steps have no time limit. */
#define SHARED_STEP_ROWS	1000
#define MAX_FAILURES		5

int			worker_poll_interval = 100;
int			worker_step_time = 1000;	/* ms */
int			worker_round_interval = 0;	/* ms */
int			worker_batch_time = 2;	/* ms */

/* When the transaction the round's steps share began; 0: none is open. */
static TimestampTz shared_since = 0;
/* Whether a step ran in it. */
static bool shared_stepped = false;

/* Holds what one round needs; reset at the start of the next. */
static MemoryContext round_cxt = NULL;

/* Which part of each pipeline this worker steps: the database's workers take one part each. */
static int	my_part = 0;

/*
 * The pipelines held back by a lock on them or on their tables at their
 * last rounds, since when, and whether that was logged (held_back): in
 * TopMemoryContext.
 */
typedef struct HeldBack
{
	char		name[NAMEDATALEN];
	int			part;
	TimestampTz since;
	bool		logged;
	uint64		round;			/* the last round that held it back */
} HeldBack;

static List *held_back_list = NIL;
static uint64 round_number = 0;

/* How long a pipeline is held back by a lock before the worker logs it. */
#define HELD_BACK_LOG_MS 1000

static void
begin_transaction(const char *activity)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, activity);
}

/*
 * What follows sees what committed before it, as a statement in READ
 * COMMITTED does: the snapshot begin_transaction pushed was taken before
 * the transaction's locks were granted, and the steps of a shared
 * transaction follow one another.  Through an older snapshot a step would
 * miss a pipeline created while the round waited for the catalog's lock,
 * which the round's list (read as of now) names, and fail on it.  The
 * increment lets it see what the steps before it wrote.  Only that
 * snapshot is on the stack here: SPI and the steps pop what they push.
 */
static void
refresh_snapshot(void)
{
	PopActiveSnapshot();
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
}

static void
commit_transaction(void)
{
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(round_cxt);
	pgstat_report_activity(STATE_IDLE, NULL);
}

static void pg_attribute_noreturn()
leave(WorkerExit how, const char *why)
{
	elog(DEBUG1, "%s leaves: %s", MyBgworkerEntry->bgw_name, why);
	launcher_set_worker_exit(how);
	proc_exit(0);
}

/* Whether a DROP DATABASE or the like waits for the sessions to leave. */
static bool
database_claimed(void)
{
	LOCKTAG		tag;

	SET_LOCKTAG_OBJECT(tag, InvalidOid, DatabaseRelationId, MyDatabaseId, 0);
	if (LockAcquire(&tag, RowExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		return true;
	LockRelease(&tag, RowExclusiveLock, false);
	return false;
}

/*
 * The extension, at a version that has pipelines; its catalog is locked
 * until the transaction ends, so that a concurrent DROP EXTENSION waits
 * for the transaction instead of pulling the table from under its queries.
 */
static bool
lock_catalog(void)
{
	/* the table the extension was last found with: pg_extension has no cache */
	static Oid	found_with = InvalidOid;
	Oid			catalog = RangeVarGetRelid(makeRangeVar("windowing", "pipeline", -1),
										   AccessShareLock, true);

	if (!OidIsValid(catalog))
		return false;
	if (catalog != found_with)
	{
		if (!OidIsValid(get_extension_oid("windowing", true)))
			return false;
		found_with = catalog;
	}
	return true;
}

/* Reports the error being handled and rolls back; returns the error. */
static ErrorData *
take_error(void)
{
	ErrorData  *edata;

	HOLD_INTERRUPTS();
	MemoryContextSwitchTo(round_cxt);
	edata = CopyErrorData();
	EmitErrorReport();
	AbortOutOfAnyTransaction();
	shared_since = 0;
	FlushErrorState();
	RESUME_INTERRUPTS();
	return edata;
}

/*
 * With the extension at another version than the library (ALTER EXTENSION
 * windowing UPDATE not run yet) no step can run: the worker logs why and
 * leaves for the launcher's back-off, counting no failure against the
 * pipelines, whose definitions are not at fault.  The update wakes it.
 */
static void
check_version(void)
{
	PG_TRY();
	{
		version_check();
	}
	PG_CATCH();
	{
		(void) take_error();
		leave(WORKER_EXIT_FAILED, "the extension is not at the library's version");
	}
	PG_END_TRY();
}

static void
leave_if_claimed(void)
{
	if (!database_claimed())
		return;
	commit_transaction();
	leave(WORKER_EXIT_YIELD, "another session waits to drop, rename or copy the database");
}

/*
 * Every transaction of the worker that reads the pipeline catalog starts
 * here, so that the worker leaves between any two steps when the database
 * is claimed, the extension is gone or at another version.
 */
static void
begin_catalog_transaction(const char *activity)
{
	begin_transaction(activity);
	leave_if_claimed();
	if (!lock_catalog())
	{
		commit_transaction();
		leave(WORKER_EXIT_IDLE, "no extension with pipelines");
	}
	check_version();
	refresh_snapshot();
}

/*
 * The transaction the round's steps share: opened by the round's first
 * statement, joined by the steps after it while it is young.
 */
static void
begin_shared_transaction(const char *activity)
{
	if (shared_since == 0)
	{
		begin_catalog_transaction(activity);
		shared_since = GetCurrentTimestamp();
		shared_stepped = false;
		return;
	}
	pgstat_report_activity(STATE_RUNNING, activity);
	leave_if_claimed();
	refresh_snapshot();
}

static void
end_shared_transaction(void)
{
	if (shared_since == 0)
		return;
	commit_transaction();
	shared_since = 0;
}

/* Milliseconds since "from". */
static long
ms_since(TimestampTz from)
{
	long		secs;
	int			usecs;

	TimestampDifference(from, GetCurrentTimestamp(), &secs, &usecs);
	return secs * 1000 + usecs / 1000;
}

/*
 * On a Citus node, the pipelines of the shards it holds come and go with
 * their distributed pipelines, and take their watermark from all of their
 * shards (distributed.c), each in a transaction of its own.  A failure (a
 * pipeline that cannot be made, a node that does not answer) is logged
 * and tried again later, without failing the round; false then.
 */
static bool
run_distributed(void (*work) (void), const char *activity)
{
	volatile bool done = true;

	PG_TRY();
	{
		begin_catalog_transaction(activity);
		work();
		commit_transaction();
	}
	PG_CATCH();
	{
		(void) take_error();
		done = false;
	}
	PG_END_TRY();
	return done;
}

/* The distributed work of worker 0 that is due, on a server with Citus. */
static void
distributed_work(TimestampTz *synced, TimestampTz *exchanged)
{
	TimestampTz now = GetCurrentTimestamp();

	if (my_part != 0 || !distributed_citus_loaded())
		return;
	if (TimestampDifferenceExceeds(*synced, now, SHARDS_CHECK_MS))
	{
		*synced = now;
		(void) run_distributed(distributed_sync, "making the pipelines of shards");
	}
	if (TimestampDifferenceExceeds(*exchanged, now, EXCHANGE_MS))
		*exchanged = run_distributed(distributed_exchange, "exchanging the watermarks of shards")
			? now : TimestampTzPlusMilliseconds(now, SHARDS_CHECK_MS);
}

/*
 * The running pipelines' parts this worker steps (PipelinePart), in the
 * round's memory.  The database's first worker asks the launcher for a
 * worker for each part of the pipeline of most parts.
 */
static List *
running_pipelines(void)
{
	List	   *result;
	int			parts;

	begin_shared_transaction("looking for running pipelines");
	SPI_connect();
	result = catalog_running_pipelines(round_cxt, my_part, &parts);
	SPI_finish();
	if (my_part == 0)
		launcher_want_workers(parts);
	if (result == NIL)
		end_shared_transaction();
	return result;
}

static void
record_failure(const PipelinePart *p, const ErrorData *edata)
{
	int64		row;
	bool		row_known = pipeline_failed_row(&row);

	begin_catalog_transaction("recording a pipeline failure");
	SPI_connect();
	if (catalog_record_failure(p, edata, row_known, row, MAX_FAILURES))
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pipeline \"%s\" is marked failed after %d errors in a row",
						p->name, MAX_FAILURES),
				 errhint("Resume it with windowing.resume_pipeline() once the cause is fixed.")));
	SPI_finish();
	commit_transaction();
}

/*
 * Crash-only: report, roll back, record the error in a
 * transaction of its own, and exit for the launcher to restart the worker
 * after a back-off.  Carrying on could count a batch that never committed.
 */
static void pg_attribute_noreturn()
exit_after_failure(const PipelinePart *p)
{
	ErrorData  *edata;
	PipelinePart failed;

	/* the name may live in the transaction's memory */
	if (p != NULL)
	{
		failed.name = MemoryContextStrdup(round_cxt, p->name);
		failed.part = p->part;
	}
	edata = take_error();

	if (p != NULL)
		record_failure(&failed, edata);
	proc_exit(1);
}

/* After a step that consumed rows; writes only to end a streak. */
static void
clear_failures(const PipelinePart *p)
{
	SPI_connect();
	catalog_clear_failures(p);
	SPI_finish();
}

static void
step_error_context(void *arg)
{
	const PipelinePart *p = arg;

	if (p->part == 0)
		errcontext("background step of pipeline \"%s\"", p->name);
	else
		errcontext("background step of part %d of pipeline \"%s\"", p->part, p->name);
}

/*
 * Takes the pipeline's lock, if no session holds it (else *held is set),
 * and returns its owner if it is still running, else InvalidOid: a
 * pipeline dropped or paused since the round began is skipped, and from
 * here on a pause or drop waits for this step to finish.  The worker never
 * waits for that lock: a session that holds it in a transaction still open
 * (process(), alter_pipeline(), pause_pipeline()) would hold up every
 * other pipeline of the worker, and one that takes the locks of several
 * pipelines (or parts) in turn, as alter_pipeline() of two does, would
 * deadlock with the round's shared transaction.
 */
static Oid
lock_if_running(const PipelinePart *p, PipelineRunning *running, bool *held)
{
	Oid			owner;

	*held = !pipeline_try_lock(p->name, p->part);
	if (*held)
		return InvalidOid;
	SPI_connect();
	owner = catalog_owner_if_running(p, running);
	SPI_finish();
	return owner;
}

/*
 * Notes a pipeline left for a later round by a lock on table "locked"
 * (InvalidOid: on the pipeline itself): one held back for HELD_BACK_LOG_MS
 * in a row is logged once, so that a session that keeps a pipeline or its
 * table locked, which no longer shows as a worker waiting in
 * pg_stat_activity, shows in the log.
 */
static void
held_back(const PipelinePart *p, Oid locked)
{
	ListCell   *lc;
	HeldBack   *h = NULL;

	foreach(lc, held_back_list)
	{
		HeldBack   *each = lfirst(lc);

		if (each->part == p->part && strcmp(each->name, p->name) == 0)
			h = each;
	}
	if (h == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		h = palloc0(sizeof(HeldBack));
		strlcpy(h->name, p->name, NAMEDATALEN);
		h->part = p->part;
		h->since = GetCurrentTimestamp();
		held_back_list = lappend(held_back_list, h);
		MemoryContextSwitchTo(old);
	}
	h->round = round_number;
	if (!h->logged && TimestampDifferenceExceeds(h->since, GetCurrentTimestamp(), HELD_BACK_LOG_MS))
	{
		char	   *table = OidIsValid(locked) ? get_rel_name(locked) : NULL;

		h->logged = true;
		if (!OidIsValid(locked))
			ereport(LOG,
					(errmsg("pipeline \"%s\" waits for another session that holds it", p->name),
					 errdetail("The session steps, changes, pauses or drops the pipeline in a transaction still open; "
							   "the worker steps the pipeline once it ends, and its other pipelines meanwhile.")));
		/* a table dropped meanwhile: the step will say so */
		if (table == NULL)
			return;
		ereport(LOG,
				(errmsg("pipeline \"%s\" waits for a lock on table \"%s\"", p->name, table),
				 errdetail("Another session holds or awaits a lock on it that conflicts with a step's; "
						   "the worker steps the pipeline once the lock is free, and its other pipelines meanwhile.")));
	}
}

/* Forgets the pipelines this round did not hold back: stepped, paused or dropped. */
static void
held_back_prune(void)
{
	ListCell   *lc;

	foreach(lc, held_back_list)
	{
		HeldBack   *h = lfirst(lc);

		if (h->round != round_number)
		{
			held_back_list = foreach_delete_current(held_back_list, lc);
			pfree(h);
		}
	}
	round_number++;
}

/*
 * A pipeline records its owner by OID, which no dependency protects: after
 * REASSIGN OWNED or DROP OWNED the role can be dropped while the pipeline
 * stays.  Its steps would then fail on whatever permission check came
 * first; this says why.
 */
static void
check_owner_exists(const char *name, Oid owner)
{
	if (!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(owner)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("owner of pipeline \"%s\" no longer exists", name),
				 errdetail("The role with OID %u was dropped.", owner),
				 errhint("Give the pipeline to another role with windowing.alter_pipeline_owner(), or drop it.")));
}

/*
 * One step as the owner, in the round's shared transaction (or, for a
 * pipeline whose last steps failed, one of its own): the rows consumed;
 * *more is set if it left rows it has seen committed for the next step.
 */
static int64
step_pipeline(const PipelinePart *p, bool *more)
{
	ErrorContextCallback errcb;
	const char *activity = p->part == 0 ? psprintf("step of pipeline \"%s\"", p->name) :
		psprintf("step of part %d of pipeline \"%s\"", p->part, p->name);
	Oid			owner;
	PipelineRunning running = {0};
	Oid			locked;
	bool		held;
	bool		joined;
	bool		left = false;
	int64		consumed = 0;

	begin_shared_transaction(activity);
	owner = lock_if_running(p, &running, &held);
	if (running.failing && shared_stepped)
	{
		end_shared_transaction();
		begin_shared_transaction(activity);
		owner = lock_if_running(p, &running, &held);
	}
	locked = OidIsValid(owner) ? pipeline_locked_table(&running) : InvalidOid;
	if (held || OidIsValid(locked))
	{
		held_back(p, locked);
		return 0;
	}
	if (!OidIsValid(owner))
		return 0;
	joined = shared_stepped;
	PG_TRY();
	{
		errcb.callback = step_error_context;
		errcb.arg = unconstify(PipelinePart *, p);
		errcb.previous = error_context_stack;
		error_context_stack = &errcb;
		check_owner_exists(p->name, owner);
		consumed = pipeline_step(p, joined ? SHARED_STEP_ROWS : STEP_ROWS,
								 joined ? (int) Max(1, worker_batch_time - ms_since(shared_since)) :
								 worker_step_time, true, &left);
		error_context_stack = errcb.previous;
	}
	PG_CATCH();
	{
		exit_after_failure(p);
	}
	PG_END_TRY();

	if (consumed > 0 && running.failing)
		clear_failures(p);
	*more = *more || left;
	shared_stepped = true;
	if (running.failing || ms_since(shared_since) >= worker_batch_time)
		end_shared_transaction();
	return consumed;
}

/* The consumed queues of running pipelines, in the round's memory. */
static List *
running_queues(void)
{
	List	   *result;

	begin_catalog_transaction("looking for queues to reclaim");
	SPI_connect();
	result = catalog_consumed_queues(round_cxt);
	SPI_finish();
	commit_transaction();
	return result;
}

/*
 * Empties the queues that grew past windowing.queue_truncate_size, each in
 * a transaction of its own (queue.c); a failure is handled crash-only, and
 * counted against the pipeline whose step failed, if one did.  Returns
 * when to look again, in milliseconds: 0 if every queue was emptied, else
 * sooner if only producers holding a queue's lock kept it full.
 */
static int
reclaim_queues(void)
{
	volatile int again = 0;
	ListCell   *lc;

	foreach(lc, running_queues())
	{
		Oid			source = lfirst_oid(lc);
		const PipelinePart *volatile stepping = NULL;

		begin_catalog_transaction("reclaiming a queue");
		PG_TRY();
		{
			if (queue_needs_reclaim(source))
				switch (queue_reclaim(source, &stepping))
				{
					case QUEUE_EMPTIED:
						break;
					case QUEUE_BUSY:
						again = RECLAIM_RETRY_MS;
						break;
					case QUEUE_NOT_READY:
						if (again == 0)
							again = RECLAIM_CHECK_MS;
						break;
				}
		}
		PG_CATCH();
		{
			exit_after_failure(stepping);
		}
		PG_END_TRY();
		commit_transaction();
	}
	return again;
}

/*
 * Waits out windowing.worker_round_interval since the last round began,
 * whatever wakes the worker meanwhile: the commits of that time are read
 * together in the next round.
 */
static void
pace_rounds(TimestampTz *last_round)
{
	long		wait_ms = worker_round_interval - ms_since(*last_round);

	if (wait_ms > 0)
		(void) WaitLatch(NULL, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, wait_ms, PG_WAIT_EXTENSION);
	*last_round = GetCurrentTimestamp();
}

static void
wait_for_work(void)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 worker_poll_interval, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
}

void
windowing_worker_main(Datum main_arg)
{
	TimestampTz last_busy = 0;	/* when a pipeline was last seen running */
	/* a worker before may have consumed rows and died before emptying them */
	bool		reclaim_pending = true;
	TimestampTz reclaim_checked = 0;
	int			reclaim_wait = RECLAIM_CHECK_MS;
	TimestampTz shards_checked = 0;
	TimestampTz exchanged = 0;
	TimestampTz last_round = 0;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	if (!launcher_attach_worker(&my_part))
		proc_exit(0);

	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(main_arg), InvalidOid, 0);
	SetConfigOption("application_name", MyBgworkerEntry->bgw_type,
					PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("default_transaction_isolation", "read committed",
					PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("default_transaction_read_only", "off", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("lock_timeout", "0", PGC_USERSET, PGC_S_SESSION);
	round_cxt = AllocSetContextCreate(TopMemoryContext, "windowing worker round",
									  ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(round_cxt);

	for (;;)
	{
		List	   *pipelines;
		ListCell   *lc;
		bool		consumed = false;
		bool		more = false;

		MemoryContextReset(round_cxt);
		if (worker_round_interval > 0)
			pace_rounds(&last_round);
		distributed_work(&shards_checked, &exchanged);
		pipelines = running_pipelines();
		if (pipelines != NIL)
			last_busy = GetCurrentTimestamp();
		else if (!distributed_worker_stays() &&
				 (last_busy == 0 ||
				  TimestampDifferenceExceeds(last_busy, GetCurrentTimestamp(),
											 QUIET_PERIOD_MS)))
			leave(WORKER_EXIT_IDLE, "no running pipeline");

		foreach(lc, pipelines)
		{
			if (step_pipeline(lfirst(lc), &more) > 0)
				consumed = true;
		}
		end_shared_transaction();
		held_back_prune();
		/*
		 * Queues are emptied after rows were consumed, and again in the
		 * next rounds while one could not be: else a queue whose lock was
		 * taken when its last rows were consumed would stay full.
		 */
		reclaim_pending = reclaim_pending || consumed;
		/* the first worker empties the queues, for all of them */
		if (my_part == 0 && reclaim_pending &&
			TimestampDifferenceExceeds(reclaim_checked, GetCurrentTimestamp(), reclaim_wait))
		{
			reclaim_checked = GetCurrentTimestamp();
			reclaim_wait = reclaim_queues();
			reclaim_pending = reclaim_wait > 0;
			if (!reclaim_pending)
				reclaim_wait = RECLAIM_CHECK_MS;
		}
		pgstat_report_stat(false);
		/*
		 * A commit sets the latch, which is reset before the round's ticks
		 * open: any commit they left out is waiting.  Only rows a step saw
		 * committed and left (its budget ran out) need a round at once.
		 */
		if (!more)
			wait_for_work();

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}
