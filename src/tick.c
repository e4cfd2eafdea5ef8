/*
 * tick.c
 *		A pipeline's ticks of its queue, and the reader of a tick's rows.
 *
 * The queue follows PgQ: every queue row carries the id of the transaction
 * that inserted it (windowing_xid) and an arrival number (windowing_seq).
 * A "tick" is the set of rows committed between two snapshots, tick_lo and
 * tick_hi: visible in tick_hi, not in tick_lo.  A row whose transaction
 * commits late, after rows with higher ids were consumed, is simply not
 * visible in the earlier snapshot and lands in a later tick, so no row is
 * ever skipped, and any number of pipelines keep their own cursor on one
 * queue.  Within a tick rows go in arrival-number order; last_seq records
 * how far a tick was read when a step stopped inside it.
 *
 * A tick's rows reach the step through one interface (tick_read), from one
 * of three readers chosen here: the queue's heap through its arrival-number
 * index (queue_reader.c); a helper process running that scan, for a tick
 * of many rows (queue_helper.c); or a query, where the scan would not read
 * exactly what the query reads.
 */
#include "compat.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "miscadmin.h"

#include "distributed.h"
#include "owner.h"
#include "plans.h"
#include "queue_helper.h"
#include "queue_reader.h"
#include "tick.h"
#include "watermark.h"

struct TickReader
{
	QueueScan  *scan;			/* the heap scan; with a helper, for its
								 * relations and the rows' inputs */
	QueueHelper *helper;		/* NULL: no helper */
	bool		helper_values;	/* it sends the values, not the rows */
	HeapTupleData received;		/* the helper's last row */
	Datum	   *vals;
	bool	   *nulls;
	SPIPlanPtr	plan;			/* no scan: the query */
	ParamListInfo params;
};

/* The query reader's destination, handing each row on as the executor gives it. */
typedef struct RowPasser
{
	DestReceiver pub;
	TickRowFn	fn;
	void	   *arg;
	uint64		rows;
} RowPasser;

/* xmin and xmax of snapshot text "xmin:xmax:xip,..."; returns its xip. */
static const char *
snapshot_parts(const char *snap, uint64 *xmin, uint64 *xmax)
{
	char	   *end;

	*xmin = strtou64(snap, &end, 10);
	*xmax = strtou64(end + 1, &end, 10);
	return end + 1;
}

/*
 * Snapshot text "xmin:xmax:xip,..." with transaction "xid" added to the
 * running ones, if the snapshot would count it as committed.
 */
static char *
snapshot_with_running(const char *snap, uint64 xid)
{
	char	   *end;
	uint64		xmin;
	uint64		xmax;
	const char *xip = snapshot_parts(snap, &xmin, &xmax);
	StringInfoData out;
	bool		added = false;

	if (xid >= xmax)
		return pstrdup(snap);
	initStringInfo(&out);
	appendStringInfo(&out, UINT64_FORMAT ":" UINT64_FORMAT ":", Min(xmin, xid), xmax);
	while (*xip != '\0')
	{
		uint64		running = strtou64(xip, &end, 10);

		if (!added && xid <= running)
		{
			appendStringInfo(&out, UINT64_FORMAT ",", xid);
			added = true;
		}
		if (running != xid)
			appendStringInfo(&out, UINT64_FORMAT ",", running);
		xip = *end == ',' ? end + 1 : end;
	}
	if (!added)
		appendStringInfo(&out, UINT64_FORMAT ",", xid);
	out.data[--out.len] = '\0';	/* the last comma */
	return out.data;
}

/*
 * Snapshot text "xmin:xmax:xip,..." with transaction "xid" seen as
 * committed.  A snapshot taken before the transaction's id was assigned
 * has it at or past xmax, as running; ids between the old xmax and it stay
 * running, whatever became of them, so that a tick after the snapshot reads
 * their rows.
 */
static char *
snapshot_with_committed(const char *snap, uint64 xid)
{
	uint64		xmin;
	uint64		xmax;
	const char *xip = snapshot_parts(snap, &xmin, &xmax);
	StringInfoData out;

	if (xid < xmax)
		return pstrdup(snap);
	initStringInfo(&out);
	appendStringInfo(&out, UINT64_FORMAT ":" UINT64_FORMAT ":%s", xmin, xid + 1, xip);
	for (uint64 running = xmax; running < xid; running++)
		appendStringInfo(&out, "%s" UINT64_FORMAT, out.data[out.len - 1] == ':' ? "" : ",",
						 running);
	return out.data;
}

