/*
 * launcher.c
 *		Keeps a pipeline worker running in each database that has work, and
 *		none where there is none; more than one where pipelines have parts.
 *
 * A background worker connects to one database for life, so pipelines in N
 * databases need N workers, while most databases have no pipeline at all.
 * The launcher, connected to no database, reads pg_database every second
 * (and whenever its latch is set) and drives each connectable, non-template
 * database through this state machine:
 *
 *	 DUE        --(a slot is free and the worker registers)-->  RUNNING
 *	 RUNNING    --(worker left: no extension, no running pipeline)--> IDLE
 *	 RUNNING    --(worker left: database being dropped, renamed or copied)
 *	                                                         --> YIELDED
 *	 RUNNING    --(worker failed: error, signal, could not connect)
 *	                                                         --> BACKING OFF
 *	 IDLE        --> DUE after 10 s, doubling up to 5 min; at once if woken
 *	 YIELDED     --> DUE after 1 s; the new worker then waits at connection
 *	                 until the DROP DATABASE or such has finished
 *	 BACKING OFF --> DUE after 1 s, doubling up to 30 s (back to 1 s once a
 *	                 worker has lived 30 s); after 1 s if woken
 *
 * A database starts DUE, so each is looked at once after server start or
 * creation; one that leaves pg_database is forgotten once its worker is
 * gone.  "Woken" means windowing_wake_database() was called for it, which
 * creating or resuming a pipeline does at commit.  No worker starts less
 * than a second after its predecessor left, so nothing makes a crash loop;
 * the idle rechecks only catch pipelines set running without a wake (a
 * restored dump, a manual UPDATE), which is why they can grow rare.
 *
 * Shared memory holds the launcher's latch and windowing.max_workers slots:
 * a slot names a database, the pid of the worker attached to it, a "wanted"
 * flag set by wakes, and why the last worker left, which the worker writes
 * on the way out (one that dies without writing it has failed).  A slot's
 * generation, handed to the worker at registration, keeps a worker that
 * starts late from taking a slot given to another since.  Handles, due
 * times and back-offs are private to the launcher, so one LWLock over the
 * slots is all the locking.  A restarted launcher cannot use the handles of
 * its predecessor: it stops the workers still running and starts afresh,
 * which loses nothing, since workers keep all their progress in tables.
 *
 * A pipeline of parallelism n is stepped as n parts, each by its own
 * worker: worker k of a database steps part k of every pipeline that has
 * one.  The first worker (part 0) is the one the state machine above
 * starts; each round it writes in its slot the largest parallelism of the
 * database's running pipelines, and the launcher makes the other parts'
 * workers due, each then driven by the same state machine as a database
 * of its own (an idle one leaves and is started again when asked for).
 */
#include "compat.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/trigger.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "bgworker.h"
#include "launcher.h"

#define LAUNCHER_RESTART_S		5
#define NAPTIME_MS				1000
#define MIN_RESTART_MS			1000
#define MAX_FAILURE_BACKOFF_MS	30000
#define MIN_IDLE_RECHECK_MS		10000
#define MAX_IDLE_RECHECK_MS		300000
#define STARVED_WARNING_MS		60000

typedef struct WorkerSlot
{
	Oid			dboid;			/* InvalidOid: free, once pid is 0 too */
	int			part;			/* which part of the pipelines it steps */
	int			want_parts;		/* part 0's: workers the database needs */
	pid_t		pid;			/* of the attached worker; 0 if none */
	Latch	   *latch;			/* of the attached worker; NULL if none */
	uint32		generation;		/* bumped at each registration */
	bool		wanted;			/* woken: start a worker soon */
	WorkerExit	exit;			/* why the last worker left */
} WorkerSlot;

typedef struct LauncherShared
{
	LWLock	   *lock;			/* guards everything below */
	Latch	   *latch;			/* the launcher's; NULL when none runs */
	bool		wake_all;		/* a wake found no slot to mark */
	int			nslots;
	WorkerSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} LauncherShared;

/* What a worker learns at registration, in bgw_extra. */
typedef struct WorkerTicket
{
	int			slotno;
	uint32		generation;
	int			part;
} WorkerTicket;

/* A database's worker for one part of its pipelines. */
typedef struct DbKey
{
	Oid			dboid;
	int			part;
} DbKey;

