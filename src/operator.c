/*
 * operator.c
 *		Flink's WindowOperator for one step of a pipeline.
 *
 * Rows arrive in arrival order.  Each is added to every window of its key
 * that is still alive; a window whose watermark already passed its end
 * fires again at once with its full updated result (allowed lateness), and
 * the windows a row missed because they were cleaned up are recorded, all
 * of them, even when the row was on time for others: Flink drops those
 * silently.  After each row the watermark may move; every window it passes
 * fires, in order of (end, key, start), and every window past its cleanup
 * time is dropped.  Two binary heaps stand in for Flink's timer service.
 *
 * The operator only computes: what to store, fire and route is written by
 * the caller at the end of the step, in the same transaction.  This file
 * chooses the pipeline's kind of window and trigger and hands each event
 * to them (operator_int.h); the kinds have files of their own.
 */
#include "compat.h"

#include "utils/datum.h"
#include "utils/memutils.h"

#include "operator.h"
#include "operator_int.h"

/*
 * The kind of window that keeps a pipeline's windows.  Windows kept as
 * slices exist only as they fire, with no state of their own for a trigger
 * that fires early, nor rows of their own for an evictor.
 */
static const OpKind *
kind_of(const WindowSpec *spec, Aggregator *agg, bool may_slice)
{
	if (spec->kind == WK_COUNT)
		return &count_window_kind;
	if (spec->kind == WK_SESSION)
		return &session_window_kind;
	if (slices_can_slice(spec, agg, may_slice))
		return &sliced_window_kind;
	return &time_window_kind;
}

/* An operator whose entries, firings and late rows live in the current context. */
Operator *
op_create(const WindowSpec *spec, Aggregator *agg, int64 lateness, bool may_slice,
		  const TriggerDef *trigger, const KeyOrder *key_order)
{
	Operator   *op = palloc0(sizeof(Operator));

	op->cxt = CurrentMemoryContext;
	op->firing_cxt = AllocSetContextCreate(CurrentMemoryContext, "windowing firings",
										   ALLOCSET_DEFAULT_SIZES);
	op->late_cxt = AllocSetContextCreate(CurrentMemoryContext, "windowing late rows",
										 ALLOCSET_DEFAULT_SIZES);
	op->spec = spec;
	op->agg = agg;
	op->lateness = lateness;
	op->gone_until = PG_INT64_MIN;
	op->key_order = *key_order;
	/* slices are shared by windows: a window cannot purge them alone */
	op->kind = kind_of(spec, agg,
					   may_slice && trigger->trigger == &trigger_event_time && !trigger->purging &&
					   agg->evict == NULL);
	op->trigger = trigger->trigger;
	op->trigger_every = trigger->every;
	op->purging = trigger->purging;
	op->trigger_threshold = trigger->threshold;
	op_init_table(op);
	if (op->kind->init != NULL)
		op->kind->init(op);
	agg_bind_context(agg, CurrentMemoryContext);
	return op;
}

/*
 * A window's stored state: its trigger's state, if the trigger keeps one
 * or purges (its own timer, the rows or the input it last fired on, and a
 * byte of flags: whether rows came since the window last fired, whether
 * the timer is on the clock, whether it has such an input),
 * then its aggregates' states.
 */
#define TRIGGER_STATE_BYTES (2 * sizeof(int64) + 1)
#define CHANGED 1
#define CLOCK_TIMER 2
#define PRIMED 4

static bool
keeps_trigger_state(const Operator *op)
{
	return op->trigger->has_state || op->purging;
}

bytea *
op_serialize(Operator *op, WindowEntry *e)
{
	bytea	   *aggs = agg_serialize(op->agg, e->states);
	bytea	   *out;

	if (!keeps_trigger_state(op))
		return aggs;
	out = palloc(VARSIZE(aggs) + TRIGGER_STATE_BYTES);
	SET_VARSIZE(out, VARSIZE(aggs) + TRIGGER_STATE_BYTES);
	memcpy(VARDATA(out), &e->trigger_time, sizeof(int64));
	memcpy(VARDATA(out) + sizeof(int64), &e->trigger_rows, sizeof(int64));
	VARDATA(out)[2 * sizeof(int64)] = (e->changed ? CHANGED : 0) |
		(trigger_on_clock(op->trigger) ? CLOCK_TIMER : 0) | (e->trigger_primed ? PRIMED : 0);
	memcpy(VARDATA(out) + TRIGGER_STATE_BYTES, VARDATA(aggs), VARSIZE(aggs) - VARHDRSZ);
	return out;
}