/*
 * What is committed now, as snapshot text, with the caller's transaction
 * (if it has an id) as "own" makes it.
 */
static char *
with_own(char *now, char *(*own) (const char *snap, uint64 xid))
{
	FullTransactionId xid = GetTopFullTransactionIdIfAny();

	if (!FullTransactionIdIsValid(xid))
		return now;
	return own(now, U64FromFullTransactionId(xid));
}

static char *
snapshot_now(char *(*own) (const char *snap, uint64 xid))
{
	Datum		snap;

	/* as a statement would take it: a new one, unless the isolation keeps one */
	PushActiveSnapshot(GetTransactionSnapshot());
	snap = OidFunctionCall0Coll(F_PG_CURRENT_SNAPSHOT, InvalidOid);
	PopActiveSnapshot();
	return with_own(OidOutputFunctionCall(F_PG_SNAPSHOT_OUT, snap), own);
}

/*
 * The snapshot of a rebuild's replay: what is committed now, and what the
 * caller's transaction wrote, which commits with the rebuild (a backfill
 * inserts its history and rebuilds in one transaction).
 */
char *
tick_replay_snapshot(void)
{
	return snapshot_now(snapshot_with_committed);
}

/*
 * The snapshot that ends a tick: what is committed now, with the step's
 * own transaction counted as running.  A snapshot leaves its own
 * transaction out, so the rows the caller's transaction inserted would be
 * in the tick: read by this step, but not by a helper process that cannot
 * see them, and any row the transaction inserts after the step would be
 * behind tick_lo for good.  Counted as running, they go to the first tick
 * after the commit, like any producer's.
 */
static char *
tick_snapshot(void)
{
	return snapshot_now(snapshot_with_running);
}

/*
 * tick_snapshot(), and the watermark of pipeline "upstream" (*watermark)
 * read by the same statement, so that the upstream's results the tick
 * holds are those of the windows that watermark fired.  WMK_NONE where
 * this very transaction wrote the upstream's row last (its step ran here,
 * and the tick leaves this transaction's rows out) or where it has none:
 * a watermark only moves on, so the next tick takes it.
 */
static char *
tick_snapshot_upstream(int32 upstream, int64 *watermark)
{
	Oid			type = INT4OID;
	Datum		arg = Int32GetDatum(upstream);
	bool		wm_null;
	bool		xid_null;
	bool		isnull;
	Datum		wm;
	Datum		written;
	char	   *now;

	if (plans_execute("SELECT pg_catalog.pg_current_snapshot()::pg_catalog.text, u.watermark, u.written "
					   "FROM windowing._upstream_watermark($1) u",
					   1, &type, &arg, NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the watermark of pipeline %d", upstream);
	now = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	wm = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &wm_null);
	written = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &xid_null);
	*watermark = wm_null || xid_null ||
		TransactionIdIsCurrentTransactionId(DatumGetTransactionId(written)) ?
		WMK_NONE : DatumGetInt64(wm);
	return with_own(now, snapshot_with_running);
}

/*
 * The snapshot a tick opened now would end at, and with "upstream" the
 * watermark that goes with it (tick_snapshot_upstream).
 */
char *
tick_now(int32 upstream, int64 *watermark)
{
	*watermark = WMK_NONE;
	return upstream ? tick_snapshot_upstream(upstream, watermark) : tick_snapshot();
}

/*
 * Where the ticks opened from now on end, if not NULL: every part of a
 * pipeline whose parallelism changes reads up to the same snapshot.
 */
static char *forced_until = NULL;
static int64 forced_watermark = WMK_NONE;

void
tick_force(char *until, int64 watermark)
{
	forced_until = until;
	forced_watermark = watermark;
}

/* A queue's identity sequence, as queue_sequence found it. */
typedef struct QueueSequence
{
	Oid			source;
	Oid			seq;			/* InvalidOid: none */
} QueueSequence;

