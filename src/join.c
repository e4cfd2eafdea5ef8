/*
 * join.c
 *		A step of a join pipeline: Flink's interval join or window join of
 *		two queues.
 *
 * A left row at t meets each right row of its key whose time is within
 * [t + lower, t + upper] (either bound exclusive if asked), as Flink's
 * KeyedStream.intervalJoin(...).between(lower, upper) pairs them; outer
 * joins also give each row that met nothing, once the watermark shows that
 * nothing can meet it any more, as Flink SQL does.
 *
 * Each input keeps its rows that may still meet rows of the other in the
 * memory of the process that steps the join, logged in state_log
 * (join_store.c).  A step reads the new rows of each input's tick (tick.c),
 * left then right, in arrival order:
 *
 * 1. each row is kept or routed late.  A row is late when its time is
 *    before the join's watermark as it stood at that row: the larger of the
 *    join's watermark before the step and the smaller of the input's own
 *    watermark after the rows before it and the other input's at the
 *    step's start (Flink's isLate, against the minimum of the inputs'
 *    watermarks, which never goes back);
 * 2. once both inputs are read, the rows kept meet the other input's kept
 *    rows, both inputs' new rows in one sequence by time (each input's in
 *    arrival order), each meeting the rows met before it, so each pair
 *    once; the pairs are written in bulk as they are made;
 * 3. the watermarks move: each input's follows its newest time less
 *    max_out_of_orderness (and the clock, once idle for idle_timeout), and
 *    the join's is the smaller of the two;
 * 4. the rows the watermark passed for good leave, in every step: a left
 *    row at t once t + upper is before it, a right row at t once t - lower
 *    is, an outer join's unmatched ones written first with the other
 *    side's columns NULL.  Flink drops a row when the watermark reaches
 *    t + upper, where a right row on time at exactly t + upper could still
 *    have met it; here it stays until the watermark is past.
 *
 * A window join (an assigner instead of bounds) pairs the rows of a key in
 * the same window, as Flink's DataStream.join(...).window(...) does, when
 * the window fires.  Its rows are kept in tables of its own (its state
 * tables), once for each of their windows, and the step reads each input's
 * tick with one statement and works on sets, as a batch join would:
 *
 * 1. as above, but a row is kept for each of its windows not yet past its
 *    cleanup time at the watermark it met, and late if it has none; a
 *    session row merges with its key's sessions on both inputs;
 * 2. (after the watermarks move) the windows the watermark reached fire:
 *    the pairs with a row new to a fired window are written, and with
 *    allowed lateness those rows are marked, so a late row re-fires its
 *    window with the pairs it makes and no pair is written twice; a join
 *    whose select list aggregates writes each fired window's row instead,
 *    over all its rows, replacing the row of an earlier firing;
 * 3. the windows past their cleanup time leave, an outer join's rows that
 *    met nothing in their window written first.
 *
 * Everything happens in the caller's transaction, so a step is exactly once
 * as an aggregate pipeline's is.
 */
#include "compat.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "commands/async.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "emit.h"
#include "join.h"
#include "join_store.h"
#include "pair_writer.h"
#include "pipeline.h"
#include "plans.h"
#include "spec.h"
#include "sql_pipeline.h"
#include "tick.h"
#include "watermark.h"

typedef struct JoinStep
{
	const PipelineDef *def;
	PipelineProgress *progress;
	JoinInput	in[2];			/* left, right */
	char	   *state[2];		/* each state table, qualified */
	List	   *columns[2];		/* its columns from its queue, quoted */
	float4		kept[2];		/* its rows, as last analyzed */
	char	   *late_table;		/* NULL: late rows are dropped */
	bool		late_missed;	/* it has missed_windows (window joins) */
	char	   *result_table;
	Oid			span_type;		/* of a time plus or minus a span */
	int64		lower;			/* the bounds, in the time column's unit */
	int64		upper;
	int64		delay;			/* max_out_of_orderness; -1: none */
	bool		windowed;		/* a window join: assigner, lateness */
	bool		sessions;		/* its windows are sessions, which merge */
	bool		aggregating;	/* a window join of aggregates, upserted */
	char	   *conflict;		/* its result table's key, window last */
	char	   *updates;		/* and its outputs as ON CONFLICT sets them */
	Datum		assigner;
	Oid			assigner_type;
	int64		lateness;		/* allowed_lateness */
	int64		written;		/* result rows */
	bool		partial[2];		/* an input's tick was read in part */
	bool		opened[2];		/* an input's tick was opened by this step */
	/* an interval join: its kept rows, and the pairs not written yet */
	JoinStore  *store;
	JoinLayout	layout;
	AttrNumber *read_columns[2];	/* the queue's column for each of the
									 * state table's, 0 for none */
	Oid			row_type[2];	/* the state table's row type */
	Oid			array_type[2];
	int			npairs;
	Datum	   *pairs[2];		/* PAIR_BATCH of each side; 0: none */
	bool	   *unpaired[2];
	PairWriter *writer;			/* or writes them as they come */
	bool		writer_tried;	/* a writer was asked for (NULL: none) */
	MemoryContext cxt;			/* the step's */
} JoinStep;

/* Pairs written by one statement. */
#define PAIR_BATCH 10000

/* The columns a state table adds to its queue's. */
static const char *const state_columns[] = {
	"windowing_matched", "windowing_start", "windowing_end", "windowing_fired"
};

static bool
is_state_column(const char *name)
{
	for (int i = 0; i < lengthof(state_columns); i++)
		if (strcmp(name, state_columns[i]) == 0)
			return true;
	return false;
}

/* A span of the time column's unit as the column's arithmetic takes it. */
static Datum
span_datum(const JoinStep *j, int64 units)
{
	Interval   *iv;

	if (j->span_type == INT8OID)
		return Int64GetDatum(units);
	iv = palloc0(sizeof(Interval));
	iv->time = units;
	return IntervalPGetDatum(iv);
}

/*
 * Input i's state table: its name, its columns that come from its queue,
 * and its size as last analyzed.
 */
static void
load_state(JoinStep *j, int i)
{
	Relation	rel = table_open(j->in[i].state_table, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);

	j->state[i] = catalog_relation_name(j->in[i].state_table, "state table");
	j->columns[i] = NIL;
	j->read_columns[i] = palloc0(sizeof(AttrNumber) * Max(desc->natts, 1));
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);

		if (att->attisdropped || is_state_column(NameStr(att->attname)))
			continue;
		j->columns[i] = lappend(j->columns[i], pstrdup(quote_identifier(NameStr(att->attname))));
		j->read_columns[i][a] = get_attnum(j->in[i].source, NameStr(att->attname));
	}
	j->kept[i] = rel->rd_rel->reltuples;
	j->row_type[i] = rel->rd_rel->reltype;
	j->array_type[i] = get_array_type(j->row_type[i]);
	j->layout.desc[i] = CreateTupleDescCopy(desc);
	table_close(rel, AccessShareLock);
}

/*
 * An interval join's rows as its store keeps them: of the state tables'
 * row types, with their key and time columns.
 */
static void
load_layout(JoinStep *j)
{
	JoinLayout *l = &j->layout;

	l->nkeys = j->in[0].nkeys;
	for (int i = 0; i < 2; i++)
	{
		l->keys[i] = palloc(sizeof(AttrNumber) * l->nkeys);
		for (int k = 0; k < l->nkeys; k++)
			l->keys[i][k] = get_attnum(j->in[i].state_table, j->in[i].keys[k]);
		l->time[i] = get_attnum(j->in[i].state_table, j->in[i].time_column);
	}
	join_layout_keys(l);
}

/* Input i's queue columns, joined by commas, each after "prefix". */
static char *
column_list(const JoinStep *j, int i, const char *prefix)
{
	StringInfoData out;
	ListCell   *lc;

	initStringInfo(&out);
	foreach(lc, j->columns[i])
		appendStringInfo(&out, "%s%s%s", out.len > 0 ? ", " : "", prefix, (char *) lfirst(lc));
	return out.data;
}

/*
 * Input i's kept rows that "filter" (over its state table's columns)
 * selects, under the input's alias, showing only the queue's columns, so
 * that the select list reads them as it read the queues at creation.
 */
