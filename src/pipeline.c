/*
 * pipeline.c
 *		One step of a pipeline, and the SQL functions that run steps.
 *
 * A step consumes ticks of its queue (tick.c: the rows committed between
 * two snapshots, in arrival order), in chunks, each row fed to the
 * operator.
 *
 * A step loads the pipeline's stored window state, feeds the rows through
 * the operator (operator.c), then writes state, results, late rows and the
 * cursor (emit.c) in the caller's transaction.  It pins search_path to
 * pg_catalog for its whole run, including the analysis of the aggregates,
 * so a user's objects can never be picked up in place of PostgreSQL's.
 */
#include "compat.h"

#include "catalog/dependency.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "catalog/pg_type_d.h"
#include "access/transam.h"
#include "access/xact.h"
#include "commands/async.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "emit.h"
#include "join.h"
#include "evictor.h"
#include "owner.h"
#include "pipeline.h"
#include "plans.h"
#include "row_batch.h"
#include "tick.h"
#include "trigger.h"
#include "sql_pipeline.h"
#include "datatype/timestamp.h"
#include "state.h"
#include "version.h"

/* Rows read from the queue per query within a step. */
#define CHUNK_ROWS 10000

/* Rows between two looks at a step's memory and time budget. */
#define BUDGET_ROWS 256

char	   *pipeline_clock_setting = NULL;
int			pipeline_step_memory = -1;	/* kB; -1: maintenance_work_mem */

typedef struct Step
{
	PipelineDef def;
	PipelineProgress progress;
	KeyColumns	keys;
	StringInfoData keybuf;		/* the key of the row being read */
	WindowSpec	spec;
	Aggregator *agg;
	TriggerDef	trigger;		/* when its windows fire */
	Oid			trigger_input;	/* the type of a delta trigger's input */
	EmitTarget	target;
	Operator   *op;
	StepState  *state;			/* where its window state came from */
	TimestampTz now;			/* the step's clock */
	int64		idle_timeout;	/* microseconds, -1 for none */
	OwnerContext as_owner;		/* who to be again after the step */
	MemoryContext cxt;			/* all that the step allocates */
	Size		loaded;			/* of which its loaded state */
	TimestampTz deadline;		/* 0: none */
	bool		cut_short;		/* stopped by its memory or time budget */
	bool		feeding;		/* reading rows into the operator */
	int64		row_seq;		/* the row in the operator */
	MemoryContext rowcxt;		/* a fed row's, reset after it */
	RowBatch   *batch;			/* rows read, to be fed (hold_row) */
	uint64		fed;			/* rows fed, for the budget's checks */
	List	   *failed;			/* FailedRow *, of on_error 'route' */
} Step;

/* What a caller asks of a step. */
typedef struct StepRequest
{
	int64		max_rows;		/* <= 0: no limit */
	bool		consume_rows;
	bool		has_watermark;
	int64		watermark;
} StepRequest;

/*
 * A row whose aggregate input or transition failed, which the step reruns
 * without, routing it to the late table with its error.
 */
typedef struct FailedRow
{
	int64		seq;
	char	   *reason;			/* 'error: <sqlstate>: <message>' */
	char	   *error;			/* {sqlstate, message, detail, hint} as JSON */
} FailedRow;

/*
 * The owner of a pipeline, checked against the current user; "latest"
 * reads what committed since the statement began (as after waiting for
 * the pipeline's lock).  Every SQL entry point that reads the pipeline
 * catalog starts here, so this is also where a catalog of another version
 * is refused.
 */
static Oid
check_owner(const char *name, bool latest)
{
	Oid			owner;

	version_check();
	owner = catalog_pipeline_owner(name, latest);
	if (!OidIsValid(owner))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pipeline \"%s\" does not exist", name)));
	if (!has_privs_of_role(GetUserId(), owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of pipeline \"%s\"", name),
				 errdetail("Only the owner of a pipeline or a superuser may run, change or drop it.")));
	return owner;
}

/*
 * Whoever calls, a step or open_windows() runs as the pipeline's owner
 * (owner.c).  A step reads that owner again once it holds the pipeline's
 * lock: alter_pipeline_owner() takes the lock too, so the pipeline may have
 * changed hands while the step waited, and the step then runs as the new
 * owner, if the caller may act as it.  The check before the lock keeps
 * others from holding up the pipeline's steps.
 */
static void
begin_as_owner(Step *s, const char *name, int part, bool lock)
{
	Oid			owner;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	owner = check_owner(name, false);
	if (lock)
	{
		pipeline_lock(name, part);
		owner = check_owner(name, true);
	}
	owner_enter(&s->as_owner, owner);
}

static void
end_as_owner(Step *s)
{
	owner_leave(&s->as_owner);
	SPI_finish();
}

/* Durations in the time column's unit: microseconds, or milliseconds for bigint. */
int64
pipeline_duration(const Interval *iv, bool is_ts, const char *what)
{
	int64		us = spec_interval_span(iv, what, false).usecs;

	return is_ts ? us : us / 1000;
}

/*
 * Steps, pauses and drops of one pipeline take turns on a lock of each
 * part (an advisory lock tag no SQL function uses), so that the parts step
 * at once.  Unlike a row lock it needs no transaction id, so a step that
 * finds nothing to do writes nothing.
 */
static bool
lock_part(const char *name, int part, bool wait)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId,
						 hash_bytes((const unsigned char *) name, strlen(name)), part, 3);
	return LockAcquire(&tag, ExclusiveLock, false, !wait) != LOCKACQUIRE_NOT_AVAIL;
}

void
pipeline_lock(const char *name, int part)
{
	(void) lock_part(name, part, true);
}

/* The lock of a part if no one holds it; false, and no lock, if someone does. */
bool
pipeline_try_lock(const char *name, int part)
{
	return lock_part(name, part, false);
}

/*
 * Takes the locks a step takes on the pipeline's tables if no one holds or
 * awaits a conflicting one; false if someone does.  The worker never waits
 * for them: a session that locks a pipeline's table (ALTER TABLE, DROP
 * TRIGGER, LOCK TABLE) would hold up the worker's other pipelines, one
 * that locks two tables of the round's steps in turn would deadlock with
 * it, and a reclaim waiting with the queue locked would hold up every
 * producer of the queue.  On a Citus node the wait itself is the harm:
 * Citus's deadlock detection counts all local processes as one
 * transaction, so a drop of a distributed pipeline, waiting for one node's
 * worker while another's waits for it, would be cancelled as a distributed
 * deadlock.  The worker tries again at a later round.
 */
static bool
table_free(Oid relid, LOCKMODE mode)
{
	return !OidIsValid(relid) || ConditionalLockRelationOid(relid, mode);
}

/*
 * InvalidOid if every table is free, else the first that is not.  A join's
 * state tables count as written: a window join's step deletes from them.
 */
