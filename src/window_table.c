/*
 * window_table.c
 *		The operator's windows: a table of entries by (key, start, end), the
 *		lists of a key's entries, the fire and cleanup timers, and what a
 *		step records for the caller to write: firings and late rows.
 *
 * Every kind of window keeps its entries here; what a kind's entries are
 * and when they fire is the kind's (operator_int.h) and the trigger's.
 */
#include "compat.h"

#include "common/hashfn.h"
#include "utils/datum.h"
#include "utils/timestamp.h"

#include "keys.h"
#include "operator.h"
#include "operator_int.h"

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

/* The caller's order of keys, which the order of firing follows. */
int
op_key_cmp(const Operator *op, const bytea *a, const bytea *b)
{
	return op->key_order.cmp(a, b, op->key_order.arg);
}

static int
window_match(const void *a, const void *b, Size keysize)
{
	const WindowKey *x = a;
	const WindowKey *y = b;

	return !(x->start == y->start && x->end == y->end && keys_equal(x->key, y->key));
}

#define SH_PREFIX wintab
#define SH_ELEMENT_TYPE WindowSlot
#define SH_KEY_TYPE WindowKey *
#define SH_KEY key
#define SH_HASH_KEY(tb, k) window_hash(k, sizeof(WindowKey))
#define SH_EQUAL(tb, a, b) (window_match(a, b, sizeof(WindowKey)) == 0)
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a) ((a)->hash)
#define SH_SCOPE extern
#define SH_DEFINE
#include "lib/simplehash.h"

/* A table of windows (entries led by their WindowKey) in the current context. */
HTAB *
op_window_table(const char *name, Size entrysize)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(WindowKey);
	ctl.entrysize = entrysize;
	ctl.hash = window_hash;
	ctl.match = window_match;
	ctl.hcxt = CurrentMemoryContext;
	return hash_create(name, 1024, &ctl,
					   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
}

/* Flink's firing order: window end, then key, then window start. */
static int
firing_order(const Operator *op, const WindowEntry *a, const WindowEntry *b)
{
	int			c;

	if (a->k.end != b->k.end)
		return a->k.end < b->k.end ? -1 : 1;
	/* thousands of windows may end together: most differ in the prefix */
	if (a->key_prefix != b->key_prefix)
		return a->key_prefix < b->key_prefix ? -1 : 1;
	c = op_key_cmp(op, a->k.key, b->k.key);
	if (c != 0)
		return c;
	return (a->k.start > b->k.start) - (a->k.start < b->k.start);
}

/*
 * The watermark at which a window fires on time: its last instant, or,
 * with fire_spread, that and its key's share of the spread, the same for
 * every window of the key (a hash of the key, in [0, spread)), so that
 * windows ending together are written over the spread of event time that
 * follows, not all in one step.
 */
static int64
fire_time(const Operator *op, const WindowEntry *e)
{
	if (op->spread == 0)
		return e->k.end - 1;
	return wmk_add(e->k.end - 1,
				   (int64) (hash_bytes((const unsigned char *) VARDATA_ANY(e->k.key),
									   VARSIZE_ANY_EXHDR(e->k.key)) % (uint64) op->spread));
}

/*
 * The order of the timer heaps: by time, then as windows fire.  pairingheap
 * keeps the largest on top: the earliest is the largest.
 */
static int
earliest_first(const Operator *op, const WindowEntry *x, int64 tx, const WindowEntry *y, int64 ty)
{
	if (tx != ty)
		return tx < ty ? 1 : -1;
	return -firing_order(op, x, y);
}

static int
fire_heap_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const WindowEntry *x = pairingheap_const_container(WindowEntry, fire_node, a);
	const WindowEntry *y = pairingheap_const_container(WindowEntry, fire_node, b);

	return earliest_first(arg, x, fire_time(arg, x), y, fire_time(arg, y));
}

/*
 * Is a window whose last instant is max_ts past the allowed lateness?  A
 * lateness raised by alter_pipeline does not bring back the windows
 * cleaned up before: a row for one would start it anew, and its result
 * would replace the full one.
 */
bool
op_expired(const Operator *op, int64 max_ts)
{
	return max_ts <= op->gone_until || wmk_window_expired(max_ts, op->lateness, op->wm.value);
}