/* The launcher's private view of one database (of one part's worker). */
typedef struct DbEntry
{
	DbKey		key;			/* hash key */
	NameData	name;
	bool		listed;			/* in the latest read of pg_database */
	int			slotno;			/* of its worker; -1 when none */
	BackgroundWorkerHandle *handle; /* NULL when no worker */
	TimestampTz started_at;
	TimestampTz exited_at;
	TimestampTz due_at;			/* start a worker from then on */
	int			failure_backoff_ms;
	int			idle_recheck_ms;
	bool		failed;			/* its last worker failed */
} DbEntry;

int			windowing_max_workers = 8;

static LauncherShared *shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* In a worker, its slot. */
static WorkerSlot *my_slot = NULL;

/* In the launcher. */
static HTAB *databases = NULL;
static MemoryContext launcher_cxt = NULL;
static bool warned_starved = false;

/* In any backend: databases to wake when the transaction commits. */
static List *pending_wakes = NIL;

/* In any backend: the transaction added rows to a queue. */
static bool pending_rows = false;
static bool xact_callback_registered = false;

PG_FUNCTION_INFO_V1(windowing_wake_launcher);
PG_FUNCTION_INFO_V1(windowing_queue_rows_added);

static void wake_worker_now(Oid dboid);


/* Shared memory */

static Size
shared_size(void)
{
	return add_size(offsetof(LauncherShared, slots),
					mul_size(windowing_max_workers, sizeof(WorkerSlot)));
}

static void
launcher_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shared_size());
	RequestNamedLWLockTranche("windowing", 1);
}

static void
launcher_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("windowing launcher", shared_size(), &found);
	if (!found)
	{
		memset(shared, 0, shared_size());
		shared->lock = &GetNamedLWLockTranche("windowing")->lock;
		shared->nslots = windowing_max_workers;
	}
	LWLockRelease(AddinShmemInitLock);
}

/* From _PG_init, while preloading. */
void
launcher_request_shmem(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = launcher_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = launcher_shmem_startup;
}

/* From _PG_init, while preloading. */
void
launcher_register(void)
{
	BackgroundWorker bgw;

	bgworker_init(&bgw, "windowing_launcher_main", "windowing launcher",
							LAUNCHER_RESTART_S);
	RegisterBackgroundWorker(&bgw);
}

/*
 * The slot of dboid's worker for "part", else a free one given to it; NULL
 * if none is free.  The caller holds the lock exclusively.
 */
static WorkerSlot *
slot_for(Oid dboid, int part)
{
	WorkerSlot *free_slot = NULL;

	for (int i = 0; i < shared->nslots; i++)
	{
		WorkerSlot *slot = &shared->slots[i];

		if (slot->dboid == dboid && slot->part == part)
			return slot;
		if (free_slot == NULL && slot->dboid == InvalidOid && slot->pid == 0)
			free_slot = slot;
	}
	if (free_slot)
	{
		free_slot->dboid = dboid;
		free_slot->part = part;
		free_slot->want_parts = 0;
	}
	return free_slot;
}


/* Wakes */

static void
wake_now(Oid dboid)
{
	WorkerSlot *slot;

	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	slot = slot_for(dboid, 0);
	if (slot)
		slot->wanted = true;
	else
		shared->wake_all = true;
	if (shared->latch)
		SetLatch(shared->latch);
	LWLockRelease(shared->lock);
}

/*
 * A worker woken before the commit would not see the new pipeline, find
 * nothing to run and leave; so wakes wait for the commit, and vanish with
 * an abort.  A prepared transaction's wake is lost: the idle recheck finds
 * its pipelines once it is committed.
 */
static void
wake_at_commit(XactEvent event, void *arg)
{
	ListCell   *lc;

	/*
	 * A prepared transaction's rows are seen at its COMMIT PREPARED, in
	 * another session, which has no wake to give: Citus writes shards of
	 * several nodes so.  Woken now, the worker finds them at its next poll.
	 */
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PREPARE)
	{
		foreach(lc, pending_wakes)
			wake_now(lfirst_oid(lc));
		if (pending_rows)
			wake_worker_now(MyDatabaseId);
	}
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
	{
		pending_wakes = NIL;	/* its memory goes with the transaction */
		pending_rows = false;
	}
}

static void
register_wake_at_commit(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(wake_at_commit, NULL);
		xact_callback_registered = true;
	}
}

