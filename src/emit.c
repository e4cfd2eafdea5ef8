/*
 * emit.c
 *		Writing a step's fired windows and late rows.
 *
 * Everything a step writes goes through SPI in the step's transaction, so
 * state (state.c), results, late rows and the cursor commit together or not
 * at all: that is the whole of exactly-once.  The result table gets the
 * keys' typed values back from their bytes (keys.c).  The SQL is built
 * with quoted identifiers and runs under the step's pinned search_path, so
 * user objects cannot stand in for ours.
 */
#include "compat.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "bulk_insert.h"
#include "emit.h"
#include "keys.h"
#include "owner.h"
#include "plans.h"

static void
append_key_list(StringInfo sql, const KeyColumns *k, const char *prefix)
{
	for (int i = 0; i < k->n; i++)
		appendStringInfo(sql, "%s%s, ", prefix, quote_identifier(k->names[i]));
}

/*
 * The result columns a step writes, in order: the keys, the window's
 * bounds and time, the aggregates, fire_count, is_final, pane (with a
 * trigger that fires early) and fired_at.  firing_row fills all but the
 * last.
 */
static int
result_ncols(const EmitTarget *t)
{
	return t->keys->n + 3 + t->agg->nout + 3 + (t->panes ? 1 : 0);
}

static const char *const pane_names[] = {"on_time", "early", "late", "final"};

static void
result_columns(const EmitTarget *t, const char **names, Oid *types)
{
	const char *bounds[3] = {"window_start", "window_end", "window_time"};
	int			c = 0;

	for (int i = 0; i < t->keys->n; i++, c++)
	{
		names[c] = t->keys->names[i];
		types[c] = t->keys->types[i];
	}
	for (int i = 0; i < 3; i++, c++)
	{
		names[c] = bounds[i];
		types[c] = t->window_type;
	}
	for (int i = 0; i < t->agg->nout; i++, c++)
	{
		names[c] = t->agg->outs[i].name;
		types[c] = t->agg->outs[i].type;
	}
	names[c] = "fire_count";
	types[c++] = INT4OID;
	names[c] = "is_final";
	types[c++] = BOOLOID;
	if (t->panes)
	{
		names[c] = "pane";
		types[c++] = TEXTOID;
	}
	names[c] = "fired_at";
	types[c] = TIMESTAMPTZOID;
}

/*
 * INSERT (or upsert) of firings into the result table: one firing from
 * parameters, or (batch) many from one array parameter per column;
 * fired_at is now().  types gets the parameters' types.  The arrays are
 * unnested in the select list, in step, rather than in ROWS FROM, which
 * would spread a composite result (a whole row from max_by) over as many
 * columns as it has fields.
 */