static char *
side_rows(const JoinStep *j, int i, const char *filter)
{
	return psprintf("(SELECT %s FROM %s AS s WHERE %s) AS %s", column_list(j, i, ""),
					j->state[i], filter,
					quote_identifier(j->in[i].alias));
}

/*
 * Equal keys of input ia's row under alias "a" and input ib's under "b",
 * joined by AND: the left's and the right's, or an input's and a window's
 * keys named as the left input names them (ib 0).
 */
static char *
keys_match(const JoinStep *j, int ia, const char *a, int ib, const char *b)
{
	StringInfoData out;

	initStringInfo(&out);
	for (int k = 0; k < j->in[ia].nkeys; k++)
		appendStringInfo(&out, "%s%s.%s = %s.%s", k > 0 ? " AND " : "", a,
						 quote_identifier(j->in[ia].keys[k]), b, quote_identifier(j->in[ib].keys[k]));
	return out.data;
}

/* Is input i's side kept whole by the join (its unmatched rows written)? */
static bool
outer_side(const JoinStep *j, int i)
{
	const char *jt = j->def->join_type;

	return strcmp(jt, "full") == 0 || strcmp(jt, i == 0 ? "left" : "right") == 0;
}

/*
 * Input i's own watermark once its rows up to time "seen" are read: $5
 * before them, less $7 (the delay and a tick).
 */
static char *
own_watermark_sql(const char *seen)
{
	return psprintf("GREATEST($5, %s OPERATOR(pg_catalog.-) $7)", seen);
}

/*
 * The join's watermark where input i's own is "own": at most "other" (the
 * other input's), and never behind $4, the join's before.
 */
static char *
join_watermark_sql(const char *own, const char *other)
{
	return psprintf("CASE WHEN %s IS NULL OR %s IS NULL THEN $4 ELSE GREATEST($4, LEAST(%s, %s)) END",
					own, other, own, other);
}

/*
 * The start of the statement of input i's tick: its rows (t) in arrival
 * order, the first $11 of them (all if NULL), each with the join's
 * watermark as it stood at that row (w.wm, from $4 to $7).
 */
static void
rows_sql(StringInfo sql, const JoinStep *j, int i)
{
	const JoinInput *in = &j->in[i];
	const char *t = quote_identifier(in->time_column);

	appendStringInfo(sql,
					 "WITH t AS (SELECT q AS r, q.%s AS ts, "
					 "pg_catalog.max(q.%s) OVER (ORDER BY q.windowing_seq "
					 "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before "
					 "FROM %s AS q "
					 "WHERE pg_catalog.pg_visible_in_snapshot(q.windowing_xid, $1::pg_catalog.pg_snapshot) "
					 "AND ($2::pg_catalog.pg_snapshot IS NULL "
					 "OR NOT pg_catalog.pg_visible_in_snapshot(q.windowing_xid, $2::pg_catalog.pg_snapshot)) "
					 "AND q.windowing_seq OPERATOR(pg_catalog.>) $3 ORDER BY q.windowing_seq LIMIT $11), "
					 "w AS (SELECT t.r, t.ts, %s AS wm FROM t, LATERAL (SELECT %s AS own) o)",
					 t, t, catalog_relation_name(in->source, "source table"),
					 join_watermark_sql("o.own", "$6"), own_watermark_sql("t.before"));
}

/*
 * The end of that statement: the rows of n that "late" picks into the late
 * table (if any) with the reason "reason" gives and, where the table has
 * the column, the windows "missed" gives, and the step's counts: of n's
 * rows those "first" picks (one for each row read).
 */
static void
late_sql(StringInfo sql, const JoinStep *j, int i, const char *late, const char *reason,
		 const char *missed, const char *first)
{
	bool		with_missed = j->late_missed && missed != NULL;

	if (j->late_table)
		appendStringInfo(sql,
						 ", late AS (INSERT INTO %s (side, event_time, watermark, reason, %srow_data) "
						 "SELECT '%s', n.ts, n.wm, %s, %s%spg_catalog.to_jsonb(n.r) OPERATOR(pg_catalog.-) "
						 "'windowing_xid'::text OPERATOR(pg_catalog.-) 'windowing_seq'::text "
						 "FROM n WHERE %s RETURNING 1)",
						 j->late_table, with_missed ? "missed_windows, " : "", j->in[i].side, reason,
						 with_missed ? missed : "", with_missed ? ", " : "", late);
	appendStringInfo(sql,
					 " SELECT pg_catalog.count(*) FILTER (WHERE %s) AS n, pg_catalog.max(n.ts) AS max_ts, "
					 "pg_catalog.count(*) FILTER (WHERE %s) AS late, "
					 "pg_catalog.max((n.r).windowing_seq) AS last_seq FROM n", first, late);
}

/*
 * The statement of input i's tick in a window join: each row is kept once
 * for each of its windows ($9 assigns them) that is not past its cleanup
 * time at the watermark the row met, window_end - 1 + allowed lateness
 * ($8; a window is past when its end less $10, 1 - lateness, is at or
 * before the watermark), as Flink's WindowOperator.isWindowLate has it.  A
 * row with no such window goes to the late table if its time is bad or
 * behind the watermark by the lateness (Flink's isElementLate: ts +
 * lateness <= watermark), whether its windows are past or it falls
 * between hopping windows; one on time between windows is dropped, as
 * Flink drops it.  As an aggregate pipeline's, a row on time for some of
 * its windows and past others goes there too (n.missed, on the row's
 * first window kept): Flink drops it from those silently.  Only a row
 * less than a window's lateness ahead of the watermark can miss one, so
 * the others skip the search.  Rows meet when their windows fire
 * (fire()), so a step reads no pairs here.
 */
static char *
window_read_sql(const JoinStep *j, int i)
{
	bool		partial = j->late_missed || j->late_table == NULL;
	const char *unplaced = "n.i IS NULL AND (n.ts IS NULL OR n.near "
		"OR NOT windowing._in_range($9, n.ts))";
	StringInfoData sql;

	initStringInfo(&sql);
	rows_sql(&sql, j, i);
	appendStringInfo(&sql,
					 ", n AS (SELECT w.r, w.ts, w.wm, z.near, y.s, y.e, y.i, "
					 "CASE WHEN (y.i IS NULL OR y.i OPERATOR(pg_catalog.=) 1) AND z.near "
					 "THEN (SELECT pg_catalog.array_agg(%s ORDER BY a.window_start, a.window_end) "
					 "FROM windowing._windows($9, w.ts) AS a "
					 "WHERE a.window_end OPERATOR(pg_catalog.-) $10 OPERATOR(pg_catalog.<=) w.wm) END AS missed "
					 "FROM w CROSS JOIN LATERAL (SELECT w.ts OPERATOR(pg_catalog.-) $10 "
					 "OPERATOR(pg_catalog.<) w.wm AS near) z LEFT JOIN LATERAL "
					 "windowing._windows($9, w.ts, w.wm, $8) WITH ORDINALITY AS y(s, e, i) ON true), "
					 "kept AS (INSERT INTO %s (%s, windowing_start, windowing_end) "
					 "SELECT %s, n.s, n.e FROM n WHERE n.i IS NOT NULL RETURNING 1)",
					 emit_window_sql(j->def->time_type, "a.window_start", "a.window_end"),
					 j->state[i], column_list(j, i, ""), column_list(j, i, "(n.r)."));
	late_sql(&sql, j, i,
			 psprintf("(%s)%s", unplaced,
					  partial ? " OR (n.i OPERATOR(pg_catalog.=) 1 AND n.missed IS NOT NULL)" : ""),
			 "CASE WHEN n.ts IS NULL THEN 'event time is null' "
			 "WHEN n.i IS NOT NULL THEN 'late for some windows' "
			 "WHEN NOT windowing._in_range($9, n.ts) THEN 'event time out of range' "
			 "WHEN n.missed IS NULL THEN 'between windows' "
			 "ELSE 'late' END", "n.missed",
			 "n.i IS NULL OR n.i OPERATOR(pg_catalog.=) 1");
	return sql.data;
}

/*
 * Input i's key columns, each after "prefix" and named "as" followed by
 * the left input's name for it (if "as"), joined by commas.
 */