/*
 * Asks the launcher to start the worker of dboid soon: when the current
 * transaction commits, or at once outside a transaction.  Does nothing
 * unless the library was preloaded with workers enabled.
 */
void
windowing_wake_database(Oid dboid)
{
	MemoryContext old;

	if (shared == NULL)
		return;
	if (!IsTransactionState())
	{
		wake_now(dboid);
		return;
	}
	register_wake_at_commit();
	old = MemoryContextSwitchTo(TopTransactionContext);
	pending_wakes = list_append_unique_oid(pending_wakes, dboid);
	MemoryContextSwitchTo(old);
}

/*
 * Rows committed into a queue: its worker reads them at once instead of at
 * its next poll, which is what keeps a window's result a few milliseconds
 * behind the row that closed it.  Without a running worker, the launcher
 * starts one.
 */
static void
wake_worker_now(Oid dboid)
{
	bool		woken = false;

	LWLockAcquire(shared->lock, LW_SHARED);
	for (int i = 0; i < shared->nslots; i++)
	{
		WorkerSlot *slot = &shared->slots[i];

		if (slot->dboid == dboid && slot->latch != NULL)
		{
			SetLatch(slot->latch);
			woken = true;
		}
	}
	LWLockRelease(shared->lock);
	if (!woken)
		wake_now(dboid);
}

/*
 * SQL: windowing._queue_rows_added(), the statement trigger of every queue:
 * wakes the database's worker when the transaction commits.
 */
Datum
windowing_queue_rows_added(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("windowing._queue_rows_added() must be called as a trigger")));
	if (shared != NULL)
	{
		register_wake_at_commit();
		pending_rows = true;
	}
	return PointerGetDatum(NULL);
}

/* SQL: windowing._wake_workers(), for the current database. */
Datum
windowing_wake_launcher(PG_FUNCTION_ARGS)
{
	windowing_wake_database(MyDatabaseId);
	PG_RETURN_VOID();
}


/* The worker's side of its slot */

static void
detach_worker(int code, Datum arg)
{
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	my_slot->pid = 0;
	my_slot->latch = NULL;
	LWLockRelease(shared->lock);
}

/*
 * Attaches the calling worker to the slot it was registered for; false if
 * a restarted launcher has since given that slot to another.  *part is the
 * part of the pipelines it steps.
 */
bool
launcher_attach_worker(int *part)
{
	WorkerTicket ticket;
	WorkerSlot *slot;
	bool		ok;

	memcpy(&ticket, MyBgworkerEntry->bgw_extra, sizeof(ticket));
	*part = ticket.part;
	slot = &shared->slots[ticket.slotno];

	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	ok = slot->generation == ticket.generation && slot->pid == 0;
	if (ok)
	{
		slot->pid = MyProcPid;
		slot->latch = MyLatch;
	}
	LWLockRelease(shared->lock);

	if (ok)
	{
		my_slot = slot;
		on_shmem_exit(detach_worker, 0);
	}
	return ok;
}

/*
 * The first worker of a database: its pipelines have up to "parts" parts,
 * each to be stepped by a worker of its own.
 */
void
launcher_want_workers(int parts)
{
	bool		more;

	/* this worker alone writes it: no lock to read it, every round */
	if (parts == my_slot->want_parts)
		return;
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	more = parts > my_slot->want_parts;
	my_slot->want_parts = parts;
	if (more && shared->latch)
		SetLatch(shared->latch);
	LWLockRelease(shared->lock);
}

/* Called by a worker that leaves on purpose, just before it exits. */
void
launcher_set_worker_exit(WorkerExit how)
{
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	my_slot->exit = how;
	LWLockRelease(shared->lock);
}


/* The launcher */

static void
release_latch(int code, Datum arg)
{
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	shared->latch = NULL;
	LWLockRelease(shared->lock);
}

/*
 * Publishes our latch and stops the workers of a previous launcher, whose
 * handles died with it; bumping every generation turns away those it
 * registered that have not started yet.  Their slots stay taken until they
 * are gone.
 */
static void
take_over(void)
{
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	shared->latch = MyLatch;
	shared->wake_all = false;
	for (int i = 0; i < shared->nslots; i++)
	{
		WorkerSlot *slot = &shared->slots[i];

		slot->generation++;
		slot->dboid = InvalidOid;
		slot->wanted = false;
		if (slot->pid != 0)
			kill(slot->pid, SIGTERM);
	}
	LWLockRelease(shared->lock);
	before_shmem_exit(release_latch, 0);
}