/* Timers of the trigger's own: by time, then key and start as firings go. */
static int
trigger_heap_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const WindowEntry *x = pairingheap_const_container(WindowEntry, trigger_node, a);
	const WindowEntry *y = pairingheap_const_container(WindowEntry, trigger_node, b);

	return earliest_first(arg, x, x->trigger_time, y, y->trigger_time);
}

/* A window lives on until its lateness is over and it has fired on time. */
static int64
cleanup_time(const Operator *op, const WindowEntry *e)
{
	return Max(wmk_cleanup_time(e->k.end - 1, op->lateness), fire_time(op, e));
}

/*
 * Whether a window is cleaned up as soon as its timer fires it: without
 * allowed lateness, fire spread or a trigger of its own, its cleanup time
 * is its firing's.  Such a window waits in the cleanup heap only when it
 * has no fire timer (a window the watermark passed before it was loaded);
 * else a second heap of the same timers in the same order would cost each
 * firing about as much again.
 */
static bool
cleans_at_fire(const Operator *op)
{
	return op->lateness == 0 && op->spread == 0 && op->trigger == &trigger_event_time;
}

/* A timed window without a fire timer waits for its cleanup. */
void
op_keep_cleanup_timer(Operator *op, WindowEntry *e)
{
	if (op->kind->timed && !e->in_fire_heap && !e->in_cleanup_heap)
	{
		pairingheap_add(op->cleanup_timers, &e->cleanup_node);
		e->in_cleanup_heap = true;
	}
}

static int
cleanup_heap_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const WindowEntry *x = pairingheap_const_container(WindowEntry, cleanup_node, a);
	const WindowEntry *y = pairingheap_const_container(WindowEntry, cleanup_node, b);

	return earliest_first(arg, x, cleanup_time(arg, x), y, cleanup_time(arg, y));
}

/* The entries of a key, made on first use. */
KeyEntries *
op_key_entries(Operator *op, bytea *key)
{
	bool		found;
	KeyEntries *sk = hash_search(op->keyed, &key, HASH_ENTER, &found);

	if (!found)
	{
		sk->key = DatumGetByteaPCopy(PointerGetDatum(key));
		sk->live = NIL;
		sk->parts = NULL;
		sk->nparts = sk->maxparts = 0;
		sk->in_timers = false;
		sk->swag = NULL;
		sk->in_cleanups = false;
		sk->refired = 0;
		sk->unsorted = false;
	}
	return sk;
}

/* A stored session joins its key's list, maybe out of order. */
void
op_key_track(Operator *op, WindowEntry *e)
{
	KeyEntries *sk = op_key_entries(op, e->k.key);

	if (sk->live != NIL && e->k.start < ((WindowEntry *) llast(sk->live))->k.start)
		sk->unsorted = true;
	sk->live = lappend(sk->live, e);
}

static int
start_order(const ListCell *a, const ListCell *b)
{
	int64		x = ((WindowEntry *) lfirst(a))->k.start;
	int64		y = ((WindowEntry *) lfirst(b))->k.start;

	return (x > y) - (x < y);
}

/*
 * A key's live sessions, in start order.  Stored ones come back in no
 * order; the key's list is sorted at its first use, so that loading state
 * costs no walk over every key.
 */
List *
op_key_live(KeyEntries *sk)
{
	if (sk->unsorted)
	{
		list_sort(sk->live, start_order);
		sk->unsorted = false;
	}
	return sk->live;
}

/* Part e of its key goes in at place i of the key's parts. */
void
op_key_add_part(Operator *op, KeyEntries *sk, int i, WindowEntry *e)
{
	if (sk->nparts == sk->maxparts)
	{
		sk->maxparts = Max(8, sk->maxparts * 2);
		sk->parts = sk->parts == NULL ?
			MemoryContextAlloc(op->cxt, sizeof(KeyPart) * sk->maxparts) :
			repalloc(sk->parts, sizeof(KeyPart) * sk->maxparts);
	}
	memmove(&sk->parts[i + 1], &sk->parts[i], sizeof(KeyPart) * (sk->nparts - i));
	sk->parts[i].start = e->k.start;
	sk->parts[i].states = e->states;
	sk->parts[i].e = e;
	sk->nparts++;
}