static SPIPlanPtr
prepare_result_insert(const EmitTarget *t, Oid *types, bool batch, bool upsert)
{
	StringInfoData sql;
	int			nargs = result_ncols(t) - 1;
	const char **names = palloc(sizeof(char *) * (nargs + 1));

	result_columns(t, names, types);
	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s AS r (", t->result_table);
	for (int i = 0; i <= nargs; i++)
		appendStringInfo(&sql, "%s%s", quote_identifier(names[i]), i < nargs ? ", " : ") ");
	appendStringInfoString(&sql, batch ? "SELECT " : "VALUES (");
	for (int i = 1; i <= nargs; i++)
		appendStringInfo(&sql, batch ? "pg_catalog.unnest($%d), " : "$%d, ", i);
	appendStringInfoString(&sql, batch ? "pg_catalog.now()" : "pg_catalog.now())");
	if (batch)
		for (int i = 0; i < nargs; i++)
			types[i] = get_array_type(types[i]);
	if (upsert)
	{
		appendStringInfoString(&sql, " ON CONFLICT (");
		append_key_list(&sql, t->keys, "");
		appendStringInfoString(&sql, "window_start, window_end) DO UPDATE SET window_time = excluded.window_time, ");
		for (int i = 0; i < t->agg->nout; i++)
			appendStringInfo(&sql, "%s = excluded.%s, ", quote_identifier(t->agg->outs[i].name),
							 quote_identifier(t->agg->outs[i].name));
		appendStringInfoString(&sql, "fire_count = excluded.fire_count, is_final = excluded.is_final, ");
		if (t->panes)
			appendStringInfoString(&sql, "pane = excluded.pane, ");
		appendStringInfoString(&sql, "fired_at = excluded.fired_at");
	}
	return plans_prepare(sql.data, nargs, types);
}

static void
exec_plan(SPIPlanPtr plan, Datum *values, bool *nulls, int nargs)
{
	char	   *flags = palloc(nargs + 1);
	int			rc;

	for (int i = 0; i < nargs; i++)
		flags[i] = nulls[i] ? 'n' : ' ';
	flags[nargs] = '\0';
	rc = SPI_execute_plan(plan, values, flags, false, 0);
	if (rc != SPI_OK_INSERT && rc != SPI_OK_UPDATE && rc != SPI_OK_DELETE)
		elog(ERROR, "SPI_execute_plan failed: %s", SPI_result_code_string(rc));
}

/*
 * What a step does to the result rows of windows it names (upsert mode):
 * marks a cleaned-up window's row final, or deletes the row of a session
 * merged into a bigger one; the statement goes on with a condition on r.
 */
typedef enum RowAction
{
	ROW_FINAL,
	ROW_DELETE
} RowAction;

static const char *const row_actions[] = {
	"UPDATE %s AS r SET is_final = true WHERE ",
	"DELETE FROM %s AS r WHERE "
};

/*
 * Runs an action on the result row of one window.  A key column is
 * compared with "=", or IS NULL where the key's value is NULL: IS NOT
 * DISTINCT FROM cannot use the result table's unique index, and would read
 * the row of every key with the window's end.  The statement is prepared
 * once per pattern of NULLs.
 */
static void
exec_on_window(const EmitTarget *t, RowAction action, const WindowKey *k)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "windowing window statement",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	int			n = t->keys->n;
	Oid		   *types = palloc(sizeof(Oid) * (n + 2));
	Datum	   *values = palloc(sizeof(Datum) * (n + 2));
	bool	   *nulls = palloc0(sizeof(bool) * (n + 2));
	StringInfoData sql;

	keys_decode(t->keys, k->key, values, nulls);
	values[n] = Int64GetDatum(k->start);
	values[n + 1] = Int64GetDatum(k->end);
	initStringInfo(&sql);
	appendStringInfo(&sql, row_actions[action], t->result_table);
	for (int i = 0; i < n; i++)
	{
		const char *column = quote_identifier(t->keys->names[i]);

		types[i] = t->keys->types[i];
		if (nulls[i])
			appendStringInfo(&sql, "r.%s IS NULL AND ", column);
		else
			appendStringInfo(&sql, "r.%s = $%d AND ", column, i + 1);
	}
	types[n] = t->window_type;
	types[n + 1] = t->window_type;
	appendStringInfo(&sql, "r.window_start OPERATOR(pg_catalog.=) $%d AND r.window_end OPERATOR(pg_catalog.=) $%d",
					 n + 1, n + 2);
	exec_plan(plans_prepare(sql.data, n + 2, types), values, nulls, n + 2);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/* The result row of a firing: keys, bounds, aggregates, count, finality. */
static void
firing_row(const EmitTarget *t, const Firing *f, Datum *values, bool *nulls)
{
	int			i = t->keys->n;

	keys_decode(t->keys, f->win->k.key, values, nulls);
	values[i++] = Int64GetDatum(f->win->k.start);
	values[i++] = Int64GetDatum(f->win->k.end);
	values[i++] = Int64GetDatum(f->win->k.end - 1);
	for (int a = 0; a < t->agg->nout; a++, i++)
	{
		values[i] = f->values[a];
		nulls[i] = f->nulls[a];
	}
	values[i++] = Int32GetDatum(f->fire_count);
	values[i++] = BoolGetDatum(f->is_final);
	if (t->panes)
		values[i] = CStringGetTextDatum(pane_names[f->pane]);
}

/* Can a value of this type travel in an array (arrays of arrays do not exist)? */
static bool
travels_in_array(Oid type)
{
	return !type_is_array(type) && OidIsValid(get_array_type(type));
}

static bool
keys_travel(const EmitTarget *t)
{
	for (int i = 0; i < t->keys->n; i++)
		if (!travels_in_array(t->keys->types[i]))
			return false;
	return true;
}

/*
 * Can every result column travel as an array of its type?  Then a step's
 * firings go in one statement instead of one each (a collect() result
 * takes the slow way).
 */
static bool
batchable(const EmitTarget *t)
{
	if (!keys_travel(t))
		return false;
	for (int i = 0; i < t->agg->nout; i++)
		if (!travels_in_array(t->agg->outs[i].type))
			return false;
	return true;
}

/* A one-dimensional array of n values of type "elem". */
static Datum
values_array(Oid elem, Datum *values, bool *nulls, int n)
{
	int16		len;
	bool		byval;
	char		align;
	int			dims[1] = {n};
	int			lbs[1] = {1};

	get_typlenbyvalalign(elem, &len, &byval, &align);
	return PointerGetDatum(construct_md_array(values, nulls, 1, dims, lbs, elem, len, byval, align));
}

/*
 * Whether every firing is written as it is, none replaced by a later one:
 * in append mode (each firing is a row), and where no firing's window may
 * fire again.  A step can then write its firings as it goes.
 */
static bool
emit_firings_as_fired(const EmitTarget *t, const Operator *op)
{
	return t->append || op->firings_may_refire == 0;
}

/*
 * The firings to write: every one in append mode; in upsert mode only the
 * last of each window (and none of sessions merged away), so that one
 * statement never touches a row twice.  Windows are told apart by their
 * bounds: the firings of a window made of slices have one identity each.
 */
static List *
firings_to_write(const EmitTarget *t, Operator *op)
{
	List	   *out = NIL;
	HTAB	   *seen;

	/* nothing to choose */
	if (emit_firings_as_fired(t, op))
	{
		ListCell   *lc;

		foreach(lc, op->firings)
		{
			Firing	   *f = lfirst(lc);

			if (f->values != NULL && (t->append || !f->win->merged_away))
				out = lappend(out, f);
		}
		return out;
	}
	seen = op_window_table("windowing firings", sizeof(WindowKey));
	/* newest first, filling an array from its end: linear, unlike lcons */
	{
		int			n = list_length(op->firings);
		Firing	  **keep = palloc(sizeof(Firing *) * Max(n, 1));
		int			first = n;

		for (int i = n - 1; i >= 0; i--)
		{
			Firing	   *f = list_nth(op->firings, i);
			bool		found;

			if (f->values == NULL || f->win->merged_away)
				continue;
			hash_search(seen, &f->win->k, HASH_ENTER, &found);
			if (!found)
				keep[--first] = f;
		}
		for (int i = first; i < n; i++)
			out = lappend(out, keep[i]);
	}
	return out;
}

/*
 * Firings from the one at "from" on, up to BATCH_FIRINGS of them, in one
 * INSERT over arrays, one per column.  Bounded batches keep the arrays
 * small, however many windows a step fires.
 */
#define BATCH_FIRINGS 10000

static void
insert_batch(const EmitTarget *t, SPIPlanPtr plan, Oid *types, List *firings,
			 int from, int nargs)
{
	int			n = Min(list_length(firings) - from, BATCH_FIRINGS);
	Datum	  **cols = palloc(sizeof(Datum *) * nargs);
	bool	  **colnulls = palloc(sizeof(bool *) * nargs);
	Datum	   *values = palloc(sizeof(Datum) * nargs);
	bool	   *nulls = palloc0(sizeof(bool) * nargs);
	Datum	   *arrays = palloc(sizeof(Datum) * nargs);

	for (int c = 0; c < nargs; c++)
	{
		cols[c] = palloc(sizeof(Datum) * n);
		colnulls[c] = palloc(sizeof(bool) * n);
	}
	for (int r = 0; r < n; r++)
	{
		memset(nulls, 0, sizeof(bool) * nargs);
		firing_row(t, list_nth(firings, from + r), values, nulls);
		for (int c = 0; c < nargs; c++)
		{
			cols[c][r] = values[c];
			colnulls[c][r] = nulls[c];
		}
	}
	for (int c = 0; c < nargs; c++)
		arrays[c] = values_array(get_element_type(types[c]), cols[c], colnulls[c], n);
	if (SPI_execute_plan(plan, arrays, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not write the fired windows");
}

typedef struct FiringRows
{
	const EmitTarget *t;
	List	   *firings;
	TimestampTz fired_at;
} FiringRows;

static void
fill_firing(void *arg, int i, Datum *values, bool *nulls)
{
	FiringRows *rows = arg;

	firing_row(rows->t, list_nth(rows->firings, i), values, nulls);
	values[result_ncols(rows->t) - 1] = TimestampTzGetDatum(rows->fired_at);
}

/*
 * New result rows the way COPY writes them, if the result table allows
 * (bulk_insert.c); fired_at is now(), the transaction's start.
 */
static bool
bulk_insert_firings(const EmitTarget *t, List *firings)
{
	int			ncols = result_ncols(t);
	const char **names = palloc(sizeof(char *) * ncols);
	Oid		   *types = palloc(sizeof(Oid) * ncols);
	FiringRows	rows = {t, firings, GetCurrentTransactionStartTimestamp()};

	result_columns(t, names, types);
	return bulk_insert(t->result_relid, ncols, names, types, list_length(firings),
					   fill_firing, &rows);
}

/* Writes firings in bulk or in batches if it can, else one each. */
static void
insert_firings(const EmitTarget *t, List *firings, bool upsert)
{
	int			nargs = result_ncols(t) - 1;
	Oid		   *types = palloc(sizeof(Oid) * (nargs + 1));
	Datum	   *values = palloc(sizeof(Datum) * nargs);
	bool	   *nulls = palloc0(sizeof(bool) * nargs);
	bool		batch = batchable(t);
	SPIPlanPtr	insert;
	ListCell   *lc;

	if (firings == NIL || (!upsert && bulk_insert_firings(t, firings)))
		return;
	insert = prepare_result_insert(t, types, batch, upsert);
	if (batch)
	{
		MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
												  "windowing firings batch",
												  ALLOCSET_DEFAULT_SIZES);
		MemoryContext old = MemoryContextSwitchTo(cxt);

		for (int from = 0; from < list_length(firings); from += BATCH_FIRINGS)
		{
			insert_batch(t, insert, types, firings, from, nargs);
			MemoryContextReset(cxt);
		}
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return;
	}
	foreach(lc, firings)
	{
		memset(nulls, 0, sizeof(bool) * nargs);
		firing_row(t, lfirst(lc), values, nulls);
		exec_plan(insert, values, nulls, nargs);
	}
}

/*
 * The statement of an action on a batch of windows, given as arrays of
 * their key values ($1...) and bounds (the last two), unnested in step:
 * each window's row is found by the result table's unique index, one
 * lookup each, whatever the planner would guess of a join.
 */
static SPIPlanPtr
prepare_on_windows(const EmitTarget *t, RowAction action, Oid *types)
{
	int			n = t->keys->n;
	StringInfoData sql;

	initStringInfo(&sql);
	appendStringInfo(&sql, row_actions[action], t->result_table);
	appendStringInfo(&sql, "r.ctid OPERATOR(pg_catalog.=) ANY (ARRAY("
					 "SELECT (SELECT o.ctid FROM %s AS o WHERE ", t->result_table);
	for (int i = 0; i < n; i++)
	{
		appendStringInfo(&sql, "o.%s = w.w%d AND ", quote_identifier(t->keys->names[i]), i + 1);
		types[i] = get_array_type(t->keys->types[i]);
	}
	appendStringInfo(&sql, "o.window_start OPERATOR(pg_catalog.=) w.w%d "
					 "AND o.window_end OPERATOR(pg_catalog.=) w.w%d) FROM (SELECT ", n + 1, n + 2);
	for (int i = 0; i < n + 2; i++)
		appendStringInfo(&sql, "pg_catalog.unnest($%d) AS w%d%s", i + 1, i + 1, i < n + 1 ? ", " : "");
	appendStringInfoString(&sql, ") AS w))");
	types[n] = types[n + 1] = get_array_type(t->window_type);
	return plans_prepare(sql.data, n + 2, types);
}

/* A batch of windows as columns (keys, start, end), and their NULL flags: none is NULL. */
typedef struct WindowColumns
{
	Datum	  **values;
	bool	   *nulls;
	int			n;				/* windows in the batch */
} WindowColumns;

static void
run_on_windows(const EmitTarget *t, SPIPlanPtr plan, Oid *types, WindowColumns *w)
{
	int			ncols = t->keys->n + 2;
	Datum	   *arrays = palloc(sizeof(Datum) * ncols);

	for (int c = 0; c < ncols; c++)
		arrays[c] = values_array(get_element_type(types[c]), w->values[c], w->nulls, w->n);
	if (SPI_execute_plan(plan, arrays, NULL, false, 0) < 0)
		elog(ERROR, "could not write the results of windows that left");
	w->n = 0;
}

/*
 * Runs an action on the result rows of a list of windows (WindowRef *), a
 * batch of up to BATCH_FIRINGS of them per statement: one statement each
 * would cost a plan's start and end per window, for windows that may
 * leave by the million at once.  A window with a NULL key value (which "="
 * would not find), or keys that cannot travel in arrays, go one at a time.
 */
static void
on_windows(const EmitTarget *t, RowAction action, List *windows)
{
	int			n = t->keys->n;
	MemoryContext cxt;
	MemoryContext old;
	Oid		   *types;
	Datum	   *values;
	bool	   *nulls;
	WindowColumns w = {0};
	SPIPlanPtr	plan;
	ListCell   *lc;

	if (windows == NIL)
		return;
	if (!keys_travel(t))
	{
		foreach(lc, windows)
			exec_on_window(t, action, &((WindowRef *) lfirst(lc))->k);
		return;
	}
	types = palloc(sizeof(Oid) * (n + 2));
	values = palloc(sizeof(Datum) * n);
	nulls = palloc(sizeof(bool) * n);
	w.values = palloc(sizeof(Datum *) * (n + 2));
	for (int c = 0; c < n + 2; c++)
		w.values[c] = palloc(sizeof(Datum) * BATCH_FIRINGS);
	w.nulls = palloc0(sizeof(bool) * BATCH_FIRINGS);
	plan = prepare_on_windows(t, action, types);
	/* the batch's key values, until it is run */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "windowing windows batch",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	foreach(lc, windows)
	{
		const WindowKey *k = &((WindowRef *) lfirst(lc))->k;
		bool		any_null = false;

		memset(nulls, 0, sizeof(bool) * n);
		keys_decode(t->keys, k->key, values, nulls);
		for (int c = 0; c < n; c++)
			any_null |= nulls[c];
		if (any_null)
		{
			exec_on_window(t, action, k);
			continue;
		}
		for (int c = 0; c < n; c++)
			w.values[c][w.n] = values[c];
		w.values[n][w.n] = Int64GetDatum(k->start);
		w.values[n + 1][w.n] = Int64GetDatum(k->end);
		if (++w.n == BATCH_FIRINGS)
		{
			run_on_windows(t, plan, types, &w);
			MemoryContextReset(cxt);
		}
	}
	if (w.n > 0)
		run_on_windows(t, plan, types, &w);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/*
 * Upsert mode: the firings, then finalities.  A firing that says no row
 * can exist for its window yet is a plain INSERT: most windows fire once,
 * so most rows skip ON CONFLICT's check.
 */
static void
upsert_firings(const EmitTarget *t, Operator *op)
{
	List	   *firings = firings_to_write(t, op);
	List	   *first = NIL;
	List	   *again = NIL;
	List	   *cleaned = NIL;
	ListCell   *lc;

	foreach(lc, firings)
	{
		Firing	   *f = lfirst(lc);

		if (f->first)
			first = lappend(first, f);
		else
			again = lappend(again, f);
	}
	insert_firings(t, first, false);
	insert_firings(t, again, true);
	foreach(lc, op->firings)
	{
		Firing	   *f = lfirst(lc);

		/* a cleaned-up window's latest result is final */
		if (f->values == NULL && !f->win->merged_away)
			cleaned = lappend(cleaned, f->win);
	}
	on_windows(t, ROW_FINAL, cleaned);
}

/*
 * Writes the firings not written yet, in firing order, and forgets them:
 * a step calls it at its end, and between chunks of rows and batches of
 * due windows through emit_firings_so_far.
 */
void
emit_firings(const EmitTarget *t, Operator *op)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "windowing emit",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);

	if (t->append)
		insert_firings(t, firings_to_write(t, op), false);
	else
		upsert_firings(t, op);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	op_forget_firings(op);
}

/*
 * Removes the results of session windows merged into bigger ones (upsert
 * mode keeps one row per live session; append mode keeps the stream).
 */
void
emit_superseded(const EmitTarget *t, Operator *op)
{
	if (t->append)
		return;
	on_windows(t, ROW_DELETE, op->superseded);
	/* a session may come back with the same bounds, and fire again */
	list_free(op->superseded);
	op->superseded = NIL;
}

/*
 * Firings held for the step's end, where a window may fire again within
 * the step (its row is then written once), are written anyway once there
 * are this many: a later firing of one of their windows writes its row
 * again, and the step's memory does not grow with the windows it fires.
 */
#define HELD_FIRINGS_MAX 10000

/*
 * Between chunks of rows and batches of due windows: writes the firings so
 * far where writing them now gives the results the step's end would.
 * Rows of sessions merged away go first, as at the step's end, since a
 * session that comes back with their bounds writes a new row.
 */
void
emit_firings_so_far(const EmitTarget *t, Operator *op)
{
	if (emit_firings_as_fired(t, op))
		emit_firings(t, op);
	else if (list_length(op->firings) >= HELD_FIRINGS_MAX)
	{
		emit_superseded(t, op);
		emit_firings(t, op);
	}
}

/*
 * The late tables' element of missed_windows for the window [start, end)
 * of a time column of type "time_type", as SQL: its bounds and its last
 * instant, end less one tick.
 */
char *
emit_window_sql(Oid time_type, const char *start, const char *end)
{
	return psprintf("ROW(%s, %s, %s OPERATOR(pg_catalog.-) %s)::windowing.%s", start, end, end,
					time_type == INT8OID ? "1::pg_catalog.int8" : "'1 microsecond'::pg_catalog.interval",
					time_type == INT8OID ? "bigint_window" :
					time_type == TIMESTAMPOID ? "timestamp_window" : "time_window");
}

/* Late rows written per statement. */
#define LATE_CHUNK 10000

/*
 * The statement that writes a chunk of late rows at once: the rows come as
 * parallel arrays, numbered in order, and the windows they missed as
 * arrays of (row number, start, end).  The queue row becomes JSON (q.*,
 * since q alone would be a column named q).
 */
static SPIPlanPtr
prepare_late_insert(const EmitTarget *t)
{
	Oid			times = get_array_type(t->time_type);
	Oid			types[8] = {INT8ARRAYOID, times, times, TEXTARRAYOID, INT8ARRAYOID, times, times,
	TEXTARRAYOID};
	char	   *sql = psprintf(
							   "INSERT INTO %s (event_time, watermark, reason, missed_windows, row_data%s) "
							   "SELECT r.ts, r.wm, r.reason, m.missed, "
							   "pg_catalog.to_jsonb(q.*) OPERATOR(pg_catalog.-) 'windowing_xid'::text "
							   "OPERATOR(pg_catalog.-) 'windowing_seq'::text%s "
							   "FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2), "
							   "pg_catalog.unnest($3), pg_catalog.unnest($4)%s) "
							   "WITH ORDINALITY AS r(seq, ts, wm, reason, %si) "
							   "JOIN %s AS q ON q.windowing_seq OPERATOR(pg_catalog.=) r.seq "
							   "LEFT JOIN (SELECT u.i, pg_catalog.array_agg(%s ORDER BY u.s, u.e) AS missed "
							   " FROM ROWS FROM (pg_catalog.unnest($5), pg_catalog.unnest($6), pg_catalog.unnest($7)) AS u(i, s, e) "
							   " GROUP BY u.i) m ON m.i OPERATOR(pg_catalog.=) r.i "
							   "ORDER BY r.i",
							   t->late_table,
							   t->late_errors ? ", error" : "",
							   t->late_errors ? ", r.error::pg_catalog.jsonb" : "",
							   t->late_errors ? ", pg_catalog.unnest($8)" : "",
							   t->late_errors ? "error, " : "",
							   t->source, emit_window_sql(t->time_type, "u.s", "u.e"));

	return plans_prepare(sql, t->late_errors ? 8 : 7, types);
}

/* Parallel arrays of a chunk of late rows, for prepare_late_insert's statement. */
typedef struct LateChunk
{
	int			n;				/* rows */
	Datum	   *seq;
	Datum	   *ts;
	bool	   *ts_null;
	Datum	   *wm;
	bool	   *wm_null;
	Datum	   *reason;
	Datum	   *error;
	bool	   *error_null;
	int			nmissed;		/* windows missed */
	int			maxmissed;
	Datum	   *row;
	Datum	   *start;
	Datum	   *end;
} LateChunk;

static void
late_chunk_add(LateChunk *c, LateRow *l)
{
	ListCell   *lc;

	c->seq[c->n] = Int64GetDatum(l->seq);
	c->ts[c->n] = Int64GetDatum(l->ts);
	c->ts_null[c->n] = l->ts_null;
	c->wm[c->n] = Int64GetDatum(l->watermark);
	c->wm_null[c->n] = l->watermark == WMK_NONE;
	c->reason[c->n] = CStringGetTextDatum(l->reason);
	c->error_null[c->n] = l->error == NULL;
	c->error[c->n] = l->error ? CStringGetTextDatum(l->error) : (Datum) 0;
	c->n++;
	foreach(lc, l->missed)
	{
		WmWindow   *w = lfirst(lc);

		if (c->nmissed == c->maxmissed)
		{
			c->maxmissed = Max(64, c->maxmissed * 2);
			c->row = repalloc_huge(c->row, sizeof(Datum) * c->maxmissed);
			c->start = repalloc_huge(c->start, sizeof(Datum) * c->maxmissed);
			c->end = repalloc_huge(c->end, sizeof(Datum) * c->maxmissed);
		}
		c->row[c->nmissed] = Int64GetDatum(c->n);
		c->start[c->nmissed] = Int64GetDatum(w->start);
		c->end[c->nmissed++] = Int64GetDatum(w->end);
	}
}

/* One column of a chunk: bigint or a time type (all int64), or text. */
static Datum
late_array(Datum *values, bool *nulls, int n, Oid type)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};

	if (type == TEXTOID)
		return PointerGetDatum(construct_md_array(values, nulls, 1, dims, lbs,
												  TEXTOID, -1, false, TYPALIGN_INT));
	return PointerGetDatum(construct_md_array(values, nulls, 1, dims, lbs, type,
											  sizeof(int64), true, TYPALIGN_DOUBLE));
}