Oid
pipeline_locked_table(const PipelineRunning *running)
{
	if (!table_free(running->source, AccessShareLock))
		return running->source;
	if (!table_free(running->right_source, AccessShareLock))
		return running->right_source;
	if (!table_free(running->result_table, RowExclusiveLock))
		return running->result_table;
	if (!table_free(running->late_table, RowExclusiveLock))
		return running->late_table;
	for (int i = 0; i < 2; i++)
		if (!table_free(running->state_tables[i], RowExclusiveLock))
			return running->state_tables[i];
	return InvalidOid;
}

/*
 * What DDL may have changed since the pipeline was created: its tables, and
 * the columns it reads and their types (the key columns' types are those of
 * the result table's key columns, made from them).
 */
static void
check_tables(const PipelineDef *def)
{
	sql_pipeline_check_table(def->name, def->source, "source table");
	sql_pipeline_check_table(def->name, def->result_table, "result table");
	if (OidIsValid(def->late_table))
		sql_pipeline_check_table(def->name, def->late_table, "late table");
	sql_pipeline_check_column(def->name, def->source, "windowing_xid", "queue column", XID8OID, InvalidOid);
	sql_pipeline_check_column(def->name, def->source, "windowing_seq", "queue column", INT8OID, InvalidOid);
	if (def->time_column)
		sql_pipeline_check_column(def->name, def->source, def->time_column, "time column",
							  def->time_type, InvalidOid);
	for (int i = 0; i < def->nkeys; i++)
		sql_pipeline_check_column(def->name, def->source, def->keys[i], "key column", InvalidOid,
							  def->result_table);
}

/*
 * The stored state and the result table were made for the definition the
 * pipeline was created with; a catalog row changed by hand since (which
 * only a superuser can) would have them misread.
 */
static void
check_definition(const PipelineDef *def)
{
	if (!def->intact)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("definition of pipeline \"%s\" does not match its state", def->name),
				 errdetail("Its time column, key columns, assigner or aggregates in windowing.pipeline "
						   "are not those it was created with, for which its window state and "
						   "result table were made."),
				 errhint("Put the definition back, or create a new pipeline beside it, or drop it "
						 "and create it again.")));
}

/*
 * Reads the pipeline's row (after pipeline_lock) and prepares everything:
 * the definition is checked against the tables as they are now.
 */
static void
load_step(Step *s, const char *name, int part)
{
	PipelineDef *def = &s->def;
	Watermark  *wm;
	EvictorDef	evictor;
	KeyOrder	order = {keys_order, keys_order_prefix, &s->keys};

	catalog_load_pipeline(name, part, def, &s->progress);
	check_definition(def);
	s->now = pipeline_clock();
	s->idle_timeout = def->idle_timeout ?
		spec_interval_span(def->idle_timeout, "idle_timeout", false).usecs : -1;
	if (def->join_type)
		return;					/* join.c loads the rest */
	check_tables(def);
	s->target.source = catalog_relation_name(def->source, "source table");
	keys_init(&s->keys, def->source, def->nkeys, def->keys);
	initStringInfo(&s->keybuf);
	spec_from_assigner(&s->spec, def->assigner, def->time_type);
	if (s->spec.gap_column)
		sql_pipeline_check_column(name, def->source, s->spec.gap_column, "gap column",
							  INTERVALOID, InvalidOid);
	if (def->watermark_column)
		sql_pipeline_check_column(name, def->source, def->watermark_column, "watermark column",
								  def->time_type, InvalidOid);
	evictor_parse(def->evictor, def->is_ts, &evictor);
	s->agg = agg_prepare(def->source, def->aggregates,
						 s->spec.kind == WK_COUNT ? INT8OID : def->time_type, &evictor,
						 def->time_column);
	sql_pipeline_check_outputs(name, def->result_table, s->agg);
	trigger_parse(def->trigger, &s->spec, def->is_ts, &s->trigger);
	s->trigger_input = trigger_check_input(&s->trigger, def->source, name);
	s->op = op_create(&s->spec, s->agg, pipeline_duration(def->allowed_lateness, def->is_ts, "allowed_lateness"),
					  def->sliced, &s->trigger, &order);
	s->op->gone_until = def->cleaned_until;
	if (def->fire_spread)
		s->op->spread = pipeline_duration(def->fire_spread, def->is_ts, "fire_spread");
	s->op->final_rows = def->append;
	/* what the step's clock passed decides which windows it loads (op_by_key) */
	s->op->clock = s->now;
	wm = &s->op->wm;
	/* a shard's rows make its input's watermark; it fires by the shards' least */
	wmk_init(wm, def->max_out_of_orderness ?
			 pipeline_duration(def->max_out_of_orderness, def->is_ts, "max_out_of_orderness") : 0,
			 def->max_out_of_orderness != NULL && !def->exchanged);
	s->target.pipeline_id = def->id;
	s->target.result_table = catalog_relation_name(def->result_table, "result table");
	s->target.result_relid = def->result_table;
	s->target.late_table = NULL;
	if (OidIsValid(def->late_table))
		s->target.late_table = catalog_relation_name(def->late_table, "late table");
	s->target.late_errors = def->route_errors;
	s->target.append = def->append;
	s->target.panes = s->trigger.trigger != &trigger_event_time;
	s->target.time_type = def->time_type;
	s->target.window_type = s->spec.kind == WK_COUNT ? INT8OID : def->time_type;
	s->target.keys = &s->keys;
	s->target.agg = s->agg;
	wm->value = s->progress.watermark;
	wm->max_seen = s->progress.max_seen;
}

/* What only aggregate pipelines have, asked of a join pipeline. */
static void
refuse_join(const PipelineDef *def, const char *what)
{
	if (def->join_type)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not apply to join pipeline \"%s\"", what, def->name),
				 errhint("Drop the join pipeline and create it again with what it should be.")));
}

/*
 * A row's dynamic session gap in the pipeline's unit; 0 (the row goes to
 * the late table) if it is NULL, in months, or not positive.
 */
static int64
row_gap(Step *s, Datum value, bool isnull)
{
	Interval   *iv;
	int64		us;

	if (isnull)
		return 0;
	iv = DatumGetIntervalP(value);
	if (iv->month != 0 ||
		pg_mul_s64_overflow(iv->day, USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, iv->time, &us))
		return 0;
	return s->def.is_ts ? us : us / 1000;
}

static FailedRow *
find_failed(Step *s, int64 seq)
{
	ListCell   *lc;

	foreach(lc, s->failed)
	{
		FailedRow  *f = lfirst(lc);

		if (f->seq == seq)
			return f;
	}
	return NULL;
}

/* A failed row met again, to the late table with its error. */
static void
route_failed(Step *s, int64 seq, bool ts_null, int64 ts)
{
	FailedRow  *f = find_failed(s, seq);

	if (f == NULL)
		elog(ERROR, "row %lld of the queue is not one that failed", (long long) seq);
	op_add_error(s->op, seq, ts_null, ts, f->reason, f->error);
}

