/*
 * distributed.c
 *		Queues whose rows live in Citus shards: each row numbered by the
 *		node that stores it.
 *
 * A step's ticks rely on two facts about every queue row: windowing_xid is
 * the transaction that inserted it, and windowing_seq an arrival number
 * given after that transaction had its id (tick.c).  On a distributed
 * table Citus evaluates column defaults on the coordinator, so a worker
 * node's shard would hold the coordinator's transaction ids and numbers,
 * which that node's snapshots know nothing of.  So a distributed queue has
 * no defaults for those columns; a row trigger, which Citus runs where the
 * shard is, stamps each row with the node's own transaction id and a
 * number from the node's windowing.arrival sequence, in that order.  A
 * plain queue on a Citus server gets the trigger too, numbering from its
 * own identity sequence: an INSERT ... SELECT from a distributed table
 * evaluates the defaults in the query it sends to the nodes, so its rows
 * would carry the nodes' transaction ids.
 *
 * A pipeline over a distributed queue is a pipeline per shard, on the node
 * that holds the shard, reading it as a plain queue and writing the
 * co-located shards of the result and late tables.  Its definition
 * travels with the queue as a trigger's argument (Citus puts a table's
 * triggers on its shards, in the transaction that makes them), and each
 * node's worker makes and drops the pipelines of its own shards from
 * those triggers (distributed_sync), as their owners.  Citus lets the
 * worker empty a shard once told that this is meant.
 *
 * On event time the shards' pipelines of one distributed pipeline fire by
 * one watermark, the least of their inputs', as Flink's operators do with
 * the partitions they read: each step saves the watermark its shard's rows
 * make (input_watermark); each node's worker writes its shards' to a Citus
 * reference table, windowing.shard_progress, when they moved, reads all
 * of them from its own copy and gives its own shards' pipelines the least
 * (distributed_exchange), which their next ticks reach.  Citus keeps the
 * worker's connections to the other nodes between exchanges.
 *
 * A shard's pipeline keeps its cursor and state on its node, and reads
 * transaction ids that only that node's snapshots know: Citus's functions
 * that move, copy or split shards would leave them behind, so they are
 * refused while a pipeline runs over a distributed table.
 */
#include "compat.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/dependency.h"
#include "catalog/pg_namespace.h"
#include "commands/sequence.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "nodes/plannodes.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/xid8.h"

#include "distributed.h"
#include "owner.h"
#include "pipeline.h"
#include "spec.h"
#include "watermark.h"

PG_FUNCTION_INFO_V1(windowing_stamp_arrival);
PG_FUNCTION_INFO_V1(windowing_shard_pipeline);
PG_FUNCTION_INFO_V1(windowing_idle_watermark);

/* The node's sequence of arrival numbers for the shards of distributed queues. */
Oid
distributed_arrival_seq(void)
{
	Oid			nsp = get_namespace_oid("windowing", false);
	Oid			seq = get_relname_relid("arrival", nsp);

	if (!OidIsValid(seq))
		elog(ERROR, "sequence windowing.arrival is missing");
	return seq;
}

/* The two columns' numbers, found once per statement. */
typedef struct StampColumns
{
	Oid			relid;
	int			cols[2];
	Oid			seq;
} StampColumns;

static StampColumns *
stamp_columns(FunctionCallInfo fcinfo, Relation rel)
{
	StampColumns *sc = fcinfo->flinfo->fn_extra;

	if (sc == NULL || sc->relid != RelationGetRelid(rel))
	{
		Oid			relid = RelationGetRelid(rel);

		sc = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(StampColumns));
		sc->relid = relid;
		sc->cols[0] = get_attnum(relid, "windowing_xid");
		sc->cols[1] = get_attnum(relid, "windowing_seq");
		if (sc->cols[0] == InvalidAttrNumber || sc->cols[1] == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("table %s is not a queue", RelationGetRelationName(rel)),
					 errdetail("A queue has the columns windowing_xid and windowing_seq.")));
		sc->seq = getIdentitySequence(relid, sc->cols[1], true);
		if (!OidIsValid(sc->seq))
			sc->seq = distributed_arrival_seq();
		fcinfo->flinfo->fn_extra = sc;
	}
	return sc;
}