/* The aggregates' states of a stored window, past its trigger's state. */
static bytea *
stored_aggs(const Operator *op, bytea *state)
{
	Size		len = VARSIZE_ANY_EXHDR(state);
	bytea	   *aggs;

	if (!keeps_trigger_state(op))
		return state;
	if (len < TRIGGER_STATE_BYTES)
		elog(ERROR, "stored window state is too short for its trigger");
	aggs = palloc(VARHDRSZ + len - TRIGGER_STATE_BYTES);
	SET_VARSIZE(aggs, VARHDRSZ + len - TRIGGER_STATE_BYTES);
	memcpy(VARDATA(aggs), VARDATA_ANY(state) + TRIGGER_STATE_BYTES, len - TRIGGER_STATE_BYTES);
	return aggs;
}

/*
 * The trigger's own timer of stored window [start, end), as it stands at
 * the watermark (WindowTrigger.stored_timer); *flags are its stored flags.
 */
static int64
stored_trigger_timer(const Operator *op, int64 start, int64 end, const bytea *state, char *flags)
{
	int64		time;
	WmWindow	w = {start, end};

	if (VARSIZE_ANY_EXHDR(state) < TRIGGER_STATE_BYTES)
		elog(ERROR, "stored window state is too short for its trigger");
	memcpy(&time, VARDATA_ANY(state), sizeof(int64));
	*flags = VARDATA_ANY(state)[2 * sizeof(int64)];
	/* a timer set under a trigger of the other clock (alter_pipeline) goes */
	if (((*flags & CLOCK_TIMER) != 0) != trigger_on_clock(op->trigger))
		return WMK_NONE;
	if (op->trigger->stored_timer == NULL)
		return time;
	return op->trigger->stored_timer(op, (*flags & CHANGED) != 0, &w, time);
}

/*
 * Whether stored window [start, end) may have a timer at or before
 * "until" on event time that does something, without loading it: its
 * firing or cleanup (it ends by then), or the trigger's own timer its
 * state holds, if rows came since it last fired (else the timer passes
 * without firing, and moves on as the window loads: stored_timer).
 */
bool
op_stored_due(const Operator *op, int64 start, int64 end, const bytea *state, int64 until)
{
	int64		time;
	char		flags;

	if (wmk_add(end, -1) <= until)
		return true;
	if (!keeps_trigger_state(op) || trigger_on_clock(op->trigger))
		return false;
	time = stored_trigger_timer(op, start, end, state, &flags);
	return (flags & CHANGED) != 0 && time != WMK_NONE && time != WMK_END && time <= until;
}

/* The trigger's state of a stored window, back; returns its aggregates' states. */
static bytea *
load_trigger_state(Operator *op, WindowEntry *e, bytea *state)
{
	char		flags;

	if (!keeps_trigger_state(op))
		return state;
	op_set_trigger_timer(op, e, stored_trigger_timer(op, e->k.start, e->k.end, state, &flags));
	e->changed = (flags & CHANGED) != 0;
	memcpy(&e->trigger_rows, VARDATA_ANY(state) + sizeof(int64), sizeof(int64));
	e->dirty = false;
	e->trigger_primed = (flags & PRIMED) != 0;
	/* a delta trigger's input, left by it for another trigger (alter_pipeline) */
	if (e->trigger_primed && op->trigger != &trigger_early_delta)
	{
		e->trigger_primed = false;
		e->trigger_rows = 0;
	}
	return stored_aggs(op, state);
}