/* Is the row's key one this part of the pipeline steps? */
static bool
own_key(Step *s, const bytea *key)
{
	int			groups = s->def.key_groups;

	return s->def.parallelism == 1 ||
		keys_part(keys_group(key, groups), groups, s->def.parallelism) == s->def.part;
}

/*
 * One row read from the queue, to the operator; or to the late table if
 * it is a failed row of a rerun.  A row of a key another part steps only
 * moves the watermark.  An error finds here the row it came from: the one
 * in the operator, or one read past last_seq.
 */
static void
feed_row(Step *s, Datum *vals, bool *nulls)
{
	int			nkeys = s->keys.n;
	int			mark = 2 + nkeys + (s->spec.gap_column ? 1 : 0);
	int			input = mark + (s->def.watermark_column ? 1 : 0);
	int			args = input + (s->trigger.column ? 1 : 0);
	int64		seq = DatumGetInt64(vals[0]);
	/* processing time has no time column: rows get the step's clock */
	bool		ts_null = s->def.time_column ? nulls[1] : false;
	int64		ts = s->def.time_column ? DatumGetInt64(vals[1]) : s->now;
	bool		marks = s->def.watermark_column && !nulls[mark];
	bytea	   *key = keys_encode(&s->keys, vals + 2, nulls + 2, &s->keybuf);
	int64		gap = s->spec.gap_column ? row_gap(s, vals[2 + nkeys], nulls[2 + nkeys]) :
		s->spec.gap;

	if (s->failed != NIL && DatumGetBool(vals[args + s->agg->nargs]))
	{
		if (own_key(s, key))
			route_failed(s, seq, ts_null, ts);
	}
	else if (marks && ts_null)
		;						/* without a time, a row only marks */
	else if (!own_key(s, key))
		op_foreign_row(s->op, ts_null, ts, gap, key);
	else
	{
		s->row_seq = seq;
		/* only a delta trigger reads an input of its own */
		if (s->trigger.column)
		{
			s->op->trigger_input_null = nulls[input];
			if (!nulls[input])
				s->op->trigger_input = trigger_input_value(s->trigger_input, vals[input]);
		}
		op_row(s->op, seq, ts_null, ts, gap, key, vals + args, nulls + args);
	}
	/* the row's watermark comes after the row, as Flink's punctuated ones */
	if (marks)
		op_advance_watermark(s->op, DatumGetInt64(vals[mark]));
	s->progress.last_seq = seq;
}

/*
 * Has the step used up its budget: windowing.step_memory allocated beyond
 * the state it loaded, or its time?  Then it ends with what it has, and the
 * next step goes on where it stopped, so no input can make one step grow
 * without bound, nor one pipeline hold up the worker's others for long.
 */
static bool
over_budget(Step *s)
{
	int64		limit_kb = pipeline_step_memory >= 0 ? pipeline_step_memory : maintenance_work_mem;

	if (MemoryContextMemAllocated(s->cxt, true) - s->loaded > (Size) limit_kb * 1024)
		return true;
	return s->deadline != 0 && GetCurrentTimestamp() >= s->deadline;
}

/* One row to the operator, whatever it allocates freed right after. */
static void
feed_one(Step *s, Datum *vals, bool *nulls)
{
	MemoryContext old = MemoryContextSwitchTo(s->rowcxt);

	feed_row(s, vals, nulls);
	MemoryContextSwitchTo(old);
	/* most rows allocate nothing here: skip the call then */
	if (!s->rowcxt->isReset || s->rowcxt->firstchild != NULL)
		MemoryContextReset(s->rowcxt);
	if (++s->fed % BUDGET_ROWS == 0 && over_budget(s))
		s->cut_short = true;
}

/*
 * The rows held to the operator, their keys' state brought towards the
 * processor's cache first: with many keys, each row's lookup would
 * otherwise wait on memory by itself.  Rows held when the step's budget
 * runs out go in all the same, a few more than it allowed.
 */
static void
feed_batch(Step *s)
{
	RowBatch   *b = s->batch;
	uint32		hashes[ROW_BATCH_ROWS];

	for (int i = 0; i < b->n; i++)
		hashes[i] = keys_hash(keys_encode(&s->keys, row_batch_values(b, i) + 2,
										  row_batch_nulls(b, i) + 2, &s->keybuf));
	state_prefetch(s->state, hashes, b->n);
	for (int i = 0; i < b->n; i++)
		feed_one(s, row_batch_values(b, i), row_batch_nulls(b, i));
	row_batch_clear(b);
}

/*
 * A row read from the queue, held until its batch is fed (feed_batch):
 * false if the step must stop here.  The reader's caller feeds the rows
 * still held once the reader returns.
 */
static bool
hold_row(Datum *vals, bool *nulls, void *arg)
{
	Step	   *s = arg;

	if (row_batch_add(s->batch, vals, nulls))
		feed_batch(s);
	return !s->cut_short;
}

/* The columns a row gives before the aggregates' inputs (feed_row's order). */
static TickColumns
tick_columns(Step *s)
{
	TickColumns c;
	AttrNumber *cols = palloc(sizeof(AttrNumber) * (5 + s->keys.n));
	int			n = 0;

	cols[n++] = get_attnum(s->def.source, "windowing_seq");
	/* processing time has no time column: rows get the step's clock */
	cols[n++] = s->def.time_column ? get_attnum(s->def.source, s->def.time_column) : 0;
	for (int i = 0; i < s->keys.n; i++)
		cols[n++] = get_attnum(s->def.source, s->keys.names[i]);
	if (s->spec.gap_column)
		cols[n++] = get_attnum(s->def.source, s->spec.gap_column);
	if (s->def.watermark_column)
		cols[n++] = get_attnum(s->def.source, s->def.watermark_column);
	if (s->trigger.column)
		cols[n++] = get_attnum(s->def.source, s->trigger.column);
	c.source = s->def.source;
	c.columns = cols;
	c.ncolumns = n;
	c.inputs = s->agg->arg_exprs;
	c.inputs_sql = s->agg->args_sql;
	return c;
}

/* The arrival numbers of the failed rows, which a rerun reads without inputs. */
static List *
failed_seqs(Step *s)
{
	List	   *seqs = NIL;
	ListCell   *lc;

	foreach(lc, s->failed)
		seqs = lappend(seqs, &((FailedRow *) lfirst(lc))->seq);
	return seqs;
}

/*
 * Writes the late rows so far to the late table (counting those without
 * one) and frees them: after each chunk, so that a step of late rows holds
 * a chunk of them, not all.
 */
static void
route_late(Step *s)
{
	int64		routed = emit_late(&s->target, s->op);

	s->progress.late_routed += routed;
	s->progress.late_dropped += list_length(s->op->late) - routed;
	op_forget_late(s->op);
}