static HTAB *queue_sequences = NULL;

/* A queue's relcache entry went: its sequence may have gone with it. */
static void
forget_sequence(Datum arg, Oid relid)
{
	if (queue_sequences == NULL)
		return;
	if (relid == InvalidOid)
	{
		hash_destroy(queue_sequences);
		queue_sequences = NULL;
	}
	else
		(void) hash_search(queue_sequences, &relid, HASH_REMOVE, NULL);
}

/* The table of queue_sequence's findings, made on first use. */
static HTAB *
sequences_table(void)
{
	static bool registered = false;
	HASHCTL		ctl;

	if (queue_sequences != NULL)
		return queue_sequences;
	if (!registered)
		CacheRegisterRelcacheCallback(forget_sequence, (Datum) 0);
	registered = true;
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(QueueSequence);
	ctl.hcxt = CacheMemoryContext;
	queue_sequences = hash_create("windowing queue sequences", 16, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	return queue_sequences;
}

/*
 * The identity sequence of the queue's arrival numbers, looked up in
 * pg_depend once per queue rather than at every step, where it was a
 * twentieth of a one-row step.
 */
static Oid
queue_sequence(Oid source)
{
	QueueSequence *qs = hash_search(sequences_table(), &source, HASH_FIND, NULL);
	Oid			seq;

	if (qs != NULL)
		return qs->seq;
	seq = getIdentitySequence(source, get_attnum(source, "windowing_seq"), true);
	/* the lookup may have taken invalidations, which empty the table */
	qs = hash_search(sequences_table(), &source, HASH_ENTER, NULL);
	qs->seq = seq;
	return seq;
}

/*
 * The last arrival number the queue's identity sequence gave, or for the
 * shard of a distributed queue, which has none, the node's sequence that
 * numbers its rows (distributed.c).  The sequence is the queue's: its owner
 * reads it, since the pipeline's owner need not have the rights of the
 * queue's (pipelines made before 0.5, or a queue given to another role
 * since).
 */
static int64
queue_numbered(Oid source)
{
	LOCAL_FCINFO(fcinfo, 1);
	Oid			seq = queue_sequence(source);
	Oid			save_user;
	int			save_sec;
	Datum		last;

	if (!OidIsValid(seq))
		seq = distributed_arrival_seq();
	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = ObjectIdGetDatum(seq);
	fcinfo->args[0].isnull = false;
	/* an error on the way restores the user with the transaction's abort */
	GetUserIdAndSecContext(&save_user, &save_sec);
	SetUserIdAndSecContext(owner_of_table(source), save_sec | SECURITY_LOCAL_USERID_CHANGE);
	last = pg_sequence_last_value(fcinfo);
	SetUserIdAndSecContext(save_user, save_sec);
	return fcinfo->isnull ? 0 : DatumGetInt64(last);
}

/* Whether no transaction under scan_next_xid was running at tick_lo. */
static bool
scan_next_settled(const PipelineProgress *p)
{
	uint64		xmin;
	uint64		xmax;

	if (p->tick_lo == NULL || p->scan_next_xid == NULL)
		return false;
	(void) snapshot_parts(p->tick_lo, &xmin, &xmax);
	return xmin >= strtou64(p->scan_next_xid, NULL, 10);
}

/*
 * Opens a tick ending now, scanning from scan_from.  Without scan_from
 * every tick would read the queue from its start, and a step would cost
 * the queue's length rather than its new rows.  A row's transaction id is
 * assigned before its arrival number (the queue's column order), so every
 * row numbered up to the arrival number read below belongs to a
 * transaction whose id is below the next id to be assigned, read after it;
 * once no transaction under that id runs at the start of a tick (it is at
 * most tick_lo's xmin), every such row is either before tick_lo or aborted,
 * and the number becomes scan_from.  The caller's own transaction id is no
 * such bound: it may have been assigned long before (an earlier write, an
 * earlier step in the same transaction), with producers started since.
 */
void
tick_open(PipelineProgress *p, Oid source, int32 upstream)
{
	if (scan_next_settled(p))
	{
		p->scan_from = p->scan_next;
		p->scan_next_xid = NULL;
	}
	if (p->scan_next_xid == NULL)
	{
		p->scan_next = queue_numbered(source);
		p->scan_next_xid = psprintf(UINT64_FORMAT,
									U64FromFullTransactionId(ReadNextFullTransactionId()));
	}
	/* a fresh snapshot, not the caller's: everything committed now */
	if (forced_until != NULL)
	{
		p->tick_hi = pstrdup(forced_until);
		p->tick_watermark = forced_watermark;
	}
	else
		p->tick_hi = tick_now(upstream, &p->tick_watermark);
	p->last_seq = p->scan_from;
}


/* The tick is consumed: the next one starts where it ended. */
void
tick_close(PipelineProgress *p)
{
	p->tick_lo = p->tick_hi;
	p->tick_hi = NULL;
	p->tick_watermark = WMK_NONE;
	p->last_seq = p->scan_from;
}

static Datum
snapshot_datum(const char *text)
{
	return OidInputFunctionCall(F_PG_SNAPSHOT_IN, (char *) text, InvalidOid, -1);
}

/* The queue's name as the alias its rows go by. */
static const char *
source_alias(Oid source)
{
	return quote_identifier(get_rel_name(source));
}

/*
 * The rows of the open tick (snapshots $1 and $2) past arrival number $3,
 * in arrival order, from the source aliased by its own name, as the
 * aggregates' inputs were deparsed, so a whole-row input
 * (windowing.collect(clicks)) reads the row.
 */
static char *
tick_rows_sql(Oid source)
{
	const char *q = source_alias(source);

	return psprintf("FROM %s AS %s "
					"WHERE pg_catalog.pg_visible_in_snapshot(%s.windowing_xid, $1) "
					"AND ($2 IS NULL OR NOT pg_catalog.pg_visible_in_snapshot(%s.windowing_xid, $2)) "
					"AND %s.windowing_seq OPERATOR(pg_catalog.>) $3 "
					"ORDER BY %s.windowing_seq",
					catalog_relation_name(source, "source table"), q, q, q, q, q);
}

/*
 * SELECT and the values a row gives (TickColumns), from the source aliased
 * by its own name.  Rows to skip (parameter skip_param, their arrival
 * numbers) are read without their inputs, and a last column says which
 * rows they are.
 */
static void
append_select_list(StringInfo sql, const TickColumns *c, int skip_param)
{
	const char *q = source_alias(c->source);
	char	   *skipped = NULL;
	ListCell   *lc;

	if (skip_param > 0)
		skipped = psprintf("%s.windowing_seq OPERATOR(pg_catalog.=) ANY ($%d)", q, skip_param);
	appendStringInfoString(sql, "SELECT ");
	for (int i = 0; i < c->ncolumns; i++)
		appendStringInfo(sql, "%s%s", i > 0 ? ", " : "",
						 c->columns[i] == 0 ? "NULL::pg_catalog.int8" :
						 psprintf("%s.%s", q, quote_identifier(get_attname(c->source, c->columns[i], false))));
	foreach(lc, c->inputs_sql)
	{
		if (skipped)
			appendStringInfo(sql, ", CASE WHEN %s THEN NULL ELSE %s END", skipped,
							 (char *) lfirst(lc));
		else
			appendStringInfo(sql, ", %s", (char *) lfirst(lc));
	}
	if (skipped)
		appendStringInfo(sql, ", %s", skipped);
}

static SPIPlanPtr
prepare_plan(const char *sql, int nargs, Oid *types)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, types);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	return plan;
}

