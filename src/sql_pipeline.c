/*
 * sql_pipeline.c
 *		SQL-facing checks for creating pipelines.
 *
 * create_pipeline (PL/pgSQL in the install script) does the DDL; this file
 * gives it the checks that need the window math and PostgreSQL's parser:
 * the time and key columns, the assigner, the aggregates and the types of
 * their results, all refused at create time with a clear error rather than
 * failing later in the worker.
 */
#include "compat.h"

#include "access/nbtree.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "aggregates.h"
#include "evictor.h"
#include "spec.h"
#include "sql_pipeline.h"
#include "trigger.h"

/* Output columns a key column may not be called. */
static const char *const reserved[] = {
	"window_start", "window_end", "window_time", "fire_count", "is_final",
	"fired_at", "windowing_xid", "windowing_seq"
};

static Oid
column_type(Oid source, const char *column, const char *what)
{
	AttrNumber	att = get_attnum(source, column);

	if (att == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("%s \"%s\" does not exist in table \"%s\"", what, column,
						get_rel_name(source))));
	return get_atttype(source, att);
}

static void
check_key_name(const char *name, const char *what)
{
	for (int i = 0; i < lengthof(reserved); i++)
		if (strcmp(name, reserved[i]) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("%s \"%s\" clashes with an output column of the pipeline", what, name),
					 errhint("Rename the column or the aggregate output.")));
}

/* An aggregate output cannot share its column with a key column. */
static void
check_output_name(const char *name, ArrayType *keys)
{
	Datum	   *items;
	int			n;

	check_key_name(name, "aggregate output");
	deconstruct_array(keys, NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR,
					  &items, NULL, &n);
	for (int i = 0; i < n; i++)
		if (strcmp(name, NameStr(*DatumGetName(items[i]))) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("aggregate output \"%s\" clashes with a key column", name),
					 errhint("Give the output another name with AS.")));
}

static void
check_keys(Oid source, ArrayType *keys)
{
	Datum	   *items;
	int			n;

	deconstruct_array(keys, NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR,
					  &items, NULL, &n);
	for (int i = 0; i < n; i++)
	{
		char	   *name = NameStr(*DatumGetName(items[i]));

		column_type(source, name, "key column");
		check_key_name(name, "key column");
		for (int j = 0; j < i; j++)
			if (strcmp(name, NameStr(*DatumGetName(items[j]))) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("key column \"%s\" is listed twice", name)));
	}
}

static void
check_combine(Aggregator *agg, const char *what, const char *why)
{
	const char *which;

	if (!agg_can_combine(agg, &which))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("aggregate \"%s\" cannot be used with %s", which, what),
				 errdetail("%s, and this aggregate has no combine function.", why)));
}

/* Sessions merge states, and a dynamic gap is an interval column. */
static void
check_session(Oid source, const WindowSpec *spec, Aggregator *agg)
{
	check_combine(agg, "session windows", "Merging two sessions combines their states");
	if (spec->gap_column &&
		column_type(source, spec->gap_column, "gap column") != INTERVALOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("gap column \"%s\" must be of type interval", spec->gap_column)));
}

/*
 * Do equal values of this column have equal bytes?  B-tree deduplication
 * asks the same of an operator class (its "equalimage" support function).
 */
static bool
equal_means_same_bytes(Oid source, AttrNumber att)
{
	Oid			type;
	int32		typmod;
	Oid			collation;
	Oid			opclass;
	Oid			opfamily;
	Oid			proc;

	get_atttypetypmodcoll(source, att, &type, &typmod, &collation);
	opclass = GetDefaultOpClass(type, BTREE_AM_OID);
	if (!OidIsValid(opclass))
		return false;
	opfamily = get_opclass_family(opclass);
	type = get_opclass_input_type(opclass);
	proc = get_opfamily_proc(opfamily, type, type, BTEQUALIMAGE_PROC);
	return OidIsValid(proc) &&
		DatumGetBool(OidFunctionCall1Coll(proc, collation, ObjectIdGetDatum(type)));
}