/* The firings so far written where they may be, and the windows that left dropped. */
static void
write_fired(Step *s)
{
	emit_firings_so_far(&s->target, s->op);
	op_compact(s->op);
}

/* After a chunk of n rows: its firings and late rows written. */
static void
chunk_done(Step *s, uint64 n)
{
	write_fired(s);
	route_late(s);
	s->progress.rows += n;
}

/*
 * Between the batches of windows a watermark brings in from outside the
 * operator (op_watermark_moved), which may be while a row of the queue is
 * read through SPI: the statements have a connection of their own.
 */
static void
due_batch_done(Operator *op, void *arg)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	write_fired(arg);
	SPI_finish();
}

/* Rows a chunk reads: CHUNK_ROWS, or what is left of max_rows (<= 0: no limit). */
static int64
chunk_rows(Step *s, int64 max_rows)
{
	return max_rows > 0 ? Min(CHUNK_ROWS, max_rows - s->progress.rows) : CHUNK_ROWS;
}

/*
 * Consumes up to max_rows (<= 0: all) rows of the open tick; true if that
 * was all of it.
 */
static bool
consume_tick(Step *s, const TickColumns *c, int64 max_rows)
{
	TickReader *r = tick_reader_begin(c, &s->progress, failed_seqs(s), max_rows);
	bool		done = false;

	for (;;)
	{
		int64		want = chunk_rows(s, max_rows);
		uint64		n;

		if (want <= 0)
			break;				/* stopped by max_rows inside the tick */
		s->feeding = true;
		n = tick_read(r, s->progress.last_seq, want, hold_row, s);
		feed_batch(s);
		s->feeding = false;
		chunk_done(s, n);
		if (s->cut_short)
			break;
		if (n < (uint64) want)
		{
			done = true;
			break;
		}
	}
	tick_reader_end(r);
	if (done)
	{
		/* the upstream's results of the windows it fired are all read */
		if (s->progress.tick_watermark != WMK_NONE)
			op_advance_watermark(s->op, s->progress.tick_watermark);
		tick_close(&s->progress);
	}
	return done;
}

/* One row of a replay, held for the operator: the replay's position counts it. */
static bool
replay_one(Datum *vals, bool *nulls, void *arg)
{
	Step	   *s = arg;

	s->progress.replay_done++;
	return hold_row(vals, nulls, arg);
}

/*
 * The replay has read every row of its snapshot: the queue's rows
 * committed since are read as ticks after it.
 */
static void
replay_finish(Step *s)
{
	s->progress.tick_lo = s->progress.replay_until;
	s->progress.tick_hi = NULL;
	s->progress.last_seq = s->progress.scan_from = 0;
	s->progress.scan_next_xid = NULL;
	s->progress.replay_until = NULL;
	s->progress.replay_done = 0;
	tick_replay_forget(s->def.id);
}

/* Replays up to max_rows (<= 0: all) rows of a rebuild, in order of event time. */
static void
consume_replay(Step *s, const TickColumns *c, int64 max_rows)
{
	ReplayReader *r = tick_replay_begin(c, s->def.id, &s->progress, failed_seqs(s));

	for (;;)
	{
		int64		want = chunk_rows(s, max_rows);
		uint64		n;

		if (want <= 0)
			break;
		s->feeding = true;
		n = tick_replay_read(r, want, replay_one, s);
		feed_batch(s);
		s->feeding = false;
		chunk_done(s, n);
		if (s->cut_short)
			break;
		if (n < (uint64) want)
		{
			replay_finish(s);
			break;
		}
	}
	tick_replay_end(r);
}

/*
 * Consumes up to max_rows rows; with no limit, every row committed now.  A
 * tick left open by an earlier step ends before rows committed since, so
 * then a new tick follows it, with what max_rows leaves: the queue's
 * reclaim relies on a step without a limit leaving nothing committed
 * behind, and a caller that steps until a step reads nothing would
 * otherwise stop at a step that found only the end of its tick.
 */
static void
consume(Step *s, int64 max_rows)
{
	bool		tick_was_open = s->progress.tick_hi != NULL;
	TickColumns c = tick_columns(s);

	s->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "windowing row",
									  ALLOCSET_SMALL_SIZES);
	/* the rows' values: a failed row's rerun reads whether it is one last */
	s->batch = row_batch_create(&c, c.ncolumns + list_length(c.inputs) +
								(s->failed != NIL ? 1 : 0));
	if (s->progress.replay_until != NULL)
	{
		consume_replay(s, &c, max_rows);
		return;
	}
	/* a shard's pipeline: the watermark its shards agreed on, before its new rows */
	if (s->def.exchanged && s->progress.shard_watermark != WMK_NONE)
		op_advance_watermark(s->op, s->progress.shard_watermark);
	if (!tick_was_open)
		tick_open(&s->progress, s->def.source, s->def.watermark_from);
	if (consume_tick(s, &c, max_rows) && tick_was_open &&
		(max_rows <= 0 || s->progress.rows < max_rows))
	{
		tick_open(&s->progress, s->def.source, s->def.watermark_from);
		(void) consume_tick(s, &c, max_rows);
	}
}

/* The step's watermark and counts, to the catalog. */
static void
save_progress(Step *s)
{
	s->progress.watermark = s->op->wm.value;
	s->progress.max_seen = s->op->wm.max_seen;
	s->progress.input_watermark = s->def.exchanged ?
		wmk_of(s->op->wm.max_seen, s->op->wm.delay) : WMK_NONE;
	s->progress.windows_fired = s->op->windows_fired;
	state_counts(s->state, &s->progress.state_hits, &s->progress.state_misses);
	catalog_save_progress(&s->def, &s->progress);
}

/*
 * The clock of steps: the system clock, or windowing.clock when a test
 * sets it, so that processing time and idle timeouts run deterministically.
 */
TimestampTz
pipeline_clock(void)
{
	TimestampTz now;

	if (pipeline_clock_setting == NULL || pipeline_clock_setting[0] == '\0')
		return GetCurrentTimestamp();
	now = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
												  CStringGetDatum(pipeline_clock_setting),
												  ObjectIdGetDatum(InvalidOid),
												  Int32GetDatum(-1)));
	/* an infinite clock would take the watermark where it never comes back from */
	if (TIMESTAMP_NOT_FINITE(now))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("windowing.clock must be a finite timestamp")));
	return now;
}

/*
 * The watermark of an input that read no rows ("rows") in a step at "now"
 * and none since last_row_at: once that is idle_timeout (microseconds, -1:
 * none) ago, the clock in the time column's unit (epoch milliseconds for
 * bigint) less max_out_of_orderness ("delay"); else WMK_NONE.
 */