/* A window as stored by an earlier step, in window_state. */
WindowEntry *
op_load(Operator *op, bytea *key, int64 start, int64 end, int fire_count,
		bytea *state)
{
	MemoryContext old = MemoryContextSwitchTo(op->cxt);
	bool		created;
	WindowEntry *e = op_entry(op, key, start, end, &created);

	e->fire_count = fire_count;
	e->stored = true;
	e->saved = DatumGetByteaPCopy(PointerGetDatum(state));
	agg_deserialize(op->agg, load_trigger_state(op, e, e->saved), e->states);
	op->kind->load(op, e);
	op_keep_cleanup_timer(op, e);
	MemoryContextSwitchTo(old);
	return e;
}

/*
 * The firings are written: their memory goes, and with it the windows made
 * only to fire (op_part_window).  A step writes them as it goes
 * (emit_firings_so_far), so that its memory does not grow with the windows
 * it fires.
 */
void
op_forget_firings(Operator *op)
{
	op->firings = NIL;
	op->firings_may_refire = 0;
	MemoryContextReset(op->firing_cxt);
}

/* The late rows are written: a storm of them costs a chunk's memory. */
void
op_forget_late(Operator *op)
{
	op->late = NIL;
	MemoryContextReset(op->late_cxt);
}

/*
 * A row whose aggregate inputs or transition failed, to the late table
 * with its error (on_error 'route'), in its place among the late rows.
 */
void
op_add_error(Operator *op, int64 seq, bool ts_null, int64 ts, const char *reason,
			 const char *error)
{
	LateRow    *l;

	op_add_late(op, seq, ts_null, ts, MemoryContextStrdup(op->late_cxt, reason), NIL);
	l = llast(op->late);
	l->error = MemoryContextStrdup(op->late_cxt, error);
}

/*
 * The largest key (keys_encode's bytes) a window may have.  Keys are
 * indexed, in window_state's primary key and the upsert result table's
 * unique key, and a B-tree entry holds at most 2704 bytes: a window whose
 * key does not fit would fail every step that writes it, for good, since
 * its row is consumed already.  The margin is for the entries' other
 * columns.
 */
#define KEY_MAX_BYTES 2600

/* One row, in arrival order. */
void
op_row(Operator *op, int64 seq, bool ts_null, int64 ts, int64 gap,
	   bytea *key, Datum *args, bool *argnulls)
{
	MemoryContext old = MemoryContextSwitchTo(op->cxt);

	if (VARSIZE_ANY(key) > KEY_MAX_BYTES)
		op_add_late(op, seq, ts_null, ts, "key too large", NIL);
	else
	{
		if (op->fetch_key != NULL)
			op->fetch_key(op, key);
		op->kind->row(op, seq, ts_null, ts, gap, key, args, argnulls);
	}
	MemoryContextSwitchTo(old);
}

/*
 * A row of a key that another part of the pipeline steps: its time counts
 * for the watermark as it does in that part, so that each part's watermark
 * is the one a pipeline of one part would have; the rest of it is that
 * part's.
 */
void
op_foreign_row(Operator *op, bool ts_null, int64 ts, int64 gap, const bytea *key)
{
	MemoryContext old;

	if (VARSIZE_ANY(key) > KEY_MAX_BYTES || op->kind->time_counts == NULL ||
		!op->kind->time_counts(op, ts_null, ts, gap))
		return;
	old = MemoryContextSwitchTo(op->cxt);
	op_observe(op, ts);
	MemoryContextSwitchTo(old);
}

/* An explicit watermark, or the end of input (WMK_END). */
void
op_advance_watermark(Operator *op, int64 to)
{
	MemoryContext old = MemoryContextSwitchTo(op->cxt);
	int64		before = op->wm.value;

	if (wmk_advance(&op->wm, to))
		op_watermark_moved(op, before);
	if (to == WMK_END && op->kind->at_end != NULL)
	{
		/* every window, for the kind's own end */
		if (op->fetch_due != NULL)
			while (op->fetch_due(op, WMK_END))
				;
		op->kind->at_end(op);
	}
	MemoryContextSwitchTo(old);
}

