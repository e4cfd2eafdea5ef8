/*
 * slices.c
 *		Sliding windows computed from slices of time, as Flink's sliced
 *		window aggregation.
 */
#include "compat.h"

#include "common/int.h"

#include "operator.h"
#include "operator_int.h"

/*
 * Sliding windows from slices, as Flink's sliced window aggregation: a
 * row goes into one slice of gcd(size, slide), instead of into each of its
 * size / slide windows; a window is the combination of its slices, made
 * when it fires.  Each key waits in key_timers for its next window, the
 * earliest one holding a slice, so firing follows Flink's order (end, key)
 * and costs nothing for windows without rows.
 *
 * A key's windows fire in order, each one slide further, so consecutive
 * windows share all but a few slices.  They share their combinations too,
 * through two stacks (the "two-stacks" sliding-window aggregation, which
 * needs no inverse of combine): the front holds the oldest slices, each
 * with the combination of itself and the front slices after it; the back
 * is the combination of the slices added since.  A window is the front's
 * top combined with the back; a slice leaving pops the front, and an empty
 * front takes over the back.  Each slice is combined a few times in all
 * instead of once per window holding it (size / slide times).  A row that
 * reaches a slice already combined (a row late for some windows) makes the
 * key start over from its slices.
 *
 * Cumulating windows (Flink's sliced cumulate) are slices of one step: the
 * windows of a max_size cell all start at the cell's start, so none of its
 * slices leaves the stacks until the cell is done; each window is the one
 * before with the slices of one more step added to the back.  A row costs
 * one slice, not the up to max_size / step windows that hold it.
 *
 * With allowed lateness a slice stays until the last window holding it is
 * cleaned up, not only until it fired.  A row late for windows still alive
 * fires each of them again at once, combined anew from its slices; a key
 * waits in key_cleanups for its oldest fired window still alive, whose last
 * result becomes final when the watermark passes its cleanup time, as the
 * per-window operator does.  A window fired at the watermark only fired
 * once; one fired by late rows keeps its fire count in the entry of its own
 * bounds (refire_count), without states of its own unless it is one slice.
 */

typedef struct Swag
{
	bool		valid;
	int64		to;				/* slices starting before "to" are in */
	int64		back_from;		/* the back: slices in [back_from, to) */
	bool		has_back;
	AggValue   *back;
	int			nfront;
	int			head;			/* front slices already left */
	Size		row_size;
	char	   *front;			/* nfront FrontRows */
} Swag;

/* Slice i of the front: its start, next to what the window reads with it. */
typedef struct FrontRow
{
	int64		start;
	AggValue	states[FLEXIBLE_ARRAY_MEMBER];	/* slice i and those after */
} FrontRow;

static inline FrontRow *
front_row(const Swag *sw, int i)
{
	return (FrontRow *) (sw->front + (Size) i * sw->row_size);
}

/* A slice starting at "start" changes: combinations holding it are stale. */
void
slices_changed(KeyEntries *sk, int64 start)
{
	if (sk->swag != NULL && start < sk->swag->to)
		sk->swag->valid = false;
}

/* Sliced: the key with the earliest next window first, then by key. */
static int
key_timer_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const KeyEntries *x = pairingheap_const_container(KeyEntries, timer, a);
	const KeyEntries *y = pairingheap_const_container(KeyEntries, timer, b);

	if (x->next_end != y->next_end)
		return x->next_end < y->next_end ? 1 : -1;
	return -op_key_cmp(arg, x->key, y->key);
}

/* Allowed lateness: the key with the earliest window to clean up first. */
static int
key_cleanup_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const KeyEntries *x = pairingheap_const_container(KeyEntries, cleanup, a);
	const KeyEntries *y = pairingheap_const_container(KeyEntries, cleanup, b);

	return (x->clean_end < y->clean_end) - (x->clean_end > y->clean_end);
}

