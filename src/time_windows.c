/*
 * time_windows.c
 *		Tumbling, hopping and cumulating windows kept one entry per window:
 *		a row joins each window the assigner gives it (spec_windows).
 *		Hopping and cumulating windows are kept as slices instead where
 *		they can be (slices.c).
 */
#include "compat.h"

#include "operator.h"
#include "operator_int.h"

/* Adds a row to its live windows; returns the windows it missed. */
static List *
add_to_windows(Operator *op, int n, int64 ts, bytea *key, Datum *args, bool *argnulls)
{
	List	   *missed = NIL;

	for (int i = 0; i < n; i++)
	{
		WmWindow   *w = &op->scratch[i];
		WindowEntry *e;
		bool		created;

		if (op_expired(op, w->end - 1))
		{
			missed = op_missed(op, missed, w);
			continue;
		}
		e = op_entry(op, key, w->start, w->end, &created);
		if (created)
		{
			agg_init(op->agg, e->states);
			op_add_fire_timer(op, e);
		}
		op_add_row(op, e, ts, args, argnulls);
	}
	return missed;
}

/* A row's windows, into op->scratch; -1 if its time is none or has none. */
static int
assign(Operator *op, bool ts_null, int64 ts)
{
	return ts_null ? -1 : spec_windows(op->spec, ts, op->scratch);
}

static bool
time_counts(Operator *op, bool ts_null, int64 ts, int64 gap)
{
	return assign(op, ts_null, ts) >= 0;
}

/* A row of windows of time. */
static void
time_row(Operator *op, int64 seq, bool ts_null, int64 ts, int64 gap,
		 bytea *key, Datum *args, bool *argnulls)
{
	int			n = assign(op, ts_null, ts);
	List	   *missed;

	if (n < 0)
	{
		op_bad_time(op, seq, ts_null, ts);
		return;
	}
	if (n == 0)
		op_no_window(op, seq, ts);
	missed = add_to_windows(op, n, ts, key, args, argnulls);
	if (missed != NIL)
		op_add_late(op, seq, false, ts,
					list_length(missed) == n ? "late" : "late for some windows",
					missed);
	op_observe(op, ts);
}

/* The row's windows are assigned into scratch, spec->max_windows of them. */
static void
time_init(Operator *op)
{
	op->scratch = palloc(sizeof(WmWindow) * op->spec->max_windows);
}

/*
 * A stored window that has not fired on time waits for its timer again:
 * one the watermark has not reached, or, with fire_spread (which comes
 * with the default trigger: a window's firings are on time and late), one
 * that has not fired at all.
 */
static void
time_load(Operator *op, WindowEntry *e)
{
	if (!op_reached(op, e) || (op->spread > 0 && e->fire_count == 0))
		op_add_fire_timer(op, e);
}

const OpKind time_window_kind = {
	.name = "time",
	.timed = true,
	.keyed = false,
	.fresh_windows = true,
	.by_key = true,
	.init = time_init,
	.row = time_row,
	.time_counts = time_counts,
	.on_watermark = op_run_timers,
	.load = time_load,
	.open_windows = op_open_entries,
};