/*
 * Whether the kind's open windows are its stored windows that have not
 * fired on time, each on its own (op_peek): not slices or panes, which
 * make windows together.
 */
bool
op_open_as_stored(const Operator *op)
{
	return op->kind->open_windows == op_open_entries;
}

/*
 * A stored window, to fn as an entry of its key, bounds and states (and
 * nothing else) if the kind's open windows are stored windows and it has
 * not fired on time; the entry is in the caller's memory, and in no table
 * or list of the operator's.
 */
void
op_peek(Operator *op, bytea *key, int64 start, int64 end, bytea *state,
		void (*fn) (WindowEntry *, void *), void *arg)
{
	WindowEntry e;

	Assert(op_open_as_stored(op));
	memset(&e, 0, sizeof(e));
	e.k.key = key;
	e.k.start = start;
	e.k.end = end;
	if (op_reached(op, &e))
		return;
	e.states = palloc(sizeof(AggValue) * op->agg->nstates);
	agg_deserialize(op->agg, stored_aggs(op, state), e.states);
	fn(&e, arg);
}

/*
 * Calls fn for each window that has rows and has not fired yet; the
 * caller loaded every window (state_load).
 */
void
op_open_windows(Operator *op, void (*fn) (WindowEntry *, void *), void *arg)
{
	op->kind->open_windows(op, fn, arg);
}


/*
 * Whether the kind's windows can be kept outside and loaded a key at a
 * time (fetch_key, fetch_due) for a step at op->clock, after one at
 * "since" (WMK_NONE: not known) that ran every timer on the clock up to
 * there; else every window is loaded for the step.  Timers on the clock
 * come due whatever the rows and the watermark, but each is set at the
 * multiple of the interval after the clock of the step that sets it
 * (next_timer): a step whose clock passes none since finds none due.
 */
bool
op_by_key(const Operator *op, int64 since)
{
	if (!trigger_on_clock(op->trigger))
		return op->kind->by_key;
	return op->kind->by_key && since != WMK_NONE &&
		op->clock < op->trigger->next_timer(op, since);
}

/* Whether a window's bounds move as rows join it (sessions). */
bool
op_moving_bounds(const Operator *op)
{
	return op->kind->moving_bounds;
}

/*
 * Whether the windows whose timers a watermark reaches can be found by
 * their end (a slice by its key's windows' ends, op_ends_before): their
 * timers are their firing and their cleanup, and a trigger's own timers
 * on event time run only where op_next_early says, where every window may
 * be due.  A trigger that counts rows or watches a column keeps state but
 * no timer, and neither does purging.
 */
bool
op_due_by_end(const Operator *op)
{
	return op->kind->timed || op->kind->due != NULL;
}

/*
 * The first time past t at which a timer of the trigger's own on event
 * time may run, where the windows are kept outside the operator: WMK_END
 * if the trigger sets none, WMK_NONE where t is (any time may be).
 */
int64
op_next_early(const Operator *op, int64 t)
{
	if (op->trigger->next_timer == NULL || trigger_on_clock(op->trigger) || t == WMK_END)
		return WMK_END;
	return t == WMK_NONE ? WMK_NONE : op->trigger->next_timer(op, t);
}

/*
 * How much earlier than a window's end the entries that make it may end
 * (a slice of a sliding window ends before the window does): a read of
 * the heap by due time reads that much further back.
 */
int64
op_ends_before(const Operator *op)
{
	return op->kind->ends_before != NULL ? op->kind->ends_before(op) : 0;
}

/*
 * The first window end whose last instant is past t (windows that end on
 * a grid), or WMK_NONE where any instant may be one.
 */
int64
op_next_end(const Operator *op, int64 t)
{
	return op->kind->next_end != NULL && t != WMK_NONE && t != WMK_END ?
		op->kind->next_end(op, t) : WMK_NONE;
}

/*
 * Whether no window is due before the end of input: count windows, which
 * fire by their rows and keep no timer.
 */
bool
op_due_at_end(const Operator *op)
{
	return op->kind->final_when_fired;
}