static char *
key_list(const JoinStep *j, int i, const char *prefix, const char *as)
{
	StringInfoData out;

	initStringInfo(&out);
	for (int k = 0; k < j->in[i].nkeys; k++)
		appendStringInfo(&out, "%s%s%s%s%s", k > 0 ? ", " : "", prefix,
						 quote_identifier(j->in[i].keys[k]), as ? as : "",
						 as ? quote_identifier(j->in[0].keys[k]) : "");
	return out.data;
}

/*
 * The statement of input i's tick in a session window join.  A row's
 * window is [ts, ts + gap) ($9) until it merges, as in Flink's
 * MergingWindowSet, with every session of its key it overlaps or touches,
 * on either input (ex: the sessions of the keys the tick holds).  A row is
 * late when its own window and every session it touches are past their
 * cleanup time at the watermark it met (so a late row may still join a
 * live session; a window is past when its end less $10, 1 - lateness, is
 * at or before the watermark); the rows of a step merge
 * with each other whatever their order.  The rows on time and the
 * sessions they touch are merged into islands (iv, br, isl: a new island
 * where a window starts after every earlier one of its key ended); the
 * rows are kept with their island's bounds, and the kept rows of both
 * inputs in a session that grew move to its new bounds.
 */
static char *
session_read_sql(const JoinStep *j, int i)
{
	const int	o = 1 - i;
	const char *k0 = key_list(j, 0, "", NULL);
	const char *touches = psprintf("EXISTS (SELECT FROM ex WHERE %s AND ex.s OPERATOR(pg_catalog.<=) n.e "
								   "AND ex.e OPERATOR(pg_catalog.>=) n.s AND (ex.e OPERATOR(pg_catalog.-) $10) "
								   "OPERATOR(pg_catalog.>) n.wm)",
								   keys_match(j, i, "(n.r)", 0, "ex"));
	StringInfoData sql;

	initStringInfo(&sql);
	rows_sql(&sql, j, i);
	appendStringInfo(&sql,
					 ", n AS (SELECT w.r, w.ts, w.wm, y.window_start AS s, y.window_end AS e, "
					 "y.window_end IS NOT NULL AND (w.wm IS NULL OR (y.window_end OPERATOR(pg_catalog.-) $10) "
					 "OPERATOR(pg_catalog.>) w.wm) AS own "
					 "FROM w LEFT JOIN LATERAL windowing._windows($9, w.ts) AS y ON true), "
					 "ex AS (SELECT %s, s.windowing_start AS s, s.windowing_end AS e FROM %s AS s "
					 "WHERE (%s) IN (SELECT %s FROM n) "
					 "UNION SELECT %s, s.windowing_start, s.windowing_end FROM %s AS s "
					 "WHERE (%s) IN (SELECT %s FROM n)), "
					 "acc AS (SELECT n.* FROM n WHERE n.own OR (n.s IS NOT NULL AND %s)), "
					 "iv AS (SELECT %s, ex.s, ex.e FROM ex UNION ALL SELECT %s, acc.s, acc.e FROM acc), "
					 "br AS (SELECT iv.*, CASE WHEN iv.s OPERATOR(pg_catalog.<=) pg_catalog.max(iv.e) "
					 "OVER (PARTITION BY %s ORDER BY iv.s, iv.e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) "
					 "THEN 0 ELSE 1 END AS b FROM iv), "
					 "isl AS (SELECT br.*, pg_catalog.sum(br.b) OVER (PARTITION BY %s ORDER BY br.s, br.e "
					 "ROWS UNBOUNDED PRECEDING) AS island FROM br), "
					 "mp AS (SELECT DISTINCT %s, isl.s, isl.e, "
					 "pg_catalog.min(isl.s) OVER (PARTITION BY %s, isl.island) AS ms, "
					 "pg_catalog.max(isl.e) OVER (PARTITION BY %s, isl.island) AS me FROM isl), "
					 "kept AS (INSERT INTO %s (%s, windowing_start, windowing_end) "
					 "SELECT %s, COALESCE(mp.ms, acc.s), COALESCE(mp.me, acc.e) FROM acc LEFT JOIN mp "
					 "ON %s AND mp.s OPERATOR(pg_catalog.=) acc.s AND mp.e OPERATOR(pg_catalog.=) acc.e "
					 "RETURNING 1)",
					 key_list(j, i, "s.", " AS "), j->state[i], key_list(j, i, "s.", NULL),
					 key_list(j, i, "(n.r).", NULL),
					 key_list(j, o, "s.", " AS "), j->state[o], key_list(j, o, "s.", NULL),
					 key_list(j, i, "(n.r).", NULL),
					 touches, k0, key_list(j, i, "(acc.r).", " AS "), k0, k0, k0, k0, k0,
					 j->state[i], column_list(j, i, ""), column_list(j, i, "(acc.r)."),
					 keys_match(j, i, "(acc.r)", 0, "mp"));
	for (int s = 0; s < 2; s++)
		appendStringInfo(&sql,
						 ", moved%d AS (UPDATE %s AS u SET windowing_start = mp.ms, windowing_end = mp.me "
						 "FROM mp WHERE %s AND u.windowing_start OPERATOR(pg_catalog.=) mp.s "
						 "AND u.windowing_end OPERATOR(pg_catalog.=) mp.e "
						 "AND (mp.ms OPERATOR(pg_catalog.<>) mp.s OR mp.me OPERATOR(pg_catalog.<>) mp.e) RETURNING 1)",
						 s, j->state[s], keys_match(j, s, "u", 0, "mp"));
	late_sql(&sql, j, i, psprintf("n.s IS NULL OR NOT (n.own OR %s)", touches),
			 "CASE WHEN n.ts IS NULL THEN 'event time is null' "
			 "WHEN n.s IS NULL THEN 'event time out of range' ELSE 'late' END",
			 psprintf("CASE WHEN n.s IS NOT NULL THEN ARRAY[%s] END",
					  emit_window_sql(j->def->time_type, "n.s", "n.e")),
			 "true");
	return sql.data;
}

static Datum
watermark_arg(int64 w, char *null_flag)
{
	*null_flag = w == WMK_NONE ? 'n' : ' ';
	return Int64GetDatum(w);
}

/*
 * The statements of the step are planned from the state tables'
 * statistics, which know nothing of the rows the step just added: taking
 * a step's 100,000 new rows for a few, the planner would probe them once
 * per row of the other side.  So a step that grows a state table by more
 * than a tenth (and 1,000 rows) analyzes it first, as autovacuum would
 * later; ANALYZE counts the rows the transaction inserted.  The plans need
 * the rows' count and how many keys and windows they hold, which a sample
 * of 3,000 rows tells as well as the default's 30,000, at a tenth of the
 * cost (with the default, a tenth of a window join's step).
 */