/*
 * Whether sliding or cumulating windows can be computed from slices
 * (below): fixed lengths and aggregates that combine.  may_slice is false
 * for pipelines whose stored state is per window.
 */
bool
slices_can_slice(const WindowSpec *spec, Aggregator *agg, bool may_slice)
{
	const char *which;

	return may_slice && (spec->kind == WK_HOP || spec->kind == WK_CUMULATE) &&
		!spec->calendar && spec->size != spec->slide &&
		agg_can_combine(agg, &which);
}

/*
 * The start of the latest window holding ps (for cumulating windows, of
 * every window holding it: the start of its max_size cell); false on
 * overflow.  Windows end every slide (cumulate: every step) after it.
 */
static bool
latest_start(const Operator *op, int64 ps, int64 *start)
{
	int64		grid = op->spec->kind == WK_CUMULATE ? op->spec->size : op->spec->slide;

	return wm_align_start(ps, grid, op->spec->phase, start);
}

/* The ends of the first and the last window holding slice start ps. */
static void
slice_ends(const Operator *op, int64 ps, int64 *first, int64 *last)
{
	int64		s;

	if (!latest_start(op, ps, &s) || pg_add_s64_overflow(s, op->spec->size, last))
		*last = PG_INT64_MAX;
	*first = *last - (*last - ps - 1) / op->spec->slide * op->spec->slide;
}

/* The start of the window ending at "end". */
static int64
window_start(const Operator *op, int64 end)
{
	int64		start;

	if (op->spec->kind == WK_HOP || !latest_start(op, end - 1, &start))
		return end - op->spec->size;
	return start;
}

/* The first window end from "end" on, a slide apart, whose end - 1 is past t. */
static int64
end_after(const Operator *op, int64 end, int64 t)
{
	if (t != WMK_NONE && end - 1 <= t)
		end += ((t - (end - 1)) / op->spec->slide + 1) * op->spec->slide;
	return end;
}

/* A key waits in "heap" for the window ending at "end", unless for an earlier one. */
static void
key_wait(pairingheap *heap, pairingheap_node *node, int64 *at, bool *waits, int64 end)
{
	if (*waits)
	{
		if (*at <= end)
			return;
		pairingheap_remove(heap, node);
	}
	*at = end;
	pairingheap_add(heap, node);
	*waits = true;
}

/* The key's next window ends at "end", unless an earlier one is due. */
static void
key_timer_at(Operator *op, KeyEntries *sk, int64 end)
{
	key_wait(op->key_timers, &sk->timer, &sk->next_end, &sk->in_timers, end);
}

/* The key's fired window ending at "end" is alive until its cleanup time. */
static void
key_cleanup_at(Operator *op, KeyEntries *sk, int64 end)
{
	key_wait(op->key_cleanups, &sk->cleanup, &sk->clean_end, &sk->in_cleanups, end);
}

/* Keeps the key's slices in start order (rows arrive mostly in order). */
static void
slice_track(Operator *op, KeyEntries *sk, WindowEntry *e)
{
	int			i = sk->nparts;

	while (i > 0 && sk->parts[i - 1].start > e->k.start)
		i--;
	op_key_add_part(op, sk, i, e);
}

/*
 * A stored slice: its key waits for the first of its windows not fired,
 * and for the first fired one still alive.  An entry of another length
 * only keeps a window's fire count (refire_count).
 */
static void
load_slice(Operator *op, WindowEntry *e)
{
	KeyEntries *sk = op_key_entries(op, e->k.key);
	int64		first;
	int64		last;
	int64		alive;
	int64		w = op->wm.value;

	if (e->fire_count > 0)
		sk->refired++;
	if (e->k.end - e->k.start != op->slice)
		return;
	slice_track(op, sk, e);
	slices_changed(sk, e->k.start);
	slice_ends(op, e->k.start, &first, &last);
	if (op->lateness > 0 && w != WMK_NONE)
	{
		if (pg_sub_s64_overflow(w, op->lateness, &alive))
			alive = WMK_NONE;
		/* windows cleaned up under a smaller lateness are not again */
		alive = end_after(op, first, Max(alive, op->gone_until));
		if (alive <= last && wmk_window_fires(alive - 1, w))
			key_cleanup_at(op, sk, alive);
	}
	first = end_after(op, first, w);
	if (first <= last)
		key_timer_at(op, sk, first);
}

