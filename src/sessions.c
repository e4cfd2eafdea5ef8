/*
 * sessions.c
 *		Session windows of the operator: a row's window merges with the
 *		live windows of its key that it overlaps or touches (Flink's
 *		MergingWindowSet).
 */
#include "compat.h"

#include "utils/timestamp.h"

#include "operator.h"
#include "operator_int.h"
#include "session_merge.h"

/*
 * A key's live sessions are kept in its list in start order.  They never
 * overlap or touch (those merge), so their ends are in order too, and the
 * sessions a row's window meets are found by a binary search and are next
 * to each other: a row costs O(log n) in its key's sessions, not a walk of
 * them all, whatever the allowed lateness keeps alive.  A session leaves
 * the list as it leaves the operator (merged away, or cleaned up), so the
 * list never holds one that is gone.  Sessions loaded from a stored state
 * come in no order; op_key_live sorts the list when the key is first used.
 */

/* The position of the first of the key's sessions that ends at or after "from". */
static int
first_ending_from(List *live, int64 from)
{
	int			lo = 0;
	int			hi = list_length(live);

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (((WindowEntry *) list_nth(live, mid))->k.end < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A session leaves its key's list (the operator is done with it). */
static void
session_leave(Operator *op, WindowEntry *e)
{
	KeyEntries *sk = op_key_entries(op, e->k.key);
	List	   *live = op_key_live(sk);
	int			i = first_ending_from(live, e->k.end);

	if (i < list_length(live) && list_nth(live, i) == e)
		sk->live = list_delete_nth_cell(live, i);
}

/*
 * A window merged into a bigger one leaves: no timers, no stored state, and
 * (upsert mode) no result row if it had fired.
 */
static void
supersede(Operator *op, WindowEntry *e)
{
	if (e->in_fire_heap)
		pairingheap_remove(op->fire_timers, &e->fire_node);
	if (e->in_cleanup_heap)
		pairingheap_remove(op->cleanup_timers, &e->cleanup_node);
	e->in_fire_heap = e->in_cleanup_heap = false;
	e->ref->merged_away = true;
	op_leave(op, e);
	if (e->fire_count > 0)
		op->superseded = lappend(op->superseded, e->ref);
}

/*
 * A session window that grows and has neither fired nor been stored (in
 * window_state or state_log) takes its new bounds in place: nothing outside
 * the step has seen it, so there is nothing to supersede and no states to
 * combine.  That is every row of a busy session after its first in a step.
 * False if it cannot (another entry, gone, holds those bounds).
 */
static bool
regrow(Operator *op, WindowEntry *x, const WmWindow *w)
{
	if (x->fire_count > 0 || x->stored || x->logged ||
		(x->k.start == w->start && x->k.end == w->end))
		return false;
	Assert(x->in_fire_heap);
	pairingheap_remove(op->fire_timers, &x->fire_node);
	if (x->in_cleanup_heap)
		pairingheap_remove(op->cleanup_timers, &x->cleanup_node);
	if (op_rekey(op, x, w->start, w->end))
		x->ref->k = x->k;
	pairingheap_add(op->fire_timers, &x->fire_node);
	if (x->in_cleanup_heap)
		pairingheap_add(op->cleanup_timers, &x->cleanup_node);
	return x->k.start == w->start && x->k.end == w->end;
}

/* The common case, without lists: the row touches its key's one window. */
static WindowEntry *
grow_single(Operator *op, KeyEntries *sk, const WmWindow *w)
{
	WindowEntry *x;
	WmWindow	merged;

	if (list_length(sk->live) != 1)
		return NULL;
	x = linitial(sk->live);
	if (x->gone || x->k.start > w->end || x->k.end < w->start)
		return NULL;
	merged.start = Min(w->start, x->k.start);
	merged.end = Max(w->end, x->k.end);
	if (x->k.start == merged.start && x->k.end == merged.end)
		return x;
	return regrow(op, x, &merged) ? x : NULL;
}

/*
 * The window a row merges into: its own, covering every live window of the
 * key that it overlaps or touches, whose states it combines; it takes
 * their place in the key's list.  NULL if the row is late (recorded).
 */
static WindowEntry *
merge_row(Operator *op, KeyEntries *sk, int64 seq, int64 ts, bytea *key, WmWindow w)
{
	List	   *live = op_key_live(sk);
	int			first = first_ending_from(live, w.start);
	int			hits = 0;
	WindowEntry *e;
	bool		created = false;
	bool		kept = false;	/* e is one of the hits, already in the list */

	for (int i = first; i < list_length(live); i++, hits++)
	{
		WindowEntry *x = list_nth(live, i);

		if (x->k.start > w.end)
			break;
		w.start = Min(w.start, x->k.start);
		w.end = Max(w.end, x->k.end);
	}
	if (hits == 0 && op_expired(op, w.end - 1))
	{
		op_add_late(op, seq, false, ts, "late", op_missed(op, NIL, &w));
		return NULL;
	}
	if (hits == 1 && regrow(op, list_nth(live, first), &w))
		return list_nth(live, first);
	e = op_entry(op, key, w.start, w.end, &created);
	if (created)
	{
		agg_init(op->agg, e->states);
		op_add_fire_timer(op, e);
	}
	/* the hits leave the list (supersede) from the last, so "first" holds */
	for (int i = first + hits - 1; i >= first; i--)
	{
		WindowEntry *x = list_nth(sk->live, i);

		if (x == e)
			kept = true;
		else
		{
			agg_combine(op->agg, e->states, x->states);
			if (op->trigger->on_merge != NULL)
				op->trigger->on_merge(op, e, x);
			supersede(op, x);
		}
	}
	if (!kept)
		sk->live = list_insert_nth(sk->live, first, e);
	return e;
}

/* A row's own window [ts, ts + gap); false if the gap or the bounds are out of range. */
static bool
row_window(Operator *op, int64 ts, int64 gap, WmWindow *w)
{
	return gap > 0 && sm_row_window(ts, gap, w) &&
		(!op->spec->is_timestamp || (IS_VALID_TIMESTAMP(w->start) && IS_VALID_TIMESTAMP(w->end)));
}

static bool
time_valid(Operator *op, bool ts_null, int64 ts)
{
	return !ts_null && !(op->spec->is_timestamp && TIMESTAMP_NOT_FINITE(ts));
}

/*
 * Flink's MergingWindowSet for one row: its window [ts, ts + gap) merges
 * with every live window of its key that it overlaps or touches, into
 * their cover, whose state combines theirs.  A late row can bridge two
 * sessions; a row whose window touches none and is past cleanup is late.
 * Returns whether the row's time counts for the watermark.
 */
static bool
session_row(Operator *op, int64 seq, int64 ts, int64 gap, bytea *key,
			Datum *args, bool *argnulls)
{
	KeyEntries *sk = op_key_entries(op, key);
	WmWindow	w;
	WindowEntry *e;

	if (!row_window(op, ts, gap, &w))
	{
		op_add_late(op, seq, false, ts,
				 gap <= 0 ? "gap is null or not positive" : "event time out of range", NIL);
		return gap <= 0;
	}
	e = grow_single(op, sk, &w);
	if (e == NULL)
		e = merge_row(op, sk, seq, ts, key, w);
	if (e == NULL)
		return true;
	op_add_row(op, e, ts, args, argnulls);
	return true;
}

static void
session_kind_row(Operator *op, int64 seq, bool ts_null, int64 ts, int64 gap,
				 bytea *key, Datum *args, bool *argnulls)
{
	if (!time_valid(op, ts_null, ts))
		op_bad_time(op, seq, ts_null, ts);
	else if (session_row(op, seq, ts, gap, key, args, argnulls))
		op_observe(op, ts);
}

/* As session_row: a row without a positive gap counts, one out of range does not. */
static bool
session_time_counts(Operator *op, bool ts_null, int64 ts, int64 gap)
{
	WmWindow	w;

	return time_valid(op, ts_null, ts) && (gap <= 0 || row_window(op, ts, gap, &w));
}

/* A stored session joins its key's list, and waits for its timer if the watermark has not reached it. */
static void
session_load(Operator *op, WindowEntry *e)
{
	if (!op_reached(op, e))
		op_add_fire_timer(op, e);
	op_key_track(op, e);
}

const OpKind session_window_kind = {
	.name = "session",
	.timed = true,
	.keyed = true,
	.fresh_windows = false,
	.by_key = true,
	.moving_bounds = true,
	.row = session_kind_row,
	.time_counts = session_time_counts,
	.on_watermark = op_run_timers,
	.load = session_load,
	.leave = session_leave,
	.open_windows = op_open_entries,
};