int64
pipeline_idle_watermark(int64 rows, TimestampTz last_row_at, TimestampTz now,
						int64 idle_timeout, bool is_ts, int64 delay)
{
	int64		clock = is_ts ? now :
		(now + (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY) / 1000;

	if (rows > 0 || idle_timeout < 0 || last_row_at == DT_NOBEGIN || now - last_row_at < idle_timeout)
		return WMK_NONE;
	return clock - delay - 1;
}

/*
 * Watermarks that follow the clock: processing time moves with every step,
 * and an event-time pipeline idle for idle_timeout moves to the clock less
 * max_out_of_orderness, so the last windows and open sessions close
 * without new rows.  They are saved only if they fire windows: otherwise
 * an idle pipeline polled by the worker would write at every poll.
 */
static void
follow_clock(Step *s)
{
	Watermark  *wm = &s->op->wm;
	int64		idle;

	if (s->def.time_column == NULL)
		op_advance_watermark(s->op, s->now - 1);
	/* a shard's idle input is the exchange's to judge (_exchange_watermarks) */
	else if (!s->def.exchanged &&
			 (idle = pipeline_idle_watermark(s->progress.rows, s->progress.last_row_at, s->now,
											 s->idle_timeout, s->def.is_ts, wm->delay)) != WMK_NONE)
		op_advance_watermark(s->op, idle);
	if (s->progress.rows > 0)
		s->progress.last_row_at = s->now;
}

/* Writes what the step produced, and tells listeners if windows fired. */
static void
finish_step(Step *s)
{
	state_save(s->state, s->progress.steps + 1);
	emit_superseded(&s->target, s->op);
	emit_firings(&s->target, s->op);
	route_late(s);
	save_progress(s);
	if (s->op->windows_fired > 0)
		Async_Notify(psprintf("windowing_%d", s->def.first_id),
					 psprintf("%lld", (long long) s->op->windows_fired));
}

/*
 * The step's work once its pipeline is loaded.  Steps that change nothing
 * write nothing, so an idle pipeline polled by the worker does not churn
 * its catalog row.
 */
static void
step_body(Step *s, const StepRequest *req)
{
	bool		tick_was_open;
	bool		clock_timers;
	bool		replaying = s->progress.replay_until != NULL;
	bool		idle;

	if (replaying && req->has_watermark)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pipeline \"%s\" is being rebuilt", s->def.name),
				 errdetail("Its watermark follows the rows it replays until the rebuild is done."),
				 errhint("Run process() until windowing.rebuild_progress no longer lists it.")));
	s->state = state_load(s->op, s->def.id, s->def.key_groups, s->progress.steps, true);
	s->op->due_batch_done = due_batch_done;
	s->op->due_batch_arg = s;
	s->loaded = MemoryContextMemAllocated(s->cxt, true);
	/* timers on the clock that passed since the last step, before its rows */
	clock_timers = op_run_clock(s->op, s->now);
	tick_was_open = s->progress.tick_hi != NULL;
	if (req->consume_rows)
	{
		consume(s, req->max_rows);
		follow_clock(s);
	}
	if (req->has_watermark)
		op_advance_watermark(s->op, req->watermark);
	/* an empty new tick changes nothing; closing an open one must be saved */
	idle = s->progress.rows == 0 && s->op->windows_fired == 0 && s->op->windows_left == 0 &&
		s->op->late == NIL &&
		s->progress.late_routed + s->progress.late_dropped == 0 &&
		!req->has_watermark && !tick_was_open && s->progress.tick_hi == NULL &&
		!replaying && !clock_timers && !state_taken(s->state);
	if (idle)
		state_unchanged(s->state);
	else
		finish_step(s);
}

/* An error as the late table's reason and error columns hold it. */
static FailedRow *
failed_row(int64 seq, ErrorData *edata)
{
	FailedRow  *f = palloc(sizeof(FailedRow));
	const char *sqlstate = unpack_sql_state(edata->sqlerrcode);
	const char *fields[4] = {sqlstate, edata->message, edata->detail, edata->hint};
	const char *names[4] = {"sqlstate", "message", "detail", "hint"};
	StringInfoData json;

	initStringInfo(&json);
	appendStringInfoChar(&json, '{');
	for (int i = 0; i < 4; i++)
	{
		appendStringInfo(&json, "%s\"%s\": ", i > 0 ? ", " : "", names[i]);
		if (fields[i] == NULL)
			appendStringInfoString(&json, "null");
		else
			escape_json(&json, fields[i]);
	}
	appendStringInfoChar(&json, '}');
	f->seq = seq;
	f->reason = psprintf("error: %s: %s", sqlstate, edata->message ? edata->message : "");
	f->error = json.data;
	return f;
}

/*
 * Runs fn(arg) in a subtransaction: NULL if it went through, else its error,
 * with the subtransaction rolled back.
 */
static ErrorData *
in_subtransaction(void (*fn) (void *), void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData  *volatile edata = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(arg);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
	}
	PG_END_TRY();
	if (edata == NULL)
		ReleaseCurrentSubTransaction();
	else
		RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return edata;
}

/* The aggregates' inputs of some rows of the queue, evaluated (find_failed_input). */
typedef struct Probe
{
	SPIPlanPtr	plan;
	int64	   *seqs;			/* the rows past the last one fed */
	int			from;			/* the rows tried: seqs[from, to) */
	int			to;
} Probe;

