/*
 * state.c
 *		A pipeline's window state: the one place that knows how it is laid
 *		out, written and read back.
 *
 * The durable copy is on the heap: windowing.window_state (one row per
 * window) and windowing.state_log (one row per step: the windows it
 * changed, and those that left).  state_store.c keeps the state as of the
 * last committed step in shared memory, as one image per pipeline, so the
 * next step reads it from there.  The operator asks for its windows at the
 * start of a step (state_load) and hands them back at its end
 * (state_save), in the step's transaction, so state commits with the
 * step's results and cursor or not at all.
 *
 * Images and state_log rows share one layout per window: its bounds, fire
 * count, whether state_log has it, and its serialized aggregate states.
 */
#include "compat.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "operator.h"
#include "owner.h"
#include "plans.h"
#include "state.h"
#include "state_store.h"

/*
 * Steps that write their changes to state_log before one folds them into
 * window_state: few enough that reading state back from the heap (after a
 * restart) replays little, many enough that a busy window is stored once
 * for many steps that changed it.
 */
#define STATE_LOG_STEPS 100

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
 * the states were stored (state_save), which leaves each live entry's
 * "saved" current.
 */
static char *
image_of(Operator *op, Size *size)
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
static bool
image_valid(const char *image, Size size)
{
	uint32		mark;

	if (size < IMAGE_HEADER)
		return false;
	memcpy(&mark, image, sizeof(uint32));
	return mark == IMAGE_MARK;
}

/* The number of windows of an image made by op_image. */
static int64
image_windows(const char *image)
{
	int64		n;

	memcpy(&n, image + IMAGE_HEADER - sizeof(int64), sizeof(int64));
	return n;
}

/* Loads the windows of an image made by op_image. */
static void
load_image(Operator *op, const char *image, Size size)
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
 * (state_save).
 */
static char *
changes_of(Operator *op, Size *size)
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
static HTAB *
stored_begin(void)
{
	return op_window_table("windowing stored windows", sizeof(SavedWindow));
}