/*
 * The windows of a row at ts.  Windows start and end on slice boundaries,
 * so the rows of one slice share them: a row of a slice seen lately takes
 * its windows instead of working out its size / slide windows anew.  Rows
 * come mostly in order, out of it by a few slices at most, so a few recent
 * slices are kept, each in a place that ts picks (a slice may have two).
 */
#define ASSIGNED_SLICES 4

static const AssignedSlice *
slice_windows(Operator *op, int64 ts)
{
	AssignedSlice *a = &op->assigned[(uint64) (ts / op->slice) % ASSIGNED_SLICES];

	if (a->n > 0 && ts >= a->from && (uint64) ts - (uint64) a->from < (uint64) op->slice)
		return a;
	a->n = spec_windows(op->spec, ts, a->w);
	if (a->n > 0)
		a->from = a->w[0].start + (ts - a->w[0].start) / op->slice * op->slice;
	/* latest end first, as hopping windows come: the ones to expire last */
	if (op->spec->kind == WK_CUMULATE)
		for (int i = 0; i < a->n / 2; i++)
		{
			WmWindow	w = a->w[i];

			a->w[i] = a->w[a->n - 1 - i];
			a->w[a->n - 1 - i] = w;
		}
	return a;
}

/*
 * The key's slice starting at "start", made if new.  Rows come mostly in
 * order, so it is mostly the key's newest, found without a lookup.
 */
static WindowEntry *
key_slice(Operator *op, KeyEntries *sk, int64 start, bool *created)
{
	WindowEntry *slice;

	*created = false;
	if (sk->nparts > 0 && sk->parts[sk->nparts - 1].start == start)
		return sk->parts[sk->nparts - 1].e;
	slice = op_entry(op, sk->key, start, start + op->slice, created);
	if (*created)
	{
		agg_init(op->agg, slice->states);
		slice_track(op, sk, slice);
	}
	return slice;
}

static void refire(Operator *op, KeyEntries *sk, const WmWindow *w, bool new_slice);

/*
 * A row at ts, whose windows slice_windows gave: those fired already and
 * still alive (allowed lateness) fire again at once, the key waits for the
 * others.
 */
static void
slice_row(Operator *op, int64 seq, int64 ts, const AssignedSlice *a,
		  bytea *key, Datum *args, bool *argnulls)
{
	const WmWindow *w = a->w;
	int			n = a->n;
	int			live = n;
	int			pending;
	List	   *missed = NIL;
	KeyEntries *sk;
	WindowEntry *slice;
	int64		start;
	bool		created;

	while (live > 0 && op_expired(op, w[live - 1].end - 1))
		live--;
	for (int i = live; i < n; i++)
		missed = op_missed(op, missed, &w[i]);
	if (missed != NIL)
		op_add_late(op, seq, false, ts, live == 0 ? "late" : "late for some windows", missed);
	if (live == 0)
		return;
	start = a->from;
	sk = op_key_entries(op, key);
	slice = key_slice(op, sk, start, &created);
	agg_advance(op->agg, slice->states, args, argnulls);
	slices_changed(sk, start);
	slice->dirty = true;
	pending = live;
	while (pending > 0 && op->trigger->on_element(op, NULL, &w[pending - 1], ts) == TRIGGER_FIRE)
		pending--;
	/* oldest first: the stacks slide forward from one window to the next */
	for (int i = live - 1; i >= pending; i--)
		refire(op, sk, &w[i], created);
	if (pending > 0)
		key_timer_at(op, sk, w[pending - 1].end);
}