/*
 * SQL: windowing._stamp_arrival(), a BEFORE INSERT or UPDATE OF
 * windowing_seq row trigger of a distributed queue, run on the node that
 * holds the row's shard.
 */
Datum
windowing_stamp_arrival(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	StampColumns *sc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(td->tg_event)
		|| !TRIGGER_FIRED_FOR_ROW(td->tg_event) || TRIGGER_FIRED_BY_DELETE(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("windowing._stamp_arrival() must be called as a BEFORE INSERT or UPDATE row trigger")));
	sc = stamp_columns(fcinfo, td->tg_relation);
	/* the transaction's id first: tick.c's bound on unread rows needs it */
	values[0] = FullTransactionIdGetDatum(GetTopFullTransactionId());
	values[1] = Int64GetDatum(nextval_internal(sc->seq, false));
	/* an update of windowing_seq (rows there before the table became a queue) numbers them anew */
	return PointerGetDatum(heap_modify_tuple_by_cols(TRIGGER_FIRED_BY_UPDATE(td->tg_event)
													 ? td->tg_newtuple : td->tg_trigtuple,
													 RelationGetDescr(td->tg_relation),
													 2, sc->cols, values, nulls));
}

/*
 * Lets the statements up to distributed_shard_changes_end() empty a shard
 * by its name, which Citus refuses unless told that it is meant; a no-op
 * without Citus.  Returns the nesting level to end.
 */
int
distributed_shard_changes_begin(void)
{
	int			nest = NewGUCNestLevel();

	if (GetConfigOption("citus.enable_manual_changes_to_shards", true, false) != NULL)
		(void) set_config_option("citus.enable_manual_changes_to_shards", "on", PGC_SUSET,
								 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	return nest;
}

void
distributed_shard_changes_end(int nest)
{
	AtEOXact_GUC(true, nest);
}

/*
 * SQL: windowing._shard_pipeline(definition), the statement trigger that
 * carries a distributed pipeline's definition to the queue's shards; it
 * does nothing when it fires.
 */
Datum
windowing_shard_pipeline(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("windowing._shard_pipeline() must be called as a trigger")));
	return PointerGetDatum(NULL);
}

/* Whether the Citus library is loaded in this process. */
bool
distributed_citus_loaded(void)
{
	return GetConfigOption("citus.enable_unsafe_triggers", true, false) != NULL;
}

/* Whether Citus is in this database (its catalog is). */
static bool
citus_in_database(void)
{
	return OidIsValid(get_relname_relid("pg_dist_shard", PG_CATALOG_NAMESPACE));
}

/*
 * Whether the last distributed_sync() found Citus in the database.  Its
 * worker then stays when it has nothing to run: a distributed pipeline's
 * definition reaches the shards with nothing that would wake it.
 */
static bool citus_database = false;

bool
distributed_worker_stays(void)
{
	return citus_database;
}

/*
 * Makes the pipelines of the shards this node holds that have none, and
 * drops those whose distributed pipeline is gone, each as its owner, in
 * the caller's transaction.  Nothing to do without Citus.
 */
void
distributed_sync(void)
{
	List	   *owners = NIL;
	ListCell   *lc;

	citus_database = citus_in_database();
	if (!citus_database)
		return;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* on a coordinator whose pipelines are older than the table */
	if (SPI_execute("SELECT windowing._shard_progress_reset(NULL)", false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not make the table of the shards' watermarks");
	if (SPI_execute("SELECT DISTINCT owner FROM windowing._shard_pipelines_pending() "
					"WHERE owner IS NOT NULL", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the pipelines of this node's shards");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		owners = lappend_oid(owners, DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
																	SPI_tuptable->tupdesc,
																	1, &isnull)));
	}
	foreach(lc, owners)
		(void) owner_execute(lfirst_oid(lc), "SELECT windowing._sync_shard_pipelines()",
							 0, NULL, NULL);
	SPI_finish();
}

/* Citus's functions that move, copy or split shards, or make tables anew. */
static const char *const shard_movers[] = {
	"citus_move_shard_placement", "master_move_shard_placement",
	"citus_copy_shard_placement", "master_copy_shard_placement",
	"citus_split_shard_by_split_points", "isolate_tenant_to_new_shard",
	"citus_rebalance_start", "rebalance_table_shards", "replicate_table_shards",
	"citus_drain_node", "master_drain_node", "alter_distributed_table",
	"undistribute_table",
};