static void
refresh_statistics(JoinStep *j, int i)
{
	int64		added = j->in[i].cursor.rows;
	int			nest;

	if (added < 1000 || added < j->kept[i] / 10)
		return;
	nest = NewGUCNestLevel();
	(void) set_config_option("default_statistics_target", "10", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	if (SPI_execute(psprintf("ANALYZE %s", j->state[i]), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not analyze the %s state of join pipeline \"%s\"", j->in[i].side,
			 j->def->name);
	AtEOXact_GUC(true, nest);
}

/*
 * Input i's watermark as the rows it read so far move it, the least it
 * has once the step moves it (move_watermark): an idle input's may go
 * further.
 */
static Watermark
rows_watermark(const JoinStep *j, int i)
{
	const JoinInput *in = &j->in[i];
	Watermark	w;

	wmk_init(&w, j->delay < 0 ? 0 : j->delay, j->delay >= 0);
	w.value = in->watermark;
	if (in->max_seen != INT64_MIN)
		(void) wmk_observe(&w, in->max_seen);
	return w;
}

/*
 * Where join watermark "wm" leaves input i's rows: those before it, the
 * watermark less the upper bound for the left, plus the lower for the
 * right (expire).  At the end of input all of them.
 */
static int64
expiry(const JoinStep *j, int i, int64 wm)
{
	if (wm == WMK_END)
		return WMK_END;
	return wmk_add(wm, i == 0 ? -j->upper : j->lower);
}

static uint64
run(const char *sql, int nargs, Datum *args, Oid *types, int expect)
{
	if (plans_execute(sql, nargs, types, args, NULL, false, 0) != expect)
		elog(ERROR, "could not run: %s", sql);
	return SPI_processed;
}

/*
 * A writer of the step's pairs into the result table in bulk, if the select
 * list and the result table allow it (pair_writer.c), made in the step's
 * memory.
 */
static PairWriter *
open_pair_writer(JoinStep *j)
{
	MemoryContext old = MemoryContextSwitchTo(j->cxt);
	PairSide	sides[2];
	PairWriter *w;

	for (int i = 0; i < 2; i++)
	{
		bool	   *shown = palloc(sizeof(bool) * Max(j->layout.desc[i]->natts, 1));

		for (int a = 0; a < j->layout.desc[i]->natts; a++)
			shown[a] = j->read_columns[i][a] != 0;
		sides[i] = (PairSide) {j->in[i].alias, j->layout.desc[i], shown};
	}
	w = pair_writer_create(j->result_table, j->def->aggregates, sides);
	MemoryContextSwitchTo(old);
	return w;
}

/*
 * Writes what is left of the step's pairs: the writer's last batch, or the
 * pairs gathered for a statement.
 */
static void
write_pairs(JoinStep *j)
{
	Datum		args[2];
	int			lb = 1;

	if (j->writer != NULL)
	{
		pair_writer_end(j->writer);
		j->writer = NULL;
		j->writer_tried = false;
	}
	if (j->npairs == 0)
		return;
	for (int i = 0; i < 2; i++)
		args[i] = PointerGetDatum(construct_md_array(j->pairs[i], j->unpaired[i], 1, &j->npairs, &lb,
													 j->row_type[i], -1, false, TYPALIGN_DOUBLE));
	if (plans_execute_generic(psprintf("INSERT INTO %s SELECT %s FROM (SELECT pg_catalog.unnest($1) AS xr, "
							   "pg_catalog.unnest($2) AS yr) AS pm, "
							   "LATERAL (SELECT %s) AS %s, LATERAL (SELECT %s) AS %s",
							   j->result_table, j->def->aggregates,
							   column_list(j, 0, "(pm.xr)."), quote_identifier(j->in[0].alias),
							   column_list(j, 1, "(pm.yr)."), quote_identifier(j->in[1].alias)),
							  2, j->array_type, args, NULL) != SPI_OK_INSERT)
		elog(ERROR, "could not write the pairs of join pipeline \"%s\"", j->def->name);
	j->written += SPI_processed;
	for (int i = 0; i < 2; i++)
		pfree(DatumGetPointer(args[i]));
	j->npairs = 0;
}

/* A pair for the results (JoinPairFn): a row of each side, or one alone. */
static void
add_pair(Datum left, Datum right, void *arg)
{
	JoinStep   *j = arg;
	Datum		row[2] = {left, right};

	if (!j->writer_tried)
	{
		j->writer = open_pair_writer(j);
		j->writer_tried = true;
	}
	if (j->writer != NULL)
	{
		pair_writer_add(j->writer, left, right);
		j->written++;
		return;
	}
	for (int i = 0; i < 2; i++)
	{
		if (j->pairs[i] == NULL)
		{
			j->pairs[i] = palloc(sizeof(Datum) * PAIR_BATCH);
			j->unpaired[i] = palloc(sizeof(bool) * PAIR_BATCH);
		}
		j->pairs[i][j->npairs] = row[i];
		j->unpaired[i][j->npairs] = row[i] == (Datum) 0;
	}
	if (++j->npairs == PAIR_BATCH)
		write_pairs(j);
}

/*
 * The times of the other input's rows that input i's row at "ts" meets
 * (JoinBoundsFn): [ts + lower, ts + upper] for a left row, [ts - upper, ts -
 * lower] for a right one, an exclusive bound a unit in.
 */
static void
meeting_times(int i, int64 ts, int64 *from, int64 *to, void *arg)
{
	const JoinStep *j = arg;
	bool		lower_excl = j->def->join_lower_exclusive;
	bool		upper_excl = j->def->join_upper_exclusive;

	if (i == 0)
	{
		*from = wmk_add(wmk_add(ts, j->lower), lower_excl ? 1 : 0);
		*to = wmk_add(wmk_add(ts, j->upper), upper_excl ? -1 : 0);
	}
	else
	{
		*from = wmk_add(wmk_add(ts, -j->upper), upper_excl ? 1 : 0);
		*to = wmk_add(wmk_add(ts, -j->lower), lower_excl ? -1 : 0);
	}
}

/* An interval join's read of input i's tick (read_rows). */
typedef struct RowsRead
{
	JoinStep   *j;
	int			i;
	int64		join_wm;		/* the join's watermark before the step */
	int64		other_wm;		/* the other input's, as the step began */
	int64		max_seen;		/* the newest time so far; WMK_NONE: none */
	int64		rows;
	int64		last_seq;
	int			time;			/* where the row's time and arrival number are */
	int			seq;
	TupleDesc	desc;			/* the state table's */
	Datum	   *values;
	bool	   *nulls;
	MemoryContext row_cxt;		/* a row as a composite, reset after it */
	List	   *late;			/* LateJoinRow *, for the late table */
	int64		nlate;
} RowsRead;

typedef struct LateJoinRow
{
	Datum		row;
	bool		ts_null;
	int64		ts;
	int64		wm;				/* WMK_NONE: none */
} LateJoinRow;

/*
 * The join's watermark as it stands at a row of input i: the larger of the
 * join's before the step and the smaller of the input's own watermark
 * after the rows before it (its watermark before them, or their newest
 * time less the delay and a unit) and the other input's as the step began
 * (Flink's isLate, against the minimum of the inputs' watermarks).
 */
static int64
watermark_at_row(const RowsRead *rr)
{
	const JoinStep *j = rr->j;
	int64		own = j->in[rr->i].watermark;

	if (j->delay >= 0 && rr->max_seen != WMK_NONE)
		own = Max(own, wmk_add(rr->max_seen, -(j->delay + 1)));
	if (own == WMK_NONE || rr->other_wm == WMK_NONE)
		return rr->join_wm;
	return Max(rr->join_wm, Min(own, rr->other_wm));
}

/*
 * One row of input i's tick (TickRowFn), in arrival order, as its state
 * table's row: late, or to meet the other input's kept rows and be kept
 * once both inputs are read (join_store_meet_all).
 */
static bool
read_row(Datum *vals, bool *nulls, void *arg)
{
	RowsRead   *rr = arg;
	JoinStep   *j = rr->j;
	int64		wm = watermark_at_row(rr);
	bool		ts_null = nulls[rr->time];
	int64		ts = ts_null ? 0 : DatumGetInt64(vals[rr->time]);
	int			c = 0;
	MemoryContext old = MemoryContextSwitchTo(rr->row_cxt);
	HeapTuple	tuple;
	Datum		row;

	for (int a = 0; a < rr->desc->natts; a++)
	{
		bool		read = j->read_columns[rr->i][a] != 0;

		rr->values[a] = read ? vals[c] : (Datum) 0;
		rr->nulls[a] = read ? nulls[c++] : true;
	}
	tuple = heap_form_tuple(rr->desc, rr->values, rr->nulls);
	/* heap_form_tuple made it a composite, unless it points at TOAST */
	row = HeapTupleHasExternal(tuple) ? heap_copy_tuple_as_datum(tuple, rr->desc) :
		PointerGetDatum(tuple->t_data);
	MemoryContextSwitchTo(old);
	rr->rows++;
	rr->last_seq = DatumGetInt64(vals[rr->seq]);
	if (ts_null || (wm != WMK_NONE && ts < wm))
	{
		LateJoinRow *l = palloc(sizeof(LateJoinRow));

		*l = (LateJoinRow) {datumCopy(row, false, -1), ts_null, ts, wm};
		rr->late = lappend(rr->late, l);
	}
	else
		join_store_row(j->store, rr->i, row, ts, rr->last_seq);
	MemoryContextReset(rr->row_cxt);
	if (!ts_null)
		rr->max_seen = rr->max_seen == WMK_NONE ? ts : Max(rr->max_seen, ts);
	return true;
}

/* Input i's late rows into the late table, as window joins' go there. */
static void
write_late(RowsRead *rr)
{
	const JoinStep *j = rr->j;
	int			n = list_length(rr->late);
	Datum	   *rows = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *times = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *time_nulls = palloc(sizeof(bool) * Max(n, 1));
	Datum	   *wms = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *wm_nulls = palloc(sizeof(bool) * Max(n, 1));
	Oid			tt = j->def->time_type;
	Oid			types[3] = {j->array_type[rr->i], get_array_type(tt), get_array_type(tt)};
	Datum		args[3];
	int			lb = 1;
	ListCell   *lc;
	int			k = 0;

	foreach(lc, rr->late)
	{
		LateJoinRow *l = lfirst(lc);

		rows[k] = l->row;
		times[k] = Int64GetDatum(l->ts);
		time_nulls[k] = l->ts_null;
		wms[k] = Int64GetDatum(l->wm);
		wm_nulls[k++] = l->wm == WMK_NONE;
	}
	args[0] = PointerGetDatum(construct_md_array(rows, NULL, 1, &n, &lb, j->row_type[rr->i], -1, false,
												 TYPALIGN_DOUBLE));
	args[1] = PointerGetDatum(construct_md_array(times, time_nulls, 1, &n, &lb, tt, 8, true,
												 TYPALIGN_DOUBLE));
	args[2] = PointerGetDatum(construct_md_array(wms, wm_nulls, 1, &n, &lb, tt, 8, true,
												 TYPALIGN_DOUBLE));
	run(psprintf("INSERT INTO %s (side, event_time, watermark, reason, row_data) "
				 "SELECT '%s', x.ts, x.wm, CASE WHEN x.ts IS NULL THEN 'event time is null' ELSE 'late' END, "
				 "pg_catalog.to_jsonb(x.r) OPERATOR(pg_catalog.-) "
				 "'{windowing_xid,windowing_seq,windowing_matched}'::pg_catalog.text[] "
				 "FROM (SELECT pg_catalog.unnest($1) AS r, pg_catalog.unnest($2) AS ts, "
				 "pg_catalog.unnest($3) AS wm) AS x",
				 j->late_table, j->in[rr->i].side),
		3, args, types, SPI_OK_INSERT);
}

/*
 * Reads input i's open tick past its cursor, its first max_rows rows
 * (<= 0: all), through the queue's reader (tick.c) rather than a
 * statement: each row judged late or not against the join's watermark as
 * it stood at that row, a late one into the late table, one on time met
 * with the other input's kept rows, then kept (join_store_meet).
 */
static void
read_rows(JoinStep *j, int i, int64 join_wm, int64 max_rows)
{
	JoinInput  *in = &j->in[i];
	RowsRead	rr = {j, i, join_wm, j->in[1 - i].watermark, WMK_NONE, 0, in->cursor.last_seq};
	TupleDesc	desc = j->layout.desc[i];
	AttrNumber *columns = palloc(sizeof(AttrNumber) * Max(desc->natts, 1));
	TickColumns c = {in->source, columns, 0, NIL, NIL};
	TickReader *r;

	for (int a = 0; a < desc->natts; a++)
	{
		if (j->read_columns[i][a] == 0)
			continue;
		if (a + 1 == j->layout.time[i])
			rr.time = c.ncolumns;
		if (strcmp(NameStr(TupleDescAttr(desc, a)->attname), "windowing_seq") == 0)
			rr.seq = c.ncolumns;
		columns[c.ncolumns++] = j->read_columns[i][a];
	}
	rr.desc = desc;
	rr.values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	rr.nulls = palloc(sizeof(bool) * Max(desc->natts, 1));
	rr.row_cxt = AllocSetContextCreate(CurrentMemoryContext, "windowing join row",
									   ALLOCSET_SMALL_SIZES);
	r = tick_reader_begin(&c, &in->cursor, NIL, max_rows);
	(void) tick_read(r, in->cursor.last_seq, max_rows > 0 ? max_rows : PG_INT64_MAX, read_row, &rr);
	tick_reader_end(r);
	MemoryContextDelete(rr.row_cxt);
	in->cursor.rows = rr.rows;
	if (rr.max_seen != WMK_NONE && rr.max_seen > in->max_seen)
		in->max_seen = rr.max_seen;
	j->partial[i] = max_rows > 0 && rr.rows >= max_rows;
	if (j->partial[i])
		in->cursor.last_seq = rr.last_seq;
	if (rr.late != NIL && j->late_table)
		write_late(&rr);
	if (j->late_table)
		j->progress->late_routed += list_length(rr.late);
	else
		j->progress->late_dropped += list_length(rr.late);
	j->progress->rows += rr.rows;
}

/*
 * Reads input i's open tick, or its first max_rows rows (<= 0: all), into
 * its state table or the late table (a window join), or its store
 * (read_rows).
 */
static void
read_input(JoinStep *j, int i, int64 join_wm, int64 max_rows)
{
	JoinInput  *in = &j->in[i];
	const JoinInput *other = &j->in[1 - i];
	Oid			tt = j->def->time_type;
	Oid			types[12] = {TEXTOID, TEXTOID, INT8OID, tt, tt, tt, j->span_type, INT8OID,
	j->assigner_type, j->span_type, INT8OID, tt};
	Datum		args[12];
	char		nulls[13] = "            ";
	HeapTuple	t;
	TupleDesc	d;
	bool		isnull;
	Datum		max_ts;
	int64		late;

	if (!j->windowed)
	{
		read_rows(j, i, join_wm, max_rows);
		return;
	}
	args[0] = CStringGetTextDatum(in->cursor.tick_hi);
	args[1] = in->cursor.tick_lo ? CStringGetTextDatum(in->cursor.tick_lo) : (Datum) 0;
	nulls[1] = in->cursor.tick_lo ? ' ' : 'n';
	args[2] = Int64GetDatum(in->cursor.last_seq);
	args[3] = watermark_arg(join_wm, &nulls[3]);
	args[4] = watermark_arg(in->watermark, &nulls[4]);
	args[5] = watermark_arg(other->watermark, &nulls[5]);
	args[6] = span_datum(j, j->delay + 1);
	nulls[6] = j->delay < 0 ? 'n' : ' ';
	args[7] = Int64GetDatum(j->lateness);
	args[8] = j->assigner;
	args[9] = span_datum(j, 1 - j->lateness);
	args[10] = Int64GetDatum(max_rows);
	nulls[10] = max_rows > 0 ? ' ' : 'n';
	args[11] = watermark_arg(rows_watermark(j, 1 - i).value, &nulls[11]);
	if (plans_execute(j->sessions ? session_read_sql(j, i) : window_read_sql(j, i),
					  12, types, args, nulls, false, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the %s input of join pipeline \"%s\"", in->side, j->def->name);
	t = SPI_tuptable->vals[0];
	d = SPI_tuptable->tupdesc;
	in->cursor.rows = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
	max_ts = SPI_getbinval(t, d, 2, &isnull);
	if (!isnull && DatumGetInt64(max_ts) > in->max_seen)
		in->max_seen = DatumGetInt64(max_ts);
	late = DatumGetInt64(SPI_getbinval(t, d, 3, &isnull));
	/* a tick read up to max_rows may hold more: the next step goes on */
	j->partial[i] = max_rows > 0 && in->cursor.rows >= max_rows;
	if (j->partial[i])
		in->cursor.last_seq = DatumGetInt64(SPI_getbinval(t, d, 4, &isnull));
	if (j->late_table)
		j->progress->late_routed += late;
	else
		j->progress->late_dropped += late;
	j->progress->rows += in->cursor.rows;
	refresh_statistics(j, i);
}

/*
 * Input i's rows that nothing on time can meet any more leave the store:
 * those before "until" (the watermark less the upper bound for the left,
 * plus the lower for the right).  An outer join on that side writes those
 * that met nothing.
 */
static void
expire(JoinStep *j, int i, int64 until)
{
	join_store_expire(j->store, i, until, outer_side(j, i), add_pair, j);
}

/*
 * The store of an interval join's kept rows as the last committed step
 * left them: this process's, or read from the log (and the state tables
 * of an earlier release).  The step's transaction has it from now on.
 */
static void
open_store(JoinStep *j, bool keep)
{
	int64		wm = j->progress->watermark;
	int64		until[2];
	Oid			legacy[2] = {j->in[0].state_table, j->in[1].state_table};

	load_layout(j);
	j->store = keep ? join_store_find(j->def->id, j->progress->steps, &j->layout) : NULL;
	if (j->store == NULL)
	{
		for (int i = 0; i < 2; i++)
			until[i] = wm == WMK_NONE ? PG_INT64_MIN : expiry(j, i, wm);
		j->store = join_store_read(j->def->id, &j->layout, until, legacy, keep);
	}
	if (keep)
		join_store_changing(j->store);
}

/*
 * The step's changes to the kept rows into the log; rows read from the
 * state tables leave them once logged.
 */
static void
log_store(JoinStep *j)
{
	if (!join_store_log(j->store))
		return;
	for (int i = 0; i < 2; i++)
		run(psprintf("DELETE FROM %s", j->state[i]), 0, NULL, NULL, SPI_OK_DELETE);
}

/*
 * Input ia's row under "a" in the same window, with equal keys, as input
 * ib's under "b" (or as a window under "b" whose keys are named as the left
 * input names them: ib 0).
 */
static char *
window_match(const JoinStep *j, int ia, const char *a, int ib, const char *b)
{
	return psprintf("%s AND %s.windowing_end OPERATOR(pg_catalog.=) %s.windowing_end "
					"AND %s.windowing_start OPERATOR(pg_catalog.=) %s.windowing_start",
					keys_match(j, ia, a, ib, b), a, b, a, b);
}

/*
 * The windows (keys named as the left input names them, start and end) of
 * either input's rows that "filter" picks.
 */
static char *
windows_sql(const JoinStep *j, const char *filter)
{
	return psprintf("SELECT %s, windowing_start, windowing_end FROM %s WHERE %s "
					"UNION SELECT %s, windowing_start, windowing_end FROM %s WHERE %s",
					key_list(j, 0, "", " AS "), j->state[0], filter,
					key_list(j, 1, "", " AS "), j->state[1], filter);
}

/*
 * The select list over the rows of both inputs in the window of "d" (see
 * window_match), joined as "join" says (inner, left, right or full: every
 * pair, and for an outer join a side's rows alone where the other has
 * none); an aggregating join's is grouped by the left keys, one row.
 */
static char *
window_sql(const JoinStep *j, const char *d, const char *join)
{
	StringInfoData out;

	initStringInfo(&out);
	appendStringInfo(&out, "SELECT %s FROM (SELECT %s FROM %s AS s WHERE %s) AS %s "
					 "%s JOIN (SELECT %s FROM %s AS s WHERE %s) AS %s ON true",
					 j->def->aggregates, column_list(j, 0, ""), j->state[0], window_match(j, 0, "s", 0, d),
					 quote_identifier(j->in[0].alias),
					 strcmp(join, "inner") == 0 ? "" : join,
					 column_list(j, 1, ""), j->state[1], window_match(j, 1, "s", 0, d),
					 quote_identifier(j->in[1].alias));
	for (int k = 0; j->aggregating && k < j->in[0].nkeys; k++)
		appendStringInfo(&out, "%s %s.%s", k == 0 ? " GROUP BY" : ",",
						 quote_identifier(j->in[0].alias), quote_identifier(j->in[0].keys[k]));
	return out.data;
}

/*
 * A row (of alias "a", with its dot) that was not in its window when the
 * window fired: none fired yet, or a session that has since merged and
 * starts elsewhere.  Two rows met when both are marked with the same start.
 */
static char *
unmarked(const char *a)
{
	return psprintf("%swindowing_fired IS DISTINCT FROM %swindowing_start", a, a);
}

/*
 * With allowed lateness, a step marks the rows of the windows it fires
 * (those ending by $1), for a later firing to tell them from new ones:
 * more of the statement "sql" that fires them.
 */
static void
mark_fired(const JoinStep *j, StringInfo sql)
{
	for (int i = 0; i < 2 && j->lateness > 0; i++)
		appendStringInfo(sql, ", fired%d AS (UPDATE %s SET windowing_fired = windowing_start "
						 "WHERE %s AND windowing_end OPERATOR(pg_catalog.<=) $1 RETURNING 1)",
						 i, j->state[i], unmarked(""));
}

/*
 * An aggregating window join's windows that the watermark fired (ending by
 * "until"), or that a row new to them fires again: the select list over
 * all of each one's rows, joined as the join type says, is written as its
 * row of the results, or replaces it.  Outer joins need not wait for the
 * window to leave, as the row can still change.  A session that grew
 * takes the place of the rows of the sessions it merged.
 */
static void
fire_aggregates(JoinStep *j, int64 until)
{
	Oid			type = j->def->time_type;
	Datum		arg = Int64GetDatum(until);
	StringInfoData sql;

	initStringInfo(&sql);
	appendStringInfo(&sql, "WITH due AS (%s)",
					 windows_sql(j, psprintf("%s AND windowing_end OPERATOR(pg_catalog.<=) $1", unmarked(""))));
	mark_fired(j, &sql);
	if (j->sessions)
		appendStringInfo(&sql, ", merged AS (DELETE FROM %s AS g USING due WHERE %s "
						 "AND g.window_start OPERATOR(pg_catalog.>=) due.windowing_start "
						 "AND g.window_end OPERATOR(pg_catalog.<=) due.windowing_end "
						 "AND (g.window_start OPERATOR(pg_catalog.<>) due.windowing_start "
						 "OR g.window_end OPERATOR(pg_catalog.<>) due.windowing_end) RETURNING 1)",
						 j->result_table, keys_match(j, 0, "g", 0, "due"));
	appendStringInfo(&sql, " INSERT INTO %s SELECT %s, due.windowing_start, due.windowing_end, a.* "
					 "FROM due, LATERAL (%s) AS a ON CONFLICT %s DO UPDATE SET %s",
					 j->result_table, key_list(j, 0, "due.", NULL),
					 window_sql(j, "due", j->def->join_type), j->conflict, j->updates);
	j->written += run(sql.data, 1, &arg, &type, SPI_OK_INSERT);
}

/*
 * A window join's pairs in the windows the watermark fired, those ending by
 * "until" (window_end - 1 at or before the watermark).  The rows that were
 * in a window when it fired met each other then, so only pairs with a row
 * new to a fired window are written: each pair once, however often late
 * rows make a window fire again (Flink's join emits every pair again).
 * Without allowed lateness every fired window leaves in the same step, so
 * none is marked fired.
 */
static void
fire(JoinStep *j, int64 until)
{
	const char *due = "windowing_end OPERATOR(pg_catalog.<=) $1";
	Oid			type = j->def->time_type;
	Datum		arg = Int64GetDatum(until);
	StringInfoData sql;

	initStringInfo(&sql);
	appendStringInfo(&sql,
					 "WITH pm AS (SELECT l AS lr, r AS rr FROM %s AS l JOIN %s AS r ON %s "
					 "WHERE %s AND l.%s AND r.%s AND (l.windowing_fired IS NULL "
					 "OR l.windowing_fired IS DISTINCT FROM r.windowing_fired)",
					 j->state[0], j->state[1], window_match(j, 0, "l", 1, "r"), unmarked("l."), due, due);
	if (j->lateness > 0)
		appendStringInfo(&sql,
						 " UNION ALL SELECT l, r FROM %s AS r JOIN %s AS l ON %s "
						 "WHERE %s AND r.%s AND NOT %s AND l.%s",
						 j->state[1], j->state[0], window_match(j, 0, "l", 1, "r"), unmarked("r."), due,
						 unmarked("l."), due);
	appendStringInfoChar(&sql, ')');
	mark_fired(j, &sql);
	appendStringInfo(&sql,
					 " INSERT INTO %s SELECT (pm.lr).windowing_start, (pm.lr).windowing_end, %s "
					 "FROM pm, LATERAL (SELECT %s) AS %s, LATERAL (SELECT %s) AS %s",
					 j->result_table, j->def->aggregates,
					 column_list(j, 0, "(pm.lr)."), quote_identifier(j->in[0].alias),
					 column_list(j, 1, "(pm.rr)."), quote_identifier(j->in[1].alias));
	j->written += run(sql.data, 1, &arg, &type, SPI_OK_INSERT);
}

/*
 * A window join's windows past their cleanup time, those ending by "until"
 * (window_end - 1 + allowed lateness at or before the watermark), leave.
 * An outer side first writes its rows of a window where the other side has
 * none, with the other side's columns NULL: only then is it sure that no
 * row will come to meet them.  (An aggregating join wrote them as it fired.)
 */
static void
clean(JoinStep *j, int64 until)
{
	Oid			type = j->def->time_type;
	Datum		arg = Int64GetDatum(until);

	for (int i = 0; i < 2; i++)
		if (outer_side(j, i) && !j->aggregating)
			j->written += run(psprintf("INSERT INTO %s SELECT (x.s).windowing_start, (x.s).windowing_end, %s "
									   "FROM (SELECT s FROM %s AS s WHERE s.windowing_end OPERATOR(pg_catalog.<=) $1 "
									   "AND NOT EXISTS (SELECT FROM %s AS o WHERE %s)) AS x "
									   "CROSS JOIN LATERAL (SELECT %s) AS %s LEFT JOIN %s ON true",
									   j->result_table, j->def->aggregates, j->state[i], j->state[1 - i],
									   window_match(j, i, "s", 1 - i, "o"),
									   column_list(j, i, "(x.s)."), quote_identifier(j->in[i].alias),
									   side_rows(j, 1 - i, "false")),
							  1, &arg, &type, SPI_OK_INSERT);
	for (int i = 0; i < 2; i++)
		run(psprintf("DELETE FROM %s WHERE windowing_end OPERATOR(pg_catalog.<=) $1", j->state[i]),
			1, &arg, &type, SPI_OK_DELETE);
}

/*
 * Input i's watermark after the step: its newest time less the delay, or
 * the clock less the delay once it has been idle for idle_timeout.
 */
static void
move_watermark(JoinStep *j, int i, TimestampTz now, int64 idle_timeout)
{
	JoinInput  *in = &j->in[i];
	Watermark	w = rows_watermark(j, i);

	(void) wmk_advance(&w, pipeline_idle_watermark(in->cursor.rows, in->last_row_at, now,
												   idle_timeout, j->def->is_ts, w.delay));
	if (in->cursor.rows > 0)
		in->last_row_at = now;
	in->watermark = w.value;
}

/*
 * Reads input i's new rows, up to max_rows (<= 0: all): the rest of a tick
 * a step read in part, then (if that ends short of max_rows) a new tick,
 * as an aggregate pipeline's step does; else the tick the step opened.  Returns whether
 * it went on with a tick read in part, which is progress to save even if
 * no row was left in it.
 */
static bool
read_ticks(JoinStep *j, int i, int64 join_wm, int64 max_rows, TimestampTz now,
		   int64 idle_timeout)
{
	JoinInput  *in = &j->in[i];
	int64		rows;

	if (j->opened[i])
	{
		read_input(j, i, join_wm, max_rows);
		return false;
	}
	read_input(j, i, join_wm, max_rows);
	rows = in->cursor.rows;
	if (j->partial[i])
		return true;
	/* the next tick's rows come after these in arrival order */
	if (rows > 0)
		move_watermark(j, i, now, idle_timeout);
	tick_close(&in->cursor);
	tick_open(&in->cursor, in->source, 0);
	read_input(j, i, join_wm, max_rows > 0 ? max_rows - rows : 0);
	in->cursor.rows += rows;
	return true;
}

/*
 * An aggregating window join's result table: its key (window_end, the left
 * keys, window_start) for ON CONFLICT, and the columns after the keys and
 * the window, the select list's, as ON CONFLICT updates them.
 */
static void
load_outputs(JoinStep *j)
{
	Relation	rel = table_open(j->def->result_table, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	StringInfoData conflict;
	StringInfoData updates;
	int			skip = j->in[0].nkeys + 2;

	initStringInfo(&conflict);
	appendStringInfoString(&conflict, "(window_end, ");
	for (int k = 0; k < j->in[0].nkeys; k++)
		appendStringInfo(&conflict, "%s, ", quote_identifier(j->in[0].keys[k]));
	appendStringInfoString(&conflict, "window_start)");
	initStringInfo(&updates);
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);
		const char *name = quote_identifier(NameStr(att->attname));

		if (!att->attisdropped && skip-- <= 0)
			appendStringInfo(&updates, "%s%s = EXCLUDED.%s", updates.len > 0 ? ", " : "", name, name);
	}
	table_close(rel, AccessShareLock);
	j->conflict = conflict.data;
	j->updates = updates.data;
}

static void
check_input(const JoinStep *j, const JoinInput *in)
{
	const PipelineDef *def = j->def;

	sql_pipeline_check_table(def->name, in->source, "source table");
	sql_pipeline_check_table(def->name, in->state_table, "state table");
	sql_pipeline_check_column(def->name, in->source, "windowing_xid", "queue column", XID8OID, InvalidOid);
	sql_pipeline_check_column(def->name, in->source, "windowing_seq", "queue column", INT8OID, InvalidOid);
	sql_pipeline_check_column(def->name, in->source, in->time_column, "time column",
							  def->time_type, InvalidOid);
}

static void
load(JoinStep *j, const PipelineDef *def, PipelineProgress *progress)
{
	memset(j, 0, sizeof(*j));
	j->cxt = CurrentMemoryContext;
	j->def = def;
	j->progress = progress;
	catalog_load_join_inputs(def->id, j->in);
	for (int i = 0; i < 2; i++)
	{
		check_input(j, &j->in[i]);
		load_state(j, i);
	}
	sql_pipeline_check_table(def->name, def->result_table, "result table");
	j->result_table = catalog_relation_name(def->result_table, "result table");
	if (OidIsValid(def->late_table))
	{
		sql_pipeline_check_table(def->name, def->late_table, "late table");
		j->late_table = catalog_relation_name(def->late_table, "late table");
		j->late_missed = get_attnum(def->late_table, "missed_windows") != InvalidAttrNumber;
	}
	j->span_type = def->is_ts ? INTERVALOID : INT8OID;
	j->delay = def->max_out_of_orderness ?
		pipeline_duration(def->max_out_of_orderness, def->is_ts, "max_out_of_orderness") : -1;
	j->windowed = def->assigner != NULL;
	j->aggregating = j->windowed && !def->append;
	if (j->windowed)
	{
		WindowSpec	spec;

		spec_from_assigner(&spec, def->assigner, def->time_type);
		j->sessions = spec.kind == WK_SESSION;
	}
	if (j->aggregating)
		load_outputs(j);
	if (j->windowed)
	{
		j->assigner = PointerGetDatum(def->assigner);
		j->assigner_type = HeapTupleHeaderGetTypeId(def->assigner);
		j->lateness = pipeline_duration(def->allowed_lateness, def->is_ts, "allowed_lateness");
	}
	else
	{
		j->lower = pipeline_duration(def->join_lower, def->is_ts, "lower");
		j->upper = pipeline_duration(def->join_upper, def->is_ts, "upper");
	}
}

bool
join_step(const PipelineDef *def, PipelineProgress *progress, int64 max_rows, bool consume_rows,
		  bool has_watermark, int64 watermark, TimestampTz now, int64 idle_timeout)
{
	JoinStep	j;
	int64		before = progress->watermark;
	int64		join_wm;
	bool		resumed = false;	/* went on with a tick read in part */

	load(&j, def, progress);
	/*
	 * The step's statements are planned once and run at every step, each
	 * over a step's rows: compiling them again each time would cost more
	 * than it saves (a fifth of a 100,000-row step).  The owner's settings
	 * come back after the step (owner.c).
	 */
	(void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
							 false);
	if (!j.windowed)
		open_store(&j, true);
	if (consume_rows)
	{
		/*
		 * Both new ticks open before the step writes: once the transaction
		 * has an id, its snapshot holds back where the input's next tick
		 * may start reading (tick_open), and that tick would read this
		 * one's rows again, only to leave them.
		 */
		for (int i = 0; i < 2; i++)
			if ((j.opened[i] = j.in[i].cursor.tick_hi == NULL))
				tick_open(&j.in[i].cursor, j.in[i].source, 0);
		for (int i = 0; i < 2; i++)
			resumed |= read_ticks(&j, i, before, max_rows, now, idle_timeout);
		if (!j.windowed)
			join_store_meet_all(j.store, meeting_times, add_pair, &j);
		for (int i = 0; i < 2; i++)
			move_watermark(&j, i, now, idle_timeout);
	}
	for (int i = 0; i < 2 && has_watermark; i++)
		j.in[i].watermark = Max(j.in[i].watermark, watermark);
	join_wm = Max(before, Min(j.in[0].watermark, j.in[1].watermark));
	/*
	 * At the end of input everything fires and leaves, whatever the bounds.
	 * A row late for a fired window, but within its allowed lateness, makes
	 * it fire again at once, as Flink's does, whether or not the watermark
	 * moves.
	 */
	if (j.windowed && join_wm != WMK_NONE && (join_wm > before || progress->rows > 0))
	{
		int64		until = join_wm == WMK_END ? WMK_END : wmk_add(join_wm, 1);

		if (j.aggregating)
			fire_aggregates(&j, until);
		else
			fire(&j, until);
	}
	if (j.windowed && join_wm > before)
		clean(&j, join_wm == WMK_END ? WMK_END : wmk_add(join_wm, 1 - j.lateness));
	else if (!j.windowed && join_wm != WMK_NONE)
	{
		/* every step, so that none leaves a row the watermark passed */
		expire(&j, 0, expiry(&j, 0, join_wm));
		expire(&j, 1, expiry(&j, 1, join_wm));
	}
	write_pairs(&j);
	/*
	 * As for aggregate pipelines, a step that changed nothing writes
	 * nothing; but one that found the end of a tick read in part closes it.
	 */
	if (progress->rows == 0 && join_wm == before && j.written == 0 &&
		progress->late_routed + progress->late_dropped == 0 && !resumed)
	{
		if (j.store)
			join_store_done(j.store, progress->steps);
		return false;
	}
	if (j.store)
	{
		log_store(&j);
		join_store_done(j.store, progress->steps + 1);
	}
	progress->watermark = join_wm;
	progress->max_seen = Max(j.in[0].max_seen, j.in[1].max_seen);
	progress->windows_fired = j.written;
	if (progress->rows > 0)
		progress->last_row_at = now;
	catalog_save_progress(def, progress);
	for (int i = 0; i < 2; i++)
	{
		if (j.in[i].cursor.tick_hi && !j.partial[i])
			tick_close(&j.in[i].cursor);
		catalog_save_join_input(def->id, &j.in[i]);
	}
	if (j.written > 0)
		Async_Notify(psprintf("windowing_%d", def->id), psprintf("%lld", (long long) j.written));
	return j.partial[0] || j.partial[1];
}

/*
 * The key of input i's row under "prefix" as open_windows() shows it: a
 * JSON object with the key columns named as the left input names them.
 */
static char *
key_object(const JoinStep *j, int i, const char *prefix)
{
	StringInfoData key;

	initStringInfo(&key);
	for (int k = 0; k < j->in[0].nkeys; k++)
		appendStringInfo(&key, "%s%s, %s%s", k > 0 ? ", " : "", quote_literal_cstr(j->in[0].keys[k]),
						 prefix, quote_identifier(j->in[i].keys[k]));
	return psprintf("pg_catalog.jsonb_build_object(%s)", key.data);
}

/* The rows of open_windows() that SPI read, into rsi's tuplestore. */
static void
put_open_windows(ReturnSetInfo *rsi)
{
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		Datum		values[4];
		bool		nulls[4];

		for (int c = 0; c < 4; c++)
			values[c] = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, c + 1, &nulls[c]);
		tuplestore_putvalues(rsi->setResult, rsi->setDesc, values, nulls);
	}
}

