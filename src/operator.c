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
 * the caller (emit.c) at the end of the step, in the same transaction.
 */
#include "compat.h"

#include "common/hashfn.h"
#include "common/int.h"
#include "lib/stringinfo.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "operator.h"
#include "session_merge.h"

static uint32
window_hash(const void *key, Size keysize)
{
	const WindowKey *k = key;
	uint32		h = hash_bytes((const unsigned char *) VARDATA_ANY(k->key),
							   VARSIZE_ANY_EXHDR(k->key));
	uint64		bounds = hash_combine64((uint64) k->start, (uint64) k->end);

	/* one pass over the key's bytes; the bounds are mixed in, not hashed */
	return hash_combine(h, murmurhash32((uint32) (bounds ^ (bounds >> 32))));
}

static int
key_cmp(const bytea *a, const bytea *b)
{
	int			la = VARSIZE_ANY_EXHDR(a);
	int			lb = VARSIZE_ANY_EXHDR(b);
	int			c = memcmp(VARDATA_ANY(a), VARDATA_ANY(b), Min(la, lb));

	return c != 0 ? c : (la > lb) - (la < lb);
}

static int
window_match(const void *a, const void *b, Size keysize)
{
	const WindowKey *x = a;
	const WindowKey *y = b;

	return !(x->start == y->start && x->end == y->end && key_cmp(x->key, y->key) == 0);
}

/* Flink's firing order: window end, then key, then window start. */
static int
firing_order(const WindowEntry *a, const WindowEntry *b)
{
	int			c;

	if (a->k.end != b->k.end)
		return a->k.end < b->k.end ? -1 : 1;
	c = key_cmp(a->k.key, b->k.key);
	if (c != 0)
		return c;
	return (a->k.start > b->k.start) - (a->k.start < b->k.start);
}

/* pairingheap keeps the largest on top: invert for earliest first. */
static int
fire_heap_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	return -firing_order(pairingheap_const_container(WindowEntry, fire_node, a),
						 pairingheap_const_container(WindowEntry, fire_node, b));
}

static int64
cleanup_time(const Operator *op, const WindowEntry *e)
{
	return wmk_cleanup_time(e->k.end - 1, op->lateness);
}

static int
cleanup_heap_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const Operator *op = arg;
	const WindowEntry *x = pairingheap_const_container(WindowEntry, cleanup_node, a);
	const WindowEntry *y = pairingheap_const_container(WindowEntry, cleanup_node, b);
	int64		cx = cleanup_time(op, x);
	int64		cy = cleanup_time(op, y);

	if (cx != cy)
		return cx < cy ? 1 : -1;
	return -firing_order(x, y);
}

/*
 * The live entries of one key: session windows (merging needs them by
 * key), count panes, or time slices in start order.
 */
typedef struct SessionKey
{
	bytea	   *key;			/* hash key, must be first */
	List	   *live;			/* WindowEntry * */
	pairingheap_node timer;		/* sliced: in key_timers */
	int64		next_end;		/* sliced: its next window to fire ends here */
	bool		in_timers;
} SessionKey;

static uint32
session_hash(const void *key, Size keysize)
{
	const bytea *k = *(bytea *const *) key;

	return hash_bytes((const unsigned char *) VARDATA_ANY(k), VARSIZE_ANY_EXHDR(k));
}

static int
session_match(const void *a, const void *b, Size keysize)
{
	return key_cmp(*(bytea *const *) a, *(bytea *const *) b) != 0;
}

static SessionKey *
session_key(Operator *op, bytea *key)
{
	bool		found;
	SessionKey *sk = hash_search(op->sessions, &key, HASH_ENTER, &found);

	if (!found)
	{
		sk->key = DatumGetByteaPCopy(PointerGetDatum(key));
		sk->live = NIL;
		sk->in_timers = false;
	}
	return sk;
}

static void
session_track(Operator *op, WindowEntry *e)
{
	SessionKey *sk = session_key(op, e->k.key);

	sk->live = lappend(sk->live, e);
}

static void load_slice(Operator *op, WindowEntry *e);
static void fire_sliced(Operator *op);