PG_FUNCTION_INFO_V1(windowing_check_upsert_keys);

/*
 * _check_upsert_keys(source, key_columns): the unique key of an upsert
 * result table is (window_end, keys..., window_start), an index, so it
 * holds at most INDEX_MAX_KEYS - 2 key columns.  And a pipeline tells keys
 * apart by their bytes, while that key uses the types' equality.  Two keys
 * equal with different bytes (numeric 1.0 and 1.00, float -0 and 0, citext
 * 'A' and 'a') would overwrite each other's rows, so such key columns are
 * refused for upsert.  (Append mode has neither limit: a pipeline's state
 * holds a key as one bytea, whatever its columns.)
 */
Datum
windowing_check_upsert_keys(PG_FUNCTION_ARGS)
{
	Oid			source = PG_GETARG_OID(0);
	Datum	   *items;
	int			n;

	deconstruct_array(PG_GETARG_ARRAYTYPE_P(1), NAMEOID, NAMEDATALEN, false,
					  TYPALIGN_CHAR, &items, NULL, &n);
	if (n > INDEX_MAX_KEYS - 2)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("too many key columns"),
				 errdetail("With emit => 'upsert' a pipeline has at most %d key columns, since its result table's unique index holds them with window_end and window_start in at most %d columns; %d were given.",
						   INDEX_MAX_KEYS - 2, INDEX_MAX_KEYS, n),
				 errhint("Use emit => 'append', or fewer key columns.")));
	for (int i = 0; i < n; i++)
	{
		char	   *name = NameStr(*DatumGetName(items[i]));
		AttrNumber	att = get_attnum(source, name);

		if (att != InvalidAttrNumber && !equal_means_same_bytes(source, att))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("key column \"%s\" cannot be used with emit => 'upsert'", name),
					 errdetail("Pipelines tell keys apart by their bytes, and equal values of type %s can differ in bytes, so the windows of two keys would share one row of the result table.",
							   format_type_be(get_atttype(source, att))),
					 errhint("Use emit => 'append', or a key column of a type whose equal values have equal bytes, such as text or an integer.")));
	}
	PG_RETURN_VOID();
}

/*
 * A queue must outlive the session that made it, for the worker to read
 * it, and its queue columns must be ours: a pipeline adds windowing_xid and
 * windowing_seq unless an earlier pipeline of the queue did.
 */
static void
check_queue(Oid source)
{
	AttrNumber	xid = get_attnum(source, "windowing_xid");
	AttrNumber	seq = get_attnum(source, "windowing_seq");

	if (get_rel_persistence(source) == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a pipeline cannot read temporary table \"%s\"", get_rel_name(source)),
				 errdetail("The background worker cannot see it, and it goes away with its session.")));
	if ((xid != InvalidAttrNumber || seq != InvalidAttrNumber) &&
		(xid == InvalidAttrNumber || get_atttype(source, xid) != XID8OID ||
		 seq == InvalidAttrNumber || get_atttype(source, seq) != INT8OID))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_COLUMN),
				 errmsg("table \"%s\" has a windowing_xid or windowing_seq column of its own",
						get_rel_name(source)),
				 errhint("Rename it: a pipeline adds windowing_xid xid8 and windowing_seq bigint to its queue.")));
}

PG_FUNCTION_INFO_V1(windowing_describe);

/*
 * _describe(source, time_column, key_columns, assigner, aggregates): checks a
 * pipeline definition and returns the name and type of each aggregate output.
 */