/* The entry of dboid's worker for "part", new ones due at once. */
static DbEntry *
enter_database(Oid dboid, int part)
{
	DbKey		key = {dboid, part};
	DbEntry    *db;
	bool		found;

	db = hash_search(databases, &key, HASH_ENTER, &found);
	if (!found)
	{
		db->slotno = -1;
		db->handle = NULL;
		db->started_at = db->exited_at = 0;
		db->due_at = GetCurrentTimestamp();
		db->failure_backoff_ms = MIN_RESTART_MS;
		db->idle_recheck_ms = MIN_IDLE_RECHECK_MS;
		db->failed = false;
	}
	return db;
}

static void
note_database(Form_pg_database form)
{
	DbEntry    *db = enter_database(form->oid, 0);

	db->name = form->datname;
	db->listed = true;
}

/* The workers of further parts go with their database's first. */
static void
note_parts(void)
{
	HASH_SEQ_STATUS seq;
	DbEntry    *db;

	hash_seq_init(&seq, databases);
	while ((db = hash_seq_search(&seq)) != NULL)
	{
		DbKey		first = {db->key.dboid, 0};
		DbEntry    *db0;

		if (db->key.part == 0)
			continue;
		db0 = hash_search(databases, &first, HASH_FIND, NULL);
		db->listed = db0 != NULL && db0->listed;
		if (db->listed)
			db->name = db0->name;
	}
}

static bool
can_run_pipelines(Form_pg_database form)
{
	return form->datallowconn && !form->datistemplate &&
		form->datconnlimit != DATCONNLIMIT_INVALID_DB;
}

/* Reads pg_database: new databases are due at once, gone ones unlisted. */
static void
refresh_databases(void)
{
	HASH_SEQ_STATUS seq;
	DbEntry    *db;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;

	hash_seq_init(&seq, databases);
	while ((db = hash_seq_search(&seq)) != NULL)
		db->listed = false;

	StartTransactionCommand();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database form = (Form_pg_database) GETSTRUCT(tup);

		if (can_run_pipelines(form))
			note_database(form);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	MemoryContextSwitchTo(launcher_cxt);
	note_parts();
}

static void
schedule_restart(DbEntry *db, WorkerExit how, bool wanted)
{
	int			delay_ms = MIN_RESTART_MS;

	if (how == WORKER_EXIT_IDLE)
	{
		delay_ms = db->idle_recheck_ms;
		db->idle_recheck_ms = Min(2 * delay_ms, MAX_IDLE_RECHECK_MS);
		db->failure_backoff_ms = MIN_RESTART_MS;
	}
	else if (how == WORKER_EXIT_FAILED)
	{
		if (TimestampDifferenceExceeds(db->started_at, db->exited_at,
									   MAX_FAILURE_BACKOFF_MS))
			db->failure_backoff_ms = MIN_RESTART_MS;
		delay_ms = db->failure_backoff_ms;
		db->failure_backoff_ms = Min(2 * delay_ms, MAX_FAILURE_BACKOFF_MS);
		db->idle_recheck_ms = MIN_IDLE_RECHECK_MS;
	}
	if (wanted)
	{
		delay_ms = MIN_RESTART_MS;
		db->idle_recheck_ms = MIN_IDLE_RECHECK_MS;
	}
	db->due_at = TimestampTzPlusMilliseconds(db->exited_at, delay_ms);
}

/* The worker of db has exited: free its slot and decide when to restart. */
static void
worker_stopped(DbEntry *db, TimestampTz now)
{
	WorkerSlot *slot = &shared->slots[db->slotno];
	WorkerExit	how;
	bool		wanted;

	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	how = slot->exit;
	wanted = slot->wanted;
	slot->dboid = InvalidOid;
	slot->wanted = false;
	LWLockRelease(shared->lock);

	pfree(db->handle);
	db->handle = NULL;
	db->slotno = -1;
	db->exited_at = now;
	db->failed = how == WORKER_EXIT_FAILED;
	schedule_restart(db, how, wanted);
}

