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
 */

/* Sliced: the key with the earliest next window first, then by key. */
static int
key_timer_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const KeyEntries *x = pairingheap_const_container(KeyEntries, timer, a);
	const KeyEntries *y = pairingheap_const_container(KeyEntries, timer, b);

	if (x->next_end != y->next_end)
		return x->next_end < y->next_end ? 1 : -1;
	return -op_key_cmp(x->key, y->key);
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
bool
can_slice(const WindowSpec *spec, Aggregator *agg, int64 lateness, bool may_slice)
{
	const char *which;

	return may_slice && spec->kind == WK_HOP && !spec->calendar &&
		spec->size != spec->slide && lateness == 0 && agg_can_combine(agg, &which);
}

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
key_timer_at(Operator *op, KeyEntries *sk, int64 end)
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
slice_track(KeyEntries *sk, WindowEntry *e)
{
	int			i = list_length(sk->live);

	while (i > 0 && ((WindowEntry *) list_nth(sk->live, i - 1))->k.start > e->k.start)
		i--;
	sk->live = list_insert_nth(sk->live, i, e);
}

/* A stored slice: its key waits for the first of its windows not fired. */
void
load_slice(Operator *op, WindowEntry *e)
{
	KeyEntries *sk = op_key_entries(op, e->k.key);
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

void
slice_row(Operator *op, int64 seq, int64 ts, int n, bytea *key,
		  Datum *args, bool *argnulls)
{
	WmWindow   *w = op->scratch;	/* latest start first */
	int			live = n;
	List	   *missed = NIL;
	KeyEntries *sk;
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
		op_add_late(op, seq, false, ts, live == 0 ? "late" : "late for some windows", missed);
	if (live == 0)
		return;
	start = w[0].start + (ts - w[0].start) / op->slice * op->slice;
	sk = op_key_entries(op, key);
	slice = op_entry(op, key, start, start + op->slice, &created);
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
sliced_window(Operator *op, KeyEntries *sk, int64 end, bool *has_rows)
{
	WindowEntry *w = op_part_window(sk->key, end - op->spec->size, end);
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
next_slice_window(Operator *op, KeyEntries *sk, int64 fired)
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
			op_leave(op, s);
		else
			keep = lappend(keep, s);
	}
	sk->live = keep;
	if (keep == NIL)
		return;
	slice_ends(op, ((WindowEntry *) linitial(keep))->k.start, &first, &last);
	key_timer_at(op, sk, Max(next, first));
}

void
fire_sliced(Operator *op)
{
	bool		has_rows;

	while (!pairingheap_is_empty(op->key_timers))
	{
		KeyEntries *sk = pairingheap_container(KeyEntries, timer,
											   pairingheap_first(op->key_timers));
		int64		end = sk->next_end;

		if (!wmk_window_fires(end - 1, op->wm.value))
			break;
		pairingheap_remove_first(op->key_timers);
		sk->in_timers = false;
		op_fire(op, sliced_window(op, sk, end, &has_rows));
		next_slice_window(op, sk, end);
	}
}

/* Sliced: each key's windows not fired yet, from its next one on. */
void
open_sliced_windows(Operator *op, void (*fn) (WindowEntry *, void *), void *arg)
{
	HASH_SEQ_STATUS seq;
	KeyEntries *sk;

	hash_seq_init(&seq, op->keyed);
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

/* A sliced operator's slice length and key timers. */
void
slices_init(Operator *op)
{
	op->slice = gcd64(op->spec->size, op->spec->slide);
	op->key_timers = pairingheap_allocate(key_timer_cmp, NULL);
}
