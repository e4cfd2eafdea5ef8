/*
 * state.c
 *		A pipeline's window state: the one place that knows how it is laid
 *		out, written and read back.
 *
 * The durable copy is on the heap: windowing.window_state (one row per
 * window) and windowing.state_log (a step's changes: the windows it
 * changed, and those that left, in rows of up to a page);
 * windowing.state_size counts each pipeline's rows of window_state and
 * their states' bytes.  state_store.c
 * keeps the windows as of the last committed step in the memory of the
 * process that steps the pipeline, by key, so that the next step there
 * takes out only the windows it needs.  The operator asks for its windows at the start of a step
 * (state_load), and as its rows and watermark reach them, and hands them
 * back at its end (state_save), in the step's transaction, so state
 * commits with the step's results and cursor or not at all.
 *
 * state_log rows hold one layout per window: its bounds, fire count,
 * whether state_log has it, and its serialized aggregate states.
 */
#include "compat.h"

#include "access/detoast.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "common/hashfn.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "heap_rows.h"
#include "keys.h"
#include "operator.h"
#include "owner.h"
#include "plans.h"
#include "prefetch.h"
#include "state.h"
#include "state_slots.h"
#include "state_store.h"
#include "trigger.h"

/*
 * Steps that write their changes to state_log before one folds them into
 * window_state: few enough that reading state back from the heap (after a
 * restart) replays little, many enough that a busy window is stored once
 * for many steps that changed it.  Steps whose changes are small log up to
 * STATE_LOG_MAX_STEPS of them, STATE_LOG_BYTES in all: a fold costs a few
 * statements whatever it writes, which a trickle of one-row steps would
 * otherwise pay every hundred rows.
 */
#define STATE_LOG_STEPS 100
#define STATE_LOG_BYTES (1024 * 1024)
#define STATE_LOG_MAX_STEPS 1000
/*
 * The most the log holds of windows whose bounds move (sessions): a
 * process that holds none of the pipeline's state (the worker after a
 * restart) folds the log at its first step, and the fold moves each such
 * window's row to its new bounds, a delete and an insert with its index
 * entries, several times what the update in place of another window's
 * row costs.  Other windows' logs are held to their steps: folding every
 * few steps would walk the whole primary key more often.
 */
#define STATE_LOG_MOVING_BYTES (2 * 1024 * 1024)
/*
 * A full log is rewritten as one row when that row is this many times
 * smaller: each rewrite at least halves the log, so the row stays within
 * what the steps between two rewrites log, and reading it back stays short.
 */
#define STATE_LOG_COMPACTION 2

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

/* What put_bounds writes besides the key's bytes. */
#define BOUNDS_BYTES (sizeof(int) + 2 * sizeof(int64))

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

/* A window as state_log changes hold it. */
typedef struct SavedWindow
{
	WindowKey	k;				/* hash key, must be first */
	int			fire_count;
	bool		stored;
	bool		logged;
	bytea	   *state;
	ItemPointerData row;		/* StoredWindow.row */
} SavedWindow;

/* A window_state row to write, or (without a state) to delete. */
typedef struct StateRow
{
	uint64		prefix;			/* the key's first bytes, for row_cmp */
	const bytea *key;
	int64		start;
	int64		end;
	int			fire_count;
	bool		stored;			/* its row may be in window_state */
	const bytea *state;
	ItemPointerData row;		/* StoredWindow.row */
	const void *place;			/* StoredWindow.place, given to a fold */
} StateRow;

typedef struct StateRows
{
	int			n;
	int			size;
	StateRow   *rows;
} StateRows;

static void
rows_init(StateRows *r)
{
	r->n = 0;
	r->size = 64;
	r->rows = palloc(sizeof(StateRow) * r->size);
}

static StateRow *
rows_add(StateRows *r, const bytea *key, int64 start, int64 end, int fire_count,
		 bool stored, const bytea *state)
{
	StateRow   *w;

	if (r->n == r->size)
	{
		r->size *= 2;
		r->rows = repalloc_huge(r->rows, sizeof(StateRow) * r->size);
	}
	w = &r->rows[r->n++];
	/* row_cmp compares it in the array, rather than follow each key pointer */
	w->prefix = keys_bytes_prefix(VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key));
	w->key = key;
	w->start = start;
	w->end = end;
	w->fire_count = fire_count;
	w->stored = stored;
	w->state = state;
	ItemPointerSetInvalid(&w->row);
	w->place = NULL;
	return w;
}

/*
 * How writes changed a pipeline's rows in window_state: windowing.state_size
 * keeps their count and their states' bytes, so that neither a step nor
 * pipeline_stats counts them.
 */
typedef struct HeapDelta
{
	int64		windows;
	int64		bytes;
} HeapDelta;

/* What put_window writes besides the key's and the state's bytes. */
#define WINDOW_BYTES (BOUNDS_BYTES + 2 * sizeof(int) + 1)

/*
 * A live window's bounds, fire count, whether window_state may hold its
 * row, and its state: a fold of the log inserts a window that it says has
 * none (a session's new bounds) without looking for its row.  Logs that
 * earlier versions wrote hold 1 there, which reads as "may".
 */
static void
put_window(StringInfo buf, const WindowKey *k, int fire_count, bool stored,
		   const bytea *state)
{
	char		flag = stored;

	Assert(state != NULL);
	put_bounds(buf, k);
	appendBinaryStringInfo(buf, (const char *) &fire_count, sizeof(int));
	appendBinaryStringInfo(buf, &flag, 1);
	put_bytes(buf, VARDATA_ANY(state), VARSIZE_ANY_EXHDR(state));
}

static void
get_window(const char **p, SavedWindow *w)
{
	get_bounds(p, &w->k);
	memcpy(&w->fire_count, *p, sizeof(int));
	w->stored = (*p)[sizeof(int)] != 0;
	w->logged = true;
	*p += sizeof(int) + 1;
	w->state = get_bytes(p);
	ItemPointerSetInvalid(&w->row);
}

/* A window the store gives back joins the operator. */
static void
load_stored(const bytea *key, const StoredWindow *w, void *arg)
{
	WindowEntry *e = op_load(arg, (bytea *) key, w->start, w->end, w->fire_count,
							 (bytea *) w->state);

	e->stored = w->stored;
	e->logged = w->logged;
	e->stored_at = w->place;
	e->row = w->row;
}

/* A live window into the store, as the step leaves it. */
static void
put_stored(StateStore *st, Operator *op, WindowEntry *e)
{
	StoredWindow w;

	memset(&w, 0, sizeof(w));	/* its padding is copied, and written on */
	w.start = e->k.start;
	w.end = e->k.end;
	w.due = op_due(op, e);
	w.fire_count = e->fire_count;
	w.stored = e->stored;
	w.logged = e->logged;
	w.state = e->saved;
	w.row = e->row;
	w.place = e->stored_at;
	state_store_put(st, e->k.key, &w);
}

/*
 * What the step changed, as a state_log row: the number of windows that
 * left and their bounds, then the windows it changed (put_window).
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
		put_window(&buf, &e->k, e->fire_count, e->stored, e->saved);
		changed = true;
	}
	*size = buf.len;
	return changed ? buf.data : NULL;
}

/*
 * Windows as state_log's changes leave them, in step order, gathered in a
 * table so that each window is loaded once, as it is now.
 */
static HTAB *
stored_begin(void)
{
	return op_window_table("windowing stored windows", sizeof(SavedWindow));
}

/*
 * A stored window from the window_state row in "slot", its columns after
 * pipeline_id deformed (key, window_start, window_end, fire_count and
 * state, none NULL).
 */
static void
saved_window(TupleTableSlot *slot, SavedWindow *w)
{
	const Datum *v = slot->tts_values + 1;

	w->k.key = DatumGetByteaPP(v[0]);
	w->k.start = DatumGetInt64(v[1]);
	w->k.end = DatumGetInt64(v[2]);
	w->fire_count = DatumGetInt32(v[3]);
	w->stored = true;
	w->logged = false;
	w->state = DatumGetByteaPP(v[4]);
	w->row = slot->tts_tid;
}

/*
 * A state_log row's changes applied to a table of windows; the windows it
 * says left are added to "departed".
 */
static void
stored_changes(HTAB *stored, const char *changes, Size size, StateRows *departed)
{
	const char *p = changes + sizeof(int);
	int			ndropped;

	memcpy(&ndropped, changes, sizeof(int));
	for (int i = 0; i < ndropped; i++)
	{
		WindowKey	k;

		get_bounds(&p, &k);
		hash_search(stored, &k, HASH_REMOVE, NULL);
		rows_add(departed, k.key, k.start, k.end, 0, true, NULL);
	}
	while (p < changes + size)
	{
		SavedWindow w;

		get_window(&p, &w);
		*(SavedWindow *) hash_search(stored, &w.k, HASH_ENTER, NULL) = w;
	}
}