static void
late_chunk_write(const EmitTarget *t, SPIPlanPtr plan, LateChunk *c)
{
	Oid			time = t->time_type;
	Datum		values[8];

	values[0] = late_array(c->seq, NULL, c->n, INT8OID);
	values[1] = late_array(c->ts, c->ts_null, c->n, time);
	values[2] = late_array(c->wm, c->wm_null, c->n, time);
	values[3] = late_array(c->reason, NULL, c->n, TEXTOID);
	values[4] = late_array(c->row, NULL, c->nmissed, INT8OID);
	values[5] = late_array(c->start, NULL, c->nmissed, time);
	values[6] = late_array(c->end, NULL, c->nmissed, time);
	values[7] = late_array(c->error, c->error_null, c->n, TEXTOID);
	if (SPI_execute_plan(plan, values, NULL, false, 0) != SPI_OK_INSERT ||
		SPI_processed != (uint64) c->n)
		elog(ERROR, "could not insert late rows");
	c->n = 0;
	c->nmissed = 0;
}

/*
 * Routes the step's late rows to the late table with their reason, the
 * watermark they met and the windows they missed, a chunk of rows per
 * statement, in arrival order.  Returns how many were routed; without a
 * late table they are only counted by the caller.
 */
int64
emit_late(const EmitTarget *t, Operator *op)
{
	SPIPlanPtr	plan;
	LateChunk	c = {0};
	ListCell   *lc;
	MemoryContext cxt;
	MemoryContext old;

	if (t->late_table == NULL || op->late == NIL)
		return 0;
	plan = prepare_late_insert(t);
	cxt = AllocSetContextCreate(CurrentMemoryContext, "windowing late", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	c.seq = palloc(sizeof(Datum) * LATE_CHUNK);
	c.ts = palloc(sizeof(Datum) * LATE_CHUNK);
	c.ts_null = palloc(sizeof(bool) * LATE_CHUNK);
	c.wm = palloc(sizeof(Datum) * LATE_CHUNK);
	c.wm_null = palloc(sizeof(bool) * LATE_CHUNK);
	c.reason = palloc(sizeof(Datum) * LATE_CHUNK);
	c.error = palloc(sizeof(Datum) * LATE_CHUNK);
	c.error_null = palloc(sizeof(bool) * LATE_CHUNK);
	/* grown by late_chunk_add as rows with missed windows come */
	c.row = palloc(sizeof(Datum));
	c.start = palloc(sizeof(Datum));
	c.end = palloc(sizeof(Datum));
	foreach(lc, op->late)
	{
		late_chunk_add(&c, lfirst(lc));
		if (c.n == LATE_CHUNK)
			late_chunk_write(t, plan, &c);
	}
	if (c.n > 0)
		late_chunk_write(t, plan, &c);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return list_length(op->late);
}