/* The rows of each side kept, as open_windows() shows them. */
typedef struct KeptRows
{
	int			n[2];
	Datum	   *rows[2];
	Datum	   *matched[2];
} KeptRows;

static void
add_kept(int side, Datum row, int64 ts, bool matched, void *arg)
{
	KeptRows   *k = arg;

	k->rows[side] = repalloc(k->rows[side], sizeof(Datum) * (k->n[side] + 1));
	k->matched[side] = repalloc(k->matched[side], sizeof(Datum) * (k->n[side] + 1));
	k->rows[side][k->n[side]] = row;
	k->matched[side][k->n[side]++] = BoolGetDatum(matched);
}

/*
 * Input i's kept rows (parameter "first") and whether each met one (the
 * next) as open_windows() shows them: the key as the left input names it,
 * the row's time, the time it leaves after (its time less the third), and
 * the row; then, to sort by, that time and its own.
 */
static char *
kept_sql(const JoinStep *j, int i, int first)
{
	const char *t = quote_identifier(j->in[i].time_column);

	return psprintf("SELECT %s, (x.r).%s::pg_catalog.text, "
					"((x.r).%s OPERATOR(pg_catalog.-) $%d)::pg_catalog.text, "
					"pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('side', '%s', "
					"'matched', x.m, 'row', pg_catalog.to_jsonb(x.r) OPERATOR(pg_catalog.-) "
					"'{windowing_xid,windowing_seq,windowing_matched}'::pg_catalog.text[])), "
					"(x.r).%s OPERATOR(pg_catalog.-) $%d, (x.r).%s "
					"FROM (SELECT pg_catalog.unnest($%d) AS r, pg_catalog.unnest($%d) AS m) AS x",
					key_object(j, i, "(x.r)."), t, t, first + 2, j->in[i].side, t, first + 2, t, first,
					first + 1);
}