static void
stored_row(HTAB *stored, bytea *key, int64 start, int64 end, int fire_count,
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

static void
stored_changes(HTAB *stored, const char *changes, Size size)
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

static void
stored_load(Operator *op, HTAB *stored)
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

static ArrayType *
int8_array(Datum *d, int n)
{
	return construct_array(d, n, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE);
}

/*
 * A statement on window_state, run as that table's owner: users may read
 * their pipelines' states but not write them, since a forged state would
 * reach the aggregates' C functions as if they had made it.  search_path
 * is pinned again (owner.c), whatever the owner's code in the step set it
 * to.
 */
static void
run_on_state(const char *sql, int nargs, Oid *types, Datum *values, int expected)
{
	Oid			owner = owner_of_table(get_relname_relid("window_state",
													  get_namespace_oid("windowing", false)));
	int			rc = owner_execute(owner, sql, nargs, types, values);

	if (rc != expected)
		elog(ERROR, "could not run a statement on window state: %s", SPI_result_code_string(rc));
}

/* Deletes the window_state rows of the windows that left during the step. */
static void
delete_dropped(int32 id, Operator *op)
{
	int			n = 0;
	Datum	   *keys = palloc(sizeof(Datum) * Max(list_length(op->dropped), 1));
	Datum	   *starts = palloc(sizeof(Datum) * Max(list_length(op->dropped), 1));
	Datum	   *ends = palloc(sizeof(Datum) * Max(list_length(op->dropped), 1));
	Oid			types[4] = {INT4OID, BYTEAARRAYOID, INT8ARRAYOID, INT8ARRAYOID};
	Datum		args[4];
	ListCell   *lc;

	foreach(lc, op->dropped)
	{
		WindowRef  *w = lfirst(lc);

		if (!w->stored)
			continue;
		keys[n] = PointerGetDatum(w->k.key);
		starts[n] = Int64GetDatum(w->k.start);
		ends[n] = Int64GetDatum(w->k.end);
		n++;
	}
	if (n == 0)
		return;
	args[0] = Int32GetDatum(id);
	args[1] = PointerGetDatum(construct_array(keys, n, BYTEAOID, -1, false, TYPALIGN_INT));
	args[2] = PointerGetDatum(int8_array(starts, n));
	args[3] = PointerGetDatum(int8_array(ends, n));
	run_on_state("DELETE FROM windowing.window_state AS w "
		"USING ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3), pg_catalog.unnest($4)) AS u(k, s, e) "
		"WHERE w.pipeline_id OPERATOR(pg_catalog.=) $1 "
		"AND w.key OPERATOR(pg_catalog.=) u.k "
		"AND w.window_start OPERATOR(pg_catalog.=) u.s "
		"AND w.window_end OPERATOR(pg_catalog.=) u.e",
		4, types, args, SPI_OK_DELETE);
}

/*
 * Brings window_state up to date: upserts every window whose newest state
 * is not there (changed by this step or logged by earlier ones), then
 * empties the pipeline's state_log.
 */
static void
store_windows(int32 id, Operator *op)
{
	long		n = op->windows->members;
	Datum	   *keys = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *starts = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *ends = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *fires = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *states = palloc(sizeof(Datum) * Max(n, 1));
	int			nput = 0;
	wintab_iterator it;
	WindowEntry *e;
	Oid			types[6] = {INT4OID, BYTEAARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
	INT4ARRAYOID, BYTEAARRAYOID};
	Datum		args[6];

	wintab_start_iterate(op->windows, &it);
	while ((e = op_next_window(op, &it)) != NULL)
	{
		if (e->gone || !(e->dirty || e->logged))
			continue;
		keys[nput] = PointerGetDatum(e->k.key);
		starts[nput] = Int64GetDatum(e->k.start);
		ends[nput] = Int64GetDatum(e->k.end);
		fires[nput] = Int32GetDatum(e->fire_count);
		states[nput] = PointerGetDatum(e->saved);
		e->stored = true;
		e->logged = false;
		nput++;
	}
	args[0] = Int32GetDatum(id);
	if (op->log_steps > 0)
		run_on_state("DELETE FROM windowing.state_log WHERE pipeline_id OPERATOR(pg_catalog.=) $1",
			1, types, args, SPI_OK_DELETE);
	op->log_steps = 0;
	if (nput == 0)
		return;
	args[1] = PointerGetDatum(construct_array(keys, nput, BYTEAOID, -1, false, TYPALIGN_INT));
	args[2] = PointerGetDatum(int8_array(starts, nput));
	args[3] = PointerGetDatum(int8_array(ends, nput));
	args[4] = PointerGetDatum(construct_array(fires, nput, INT4OID, 4, true, TYPALIGN_INT));
	args[5] = PointerGetDatum(construct_array(states, nput, BYTEAOID, -1, false, TYPALIGN_INT));
	run_on_state("INSERT INTO windowing.window_state AS w "
		"(pipeline_id, key, window_start, window_end, fire_count, state) "
		"SELECT $1, u.k, u.s, u.e, u.f, u.st "
		"FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3), pg_catalog.unnest($4), "
		"pg_catalog.unnest($5), pg_catalog.unnest($6)) AS u(k, s, e, f, st) "
		"ON CONFLICT (pipeline_id, key, window_start, window_end) DO UPDATE "
		"SET fire_count = excluded.fire_count, state = excluded.state",
		6, types, args, SPI_OK_INSERT);
}

/* Writes the step's changes as one state_log row. */
static void
log_changes(int32 id, int64 step, Operator *op)
{
	Size		size;
	char	   *changes = changes_of(op, &size);
	bytea	   *row;
	Oid			types[3] = {INT4OID, INT8OID, BYTEAOID};
	Datum		args[3];

	if (changes == NULL)
		return;
	row = palloc(size + VARHDRSZ);
	SET_VARSIZE(row, size + VARHDRSZ);
	memcpy(VARDATA(row), changes, size);
	args[0] = Int32GetDatum(id);
	args[1] = Int64GetDatum(step);
	args[2] = PointerGetDatum(row);
	run_on_state("INSERT INTO windowing.state_log (pipeline_id, step, changes) VALUES ($1, $2, $3)",
		3, types, args, SPI_OK_INSERT);
	op->log_steps++;
}

/*
 * Writes step "step"'s window state: the rows of windows that left go from
 * window_state (first, since a session window can leave and come back
 * with the same bounds), then the windows the step changed go into one
 * state_log row, or window_state takes every change logged so far.  One
 * row per step instead of one per changed window is what lets small steps
 * keep up with a busy queue; folding the log into window_state every
 * STATE_LOG_STEPS steps keeps reading state back from the heap short.  A
 * step whose state was read from the heap folds, so that a pipeline whose
 * state does not fit in memory never logs.  Then the state's image is
 * staged for shared memory, to be published if the step commits.
 */
void
state_save(Operator *op, int32 id, int64 step, bool from_memory)
{
	bool		store = !from_memory || op->log_steps >= STATE_LOG_STEPS;
	wintab_iterator it;
	WindowEntry *e;
	char	   *image;
	Size		size;

	wintab_start_iterate(op->windows, &it);
	while ((e = op_next_window(op, &it)) != NULL)
		if (!e->gone && e->dirty)
		{
			e->saved = op_serialize(op, e);
			e->logged = !store;
		}
	delete_dropped(id, op);
	if (store)
		store_windows(id, op);
	else
		log_changes(id, step, op);
	image = image_of(op, &size);
	state_store_put(id, step, image, size);
}

/*
 * Window state left by step "steps": from shared memory if it holds the
 * image of that step (then true), else from the heap tables (window_state, then
 * the changes state_log holds over it, in step order), read with a fresh
 * snapshot: the previous step may be of this very statement (its image is
 * published only at commit).
 */
bool
state_load(Operator *op, int32 id, int64 steps)
{
	Oid			argtype = INT4OID;
	Datum		arg = Int32GetDatum(id);
	Size		size;
	char	   *image = state_store_get(id, steps, &size);
	HTAB	   *stored;

	if (image != NULL && image_valid(image, size))
	{
		load_image(op, image, size);
		return true;
	}
	stored = stored_begin();
	if (plans_execute("SELECT key, window_start, window_end, fire_count, state "
					   "FROM windowing.window_state WHERE pipeline_id OPERATOR(pg_catalog.=) $1",
					   1, &argtype, &arg, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read window state");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		stored_row(stored,
					  DatumGetByteaPP(SPI_getbinval(tup, desc, 1, &isnull)),
					  DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull)),
					  DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull)),
					  DatumGetInt32(SPI_getbinval(tup, desc, 4, &isnull)),
					  DatumGetByteaPP(SPI_getbinval(tup, desc, 5, &isnull)));
	}
	SPI_freetuptable(SPI_tuptable);
	if (plans_execute("SELECT changes FROM windowing.state_log "
					   "WHERE pipeline_id OPERATOR(pg_catalog.=) $1 ORDER BY step",
					   1, &argtype, &arg, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read window state");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		bytea	   *changes = DatumGetByteaPP(SPI_getbinval(SPI_tuptable->vals[i],
															SPI_tuptable->tupdesc, 1, &isnull));

		stored_changes(stored, VARDATA_ANY(changes), VARSIZE_ANY_EXHDR(changes));
	}
	op->log_steps = SPI_processed;
	SPI_freetuptable(SPI_tuptable);
	stored_load(op, stored);
	return false;
}


PG_FUNCTION_INFO_V1(windowing_state_windows);
PG_FUNCTION_INFO_V1(windowing_state_memory_bytes);
PG_FUNCTION_INFO_V1(windowing_forget_state);

/*
 * _state_windows(id, steps): the pipeline's open windows as its image in
 * shared memory holds them, or NULL if it is not there.
 */
Datum
windowing_state_windows(PG_FUNCTION_ARGS)
{
	Size		size;
	char	   *image = state_store_get(PG_GETARG_INT32(0), PG_GETARG_INT64(1), &size);

	if (image == NULL || !image_valid(image, size))
		PG_RETURN_NULL();
	PG_RETURN_INT64(image_windows(image));
}

/* _state_memory_bytes(id, steps): the pipeline's state held in shared memory. */
Datum
windowing_state_memory_bytes(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(state_store_bytes(PG_GETARG_INT32(0), PG_GETARG_INT64(1)));
}

/* _forget_state(id): a dropped pipeline's image leaves shared memory. */
Datum
windowing_forget_state(PG_FUNCTION_ARGS)
{
	state_store_forget(PG_GETARG_INT32(0));
	PG_RETURN_VOID();
}

