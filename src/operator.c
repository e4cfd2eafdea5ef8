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

/* The kind of window that keeps a pipeline's windows. */
static const OpKind *
kind_of(const WindowSpec *spec, Aggregator *agg, bool may_slice)
{
	if (spec->kind == WK_COUNT)
		return &count_window_kind;
	if (spec->kind == WK_SESSION)
		return &session_window_kind;
	if (can_slice(spec, agg, may_slice))
		return &sliced_window_kind;
	return &time_window_kind;
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
	op->kind = kind_of(spec, agg, may_slice);
	op->trigger = &event_time_trigger;
	op_init_table(op);
	if (op->kind->init != NULL)
		op->kind->init(op);
	agg_bind_context(agg, CurrentMemoryContext);
	return op;
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
	op->kind->load(op, e);
	MemoryContextSwitchTo(old);
	return e;
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
		op->kind->row(op, seq, ts_null, ts, gap, key, args, argnulls);
	MemoryContextSwitchTo(old);
}

/* An explicit watermark, or the end of input (WMK_END). */
void
op_advance_watermark(Operator *op, int64 to)
{
	MemoryContext old = MemoryContextSwitchTo(op->cxt);

	if (wmk_advance(&op->wm, to))
		op->kind->on_watermark(op);
	if (to == WMK_END && op->kind->at_end != NULL)
		op->kind->at_end(op);
	MemoryContextSwitchTo(old);
}

/* Calls fn for each window that has rows and has not fired yet. */
void
op_open_windows(Operator *op, void (*fn) (WindowEntry *, void *), void *arg)
{
	op->kind->open_windows(op, fn, arg);
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