/* The query reading a chunk of the open tick ($5: rows to skip). */
static SPIPlanPtr
prepare_reader(const TickColumns *c, bool skipping)
{
	StringInfoData sql;
	Oid			types[5] = {PG_SNAPSHOTOID, PG_SNAPSHOTOID, INT8OID, INT8OID, INT8ARRAYOID};

	initStringInfo(&sql);
	append_select_list(&sql, c, skipping ? 5 : 0);
	appendStringInfo(&sql, " %s LIMIT $4", tick_rows_sql(c->source));
	return prepare_plan(sql.data, skipping ? 5 : 4, types);
}

/* A list of arrival numbers as an int8[]. */
static Datum
seq_array(List *seqs)
{
	int			n = list_length(seqs);
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		d[i] = Int64GetDatum(*(int64 *) list_nth(seqs, i));
	return PointerGetDatum(construct_array(d, n, INT8OID, sizeof(int64), true,
										   TYPALIGN_DOUBLE));
}

/* The query reader: its plan and its parameters but the chunk's. */
static void
begin_query(TickReader *r, const TickColumns *c, Datum tick_hi, Datum tick_lo, List *skip)
{
	r->plan = prepare_reader(c, skip != NIL);
	r->params = makeParamList(5);
	for (int i = 0; i < 5; i++)
	{
		r->params->params[i].pflags = PARAM_FLAG_CONST;
		r->params->params[i].ptype = i < 2 ? PG_SNAPSHOTOID : i < 4 ? INT8OID : INT8ARRAYOID;
		r->params->params[i].isnull = false;
	}
	r->params->params[0].value = tick_hi;
	r->params->params[1].isnull = tick_lo == (Datum) 0;
	r->params->params[1].value = tick_lo;
	r->params->numParams = skip != NIL ? 5 : 4;
	if (skip != NIL)
		r->params->params[4].value = seq_array(skip);
}

