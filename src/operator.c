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
 * Session windows (sessions.c), count windows (count_windows.c) and sliding
 * windows kept as slices (slices.c) have files of their own.
 */
#include "compat.h"

#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

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
	return op->key_order(a, b, op->key_order_arg);
}

static bool
keys_equal(const bytea *a, const bytea *b)
{
	return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
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
	c = op_key_cmp(op, a->k.key, b->k.key);
	if (c != 0)
		return c;
	return (a->k.start > b->k.start) - (a->k.start < b->k.start);
}

/* pairingheap keeps the largest on top: invert for earliest first. */
static int
fire_heap_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	return -firing_order(arg, pairingheap_const_container(WindowEntry, fire_node, a),
						 pairingheap_const_container(WindowEntry, fire_node, b));
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
	return -firing_order(op, x, y);
}

static uint32
key_hash(const void *key, Size keysize)
{
	const bytea *k = *(bytea *const *) key;

	return hash_bytes((const unsigned char *) VARDATA_ANY(k), VARSIZE_ANY_EXHDR(k));
}

static int
key_match(const void *a, const void *b, Size keysize)
{
	return !keys_equal(*(bytea *const *) a, *(bytea *const *) b);
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
		sk->in_timers = false;
		sk->swag = NULL;
		sk->in_cleanups = false;
		sk->refired = 0;
		sk->unsorted = false;
	}
	return sk;
}