/* Notes stopped workers, and forgets dropped databases once theirs is. */
static void
reap_workers(void)
{
	TimestampTz now = GetCurrentTimestamp();
	HASH_SEQ_STATUS seq;
	DbEntry    *db;
	pid_t		pid;

	hash_seq_init(&seq, databases);
	while ((db = hash_seq_search(&seq)) != NULL)
	{
		if (db->handle &&
			GetBackgroundWorkerPid(db->handle, &pid) == BGWH_STOPPED)
			worker_stopped(db, now);
		if (!db->listed && db->handle == NULL)
			(void) hash_search(databases, &db->key, HASH_REMOVE, NULL);
	}
}

static void
make_due(DbEntry *db, TimestampTz now)
{
	db->due_at = Max(now, TimestampTzPlusMilliseconds(db->exited_at,
													  MIN_RESTART_MS));
	db->idle_recheck_ms = MIN_IDLE_RECHECK_MS;
}

/*
 * Turns wakes into due times.  The wake of a database whose worker runs
 * stays in its slot: the worker may be leaving, having looked before the
 * wake's commit, so worker_stopped() takes it.
 */
static void
take_wakes(void)
{
	TimestampTz now = GetCurrentTimestamp();
	HASH_SEQ_STATUS seq;
	DbEntry    *db;
	bool		all;

	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	all = shared->wake_all;
	shared->wake_all = false;
	for (int i = 0; i < shared->nslots; i++)
	{
		WorkerSlot *slot = &shared->slots[i];
		DbKey		key = {slot->dboid, slot->part};

		if (!slot->wanted)
			continue;
		db = hash_search(databases, &key, HASH_FIND, NULL);
		if (db && db->slotno == i)
			continue;
		if (db)
			make_due(db, now);
		slot->dboid = InvalidOid;
		slot->wanted = false;
	}
	LWLockRelease(shared->lock);

	if (!all)
		return;
	hash_seq_init(&seq, databases);
	while ((db = hash_seq_search(&seq)) != NULL)
		if (db->handle == NULL)
			make_due(db, now);
}

/*
 * The workers the first worker of each database asks for, one per part of
 * its pipeline of most parts, made due; not one whose last worker failed,
 * which waits out its back-off.
 */
static void
add_part_workers(void)
{
	TimestampTz now = GetCurrentTimestamp();
	DbKey	   *want = palloc(sizeof(DbKey) * shared->nslots);
	int			n = 0;

	LWLockAcquire(shared->lock, LW_SHARED);
	for (int i = 0; i < shared->nslots; i++)
	{
		WorkerSlot *slot = &shared->slots[i];

		if (slot->part == 0 && slot->pid != 0 && slot->want_parts > 1)
			want[n++] = (DbKey) {slot->dboid, slot->want_parts};
	}
	LWLockRelease(shared->lock);
	for (int i = 0; i < n; i++)
	{
		DbKey		first = {want[i].dboid, 0};
		DbEntry    *db0 = hash_search(databases, &first, HASH_FIND, NULL);

		if (db0 == NULL || !db0->listed)
			continue;
		for (int part = 1; part < want[i].part; part++)
		{
			DbEntry    *db = enter_database(want[i].dboid, part);

			db->name = db0->name;
			db->listed = true;
			if (db->handle == NULL && !db->failed)
				make_due(db, now);
		}
	}
	pfree(want);
}

/* The slot for a new worker, with a fresh generation; -1 if none. */
static int
claim_slot(const DbKey *key, uint32 *generation)
{
	WorkerSlot *slot;

	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	slot = slot_for(key->dboid, key->part);
	if (slot)
	{
		slot->generation++;
		slot->wanted = false;
		slot->exit = WORKER_EXIT_FAILED;
		*generation = slot->generation;
	}
	LWLockRelease(shared->lock);
	return slot ? slot - shared->slots : -1;
}

static void
unclaim_slot(int slotno)
{
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	shared->slots[slotno].dboid = InvalidOid;
	LWLockRelease(shared->lock);
}