/* The key's stacks emptied, ready for the window starting at "from". */
static Swag *
swag_reset(Operator *op, KeyEntries *sk, int64 from)
{
	Swag	   *sw = sk->swag;

	if (sw == NULL)
	{
		sw = MemoryContextAllocZero(op->cxt, sizeof(Swag));
		sw->back = MemoryContextAlloc(op->cxt, sizeof(AggValue) * op->agg->nstates);
		sw->row_size = MAXALIGN(offsetof(FrontRow, states) +
								sizeof(AggValue) * op->agg->nstates);
		sk->swag = sw;
	}
	if (sw->front != NULL)
	{
		pfree(sw->front);
		sw->front = NULL;
	}
	sw->valid = true;
	sw->to = sw->back_from = from;
	sw->has_back = false;
	sw->nfront = sw->head = 0;
	return sw;
}

/* The back's slices become the front, each combined with those after it. */
static void
swag_flip(Operator *op, KeyEntries *sk, Swag *sw)
{
	int			first = op_key_part_from(sk, sw->back_from);
	int			n = op_key_part_from(sk, sw->to) - first;

	if (sw->front != NULL)
		pfree(sw->front);
	sw->front = MemoryContextAlloc(op->cxt, sw->row_size * Max(n, 1));
	for (int i = n - 1; i >= 0; i--)
	{
		const KeyPart *s = &sk->parts[first + i];
		FrontRow   *row = front_row(sw, i);

		row->start = s->start;
		agg_init(op->agg, row->states);
		agg_combine(op->agg, row->states, s->states);
		if (i < n - 1)
			agg_combine(op->agg, row->states, front_row(sw, i + 1)->states);
	}
	sw->nfront = n;
	sw->head = 0;
	sw->has_back = false;
	sw->back_from = sw->to;
}

/* The back takes the key's slices in [to, end), its newest, found from the last. */
static void
swag_push(Operator *op, KeyEntries *sk, Swag *sw, int64 end)
{
	int			n = sk->nparts;
	int			i = n;

	while (i > 0 && sk->parts[i - 1].start >= sw->to)
		i--;
	for (; i < n && sk->parts[i].start < end; i++)
	{
		if (!sw->has_back)
			agg_init(op->agg, sw->back);
		agg_combine(op->agg, sw->back, sk->parts[i].states);
		sw->has_back = true;
	}
}

/* The key's stacks hold exactly its slices in [from, end). */
static Swag *
swag_slide(Operator *op, KeyEntries *sk, int64 from, int64 end)
{
	Swag	   *sw = sk->swag;

	if (sw == NULL || !sw->valid || from >= sw->to || end < sw->to)
		sw = swag_reset(op, sk, from);
	for (;;)
	{
		while (sw->head < sw->nfront && front_row(sw, sw->head)->start < from)
			sw->head++;
		if (sw->head < sw->nfront || !sw->has_back || sw->back_from >= from)
			break;
		swag_flip(op, sk, sw);
	}
	if (sk->nparts > 0 && sk->parts[sk->nparts - 1].start >= sw->to)
		swag_push(op, sk, sw, end);
	sw->to = end;
	return sw;
}

/*
 * The combination of the key's slices starting in [from, end), through its
 * two stacks, into "states"; false if it has none there.  Count windows use
 * it too: their panes are slices of rows, numbered.
 */
bool
slices_combine(Operator *op, KeyEntries *sk, int64 from, int64 end, AggValue *states)
{
	Swag	   *sw = swag_slide(op, sk, from, end);

	agg_init(op->agg, states);
	if (sw->head < sw->nfront)
		agg_combine(op->agg, states, front_row(sw, sw->head)->states);
	if (sw->has_back)
		agg_combine(op->agg, states, sw->back);
	return sw->head < sw->nfront || sw->has_back;
}