/*
 * A helper process reading the tick, if it has enough rows for one to pay
 * and another process can read what this transaction would.  Where every
 * input is a column it sends the rows' values, else the rows, whose inputs
 * the step computes.
 */
static void
begin_helper(TickReader *r, const TickColumns *c, Datum tick_hi, Datum tick_lo,
			 int64 after_seq, int64 max_rows)
{
	int64		expected;
	AttrNumber *attnos;
	Relation	heap;
	Relation	index;

	if (queue_helper_min_rows <= 0 || !queue_scan_seen_by_others(r->scan))
		return;
	expected = queue_scan_rows_past(r->scan, after_seq);
	if (max_rows > 0)
		expected = Min(expected, max_rows);
	if (expected < queue_helper_min_rows)
		return;
	attnos = queue_scan_value_columns(r->scan, c->inputs);
	queue_scan_relations(r->scan, &heap, &index);
	r->helper = queue_helper_start(heap, index, tick_hi, tick_lo, after_seq, attnos,
								   attnos ? c->ncolumns + list_length(c->inputs) : 0);
	r->helper_values = r->helper != NULL && attnos != NULL;
	ereport(DEBUG1,
			(errmsg_internal(r->helper == NULL ?
							 "no helper process could start to read the tick of queue \"%s\"" :
							 r->helper_values ?
							 "a helper process reads the columns of the tick of queue \"%s\"" :
							 "a helper process reads the rows of the tick of queue \"%s\"",
							 RelationGetRelationName(heap))));
}

/*
 * A reader of the open tick's rows past p->last_seq, at most max_rows of
 * them (<= 0: all).  Rows whose arrival numbers are in "skip" (int64 *)
 * are read through the query, without their inputs.
 */
TickReader *
tick_reader_begin(const TickColumns *c, const PipelineProgress *p, List *skip,
				  int64 max_rows)
{
	TickReader *r = palloc0(sizeof(TickReader));
	Datum		tick_hi = snapshot_datum(p->tick_hi);
	Datum		tick_lo = p->tick_lo ? snapshot_datum(p->tick_lo) : (Datum) 0;

	r->vals = palloc(sizeof(Datum) * (c->ncolumns + list_length(c->inputs) + 1));
	r->nulls = palloc(sizeof(bool) * (c->ncolumns + list_length(c->inputs) + 1));
	r->scan = skip != NIL ? NULL :
		queue_scan_open(c->source, c->columns, c->ncolumns, c->inputs, tick_hi, tick_lo);
	if (r->scan == NULL)
	{
		begin_query(r, c, tick_hi, tick_lo, skip);
		return r;
	}
	begin_helper(r, c, tick_hi, tick_lo, p->last_seq, max_rows);
	if (r->helper == NULL)
		queue_scan_start(r->scan, p->last_seq);
	return r;
}

/* The next row of the scan or the helper. */
static bool
next_row(TickReader *r)
{
	if (r->helper_values)
		return queue_helper_next_values(r->helper, r->vals, r->nulls);
	if (r->helper == NULL)
		return queue_scan_next(r->scan, r->vals, r->nulls);
	if (!queue_helper_next(r->helper, &r->received))
		return false;
	queue_scan_project(r->scan, &r->received, r->vals, r->nulls);
	return true;
}