Datum
windowing_describe(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsi = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			source;
	char	   *time_column;
	int			nestlevel;
	Oid			time_type = TIMESTAMPTZOID;
	WindowSpec	spec;
	Aggregator *agg;

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < PG_NARGS(); i++)
		if (i != 1 && PG_ARGISNULL(i))
			PG_RETURN_NULL();
	source = PG_GETARG_OID(0);
	/* no time column: processing time, stamped as timestamptz */
	time_column = PG_ARGISNULL(1) ? NULL : NameStr(*PG_GETARG_NAME(1));
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	check_queue(source);
	if (time_column)
		time_type = column_type(source, time_column, "time column");
	if (time_type != TIMESTAMPTZOID && time_type != TIMESTAMPOID && time_type != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("time column \"%s\" must be of type timestamptz, timestamp or bigint", time_column),
				 errdetail("It is of type %s.", format_type_be(time_type)),
				 errhint("Use a timestamptz or timestamp column, or bigint epoch milliseconds.")));
	check_keys(source, PG_GETARG_ARRAYTYPE_P(2));
	spec_from_assigner(&spec, PG_GETARG_HEAPTUPLEHEADER(3), time_type);
	agg = agg_prepare(source, text_to_cstring(PG_GETARG_TEXT_PP(4)),
					  spec.kind == WK_COUNT ? INT8OID : time_type, NULL, NULL);
	if (spec.kind == WK_SESSION)
		check_session(source, &spec, agg);
	if (spec.kind == WK_COUNT && spec.rows > spec.rows_slide)
		check_combine(agg, "sliding count windows", "Their windows combine the states of panes");
	AtEOXact_GUC(true, nestlevel);
	for (int i = 0; i < agg->nout; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		check_output_name(agg->outs[i].name, PG_GETARG_ARRAYTYPE_P(2));
		values[0] = CStringGetTextDatum(agg->outs[i].name);
		values[1] = CStringGetTextDatum(format_type_be_qualified(agg->outs[i].type));
		tuplestore_putvalues(rsi->setResult, rsi->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}

/*
 * A step checks that DDL left the pipeline's tables and columns as it was
 * created over, so that a dropped, renamed or retyped one stops the step
 * with an error naming the pipeline (which the worker records, failing the
 * pipeline after repeated errors) rather than misreading stored states.
 */
#define REDO_HINT "Restore the column's name and type, or drop the pipeline and create it again."

void
sql_pipeline_check_table(const char *pipeline, Oid relid, const char *what)
{
	if (get_rel_name(relid) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("%s of pipeline \"%s\" no longer exists", what, pipeline),
				 errhint("Drop the pipeline and create it again.")));
}

/*
 * A column the pipeline reads must exist, of the given type, or (type
 * InvalidOid) of the type of the column of the same name in the result
 * table, which was made from it.
 */
void
sql_pipeline_check_column(const char *pipeline, Oid source, const char *column,
					  const char *what, Oid type, Oid result)
{
	AttrNumber	att = get_attnum(source, column);
	Oid			now;

	if (att == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("%s \"%s\" of pipeline \"%s\" no longer exists in table \"%s\"",
						what, column, pipeline, get_rel_name(source)),
				 errhint(REDO_HINT)));
	now = get_atttype(source, att);
	if (!OidIsValid(type))
		type = get_atttype(result, get_attnum(result, column));
	if (now != type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s \"%s\" of pipeline \"%s\" changed type", what, column, pipeline),
				 errdetail("It was %s and is now %s.",
						   OidIsValid(type) ? format_type_be(type) : "unknown",
						   format_type_be(now)),
				 errhint(REDO_HINT)));
}

/*
 * The aggregates analysed again give the types of the result table's
 * columns: a changed type means a column they read was retyped, and the
 * stored states are of the old one.
 */
void
sql_pipeline_check_outputs(const char *pipeline, Oid result, const Aggregator *agg)
{
	for (int i = 0; i < agg->nout; i++)
	{
		AttrNumber	att = get_attnum(result, agg->outs[i].name);
		Oid			was = att == InvalidAttrNumber ? InvalidOid : get_atttype(result, att);

		if (was != agg->outs[i].type)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("aggregate \"%s\" of pipeline \"%s\" changed type", agg->outs[i].name,
							pipeline),
					 errdetail("Its result column is %s and the aggregate now gives %s.",
							   OidIsValid(was) ? format_type_be(was) : "missing",
							   format_type_be(agg->outs[i].type)),
					 errhint("Restore the types of the columns it reads and of its result column, or drop the pipeline and create it again.")));
	}
}