/* The key's window ending at "end": the combination of its slices. */
static WindowEntry *
sliced_window(Operator *op, KeyEntries *sk, int64 end, bool *has_rows)
{
	WindowEntry *w = op_part_window(op, sk->key, window_start(op, end), end);

	*has_rows = slices_combine(op, sk, w->k.start, end, w->states);
	return w;
}

/*
 * The entry keeping the fire count of the key's window [start, end), if it
 * fired more than once: the slice itself where the window is one slice,
 * else an entry of the window's bounds that holds no rows.
 */
static WindowEntry *
refire_count(Operator *op, KeyEntries *sk, int64 start, int64 end)
{
	WindowKey	k = {sk->key, start, end};
	WindowSlot *slot;
	WindowEntry *e;

	if (sk->refired == 0 || (slot = wintab_lookup(op->windows, &k)) == NULL)
		return NULL;
	e = slot_entry(slot);
	return e->gone || e->fire_count == 0 ? NULL : e;
}

/*
 * The key's window "win" fired more than once: its entry (e, made if NULL)
 * keeps the count.
 */
static void
keep_fire_count(Operator *op, KeyEntries *sk, WindowEntry *e, const WindowEntry *win)
{
	bool		created;

	if (e == NULL)
	{
		e = op_entry(op, sk->key, win->k.start, win->k.end, &created);
		if (created)
			agg_init(op->agg, e->states);
		sk->refired++;
	}
	e->fire_count = win->fire_count;
	e->dirty = true;
}

/* The key's window [start, end) is cleaned up: its fire count goes. */
static void
forget_fire_count(Operator *op, KeyEntries *sk, int64 start, int64 end)
{
	WindowEntry *e = refire_count(op, sk, start, end);

	if (e == NULL)
		return;
	sk->refired--;
	if (e->k.end - e->k.start != op->slice)
		op_leave(op, e);
	else
	{
		e->fire_count = 0;		/* a slice, which later windows may hold */
		e->dirty = true;
	}
}

/*
 * A row late for the key's window w, which is alive still, fires it again
 * at once (Flink's EventTimeTrigger.onElement), with every slice it holds;
 * for the first time if the row is its first (then it has one slice, a new
 * one).
 */
static void
refire(Operator *op, KeyEntries *sk, const WmWindow *w, bool new_slice)
{
	WindowEntry *count = refire_count(op, sk, w->start, w->end);
	bool		has_rows;
	WindowEntry *win = sliced_window(op, sk, w->end, &has_rows);
	int			slices = op_key_part_from(sk, w->end) - op_key_part_from(sk, w->start);

	if (count != NULL)
		win->fire_count = count->fire_count;
	else
		win->fire_count = slices > 1 || !new_slice ? 1 : 0;
	op_fire(op, win, PANE_LATE);
	if (win->fire_count > 1)
		keep_fire_count(op, sk, count, win);
	key_cleanup_at(op, sk, w->end);
}

/* The window after the one ending at "end"; false if there is none. */
static bool
window_after(const Operator *op, int64 end, int64 *next)
{
	if (pg_add_s64_overflow(end, op->spec->slide, next))
		*next = PG_INT64_MAX;
	return end != PG_INT64_MAX;
}

/*
 * The key's slices in no window ending at "next" or later leave (every
 * one if "all").  A slice's last window ends later the later it starts, so
 * those leaving are the first ones.
 */
static void
slices_leave(Operator *op, KeyEntries *sk, int64 next, bool all)
{
	int			leaving = 0;
	int64		first;
	int64		last;

	for (; leaving < sk->nparts; leaving++)
	{
		slice_ends(op, sk->parts[leaving].start, &first, &last);
		if (last >= next && !all)
			break;
		op_leave(op, sk->parts[leaving].e);
	}
	op_key_drop_parts(sk, leaving);
}