/*
 * The rows an interval join keeps, each as an open window of open_windows()
 * from its time to when it leaves, by that time and side.
 */
static void
interval_open_windows(JoinStep *j, ReturnSetInfo *rsi)
{
	KeptRows	k;
	Datum		args[6];
	Oid			types[6];
	int			lb = 1;

	open_store(j, false);
	for (int i = 0; i < 2; i++)
	{
		k.n[i] = 0;
		k.rows[i] = palloc(sizeof(Datum));
		k.matched[i] = palloc(sizeof(Datum));
	}
	join_store_each(j->store, add_kept, &k);
	for (int i = 0; i < 2; i++)
	{
		args[i * 3] = PointerGetDatum(construct_md_array(k.rows[i], NULL, 1, &k.n[i], &lb, j->row_type[i],
														 -1, false, TYPALIGN_DOUBLE));
		args[i * 3 + 1] = PointerGetDatum(construct_array(k.matched[i], k.n[i], BOOLOID, 1, true,
														  TYPALIGN_CHAR));
		/* a row leaves once the watermark passes its time plus upper, less lower */
		args[i * 3 + 2] = span_datum(j, i == 0 ? -j->upper : j->lower);
		types[i * 3] = j->array_type[i];
		types[i * 3 + 1] = BOOLARRAYOID;
		types[i * 3 + 2] = j->span_type;
	}
	run(psprintf("%s UNION ALL %s ORDER BY 5, 6, 1, 4", kept_sql(j, 0, 1), kept_sql(j, 1, 4)),
		6, args, types, SPI_OK_SELECT);
	join_store_free(j->store);
	put_open_windows(rsi);
}