/* A stored session or count pane joins its key's list, maybe out of order. */
static void
key_track(Operator *op, WindowEntry *e)
{
	KeyEntries *sk = op_key_entries(op, e->k.key);

	if (sk->live == NIL || e->k.start > sk->newest)
		sk->newest = e->k.start;
	else
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
 * A key's live sessions or count panes, in start order.  Stored ones come
 * back in no order; the key's list is sorted at its first use, so that
 * loading state costs no walk over every key.
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

/* An operator whose entries, firings and late rows live in the current context. */
Operator *
op_create(const WindowSpec *spec, Aggregator *agg, int64 lateness, bool may_slice,
		  KeyOrder key_order, const void *key_order_arg)
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
	op->key_order = key_order;
	op->key_order_arg = key_order_arg;
	op->windows = wintab_create(CurrentMemoryContext, 1024, NULL);
	op->counting = spec->kind == WK_COUNT;
	if (op->counting)
		op->slice = wm_gcd(spec->rows, spec->rows_slide);
	op->sliced = can_slice(spec, agg, may_slice);
	if (op->sliced)
		slices_init(op);
	if (spec->kind == WK_SESSION || op->counting || op->sliced)
	{
		HASHCTL		sctl;

		sctl.keysize = sizeof(bytea *);
		sctl.entrysize = sizeof(KeyEntries);
		sctl.hash = key_hash;
		sctl.match = key_match;
		sctl.hcxt = CurrentMemoryContext;
		op->keyed = hash_create("windowing keys", 1024, &sctl,
								   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
	}
	op->fire_timers = pairingheap_allocate(fire_heap_cmp, op);
	op->cleanup_timers = pairingheap_allocate(cleanup_heap_cmp, op);
	/* keyed operators keep their rows' windows in their own way */
	if (!op->keyed)
		op->scratch = palloc(sizeof(WmWindow) * spec->max_windows);
	agg_bind_context(agg, CurrentMemoryContext);
	return op;
}

void
op_add_fire_timer(Operator *op, WindowEntry *e)
{
	pairingheap_add(op->fire_timers, &e->fire_node);
	e->in_fire_heap = true;
}

/*
 * A new entry in one chunk: its states, its copy of the key, then the entry,
 * so that a row's lookup and update touch one stretch of memory, not three.
 * The chunk starts at the states.
 */
static WindowEntry *
new_entry(Operator *op, const WindowKey *k)
{
	Size		states = MAXALIGN(sizeof(AggValue) * op->agg->naggs);
	Size		len = VARSIZE_ANY_EXHDR(k->key);
	Size		keyspace = MAXALIGN(VARHDRSZ + len);
	char	   *chunk = palloc(states + keyspace + sizeof(WindowEntry));
	WindowEntry *e = (WindowEntry *) (chunk + states + keyspace);

	e->k = *k;
	e->states = (AggValue *) chunk;
	e->k.key = (bytea *) (chunk + states);
	SET_VARSIZE(e->k.key, VARHDRSZ + len);
	memcpy(VARDATA(e->k.key), VARDATA_ANY(k->key), len);
	e->stored = false;
	e->logged = false;
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
		e->in_fire_heap = false;
		e->in_cleanup_heap = !op->counting && !op->sliced;
		/* count panes and slices have no timers */
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
	wintab_delete(op->windows, &e->k);
	e->k.start = start;
	e->k.end = end;
	(void) wintab_insert(op->windows, &e->k, &found);
	Assert(!found);
	return true;
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
	agg_deserialize(op->agg, state, e->states);
	if (op->sliced)
		load_slice(op, e);
	else if (fire_count == 0 && !op->counting)
		op_add_fire_timer(op, e);
	if (op->keyed && !op->sliced)
		key_track(op, e);
	MemoryContextSwitchTo(old);
	return e;
}

void
op_fire(Operator *op, WindowEntry *e)
{
	MemoryContext old = MemoryContextSwitchTo(op->firing_cxt);
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
	MemoryContextSwitchTo(old);
}

/*
 * The firings are written: their memory goes, and with it the windows made
 * only to fire (op_part_window).  A step that may writes them chunk by
 * chunk (emit_firings_as_fired), so that a long step's memory does not grow
 * with the windows it fires.
 */
void
op_forget_firings(Operator *op)
{
	op->firings = NIL;
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
 * A window leaves: its stored state is to be deleted, and its entry leaves
 * the table at the next op_compact, so that the table holds the live
 * windows only, however many a step goes through.
 */
void
op_leave(Operator *op, WindowEntry *e)
{
	if (op->spec->kind == WK_SESSION)
		session_forget(op, e);
	e->gone = true;
	if (e->stored || e->logged)
	{
		e->ref->stored = e->stored;
		op->dropped = lappend(op->dropped, e->ref);
	}
	op->leaving = lappend(op->leaving, e);
}

/* A firing without results: the window's last result becomes final. */
void
op_final(Operator *op, WindowRef *ref, int fire_count)
{
	MemoryContext old = MemoryContextSwitchTo(op->firing_cxt);
	Firing	   *f = palloc0(sizeof(Firing));

	f->win = ref;
	f->fire_count = fire_count;
	f->is_final = true;
	op->firings = lappend(op->firings, f);
	MemoryContextSwitchTo(old);
}

/* A window's end of life after it fired. */
static void
finalize(Operator *op, WindowEntry *e)
{
	op_leave(op, e);
	if (op->lateness > 0)		/* else fired and cleaned at once: already final */
		op_final(op, e->ref, e->fire_count);
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
			op_fire(op, e);
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
		agg_advance(op->agg, e->states, args, argnulls);
		e->dirty = true;
		/* Flink's EventTimeTrigger.onElement: late but alive fires now */
		if (wmk_window_fires(w->end - 1, op->wm.value))
			op_fire(op, e);
	}
	return missed;
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
 * entry, no timers, no stored state.
 */
WindowEntry *
op_part_window(Operator *op, bytea *key, int64 start, int64 end)
{
	WindowEntry *w = MemoryContextAllocZero(op->firing_cxt, sizeof(WindowEntry));

	w->ref = op_part_ref(op, key, start, end);
	w->k = w->ref->k;
	w->states = MemoryContextAlloc(op->firing_cxt, sizeof(AggValue) * op->agg->naggs);
	return w;
}

/*
 * A row in no window (between hopping windows when size < slide).  Flink's
 * WindowOperator.processElement leaves such a row skipped, and side-outputs
 * a skipped row as late exactly when isElementLate holds: its timestamp plus
 * the allowed lateness is at or behind the watermark.  One on time belongs
 * to no window and leaves no trace, as there.
 */
static void
between_windows(Operator *op, int64 seq, int64 ts)
{
	if (op_expired(op, ts))
		op_add_late(op, seq, false, ts, "between windows", NIL);
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

/* A row of time windows other than sessions. */
static void
time_row(Operator *op, int64 seq, bool ts_null, int64 ts,
		 bytea *key, Datum *args, bool *argnulls)
{
	const AssignedSlice *assigned = NULL;
	int			n;
	List	   *missed;

	if (ts_null || (op->keyed && !op->sliced))
		n = -1;
	else if (op->sliced)
	{
		assigned = slice_windows(op, ts);
		n = assigned->n;
	}
	else
		n = spec_windows(op->spec, ts, op->scratch);
	if (n == 0)
		between_windows(op, seq, ts);
	if (n < 0)
		op_add_late(op, seq, ts_null, ts,
					ts_null ? "event time is null" : "event time out of range", NIL);
	else if (op->sliced)
	{
		slice_row(op, seq, ts, assigned, key, args, argnulls);
		if (wmk_observe(&op->wm, ts))
			on_watermark(op);
	}
	else
	{
		missed = add_to_windows(op, n, key, args, argnulls);
		if (missed != NIL)
			op_add_late(op, seq, false, ts,
						list_length(missed) == n ? "late" : "late for some windows",
						missed);
		if (wmk_observe(&op->wm, ts))
			on_watermark(op);
	}
}

/* One row, in arrival order. */
void
op_row(Operator *op, int64 seq, bool ts_null, int64 ts, int64 gap,
	   bytea *key, Datum *args, bool *argnulls)
{
	MemoryContext old = MemoryContextSwitchTo(op->cxt);

	if (VARSIZE_ANY(key) > KEY_MAX_BYTES)
		op_add_late(op, seq, ts_null, ts, "key too large", NIL);
	else if (op->counting)
		count_row(op, key, args, argnulls);
	else if (op->spec->kind == WK_SESSION && !ts_null &&
			 !(op->spec->is_timestamp && TIMESTAMP_NOT_FINITE(ts)))
	{
		if (session_row(op, seq, ts, gap, key, args, argnulls) &&
			wmk_observe(&op->wm, ts))
			on_watermark(op);
	}
	else
		time_row(op, seq, ts_null, ts, key, args, argnulls);
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

/*
 * Whether nothing but the table refers to a gone entry: it was never
 * stored or logged (op->dropped), nor merged away (op->superseded), and
 * its firings, if any, are written (their WindowRef is the entry's).
 */
static bool
unreferenced(const Operator *op, const WindowEntry *e)
{
	return !e->stored && !e->logged && !e->ref->merged_away &&
		(e->fire_count == 0 || op->firings == NIL);
}

/*
 * Takes the windows gone since the last call out of the table, and frees
 * those nothing else refers to.  Called between chunks of rows: a table of
 * every window a long step went through would make each lookup a walk
 * through memory, and keeping them all would make a step's memory grow
 * with its rows.
 */
void
op_compact(Operator *op)
{
	List	   *spent = NIL;
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
		if (unreferenced(op, e))
			spent = lappend(spent, e);
	}
	list_free(op->leaving);
	op->leaving = NIL;
	/* freed last: an entry may be twice in the list */
	foreach(lc, spent)
	{
		WindowEntry *e = lfirst(lc);

		pfree(e->ref);
		pfree(e->states);		/* the entry's chunk */
	}
	list_free(spent);
}

/* The next window of a walk begun by wintab_start_iterate, or NULL. */
WindowEntry *
op_next_window(Operator *op, wintab_iterator *it)
{
	WindowSlot *slot = wintab_iterate(op->windows, it);

	return slot ? slot_entry(slot) : NULL;
}

/* Calls fn for each window that has rows and has not fired yet. */
void
op_open_windows(Operator *op, void (*fn) (WindowEntry *, void *), void *arg)
{
	wintab_iterator it;
	WindowEntry *e;

	if (op->sliced)
	{
		open_sliced_windows(op, fn, arg);
		return;
	}
	wintab_start_iterate(op->windows, &it);
	while ((e = op_next_window(op, &it)) != NULL)
		if (e->fire_count == 0 && !e->gone)
			fn(e, arg);
}

static void
put_bytes(StringInfo buf, const void *p, int len)
{
	appendBinaryStringInfo(buf, (const char *) &len, sizeof(len));
	appendBinaryStringInfo(buf, p, len);
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

static void
put_bounds(StringInfo buf, const WindowKey *k)
{
	put_bytes(buf, VARDATA_ANY(k->key), VARSIZE_ANY_EXHDR(k->key));
	appendBinaryStringInfo(buf, (const char *) &k->start, sizeof(int64));
	appendBinaryStringInfo(buf, (const char *) &k->end, sizeof(int64));
}

static void
get_bounds(const char **p, WindowKey *k)
{
	k->key = get_bytes(p);
	memcpy(&k->start, *p, sizeof(int64));
	memcpy(&k->end, *p + sizeof(int64), sizeof(int64));
	*p += 2 * sizeof(int64);
}

/* A window as images and state_log changes hold it. */
typedef struct SavedWindow
{
	WindowKey	k;				/* hash key, must be first */
	int			fire_count;
	bool		stored;
	bool		logged;
	bytea	   *state;
} SavedWindow;

/* A live window's bounds, fire count, where its state is, and its state. */
static void
put_window(StringInfo buf, const WindowEntry *e)
{
	char		logged = e->logged;

	Assert(e->saved != NULL);
	put_bounds(buf, &e->k);
	appendBinaryStringInfo(buf, (const char *) &e->fire_count, sizeof(int));
	appendBinaryStringInfo(buf, &logged, 1);
	put_bytes(buf, VARDATA_ANY(e->saved), VARSIZE_ANY_EXHDR(e->saved));
}

static void
get_window(const char **p, SavedWindow *w)
{
	get_bounds(p, &w->k);
	memcpy(&w->fire_count, *p, sizeof(int));
	w->logged = (*p)[sizeof(int)];
	*p += sizeof(int) + 1;
	w->state = get_bytes(p);
}

/*
 * Images start with their format's mark, so that a backend never reads an
 * image another build of the library made (until the server restarts,
 * old backends may run beside new ones): it reads the heap instead.
 */
#define IMAGE_MARK 0x57494E04
#define IMAGE_HEADER (sizeof(uint32) + sizeof(int) + sizeof(int64))

/*
 * The live windows as one image for the shared-memory store: its mark, the
 * steps state_log holds and the number of windows, then per window its bounds,
 * fire count, whether state_log has it and its stored states.  Call after
 * the states were stored (emit_state), which leaves each live entry's
 * "saved" current.
 */
char *
op_image(Operator *op, Size *size)
{
	StringInfoData buf;
	wintab_iterator it;
	WindowEntry *e;
	int64		n = 0;

	uint32		mark = IMAGE_MARK;

	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, (const char *) &mark, sizeof(uint32));
	appendBinaryStringInfo(&buf, (const char *) &op->log_steps, sizeof(int));
	appendBinaryStringInfo(&buf, (const char *) &n, sizeof(int64));
	wintab_start_iterate(op->windows, &it);
	while ((e = op_next_window(op, &it)) != NULL)
	{
		if (e->gone)
			continue;
		put_window(&buf, e);
		n++;
	}
	memcpy(buf.data + IMAGE_HEADER - sizeof(int64), &n, sizeof(int64));
	*size = buf.len;
	return buf.data;
}

/* Whether an image is one op_image made. */
bool
op_image_valid(const char *image, Size size)
{
	uint32		mark;

	if (size < IMAGE_HEADER)
		return false;
	memcpy(&mark, image, sizeof(uint32));
	return mark == IMAGE_MARK;
}

/* The number of windows of an image made by op_image. */
int64
op_image_windows(const char *image)
{
	int64		n;

	memcpy(&n, image + IMAGE_HEADER - sizeof(int64), sizeof(int64));
	return n;
}

/* Loads the windows of an image made by op_image. */
void
op_load_image(Operator *op, const char *image, Size size)
{
	const char *p = image + IMAGE_HEADER;

	memcpy(&op->log_steps, image + sizeof(uint32), sizeof(int));
	while (p < image + size)
	{
		SavedWindow w;

		get_window(&p, &w);
		op_load(op, w.k.key, w.k.start, w.k.end, w.fire_count, w.state)->logged = w.logged;
	}
}

/*
 * What the step changed, as a state_log row: the number of windows that
 * left and their bounds, then the windows it changed as images hold them.
 * NULL if it changed nothing.  Call after their states were serialized
 * (emit_state).
 */
char *
op_changes(Operator *op, Size *size)
{
	StringInfoData buf;
	wintab_iterator it;
	WindowEntry *e;
	int			ndropped = list_length(op->dropped);
	ListCell   *lc;
	bool		changed = ndropped > 0;

	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, (const char *) &ndropped, sizeof(int));
	foreach(lc, op->dropped)
		put_bounds(&buf, &((WindowRef *) lfirst(lc))->k);
	wintab_start_iterate(op->windows, &it);
	while ((e = op_next_window(op, &it)) != NULL)
	{
		if (e->gone || !e->dirty)
			continue;
		put_window(&buf, e);
		changed = true;
	}
	*size = buf.len;
	return changed ? buf.data : NULL;
}

/*
 * Window state read back from the heap: window_state's rows, then
 * state_log's changes over them in step order, gathered in a table before
 * they are loaded so that each window is loaded once, as it is now.
 */
HTAB *
op_stored_begin(void)
{
	return op_window_table("windowing stored windows", sizeof(SavedWindow));
}

void
op_stored_row(HTAB *stored, bytea *key, int64 start, int64 end, int fire_count,
			  bytea *state)
{
	WindowKey	k = {key, start, end};
	SavedWindow *w = hash_search(stored, &k, HASH_ENTER, NULL);

	w->k.key = DatumGetByteaPCopy(PointerGetDatum(key));
	w->fire_count = fire_count;
	w->stored = true;
	w->logged = false;
	w->state = DatumGetByteaPCopy(PointerGetDatum(state));
}

void
op_stored_changes(HTAB *stored, const char *changes, Size size)
{
	const char *p = changes + sizeof(int);
	int			ndropped;

	memcpy(&ndropped, changes, sizeof(int));
	for (int i = 0; i < ndropped; i++)
	{
		WindowKey	k;

		get_bounds(&p, &k);
		hash_search(stored, &k, HASH_REMOVE, NULL);
	}
	while (p < changes + size)
	{
		SavedWindow w;
		bool		found;
		SavedWindow *to;

		get_window(&p, &w);
		to = hash_search(stored, &w.k, HASH_ENTER, &found);
		w.stored = found && to->stored;
		w.logged = true;
		*to = w;
	}
}

void
op_stored_load(Operator *op, HTAB *stored)
{
	HASH_SEQ_STATUS seq;
	SavedWindow *w;

	hash_seq_init(&seq, stored);
	while ((w = hash_seq_search(&seq)) != NULL)
	{
		WindowEntry *e = op_load(op, w->k.key, w->k.start, w->k.end, w->fire_count, w->state);

		e->stored = w->stored;
		e->logged = w->logged;
	}
}