static bool
passer_receive(TupleTableSlot *slot, DestReceiver *self)
{
	RowPasser  *rp = (RowPasser *) self;

	slot_getallattrs(slot);
	rp->rows++;
	return rp->fn(slot->tts_values, slot->tts_isnull, rp->arg);
}

static void
passer_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
passer_shutdown(DestReceiver *self)
{
}

/*
 * Gives fn up to "want" more rows of the tick, the first past after_seq;
 * returns how many it gave (fewer: the tick has no more, or fn said stop).
 */
uint64
tick_read(TickReader *r, int64 after_seq, int64 want, TickRowFn fn, void *arg)
{
	RowPasser	rp = {{passer_receive, passer_startup, passer_shutdown,
	passer_shutdown, DestNone}, fn, arg, 0};
	SPIExecuteOptions options = {0};

	if (r->scan != NULL)
	{
		while (rp.rows < (uint64) want && next_row(r))
		{
			rp.rows++;
			if (!fn(r->vals, r->nulls, arg))
				break;
		}
		return rp.rows;
	}
	options.params = r->params;
	options.dest = &rp.pub;
	r->params->params[2].value = Int64GetDatum(after_seq);
	r->params->params[3].value = Int64GetDatum(want);
	/* read with a snapshot no older than tick_hi */
	if (SPI_execute_plan_extended(r->plan, &options) < 0)
		elog(ERROR, "could not read the queue");
	return rp.rows;
}

void
tick_reader_end(TickReader *r)
{
	if (r->helper)
		queue_helper_end(r->helper);
	if (r->scan)
		queue_scan_end(r->scan);
}

/* The arrival numbers a query of them gave. */
static int64 *
seqs_of_result(int *n)
{
	int64	   *seqs = palloc(sizeof(int64) * Max(SPI_processed, 1));
	bool		isnull;

	for (uint64 i = 0; i < SPI_processed; i++)
		seqs[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
											  SPI_tuptable->tupdesc, 1, &isnull));
	*n = SPI_processed;
	return seqs;
}