/*
 * The windows of window join "def" that have not fired, each with its key
 * (named by the left input's key columns), bounds and what it would write
 * if it fired now (a JSON array of the select list's rows: its pairs, or
 * an aggregating join's one row), into "rsi"'s tuplestore, as
 * open_windows() shows an aggregate pipeline's; or an interval join's kept
 * rows (interval_open_windows).
 */
void
join_open_windows(const PipelineDef *def, PipelineProgress *progress, ReturnSetInfo *rsi)
{
	JoinStep	j;
	Oid			type = def->time_type;
	Datum		arg;

	load(&j, def, progress);
	if (!j.windowed)
	{
		interval_open_windows(&j, rsi);
		return;
	}
	arg = Int64GetDatum(progress->watermark == WMK_NONE ? PG_INT64_MIN : wmk_add(progress->watermark, 1));
	run(psprintf("SELECT %s, w.windowing_start::pg_catalog.text, "
				 "w.windowing_end::pg_catalog.text, COALESCE((SELECT pg_catalog.jsonb_agg(y.j ORDER BY y.j) "
				 "FROM (SELECT pg_catalog.to_jsonb(x) AS j FROM (%s) AS x) AS y), '[]'::pg_catalog.jsonb) "
				 "FROM (%s) AS w ORDER BY w.windowing_end, w.windowing_start, 1",
				 key_object(&j, 0, "w."), window_sql(&j, "w", j.aggregating ? def->join_type : "inner"),
				 windows_sql(&j, "windowing_end OPERATOR(pg_catalog.>) $1")),
		1, &arg, &type, SPI_OK_SELECT);
	put_open_windows(rsi);
}
