/*
 * catalog.c
 *		The statements on the pipeline catalog, windowing.pipeline.
 *
 * A step reads its pipeline's definition and progress into typed structs
 * (and a join pipeline's two inputs, windowing.join_input) and writes its
 * progress back from them; the worker and the reclaim of
 * queues list pipelines and count their failures.  What every step and
 * every round of the worker reads (the pipeline's row, its owner, the
 * running pipelines) is read from the heap without a statement, and what
 * every step writes (its progress) written there; the rest goes through
 * statements.  Either way columns are read and written by name
 * (expressions are named with AS), never by position, so the column lists
 * can change without their readers getting another column's value.  The statements keep the rules of the
 * extension's own SQL: every operator qualified, plans kept by their text
 * (plans.c).  Callers come from above (pipeline.c, worker.c, queue.c);
 * this file calls none of them.
 */
#include "compat.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"
#include "utils/varlena.h"

#include "catalog.h"
#include "heap_rows.h"
#include "plans.h"
#include "watermark.h"

static void pg_attribute_noreturn()
no_pipeline(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("pipeline \"%s\" does not exist", name)));
}

/* A statement whose one parameter is a pipeline's name. */
static int
execute_for(const char *sql, const char *name, bool read_only, long count)
{
	Oid			argtype = TEXTOID;
	Datum		arg = CStringGetTextDatum(name);

	return plans_execute(sql, 1, &argtype, &arg, NULL, read_only, count);
}

/* The number of column "column" in the last result. */
static int
fnumber(const char *column)
{
	int			fnum = SPI_fnumber(SPI_tuptable->tupdesc, column);

	if (fnum <= 0)
		elog(ERROR, "no column \"%s\" in a result on windowing.pipeline", column);
	return fnum;
}

/* Column "column" of row "row" of the last result. */
static Datum
value(uint64 row, const char *column, bool *isnull)
{
	return SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, fnumber(column), isnull);
}

static bool
bool_value(const char *column)
{
	bool		isnull;

	return DatumGetBool(value(0, column, &isnull));
}

/* Typed values of row "row" (the _value forms: of the first row). */
static Oid
oid_at(uint64 row, const char *column)
{
	bool		isnull;
	Datum		d = value(row, column, &isnull);

	return isnull ? InvalidOid : DatumGetObjectId(d);
}

static int64
int8_at(uint64 row, const char *column, int64 if_null)
{
	bool		isnull;
	Datum		d = value(row, column, &isnull);

	return isnull ? if_null : DatumGetInt64(d);
}