/* Sliced: the key with the earliest next window first, then by key. */
static int
key_timer_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const SessionKey *x = pairingheap_const_container(SessionKey, timer, a);
	const SessionKey *y = pairingheap_const_container(SessionKey, timer, b);

	if (x->next_end != y->next_end)
		return x->next_end < y->next_end ? 1 : -1;
	return -key_cmp(x->key, y->key);
}

static int64
gcd64(int64 a, int64 b)
{
	while (b != 0)
	{
		int64		t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Whether sliding windows can be computed from slices (below): fixed
 * lengths, aggregates that combine, and no allowed lateness, so that a
 * window fires once, when the watermark passes it, and is gone at once.
 * may_slice is false for pipelines whose stored state is per window.
 */
static bool
can_slice(const WindowSpec *spec, Aggregator *agg, int64 lateness, bool may_slice)
{
	const char *which;

	return may_slice && spec->kind == WK_HOP && !spec->calendar &&
		spec->size != spec->slide && lateness == 0 && agg_can_combine(agg, &which);
}

/* An operator whose entries, firings and late rows live in the current context. */
Operator *
op_create(const WindowSpec *spec, Aggregator *agg, int64 lateness, bool may_slice)
{
	Operator   *op = palloc0(sizeof(Operator));
	HASHCTL		ctl;

	op->cxt = CurrentMemoryContext;
	op->spec = spec;
	op->agg = agg;
	op->lateness = lateness;
	ctl.keysize = sizeof(WindowKey);
	ctl.entrysize = sizeof(WindowEntry);
	ctl.hash = window_hash;
	ctl.match = window_match;
	ctl.hcxt = CurrentMemoryContext;
	op->windows = hash_create("windowing windows", 1024, &ctl,
							  HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
	op->counting = spec->kind == WK_COUNT;
	op->sliced = can_slice(spec, agg, lateness, may_slice);
	if (op->sliced)
	{
		op->slice = gcd64(spec->size, spec->slide);
		op->key_timers = pairingheap_allocate(key_timer_cmp, NULL);
	}
	if (spec->kind == WK_SESSION || op->counting || op->sliced)
	{
		HASHCTL		sctl;

		sctl.keysize = sizeof(bytea *);
		sctl.entrysize = sizeof(SessionKey);
		sctl.hash = session_hash;
		sctl.match = session_match;
		sctl.hcxt = CurrentMemoryContext;
		op->sessions = hash_create("windowing sessions", 1024, &sctl,
								   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
	}
	op->fire_timers = pairingheap_allocate(fire_heap_cmp, op);
	op->cleanup_timers = pairingheap_allocate(cleanup_heap_cmp, op);
	op->scratch = palloc(sizeof(WmWindow) * spec->max_windows);
	agg_bind_context(agg, CurrentMemoryContext);
	return op;
}

static void
add_fire_timer(Operator *op, WindowEntry *e)
{
	pairingheap_add(op->fire_timers, &e->fire_node);
	e->in_fire_heap = true;
}

/*
 * The entry of a window, created (with fresh states and a cleanup timer) if
 * new.  A session window merged away earlier in the step comes back to life
 * if a later merge gives the same bounds.
 */
static WindowEntry *
entry_for(Operator *op, bytea *key, int64 start, int64 end, bool *created)
{
	WindowKey	k = {key, start, end};
	bool		found;
	WindowEntry *e = hash_search(op->windows, &k, HASH_ENTER, &found);

	*created = !found || e->gone;
	if (!found)
	{
		e->k.key = DatumGetByteaPCopy(PointerGetDatum(key));
		e->stored = false;
		e->states = palloc(sizeof(AggValue) * op->agg->naggs);
	}
	if (*created)
	{
		e->ref = palloc(sizeof(WindowRef));
		e->ref->k = e->k;
		e->ref->merged_away = false;
		e->fire_count = 0;
		e->dirty = false;
		e->gone = false;
		e->saved = NULL;
		e->in_fire_heap = false;
		e->in_cleanup_heap = !op->counting && !op->sliced;
		/* count panes and slices have no timers */
		if (e->in_cleanup_heap)
			pairingheap_add(op->cleanup_timers, &e->cleanup_node);
	}
	return e;
}

/* A window as stored by an earlier step. */
void
op_load(Operator *op, bytea *key, int64 start, int64 end, int fire_count,
		bytea *state)
{
	MemoryContext old = MemoryContextSwitchTo(op->cxt);
	bool		created;
	WindowEntry *e = entry_for(op, key, start, end, &created);

	e->fire_count = fire_count;
	e->stored = true;
	e->saved = DatumGetByteaPCopy(PointerGetDatum(state));
	agg_deserialize(op->agg, state, e->states);
	if (op->sliced)
		load_slice(op, e);
	else if (fire_count == 0 && !op->counting)
		add_fire_timer(op, e);
	if (op->sessions && !op->sliced)
		session_track(op, e);
	MemoryContextSwitchTo(old);
}

static void
fire(Operator *op, WindowEntry *e)
{
	Firing	   *f = palloc(sizeof(Firing));

	f->win = e->ref;
	f->fire_count = ++e->fire_count;
	f->is_final = wmk_window_expired(e->k.end - 1, op->lateness, op->wm.value);
	f->values = palloc(sizeof(Datum) * op->agg->naggs);
	f->nulls = palloc(sizeof(bool) * op->agg->naggs);
	agg_final(op->agg, e->states, f->values, f->nulls);
	/* the state changes on: keep the result of this firing */
	for (int i = 0; i < op->agg->naggs; i++)
		if (!f->nulls[i])
			f->values[i] = datumCopy(f->values[i], op->agg->aggs[i].resultbyval,
									 op->agg->aggs[i].resultlen);
	e->dirty = true;
	op->firings = lappend(op->firings, f);
	op->windows_fired++;
}

/*
 * A window leaves: its stored state is to be deleted, and its entry leaves
 * the table at the next op_compact, so that the table holds the live
 * windows only, however many a step goes through.
 */
static void
leave(Operator *op, WindowEntry *e)
{
	e->gone = true;
	if (e->stored)
		op->dropped = lappend(op->dropped, e->ref);
	op->leaving = lappend(op->leaving, e);
}

/* A window's end of life after it fired: its last result becomes final. */
static void
finalize(Operator *op, WindowEntry *e)
{
	Firing	   *f;

	leave(op, e);
	if (op->lateness == 0)
		return;					/* fired and cleaned at once: already final */
	f = palloc0(sizeof(Firing));
	f->win = e->ref;
	f->fire_count = e->fire_count;
	f->is_final = true;
	op->firings = lappend(op->firings, f);
}

/* Runs the timers the watermark has passed. */
static void
on_watermark(Operator *op)
{
	int64		w = op->wm.value;

	if (op->sliced)
	{
		fire_sliced(op);
		return;
	}
	while (!pairingheap_is_empty(op->fire_timers))
	{
		WindowEntry *e = pairingheap_container(WindowEntry, fire_node,
											   pairingheap_first(op->fire_timers));

		if (!wmk_window_fires(e->k.end - 1, w))
			break;
		pairingheap_remove_first(op->fire_timers);
		e->in_fire_heap = false;
		if (e->fire_count == 0 && !e->gone)
			fire(op, e);
	}
	while (!pairingheap_is_empty(op->cleanup_timers))
	{
		WindowEntry *e = pairingheap_container(WindowEntry, cleanup_node,
											   pairingheap_first(op->cleanup_timers));

		if (cleanup_time(op, e) > w)
			break;
		pairingheap_remove_first(op->cleanup_timers);
		e->in_cleanup_heap = false;
		finalize(op, e);
	}
}

static void
add_late(Operator *op, int64 seq, bool ts_null, int64 ts, const char *reason,
		 List *missed)
{
	LateRow    *l = palloc(sizeof(LateRow));

	l->seq = seq;
	l->ts_null = ts_null;
	l->ts = ts;
	l->watermark = op->wm.value;
	l->reason = reason;
	l->missed = missed;
	op->late = lappend(op->late, l);
}

/* Adds a row to its live windows; returns the windows it missed. */
static List *
add_to_windows(Operator *op, int n, bytea *key, Datum *args, bool *argnulls)
{
	List	   *missed = NIL;

	for (int i = 0; i < n; i++)
	{
		WmWindow   *w = &op->scratch[i];
		WindowEntry *e;
		bool		created;

		if (wmk_window_expired(w->end - 1, op->lateness, op->wm.value))
		{
			WmWindow   *copy = palloc(sizeof(WmWindow));

			*copy = *w;
			missed = lappend(missed, copy);
			continue;
		}
		e = entry_for(op, key, w->start, w->end, &created);
		if (created)
		{
			agg_init(op->agg, e->states);
			add_fire_timer(op, e);
		}
		agg_advance(op->agg, e->states, args, argnulls);
		e->dirty = true;
		/* Flink's EventTimeTrigger.onElement: late but alive fires now */
		if (wmk_window_fires(w->end - 1, op->wm.value))
			fire(op, e);
	}
	return missed;
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
	leave(op, e);
	if (e->fire_count > 0)
		op->superseded = lappend(op->superseded, e->ref);
}

/*
 * A session window that grows and has neither fired nor been stored takes
 * its new bounds in place: nothing outside the step has seen it, so there
 * is nothing to supersede and no states to combine.  That is every row of
 * a busy session after its first in a step.  False if it cannot (another
 * entry, gone, holds those bounds).
 */
static bool
regrow(Operator *op, WindowEntry *x, const WmWindow *w)
{
	WindowKey	k = {x->k.key, w->start, w->end};

	if (x->fire_count > 0 || x->stored ||
		(x->k.start == w->start && x->k.end == w->end))
		return false;
	Assert(x->in_fire_heap && x->in_cleanup_heap);
	pairingheap_remove(op->fire_timers, &x->fire_node);
	pairingheap_remove(op->cleanup_timers, &x->cleanup_node);
	if (hash_update_hash_key(op->windows, x, &k))
		x->ref->k = x->k;
	pairingheap_add(op->fire_timers, &x->fire_node);
	pairingheap_add(op->cleanup_timers, &x->cleanup_node);
	return x->k.start == w->start && x->k.end == w->end;
}

/* The common case, without lists: the row touches its key's one window. */
static WindowEntry *
grow_single(Operator *op, SessionKey *sk, const WmWindow *w)
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
 * key that it overlaps or touches, whose states it combines.  NULL if the
 * row is late (recorded).
 */
static WindowEntry *
merge_row(Operator *op, SessionKey *sk, int64 seq, int64 ts, bytea *key, WmWindow w)
{
	List	   *hits = NIL;
	List	   *live = NIL;
	WindowEntry *e;
	ListCell   *lc;
	bool		created = false;

	foreach(lc, sk->live)
	{
		WindowEntry *x = lfirst(lc);

		if (x->gone)
			continue;
		if (x->k.start <= w.end && x->k.end >= w.start)
			hits = lappend(hits, x);
		else
			live = lappend(live, x);
	}
	foreach(lc, hits)
	{
		WindowEntry *x = lfirst(lc);

		w.start = Min(w.start, x->k.start);
		w.end = Max(w.end, x->k.end);
	}
	if (hits == NIL && wmk_window_expired(w.end - 1, op->lateness, op->wm.value))
	{
		WmWindow   *copy = palloc(sizeof(WmWindow));

		*copy = w;
		sk->live = live;
		add_late(op, seq, false, ts, "late", list_make1(copy));
		return NULL;
	}
	if (list_length(hits) == 1 && regrow(op, linitial(hits), &w))
		e = linitial(hits);
	else
		e = entry_for(op, key, w.start, w.end, &created);
	if (created)
	{
		agg_init(op->agg, e->states);
		add_fire_timer(op, e);
	}
	foreach(lc, hits)
	{
		WindowEntry *x = lfirst(lc);

		if (x == e)
			continue;
		agg_combine(op->agg, e->states, x->states);
		supersede(op, x);
	}
	sk->live = lappend(live, e);
	return e;
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
	SessionKey *sk = session_key(op, key);
	WmWindow	w;
	WindowEntry *e;

	if (gap <= 0 || !sm_row_window(ts, gap, &w) ||
		(op->spec->is_timestamp &&
		 !(IS_VALID_TIMESTAMP(w.start) && IS_VALID_TIMESTAMP(w.end))))
	{
		add_late(op, seq, false, ts,
				 gap <= 0 ? "gap is null or not positive" : "event time out of range", NIL);
		return gap <= 0;
	}
	e = grow_single(op, sk, &w);
	if (e == NULL)
		e = merge_row(op, sk, seq, ts, key, w);
	if (e == NULL)
		return true;
	agg_advance(op->agg, e->states, args, argnulls);
	e->dirty = true;
	if (wmk_window_fires(e->k.end - 1, op->wm.value))
		fire(op, e);
	return true;
}

/*
 * Count windows (Flink's countWindow(size, slide)) are built from panes of
 * slide rows: pane p of a key holds its rows p * slide .. p * slide +
 * slide - 1, as the entry (key, p, p + 1) whose fire_count counts its rows.
 * Window k, fired when pane k - 1 fills, combines the last size / slide
 * panes and is named by row numbers: [first row, last row + 1), from 1.
 */
static WindowEntry *
newest_pane(SessionKey *sk)
{
	WindowEntry *newest = NULL;
	ListCell   *lc;

	foreach(lc, sk->live)
	{
		WindowEntry *e = lfirst(lc);

		if (newest == NULL || e->k.start > newest->k.start)
			newest = e;
	}
	return newest;
}

static int
pane_order(const ListCell *a, const ListCell *b)
{
	int64		x = ((WindowEntry *) lfirst(a))->k.start;
	int64		y = ((WindowEntry *) lfirst(b))->k.start;

	return (x > y) - (x < y);
}

/*
 * Fires the window ending with pane "last" (full or, at flush, not),
 * combining its panes in order, so that collected rows keep arrival order.
 */
/*
 * A window made of parts (count panes, slices) only to fire it: no table
 * entry, no timers, no stored state.
 */
static WindowEntry *
part_window(bytea *key, int64 start, int64 end)
{
	WindowEntry *w = palloc0(sizeof(WindowEntry));

	w->k.key = key;
	w->k.start = start;
	w->k.end = end;
	w->ref = palloc0(sizeof(WindowRef));
	w->ref->k = w->k;
	return w;
}

static void
fire_count_window(Operator *op, SessionKey *sk, WindowEntry *last)
{
	int64		panes = op->spec->rows / op->spec->rows_slide;
	int64		first = Max(last->k.start - panes + 1, 0);
	WindowEntry *w = part_window(last->k.key, first * op->spec->rows_slide + 1,
								 last->k.start * op->spec->rows_slide + last->fire_count + 1);
	ListCell   *lc;

	w->states = last->states;	/* one pane: the window is the pane */
	if (panes > 1)
	{
		w->states = palloc(sizeof(AggValue) * op->agg->naggs);
		agg_init(op->agg, w->states);
		list_sort(sk->live, pane_order);
		foreach(lc, sk->live)
		{
			WindowEntry *pane = lfirst(lc);

			if (pane->k.start >= first)
				agg_combine(op->agg, w->states, pane->states);
		}
	}
	fire(op, w);
	((Firing *) llast(op->firings))->is_final = true;
}

static void
count_row(Operator *op, bytea *key, Datum *args, bool *argnulls)
{
	SessionKey *sk = session_key(op, key);
	WindowEntry *pane = newest_pane(sk);
	int64		panes = op->spec->rows / op->spec->rows_slide;

	if (pane == NULL || pane->fire_count == op->spec->rows_slide)
	{
		int64		p = pane ? pane->k.start + 1 : 0;
		List	   *keep = NIL;
		ListCell   *lc;
		bool		created;

		/* panes the next windows no longer need leave */
		foreach(lc, sk->live)
		{
			WindowEntry *old = lfirst(lc);

			if (old->k.start > p - panes)
				keep = lappend(keep, old);
			else
				leave(op, old);
		}
		pane = entry_for(op, key, p, p + 1, &created);
		agg_init(op->agg, pane->states);
		sk->live = lappend(keep, pane);
	}
	agg_advance(op->agg, pane->states, args, argnulls);
	pane->fire_count++;
	pane->dirty = true;
	if (pane->fire_count == op->spec->rows_slide)
		fire_count_window(op, sk, pane);
}

/* End of input: each key's incomplete count window fires as it is. */
static void
flush_count_windows(Operator *op)
{
	HASH_SEQ_STATUS seq;
	SessionKey *sk;

	hash_seq_init(&seq, op->sessions);
	while ((sk = hash_seq_search(&seq)) != NULL)
	{
		WindowEntry *last = newest_pane(sk);

		if (last && last->fire_count > 0 && last->fire_count < op->spec->rows_slide)
			fire_count_window(op, sk, last);
	}
}

/*
 * Sliding windows from slices, as Flink's sliced window aggregation: a
 * row goes into one slice of gcd(size, slide), instead of into each of its
 * size / slide windows; a window is the combination of its slices, made
 * when it fires.  Each key waits in key_timers for its next window, the
 * earliest one holding a slice, so firing follows Flink's order (end, key)
 * and costs nothing for windows without rows.
 */

/* The ends of the first and the last window holding slice start ps. */
static void
slice_ends(const Operator *op, int64 ps, int64 *first, int64 *last)
{
	int64		s;

	if (!wm_align_start(ps, op->spec->slide, op->spec->phase, &s) ||
		pg_add_s64_overflow(s, op->spec->size, last))
		*last = PG_INT64_MAX;
	*first = *last - (*last - ps - 1) / op->spec->slide * op->spec->slide;
}

/* The key's next window ends at "end", unless an earlier one is due. */
static void
key_timer_at(Operator *op, SessionKey *sk, int64 end)
{
	if (sk->in_timers)
	{
		if (sk->next_end <= end)
			return;
		pairingheap_remove(op->key_timers, &sk->timer);
	}
	sk->next_end = end;
	pairingheap_add(op->key_timers, &sk->timer);
	sk->in_timers = true;
}

/* Keeps the key's slices in start order (rows arrive mostly in order). */
static void
slice_track(SessionKey *sk, WindowEntry *e)
{
	int			i = list_length(sk->live);

	while (i > 0 && ((WindowEntry *) list_nth(sk->live, i - 1))->k.start > e->k.start)
		i--;
	sk->live = list_insert_nth(sk->live, i, e);
}

/* A stored slice: its key waits for the first of its windows not fired. */
static void
load_slice(Operator *op, WindowEntry *e)
{
	SessionKey *sk = session_key(op, e->k.key);
	int64		first;
	int64		last;
	int64		w = op->wm.value;

	slice_track(sk, e);
	slice_ends(op, e->k.start, &first, &last);
	if (w != WMK_NONE && first - 1 <= w)
		first += ((w - (first - 1)) / op->spec->slide + 1) * op->spec->slide;
	if (first <= last)
		key_timer_at(op, sk, first);
}

static void
slice_row(Operator *op, int64 seq, int64 ts, int n, bytea *key,
		  Datum *args, bool *argnulls)
{
	WmWindow   *w = op->scratch;	/* latest start first */
	int			live = n;
	List	   *missed = NIL;
	SessionKey *sk;
	WindowEntry *slice;
	int64		start;
	bool		created;

	while (live > 0 && wmk_window_expired(w[live - 1].end - 1, 0, op->wm.value))
		live--;
	for (int i = live; i < n; i++)
	{
		WmWindow   *copy = palloc(sizeof(WmWindow));

		*copy = w[i];
		missed = lappend(missed, copy);
	}
	if (missed != NIL)
		add_late(op, seq, false, ts, live == 0 ? "late" : "late for some windows", missed);
	if (live == 0)
		return;
	start = w[0].start + (ts - w[0].start) / op->slice * op->slice;
	sk = session_key(op, key);
	slice = entry_for(op, key, start, start + op->slice, &created);
	if (created)
	{
		agg_init(op->agg, slice->states);
		slice_track(sk, slice);
	}
	agg_advance(op->agg, slice->states, args, argnulls);
	slice->dirty = true;
	key_timer_at(op, sk, w[live - 1].end);
}

/* The key's window ending at "end": the combination of its slices. */
static WindowEntry *
sliced_window(Operator *op, SessionKey *sk, int64 end, bool *has_rows)
{
	WindowEntry *w = part_window(sk->key, end - op->spec->size, end);
	ListCell   *lc;

	*has_rows = false;
	w->states = palloc(sizeof(AggValue) * op->agg->naggs);
	agg_init(op->agg, w->states);
	foreach(lc, sk->live)
	{
		WindowEntry *s = lfirst(lc);

		if (s->k.start >= end)
			break;
		if (s->k.start >= w->k.start)
		{
			agg_combine(op->agg, w->states, s->states);
			*has_rows = true;
		}
	}
	return w;
}

/*
 * After the window ending at "fired": slices no later window holds leave,
 * and the key waits for its next window holding a slice, if any.
 */
static void
next_slice_window(Operator *op, SessionKey *sk, int64 fired)
{
	List	   *keep = NIL;
	ListCell   *lc;
	int64		next;
	int64		first;
	int64		last;

	if (pg_add_s64_overflow(fired, op->spec->slide, &next))
		next = PG_INT64_MAX;
	foreach(lc, sk->live)
	{
		WindowEntry *s = lfirst(lc);

		slice_ends(op, s->k.start, &first, &last);
		if (last < next || fired == PG_INT64_MAX)
			leave(op, s);
		else
			keep = lappend(keep, s);
	}
	sk->live = keep;
	if (keep == NIL)
		return;
	slice_ends(op, ((WindowEntry *) linitial(keep))->k.start, &first, &last);
	key_timer_at(op, sk, Max(next, first));
}

static void
fire_sliced(Operator *op)
{
	bool		has_rows;

	while (!pairingheap_is_empty(op->key_timers))
	{
		SessionKey *sk = pairingheap_container(SessionKey, timer,
											   pairingheap_first(op->key_timers));
		int64		end = sk->next_end;

		if (!wmk_window_fires(end - 1, op->wm.value))
			break;
		pairingheap_remove_first(op->key_timers);
		sk->in_timers = false;
		fire(op, sliced_window(op, sk, end, &has_rows));
		next_slice_window(op, sk, end);
	}
}

/* One row, in arrival order. */
void
op_row(Operator *op, int64 seq, bool ts_null, int64 ts, int64 gap,
	   bytea *key, Datum *args, bool *argnulls)
{
	MemoryContext old = MemoryContextSwitchTo(op->cxt);
	int			n;
	List	   *missed;

	if (op->counting)
	{
		count_row(op, key, args, argnulls);
		MemoryContextSwitchTo(old);
		return;
	}
	if (op->spec->kind == WK_SESSION && !ts_null &&
		!(op->spec->is_timestamp && TIMESTAMP_NOT_FINITE(ts)))
	{
		if (session_row(op, seq, ts, gap, key, args, argnulls) &&
			wmk_observe(&op->wm, ts))
			on_watermark(op);
		MemoryContextSwitchTo(old);
		return;
	}
	n = (ts_null || (op->sessions && !op->sliced)) ? -1 : spec_windows(op->spec, ts, op->scratch);
	if (n < 0)
		add_late(op, seq, ts_null, ts,
				 ts_null ? "event time is null" : "event time out of range", NIL);
	else if (op->sliced)
	{
		slice_row(op, seq, ts, n, key, args, argnulls);
		if (wmk_observe(&op->wm, ts))
			on_watermark(op);
	}
	else
	{
		missed = add_to_windows(op, n, key, args, argnulls);
		if (missed != NIL)
			add_late(op, seq, false, ts,
					 list_length(missed) == n ? "late" : "late for some windows",
					 missed);
		if (wmk_observe(&op->wm, ts))
			on_watermark(op);
	}
	MemoryContextSwitchTo(old);
}

/* An explicit watermark, or the end of input (WMK_END). */
void
op_advance_watermark(Operator *op, int64 to)
{
	MemoryContext old = MemoryContextSwitchTo(op->cxt);

	if (wmk_advance(&op->wm, to))
		on_watermark(op);
	if (op->counting && to == WMK_END)
		flush_count_windows(op);
	MemoryContextSwitchTo(old);
}

/* The live windows of a key, without those gone since. */
static void
prune_live(SessionKey *sk)
{
	List	   *live = NIL;
	ListCell   *lc;

	foreach(lc, sk->live)
		if (!((WindowEntry *) lfirst(lc))->gone)
			live = lappend(live, lfirst(lc));
	sk->live = live;
}

/*
 * Takes the windows gone since the last call out of the table.  Called
 * between chunks of rows: a table of every window a long step went
 * through would make each lookup a walk through memory.
 */
void
op_compact(Operator *op)
{
	ListCell   *lc;

	if (op->leaving == NIL)
		return;
	if (op->sessions)
	{
		HASH_SEQ_STATUS seq;
		SessionKey *sk;

		hash_seq_init(&seq, op->sessions);
		while ((sk = hash_seq_search(&seq)) != NULL)
			prune_live(sk);
	}
	foreach(lc, op->leaving)
	{
		WindowEntry *e = lfirst(lc);

		/*
		 * A session window may have come back (then it is not gone), or left
		 * twice (then the second removal finds nothing).
		 */
		if (e->gone)
		{
			Assert(!e->in_fire_heap && !e->in_cleanup_heap);
			hash_search(op->windows, &e->k, HASH_REMOVE, NULL);
		}
	}
	op->leaving = NIL;
}

/* Sliced: each key's windows not fired yet, from its next one on. */
static void
open_sliced_windows(Operator *op, void (*fn) (WindowEntry *, void *), void *arg)
{
	HASH_SEQ_STATUS seq;
	SessionKey *sk;

	hash_seq_init(&seq, op->sessions);
	while ((sk = hash_seq_search(&seq)) != NULL)
	{
		WindowEntry *newest;
		int64		first;
		int64		last;

		if (!sk->in_timers)
			continue;
		newest = llast(sk->live);
		slice_ends(op, newest->k.start, &first, &last);
		for (int64 end = sk->next_end; end <= last; end += op->spec->slide)
		{
			bool		has_rows;
			WindowEntry *w = sliced_window(op, sk, end, &has_rows);

			if (has_rows)
				fn(w, arg);
		}
	}
}

/* Calls fn for each window that has rows and has not fired yet. */
void
op_open_windows(Operator *op, void (*fn) (WindowEntry *, void *), void *arg)
{
	HASH_SEQ_STATUS seq;
	WindowEntry *e;

	if (op->sliced)
	{
		open_sliced_windows(op, fn, arg);
		return;
	}
	hash_seq_init(&seq, op->windows);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (e->fire_count == 0 && !e->gone)
			fn(e, arg);
}

static void
put_bytes(StringInfo buf, const void *p, int len)
{
	appendBinaryStringInfo(buf, (const char *) &len, sizeof(len));
	appendBinaryStringInfo(buf, p, len);
}

/*
 * The live windows as one image for the shared-memory store: per window
 * the key, bounds, fire count and stored states.  Call after the states
 * were stored (emit_state), which leaves each live entry's "saved" current.
 */
char *
op_image(Operator *op, Size *size)
{
	StringInfoData buf;
	HASH_SEQ_STATUS seq;
	WindowEntry *e;

	initStringInfo(&buf);
	hash_seq_init(&seq, op->windows);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->gone)
			continue;
		Assert(e->saved != NULL);
		put_bytes(&buf, VARDATA_ANY(e->k.key), VARSIZE_ANY_EXHDR(e->k.key));
		appendBinaryStringInfo(&buf, (char *) &e->k.start, sizeof(int64));
		appendBinaryStringInfo(&buf, (char *) &e->k.end, sizeof(int64));
		appendBinaryStringInfo(&buf, (char *) &e->fire_count, sizeof(int));
		put_bytes(&buf, VARDATA_ANY(e->saved), VARSIZE_ANY_EXHDR(e->saved));
	}
	*size = buf.len;
	return buf.data;
}

/* A varlena copy of length-prefixed bytes at *p, advancing *p. */
static bytea *
get_bytes(const char **p)
{
	int			len;
	bytea	   *b;

	memcpy(&len, *p, sizeof(len));
	*p += sizeof(len);
	b = palloc(len + VARHDRSZ);
	SET_VARSIZE(b, len + VARHDRSZ);
	memcpy(VARDATA(b), *p, len);
	*p += len;
	return b;
}

/* Loads the windows of an image made by op_image. */
void
op_load_image(Operator *op, const char *image, Size size)
{
	const char *p = image;

	while (p < image + size)
	{
		bytea	   *key = get_bytes(&p);
		int64		start;
		int64		end;
		int			fire_count;

		memcpy(&start, p, sizeof(int64));
		memcpy(&end, p + sizeof(int64), sizeof(int64));
		memcpy(&fire_count, p + 2 * sizeof(int64), sizeof(int));
		p += 2 * sizeof(int64) + sizeof(int);
		op_load(op, key, start, end, fire_count, get_bytes(&p));
	}
}