static bool
register_worker(DbEntry *db, WorkerTicket ticket)
{
	BackgroundWorker bgw;

	/* never restarted by the postmaster: the launcher restarts it */
	bgworker_init(&bgw, "windowing_worker_main", "windowing worker",
							BGW_NEVER_RESTART);
	if (db->key.part == 0)
		snprintf(bgw.bgw_name, BGW_MAXLEN, "windowing worker for database \"%s\"",
				 NameStr(db->name));
	else
		snprintf(bgw.bgw_name, BGW_MAXLEN, "windowing worker for database \"%s\", part %d",
				 NameStr(db->name), db->key.part);
	bgw.bgw_main_arg = ObjectIdGetDatum(db->key.dboid);
	memcpy(bgw.bgw_extra, &ticket, sizeof(ticket));
	bgw.bgw_notify_pid = MyProcPid;
	return RegisterDynamicBackgroundWorker(&bgw, &db->handle);
}

/* Why a worker could not start, if it could not. */
typedef enum StartResult
{
	STARTED,
	NO_SLOT,					/* windowing.max_workers are running */
	NO_BGWORKER					/* max_worker_processes are running */
} StartResult;

static StartResult
start_worker(DbEntry *db, TimestampTz now)
{
	WorkerTicket ticket;

	ticket.part = db->key.part;
	ticket.slotno = claim_slot(&db->key, &ticket.generation);
	if (ticket.slotno < 0)
		return NO_SLOT;
	if (!register_worker(db, ticket))
	{
		unclaim_slot(ticket.slotno);
		return NO_BGWORKER;
	}
	db->slotno = ticket.slotno;
	db->started_at = now;
	return STARTED;
}

/*
 * Workers that only look and leave fill the slots for a moment, so only
 * databases kept waiting for a minute are worth a warning, once until none
 * waits any more.
 */
static void
warn_if_starved(int starved, StartResult why)
{
	if (starved == 0)
		warned_starved = false;
	if (starved == 0 || warned_starved)
		return;
	if (why == NO_SLOT)
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg_plural("%d database has waited over a minute for a windowing worker",
							   "%d databases have waited over a minute for a windowing worker",
							   starved, starved),
				 errdetail_plural("%d windowing worker is running, as many as windowing.max_workers allows.",
								  "%d windowing workers are running, as many as windowing.max_workers allows.",
								  windowing_max_workers, windowing_max_workers),
				 errhint("Consider increasing windowing.max_workers.")));
	else
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg_plural("%d database has waited over a minute for a windowing worker",
							   "%d databases have waited over a minute for a windowing worker",
							   starved, starved),
				 errdetail("No background worker slot is free."),
				 errhint("Consider increasing max_worker_processes.")));
	warned_starved = true;
}

/*
 * Starts the workers that are due, until one cannot start (then no other
 * can); returns the milliseconds to sleep.  Slots free up when a worker
 * exits, which wakes the launcher; background worker slots taken by others
 * free up unannounced, hence the nap.
 */
static long
start_due_workers(void)
{
	TimestampTz now = GetCurrentTimestamp();
	HASH_SEQ_STATUS seq;
	DbEntry    *db;
	long		sleep_ms = NAPTIME_MS;
	StartResult result = STARTED;
	int			starved = 0;

	hash_seq_init(&seq, databases);
	while ((db = hash_seq_search(&seq)) != NULL)
	{
		if (db->handle || !db->listed)
			continue;
		if (db->due_at > now)
		{
			sleep_ms = Min(sleep_ms, TimestampDifferenceMilliseconds(now, db->due_at));
			continue;
		}
		if (result == STARTED)
			result = start_worker(db, now);
		if (result != STARTED &&
			TimestampDifferenceExceeds(db->due_at, now, STARVED_WARNING_MS))
			starved++;
	}
	warn_if_starved(starved, result);
	return result == NO_BGWORKER ? NAPTIME_MS : sleep_ms;
}

static HTAB *
new_database_table(void)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(DbKey);
	ctl.entrysize = sizeof(DbEntry);
	ctl.hcxt = launcher_cxt;
	return hash_create("windowing launcher databases", 64, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

void
windowing_launcher_main(Datum main_arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	/* no database: pg_database is shared, and that is all it reads */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	SetConfigOption("application_name", MyBgworkerEntry->bgw_type,
					PGC_USERSET, PGC_S_SESSION);

	launcher_cxt = AllocSetContextCreate(TopMemoryContext, "windowing launcher",
										 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(launcher_cxt);
	databases = new_database_table();
	take_over();

	for (;;)
	{
		long		sleep_ms;

		refresh_databases();
		reap_workers();
		take_wakes();
		add_part_workers();
		sleep_ms = start_due_workers();

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}