static void
probe_inputs(void *arg)
{
	Probe	   *p = arg;
	Datum	   *seqs = palloc(sizeof(Datum) * (p->to - p->from));
	Datum		array;

	for (int i = p->from; i < p->to; i++)
		seqs[i - p->from] = Int64GetDatum(p->seqs[i]);
	array = PointerGetDatum(construct_array(seqs, p->to - p->from, INT8OID, sizeof(int64),
											true, TYPALIGN_DOUBLE));
	if (SPI_execute_plan(p->plan, &array, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the queue");
}

/* The error of evaluating the inputs of seqs[from, to), or NULL. */
static ErrorData *
probe(Probe *p, int from, int to)
{
	ErrorData  *edata;

	p->from = from;
	p->to = to;
	edata = in_subtransaction(probe_inputs, p);
	if (edata != NULL && ERRCODE_TO_CATEGORY(edata->sqlerrcode) != ERRCODE_DATA_EXCEPTION)
		ReThrowError(edata);
	return edata;
}

/*
 * The first row past the last one fed whose aggregate inputs fail, and
 * its error.  The reader may have evaluated rows ahead of the one it fed
 * (below a sort, in the queue helper), so the rows' inputs are evaluated
 * again, the rows found failing halved until one is left: a subtransaction
 * per halving.  Their arrival numbers are read without them.
 */
static bool
find_failed_input(Step *s)
{
	const char *q = quote_identifier(get_rel_name(s->def.source));
	Oid			type = INT8ARRAYOID;
	StringInfoData inputs;
	Probe		p;
	int			n = 0;
	int			from = 0;
	int			to;
	int			nseqs;
	int64	   *seqs = s->progress.replay_until ?
		tick_replay_seqs(s->def.source, s->def.id, &s->progress, &nseqs) :
		tick_seqs(s->def.source, &s->progress, &nseqs);
	ErrorData  *edata;
	ListCell   *lc;

	p.seqs = palloc(sizeof(int64) * Max(nseqs, 1));
	/* rows that failed before are read without their inputs */
	for (int i = 0; i < nseqs; i++)
		if (find_failed(s, seqs[i]) == NULL)
			p.seqs[n++] = seqs[i];
	initStringInfo(&inputs);
	appendStringInfoString(&inputs, "SELECT 1");
	foreach(lc, s->agg->args_sql)
		appendStringInfo(&inputs, ", %s", (char *) lfirst(lc));
	appendStringInfo(&inputs, " FROM %s AS %s WHERE %s.windowing_seq OPERATOR(pg_catalog.=) ANY ($1)",
					 s->target.source, q, q);
	p.plan = SPI_prepare(inputs.data, 1, &type);
	if (p.plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	to = n;
	if (n == 0 || (edata = probe(&p, from, to)) == NULL)
		return false;
	/* some row of seqs[from, to) fails, none before it */
	while (to - from > 1)
	{
		int			half = from + (to - from) / 2;

		if ((edata = probe(&p, from, half)) != NULL)
			to = half;
		else
			from = half;
	}
	/* the error of that row, not of another in the last rows tried */
	if ((edata = probe(&p, from, to)) == NULL)
		return false;			/* an input that fails only at times */
	s->failed = lappend(s->failed, failed_row(p.seqs[from], edata));
	return true;
}

/*
 * The row a step's error came from, to be routed in the rerun: false if the
 * error is no row's (only data exceptions raised while rows are fed are).
 * An aggregate's transition fails on the row in the operator; an input, on
 * a row the reader evaluated.  Errors of combining or final functions, as
 * windows fire, are no row's.
 */
static bool
note_failed_row(Step *s, ErrorData *edata)
{
	if (!s->feeding || ERRCODE_TO_CATEGORY(edata->sqlerrcode) != ERRCODE_DATA_EXCEPTION)
		return false;
	if (s->agg->advancing)
	{
		s->failed = lappend(s->failed, failed_row(s->row_seq, edata));
		return true;
	}
	return find_failed_input(s);
}

/*
 * The step as loaded afresh for a rerun, which keeps who it runs as, its
 * memory, deadline and failed rows.
 */
static void
reset_step(Step *s, const char *name)
{
	Step		fresh = {0};
	int			part = s->def.part;

	fresh.as_owner = s->as_owner;
	fresh.cxt = s->cxt;
	fresh.deadline = s->deadline;
	fresh.failed = s->failed;
	*s = fresh;
	load_step(s, name, part);
}

/* step_body for in_subtransaction. */
typedef struct Attempt
{
	Step	   *step;
	const StepRequest *req;
} Attempt;

static void
attempt_step(void *arg)
{
	Attempt    *a = arg;

	step_body(a->step, a->req);
}

/*
 * A step of a pipeline with on_error 'route' runs in a subtransaction: when
 * a row's aggregate input or transition fails, the step's work so far is
 * rolled back and the step runs again from the start, reading the failed
 * row without its inputs and routing it to the late table with its error.
 * So a failing row costs a rerun of its step, and steps without errors
 * cost one subtransaction.  Any other error stops the step.
 */
static void
step_routing_errors(Step *s, const char *name, const StepRequest *req)
{
	Attempt		attempt = {s, req};
	ErrorData  *edata;

	while ((edata = in_subtransaction(attempt_step, &attempt)) != NULL)
	{
		if (!note_failed_row(s, edata))
			ReThrowError(edata);
		reset_step(s, name);
	}
}

/* The row the last failed step of pipeline_step(find_row) failed on. */
static bool fault_found;
static int64 fault_seq;

/*
 * A step that names the row it fails on runs in a subtransaction, as one
 * of on_error 'route' does, so that the row is found as 'route' finds it
 * before the error goes on.
 */
static void
step_finding_failed_row(Step *s, const StepRequest *req)
{
	Attempt		attempt = {s, req};
	ErrorData  *edata = in_subtransaction(attempt_step, &attempt);

	if (edata == NULL)
		return;
	if (note_failed_row(s, edata))
	{
		fault_found = true;
		fault_seq = ((FailedRow *) llast(s->failed))->seq;
	}
	ReThrowError(edata);
}

bool
pipeline_failed_row(int64 *seq)
{
	*seq = fault_seq;
	return fault_found;
}

/*
 * The pipeline parts this process is stepping.  A step's statements may
 * step other pipelines (a trigger on its result table may call process()),
 * never its own: the inner step would read the rows the outer one read and
 * has not yet recorded, and write them twice.  Its lock does not stop it,
 * since the process holds it already.
 */
#define MAX_NESTED_STEPS 16

static struct
{
	NameData	name;
	int			part;
}			stepping[MAX_NESTED_STEPS];
static int	nstepping = 0;

static void
enter_step(const char *name, int part)
{
	for (int i = 0; i < nstepping; i++)
		if (stepping[i].part == part && strcmp(NameStr(stepping[i].name), name) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("pipeline \"%s\" is already being stepped by this session", name),
					 errdetail("A statement of its step, such as a trigger on its result table, tried to step it again.")));
	if (nstepping == MAX_NESTED_STEPS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("pipeline steps nested too deeply"),
				 errdetail("A step's statements stepped other pipelines %d deep.", MAX_NESTED_STEPS)));
	namestrcpy(&stepping[nstepping].name, name);
	stepping[nstepping++].part = part;
}

/*
 * A step: consume up to max_rows rows (<= 0: no limit) for at most max_ms
 * milliseconds (<= 0: no limit) within its memory budget, then (if
 * has_watermark) apply an explicit watermark.
 */
static int64
step_once(const char *name, int part, int64 max_rows, int max_ms, bool consume_rows,
		  bool has_watermark, int64 watermark, bool find_row, bool *more)
{
	Step		s;
	bool		left = false;
	StepRequest req = {max_rows, consume_rows, has_watermark, watermark};

	memset(&s, 0, sizeof(s));
	fault_found = false;
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pipeline steps cannot run in a REPEATABLE READ or SERIALIZABLE transaction"),
				 errhint("Run them in a READ COMMITTED transaction.")));
	if (max_ms > 0)
		s.deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), max_ms);
	begin_as_owner(&s, name, part, true);
	/* SPI's procedure context, where every SPI call leaves us, until SPI_finish */
	s.cxt = CurrentMemoryContext;
	load_step(&s, name, part);
	if (s.def.join_type)
		left = join_step(&s.def, &s.progress, max_rows, consume_rows, has_watermark, watermark,
						 s.now, s.idle_timeout);
	else if (s.def.route_errors)
		step_routing_errors(&s, name, &req);
	else if (find_row)
		step_finding_failed_row(&s, &req);
	else
		step_body(&s, &req);
	end_as_owner(&s);
	/* a tick open at the end, or a replay, has rows left to read */
	if (more)
		*more = left || s.progress.tick_hi != NULL || s.progress.replay_until != NULL;
	return s.progress.rows;
}