/* The key's first n parts leave its array (which a new key has not yet). */
void
op_key_drop_parts(KeyEntries *sk, int n)
{
	if (n == 0)
		return;
	sk->nparts -= n;
	memmove(sk->parts, &sk->parts[n], sizeof(KeyPart) * sk->nparts);
}

/* A stored count pane joins its key's parts, maybe out of order. */
void
op_key_track_part(Operator *op, WindowEntry *e)
{
	KeyEntries *sk = op_key_entries(op, e->k.key);

	if (sk->nparts > 0 && e->k.start < sk->parts[sk->nparts - 1].start)
		sk->unsorted = true;
	op_key_add_part(op, sk, sk->nparts, e);
}

static int
part_order(const void *a, const void *b)
{
	int64		x = ((const KeyPart *) a)->start;
	int64		y = ((const KeyPart *) b)->start;

	return (x > y) - (x < y);
}

/* A key's parts in start order, sorted at their first use as sessions are. */
KeyPart *
op_key_parts(KeyEntries *sk)
{
	if (sk->unsorted)
	{
		qsort(sk->parts, sk->nparts, sizeof(KeyPart), part_order);
		sk->unsorted = false;
	}
	return sk->parts;
}

/* The first of the key's parts starting at or after "start". */
int
op_key_part_from(const KeyEntries *sk, int64 start)
{
	int			lo = 0;
	int			hi = sk->nparts;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (sk->parts[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The operator's table, timers and (for keyed kinds) key lists.  The table
 * starts small: a step walks it whole to save its windows, and a small
 * step touches few.
 */
void
op_init_table(Operator *op)
{
	op->windows = wintab_create(op->cxt, 64, NULL);
	op->fire_timers = pairingheap_allocate(fire_heap_cmp, op);
	op->cleanup_timers = pairingheap_allocate(cleanup_heap_cmp, op);
	op->trigger_timers = pairingheap_allocate(trigger_heap_cmp, op);
	if (op->kind->keyed)
		op->keyed = keys_table("windowing keys", sizeof(KeyEntries), op->cxt);
}

void
op_add_fire_timer(Operator *op, WindowEntry *e)
{
	pairingheap_add(op->fire_timers, &e->fire_node);
	e->in_fire_heap = true;
}

/* Whether a trigger time is a timer to wait for, not "none yet" or "no more". */
static bool
trigger_time_pending(int64 time)
{
	return time != WMK_NONE && time != WMK_END;
}

/*
 * The trigger's own timer of an entry moves to "time", WMK_NONE (not set
 * yet) or WMK_END (no more), where the window's stored state need not
 * follow (the trigger's stored_timer makes up for it).
 */
void
op_move_trigger_timer(Operator *op, WindowEntry *e, int64 time)
{
	if (e->in_trigger_heap)
		pairingheap_remove(op->trigger_timers, &e->trigger_node);
	e->trigger_time = time;
	e->in_trigger_heap = trigger_time_pending(time);
	if (e->in_trigger_heap)
		pairingheap_add(op->trigger_timers, &e->trigger_node);
}

/* The same, as part of the window's stored state. */
void
op_set_trigger_timer(Operator *op, WindowEntry *e, int64 time)
{
	op_move_trigger_timer(op, e, time);
	e->dirty = true;
}

/*
 * A new entry in one chunk: its states, its copy of the key, then the entry,
 * so that a row's lookup and update touch one stretch of memory, not three.
 * The chunk starts at the states.
 */
static WindowEntry *
new_entry(Operator *op, const WindowKey *k)
{
	Size		states = MAXALIGN(sizeof(AggValue) * op->agg->nstates);
	Size		len = VARSIZE_ANY_EXHDR(k->key);
	Size		keyspace = MAXALIGN(VARHDRSZ + len);
	char	   *chunk = palloc(states + keyspace + sizeof(WindowEntry));
	WindowEntry *e = (WindowEntry *) (chunk + states + keyspace);

	e->k = *k;
	e->states = (AggValue *) chunk;
	e->k.key = (bytea *) (chunk + states);
	SET_VARSIZE(e->k.key, VARHDRSZ + len);
	memcpy(VARDATA(e->k.key), VARDATA_ANY(k->key), len);
	e->key_prefix = op->key_order.prefix(e->k.key, op->key_order.arg);
	e->stored = false;
	e->logged = false;
	ItemPointerSetInvalid(&e->row);
	return e;
}

/*
 * The entry of a window, created (with fresh states and a cleanup timer) if
 * new.  A session window merged away earlier in the step comes back to life
 * if a later merge gives the same bounds.
 */
WindowEntry *
op_entry(Operator *op, bytea *key, int64 start, int64 end, bool *created)
{
	WindowKey	k = {key, start, end};
	bool		found;
	WindowSlot *slot = wintab_insert(op->windows, &k, &found);
	WindowEntry *e = found ? slot_entry(slot) : new_entry(op, &k);

	*created = !found || e->gone;
	if (!found)
		slot->key = &e->k;
	if (*created)
	{
		e->ref = palloc(sizeof(WindowRef));
		e->ref->k = e->k;
		e->ref->merged_away = false;
		e->fire_count = 0;
		e->dirty = false;
		e->gone = false;
		e->saved = NULL;
		e->stored_at = NULL;
		e->in_fire_heap = false;
		e->in_trigger_heap = false;
		e->trigger_time = WMK_NONE;
		e->trigger_rows = 0;
		e->trigger_primed = false;
		e->changed = false;
		e->in_cleanup_heap = op->kind->timed && !cleans_at_fire(op);
		if (e->in_cleanup_heap)
			pairingheap_add(op->cleanup_timers, &e->cleanup_node);
	}
	return e;
}

/* Gives an entry new bounds; false if another entry holds them. */
bool
op_rekey(Operator *op, WindowEntry *e, int64 start, int64 end)
{
	WindowKey	k = {e->k.key, start, end};
	bool		found;

	if (wintab_lookup(op->windows, &k) != NULL)
		return false;
	/* its place among the trigger's timers goes by its bounds too */
	if (e->in_trigger_heap)
		pairingheap_remove(op->trigger_timers, &e->trigger_node);
	wintab_delete(op->windows, &e->k);
	e->k.start = start;
	e->k.end = end;
	(void) wintab_insert(op->windows, &e->k, &found);
	Assert(!found);
	if (e->in_trigger_heap)
		pairingheap_add(op->trigger_timers, &e->trigger_node);
	return true;
}

/*
 * Whether a window's end of life is a row of its own: where every firing
 * is a row (append mode), and windows outlive their firing on time
 * (allowed lateness).  Then that row alone is final, not a firing that
 * happens to come when the window ends.
 */
static bool
op_final_rows(const Operator *op)
{
	return op->final_rows && op->lateness > 0;
}

/* A firing's results from a window's states, in the firing's memory. */
static void
firing_values(Operator *op, Firing *f, AggValue *states)
{
	Aggregator *a = op->agg;

	f->values = palloc(sizeof(Datum) * a->nout);
	f->nulls = palloc(sizeof(bool) * a->nout);
	agg_results(a, states, f->win->k.start, f->win->k.end, f->values, f->nulls);
	/* the state changes on: keep the result of this firing */
	for (int i = 0; i < a->nout; i++)
		if (!f->nulls[i])
			f->values[i] = datumCopy(f->values[i], a->outs[i].byval, a->outs[i].len);
}

/*
 * Window e fires: its results so far become a firing.  A purging trigger
 * fires only a window that had rows since it last fired, and clears it;
 * an evictor drops rows before or after (Flink's evictBefore, evictAfter).
 */
void
op_fire(Operator *op, WindowEntry *e, Pane pane)
{
	MemoryContext old;
	Firing	   *f;

	if (op->purging && !e->changed)
		return;
	old = MemoryContextSwitchTo(op->firing_cxt);
	f = palloc(sizeof(Firing));
	f->win = e->ref;
	f->fire_count = ++e->fire_count;
	f->pane = pane;
	e->changed = false;
	/*
	 * Rows count from the last firing, whatever fired it (alter_pipeline);
	 * the field holds a delta trigger's input instead once one is primed.
	 */
	if (!e->trigger_primed)
		e->trigger_rows = 0;
	/* an early firing has the window's firing on time still to come */
	if (op->kind->final_when_fired)
	{
		f->is_final = true;
		f->may_fire_again = false;
	}
	else
	{
		bool		expired = wmk_window_expired(e->k.end - 1, op->lateness, op->wm.value);

		f->is_final = pane != PANE_EARLY && !op_final_rows(op) && expired;
		f->may_fire_again = !expired;
	}
	op->firings_may_refire += f->may_fire_again;
	f->first = op->kind->fresh_windows && f->fire_count == 1;
	agg_evict(op->agg, e->states, false);
	firing_values(op, f, e->states);
	if (op->purging)
	{
		/* where the window's states live */
		MemoryContextSwitchTo(op->cxt);
		agg_init(op->agg, e->states);
	}
	else
		agg_evict(op->agg, e->states, true);
	e->dirty = true;
	op->firings = lappend(op->firings, f);
	op->windows_fired++;
	MemoryContextSwitchTo(old);
}

/*
 * A window leaves: its stored state is to be deleted, and its entry leaves
 * the table at the next op_compact, so that the table holds the live
 * windows only, however many a step goes through.
 */
void
op_leave(Operator *op, WindowEntry *e)
{
	if (op->kind->leave != NULL)
		op->kind->leave(op, e);
	if (e->in_trigger_heap)
		pairingheap_remove(op->trigger_timers, &e->trigger_node);
	e->in_trigger_heap = false;
	e->gone = true;
	op->windows_left++;
	if (e->stored && !e->logged && op->delete_left)
		op->deleting = lappend(op->deleting, e);
	else if (e->stored || e->logged)
	{
		e->ref->stored = e->stored;
		e->ref->row = e->row;
		op->dropped = lappend(op->dropped, e->ref);
	}
	op->leaving = lappend(op->leaving, e);
}

/*
 * A window that fired reaches the end of its life (its last firing's
 * count is fire_count): its last result becomes final.  Where the caller
 * keeps every firing as a row (final_rows), that is a row of its own with
 * the result of "states"; otherwise the firing has no results, and says
 * only that the window's row is final.
 */
void
op_final(Operator *op, WindowRef *ref, int fire_count, AggValue *states)
{
	MemoryContext old = MemoryContextSwitchTo(op->firing_cxt);
	Firing	   *f = palloc0(sizeof(Firing));

	f->win = ref;
	f->fire_count = fire_count;
	f->pane = PANE_FINAL;
	f->is_final = true;
	if (op_final_rows(op))
		firing_values(op, f, states);
	op->firings = lappend(op->firings, f);
	MemoryContextSwitchTo(old);
}

/* A window's end of life after it fired. */
static void
finalize(Operator *op, WindowEntry *e)
{
	op_leave(op, e);
	if (op->lateness > 0)		/* else fired and cleaned at once: already final */
		op_final(op, e->ref, e->fire_count, e->states);
}

/*
 * The entry with the first timer the watermark passed, or NULL: its last
 * instant (*early false) or the trigger's own timer (*early true), in
 * Flink's order of timers, by time, then in the order windows fire.
 */
static WindowEntry *
next_timer(Operator *op, bool *early)
{
	int64		w = op->wm.value;
	WindowEntry *f = NULL;
	WindowEntry *t = NULL;

	if (!pairingheap_is_empty(op->fire_timers))
		f = pairingheap_container(WindowEntry, fire_node, pairingheap_first(op->fire_timers));
	if (f != NULL && !wmk_window_fires(fire_time(op, f), w))
		f = NULL;
	/* a trigger's own timers on the clock wait for it, not the watermark */
	if (!trigger_on_clock(op->trigger) && !pairingheap_is_empty(op->trigger_timers))
		t = pairingheap_container(WindowEntry, trigger_node, pairingheap_first(op->trigger_timers));
	if (t != NULL && t->trigger_time > w)
		t = NULL;
	*early = t != NULL &&
		(f == NULL || t->trigger_time < fire_time(op, f) ||
		 (t->trigger_time == fire_time(op, f) && firing_order(op, t, f) < 0));
	return *early ? t : f;
}

/*
 * The timers the watermark passed, where the trigger says whether their
 * windows fire, then the windows past their cleanup time, which end.
 */
void
op_run_timers(Operator *op)
{
	WindowEntry *e;
	bool		early;

	while ((e = next_timer(op, &early)) != NULL)
	{
		WmWindow	win = {e->k.start, e->k.end};
		int64		time = early ? e->trigger_time : e->k.end - 1;

		if (early)
			pairingheap_remove_first(op->trigger_timers);
		else
			pairingheap_remove_first(op->fire_timers);
		e->in_trigger_heap &= !early;
		e->in_fire_heap &= early;
		if (!e->gone && op->trigger->on_event_time(op, e, &win, time) == TRIGGER_FIRE)
			op_fire(op, e, early ? PANE_EARLY : PANE_ON_TIME);
		if (!early && !e->gone && op->kind->timed && !e->in_cleanup_heap)
			finalize(op, e);
	}
	while (!pairingheap_is_empty(op->cleanup_timers))
	{
		e = pairingheap_container(WindowEntry, cleanup_node,
								  pairingheap_first(op->cleanup_timers));
		if (cleanup_time(op, e) > op->wm.value)
			break;
		pairingheap_remove_first(op->cleanup_timers);
		e->in_cleanup_heap = false;
		finalize(op, e);
	}
}

/*
 * The clock of the step is "now": the trigger's own timers on the clock
 * that it passed run, in order of time, then in the order windows fire.
 * Returns whether any did.
 */
bool
op_run_clock(Operator *op, int64 now)
{
	bool		ran = false;

	op->clock = now;
	if (!trigger_on_clock(op->trigger))
		return false;
	while (!pairingheap_is_empty(op->trigger_timers))
	{
		WindowEntry *e = pairingheap_container(WindowEntry, trigger_node,
											   pairingheap_first(op->trigger_timers));
		WmWindow	win = {e->k.start, e->k.end};
		int64		time = e->trigger_time;

		if (time > now)
			break;
		ran = true;
		op_set_trigger_timer(op, e, WMK_NONE);
		if (op->trigger->on_processing_time(op, e, &win, time) == TRIGGER_FIRE)
			op_fire(op, e, PANE_EARLY);
	}
	return ran;
}

/*
 * The rows in window_state of the windows that left in a batch of due
 * windows (op->deleting), whose newest state they were, are deleted there
 * and then: the step need not remember those windows until it ends.  A
 * window that came back since (a session) is then new to the heap.
 */
static void
delete_departed(Operator *op)
{
	ListCell   *lc;

	if (op->deleting == NIL)
		return;
	op->delete_rows(op, op->deleting);
	foreach(lc, op->deleting)
		((WindowEntry *) lfirst(lc))->stored = false;
	list_free(op->deleting);
	op->deleting = NIL;
}

/*
 * The watermark moved on from "before": the windows kept outside whose
 * timers it reached come in, as they were under the old watermark, and
 * what it passed runs.  They come in batches, each run before the next
 * comes in, so that a watermark that reaches the timers of millions of
 * windows at once (a daily window's end, flush()) holds a batch of them.
 * Windows of different batches fire out of their timers' order, which no
 * result depends on: a window's firings and cleanup are its own.
 */
void
op_watermark_moved(Operator *op, int64 before)
{
	int64		now = op->wm.value;
	bool		more;

	do
	{
		more = false;
		if (op->fetch_due != NULL)
		{
			op->wm.value = before;
			more = op->fetch_due(op, now);
			op->wm.value = now;
		}
		/*
		 * Where more batches follow, the rows of the windows that leave go
		 * with the batch; else, one at a time among random keys, they cost
		 * less in the fold's sorted pass.
		 */
		op->delete_left = more && op->delete_rows != NULL;
		op->kind->on_watermark(op);
		op->delete_left = false;
		delete_departed(op);
		if (more && op->due_batch_done != NULL)
			op->due_batch_done(op, op->due_batch_arg);
	} while (more);
}

/* A row's time counts for the watermark; what it passes runs. */
void
op_observe(Operator *op, int64 ts)
{
	int64		before = op->wm.value;

	if (wmk_observe(&op->wm, ts))
		op_watermark_moved(op, before);
}

/*
 * The earliest watermark at which a timer of an entry runs (its firing,
 * its cleanup or its trigger's own), WMK_END if none: where it has to be
 * back in the table, if it was kept outside.
 */
int64
op_due(Operator *op, const WindowEntry *e)
{
	int64		due = WMK_END;

	if (op->kind->due != NULL)
		return op->kind->due(op, e);
	if (e->in_fire_heap)
		due = fire_time(op, e);
	if (e->in_cleanup_heap)
		due = Min(due, cleanup_time(op, e));
	if (e->in_trigger_heap && !trigger_on_clock(op->trigger))
		due = Min(due, e->trigger_time);
	return due;
}

/*
 * A row at ts joins entry e: its states take it in, and the trigger may
 * fire the window now: early (a trigger counting rows), or late, when the
 * watermark passed it already (which stands for the on-time firing if that
 * had not come yet).
 */
void
op_add_row(Operator *op, WindowEntry *e, int64 ts, Datum *args, bool *argnulls)
{
	WmWindow	w = {e->k.start, e->k.end};

	/*
	 * A firing on time that the spread holds back comes before the row, as
	 * it would have without the spread (a window that had no rows, one
	 * neither changed in this step nor kept by an earlier one, has none:
	 * the row's late firing stands for it).
	 */
	if (op->spread > 0 && e->in_fire_heap && op_reached(op, e) &&
		(e->stored || e->logged || e->dirty))
	{
		pairingheap_remove(op->fire_timers, &e->fire_node);
		e->in_fire_heap = false;
		op_keep_cleanup_timer(op, e);
		op_fire(op, e, PANE_ON_TIME);
	}
	agg_advance(op->agg, e->states, args, argnulls);
	e->dirty = true;
	e->changed = true;
	if (op->trigger->on_element(op, e, &w, ts) != TRIGGER_FIRE)
		return;
	if (!op_reached(op, e))
	{
		op_fire(op, e, PANE_EARLY);
		return;
	}
	if (e->in_fire_heap)
		pairingheap_remove(op->fire_timers, &e->fire_node);
	e->in_fire_heap = false;
	op_keep_cleanup_timer(op, e);
	op_fire(op, e, PANE_LATE);
}

/*
 * A window a row missed, added to the list for its late row: in the late
 * rows' memory, freed with them once written.
 */
List *
op_missed(Operator *op, List *missed, const WmWindow *w)
{
	MemoryContext old = MemoryContextSwitchTo(op->late_cxt);
	WmWindow   *copy = palloc(sizeof(WmWindow));

	*copy = *w;
	missed = lappend(missed, copy);
	MemoryContextSwitchTo(old);
	return missed;
}

/*
 * A late row, in the late rows' memory whatever the caller's ("missed" is
 * made by op_missed).
 */
void
op_add_late(Operator *op, int64 seq, bool ts_null, int64 ts, const char *reason,
		 List *missed)
{
	MemoryContext old = MemoryContextSwitchTo(op->late_cxt);
	LateRow    *l = palloc(sizeof(LateRow));

	l->seq = seq;
	l->ts_null = ts_null;
	l->ts = ts;
	l->watermark = op->wm.value;
	l->reason = reason;
	l->missed = missed;
	l->error = NULL;
	op->late = lappend(op->late, l);
	MemoryContextSwitchTo(old);
}

/* A row whose time assigns it to no window of time. */
void
op_bad_time(Operator *op, int64 seq, bool ts_null, int64 ts)
{
	op_add_late(op, seq, ts_null, ts,
				ts_null ? "event time is null" : "event time out of range", NIL);
}

/*
 * A row in no window (between hopping windows when size < slide).  Flink's
 * WindowOperator.processElement leaves such a row skipped, and side-outputs
 * a skipped row as late exactly when isElementLate holds: its timestamp plus
 * the allowed lateness is at or behind the watermark.  One on time belongs
 * to no window and leaves no trace, as there.
 */
void
op_no_window(Operator *op, int64 seq, int64 ts)
{
	if (op_expired(op, ts))
		op_add_late(op, seq, false, ts, "between windows", NIL);
}

/* The identity of a window made of parts, for its firings. */
WindowRef *
op_part_ref(Operator *op, bytea *key, int64 start, int64 end)
{
	WindowRef  *ref = MemoryContextAllocZero(op->firing_cxt, sizeof(WindowRef));

	ref->k.key = key;
	ref->k.start = start;
	ref->k.end = end;
	return ref;
}

/*
 * A window made of parts (count panes, slices) only to fire it: no table
 * entry, no timers, no stored state.  Its firing keeps its identity and
 * results, not the entry, so one entry serves every such window in turn
 * (a window fires from it before the next is made).
 */
WindowEntry *
op_part_window(Operator *op, bytea *key, int64 start, int64 end)
{
	Size		entry = MAXALIGN(sizeof(WindowEntry));
	WindowEntry *w = op->part_window;

	if (w == NULL)
		w = op->part_window = MemoryContextAlloc(op->cxt, entry +
												 sizeof(AggValue) * op->agg->nstates);
	memset(w, 0, sizeof(WindowEntry));
	/* its own states, which a caller may have pointed elsewhere */
	w->states = (AggValue *) ((char *) w + entry);
	w->ref = op_part_ref(op, key, start, end);
	w->k = w->ref->k;
	return w;
}

/*
 * Whether nothing but the table and op->dropped refers to a gone entry:
 * it was not merged away (op->superseded), and its firings, if any, are
 * written (their WindowRef is the entry's).  op->dropped holds the
 * WindowRef of one that was stored or logged.
 */
static bool
settled(const Operator *op, const WindowEntry *e)
{
	return !e->ref->merged_away && (e->fire_count == 0 || op->firings == NIL);
}

/*
 * Takes the windows gone since the last call out of the table, and frees
 * those nothing else refers to; of those op->dropped lists, all but their
 * WindowRef and a copy of their key.  Called between chunks of rows and
 * between batches of windows that come in as the watermark reaches them:
 * a table of every window a long step went through would make each lookup
 * a walk through memory, and keeping them all would make a step's memory
 * grow with its rows and its firings.
 */
void
op_compact(Operator *op)
{
	List	   *spent = NIL;
	List	   *dropped = NIL;
	ListCell   *lc;

	/* slices, panes and sessions left their key's list as they went */
	if (op->leaving == NIL)
		return;
	foreach(lc, op->leaving)
	{
		WindowEntry *e = lfirst(lc);
		WindowSlot *slot;

		/*
		 * A session window may have come back (then it is not gone), or left
		 * twice (then the second removal finds nothing).
		 */
		if (!e->gone || (slot = wintab_lookup(op->windows, &e->k)) == NULL)
			continue;
		Assert(!e->in_fire_heap && !e->in_cleanup_heap && slot_entry(slot) == e);
		wintab_delete_item(op->windows, slot);
		if (!settled(op, e))
			continue;
		if (e->stored || e->logged)
			dropped = lappend(dropped, e);
		else
			spent = lappend(spent, e);
	}
	list_free(op->leaving);
	op->leaving = NIL;
	/* freed last: an entry may be twice in the list */
	foreach(lc, dropped)
	{
		WindowEntry *e = lfirst(lc);
		bytea	   *key = MemoryContextAlloc(GetMemoryChunkContext(e->ref),
											 VARSIZE(e->k.key));

		memcpy(key, e->k.key, VARSIZE(e->k.key));
		e->ref->k.key = key;
		pfree(e->states);		/* the entry's chunk */
	}
	foreach(lc, spent)
	{
		WindowEntry *e = lfirst(lc);

		pfree(e->ref);
		pfree(e->states);
	}
	list_free(dropped);
	list_free(spent);
}

/* The next window of a walk begun by wintab_start_iterate, or NULL. */
WindowEntry *
op_next_window(Operator *op, wintab_iterator *it)
{
	WindowSlot *slot = wintab_iterate(op->windows, it);

	return slot ? slot_entry(slot) : NULL;
}

/*
 * Whether the watermark has reached a window's last instant: then it fired
 * on time, or late (at once, for a row that came after).  Before, it may
 * have fired early only.
 */
bool
op_reached(const Operator *op, const WindowEntry *e)
{
	return wmk_window_fires(e->k.end - 1, op->wm.value);
}

/* The entries that have rows and have not fired on time yet. */
void
op_open_entries(Operator *op, void (*fn) (WindowEntry *, void *), void *arg)
{
	wintab_iterator it;
	WindowEntry *e;

	wintab_start_iterate(op->windows, &it);
	while ((e = op_next_window(op, &it)) != NULL)
		if (!op_reached(op, e) && !e->gone)
			fn(e, arg);
}