PG_FUNCTION_INFO_V1(windowing_as_timestamptz);

/* The watermark of a timestamptz or timestamp pipeline is stored as its microseconds. */
Datum
windowing_as_timestamptz(PG_FUNCTION_ARGS)
{
	int64		v = PG_GETARG_INT64(0);

	if (!TIMESTAMP_NOT_FINITE(v) && !IS_VALID_TIMESTAMP(v))
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(v);
}

PG_FUNCTION_INFO_V1(windowing_check_trigger);

/* The trigger of (trigger, assigner, time_type) arguments, checked. */
static void
trigger_of_args(FunctionCallInfo fcinfo, int first, TriggerDef *def)
{
	WindowSpec	spec;
	Oid			time_type = PG_GETARG_OID(first + 2);

	spec_from_assigner(&spec, PG_GETARG_HEAPTUPLEHEADER(first + 1), time_type);
	trigger_parse(PG_ARGISNULL(first) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(first)), &spec,
				  time_type != INT8OID, def);
}

/*
 * _check_trigger(trigger, assigner, time_type): checks a pipeline's
 * trigger; true if it fires early, when its result table says which pane
 * each firing was.
 */
Datum
windowing_check_trigger(PG_FUNCTION_ARGS)
{
	TriggerDef	def;

	/* no trigger is 'event time', which some windows refuse */
	trigger_of_args(fcinfo, 0, &def);
	PG_RETURN_BOOL(def.trigger != &trigger_event_time);
}

PG_FUNCTION_INFO_V1(windowing_trigger_purges);

/* _trigger_purges(trigger, assigner, time_type): does it clear windows as they fire? */
Datum
windowing_trigger_purges(PG_FUNCTION_ARGS)
{
	TriggerDef	def;

	if (PG_ARGISNULL(0))
		PG_RETURN_BOOL(false);
	trigger_of_args(fcinfo, 0, &def);
	PG_RETURN_BOOL(def.purging);
}

PG_FUNCTION_INFO_V1(windowing_check_evictor);

/*
 * _check_evictor(evictor, source, time_column, assigner, time_type, aggregates):
 * checks a pipeline's evictor, with the columns it reads.
 */
Datum
windowing_check_evictor(PG_FUNCTION_ARGS)
{
	Oid			source = PG_GETARG_OID(1);
	char	   *time_column = PG_ARGISNULL(2) ? NULL : NameStr(*PG_GETARG_NAME(2));
	Oid			time_type = PG_GETARG_OID(4);
	WindowSpec	spec;
	EvictorDef	ev;

	if (PG_ARGISNULL(0))
		PG_RETURN_VOID();
	evictor_parse(text_to_cstring(PG_GETARG_TEXT_PP(0)), time_type != INT8OID, &ev);
	spec_from_assigner(&spec, PG_GETARG_HEAPTUPLEHEADER(3), time_type);
	if (spec.kind == WK_COUNT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("count windows cannot have an evictor"),
				 errdetail("A count window holds its last rows already.")));
	if (ev.kind == EVICT_TIME && time_column == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a time evictor needs a time column"),
				 errdetail("On processing time, rows keep no time of their own.")));
	(void) agg_prepare(source, text_to_cstring(PG_GETARG_TEXT_PP(5)), time_type, &ev, time_column);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(windowing_check_trigger_input);

/*
 * _check_trigger_input(source, trigger, assigner, time_type): checks the
 * column a trigger reads (a delta trigger's), if it reads one.
 */
Datum
windowing_check_trigger_input(PG_FUNCTION_ARGS)
{
	TriggerDef	def;

	trigger_of_args(fcinfo, 1, &def);
	(void) trigger_check_input(&def, PG_GETARG_OID(0), NULL);
	PG_RETURN_VOID();
}