/* A step (step_once), refused inside a step of the same pipeline part (enter_step). */
static int64
run_step(const char *name, int part, int64 max_rows, int max_ms, bool consume_rows,
		 bool has_watermark, int64 watermark, bool find_row, bool *more)
{
	volatile int64 rows = 0;

	enter_step(name, part);
	PG_TRY();
	{
		rows = step_once(name, part, max_rows, max_ms, consume_rows, has_watermark, watermark,
						 find_row, more);
	}
	PG_FINALLY();
	{
		nstepping--;
	}
	PG_END_TRY();
	return rows;
}

/*
 * A step that consumes rows: how many it read, and whether it left rows
 * of what it has seen committed for the next step (*more, if not NULL).
 */
int64
pipeline_step(const PipelinePart *p, int64 max_rows, int max_ms, bool find_row, bool *more)
{
	return run_step(p->name, p->part, max_rows, max_ms, true, false, 0, find_row, more);
}

/*
 * Steps part "part" of pipeline "name" until it has read every row visible
 * in snapshot "until" and no other, its upstream's watermark as of it
 * "watermark": where every part of a pipeline must be for its key groups to
 * change hands.  The caller holds every part's lock.
 */
void
pipeline_catch_up(const char *name, int part, char *until, int64 watermark)
{
	bool		more;

	tick_force(until, watermark);
	PG_TRY();
	{
		do
			(void) run_step(name, part, 0, 0, true, false, 0, false, &more);
		while (more);
	}
	PG_FINALLY();
	{
		tick_force(NULL, WMK_NONE);
	}
	PG_END_TRY();
}

/*
 * The number of parts of pipeline "name", which the caller must own.  With
 * "lock", every part's lock is taken first, in order of part, as the SQL
 * functions that step, pause, drop or change a pipeline take them: the
 * parts then stay as they are until the transaction ends.
 */
int
pipeline_parts(const char *name, bool lock)
{
	int			locked = 0;
	int			parts;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	(void) check_owner(name, false);
	/* a change of parallelism may have committed while we waited */
	while ((parts = catalog_parallelism(name)) > locked && lock)
		pipeline_lock(name, locked++);
	SPI_finish();
	return parts;
}

/*
 * A step of each part of pipeline "name", in order, with every part's lock
 * held, for SQL function "fn": the most rows one of them read (each reads
 * every row of the queue).  Refused in a read-only transaction, as
 * nextval() is, with or without rows to read: a step writes windowing's
 * tables into the heap directly, where the executor's check of read-only
 * transactions does not see it.
 */
static int64
step_parts(const char *fn, const char *name, int64 max_rows, bool consume_rows,
		   bool has_watermark, int64 watermark)
{
	int64		most = 0;
	int			parts;

	PreventCommandIfReadOnly(fn);
	parts = pipeline_parts(name, true);

	for (int part = 0; part < parts; part++)
	{
		int64		rows = run_step(name, part, max_rows, 0, consume_rows, has_watermark,
									watermark, false, NULL);

		most = Max(most, rows);
	}
	return most;
}

/* The type of the pipeline's time column (for the watermark overloads). */
static Oid
pipeline_time_type(const char *name)
{
	Oid			type;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	(void) check_owner(name, false);
	type = catalog_time_type(name);
	SPI_finish();
	return type;
}

static void
advance_to(const char *name, int64 to, bool is_ts)
{
	if (is_ts && TIMESTAMP_NOT_FINITE(to))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("watermark must be finite"),
				 errhint("Use windowing.flush() to end the input.")));
	(void) step_parts("advance_watermark()", name, 0, false, true, to);
}

PG_FUNCTION_INFO_V1(windowing_process);
PG_FUNCTION_INFO_V1(windowing_advance_watermark);
PG_FUNCTION_INFO_V1(windowing_advance_watermark_timestamp);
PG_FUNCTION_INFO_V1(windowing_advance_watermark_bigint);
PG_FUNCTION_INFO_V1(windowing_advance_watermark_text);
PG_FUNCTION_INFO_V1(windowing_flush);

/* process(name, max_rows): one step, synchronously. */
Datum
windowing_process(PG_FUNCTION_ARGS)
{
	int64		max_rows = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT64(1);

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (!PG_ARGISNULL(1) && max_rows <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rows must be greater than zero")));
	PG_RETURN_INT64(step_parts("process()", text_to_cstring(PG_GETARG_TEXT_PP(0)), max_rows,
							   true, false, 0));
}

static Datum
advance(FunctionCallInfo fcinfo, Oid type)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			time_type = pipeline_time_type(name);

	if (time_type != type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("pipeline \"%s\" has a time column of type %s", name,
						format_type_be(time_type)),
				 errhint("Pass a watermark of the time column's type.")));
	advance_to(name, PG_GETARG_INT64(1), type != INT8OID);
	PG_RETURN_VOID();
}

/* advance_watermark(name, ts): applied after the rows consumed so far. */
Datum
windowing_advance_watermark(PG_FUNCTION_ARGS)
{
	return advance(fcinfo, TIMESTAMPTZOID);
}

Datum
windowing_advance_watermark_timestamp(PG_FUNCTION_ARGS)
{
	return advance(fcinfo, TIMESTAMPOID);
}

Datum
windowing_advance_watermark_bigint(PG_FUNCTION_ARGS)
{
	return advance(fcinfo, INT8OID);
}

/*
 * A literal watermark ('2026-03-01 12:00'), read as the pipeline's time
 * type, so callers need no cast to pick between the overloads.
 */
Datum
windowing_advance_watermark_text(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *value = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Oid			time_type = pipeline_time_type(name);
	Oid			input;
	Oid			ioparam;

	getTypeInputInfo(time_type, &input, &ioparam);
	advance_to(name, DatumGetInt64(OidInputFunctionCall(input, value, ioparam, -1)),
			   time_type != INT8OID);
	PG_RETURN_VOID();
}

/* flush(name): end of input; the watermark goes to +infinity. */
Datum
windowing_flush(PG_FUNCTION_ARGS)
{
	(void) step_parts("flush()", text_to_cstring(PG_GETARG_TEXT_PP(0)), 0, false, true, WMK_END);
	PG_RETURN_VOID();
}

/* One value as JSON: numbers and booleans as such, the rest as strings. */
static void
append_json(StringInfo buf, Oid type, Datum value, bool isnull)
{
	char		category;
	bool		preferred;
	Oid			out;
	bool		varlena;
	char	   *text;

	if (isnull)
	{
		appendStringInfoString(buf, "null");
		return;
	}
	get_type_category_preferred(type, &category, &preferred);
	getTypeOutputInfo(type, &out, &varlena);
	text = OidOutputFunctionCall(out, value);
	if ((category == TYPCATEGORY_NUMERIC && strspn(text, "0123456789.-e+") == strlen(text)) ||
		type == BOOLOID)
		appendStringInfoString(buf, type == BOOLOID ? (DatumGetBool(value) ? "true" : "false") : text);
	else
		escape_json(buf, text);
}