static char *
text_at(uint64 row, const char *column)
{
	bool		isnull;
	Datum		d = value(row, column, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

static char **
names_at(uint64 row, const char *column, int *n)
{
	bool		isnull;
	Datum	   *items;
	char	  **names;

	deconstruct_array(DatumGetArrayTypeP(value(row, column, &isnull)), TEXTOID, -1, false,
					  TYPALIGN_INT, &items, NULL, n);
	names = palloc(sizeof(char *) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
		names[i] = TextDatumGetCString(items[i]);
	return names;
}

static Oid
oid_value(const char *column)
{
	return oid_at(0, column);
}

/* A pipeline's definition as its last step found it, and whether it matched its stamp. */
typedef struct StampCheck
{
	int32		id;				/* hash key */
	char	   *stamp;			/* in TopMemoryContext */
	StringInfoData definition;	/* definition_bytes() */
	bool		matches;
} StampCheck;

/*
 * A row of windowing.pipeline read from its heap through the name's unique
 * index, past row security: its callers check who may act on it.  Reading
 * the row of a step's pipeline through a statement cost a seventh of a
 * one-row step.
 */
typedef struct PipelineRow
{
	Relation	rel;
	HeapTuple	tup;			/* a copy; NULL: no such pipeline */
	Datum	   *values;			/* its columns (row_set) */
	bool	   *isnull;
} PipelineRow;

/*
 * windowing.pipeline's columns by name, from its tuple descriptor: the
 * catalog cache's lookup of each of the sixty columns a step reads and
 * writes cost a tenth of a one-row step.  Forgotten when the table's
 * relcache entry goes (an upgrade that adds columns, a new extension).
 */
typedef struct ColumnNumber
{
	char		name[NAMEDATALEN];
	AttrNumber	attnum;
} ColumnNumber;

static HTAB *pipeline_columns = NULL;
static Oid	pipeline_columns_of = InvalidOid;

static void
forget_columns(Datum arg, Oid relid)
{
	if (pipeline_columns != NULL && (relid == InvalidOid || relid == pipeline_columns_of))
	{
		hash_destroy(pipeline_columns);
		pipeline_columns = NULL;
	}
}

static void
learn_columns(Relation rel)
{
	static bool registered = false;
	TupleDesc	desc = RelationGetDescr(rel);
	HASHCTL		ctl;

	if (!registered)
		CacheRegisterRelcacheCallback(forget_columns, (Datum) 0);
	registered = true;
	forget_columns((Datum) 0, InvalidOid);
	ctl.keysize = NAMEDATALEN;
	ctl.entrysize = sizeof(ColumnNumber);
	ctl.hcxt = CacheMemoryContext;
	pipeline_columns = hash_create("windowing pipeline columns", desc->natts, &ctl,
								   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	pipeline_columns_of = RelationGetRelid(rel);
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);

		if (!att->attisdropped)
			((ColumnNumber *) hash_search(pipeline_columns, NameStr(att->attname), HASH_ENTER,
										  NULL))->attnum = att->attnum;
	}
}

/* The number of column "column" of windowing.pipeline, open as "rel". */
static AttrNumber
column_number(Relation rel, const char *column)
{
	ColumnNumber *c;

	if (pipeline_columns == NULL || pipeline_columns_of != RelationGetRelid(rel))
		learn_columns(rel);
	c = hash_search(pipeline_columns, column, HASH_FIND, NULL);
	if (c == NULL)
		elog(ERROR, "no column \"%s\" in windowing.pipeline", column);
	return c->attnum;
}

/*
 * The row is "tup" (NULL: none), its columns taken apart at once: a step
 * reads most of them, each of which heap_getattr would find from the
 * start of the row.  The arrays of an earlier row of r are reused.
 */
static void
row_set(PipelineRow *r, HeapTuple tup)
{
	TupleDesc	desc = RelationGetDescr(r->rel);

	r->tup = tup;
	if (tup == NULL)
		return;
	if (r->values == NULL)
	{
		r->values = palloc(sizeof(Datum) * desc->natts);
		r->isnull = palloc(sizeof(bool) * desc->natts);
	}
	heap_deform_tuple(tup, desc, r->values, r->isnull);
}

/*
 * The row of part "part" of pipeline "name" as of the current statement
 * or, with "latest", of now, the caller's own changes included, as a
 * statement run now would see it (after waiting for the pipeline's lock,
 * the latest row is the one to act on).  The table stays open until
 * row_close.
 */
static Relation
open_pipelines(void)
{
	return windowing_table_open("pipeline", AccessShareLock);
}

static void
row_read(PipelineRow *r, const char *name, int part, bool latest)
{
	Snapshot	snapshot;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;

	r->rel = open_pipelines();
	r->values = NULL;
	if (latest)
		CommandCounterIncrement();
	snapshot = RegisterSnapshot(latest ? GetLatestSnapshot() :
								ActiveSnapshotSet() ? GetActiveSnapshot() :
								GetTransactionSnapshot());
	ScanKeyEntryInitialize(&key[0], 0, column_number(r->rel, "name"),
						   BTEqualStrategyNumber, InvalidOid, DEFAULT_COLLATION_OID,
						   F_TEXTEQ, CStringGetTextDatum(name));
	ScanKeyEntryInitialize(&key[1], 0, column_number(r->rel, "part"),
						   BTEqualStrategyNumber, InvalidOid, InvalidOid,
						   F_INT4EQ, Int32GetDatum(part));
	scan = systable_beginscan(r->rel, get_relname_relid("pipeline_name_key",
														RelationGetNamespace(r->rel)),
							  true, snapshot, 2, key);
	tup = systable_getnext(scan);
	row_set(r, HeapTupleIsValid(tup) ? heap_copytuple(tup) : NULL);
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
}

static void
row_close(PipelineRow *r)
{
	table_close(r->rel, AccessShareLock);
}

/* Column "column" of the row, and its attribute (*att) if asked for. */
static Datum
row_datum(const PipelineRow *r, const char *column, bool *isnull, Form_pg_attribute *att)
{
	AttrNumber	attnum = column_number(r->rel, column);

	if (att)
		*att = TupleDescAttr(RelationGetDescr(r->rel), attnum - 1);
	*isnull = r->isnull[attnum - 1];
	return r->values[attnum - 1];
}

/* A column as its type's output function writes it (as ::text does), or NULL. */
static char *
row_text(const PipelineRow *r, const char *column)
{
	bool		isnull;
	Form_pg_attribute att;
	Datum		d = row_datum(r, column, &isnull, &att);
	Oid			output;
	bool		varlena;

	if (isnull)
		return NULL;
	getTypeOutputInfo(att->atttypid, &output, &varlena);
	return OidOutputFunctionCall(output, d);
}

/* An int or bigint column, or if_null. */
static int64
row_int8(const PipelineRow *r, const char *column, int64 if_null)
{
	bool		isnull;
	Form_pg_attribute att;
	Datum		d = row_datum(r, column, &isnull, &att);

	if (isnull)
		return if_null;
	return att->atttypid == INT4OID ? DatumGetInt32(d) : DatumGetInt64(d);
}

/* An OID column (regclass, regtype, regrole), or InvalidOid. */
static Oid
row_oid(const PipelineRow *r, const char *column)
{
	bool		isnull;
	Datum		d = row_datum(r, column, &isnull, NULL);

	return isnull ? InvalidOid : DatumGetObjectId(d);
}

static bool
row_bool(const PipelineRow *r, const char *column)
{
	bool		isnull;
	Datum		d = row_datum(r, column, &isnull, NULL);

	return !isnull && DatumGetBool(d);
}

static Interval *
row_interval(const PipelineRow *r, const char *column)
{
	bool		isnull;
	Datum		d = row_datum(r, column, &isnull, NULL);

	return isnull ? NULL : DatumGetIntervalP(d);
}

/* Whether the pipeline's state is 'running'. */
static bool
row_running(const PipelineRow *r)
{
	char	   *state = row_text(r, "state");

	return state != NULL && strcmp(state, "running") == 0;
}

/* A name[] column's names. */
static char **
row_names(const PipelineRow *r, const char *column, int *n)
{
	bool		isnull;
	Datum	   *items;
	char	  **names;

	deconstruct_array(DatumGetArrayTypeP(row_datum(r, column, &isnull, NULL)), NAMEOID,
					  NAMEDATALEN, false, TYPALIGN_CHAR, &items, NULL, n);
	names = palloc(sizeof(char *) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
		names[i] = pstrdup(NameStr(*DatumGetName(items[i])));
	return names;
}

/*
 * The stamped columns of a pipeline's row, as bytes: equal bytes are an
 * equal definition (unequal ones are checked again).
 */
static void
definition_bytes(const PipelineRow *r, StringInfo buf)
{
	const char *const columns[] = {"time_column", "time_type", "key_columns", "assigner",
	"aggregates"};

	for (int i = 0; i < lengthof(columns); i++)
	{
		bool		isnull;
		Form_pg_attribute att;
		Datum		d = row_datum(r, columns[i], &isnull, &att);

		appendStringInfoChar(buf, isnull ? 'n' : 'v');
		if (isnull)
			continue;
		if (att->attbyval)
			appendBinaryStringInfo(buf, (const char *) &d, sizeof(Datum));
		else if (att->attlen > 0)	/* name */
			appendBinaryStringInfo(buf, DatumGetPointer(d), att->attlen);
		else
		{
			struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(d));
			int			len = VARSIZE_ANY(v);

			appendBinaryStringInfo(buf, (const char *) &len, sizeof(len));
			appendBinaryStringInfo(buf, (const char *) v, len);
		}
	}
}

/*
 * Does the pipeline's definition still match the stamp it was created
 * with (_definition_stamp)?  The stamp is an SQL function that costs a
 * tenth of a one-row step, so each process remembers the answer for the
 * definition (as bytes, to see it change) and stamp it was given, and asks
 * again when either changes, as catalog_load_pipeline read the row: with
 * a fresh snapshot, since the step may have waited for the pipeline's lock
 * while its owner changed.
 */
static bool
stamp_matches(const PipelineRow *r, int32 id, const char *stamp)
{
	static HTAB *checks = NULL;
	StampCheck *c;
	bool		found;
	Oid			type = INT4OID;
	Datum		arg = Int32GetDatum(id);
	bool		isnull;
	StringInfoData definition;

	if (checks == NULL)
	{
		HASHCTL		ctl = {.keysize = sizeof(int32),.entrysize = sizeof(StampCheck)};

		checks = hash_create("windowing definition stamps", 16, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	initStringInfo(&definition);
	definition_bytes(r, &definition);
	c = hash_search(checks, &id, HASH_ENTER, &found);
	if (found && c->stamp != NULL && strcmp(c->stamp, stamp) == 0 &&
		c->definition.len == definition.len &&
		memcmp(c->definition.data, definition.data, definition.len) == 0)
		return c->matches;
	if (found && c->stamp != NULL)
	{
		pfree(c->stamp);
		pfree(c->definition.data);
	}
	c->stamp = NULL;
	if (plans_execute("SELECT definition_stamp OPERATOR(pg_catalog.=) windowing._definition_stamp("
					   "time_column, time_type, key_columns, assigner, aggregates) "
					   "FROM windowing.pipeline WHERE id OPERATOR(pg_catalog.=) $1",
					   1, &type, &arg, NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not check the definition of pipeline %d", id);
	c->matches = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
											&isnull));
	c->definition.data = MemoryContextAlloc(TopMemoryContext, definition.len + 1);
	memcpy(c->definition.data, definition.data, definition.len + 1);
	c->definition.len = c->definition.maxlen = definition.len;
	c->stamp = MemoryContextStrdup(TopMemoryContext, stamp);
	return c->matches;
}

/*
 * An int column of part 0 of pipeline "name", the row that names the
 * pipeline, as of now; if_none if there is no such pipeline.
 */
static int64
first_part_int(const char *name, const char *column, int64 if_none)
{
	PipelineRow r;
	int64		v = if_none;

	row_read(&r, name, 0, true);
	if (r.tup != NULL)
		v = row_int8(&r, column, if_none);
	row_close(&r);
	return v;
}

void
catalog_load_pipeline(const char *name, int part, PipelineDef *def, PipelineProgress *progress)
{
	PipelineRow r;
	bool		isnull;
	Datum		assigner;
	char	   *text;

	row_read(&r, name, part, true);
	if (r.tup == NULL)
		no_pipeline(name);
	def->id = (int32) row_int8(&r, "id", 0);
	def->name = pstrdup(name);
	def->part = part;
	def->parallelism = (int) row_int8(&r, "parallelism", 1);
	def->first_id = part == 0 ? def->id : (int32) first_part_int(name, "id", 0);
	def->source = row_oid(&r, "source");
	def->time_column = row_text(&r, "time_column");
	def->time_type = row_oid(&r, "time_type");
	def->is_ts = def->time_type != INT8OID;
	def->keys = row_names(&r, "key_columns", &def->nkeys);
	assigner = row_datum(&r, "assigner", &isnull, NULL);
	def->assigner = isnull ? NULL : DatumGetHeapTupleHeader(assigner);
	def->aggregates = row_text(&r, "aggregates");
	def->max_out_of_orderness = row_interval(&r, "max_out_of_orderness");
	def->allowed_lateness = row_interval(&r, "allowed_lateness");
	def->result_table = row_oid(&r, "result_table");
	def->late_table = row_oid(&r, "late_table");
	def->append = strcmp(row_text(&r, "emit"), "append") == 0;
	def->idle_timeout = row_interval(&r, "idle_timeout");
	def->sliced = row_bool(&r, "sliced");
	def->cleaned_until = row_int8(&r, "cleaned_until", PG_INT64_MIN);
	def->route_errors = strcmp(row_text(&r, "on_error"), "route") == 0;
	def->trigger = row_text(&r, "trigger");
	def->watermark_column = row_text(&r, "watermark_column");
	def->evictor = row_text(&r, "evictor");
	def->fire_spread = row_interval(&r, "fire_spread");
	def->watermark_from = (int32) row_int8(&r, "watermark_from", 0);
	def->key_groups = (int) row_int8(&r, "key_groups", 0);
	def->join_type = row_text(&r, "join_type");
	def->join_lower = row_interval(&r, "join_lower");
	def->join_upper = row_interval(&r, "join_upper");
	def->join_lower_exclusive = def->join_type && row_bool(&r, "join_lower_exclusive");
	def->join_upper_exclusive = def->join_type && row_bool(&r, "join_upper_exclusive");
	def->exchanged = row_text(&r, "shard_of") != NULL && def->time_column != NULL
		&& def->max_out_of_orderness != NULL;

	progress->tick_lo = row_text(&r, "tick_lo");
	progress->tick_hi = row_text(&r, "tick_hi");
	progress->tick_watermark = row_int8(&r, "tick_watermark", WMK_NONE);
	progress->last_seq = row_int8(&r, "last_seq", 0);
	progress->watermark = row_int8(&r, "watermark", WMK_NONE);
	progress->max_seen = row_int8(&r, "max_seen", INT64_MIN);
	progress->steps = row_int8(&r, "steps", 0);
	progress->last_row_at = row_int8(&r, "last_row_at", DT_NOBEGIN);
	progress->scan_from = row_int8(&r, "scan_from", 0);
	progress->scan_next = row_int8(&r, "scan_next", 0);
	progress->scan_next_xid = row_text(&r, "scan_next_xid");
	progress->replay_until = row_text(&r, "replay_until");
	progress->replay_done = row_int8(&r, "replay_done", 0);
	progress->shard_watermark = row_int8(&r, "shard_watermark", WMK_NONE);
	progress->rows = 0;
	progress->windows_fired = 0;
	progress->late_routed = 0;
	progress->late_dropped = 0;
	progress->state_hits = 0;
	progress->state_misses = 0;
	/* last: it may run a statement of its own */
	text = row_text(&r, "definition_stamp");
	def->intact = stamp_matches(&r, def->id, text);
	row_close(&r);
}

/* Column "name" of "tup", a row of "rel" that has it NOT NULL. */
static Datum
column_of(Relation rel, HeapTuple tup, const char *name)
{
	bool		isnull;

	return heap_getattr(tup, get_attnum(RelationGetRelid(rel), name), RelationGetDescr(rel), &isnull);
}

/*
 * A join pipeline's right queue and both state tables, from its rows of
 * windowing.join_input (its row of windowing.pipeline names the left
 * queue), read as row_read reads that row.
 */
static void
join_tables(int32 id, PipelineRunning *running)
{
	Relation	rel = windowing_table_open("join_input", AccessShareLock);
	Oid			relid = RelationGetRelid(rel);
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	ScanKeyEntryInitialize(&key, 0, get_attnum(relid, "pipeline_id"),
						   BTEqualStrategyNumber, InvalidOid, InvalidOid,
						   F_INT4EQ, Int32GetDatum(id));
	scan = systable_beginscan(rel, get_relname_relid("join_input_pkey", RelationGetNamespace(rel)),
							  true, snapshot, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		left = strcmp(TextDatumGetCString(column_of(rel, tup, "side")), "left") == 0;

		running->state_tables[left ? 0 : 1] = DatumGetObjectId(column_of(rel, tup, "state_table"));
		if (!left)
			running->right_source = DatumGetObjectId(column_of(rel, tup, "source"));
	}
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
	table_close(rel, AccessShareLock);
}

/*
 * The owner of pipeline "name", or InvalidOid if there is none, whoever
 * asks (so that others get a permission error rather than "does not
 * exist"): read through the name's unique index, past row security, as of
 * the current statement or, with "latest", of now.  Each step asks twice,
 * and through SQL that cost a fifth of a one-row step.  With "running"
 * (not NULL), only a pipeline in state 'running', whether its last steps
 * failed, and the tables it reads and writes.
 */
static Oid
owner_of(const char *name, int part, bool latest, PipelineRunning *running)
{
	PipelineRow r;
	Oid			owner = InvalidOid;

	row_read(&r, name, part, latest);
	if (r.tup != NULL)
	{
		owner = row_oid(&r, "owner");
		if (running)
		{
			bool		not_join;

			if (!row_running(&r))
				owner = InvalidOid;
			running->failing = row_int8(&r, "failures", 0) != 0;
			running->source = row_oid(&r, "source");
			(void) row_datum(&r, "join_type", &not_join, NULL);
			running->right_source = InvalidOid;
			running->state_tables[0] = running->state_tables[1] = InvalidOid;
			if (!not_join)
				join_tables((int32) row_int8(&r, "id", 0), running);
			running->result_table = row_oid(&r, "result_table");
			running->late_table = row_oid(&r, "late_table");
		}
	}
	row_close(&r);
	return owner;
}

Oid
catalog_pipeline_owner(const char *name, bool latest)
{
	return owner_of(name, 0, latest, NULL);
}

/* How many parts pipeline "name" has, as of now; 0 if there is no such pipeline. */
int
catalog_parallelism(const char *name)
{
	return (int) first_part_int(name, "parallelism", 0);
}

/* The type of the pipeline's time column. */
Oid
catalog_time_type(const char *name)
{
	if (execute_for("SELECT time_type::pg_catalog.oid "
					"FROM windowing.pipeline WHERE name OPERATOR(pg_catalog.=) $1"
					" AND part OPERATOR(pg_catalog.=) 0",
					name, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		no_pipeline(name);
	return oid_value("time_type");
}

/* A text parameter, or NULL. */
static Datum
text_arg(const char *text, char *null_flag)
{
	*null_flag = text ? ' ' : 'n';
	return text ? CStringGetTextDatum(text) : (Datum) 0;
}

/* An int8 parameter, NULL where it holds "if_null". */
static Datum
int8_arg(int64 value, int64 if_null, char *null_flag)
{
	*null_flag = value == if_null ? 'n' : ' ';
	return Int64GetDatum(value);
}

/* A column a step writes into its pipeline's row, and its value. */
typedef struct ProgressValue
{
	const char *column;
	Datum		value;
	bool		isnull;
} ProgressValue;

/* A bigint column's value, NULL where it is "if_null". */
static ProgressValue
progress_int8(const char *column, int64 value, int64 if_null)
{
	return (ProgressValue) {column, Int64GetDatum(value), value == if_null};
}

/* A column of a type read from text by function "in", NULL where text is. */
static ProgressValue
progress_text(const char *column, PGFunction in, const char *text)
{
	return (ProgressValue) {column, text ? DirectFunctionCall1(in, CStringGetDatum(text)) : (Datum) 0,
	text == NULL};
}

/* A bigint column's value, never NULL. */
static ProgressValue
progress_set(const char *column, int64 value)
{
	return (ProgressValue) {column, Int64GetDatum(value), false};
}

/* A counter of the row, plus the step's count. */
static ProgressValue
progress_count(const PipelineRow *r, const char *column, int64 step_count)
{
	return progress_set(column, row_int8(r, column, 0) + step_count);
}

/* Row r with the step's progress in its columns. */
static HeapTuple
progress_tuple(const PipelineRow *r, const PipelineProgress *progress)
{
	TupleDesc	desc = RelationGetDescr(r->rel);
	ProgressValue v[] = {
		progress_text("tick_lo", pg_snapshot_in, progress->tick_lo),
		progress_text("tick_hi", pg_snapshot_in, progress->tick_hi),
		progress_set("last_seq", progress->last_seq),
		progress_int8("watermark", progress->watermark, WMK_NONE),
		progress_int8("max_seen", progress->max_seen, INT64_MIN),
		progress_count(r, "steps", 1),
		progress_count(r, "rows_consumed", progress->rows),
		progress_count(r, "windows_fired", progress->windows_fired),
		progress_count(r, "late_routed", progress->late_routed),
		progress_count(r, "late_dropped", progress->late_dropped),
		{"last_step_at", TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()), false},
		{"last_row_at", TimestampTzGetDatum(progress->last_row_at), progress->last_row_at == DT_NOBEGIN},
		progress_set("scan_from", progress->scan_from),
		progress_set("scan_next", progress->scan_next),
		progress_text("scan_next_xid", xid8in, progress->scan_next_xid),
		progress_count(r, "state_hits", progress->state_hits),
		progress_count(r, "state_misses", progress->state_misses),
		progress_text("replay_until", pg_snapshot_in, progress->replay_until),
		progress_set("replay_done", progress->replay_done),
		progress_int8("tick_watermark", progress->tick_watermark, WMK_NONE),
		progress_int8("input_watermark", progress->input_watermark, WMK_NONE),
	};
	Datum	   *values = palloc0(sizeof(Datum) * desc->natts);
	bool	   *nulls = palloc0(sizeof(bool) * desc->natts);
	bool	   *replace = palloc0(sizeof(bool) * desc->natts);

	for (int i = 0; i < lengthof(v); i++)
	{
		AttrNumber	attnum = column_number(r->rel, v[i].column);

		values[attnum - 1] = v[i].value;
		nulls[attnum - 1] = v[i].isnull;
		replace[attnum - 1] = true;
	}
	return heap_modify_tuple(r->tup, desc, values, nulls, replace);
}

/*
 * Writes a step's progress into its pipeline's row, the latest one, as the
 * step read it: in the heap and its indexes directly, since an UPDATE's
 * executor cost a third of a one-row step.  No trigger watches these
 * columns.  Every other writer of the row but the worker's count of
 * failures holds the pipeline's lock, as the step does; a row changed
 * since it was read is read again, as an UPDATE would follow it.
 */
void
catalog_save_progress(const PipelineDef *def, const PipelineProgress *progress)
{
	Relation	rel = windowing_table_open("pipeline", RowExclusiveLock);
	TM_Result	result;

	do
	{
		PipelineRow r;
		HeapTuple	tuple;
		TM_FailureData failure;
		LockTupleMode mode;

		row_read(&r, def->name, def->part, true);
		if (r.tup == NULL)
			no_pipeline(def->name);
		tuple = progress_tuple(&r, progress);
		row_close(&r);
		result = heap_update(rel, &r.tup->t_self, tuple, GetCurrentCommandId(true), InvalidSnapshot,
							 true, &failure, &mode);
		if (result == TM_Ok)
			row_indexes_enter(rel, tuple);
		else if (result != TM_Updated && result != TM_Deleted)
			elog(ERROR, "could not save the progress of pipeline \"%s\"", def->name);
	} while (result != TM_Ok);
	CommandCounterIncrement();
	table_close(rel, NoLock);
}

void
catalog_load_join_inputs(int32 id, JoinInput *inputs)
{
	Oid			type = INT4OID;
	Datum		arg = Int32GetDatum(id);

	if (plans_execute("SELECT side, source::pg_catalog.oid, alias::pg_catalog.text, "
					   "time_column::pg_catalog.text, key_columns::pg_catalog.text[], "
					   "state_table::pg_catalog.oid, tick_lo::pg_catalog.text, scan_from, scan_next, "
					   "scan_next_xid::pg_catalog.text, watermark, max_seen, last_row_at, "
					   "tick_hi::pg_catalog.text, last_seq "
					   "FROM windowing.join_input WHERE pipeline_id OPERATOR(pg_catalog.=) $1 "
					   "ORDER BY side",
					   1, &type, &arg, NULL, false, 0) != SPI_OK_SELECT || SPI_processed != 2)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("join pipeline %d does not have its two inputs in windowing.join_input", id)));
	/* 'left' sorts before 'right' */
	for (int i = 0; i < 2; i++)
	{
		JoinInput  *in = &inputs[i];

		memset(in, 0, sizeof(*in));
		in->side = i == 0 ? "left" : "right";
		in->source = oid_at(i, "source");
		in->alias = text_at(i, "alias");
		in->time_column = text_at(i, "time_column");
		in->keys = names_at(i, "key_columns", &in->nkeys);
		in->state_table = oid_at(i, "state_table");
		in->cursor.tick_lo = text_at(i, "tick_lo");
		in->cursor.tick_hi = text_at(i, "tick_hi");
		in->cursor.last_seq = int8_at(i, "last_seq", 0);
		in->cursor.scan_from = int8_at(i, "scan_from", 0);
		in->cursor.scan_next = int8_at(i, "scan_next", 0);
		in->cursor.scan_next_xid = text_at(i, "scan_next_xid");
		in->cursor.tick_watermark = WMK_NONE;
		in->watermark = int8_at(i, "watermark", WMK_NONE);
		in->max_seen = int8_at(i, "max_seen", INT64_MIN);
		in->last_row_at = int8_at(i, "last_row_at", DT_NOBEGIN);
	}
}

/* The cursor and watermark of one input after a step, and the rows it read. */
void
catalog_save_join_input(int32 id, const JoinInput *in)
{
	Oid			types[12] = {INT4OID, TEXTOID, TEXTOID, INT8OID, INT8OID, TEXTOID, INT8OID,
	INT8OID, TIMESTAMPTZOID, INT8OID, TEXTOID, INT8OID};
	Datum		args[12];
	char		flags[13] = "            ";

	args[0] = Int32GetDatum(id);
	args[1] = CStringGetTextDatum(in->side);
	args[2] = text_arg(in->cursor.tick_lo, &flags[2]);
	args[3] = Int64GetDatum(in->cursor.scan_from);
	args[4] = Int64GetDatum(in->cursor.scan_next);
	args[5] = text_arg(in->cursor.scan_next_xid, &flags[5]);
	args[6] = int8_arg(in->watermark, WMK_NONE, &flags[6]);
	args[7] = int8_arg(in->max_seen, INT64_MIN, &flags[7]);
	args[8] = int8_arg(in->last_row_at, DT_NOBEGIN, &flags[8]);
	args[9] = Int64GetDatum(in->cursor.rows);
	args[10] = text_arg(in->cursor.tick_hi, &flags[10]);
	args[11] = Int64GetDatum(in->cursor.last_seq);
	if (plans_execute("UPDATE windowing.join_input SET tick_lo = $3::pg_catalog.pg_snapshot, "
					   "scan_from = $4, scan_next = $5, scan_next_xid = $6::pg_catalog.xid8, "
					   "watermark = $7, max_seen = $8, last_row_at = $9, "
					   "rows_consumed = rows_consumed OPERATOR(pg_catalog.+) $10, "
					   "tick_hi = $11::pg_catalog.pg_snapshot, last_seq = $12 "
					   "WHERE pipeline_id OPERATOR(pg_catalog.=) $1 AND side OPERATOR(pg_catalog.=) $2",
					   12, types, args, flags, false, 0) != SPI_OK_UPDATE || SPI_processed != 1)
		elog(ERROR, "could not save the %s input of join pipeline %d", in->side, id);
}

/*
 * A rebuild begins: the pipeline starts again from nothing consumed, to
 * replay the "rows" rows of its queue visible in "snapshot".
 */
void
catalog_start_replay(const PipelineDef *def, const char *snapshot, int64 rows)
{
	Oid			types[3] = {INT4OID, TEXTOID, INT8OID};
	Datum		args[3] = {Int32GetDatum(def->id), CStringGetTextDatum(snapshot),
	Int64GetDatum(rows)};

	if (plans_execute("UPDATE windowing.pipeline SET "
					   "tick_lo = NULL, tick_hi = NULL, last_seq = 0, watermark = NULL, "
					   "max_seen = NULL, rows_consumed = 0, windows_fired = 0, "
					   "late_routed = 0, late_dropped = 0, last_row_at = NULL, "
					   "scan_from = 0, scan_next = NULL, scan_next_xid = NULL, "
					   "cleaned_until = NULL, state_hits = 0, state_misses = 0, "
					   "replay_until = $2::pg_catalog.pg_snapshot, replay_done = 0, "
					   "replay_rows = $3, replay_started_at = pg_catalog.now() "
					   "WHERE id OPERATOR(pg_catalog.=) $1",
					   3, types, args, NULL, false, 0) != SPI_OK_UPDATE || SPI_processed != 1)
		elog(ERROR, "could not start the rebuild of pipeline \"%s\"", def->name);
}

/* The ids of the parts of pipeline "name", in order of part; *n of them. */
int32 *
catalog_part_ids(const char *name, int *n)
{
	int32	   *ids;

	if (execute_for("SELECT id FROM windowing.pipeline WHERE name OPERATOR(pg_catalog.=) $1 "
					"ORDER BY part", name, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the parts of pipeline \"%s\"", name);
	*n = (int) SPI_processed;
	ids = palloc(sizeof(int32) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
	{
		bool		isnull;

		ids[i] = DatumGetInt32(value(i, "id", &isnull));
	}
	return ids;
}

/*
 * Pipeline "name" goes from "from" parts to "to", each of the first "from"
 * having read the queue up to snapshot "until": the parts to come get
 * their rows, as part 0's with nothing read (_add_parts), and every part
 * to stay takes up the same cursor at "until", the largest watermark
 * (theirs differ only where an idle timeout moved one by the clock), and a
 * step number none has had.  The counts of parts to go are added to part
 * 0's.
 */
void
catalog_change_parts(const char *name, int from, int to, const char *until)
{
	Oid			types[4] = {TEXTOID, INT4OID, INT4OID, TEXTOID};
	Datum		args[4] = {CStringGetTextDatum(name), Int32GetDatum(from), Int32GetDatum(to),
	CStringGetTextDatum(until)};

	if (to > from &&
		plans_execute("SELECT windowing._add_parts(p.id, $3) FROM windowing.pipeline p "
					   "WHERE p.name OPERATOR(pg_catalog.=) $1 AND p.part OPERATOR(pg_catalog.=) 0",
					   4, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not add parts to pipeline \"%s\"", name);
	if (plans_execute("WITH m AS (SELECT pg_catalog.max(watermark) AS watermark, "
					   "pg_catalog.max(max_seen) AS max_seen, pg_catalog.max(last_row_at) AS last_row_at, "
					   "pg_catalog.min(scan_from) AS scan_from, pg_catalog.max(steps) AS steps, "
					   "pg_catalog.max(cleaned_until) AS cleaned_until, "
					   "coalesce(pg_catalog.sum(windows_fired) FILTER (WHERE part OPERATOR(pg_catalog.>=) $3), 0) AS fired, "
					   "coalesce(pg_catalog.sum(late_routed) FILTER (WHERE part OPERATOR(pg_catalog.>=) $3), 0) AS routed, "
					   "coalesce(pg_catalog.sum(late_dropped) FILTER (WHERE part OPERATOR(pg_catalog.>=) $3), 0) AS dropped "
					   "FROM windowing.pipeline "
					   "WHERE name OPERATOR(pg_catalog.=) $1 AND part OPERATOR(pg_catalog.<) $2) "
					   "UPDATE windowing.pipeline p SET tick_lo = $4::pg_catalog.pg_snapshot, tick_hi = NULL, "
					   "tick_watermark = NULL, last_seq = m.scan_from, scan_from = m.scan_from, "
					   "scan_next = NULL, scan_next_xid = NULL, watermark = m.watermark, "
					   "max_seen = m.max_seen, last_row_at = m.last_row_at, "
					   "steps = m.steps OPERATOR(pg_catalog.+) 1, cleaned_until = m.cleaned_until, "
					   "parallelism = $3, "
					   "windows_fired = p.windows_fired OPERATOR(pg_catalog.+) "
					   "CASE WHEN p.part OPERATOR(pg_catalog.=) 0 THEN m.fired ELSE 0 END, "
					   "late_routed = p.late_routed OPERATOR(pg_catalog.+) "
					   "CASE WHEN p.part OPERATOR(pg_catalog.=) 0 THEN m.routed ELSE 0 END, "
					   "late_dropped = p.late_dropped OPERATOR(pg_catalog.+) "
					   "CASE WHEN p.part OPERATOR(pg_catalog.=) 0 THEN m.dropped ELSE 0 END "
					   "FROM m WHERE p.name OPERATOR(pg_catalog.=) $1 AND p.part OPERATOR(pg_catalog.<) $3",
					   4, types, args, NULL, false, 0) != SPI_OK_UPDATE || SPI_processed != (uint64) to)
		elog(ERROR, "could not change the parts of pipeline \"%s\"", name);
}

/*
 * The parts of pipeline "name" from "to" on are gone, their state handed to
 * the others, and with them what shared memory held of them.
 */
void
catalog_drop_parts(const char *name, int to)
{
	Oid			types[2] = {TEXTOID, INT4OID};
	Datum		args[2] = {CStringGetTextDatum(name), Int32GetDatum(to)};
	Oid			idtype = INT4OID;
	List	   *ids = NIL;
	ListCell   *lc;

	if (plans_execute("DELETE FROM windowing.pipeline "
					   "WHERE name OPERATOR(pg_catalog.=) $1 AND part OPERATOR(pg_catalog.>=) $2 "
					   "RETURNING id", 2, types, args, NULL, false, 0) != SPI_OK_DELETE_RETURNING)
		elog(ERROR, "could not drop parts of pipeline \"%s\"", name);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		ids = lappend_int(ids, DatumGetInt32(value(i, "id", &isnull)));
	}
	foreach(lc, ids)
	{
		Datum		id = Int32GetDatum(lfirst_int(lc));

		if (plans_execute("SELECT windowing._forget_dropped_state($1)", 1, &idtype, &id, NULL,
						   false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not forget the state of pipeline \"%s\"", name);
	}
}

/*
 * The one column of a read-only query's rows, as a list in cxt: names
 * (text) or OIDs.
 */
static List *
column_list(const char *sql, const char *what, bool oids, MemoryContext cxt)
{
	List	   *result = NIL;
	MemoryContext old;

	if (plans_execute(sql, 0, NULL, NULL, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the %s", what);
	old = MemoryContextSwitchTo(cxt);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

		result = oids ? lappend_oid(result, DatumGetObjectId(d)) :
			lappend(result, TextDatumGetCString(d));
	}
	MemoryContextSwitchTo(old);
	return result;
}

typedef struct Running
{
	int64		failures;
	char	   *name;
} Running;

static int
running_order(const ListCell *a, const ListCell *b)
{
	const Running *x = lfirst(a);
	const Running *y = lfirst(b);

	if (x->failures != y->failures)
		return x->failures < y->failures ? -1 : 1;
	return varstr_cmp(x->name, strlen(x->name), y->name, strlen(y->name), DEFAULT_COLLATION_OID);
}

/*
 * Part "part" of each running pipeline that has one (PipelinePart), fewest
 * failures in a row first: a failing step ends the worker's round, so a
 * failing pipeline cannot hold the others back, and failing ones take
 * turns at counting their failures.  *parts is the largest parallelism of
 * the running pipelines.  Read from the heap: a statement each round was a
 * twentieth of a one-row step.
 */
List *
catalog_running_pipelines(MemoryContext cxt, int part, int *parts)
{
	PipelineRow r;
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	SysScanDesc scan;
	List	   *running = NIL;
	List	   *result = NIL;
	ListCell   *lc;
	MemoryContext old;

	*parts = 0;
	r.rel = open_pipelines();
	r.values = NULL;
	scan = systable_beginscan(r.rel, InvalidOid, false, snapshot, 0, NULL);
	for (;;)
	{
		Running    *p;

		row_set(&r, systable_getnext(scan));
		if (r.tup == NULL)
			break;
		if (!row_running(&r))
			continue;
		*parts = Max(*parts, (int) row_int8(&r, "parallelism", 1));
		if (row_int8(&r, "part", 0) != part)
			continue;
		p = palloc(sizeof(Running));
		p->failures = row_int8(&r, "failures", 0);
		p->name = row_text(&r, "name");
		running = lappend(running, p);
	}
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
	row_close(&r);
	list_sort(running, running_order);
	old = MemoryContextSwitchTo(cxt);
	foreach(lc, running)
	{
		PipelinePart *p = palloc(sizeof(PipelinePart));

		p->name = pstrdup(((Running *) lfirst(lc))->name);
		p->part = part;
		result = lappend(result, p);
	}
	MemoryContextSwitchTo(old);
	return result;
}

/* The queues of running pipelines whose rows are deleted once read. */
List *
catalog_consumed_queues(MemoryContext cxt)
{
	return column_list("SELECT DISTINCT q.source::pg_catalog.oid AS queues FROM ("
					   "SELECT source, state FROM windowing.pipeline WHERE join_type IS NULL"
					   " UNION ALL SELECT i.source, p.state FROM windowing.join_input i"
					   " JOIN windowing.pipeline p ON p.id OPERATOR(pg_catalog.=) i.pipeline_id) q"
					   " WHERE q.state OPERATOR(pg_catalog.=) 'running'"
					   " AND windowing._queue_retention(q.source) OPERATOR(pg_catalog.=) 'consume'",
					   "queues", true, cxt);
}

/* Are queue "source"'s rows deleted once read (retention 'consume')? */
bool
catalog_queue_consumes(Oid source)
{
	Oid			argtype = OIDOID;
	Datum		arg = ObjectIdGetDatum(source);
	bool		isnull;

	if (plans_execute("SELECT windowing._queue_retention($1::pg_catalog.regclass) "
					   "IS NOT DISTINCT FROM 'consume'",
					   1, &argtype, &arg, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the retention of a queue");
	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * The pipeline's owner if it is running, else InvalidOid; with it, whether
 * its last steps failed (catalog_clear_failures ends the streak) and its
 * tables.
 */
Oid
catalog_owner_if_running(const PipelinePart *p, PipelineRunning *running)
{
	return owner_of(p->name, p->part, true, running);
}

/*
 * Records a failed step's error: its message, SQLSTATE, detail and hint,
 * as a late row's error holds them, and the arrival number of the row at
 * fault if one is known ("row_known").  The pipeline is marked failed at
 * "max_failures" in a row.  True if it was.
 */
bool
catalog_record_failure(const PipelinePart *p, const ErrorData *edata, bool row_known,
					   int64 row, int max_failures)
{
	Oid			types[8] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT4OID, INT4OID};
	Datum		values[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	const char *texts[4] = {edata->message ? edata->message : "unknown error",
		unpack_sql_state(edata->sqlerrcode), edata->detail, edata->hint};

	values[0] = CStringGetTextDatum(p->name);
	values[7] = Int32GetDatum(p->part);
	for (int i = 0; i < 4; i++)
	{
		if (texts[i] == NULL)
			nulls[i + 1] = 'n';
		else
			values[i + 1] = CStringGetTextDatum(texts[i]);
	}
	values[5] = Int64GetDatum(row);
	nulls[5] = row_known ? ' ' : 'n';
	values[6] = Int32GetDatum(max_failures);
	if (plans_execute("UPDATE windowing.pipeline"
					   " SET last_error = $2, last_error_sqlstate = $3, last_error_detail = $4,"
					   " last_error_hint = $5, last_error_seq = $6, last_error_at = pg_catalog.now(),"
					   " failures = failures OPERATOR(pg_catalog.+) 1,"
					   " state = CASE WHEN failures OPERATOR(pg_catalog.+) 1"
					   " OPERATOR(pg_catalog.>=) $7 THEN 'failed' ELSE state END"
					   " WHERE name OPERATOR(pg_catalog.=) $1 AND part OPERATOR(pg_catalog.=) $8"
					   " RETURNING state OPERATOR(pg_catalog.=) 'failed' AS failed",
					   8, types, values, nulls, false, 0)
		!= SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "could not record the failure of pipeline \"%s\"", p->name);
	return SPI_processed == 1 && bool_value("failed");
}

/* Ends a streak of failures; writes nothing if there is none. */
void
catalog_clear_failures(const PipelinePart *p)
{
	Oid			types[2] = {TEXTOID, INT4OID};
	Datum		args[2] = {CStringGetTextDatum(p->name), Int32GetDatum(p->part)};

	if (plans_execute("UPDATE windowing.pipeline SET failures = 0"
					   " WHERE name OPERATOR(pg_catalog.=) $1 AND part OPERATOR(pg_catalog.=) $2"
					   " AND failures OPERATOR(pg_catalog.<>) 0",
					   2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not reset the failures of pipeline \"%s\"", p->name);
}

/*
 * The parts of the pipelines reading queue "source" (PipelinePart), in
 * order of name and part; false if one of them is not running.
 */
bool
catalog_queue_readers(Oid source, MemoryContext cxt, List **readers)
{
	Oid			argtype = OIDOID;
	Datum		arg = ObjectIdGetDatum(source);
	bool		all_running = true;

	if (plans_execute("SELECT DISTINCT c.name, p.part, c.state OPERATOR(pg_catalog.=) 'running' AS running "
					   "FROM windowing._queue_cursors($1::pg_catalog.regclass) c "
					   "JOIN windowing.pipeline p ON p.id OPERATOR(pg_catalog.=) c.pipeline_id "
					   "ORDER BY c.name, p.part",
					   1, &argtype, &arg, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the pipelines of a queue");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);
		PipelinePart *p = palloc(sizeof(PipelinePart));
		bool		isnull;

		p->name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, fnumber("name"));
		p->part = DatumGetInt32(value(i, "part", &isnull));
		*readers = lappend(*readers, p);
		all_running &= DatumGetBool(value(i, "running", &isnull));
		MemoryContextSwitchTo(old);
	}
	return all_running;
}

/*
 * Has every pipeline of queue "source", whose quoted and qualified name is
 * "qualified", consumed every row in it?  Only the rows past the least
 * scan_from are read: those up to a cursor's scan_from are consumed by
 * definition, and the queue is locked against its producers meanwhile.
 * The few rows past scan_from come from the index on windowing_seq.
 */
bool
catalog_queue_consumed(Oid source, const char *qualified)
{
	Oid			argtype = OIDOID;
	Datum		arg = ObjectIdGetDatum(source);
	char	   *sql = psprintf("WITH c AS (SELECT * FROM windowing._queue_cursors($1::pg_catalog.regclass)) "
							   "SELECT NOT EXISTS (SELECT FROM c p, %s q "
							   "WHERE q.windowing_seq OPERATOR(pg_catalog.>) (SELECT pg_catalog.min(c.scan_from) FROM c) "
							   "AND (p.tick_hi IS NOT NULL OR p.tick_lo IS NULL "
							   "OR NOT pg_catalog.pg_visible_in_snapshot(q.windowing_xid, p.tick_lo))) "
							   "AS consumed",
							   qualified);
	int			nest = NewGUCNestLevel();
	bool		consumed;

	/*
	 * A plan made without knowing the bound reads the whole queue; and JIT
	 * would compile a plan that costs as much as a disabled scan.
	 */
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	(void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	if (plans_execute(sql, 1, &argtype, &arg, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not run: %s", sql);
	consumed = bool_value("consumed");
	AtEOXact_GUC(true, nest);
	return consumed;
}

/* The qualified name of a table of the pipeline, which must still exist. */
char *
catalog_relation_name(Oid relid, const char *what)
{
	char	   *name = get_rel_name(relid);

	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the %s of this pipeline no longer exists", what),
				 errhint("Drop and create the pipeline again.")));
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  name);
}