/*
 * The end of the key's first window from the one ending at "next" on that
 * holds a slice, its first slice in a window ending there or later being
 * the i-th; false if it has none.
 */
static bool
window_with_slice(const Operator *op, KeyEntries *sk, int i, int64 next, int64 *end)
{
	int64		first;
	int64		last;

	if (i >= sk->nparts)
		return false;
	slice_ends(op, sk->parts[i].start, &first, &last);
	*end = Max(next, first);
	return true;
}

/*
 * After the window ending at "fired", the key waits for its next window
 * holding a slice, if any.  Without allowed lateness the slices no later
 * window holds leave now; with it they stay for the windows that fired.
 */
static void
next_slice_window(Operator *op, KeyEntries *sk, int64 fired)
{
	int64		next;
	bool		more = window_after(op, fired, &next);
	int			i = 0;
	int64		end;

	if (op->lateness == 0)
		slices_leave(op, sk, next, !more);
	else if (more)
		i = op_key_part_from(sk, window_start(op, next));
	else
		return;
	if (window_with_slice(op, sk, i, next, &end))
		key_timer_at(op, sk, end);
}

/*
 * The key's window [start, end) ends its life: its last result becomes
 * final (from its slices, which are all there still, where every firing
 * is a row), and its fire count goes.
 */
static void
final_window(Operator *op, KeyEntries *sk, int64 start, int64 end)
{
	WindowEntry *count = refire_count(op, sk, start, end);
	bool		has_rows;
	WindowEntry *win = op->final_rows ? sliced_window(op, sk, end, &has_rows) : NULL;

	op_final(op, op_part_ref(op, sk->key, start, end), count ? count->fire_count : 1,
			 win ? win->states : NULL);
	forget_fire_count(op, sk, start, end);
}

/*
 * The key's window ending at "end" is cleaned up: its last result becomes
 * final, its fire count goes, and so do the slices no later window holds.
 * Then the key waits for its next fired window, if it has one alive.
 */
static void
clean_key(Operator *op, KeyEntries *sk, int64 end)
{
	int64		w = op->wm.value;

	for (;;)
	{
		int64		next;
		bool		more = window_after(op, end, &next);
		int64		start = window_start(op, end);

		final_window(op, sk, start, end);
		slices_leave(op, sk, next, !more);
		if (!window_with_slice(op, sk, 0, next, &end) ||
			!wmk_window_fires(end - 1, w))
			return;
		if (!wmk_window_expired(end - 1, op->lateness, w))
		{
			key_cleanup_at(op, sk, end);
			return;
		}
	}
}

/* Fires the windows the watermark passed, then cleans up those past their time. */
static void
fire_sliced(Operator *op)
{
	bool		has_rows;

	while (!pairingheap_is_empty(op->key_timers))
	{
		KeyEntries *sk = pairingheap_container(KeyEntries, timer,
											   pairingheap_first(op->key_timers));
		int64		end = sk->next_end;
		WmWindow	win = {window_start(op, end), end};

		if (!wmk_window_fires(end - 1, op->wm.value))
			break;
		pairingheap_remove_first(op->key_timers);
		sk->in_timers = false;
		if (op->trigger->on_event_time(op, NULL, &win, end - 1) == TRIGGER_FIRE)
			op_fire(op, sliced_window(op, sk, end, &has_rows), PANE_ON_TIME);
		next_slice_window(op, sk, end);
		if (op->lateness > 0)
			key_cleanup_at(op, sk, end);
	}
	while (op->lateness > 0 && !pairingheap_is_empty(op->key_cleanups))
	{
		KeyEntries *sk = pairingheap_container(KeyEntries, cleanup,
											   pairingheap_first(op->key_cleanups));

		if (!wmk_window_expired(sk->clean_end - 1, op->lateness, op->wm.value))
			break;
		pairingheap_remove_first(op->key_cleanups);
		sk->in_cleanups = false;
		clean_key(op, sk, sk->clean_end);
	}
}