/* The arrival numbers of the open tick's rows past p->last_seq. */
int64 *
tick_seqs(Oid source, const PipelineProgress *p, int *n)
{
	Oid			types[3] = {PG_SNAPSHOTOID, PG_SNAPSHOTOID, INT8OID};
	Datum		args[3];
	char		nulls[3] = {' ', p->tick_lo ? ' ' : 'n', ' '};
	const char *q = source_alias(source);

	args[0] = snapshot_datum(p->tick_hi);
	args[1] = p->tick_lo ? snapshot_datum(p->tick_lo) : (Datum) 0;
	args[2] = Int64GetDatum(p->last_seq);
	if (SPI_execute_with_args(psprintf("SELECT %s.windowing_seq %s", q, tick_rows_sql(source)),
							  3, types, args, nulls, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the queue");
	return seqs_of_result(n);
}

/*
 * A replay of the queue (rebuild): the rows visible in a snapshot, in order
 * of event time (rows without one first), then of arrival.  The rebuild
 * sorts them once, into windowing.replay_order (their arrival numbers,
 * numbered in that order); steps read them from there, past the rows
 * already replayed, through its primary key and the queue's index on
 * arrival numbers, so that a step costs the rows it reads, not a sort of
 * what is left of the history.
 */
struct ReplayReader
{
	Portal		portal;
	int			nvalues;
	Datum	   *vals;
	bool	   *nulls;
};

/* The replay's rows of pipeline $1 past the $2 first, in its order. */
static char *
replay_rows_sql(Oid source)
{
	const char *q = source_alias(source);

	return psprintf("FROM windowing.replay_order r JOIN %s AS %s "
					"ON %s.windowing_seq OPERATOR(pg_catalog.=) r.seq "
					"WHERE r.pipeline_id OPERATOR(pg_catalog.=) $1 "
					"AND r.ord OPERATOR(pg_catalog.>) $2 ORDER BY r.ord",
					catalog_relation_name(source, "source table"), q, q);
}

/*
 * Orders the rows of the queue visible in "snapshot" for pipeline "id"'s
 * replay; returns how many there are.
 */
int64
tick_replay_order(int32 id, Oid source, const char *time_column, const char *snapshot)
{
	const char *q = source_alias(source);
	char	   *ts = psprintf("%s.%s", q, quote_identifier(time_column));
	Oid			types[2] = {INT4OID, TEXTOID};
	Datum		args[2] = {Int32GetDatum(id), CStringGetTextDatum(snapshot)};

	tick_replay_forget(id);
	if (SPI_execute_with_args(psprintf("INSERT INTO windowing.replay_order (pipeline_id, ord, seq) "
									   "SELECT $1, pg_catalog.row_number() OVER (ORDER BY %s NULLS FIRST, "
									   "%s.windowing_seq), %s.windowing_seq FROM %s AS %s "
									   "WHERE pg_catalog.pg_visible_in_snapshot(%s.windowing_xid, "
									   "$2::pg_catalog.pg_snapshot)",
									   ts, q, q, catalog_relation_name(source, "source table"), q, q),
							  2, types, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not order the rows of a replay");
	return SPI_processed;
}

/* The replay of pipeline "id" is over: its order goes. */
void
tick_replay_forget(int32 id)
{
	Oid			type = INT4OID;
	Datum		arg = Int32GetDatum(id);

	if (SPI_execute_with_args("DELETE FROM windowing.replay_order "
							  "WHERE pipeline_id OPERATOR(pg_catalog.=) $1",
							  1, &type, &arg, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete the order of a replay");
}

/* The replay's rows past the p->replay_done first; rows to skip as for ticks. */
ReplayReader *
tick_replay_begin(const TickColumns *c, int32 id, const PipelineProgress *p, List *skip)
{
	ReplayReader *r = palloc0(sizeof(ReplayReader));
	Oid			types[3] = {INT4OID, INT8OID, INT8ARRAYOID};
	Datum		values[3] = {Int32GetDatum(id), Int64GetDatum(p->replay_done)};
	StringInfoData sql;

	if (skip != NIL)
		values[2] = seq_array(skip);
	initStringInfo(&sql);
	append_select_list(&sql, c, skip != NIL ? 3 : 0);
	appendStringInfo(&sql, " %s", replay_rows_sql(c->source));
	r->portal = SPI_cursor_open(NULL, prepare_plan(sql.data, skip != NIL ? 3 : 2, types),
								values, NULL, false);
	r->nvalues = c->ncolumns + list_length(c->inputs_sql) + (skip != NIL ? 1 : 0);
	r->vals = palloc(sizeof(Datum) * r->nvalues);
	r->nulls = palloc(sizeof(bool) * r->nvalues);
	return r;
}

/* Gives fn up to "want" more rows; returns how many (fewer: no more, or fn said stop). */
uint64
tick_replay_read(ReplayReader *r, int64 want, TickRowFn fn, void *arg)
{
	uint64		given = 0;
	SPITupleTable *tt;
	uint64		n;

	SPI_cursor_fetch(r->portal, true, want);
	/* fn may run statements of its own */
	tt = SPI_tuptable;
	n = SPI_processed;
	for (uint64 i = 0; i < n; i++)
	{
		heap_deform_tuple(tt->vals[i], tt->tupdesc, r->vals, r->nulls);
		given++;
		if (!fn(r->vals, r->nulls, arg))
			break;
	}
	SPI_freetuptable(tt);
	return given;
}

void
tick_replay_end(ReplayReader *r)
{
	SPI_cursor_close(r->portal);
}

/* The arrival numbers of the replay's rows past the p->replay_done first, in order. */
int64 *
tick_replay_seqs(Oid source, int32 id, const PipelineProgress *p, int *n)
{
	Oid			types[2] = {INT4OID, INT8OID};
	Datum		values[2] = {Int32GetDatum(id), Int64GetDatum(p->replay_done)};

	if (SPI_execute_with_args(psprintf("SELECT %s.windowing_seq %s", source_alias(source),
									   replay_rows_sql(source)),
							  2, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the queue");
	return seqs_of_result(n);
}