static Datum
json_of(int n, char **names, Oid *types, Datum *values, bool *nulls)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		escape_json(&buf, names[i]);
		appendStringInfoString(&buf, ": ");
		append_json(&buf, types[i], values[i], nulls[i]);
	}
	appendStringInfoChar(&buf, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

/* Where open_windows() puts its rows. */
typedef struct OpenWindows
{
	Step	   *step;
	ReturnSetInfo *rsi;
	MemoryContext cxt;			/* a window's row, reset after it */
} OpenWindows;

/* One window of open_windows(): key and results as JSON. */
static void
put_open_window(WindowEntry *e, void *arg)
{
	OpenWindows *out = arg;
	Step	   *s = out->step;
	ReturnSetInfo *rsi = out->rsi;
	Aggregator *a = s->agg;
	MemoryContext old = MemoryContextSwitchTo(out->cxt);
	Datum	   *keyvals = palloc(sizeof(Datum) * Max(s->keys.n, 1));
	bool	   *keynulls = palloc(sizeof(bool) * Max(s->keys.n, 1));
	Datum	   *res = palloc(sizeof(Datum) * a->nout);
	bool	   *resnulls = palloc(sizeof(bool) * a->nout);
	char	  **names = palloc(sizeof(char *) * a->nout);
	Oid		   *types = palloc(sizeof(Oid) * a->nout);
	Oid			time_out;
	bool		varlena;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	getTypeOutputInfo(s->def.time_type, &time_out, &varlena);
	keys_decode(&s->keys, e->k.key, keyvals, keynulls);
	agg_results(a, e->states, e->k.start, e->k.end, res, resnulls);
	for (int i = 0; i < a->nout; i++)
	{
		names[i] = a->outs[i].name;
		types[i] = a->outs[i].type;
	}
	values[0] = json_of(s->keys.n, s->keys.names, s->keys.types, keyvals, keynulls);
	values[1] = CStringGetTextDatum(OidOutputFunctionCall(time_out, Int64GetDatum(e->k.start)));
	values[2] = CStringGetTextDatum(OidOutputFunctionCall(time_out, Int64GetDatum(e->k.end)));
	values[3] = json_of(a->nout, names, types, res, resnulls);
	tuplestore_putvalues(rsi->setResult, rsi->setDesc, values, nulls);
	MemoryContextSwitchTo(old);
	MemoryContextReset(out->cxt);
}

PG_FUNCTION_INFO_V1(windowing_open_windows);

/* The open windows of one part of a pipeline, into rsi. */
static void
open_windows_of(const char *name, int part, ReturnSetInfo *rsi, MemoryContext cxt)
{
	Step		s;
	OpenWindows out = {&s, rsi, cxt};

	memset(&s, 0, sizeof(s));
	begin_as_owner(&s, name, part, false);
	load_step(&s, name, part);
	if (s.def.join_type)
		join_open_windows(&s.def, &s.progress, rsi);
	else
	{
		refuse_join(&s.def, "open_windows");
		if (op_open_as_stored(s.op))
			state_peek(s.op, s.def.id, s.progress.steps, put_open_window, &out);
		else
		{
			s.state = state_load(s.op, s.def.id, s.def.key_groups, s.progress.steps, false);
			op_open_windows(s.op, put_open_window, &out);
		}
	}
	end_as_owner(&s);
}

/*
 * open_windows(name): what each window that has not fired yet would say if
 * it fired now, from the pipeline's committed state.
 */
Datum
windowing_open_windows(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int			parts = pipeline_parts(name, false);
	MemoryContext cxt;

	InitMaterializedSRF(fcinfo, 0);
	cxt = AllocSetContextCreate(CurrentMemoryContext, "open_windows row", ALLOCSET_DEFAULT_SIZES);
	for (int part = 0; part < parts; part++)
		open_windows_of(name, part, (ReturnSetInfo *) fcinfo->resultinfo, cxt);
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(windowing_lock_pipeline);

/* _lock_pipeline(name): pause, resume, drop and changes wait for the steps of every part. */
Datum
windowing_lock_pipeline(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));

	/* others may not hold up a pipeline's steps */
	(void) pipeline_parts(name, true);
	PG_RETURN_VOID();
}

/*
 * A rebuild needs every row its pipeline read still in the queue, and
 * times to order them by.
 */
static void
check_rebuild(Step *s)
{
	if (s->def.time_column == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rebuild pipeline \"%s\": it runs on processing time", s->def.name),
				 errdetail("Its rows took the clock of the steps that read them, which a rebuild cannot give them again.")));
	if (s->def.watermark_column)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rebuild pipeline \"%s\": its watermark comes from column \"%s\"",
						s->def.name, s->def.watermark_column),
				 errdetail("A rebuild replays rows in order of event time, and a watermark column's values hold in order of arrival.")));
	if (s->progress.tick_lo != NULL && catalog_queue_consumes(s->def.source))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot rebuild pipeline \"%s\": its queue \"%s\" does not keep the rows it consumed",
						s->def.name, get_rel_name(s->def.source)),
				 errhint("Rebuild pipelines over queues with retention 'keep' (alter_queue), or create a new pipeline and backfill it.")));
}

/* Deletes every row of a pipeline's result or late table. */
static void
empty_table(const char *table)
{
	if (SPI_execute(psprintf("DELETE FROM %s", table), false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not empty %s", table);
}

PG_FUNCTION_INFO_V1(windowing_rebuild);

/*
 * _rebuild(name): the pipeline forgets its windows, results, late rows and
 * cursor, and its next steps replay the rows of its queue committed now in
 * order of event time; returns how many.
 */
Datum
windowing_rebuild(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Step		s;
	char	   *snapshot;
	int64		rows;

	PreventCommandIfReadOnly("rebuild()");
	memset(&s, 0, sizeof(s));
	begin_as_owner(&s, name, 0, true);
	s.cxt = CurrentMemoryContext;
	load_step(&s, name, 0);
	refuse_join(&s.def, "rebuild");
	if (s.def.parallelism > 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rebuild pipeline \"%s\": it has %d parts", name, s.def.parallelism),
				 errhint("Change it to parallelism 1 with alter_pipeline(), rebuild it, then change it back.")));
	check_rebuild(&s);
	state_clear(s.def.id);
	empty_table(s.target.result_table);
	if (s.target.late_table)
		empty_table(s.target.late_table);
	snapshot = tick_replay_snapshot();
	rows = tick_replay_order(s.def.id, s.def.source, s.def.time_column, snapshot);
	catalog_start_replay(&s.def, snapshot, rows);
	end_as_owner(&s);
	PG_RETURN_INT64(rows);
}