/*
 * Sliced: a key's entries are due together, when its next window fires or
 * the oldest of its fired windows still alive is cleaned up, so that the
 * store and the heap hand the key to a step whole by then.
 */
static int64
sliced_due(Operator *op, const WindowEntry *e)
{
	KeyEntries *sk = op_key_entries(op, e->k.key);
	int64		due = WMK_END;

	if (sk->in_timers)
		due = sk->next_end - 1;
	if (sk->in_cleanups)
		due = Min(due, wmk_cleanup_time(sk->clean_end - 1, op->lateness));
	return due;
}

/* A slice may end this much before the last window holding it. */
static int64
sliced_ends_before(const Operator *op)
{
	return op->spec->size - op->slice;
}

/* The first window end whose last instant is past t: of a window holding t + 1. */
static int64
sliced_next_end(const Operator *op, int64 t)
{
	int64		first;
	int64		last;

	slice_ends(op, wmk_add(t, 1), &first, &last);
	return first;
}

/* Sliced: each key's windows not fired yet, from its next one on. */
static void
open_sliced_windows(Operator *op, void (*fn) (WindowEntry *, void *), void *arg)
{
	HASH_SEQ_STATUS seq;
	KeyEntries *sk;

	hash_seq_init(&seq, op->keyed);
	while ((sk = hash_seq_search(&seq)) != NULL)
	{
		int64		first;
		int64		last;

		if (!sk->in_timers)
			continue;
		slice_ends(op, sk->parts[sk->nparts - 1].start, &first, &last);
		for (int64 end = sk->next_end; end <= last; end += op->spec->slide)
		{
			bool		has_rows;
			WindowEntry *w = sliced_window(op, sk, end, &has_rows);

			if (has_rows)
				fn(w, arg);
		}
	}
}

/* A sliced operator's slice length and key timers. */
static void
slices_init(Operator *op)
{
	op->slice = wm_gcd(op->spec->size, op->spec->slide);
	op->key_timers = pairingheap_allocate(key_timer_cmp, op);
	op->key_cleanups = pairingheap_allocate(key_cleanup_cmp, op);
	op->assigned = palloc0(sizeof(AssignedSlice) * ASSIGNED_SLICES);
	for (int i = 0; i < ASSIGNED_SLICES; i++)
		op->assigned[i].w = palloc(sizeof(WmWindow) * op->spec->max_windows);
}

/* A row's slice and windows; NULL if its time is none or has none. */
static const AssignedSlice *
assign(Operator *op, bool ts_null, int64 ts)
{
	const AssignedSlice *a = ts_null ? NULL : slice_windows(op, ts);

	return a == NULL || a->n < 0 ? NULL : a;
}

static bool
sliced_time_counts(Operator *op, bool ts_null, int64 ts, int64 gap)
{
	return assign(op, ts_null, ts) != NULL;
}

/* A row of sliding or cumulating windows: to its slice. */
static void
sliced_row(Operator *op, int64 seq, bool ts_null, int64 ts, int64 gap,
		   bytea *key, Datum *args, bool *argnulls)
{
	const AssignedSlice *a = assign(op, ts_null, ts);

	if (a == NULL)
	{
		op_bad_time(op, seq, ts_null, ts);
		return;
	}
	if (a->n == 0)
		op_no_window(op, seq, ts);
	slice_row(op, seq, ts, a, key, args, argnulls);
	op_observe(op, ts);
}

const OpKind sliced_window_kind = {
	.name = "sliced",
	.timed = false,
	.keyed = true,
	.fresh_windows = true,
	.by_key = true,
	.init = slices_init,
	.row = sliced_row,
	.time_counts = sliced_time_counts,
	.on_watermark = fire_sliced,
	.load = load_slice,
	.open_windows = open_sliced_windows,
	.due = sliced_due,
	.ends_before = sliced_ends_before,
	.next_end = sliced_next_end,
};