/* A window read back from the heap joins the operator. */
static void
load_saved(const SavedWindow *w, void *arg)
{
	Operator   *op = arg;
	WindowEntry *e = op_load(op, w->k.key, w->k.start, w->k.end, w->fire_count, w->state);

	e->stored = w->stored;
	e->logged = w->logged;
	e->row = w->row;
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

/* A pipeline's state is gone: in memory, on the heap and in its log. */
void
state_clear(int32 id)
{
	Oid			type = INT4OID;
	Datum		arg = Int32GetDatum(id);

	state_store_forget(id);
	run_on_state("DELETE FROM windowing.window_state WHERE pipeline_id OPERATOR(pg_catalog.=) $1",
				 1, &type, &arg, SPI_OK_DELETE);
	run_on_state("DELETE FROM windowing.state_log WHERE pipeline_id OPERATOR(pg_catalog.=) $1",
				 1, &type, &arg, SPI_OK_DELETE);
	run_on_state("DELETE FROM windowing.state_size WHERE pipeline_id OPERATOR(pg_catalog.=) $1",
				 1, &type, &arg, SPI_OK_DELETE);
}

/* Adds what writes did to window_state to the pipeline's state_size. */
static void
size_add(int32 id, const HeapDelta *d)
{
	Oid			types[3] = {INT4OID, INT8OID, INT8OID};
	Datum		args[3] = {Int32GetDatum(id), Int64GetDatum(d->windows), Int64GetDatum(d->bytes)};

	if (d->windows == 0 && d->bytes == 0)
		return;
	run_on_state("INSERT INTO windowing.state_size AS s (pipeline_id, windows, bytes) "
				 "VALUES ($1, $2, $3) ON CONFLICT (pipeline_id) DO UPDATE "
				 "SET windows = s.windows OPERATOR(pg_catalog.+) excluded.windows, "
				 "bytes = s.bytes OPERATOR(pg_catalog.+) excluded.bytes",
				 3, types, args, SPI_OK_INSERT);
}

/* window_state's primary key order (bytea compares as memcmp, then length). */
static int
row_cmp(const void *a, const void *b)
{
	const StateRow *x = a;
	const StateRow *y = b;
	int			xlen;
	int			ylen;
	int			c;

	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
	xlen = VARSIZE_ANY_EXHDR(x->key);
	ylen = VARSIZE_ANY_EXHDR(y->key);
	c = memcmp(VARDATA_ANY(x->key), VARDATA_ANY(y->key), Min(xlen, ylen));
	if (c != 0)
		return c;
	if (xlen != ylen)
		return xlen < ylen ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

/*
 * Sorts rows into row_cmp's order.  A fold sorts every window it writes,
 * about a hundred thousand for a million keys touched at random, and a
 * sort made for this element and comparison, inline, costs less than
 * qsort's call of row_cmp for each comparison.
 */
#define ST_SORT sort_rows
#define ST_ELEMENT_TYPE StateRow
#define ST_COMPARE(a, b) row_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* A stored window whose newest state is in state_log only (state_store_fold). */
static void
add_stored(const bytea *key, const StoredWindow *w, void *arg)
{
	StateRow   *r = rows_add(arg, key, w->start, w->end, w->fire_count, w->stored, w->state);

	r->row = w->row;
	r->place = w->place;
}

/* A window that left with a row in window_state (state_store_departures). */
static void
add_departed(const bytea *key, int64 start, int64 end, ItemPointer row, void *arg)
{
	rows_add(arg, key, start, end, 0, true, NULL)->row = *row;
}

static int64 heap_count(int32 id);

/*
 * Rows written through one scan of window_state, whose memory (and the
 * rows') goes after each such batch.
 */
#define STATE_BATCH 4096

/*
 * A scan of window_state through an index: its primary key, by pipeline
 * and key or by the whole key of a window, or its index by end, by
 * pipeline and a range of ends.  Statements would leave the choice of
 * index to the planner, which, with statistics taken while the pipeline's
 * windows were few, read every window of the pipeline through the index by
 * end for each key.  The scan sees what this transaction wrote before.
 */
typedef struct StateScan
{
	Relation	rel;
	Relation	index;
	TupleTableSlot *slot;
	Snapshot	snapshot;
	IndexScanDesc scan;
	ScanKeyData keys[4];
	LOCKMODE	lock;
	MemoryContext row;			/* a row's detoasted bytes, reset after it */
} StateScan;

/*
 * A scan of a pipeline's rows of windowing's "table" through "index"
 * (InvalidOid: the primary key) with "nkeys" keys, the first its
 * pipeline_id, under "lock": RowExclusiveLock if it deletes.
 */
static void
scan_table_begin(StateScan *ps, const char *table, int32 id, Oid index, int nkeys,
				 LOCKMODE lock)
{
	ps->lock = lock;
	ps->rel = windowing_table_open(table, lock);
	ps->index = index_open(OidIsValid(index) ? index : RelationGetPrimaryKeyIndex(ps->rel),
						   lock);
	ps->slot = table_slot_create(ps->rel, NULL);
	CommandCounterIncrement();
	ps->snapshot = RegisterSnapshot(GetLatestSnapshot());
	ps->scan = index_beginscan(ps->rel, ps->index, ps->snapshot, nkeys, 0);
	ScanKeyInit(&ps->keys[0], 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(id));
	ps->row = AllocSetContextCreate(CurrentMemoryContext, "windowing heap row",
									ALLOCSET_SMALL_SIZES);
}

/* A scan of a pipeline's window_state rows (scan_table_begin). */
static void
scan_begin(StateScan *ps, int32 id, Oid index, int nkeys, LOCKMODE lock)
{
	scan_table_begin(ps, "window_state", id, index, nkeys, lock);
}

/* Rescans for a key, and a window's bounds unless "end" is NULL. */
static void
pkey_scan_key(StateScan *ps, const bytea *key, const int64 *start, const int64 *end)
{
	ScanKeyInit(&ps->keys[1], 2, BTEqualStrategyNumber, F_BYTEAEQ, PointerGetDatum(key));
	if (end != NULL)
	{
		ScanKeyInit(&ps->keys[2], 3, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(*start));
		ScanKeyInit(&ps->keys[3], 4, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(*end));
	}
	index_rescan(ps->scan, ps->keys, end != NULL ? 4 : 2, NULL, 0);
}

/*
 * Reads the heap row of the index entry the scan stands on ("tid") into the
 * scan's slot, if the scan's snapshot sees a version of it, as
 * index_fetch_heap does but without pruning the page first.  A fold updates
 * a few of each page's rows, so that a page whose row a step reads has
 * nearly always a dead version by then: the index scan pruned it at the
 * read (a sixth of a step that reads a million windows' keys from the
 * heap), each prune taking one version.  Left alone, the versions go when
 * a fold's update finds no room for its own (make_room), many at once.
 */
static bool
fetch_unpruned(StateScan *ps, ItemPointer tid)
{
	BufferHeapTupleTableSlot *bslot = (BufferHeapTupleTableSlot *) ps->slot;
	BlockNumber block = ItemPointerGetBlockNumber(tid);
	Buffer		buffer = InvalidBuffer;
	bool		all_dead = false;
	bool		found;

	/* a key's windows share pages: the slot's page is kept, not looked up again */
	if (BufferIsValid(bslot->buffer) && BufferGetBlockNumber(bslot->buffer) == block)
	{
		buffer = bslot->buffer;
		IncrBufferRefCount(buffer);
	}
	/* the search fills the slot's tuple header: the slot lets its row go first */
	ExecClearTuple(ps->slot);
	if (!BufferIsValid(buffer))
		buffer = ReadBuffer(ps->rel, block);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	found = heap_hot_search_buffer(tid, ps->rel, buffer, ps->snapshot, &bslot->base.tupdata,
								   &all_dead, true);
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	if (!found)
	{
		ReleaseBuffer(buffer);
		/* the index may forget an entry whose every version is dead */
		if (!ps->scan->xactStartedInRecovery)
			ps->scan->kill_prior_tuple = all_dead;
		return false;
	}
	ExecStorePinnedBufferHeapTuple(&bslot->base.tupdata, ps->slot, buffer);
	return true;
}

/* The scan's next row its snapshot sees, in its slot (fetch_unpruned). */
static bool
scan_next(StateScan *ps)
{
	ItemPointer tid;

	while ((tid = index_getnext_tid(ps->scan, ForwardScanDirection)) != NULL)
		if (fetch_unpruned(ps, tid))
			return true;
	return false;
}

static void
scan_end(StateScan *ps)
{
	index_endscan(ps->scan);
	UnregisterSnapshot(ps->snapshot);
	ExecDropSingleTupleTableSlot(ps->slot);
	index_close(ps->index, ps->lock);
	table_close(ps->rel, ps->lock);
	MemoryContextDelete(ps->row);
}

/*
 * Gives fn each window the scan finds from where it stands, one at a time:
 * a row's detoasted bytes last until the next, so that fn copies what it
 * keeps (op_load does).  What the index scan allocates as it goes stays in
 * the caller's context, which must be the one the scan began in.  Returns
 * how many there were.
 */
static int64
scan_windows(StateScan *ps, void (*fn) (const SavedWindow *, void *), void *arg)
{
	int64		n = 0;

	while (scan_next(ps))
	{
		MemoryContext old = MemoryContextSwitchTo(ps->row);
		SavedWindow r;

		/* key, window_start, window_end, fire_count and state follow pipeline_id */
		slot_getsomeattrs(ps->slot, 6);
		saved_window(ps->slot, &r);
		fn(&r, arg);
		MemoryContextSwitchTo(old);
		MemoryContextReset(ps->row);
		n++;
	}
	return n;
}

/*
 * Gives fn each window_state row of a pipeline, in the primary key's
 * order, one at a time (scan_windows): reading a pipeline's whole state
 * holds one row of it beyond what fn keeps.
 */
static void
heap_each(int32 id, void (*fn) (const SavedWindow *, void *), void *arg)
{
	StateScan	ps;

	scan_begin(&ps, id, InvalidOid, 1, AccessShareLock);
	index_rescan(ps.scan, ps.keys, 1, NULL, 0);
	scan_windows(&ps, fn, arg);
	scan_end(&ps);
}

/* The bytes of a window_state row's state, as octet_length counts them. */
static int64
found_state_bytes(StateScan *ps)
{
	bool		isnull;

	return toast_raw_datum_size(slot_getattr(ps->slot, 6, &isnull)) - VARHDRSZ;
}

/*
 * How far apart, in the primary key of window_state, the windows a fold
 * writes may be for a walk from one to the next along the index's leaves
 * to cost less than a descent from the root for each, which compares
 * their key on every level: about as much as stepping over some thirty
 * entries.  A walk descends when the next window is further away than
 * that, and it reads the rest of the leaf it lands on.
 */
#define WALK_STEPS 32

/*
 * The windows of a fold's batch, in the primary key's order, found in
 * window_state: by a walk along the index's leaves ("walk") when the fold
 * writes at least one window in WALK_STEPS of the pipeline's (most are
 * then a few entries apart), else each through a descent for its whole
 * key, which reads one entry of the leaf.
 */
typedef struct PkeyWalk
{
	StateScan	ps;				/* walk: pipeline_id = id and key >= a
								 * window's; else the whole key */
	bool		walk;
	bool		started;
	bool		on;				/* at an index entry, whose window is "at" */
	StateRow	at;
	MemoryContext entry;		/* "at"'s key, if it had to be detoasted */
} PkeyWalk;

static void
walk_begin(PkeyWalk *w, int32 id, bool walk)
{
	w->walk = walk;
	scan_begin(&w->ps, id, InvalidOid, walk ? 2 : 4, RowExclusiveLock);
	/* the entries' keys, to compare with the windows' */
	w->ps.scan->xs_want_itup = walk;
	w->started = false;
	w->on = false;
	w->entry = AllocSetContextCreate(CurrentMemoryContext, "windowing state key",
									 ALLOCSET_SMALL_SIZES);
}

static void
walk_end(PkeyWalk *w)
{
	scan_end(&w->ps);
	MemoryContextDelete(w->entry);
}

/* Steps to the next entry of the pipeline: false past its last. */
static bool
walk_next(PkeyWalk *w)
{
	IndexScanDesc scan = w->ps.scan;
	MemoryContext old;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];

	MemoryContextReset(w->entry);
	w->on = index_getnext_tid(scan, ForwardScanDirection) != NULL;
	if (!w->on)
		return false;
	old = MemoryContextSwitchTo(w->entry);
	/* pipeline_id, key, window_start, window_end: in one pass */
	index_deform_tuple(scan->xs_itup, scan->xs_itupdesc, values, isnull);
	w->at.key = DatumGetByteaPP(values[1]);
	w->at.start = DatumGetInt64(values[2]);
	w->at.end = DatumGetInt64(values[3]);
	w->at.prefix = keys_bytes_prefix(VARDATA_ANY(w->at.key), VARSIZE_ANY_EXHDR(w->at.key));
	MemoryContextSwitchTo(old);
	return true;
}

/* Descends to the first entry with "r"'s key or a greater one. */
static void
walk_descend(PkeyWalk *w, const StateRow *r)
{
	ScanKeyInit(&w->ps.keys[1], 2, BTGreaterEqualStrategyNumber, F_BYTEAGE,
				PointerGetDatum(r->key));
	index_rescan(w->ps.scan, w->ps.keys, 2, NULL, 0);
	w->started = true;
	walk_next(w);
}

/*
 * Moves to window "r", after the windows the walk was given before: true,
 * with its row in the scan's slot, if it has one.  An entry whose row is
 * gone (deleted, not vacuumed yet) is stepped over.
 */
static bool
walk_to(PkeyWalk *w, const StateRow *r)
{
	bool		descended = !w->started;
	int			steps = 0;

	if (!w->walk)
	{
		pkey_scan_key(&w->ps, r->key, &r->start, &r->end);
		return scan_next(&w->ps);
	}
	if (descended)
		walk_descend(w, r);
	while (w->on && row_cmp(&w->at, r) < 0)
	{
		if (!descended && ++steps > WALK_STEPS)
		{
			walk_descend(w, r);
			descended = true;
		}
		else
			walk_next(w);
	}
	while (w->on && row_cmp(&w->at, r) == 0)
	{
		if (fetch_unpruned(&w->ps, &w->ps.scan->xs_heaptid))
			return true;
		walk_next(w);
	}
	return false;
}

/*
 * The key and the state of row i + ROWS_AHEAD, brought towards the
 * processor's cache: they are in the store's memory, where a million
 * windows make each a load from memory, which finding the row before
 * them in window_state then hides.
 */
#define ROWS_AHEAD 4

static void
prefetch_row(const StateRow *rows, int n, int i)
{
	if (i + ROWS_AHEAD < n)
	{
		prefetch_memory(rows[i + ROWS_AHEAD].key);
		prefetch_memory(rows[i + ROWS_AHEAD].state);
	}
}

/*
 * Prunes the page of the row in the scan's slot if it has no room for
 * "tuple", the row's next version, so that the update stays HOT (no new
 * entries in both indexes).  No read of window_state prunes (a read at a
 * place, fetch_unpruned), and the versions earlier folds left would fill
 * the page.  Only when the room is missing: at a million windows a fold
 * updates about one row in ten of a page, so the page's free space takes
 * several folds' versions, and pruning at every visit (as
 * heap_page_prune_opt would, below the fillfactor's free space) made the
 * folds 8% longer.  Unlocked, the free space is a hint, as it is to
 * heap_page_prune_opt; the prune needs the slot's pin to be the only one.
 */
static void
make_room(StateScan *ps, HeapTuple tuple)
{
	Buffer		buffer = ((BufferHeapTupleTableSlot *) ps->slot)->buffer;

	if (PageGetHeapFreeSpace(BufferGetPage(buffer)) < MAXALIGN(tuple->t_len))
		heap_page_prune_opt(ps->rel, buffer);
}

/*
 * Whether window "r"'s row is where the window last saw it (StateRow.row),
 * now in the scan's slot.  A row there is checked to be the window's and
 * visible, so that a stale place (the table rewritten, the row changed by
 * another process) only sends the fold to look the window up; "pages" is
 * the table's size, past which a place cannot be read.
 */
static bool
row_in_place(StateScan *ps, int32 id, const StateRow *r, BlockNumber pages)
{
	if (!ItemPointerIsValid(&r->row) || ItemPointerGetBlockNumber(&r->row) >= pages ||
		!table_tuple_fetch_row_version(ps->rel, (ItemPointer) &r->row, ps->snapshot, ps->slot))
		return false;
	/* pipeline_id, key, window_start, window_end */
	slot_getsomeattrs(ps->slot, 4);
	return DatumGetInt32(ps->slot->tts_values[0]) == id &&
		DatumGetInt64(ps->slot->tts_values[2]) == r->start &&
		DatumGetInt64(ps->slot->tts_values[3]) == r->end &&
		keys_equal(DatumGetByteaPP(ps->slot->tts_values[1]), r->key);
}

/*
 * Deletes n windows' rows (in the primary key's order) from window_state,
 * each found where its window last saw it, or through the primary key.
 * A window may be listed twice (a session that left, came back with the
 * same bounds and left again): its row goes once.
 */
static void
delete_batch(int32 id, const StateRow *rows, int n, bool walk, int key_groups, HeapDelta *d)
{
	PkeyWalk	w;
	BlockNumber pages;

	walk_begin(&w, id, walk);
	pages = RelationGetNumberOfBlocks(w.ps.rel);
	for (int i = 0; i < n; i++)
	{
		if (i > 0 && row_cmp(&rows[i - 1], &rows[i]) == 0)
			continue;
		if (row_in_place(&w.ps, id, &rows[i], pages) || walk_to(&w, &rows[i]))
		{
			d->windows--;
			d->bytes -= found_state_bytes(&w.ps);
			simple_heap_delete(w.ps.rel, &w.ps.slot->tts_tid);
		}
	}
	walk_end(&w);
}

/* A varlena stored as it is: neither compressed nor out of line. */
static inline bool
varlena_plain(const struct varlena *v)
{
	return VARATT_IS_4B_U(v) || VARATT_IS_SHORT(v);
}

/*
 * The next version of the row in the scan's slot, with fire_count and
 * state ("values", as heap_modify_tuple takes them).  Most windows a fold
 * writes kept their fire count and a state of the same length (a count and
 * a sum): the row is then copied and its state's bytes overwritten in the
 * copy, rather than taken apart and formed again, which was a fifth of the
 * fold.  The state takes the same bytes in both when both are stored as
 * they are, with headers of the same length (heap_fill_tuple shortens a
 * short one's).
 */
static HeapTuple
next_version(StateScan *ps, TupleDesc desc, Datum *values, bool *nulls, bool *replace)
{
	HeapTuple	row = ExecFetchSlotHeapTuple(ps->slot, false, NULL);
	bool		isnull;
	struct varlena *was = (struct varlena *) DatumGetPointer(slot_getattr(ps->slot, 6, &isnull));
	struct varlena *state = (struct varlena *) DatumGetPointer(values[5]);
	HeapTuple	copy;

	if (DatumGetInt32(slot_getattr(ps->slot, 5, &isnull)) != DatumGetInt32(values[4]) ||
		!varlena_plain(was) || !varlena_plain(state) ||
		VARSIZE_ANY_EXHDR(was) != VARSIZE_ANY_EXHDR(state) ||
		VARATT_IS_SHORT(was) != (VARATT_IS_SHORT(state) || VARATT_CAN_MAKE_SHORT(state)))
		return heap_modify_tuple(row, desc, values, nulls, replace);
	copy = heap_copytuple(row);
	memcpy((char *) copy->t_data + (VARDATA_ANY(was) - (char *) row->t_data),
		   VARDATA_ANY(state), VARSIZE_ANY_EXHDR(state));
	return copy;
}

/*
 * Upserts n windows (in the primary key's order, none twice) into
 * window_state, each with its key group: a window's row is found where
 * the window last saw it, or through a walk of the primary key, and
 * updated (HOT, thanks to the table's fillfactor), or inserted; a window
 * given by the store learns where its row went.  A window known to have
 * no row (a new session's bounds, the next period's window) is inserted
 * without looking: the unique index would refuse a second row.  Done here
 * rather than by INSERT ... ON CONFLICT, so that the state it replaces is
 * known to state_size.
 */
static void
upsert_batch(int32 id, const StateRow *rows, int n, bool walk, int key_groups, HeapDelta *d)
{
	PkeyWalk	w;
	StateScan  *ps = &w.ps;
	RowIndexes ix;
	TupleDesc	desc;
	Datum		values[7];
	bool		nulls[7] = {false};
	bool		replace[7] = {false, false, false, false, true, true, false};
	BlockNumber pages;

	walk_begin(&w, id, walk);
	row_indexes_open(&ix, ps->rel);
	desc = RelationGetDescr(ps->rel);
	pages = RelationGetNumberOfBlocks(ps->rel);
	for (int i = 0; i < n; i++)
	{
		MemoryContext old;
		HeapTuple	tuple;
		bool		found;

		prefetch_row(rows, n, i);
		values[4] = Int32GetDatum(rows[i].fire_count);
		values[5] = PointerGetDatum(rows[i].state);
		d->bytes += VARSIZE_ANY_EXHDR(rows[i].state);
		found = rows[i].stored &&
			(row_in_place(ps, id, &rows[i], pages) || walk_to(&w, &rows[i]));
		old = MemoryContextSwitchTo(ps->row);
		if (found)
		{
			d->bytes -= found_state_bytes(ps);
			tuple = next_version(ps, desc, values, nulls, replace);
			make_room(ps, tuple);
			simple_heap_update(ps->rel, &ps->slot->tts_tid, tuple);
		}
		else
		{
			/* an update replaces only fire_count and state */
			values[0] = Int32GetDatum(id);
			values[1] = PointerGetDatum(rows[i].key);
			values[2] = Int64GetDatum(rows[i].start);
			values[3] = Int64GetDatum(rows[i].end);
			values[6] = Int16GetDatum(keys_group(rows[i].key, key_groups));
			d->windows++;
			tuple = heap_form_tuple(desc, values, nulls);
			simple_heap_insert(ps->rel, tuple);
		}
		row_indexes_insert(&ix, ps->rel, tuple);
		if (rows[i].place != NULL)
			state_store_located(rows[i].place, &tuple->t_self);
		MemoryContextSwitchTo(old);
		MemoryContextReset(ps->row);
	}
	row_indexes_close(&ix);
	walk_end(&w);
}

/*
 * Runs "write" over the rows in window_state's key order, so that it
 * finds them along the index's leaves, STATE_BATCH at a time; by a walk
 * (PkeyWalk) if they are at least one in WALK_STEPS of the pipeline's
 * "windows" there.
 */
static void
write_rows(int32 id, StateRows *r, int64 windows, int key_groups, HeapDelta *d,
		   void (*write) (int32 id, const StateRow *rows, int n, bool walk,
						  int key_groups, HeapDelta *d))
{
	bool		walk = r->n * (int64) WALK_STEPS >= windows;
	MemoryContext batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "window state rows",
													ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(batch_cxt);

	sort_rows(r->rows, r->n);
	for (int i = 0; i < r->n; i += STATE_BATCH)
	{
		write(id, r->rows + i, Min(STATE_BATCH, r->n - i), walk, key_groups, d);
		MemoryContextReset(batch_cxt);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(batch_cxt);
}

/*
 * Deletes the state_log rows of the scan's pipeline whose step compares
 * with "step" as "strategy" says, through the primary key.  A statement
 * would be planned as a scan of the whole table: a busy pipeline folds
 * every second or so, the rows it deletes take nearly a page each until
 * vacuum, and each fold would read all of them again.
 */
static void
delete_log_rows(StateScan *ps, int64 step, StrategyNumber strategy, RegProcedure proc)
{
	ScanKeyInit(&ps->keys[1], 2, strategy, proc, Int64GetDatum(step));
	index_rescan(ps->scan, ps->keys, 2, NULL, 0);
	while (index_getnext_slot(ps->scan, ForwardScanDirection, ps->slot))
	{
		simple_heap_delete(ps->rel, &ps->slot->tts_tid);
		heap_rows_deleted(ps->rel, &ps->slot->tts_tid);
	}
}

/* Deletes the pipeline's state_log rows of step "from" on. */
static void
delete_log(int32 id, int64 from)
{
	StateScan	ps;

	scan_table_begin(&ps, "state_log", id, InvalidOid, 2, RowExclusiveLock);
	delete_log_rows(&ps, from, BTGreaterEqualStrategyNumber, F_INT8GE);
	scan_end(&ps);
}

void
state_log_delete(int32 id, const int64 *steps, int n)
{
	StateScan	ps;

	if (n == 0)
		return;
	scan_table_begin(&ps, "state_log", id, InvalidOid, 2, RowExclusiveLock);
	for (int i = 0; i < n; i++)
		delete_log_rows(&ps, steps[i], BTEqualStrategyNumber, F_INT8EQ);
	scan_end(&ps);
}

/*
 * Brings window_state up to date: the rows of the windows that left
 * ("gone") go first, since a session window can leave and come back with
 * the same bounds, then every window whose newest state is not there
 * ("changed") is upserted; the pipeline's state_log ("log") is emptied.
 */
static void
write_heap(int32 id, int key_groups, StateRows *gone, StateRows *changed, StateLog log)
{
	HeapDelta	d = {0, 0};
	int64		windows = gone->n + changed->n > 0 ? heap_count(id) : 0;

	if (log.steps > 0)
		delete_log(id, log.first);
	write_rows(id, gone, windows, key_groups, &d, delete_batch);
	write_rows(id, changed, windows, key_groups, &d, upsert_batch);
	size_add(id, &d);
}

static void
write_state(int32 id, int key_groups, StateRows *gone, StateRows *changed, Operator *op)
{
	write_heap(id, key_groups, gone, changed, op->log);
	op->log = (StateLog) {0};
}

/*
 * A read of the heap by due time, a batch at a time (fetch_due): the
 * windows ending in a range, by end, then those of each key it finds that
 * the store does not know (scan_key).
 */
typedef struct DueScan
{
	bool		active;
	int64		until;			/* the heap is read up to there once done */
	bool		every;			/* every window is due: read in key order */
	bytea	   *after;			/* every: the last key read, or NULL */
	StateScan	by_end;			/* else: by end */
	int64		then_above;		/* then the ends in (then_above, then_upto] */
	int64		then_upto;		/* (WMK_NONE: none) */
} DueScan;

/* What a step's state came from, for state_save. */
struct StepState
{
	Operator   *op;
	int32		id;
	int			key_groups;
	StateStore *store;			/* its windows in this process, or NULL: all
								 * of them were read from the heap */
	bool		by_key;			/* taken from the store as needed */
	StateRows	log_departed;	/* read from the heap: the windows state_log
								 * says left, whose rows window_state may
								 * still hold */
	int64		hits;			/* keys found in the store */
	int64		misses;			/* keys read from the heap */
	DueScan		due;			/* a read of the heap by due time under way */
	int64		start_wm;		/* the committed watermark the step began at */
	StateScan	keys;			/* the keys it reads from the heap (step_keys), */
	bool		keys_open;		/* open from the first until state_save */
};

/*
 * The step's scan of window_state by key, begun at the first key it reads
 * there and ended by state_save before it writes: the keys read later are
 * ones it never wrote (a window's row is deleted during the step only if
 * its key is known).  It runs in the operator's memory, where fetch_key
 * and fetch_due are called.
 */
static StateScan *
step_keys(StepState *ss)
{
	if (!ss->keys_open)
		scan_begin(&ss->keys, ss->id, InvalidOid, 2, AccessShareLock);
	ss->keys_open = true;
	return &ss->keys;
}

/* Gives fn each window that left during the step with a row in window_state. */
static void
each_dropped(const Operator *op, DepartedFn fn, void *arg)
{
	ListCell   *lc;

	foreach(lc, op->dropped)
	{
		WindowRef  *w = lfirst(lc);

		if (w->stored)
			fn(w->k.key, w->k.start, w->k.end, &w->row, arg);
	}
}

/* A window that left, for the store to remember until the fold (each_dropped). */
static void
depart_from_store(const bytea *key, int64 start, int64 end, ItemPointer row, void *arg)
{
	state_store_depart(arg, key, start, end, row);
}

/*
 * Folds the windows of an operator that read all of its state from the
 * heap: the rows of those that left go, and those whose newest state is
 * not in window_state are written there.
 */
static void
fold_windows(StepState *ss)
{
	Operator   *op = ss->op;
	StateRows	changed;
	wintab_iterator it;
	WindowEntry *e;

	each_dropped(op, add_departed, &ss->log_departed);
	rows_init(&changed);
	wintab_start_iterate(op->windows, &it);
	while ((e = op_next_window(op, &it)) != NULL)
	{
		if (e->gone || !(e->dirty || e->logged))
			continue;
		rows_add(&changed, e->k.key, e->k.start, e->k.end, e->fire_count, e->stored, e->saved);
		e->stored = true;
		e->logged = false;
	}
	write_state(ss->id, ss->key_groups, &ss->log_departed, &changed, op);
}

/*
 * Folds the store: the rows of the windows that left since the last fold
 * go, and every window whose newest state is not in window_state is
 * written there.
 */
static void
fold_store(StepState *ss)
{
	StateRows	gone;
	StateRows	changed;

	rows_init(&gone);
	rows_init(&changed);
	state_store_departures(ss->store, add_departed, &gone);
	state_store_fold(ss->store, add_stored, &changed);
	write_state(ss->id, ss->key_groups, &gone, &changed, ss->op);
	state_store_departures_done(ss->store);
}

/*
 * A step's changes as its state_log rows (state_log_write), written
 * into the heap and its index directly, as a fold writes window_state: an
 * INSERT's executor cost about as much as the rest of a step of one row.
 * An interval join's step writes one for about every hundred rows it keeps,
 * through one writer that opens the table and its indexes once.
 */
struct StateLogWriter
{
	Relation	rel;
	RowIndexes	ix;
	BlockNumber pages;			/* for heap_rows_reuse */
};

StateLogWriter *
state_log_open(void)
{
	StateLogWriter *w = palloc(sizeof(StateLogWriter));

	w->rel = windowing_table_open("state_log", RowExclusiveLock);
	row_indexes_open(&w->ix, w->rel);
	w->pages = InvalidBlockNumber;
	return w;
}

static void
log_part_write(StateLogWriter *w, int32 id, int64 step, int part, const char *bytes,
			   Size size)
{
	bytea	   *row = palloc(size + VARHDRSZ);
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	HeapTuple	tuple;

	SET_VARSIZE(row, size + VARHDRSZ);
	memcpy(VARDATA(row), bytes, size);
	values[0] = Int32GetDatum(id);
	values[1] = Int64GetDatum(step);
	values[2] = PointerGetDatum(row);
	values[3] = Int32GetDatum(part);
	tuple = heap_form_tuple(RelationGetDescr(w->rel), values, nulls);
	heap_rows_reuse(w->rel, tuple->t_len, &w->pages);
	simple_heap_insert(w->rel, tuple);
	row_indexes_insert(&w->ix, w->rel, tuple);
	/* a step may write many: each would otherwise fault in fresh memory */
	heap_freetuple(tuple);
	pfree(row);
}

/* A step's changes, in as many parts as they need (state_log_each joins them). */
void
state_log_write(StateLogWriter *w, int32 id, int64 step, const char *changes, Size size)
{
	Size		done = 0;
	int			part = 0;

	do
	{
		Size		n = Min(size - done, STATE_LOG_ROW_BYTES);

		log_part_write(w, id, step, part++, changes + done, n);
		done += n;
	} while (done < size);
}

void
state_log_close(StateLogWriter *w)
{
	row_indexes_close(&w->ix);
	table_close(w->rel, RowExclusiveLock);
	pfree(w);
}

/* One step's state_log rows, through a writer of its own. */
static void
state_log_insert(int32 id, int64 step, const char *changes, Size size)
{
	StateLogWriter *w = state_log_open();

	state_log_write(w, id, step, changes, size);
	state_log_close(w);
}

/* Writes the step's changes as its state_log rows. */
static void
log_changes(int32 id, int64 step, Operator *op)
{
	Size		size;
	char	   *changes = changes_of(op, &size);

	if (changes == NULL)
		return;
	state_log_insert(id, step, changes, size);
	if (op->log.steps++ == 0)
		op->log.first = step;
	op->log.bytes += size;
}

static void
put_departed(const bytea *key, int64 start, int64 end, ItemPointer row, void *arg)
{
	WindowKey	k = {(bytea *) key, start, end};

	put_bounds(arg, &k);
}

static void
put_logged(const bytea *key, const StoredWindow *w, void *arg)
{
	WindowKey	k = {(bytea *) key, w->start, w->end};

	put_window(arg, &k, w->fire_count, w->stored, w->state);
}

/*
 * The bytes of the row compact_log would write (put_departed, put_logged),
 * and how many windows that left it would hold (*departed).
 */
static int64
compacted_size(StateStore *st, int64 *departed)
{
	int64		departed_bytes;
	int64		logged;
	int64		logged_bytes;

	state_store_departed(st, departed, &departed_bytes);
	state_store_logged(st, &logged, &logged_bytes);
	return sizeof(int) + *departed * BOUNDS_BYTES + departed_bytes +
		logged * WINDOW_BYTES + logged_bytes;
}

/*
 * Replaces the pipeline's state_log rows by one, as step "step"'s: the
 * windows that left with a row in window_state, then the newest state of
 * every window whose newest state was in the log.  Read back, it leaves
 * what the rows it replaces left.  A live pipeline whose windows come and
 * go (short windows, sessions) has few such windows at any moment, so
 * that row is small, and writing it costs far less than a fold, which
 * writes a window_state row for each of them and deletes one for each
 * that left.  False, writing nothing, if it would not be at most
 * 1/STATE_LOG_COMPACTION of the log: then only a fold shortens the log.
 * The store keeps the row's size, so that a refusal costs nothing.
 */
static bool
compact_log(StepState *ss, int64 step)
{
	StringInfoData row;
	int64		departed;
	int64		size = compacted_size(ss->store, &departed);
	int			count = departed;

	if (size > ss->op->log.bytes / STATE_LOG_COMPACTION)
		return false;
	initStringInfo(&row);
	appendBinaryStringInfo(&row, (const char *) &count, sizeof(int));
	state_store_departures(ss->store, put_departed, &row);
	state_store_compact(ss->store, put_logged, &row);
	Assert(row.len == size);
	delete_log(ss->id, ss->op->log.first);
	state_log_insert(ss->id, step, row.data, row.len);
	ss->op->log = (StateLog) {1, row.len, step};
	return true;
}

/* Whether the step folds the state log rather than add to it. */
static bool
log_full(const Operator *op)
{
	return op->log.steps >= STATE_LOG_MAX_STEPS ||
		(op->log.steps >= STATE_LOG_STEPS && op->log.bytes >= STATE_LOG_BYTES) ||
		(op_moving_bounds(op) && op->log.bytes >= STATE_LOG_MOVING_BYTES);
}

/*
 * Whether a store of the pipeline may hold some of its keys and read the
 * others from the heap as the steps reach them: the heap tells when a
 * window is due by its end (or, for early timers, that any may be:
 * op_next_early), or none is due before the end of input.
 */
static bool
sheds_keys(const Operator *op)
{
	return op_due_by_end(op) || op_due_at_end(op);
}

/*
 * What the times a store keeps its windows due at depend on: a store made
 * under another allowed lateness or trigger is not used.  The trigger is
 * its kind and its number: 'early every 10 seconds' and 'early every 10
 * seconds of processing time' have the same one, on other clocks.
 */
static uint64
state_shape(const Operator *op)
{
	const char *kind = op->trigger->name;
	uint64		trigger = hash_bytes_extended((const unsigned char *) kind, strlen(kind),
											  (uint64) op->trigger_every);

	return hash_combine64(hash_combine64((uint64) op->lateness, (uint64) op->gone_until),
						  trigger);
}

/* Puts every live window of the operator into the store. */
static void
put_windows(StateStore *st, Operator *op)
{
	wintab_iterator it;
	WindowEntry *e;

	wintab_start_iterate(op->windows, &it);
	while ((e = op_next_window(op, &it)) != NULL)
		if (!e->gone)
			put_stored(st, op, e);
}

/*
 * Windows a partial store with room for all of the heap's reads ahead at
 * the end of a step that saves its state, for each row whose key the step
 * looked up (in memory or on the heap): whole keys in the primary key's
 * order, from where the last such read stopped.  A key read this way
 * costs a few entries of one leaf and rows of the pages its neighbours'
 * are on; a row of a key the store does not know costs a descent of the
 * primary key and a page of window_state of its own, four or five times
 * as much.  So a step's reading ahead costs about what its own rows' keys
 * do, and a store started after a restart holds every key after a few
 * hundred steps, instead of learning them only as rows name them, which
 * takes thousands of steps over a million keys.
 */
#define READ_AHEAD_PER_ROW 4

/*
 * A key's windows read from the heap that none of so far may be due: held
 * (copies, in the key's memory) until one is, or the key ends.
 */
typedef struct HeldKey
{
	List	   *windows;		/* SavedWindow * */
	bool		due;			/* one may be: the rest load as they come */
	int64		loaded;			/* windows loaded */
} HeldKey;

/* Window r of the key being read joins the operator, or waits in h. */
static void
hold_or_load(StepState *ss, HeldKey *h, const SavedWindow *r, int64 until)
{
	ListCell   *lc;
	SavedWindow *copy;

	if (!h->due && op_stored_due(ss->op, r->k.start, r->k.end, r->state, until))
	{
		h->due = true;
		foreach(lc, h->windows)
			load_saved(lfirst(lc), ss->op);
		h->loaded += list_length(h->windows);
	}
	if (h->due)
	{
		load_saved(r, ss->op);
		h->loaded++;
		return;
	}
	copy = palloc(sizeof(SavedWindow));
	*copy = *r;
	copy->k.key = DatumGetByteaPCopy(PointerGetDatum(r->k.key));
	copy->state = DatumGetByteaPCopy(PointerGetDatum(r->state));
	h->windows = lappend(h->windows, copy);
}

/*
 * The key whose windows h held or loaded is read: the store knows it if
 * they came in.  Returns how many did.
 */
static int64
key_read(StateStore *st, const bytea *key, bool unknown, const HeldKey *h, int64 *keys)
{
	if (unknown && h->due)
	{
		state_store_know(st, key);
		(*keys)++;
	}
	return h->loaded;
}

/*
 * Reads the windows of whole keys the store does not know into the
 * operator, in the primary key's order from the key after "from" (NULL:
 * the first), until at least "want" windows came in: the keys with a
 * window that may be due by "until" (op_stored_due; WMK_END: every key),
 * which the store knows from then on, where the others stay on the heap
 * alone.  *stop is the last key read (in the caller's memory), for the
 * next read to start after, or NULL past the last.  Their rows are their
 * newest states (a key the store does not know has no changes since the
 * last fold).  Returns how many windows came in, and adds their keys to
 * *keys.
 */
static int64
read_unknown(StepState *ss, const bytea *from, int64 want, int64 until, bytea **stop,
			 int64 *keys)
{
	StateStore *st = ss->store;
	int			nkeys = from != NULL ? 2 : 1;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "windowing read ahead",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext keycxt = AllocSetContextCreate(cxt, "windowing key read", ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	StateScan	ps;
	bytea	   *key = NULL;		/* the key whose rows come, a copy */
	bool		unknown = false;
	HeldKey		h = {NIL, false, 0};
	int64		loaded = 0;
	bool		more;

	scan_begin(&ps, ss->id, InvalidOid, nkeys, AccessShareLock);
	if (from != NULL)
		ScanKeyInit(&ps.keys[1], 2, BTGreaterStrategyNumber, F_BYTEAGT, PointerGetDatum(from));
	index_rescan(ps.scan, ps.keys, nkeys, NULL, 0);
	while ((more = scan_next(&ps)))
	{
		SavedWindow r;

		MemoryContextSwitchTo(ps.row);
		slot_getsomeattrs(ps.slot, 6);
		saved_window(ps.slot, &r);
		if (key == NULL || !keys_equal(key, r.k.key))
		{
			loaded += key_read(st, key, unknown, &h, keys);
			if (loaded >= want)
				break;
			MemoryContextReset(keycxt);
			MemoryContextSwitchTo(keycxt);
			key = DatumGetByteaPCopy(PointerGetDatum(r.k.key));
			unknown = !state_store_knows(st, key);
			h = (HeldKey) {NIL, false, 0};
		}
		if (unknown)
		{
			MemoryContextSwitchTo(keycxt);
			hold_or_load(ss, &h, &r, until);
		}
		MemoryContextSwitchTo(cxt);
		MemoryContextReset(ps.row);
	}
	if (!more)
		loaded += key_read(st, key, unknown, &h, keys);
	MemoryContextSwitchTo(cxt);
	scan_end(&ps);
	state_store_heap_windows(st, -loaded);
	MemoryContextSwitchTo(old);
	*stop = more ? DatumGetByteaPCopy(PointerGetDatum(key)) : NULL;
	MemoryContextDelete(cxt);
	return loaded;
}

/*
 * Reads ahead (READ_AHEAD_PER_ROW) the windows of keys the store does not
 * know, for state_save to put into the store.  None is due yet: a partial
 * store reads the heap's windows by due time up to the watermark as the
 * step goes.
 */
static void
read_ahead(StepState *ss)
{
	bytea	   *stop;
	int64		keys = 0;

	(void) read_unknown(ss, state_store_read_ahead(ss->store),
						READ_AHEAD_PER_ROW * (ss->hits + ss->misses), WMK_END, &stop, &keys);
	/* past the last key, the next read starts from the first */
	state_store_set_read_ahead(ss->store, stop);
}

/*
 * Writes step "step"'s window state.  The windows the step changed go into
 * one state_log row, with those that left, or window_state takes every
 * change logged so far.  One row per step instead of one per changed
 * window is what lets small steps keep up with a busy queue; folding the
 * log into window_state once it is full (log_full) keeps reading state
 * back from the heap short.  The rows of windows that left go from
 * window_state at the fold too, not as they leave (the log says they
 * left).  A step that read all of its state from the heap folds, so that
 * a pipeline loaded whole that does not fit in memory never logs (a
 * partial store folds the log when it starts: state_load).  Then the
 * windows go back into the store (a new one, if they came from the heap),
 * which becomes the pipeline's if the step commits.  A store whose keys
 * can be read back by key and by due time that outgrows the budget folds
 * too, so that the keys it sheds to the heap are there.
 */
void
state_save(StepState *ss, int64 step)
{
	Operator   *op = ss->op;
	bool		fold = ss->store == NULL || log_full(op);
	wintab_iterator it;
	WindowEntry *e;

	if (ss->keys_open)
		scan_end(&ss->keys);
	ss->keys_open = false;
	/* their newest states are not in window_state yet */
	wintab_start_iterate(op->windows, &it);
	while ((e = op_next_window(op, &it)) != NULL)
		if (!e->gone && e->dirty)
		{
			e->saved = op_serialize(op, e);
			e->logged = true;
		}
	if (ss->store == NULL)
	{
		fold_windows(ss);

		/*
		 * No copy of what cannot fit (a stored window takes that much at
		 * least), unless the store may shed keys down to the budget.
		 */
		if (!sheds_keys(op) &&
			!state_store_fits(op->windows->members * (int64) sizeof(StoredWindow)))
			return;
		ss->store = state_store_create(ss->id, state_shape(op), true);
		put_windows(ss->store, op);
		if (sheds_keys(op) && !state_store_fits(0))
			state_store_evict(ss->store);
	}
	else
	{
		bool		evict;

		if (ss->by_key && ss->hits + ss->misses > 0 && state_store_room_ahead(ss->store))
			read_ahead(ss);
		each_dropped(op, depart_from_store, ss->store);
		if (!ss->by_key)
			state_store_clear(ss->store);
		put_windows(ss->store, op);
		/* a store that reads its keys from the heap as needed can shed some */
		evict = sheds_keys(op) && !state_store_fits(0);
		if (evict || (fold && !compact_log(ss, step)))
			fold_store(ss);
		else if (!fold)
			log_changes(ss->id, step, op);
		if (evict)
			state_store_evict(ss->store);
	}
	state_store_done(ss->store, step, op->log, op->clock);
}

/*
 * The step changed nothing and ran no timer: a store it read whole, as its
 * clock passed a multiple of the trigger's interval, holds the state at
 * the step's clock too, so that the next steps read it by key (op_by_key)
 * rather than whole again until one saves.
 */
void
state_unchanged(StepState *ss)
{
	if (ss->store != NULL && !ss->by_key)
		state_store_set_clock(ss->store, ss->op->clock);
}

/*
 * Whether the step took windows out of the store, or read keys' windows
 * from the heap, which the store now counts as known: then it must save
 * them.  A step that read a key's windows (a watermark that reached their
 * timers, fired none of them) and did not put them back would leave a
 * store that knows the key and holds none of its windows.
 */
bool
state_taken(const StepState *ss)
{
	return ss->store != NULL && (state_store_taken(ss->store) || ss->misses > 0);
}

static int64
log_row_step(SPITupleTable *rows, uint64 i)
{
	bool		isnull;

	return DatumGetInt64(SPI_getbinval(rows->vals[i], rows->tupdesc, 1, &isnull));
}

/*
 * Gives fn each step's changes in the pipeline's state_log, in step order:
 * its step and its bytes (its parts joined), which last until fn returns
 * (fn runs no statement).  Returns how many steps there were.
 */
int
state_log_each(int32 id, StateLogFn fn, void *arg)
{
	Oid			argtype = INT4OID;
	Datum		idarg = Int32GetDatum(id);
	SPITupleTable *rows;
	uint64		n;
	int			steps = 0;
	StringInfoData joined;

	if (plans_execute("SELECT step, changes FROM windowing.state_log "
					  "WHERE pipeline_id OPERATOR(pg_catalog.=) $1 ORDER BY step, part",
					  1, &argtype, &idarg, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read window state");
	rows = SPI_tuptable;
	n = SPI_processed;
	initStringInfo(&joined);
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;
		int64		step = log_row_step(rows, i);
		bytea	   *changes = DatumGetByteaPP(SPI_getbinval(rows->vals[i], rows->tupdesc, 2,
															&isnull));
		bool		last = i + 1 == n || log_row_step(rows, i + 1) != step;

		if (last && joined.len == 0)
		{
			fn(step, VARDATA_ANY(changes), VARSIZE_ANY_EXHDR(changes), arg);
			steps++;
			continue;
		}
		appendBinaryStringInfo(&joined, VARDATA_ANY(changes), VARSIZE_ANY_EXHDR(changes));
		if (last)
		{
			fn(step, joined.data, joined.len, arg);
			steps++;
			resetStringInfo(&joined);
		}
	}
	pfree(joined.data);
	SPI_freetuptable(rows);
	return steps;
}

/* Where replay_log applies the log's steps. */
typedef struct LogReplay
{
	HTAB	   *stored;
	StateRows  *departed;
	int64	   *bytes;
} LogReplay;

static void
replay_changes(int64 step, const char *changes, Size size, void *arg)
{
	LogReplay  *r = arg;

	stored_changes(r->stored, changes, size, r->departed);
	*r->bytes += size;
}

/*
 * The pipeline's state_log rows applied, in step order, to a table of
 * windows (stored_begin), the windows they say left added to "departed";
 * returns how many there were, and their size (*bytes).
 */
static int
replay_log(HTAB *stored, int32 id, StateRows *departed, int64 *bytes)
{
	LogReplay	r = {stored, departed, bytes};

	*bytes = 0;
	return state_log_each(id, replay_changes, &r);
}

/* How heap_state_each reads window_state beneath state_log. */
typedef struct HeapLoad
{
	HTAB	   *logged;			/* the windows state_log changed */
	HTAB	   *departed;		/* the windows it says left */
	void		(*fn) (const SavedWindow *, void *);
	void	   *arg;
} HeapLoad;

/*
 * A window_state row goes to fn unless state_log changed it or says it
 * left; a changed window it has stays as in window_state, unless it left
 * and came back since (then its row is a former window's).
 */
static void
unlogged_row(const SavedWindow *r, void *arg)
{
	HeapLoad   *hl = arg;
	SavedWindow *w = hash_search(hl->logged, &r->k, HASH_FIND, NULL);
	bool		departed = hash_search(hl->departed, &r->k, HASH_FIND, NULL) != NULL;

	if (w != NULL)
		w->stored = !departed;
	else if (!departed)
		hl->fn(r, hl->arg);
}

/*
 * Gives fn every window of a pipeline's state on the heap: state_log is
 * replayed first (the changes of up to a thousand steps), then window_state
 * is read row by row beneath it, so that what is held at once is the log
 * and what fn keeps.  Returns the number of log rows and their size
 * (*bytes), and adds the windows the log says left to "departed".
 */
static int
heap_state_each(int32 id, StateRows *departed, int64 *bytes,
				void (*fn) (const SavedWindow *, void *), void *arg)
{
	HeapLoad	hl = {stored_begin(), NULL, fn, arg};
	int			steps = replay_log(hl.logged, id, departed, bytes);
	HASH_SEQ_STATUS seq;
	SavedWindow *w;

	hl.departed = op_window_table("windowing departed windows", sizeof(WindowKey));
	for (int i = 0; i < departed->n; i++)
	{
		const StateRow *d = &departed->rows[i];
		WindowKey	k = {(bytea *) d->key, d->start, d->end};

		hash_search(hl.departed, &k, HASH_ENTER, NULL);
	}
	heap_each(id, unlogged_row, &hl);
	hash_seq_init(&seq, hl.logged);
	while ((w = hash_seq_search(&seq)) != NULL)
		fn(w, arg);
	hash_destroy(hl.logged);
	hash_destroy(hl.departed);
	return steps;
}

/* Window state read back from the heap, all of it, into the operator. */
static void
load_heap(StepState *ss)
{
	/* which steps wrote the log is not known: a fold deletes all of it */
	ss->op->log.first = 0;
	ss->op->log.steps = heap_state_each(ss->id, &ss->log_departed, &ss->op->log.bytes,
										load_saved, ss->op);
}

/*
 * A statement on window_state from inside the step's reading of rows (the
 * queue may be read through SPI at that moment): a connection of its own.
 */
static void
read_state(const char *sql, int nargs, Oid *types, Datum *args)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (plans_execute(sql, nargs, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read window state");
}

/*
 * The windows of a key the store does not know, from the heap, through the
 * step's scan of keys (step_keys); returns how many there were.
 */
static int64
scan_key(Operator *op, StepState *ss, const bytea *key)
{
	StateScan  *ps = step_keys(ss);
	int64		n;

	pkey_scan_key(ps, key, NULL, NULL);
	n = scan_windows(ps, load_saved, op);
	state_store_heap_windows(ss->store, -n);
	state_store_know(ss->store, key);
	ss->misses++;
	return n;
}

/* The smallest of an int8 column of the one row SPI returned, or WMK_END if NULL. */
static int64
end_or_never(int column)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, column, &isnull);

	return isnull ? WMK_END : DatumGetInt64(d);
}

/*
 * The earliest a window whose entries' first end past "from" on the heap
 * is "end" may be due: its last instant, and no sooner than the next
 * window end on its kind's grid (a slice ends before the windows it is
 * in); WMK_END if there is none.
 */
static int64
due_after(const Operator *op, int64 end, int64 from)
{
	int64		grid = op_next_end(op, from);

	if (end == WMK_END)
		return WMK_END;
	return wmk_add(grid == WMK_NONE ? end : Max(end, grid), -1);
}

/*
 * The earliest a window on the heap may be due after "from": the first end
 * after it (a window not fired yet fires at its last instant, end - 1),
 * the first cleanup after it (a fired one ends lateness after that), or
 * the trigger's next early timer (op_next_early).  Rows
 * of keys the store knows count too, which only makes the next read come
 * sooner than needed.
 */
static int64
heap_next_due(Operator *op, StateStore *st, int64 from)
{
	Oid			types[3] = {INT4OID, INT8OID, INT8OID};
	Datum		args[3];
	int64		back = op_ends_before(op);
	int64		lively = wmk_add(from, -op->lateness);
	int64		next;

	args[0] = Int32GetDatum(state_store_pipeline(st));
	args[1] = Int64GetDatum(wmk_add(wmk_add(from, -back), 1));
	args[2] = Int64GetDatum(wmk_add(wmk_add(lively, -back), 1));
	read_state("SELECT (SELECT pg_catalog.min(window_end) FROM windowing.window_state "
			   "WHERE pipeline_id OPERATOR(pg_catalog.=) $1 AND window_end OPERATOR(pg_catalog.>) $2), "
			   "(SELECT pg_catalog.min(window_end) FROM windowing.window_state "
			   "WHERE pipeline_id OPERATOR(pg_catalog.=) $1 AND window_end OPERATOR(pg_catalog.>) $3)",
			   3, types, args);
	next = Min(Min(due_after(op, end_or_never(1), from),
				   wmk_add(due_after(op, end_or_never(2), lively), op->lateness)),
			   op_next_early(op, from));
	SPI_finish();
	return next;
}

/*
 * The store's entries of the keys with these hashes (keys_hash) brought
 * towards the processor's cache, for rows the operator is about to get:
 * their lookups (fetch_key) then wait on memory once for all of them.
 */
void
state_prefetch(const StepState *ss, const uint32 *hashes, int n)
{
	if (ss != NULL && ss->store != NULL)
		state_store_prefetch(ss->store, hashes, n);
}

/* The operator's hooks for windows it does not have yet. */
static void
fetch_key(Operator *op, const bytea *key)
{
	StepState  *ss = op->fetch_arg;

	if (state_store_take_key(ss->store, key, load_stored, op) || state_store_complete(ss->store))
		ss->hits++;
	else
		scan_key(op, ss, key);
}

/*
 * Windows read from the heap by due time at once: where the heap's windows
 * end close together (sessions), a watermark that moves at every row
 * would otherwise read the heap at every row.
 */
#define HEAP_DUE_AHEAD 1000

/*
 * How far a read of the heap by due time goes when the watermark reaches
 * "upto": to where the HEAP_DUE_AHEAD-th window ending after it fires (or
 * the last), so that the next read comes that many windows later.
 */
static int64
heap_ahead(StateStore *st, int64 upto)
{
	Oid			types[3] = {INT4OID, INT8OID, INT8OID};
	Datum		args[3];
	int64		end;

	if (upto == WMK_END)
		return upto;
	args[0] = Int32GetDatum(state_store_pipeline(st));
	args[1] = Int64GetDatum(wmk_add(upto, 1));
	args[2] = Int64GetDatum(HEAP_DUE_AHEAD);
	read_state("SELECT pg_catalog.max(window_end) FROM (SELECT window_end FROM windowing.window_state "
			   "WHERE pipeline_id OPERATOR(pg_catalog.=) $1 AND window_end OPERATOR(pg_catalog.>) $2 "
			   "ORDER BY window_end LIMIT $3) AS w",
			   3, types, args);
	end = end_or_never(1);
	SPI_finish();
	return end == WMK_END ? upto : Max(upto, wmk_add(end, -1));
}

/*
 * Windows due together come in batches of at least this many (whole keys),
 * each run before the next is read.
 */
#define DUE_BATCH 10000

/* The entries of window_state_by_end to read next: ends in (above, upto]. */
static void
by_end_range(DueScan *d, int64 above, int64 upto)
{
	ScanKeyInit(&d->by_end.keys[1], 2, BTGreaterStrategyNumber, F_INT8GT, Int64GetDatum(above));
	ScanKeyInit(&d->by_end.keys[2], 2, BTLessEqualStrategyNumber, F_INT8LE,
				Int64GetDatum(upto));
	index_rescan(d->by_end.scan, d->by_end.keys, 3, NULL, 0);
}

/*
 * Begins to read the windows on the heap whose timers run after the
 * store's heap_until and at or before "upto" (or further, heap_ahead, but
 * short of the trigger's next early timer after it), with every other
 * window of their keys, for the keys the store does not know (fetch_key),
 * unless none is due by then.  A window's timer is its firing, at its end
 * or up to fire_spread after, or its cleanup, the allowed lateness after
 * its end: such windows end in (from - spread, until] or in (from -
 * lateness, until - lateness], and their entries no more than
 * op_ends_before earlier (the slices of a sliding window).  Where the
 * lateness is longer than the read, the ends between the two ranges are
 * those of windows kept for their lateness, none due: they are not read.
 * An early timer of the trigger's own may be any open window's: a read
 * that passes one reads every key the store does not know, in the primary
 * key's order (read_unknown), a few index entries a key where one read by
 * end costs a descent, and takes those with a window that may be due, by
 * its end or the early timer its state holds.
 */
static void
due_scan_begin(Operator *op, StepState *ss, int64 upto)
{
	StateStore *st = ss->store;
	DueScan    *d = &ss->due;
	int64		from = state_store_heap_until(st);
	int64		next = state_store_heap_next(st);
	Oid			by_end = get_relname_relid("window_state_by_end",
										   get_namespace_oid("windowing", false));
	int64		early = op_next_early(op, upto);
	int64		back;
	int64		fired_above;
	int64		fired_upto;
	int64		open_from = from;
	int64		open_above;

	if (next == WMK_NONE)
		next = heap_next_due(op, st, from);
	if (next > upto)
	{
		state_store_set_heap_due(st, upto, next);
		return;
	}
	d->until = heap_ahead(st, upto);
	if (early != WMK_END)
		d->until = Min(d->until, early - 1);
	early = op_next_early(op, from);
	d->every = early != WMK_END && early <= d->until;
	d->after = NULL;
	d->active = true;
	if (d->every)
		return;
	scan_begin(&d->by_end, ss->id, by_end, 3, AccessShareLock);
	back = op_ends_before(op);
	fired_above = wmk_add(wmk_add(wmk_add(from, -op->lateness), -back), 1);
	fired_upto = wmk_add(wmk_add(d->until, -op->lateness), 1);
	/*
	 * A store that never read the heap by due time (a new one) reads the
	 * windows that may fire from the watermark the step began at: every
	 * window whose firing a committed step's watermark passed has fired.
	 * Those whose lateness may end it reads from the start: the windows
	 * that ended before them were cleaned up, so that costs nothing more.
	 */
	if (open_from == WMK_NONE)
		open_from = ss->start_wm;
	open_above = wmk_add(wmk_add(wmk_add(open_from, -op->spread), -back), 1);
	d->then_upto = WMK_NONE;
	if (fired_upto >= open_above)
		by_end_range(d, Min(fired_above, open_above), wmk_add(d->until, 1));
	else
	{
		by_end_range(d, fired_above, fired_upto);
		d->then_above = open_above;
		d->then_upto = wmk_add(d->until, 1);
	}
}

/* The read is done: the store knows where the heap is read to. */
static void
due_scan_done(Operator *op, StepState *ss)
{
	ss->due.active = false;
	state_store_set_heap_due(ss->store, ss->due.until,
							 heap_next_due(op, ss->store, ss->due.until));
}

/*
 * Reads on until at least "max" windows came in or the range is done;
 * returns how many came in.  Done, the store knows where the heap is read
 * to, and where its next window is due.
 */
static int64
due_scan_next(Operator *op, StepState *ss, int64 max)
{
	DueScan    *d = &ss->due;
	int64		loaded = 0;

	if (d->every)
	{
		/* the last key read lives as long as the step's state */
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(ss));
		bytea	   *after = d->after;

		loaded = read_unknown(ss, after, max, d->until, &d->after, &ss->misses);
		MemoryContextSwitchTo(old);
		if (after != NULL)
			pfree(after);
		if (d->after == NULL)
			due_scan_done(op, ss);
		return loaded;
	}
	while (loaded < max)
	{
		MemoryContext old;
		bytea	   *key;

		if (!scan_next(&d->by_end))
		{
			if (d->then_upto != WMK_NONE)
			{
				by_end_range(d, d->then_above, d->then_upto);
				d->then_upto = WMK_NONE;
				continue;
			}
			scan_end(&d->by_end);
			due_scan_done(op, ss);
			break;
		}
		slot_getsomeattrs(d->by_end.slot, 2);
		old = MemoryContextSwitchTo(d->by_end.row);
		key = DatumGetByteaPP(d->by_end.slot->tts_values[1]);
		MemoryContextSwitchTo(old);
		if (!state_store_knows(ss->store, key))
			loaded += scan_key(op, ss, key);
		MemoryContextReset(d->by_end.row);
	}
	return loaded;
}

/* Windows due by "upto" from the store, in the order the operator fires keys. */
static bool
take_due(Operator *op, StateStore *st, int64 upto, int64 max)
{
	return state_store_take_due(st, upto, max, op->key_order.prefix, op->key_order.arg,
								load_stored, op);
}

/*
 * The windows whose timers run at or before "upto" come in from the heap
 * and the store, a batch at a time: true while some are left out.  Where
 * none is due before the end of input, the heap is read then, whole.
 */
static bool
fetch_due(Operator *op, int64 upto)
{
	StepState  *ss = op->fetch_arg;
	StateStore *st = ss->store;
	int64		loaded = 0;

	if (op_due_at_end(op))
	{
		bytea	   *stop;

		if (upto == WMK_END && !state_store_complete(st))
			(void) read_unknown(ss, NULL, PG_INT64_MAX, WMK_END, &stop, &ss->misses);
		return take_due(op, st, upto, DUE_BATCH);
	}
	if (!ss->due.active && !state_store_complete(st) && upto > state_store_heap_until(st))
		due_scan_begin(op, ss, upto);
	if (ss->due.active)
	{
		loaded = due_scan_next(op, ss, DUE_BATCH);
		if (ss->due.active)
			return true;
	}
	return take_due(op, st, upto, DUE_BATCH - loaded);
}

/*
 * The operator's hook for the windows that left in a batch of due windows
 * whose row in window_state is their newest state: their rows go, in the
 * primary key's order.
 */
static void
delete_rows(Operator *op, List *entries)
{
	StepState  *ss = op->fetch_arg;
	StateRows	rows;
	HeapDelta	d = {0, 0};
	ListCell   *lc;

	rows_init(&rows);
	foreach(lc, entries)
	{
		WindowEntry *e = lfirst(lc);

		rows_add(&rows, e->k.key, e->k.start, e->k.end, 0, true, NULL)->row = e->row;
	}
	sort_rows(rows.rows, rows.n);
	delete_batch(ss->id, rows.rows, rows.n, false, ss->key_groups, &d);
	size_add(ss->id, &d);
	pfree(rows.rows);
}

/*
 * Folds state_log into window_state, so that window_state alone is the
 * state of the windows a partial store does not hold.
 */
static void
fold_into_heap(int32 id, int key_groups)
{
	HTAB	   *logged = stored_begin();
	HASH_SEQ_STATUS seq;
	SavedWindow *w;
	StateRows	gone;
	StateRows	changed;
	int64		bytes;
	int			steps;

	rows_init(&gone);
	rows_init(&changed);
	steps = replay_log(logged, id, &gone, &bytes);
	hash_seq_init(&seq, logged);
	while ((w = hash_seq_search(&seq)) != NULL)
		rows_add(&changed, w->k.key, w->k.start, w->k.end, w->fire_count, w->stored, w->state);
	write_heap(id, key_groups, &gone, &changed, (StateLog) {steps, bytes, 0});
}

static void
fold_log(StepState *ss)
{
	fold_into_heap(ss->id, ss->key_groups);
	ss->op->log = (StateLog) {0};
}

/* An int[] of n ids. */
static Datum
id_array(const int32 *ids, int n)
{
	Datum	   *items = palloc(sizeof(Datum) * n);

	for (int i = 0; i < n; i++)
		items[i] = Int32GetDatum(ids[i]);
	return PointerGetDatum(construct_array(items, n, INT4OID, sizeof(int32), true, TYPALIGN_INT));
}

/*
 * A pipeline's parallelism changes: the state of its parts "from" (their
 * ids), all on the heap once their logs are folded, goes by key group to
 * the parts "to" (to[k] the id of part k of nto).  The stores of the parts
 * in memory are not used again: the caller moves every part's step number
 * on, which no store holds.
 */
void
state_repartition(const int32 *from, int nfrom, const int32 *to, int nto, int key_groups)
{
	Oid			types[4] = {INT4ARRAYOID, INT4ARRAYOID, INT4OID, INT4OID};
	Datum		args[4] = {id_array(from, nfrom), id_array(to, nto), Int32GetDatum(key_groups),
	Int32GetDatum(nto)};

	for (int i = 0; i < nfrom; i++)
	{
		state_store_forget(from[i]);
		fold_into_heap(from[i], key_groups);
	}
	run_on_state("UPDATE windowing.window_state w SET pipeline_id = "
				 "($2::pg_catalog.int4[])[windowing._key_part(w.key_group, $3, $4) OPERATOR(pg_catalog.+) 1] "
				 "WHERE w.pipeline_id OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.int4[]) "
				 "AND w.pipeline_id OPERATOR(pg_catalog.<>) "
				 "($2::pg_catalog.int4[])[windowing._key_part(w.key_group, $3, $4) OPERATOR(pg_catalog.+) 1]",
				 4, types, args, SPI_OK_UPDATE);
	run_on_state("DELETE FROM windowing.state_size "
				 "WHERE pipeline_id OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.int4[] "
				 "OPERATOR(pg_catalog.||) $2::pg_catalog.int4[])",
				 2, types, args, SPI_OK_DELETE);
	run_on_state("INSERT INTO windowing.state_size (pipeline_id, windows, bytes) "
				 "SELECT pipeline_id, pg_catalog.count(*), "
				 "pg_catalog.sum(pg_catalog.octet_length(state)) FROM windowing.window_state "
				 "WHERE pipeline_id OPERATOR(pg_catalog.=) ANY ($2::pg_catalog.int4[]) "
				 "GROUP BY pipeline_id", 2, types, args, SPI_OK_INSERT);
}

/*
 * The pipeline's windows in window_state: a partial store counts those it
 * has not read, so that the open windows it reports are all of them.
 */
static int64
heap_count(int32 id)
{
	Oid			argtype = INT4OID;
	Datum		arg = Int32GetDatum(id);
	int64		n;
	bool		isnull;

	read_state("SELECT COALESCE((SELECT windows FROM windowing.state_size "
			   "WHERE pipeline_id OPERATOR(pg_catalog.=) $1), 0)", 1, &argtype, &arg);
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return n;
}

/* What load_unknown reads window_state with. */
typedef struct UnknownLoad
{
	Operator   *op;
	StateStore *st;
} UnknownLoad;

static void
load_unknown_row(const SavedWindow *r, void *arg)
{
	UnknownLoad *ul = arg;

	if (!state_store_knows(ul->st, r->k.key))
		load_saved(r, ul->op);
}

/*
 * Whole: the windows on the heap of the keys a partial store does not know
 * join the operator, then the store's own.
 */
static void
load_unknown(Operator *op, StateStore *st, int32 id)
{
	UnknownLoad ul = {op, st};

	heap_each(id, load_unknown_row, &ul);
}

/* How state_peek hands each window to the operator. */
typedef struct Peek
{
	Operator   *op;
	StateStore *st;
	void		(*fn) (WindowEntry *, void *);
	void	   *arg;
	MemoryContext cxt;			/* a window's, reset after it */
} Peek;

static void
peek_window(Peek *p, const bytea *key, int64 start, int64 end, const bytea *state)
{
	MemoryContext old = MemoryContextSwitchTo(p->cxt);

	op_peek(p->op, (bytea *) key, start, end, (bytea *) state, p->fn, p->arg);
	MemoryContextSwitchTo(old);
	MemoryContextReset(p->cxt);
}

static void
peek_saved(const SavedWindow *w, void *arg)
{
	peek_window(arg, w->k.key, w->k.start, w->k.end, w->state);
}

static void
peek_stored(const bytea *key, const StoredWindow *w, void *arg)
{
	peek_window(arg, key, w->start, w->end, w->state);
}

static void
peek_unknown(const SavedWindow *w, void *arg)
{
	if (!state_store_knows(((Peek *) arg)->st, w->k.key))
		peek_saved(w, arg);
}

/*
 * The windows of the state left by step "steps" go to fn one at a time
 * (op_peek), none of them into the operator, which must be of a kind
 * whose open windows are its stored windows (op_open_as_stored): from
 * this process's store if it holds that step's (and the heap's windows of
 * the keys a partial store does not know), else from the heap and the
 * log over it.  What is held at once is the log and one window.
 */
void
state_peek(Operator *op, int32 id, int64 steps, void (*fn) (WindowEntry *, void *), void *arg)
{
	Peek		p = {op, state_store_find(id, steps, state_shape(op)), fn, arg,
		AllocSetContextCreate(CurrentMemoryContext, "windowing peek", ALLOCSET_DEFAULT_SIZES)};

	if (p.st != NULL)
	{
		state_store_each(p.st, peek_stored, &p);
		if (!state_store_complete(p.st))
			heap_each(id, peek_unknown, &p);
	}
	else
	{
		StateRows	departed;
		int64		bytes;

		rows_init(&departed);
		(void) heap_state_each(id, &departed, &bytes, peek_saved, &p);
	}
	MemoryContextDelete(p.cxt);
}

/*
 * The window state left by step "steps", for the operator.  From this
 * process's store if it holds that step's: a key's windows and those whose
 * timers come due are taken out as the step needs them (by_key), or, for
 * kinds that need them all and where the caller asks for all, every window
 * is loaded.  The store must match the definition the operator has: its
 * due times follow the allowed lateness and the trigger.  Without one, a
 * kind whose due windows can be found by their end starts a partial store
 * and reads the heap by key and by end as the step goes (after folding
 * state_log into window_state), or a complete one if the heap has none of
 * its windows (a new pipeline: its new keys need no looking up); other
 * kinds read all of the heap tables
 * (window_state, then the changes state_log holds over it, in step order).
 * The heap is read with a fresh snapshot: the previous step may be of this
 * very transaction.
 */
StepState *
state_load(Operator *op, int32 id, int key_groups, int64 steps, bool by_key)
{
	StepState  *ss = palloc0(sizeof(StepState));

	ss->op = op;
	ss->id = id;
	ss->key_groups = key_groups;
	rows_init(&ss->log_departed);
	ss->start_wm = op->wm.value;
	ss->store = state_store_find(id, steps, state_shape(op));
	ss->by_key = by_key &&
		op_by_key(op, ss->store != NULL ? state_store_clock(ss->store) : WMK_NONE) &&
		(ss->store != NULL || sheds_keys(op));
	if (!ss->by_key)
		ereport(DEBUG1,
				(errmsg_internal("a step of pipeline %d reads every window of its state", id)));
	if (ss->store != NULL)
		op->log = state_store_log(ss->store);
	else if (ss->by_key)
	{
		int64		on_heap;

		/* the heap's windows come in as the step reaches them */
		fold_log(ss);
		if (!state_store_spilled_windows(id, steps, &on_heap))
			on_heap = heap_count(id);
		ss->store = state_store_create(id, state_shape(op), on_heap == 0);
		state_store_heap_windows(ss->store, on_heap);
	}
	else
	{
		load_heap(ss);
		return ss;
	}
	if (!ss->by_key)
	{
		if (!state_store_complete(ss->store))
			load_unknown(op, ss->store, id);
		state_store_each(ss->store, load_stored, op);
		return ss;
	}
	op->fetch_key = fetch_key;
	op->fetch_due = fetch_due;
	op->delete_rows = delete_rows;
	op->fetch_arg = ss;
	return ss;
}

/* The keys the step found in memory, and those it read from the heap. */
void
state_counts(const StepState *ss, int64 *hits, int64 *misses)
{
	*hits = ss->hits;
	*misses = ss->misses;
}


PG_FUNCTION_INFO_V1(windowing_state_windows);
PG_FUNCTION_INFO_V1(windowing_state_memory_windows);
PG_FUNCTION_INFO_V1(windowing_state_memory_bytes);
PG_FUNCTION_INFO_V1(windowing_forget_state);

/* What the process holding a pipeline's state of a step says of it. */
static bool
held_state(FunctionCallInfo fcinfo, int64 *memory_windows, int64 *windows, int64 *bytes)
{
	return state_slots_get(PG_GETARG_INT32(0), PG_GETARG_INT64(1), memory_windows, windows,
						   bytes);
}

/*
 * _state_windows(id, steps): the pipeline's open windows as the process
 * that holds its state of that step counts them (those of a partial store
 * on the heap alone too), or NULL if none does.
 */
Datum
windowing_state_windows(PG_FUNCTION_ARGS)
{
	int64		memory_windows;
	int64		windows;
	int64		bytes;

	if (!held_state(fcinfo, &memory_windows, &windows, &bytes))
		PG_RETURN_NULL();
	PG_RETURN_INT64(windows);
}

/* _state_memory_windows(id, steps): those of them in that process's memory. */
Datum
windowing_state_memory_windows(PG_FUNCTION_ARGS)
{
	int64		memory_windows;
	int64		windows;
	int64		bytes;

	if (!held_state(fcinfo, &memory_windows, &windows, &bytes))
		PG_RETURN_INT64(0);
	PG_RETURN_INT64(memory_windows);
}

/* _state_memory_bytes(id, steps): the pipeline's state held in memory. */
Datum
windowing_state_memory_bytes(PG_FUNCTION_ARGS)
{
	int64		memory_windows;
	int64		windows;
	int64		bytes;

	if (!held_state(fcinfo, &memory_windows, &windows, &bytes))
		PG_RETURN_INT64(0);
	PG_RETURN_INT64(bytes);
}

/* _forget_state(id): a pipeline's state leaves memory, wherever it is. */
Datum
windowing_forget_state(PG_FUNCTION_ARGS)
{
	state_store_forget(PG_GETARG_INT32(0));
	PG_RETURN_VOID();
}