static ExecutorStart_hook_type prev_executor_start = NULL;

static bool
moves_shards(Oid funcid)
{
	char	   *name;

	if (get_func_namespace(funcid) != PG_CATALOG_NAMESPACE)
		return false;
	name = get_func_name(funcid);
	for (int i = 0; i < lengthof(shard_movers); i++)
		if (name != NULL && strcmp(name, shard_movers[i]) == 0)
			return true;
	return false;
}

/* The pipelines over distributed tables of this database, or NULL. */
static char *
distributed_pipelines(void)
{
	Oid			nsp = get_namespace_oid("windowing", true);
	char	   *names = NULL;
	bool		isnull;
	Datum		d;

	if (!OidIsValid(nsp) || !OidIsValid(get_relname_relid("distributed_pipeline", nsp)))
		return NULL;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT windowing._distributed_pipeline_names()", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not list the pipelines over distributed tables");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
		names = MemoryContextStrdup(TopTransactionContext, TextDatumGetCString(d));
	SPI_finish();
	return names;
}

/* Refuses call "e" if it is one of Citus's shard movers and pipelines run. */
static void
refuse_shard_move(Node *e)
{
	char	   *names;
	Oid			funcid;

	if (!IsA(e, FuncExpr))
		return;
	funcid = ((FuncExpr *) e)->funcid;
	if (!moves_shards(funcid) || (names = distributed_pipelines()) == NULL)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cannot run %s while pipelines run over distributed tables", get_func_name(funcid)),
			 errdetail("Pipelines %s read each shard on the node that holds it, where its cursor and window state are.",
					   names),
			 errhint("Drop the pipelines, change the shards, then create the pipelines again.")));
}

/*
 * Looks at the calls of a plan that only calls functions, as SELECT f(...)
 * and SELECT * FROM f(...) do: Citus's shard movers are called so.
 */
static void
refuse_shard_moves(QueryDesc *queryDesc, int eflags)
{
	Plan	   *plan = queryDesc->plannedstmt->planTree;
	ListCell   *lc;

	if (plan != NULL && plan->lefttree == NULL && (IsA(plan, Result) || IsA(plan, FunctionScan))
		&& distributed_citus_loaded())
	{
		if (IsA(plan, Result))
			foreach(lc, plan->targetlist)
				refuse_shard_move((Node *) ((TargetEntry *) lfirst(lc))->expr);
		else if (IsA(plan, FunctionScan))
			foreach(lc, ((FunctionScan *) plan)->functions)
				refuse_shard_move(((RangeTblFunction *) lfirst(lc))->funcexpr);
	}
	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/* Installs the refusal of shard moves; from _PG_init, when preloaded. */
void
distributed_init(void)
{
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = refuse_shard_moves;
}

/*
 * Gives the pipelines of this node's shards the least input watermark of
 * their distributed pipelines' shards (_exchange_watermarks), in the
 * caller's transaction.  Nothing to do without Citus.
 */
void
distributed_exchange(void)
{
	if (!citus_in_database())
		return;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT windowing._exchange_watermarks()", false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not exchange the watermarks of this node's shards");
	SPI_finish();
}

/*
 * SQL: windowing._idle_watermark(last_row_at, idle_timeout, time_type,
 * max_out_of_orderness), the watermark of a shard's input idle since
 * last_row_at, or NULL: the rule of pipeline_idle_watermark().
 */
Datum
windowing_idle_watermark(PG_FUNCTION_ARGS)
{
	bool		is_ts;
	int64		w;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		PG_RETURN_NULL();
	is_ts = PG_GETARG_OID(2) != INT8OID;
	w = pipeline_idle_watermark(0, PG_GETARG_TIMESTAMPTZ(0), pipeline_clock(),
								spec_interval_span(PG_GETARG_INTERVAL_P(1), "idle_timeout", false).usecs,
								is_ts, pipeline_duration(PG_GETARG_INTERVAL_P(3), is_ts,
														 "max_out_of_orderness"));
	if (w == WMK_NONE)
		PG_RETURN_NULL();
	PG_RETURN_INT64(w);
}
