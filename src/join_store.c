/*
 * join_store.c
 *		The rows an interval join keeps for matching, by key, in the memory
 *		of the process that steps it.
 *
 * Each side of an interval join keeps its rows until the watermark shows
 * that nothing on time can meet them (join.c).  Here they are held by the
 * hash of their key, and each side's by time too (a list of the rows that
 * came in order of time, a heap of the others), so that a new row finds
 * the rows it meets with one lookup and the watermark finds the rows that
 * leave without a scan: a step costs the rows it reads and the rows that
 * leave, not all the rows kept (Flink's heap state backend).
 *
 * The durable copy is in state_log, written by each step that keeps rows:
 * the rows it kept that were still kept at its end (whether each met a row
 * yet), and the rows of earlier steps that met their first row in it,
 * which an outer join must not write as unmatched.  Its rows are at most a
 * page each, numbered in the order they were written, so that they need
 * no TOAST and leave as their rows do.  A log row goes once every row it
 * holds or marks has left.  Reading the state back (after a restart, or
 * when another process stepped the pipeline) is reading those log rows in
 * order and dropping the rows the watermark passed: a step leaves no row
 * the watermark passed.  Joins made by earlier
 * releases kept their rows in their state tables: those rows are read
 * too, and the next step logs them and empties the tables.
 *
 * Transactions as for a pipeline's windows (held_state.c): a store
 * changed by a transaction is the pipeline's state once that commits, and
 * its slot says so to every backend; at abort, at PREPARE, or when a
 * subtransaction that changed it rolls back, it is thrown away and the
 * next step reads the log.
 */
#include "compat.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "lib/ilist.h"
#include "lib/pairingheap.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "held_state.h"
#include "join_store.h"
#include "plans.h"
#include "prefetch.h"
#include "row_arena.h"
#include "state.h"
#include "state_slots.h"
#include "state_store.h"

/*
 * A state_log row (its "step" is the row's number, in the order the rows
 * were written), and how many kept rows it holds or marks.
 */
typedef struct LogRow
{
	int64		number;
	int64		live;
} LogRow;

/* A kept row, its key's values (pointing into it) and the row after it. */
typedef struct JoinRow
{
	union
	{
		dlist_node	list;		/* in its side's rows that came in order */
		pairingheap_node heap;	/* or among those that did not */
	}			by_time;
	/* its key's rows of its side, in order of time */
	struct JoinRow *older;
	struct JoinRow *newer;
	int64		ts;
	int64		seq;			/* arrival number in its queue */
	LogRow	   *log;			/* the state_log row that holds it; NULL:
								 * none yet */
	LogRow	   *mark_log;		/* the one that says it met a row */
	uint32		hash;
	uint8		side;
	bool		matched;		/* it met a row */
	bool		keyed;			/* no key column is NULL: it may meet rows */
	bool		in_heap;		/* by_time is its place in the heap */
	bool		gone;			/* it left: freed once the step is logged */
	bool		in_arena;		/* in the store's arena, not its context */
	Datum	   *keys;
	Datum		row;			/* a composite of its side's row type */
} JoinRow;

/* Rows taken at a time by join_store_meet_all. */
#define ROWS_AHEAD 16

/*
 * A store's rows go into its arena (row_arena.c) once they take this much
 * memory: a few rows need no huge page of their own.
 */
#define ARENA_AFTER (4 * 1024 * 1024)

/*
 * The keys' table: each slot holds the latest row of each side whose keys
 * hash to its value, the others linked from it by time, so that finding
 * a key's rows costs one lookup (its slot moves as the table changes,
 * which the rows do not point at).
 */
typedef struct KeySlot
{
	uint32		hash;
	char		status;
	JoinRow    *latest[2];
} KeySlot;

#define SH_PREFIX keyslots
#define SH_ELEMENT_TYPE KeySlot
#define SH_KEY_TYPE uint32
#define SH_KEY hash
#define SH_HASH_KEY(tb, key) (key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#define SH_USE_NONDEFAULT_ALLOCATOR
#include "lib/simplehash.h"

/*
 * The keys' table as simplehash allocates it, but asking for huge pages
 * before it is zeroed: at a million keys it is 24MB, all new memory each
 * time it grows.
 */
static inline void *
keyslots_allocate(keyslots_hash *tb, Size size)
{
	void	   *p = MemoryContextAllocExtended(tb->ctx, size, MCXT_ALLOC_HUGE);

	advise_huge_pages(p, size);
	memset(p, 0, size);
	return p;
}

static inline void
keyslots_free(keyslots_hash *tb, void *p)
{
	pfree(p);
}

struct JoinStore
{
	HeldState	held;			/* first: a JoinStore is a HeldState */
	const JoinLayout *layout;	/* the current step's */
	MemoryContext cxt;
	MemoryContext rows_cxt;		/* the rows: they come and go nearly in
								 * order, so a generation context, which
								 * does not round their sizes up */
	RowArena   *arena;			/* and past ARENA_AFTER bytes of them */
	keyslots_hash *keys;		/* the rows of each key, by hash */
	/*
	 * Each side's rows by time: those that came in order of time in a list
	 * (the next to leave at its head), the others in a heap.
	 */
	dlist_head	in_order[2];
	pairingheap *by_time[2];
	JoinRow    *unkeyed[2];		/* the latest row with a NULL key column, which
								 * meets none */
	int64		rows;
	Size		bytes;
	List	   *fresh;			/* JoinRow *, kept since the last log row */
	List	   *unmet[2];		/* JoinRow *, each side's read, to meet */
	List	   *marked;			/* JoinRow *, logged, met a row since */
	List	   *left;			/* JoinRow *, gone since */
	List	   *done_rows;		/* LogRow *, log rows whose rows all left */
	int64		next_log;		/* the number of the next log row */
	bool		legacy;			/* rows read from the state tables */
	bool		fits;			/* within what windowing.state_memory leaves
								 * beside the process's other state: kept
								 * after the step */
};

/* Earlier rows first: pairingheap keeps the greatest on top. */
static int
earlier_first(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	int64		ta = pairingheap_const_container(JoinRow, by_time.heap, a)->ts;
	int64		tb = pairingheap_const_container(JoinRow, by_time.heap, b)->ts;

	return ta < tb ? 1 : ta > tb ? -1 : 0;
}

/*
 * The hash and equality of the key columns' types, which the join compares
 * with "=", as a batch join would.
 */
void
join_layout_keys(JoinLayout *layout)
{
	int			n = layout->nkeys;

	layout->hash = palloc0(sizeof(FmgrInfo) * n);
	layout->eq = palloc0(sizeof(FmgrInfo) * n);
	layout->collations = palloc(sizeof(Oid) * n);
	for (int k = 0; k < n; k++)
	{
		Form_pg_attribute att = TupleDescAttr(layout->desc[0], layout->keys[0][k] - 1);
		TypeCacheEntry *tc = lookup_type_cache(att->atttypid,
											   TYPECACHE_HASH_PROC_FINFO | TYPECACHE_EQ_OPR_FINFO);

		if (!OidIsValid(tc->hash_proc_finfo.fn_oid) || !OidIsValid(tc->eq_opr_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("join key column \"%s\" has type %s, which has no hash function",
							NameStr(att->attname), format_type_be(att->atttypid)),
					 errhint("Join on columns of types with a hash operator class.")));
		fmgr_info_copy(&layout->hash[k], &tc->hash_proc_finfo, CurrentMemoryContext);
		fmgr_info_copy(&layout->eq[k], &tc->eq_opr_finfo, CurrentMemoryContext);
		layout->collations[k] = att->attcollation;
	}
}

/* A store thrown away (HeldStateKind.free), or one never kept. */
static void
free_store(HeldState *h)
{
	JoinStore  *st = (JoinStore *) h;

	row_arena_destroy(st->arena);
	MemoryContextDelete(st->cxt);
	pfree(st);
}

/* At commit (HeldStateKind.commit): kept if it fits. */
static bool
commit_store(HeldState *h)
{
	JoinStore  *st = (JoinStore *) h;

	if (!st->fits)
		return false;
	state_slots_publish(&h->slot, h->version, st->rows, st->rows, st->bytes);
	return true;
}

static int64
held_bytes(HeldState *h)
{
	return ((JoinStore *) h)->bytes;
}

static const HeldStateKind join_kind = {commit_store, free_store, held_bytes};

static JoinStore *
lookup(int32 pipeline_id)
{
	return (JoinStore *) held_state_lookup(pipeline_id, &join_kind);
}

/* A store join_store_read read without keeping it. */
void
join_store_free(JoinStore *st)
{
	free_store(&st->held);
}

/* The store is the current transaction's until it ends. */
void
join_store_changing(JoinStore *st)
{
	held_state_changing(&st->held);
}

/*
 * The pipeline's store if it holds the state of step "version", the
 * committed one (or one of this transaction's earlier steps); else NULL,
 * and any other store of the pipeline is thrown away.
 */
JoinStore *
join_store_find(int32 pipeline_id, int64 version, const JoinLayout *layout)
{
	JoinStore  *st = lookup(pipeline_id);

	if (st == NULL)
		return NULL;
	if (held_state_current(&st->held, version))
	{
		st->layout = layout;
		return st;
	}
	if (!st->held.changing)
		held_state_discard(&st->held);
	return NULL;
}

static JoinStore *
create(int32 pipeline_id, const JoinLayout *layout)
{
	JoinStore  *st = MemoryContextAllocZero(TopMemoryContext, sizeof(JoinStore));
	MemoryContext old;

	held_state_init(&st->held, &join_kind, pipeline_id);
	st->layout = layout;
	st->cxt = AllocSetContextCreate(TopMemoryContext, "windowing join state",
									ALLOCSET_DEFAULT_SIZES);
	/*
	 * Blocks below malloc's threshold for mapping memory of its own: a
	 * block freed goes back to malloc's heap for the next step's rows,
	 * rather than back to the kernel, to be faulted in again page by page.
	 */
	st->rows_cxt = GenerationContextCreate(st->cxt, "windowing join rows", 0, 64 * 1024,
										   64 * 1024);
	st->arena = row_arena_create(st->cxt);
	st->keys = keyslots_create(st->cxt, 1024, NULL);
	old = MemoryContextSwitchTo(st->cxt);
	for (int i = 0; i < 2; i++)
	{
		st->by_time[i] = pairingheap_allocate(earlier_first, NULL);
		dlist_init(&st->in_order[i]);
	}
	MemoryContextSwitchTo(old);
	return st;
}

/* Whether rows a and b of different sides have equal keys. */
static bool
keys_equal(const JoinStore *st, const JoinRow *a, const JoinRow *b)
{
	const JoinLayout *l = st->layout;

	if (a->hash != b->hash)
		return false;
	for (int k = 0; k < l->nkeys; k++)
		if (!DatumGetBool(FunctionCall2Coll(&l->eq[k], l->collations[k], a->keys[k], b->keys[k])))
			return false;
	return true;
}

/* The bytes of a kept row before its composite: the row, its key's values. */
static Size
row_head(const JoinStore *st)
{
	return MAXALIGN(sizeof(JoinRow)) + MAXALIGN(sizeof(Datum) * st->layout->nkeys);
}

/* The memory row r takes. */
static Size
row_space(const JoinStore *st, JoinRow *r)
{
	if (!r->in_arena)
		return GetMemoryChunkSpace(r);
	return MAXALIGN(row_head(st) + VARSIZE(DatumGetPointer(r->row)));
}

/* A copy of composite "row" of "side" as a kept row, its key read. */
static JoinRow *
new_row(JoinStore *st, int side, Datum row, int64 ts, int64 seq)
{
	const JoinLayout *l = st->layout;
	struct varlena *v = pg_detoast_datum((struct varlena *) DatumGetPointer(row));
	Size		head = row_head(st);
	Size		size = head + VARSIZE(v);
	JoinRow    *r = st->bytes >= ARENA_AFTER ? row_arena_alloc(st->arena, size) : NULL;
	bool		in_arena = r != NULL;
	HeapTupleData tuple;

	if (!in_arena)
		r = MemoryContextAlloc(st->rows_cxt, size);
	memset(r, 0, sizeof(JoinRow));
	r->in_arena = in_arena;
	r->ts = ts;
	r->seq = seq;
	r->side = side;
	r->keys = (Datum *) ((char *) r + MAXALIGN(sizeof(JoinRow)));
	memcpy((char *) r + head, v, VARSIZE(v));
	r->row = PointerGetDatum((char *) r + head);
	tuple.t_data = (HeapTupleHeader) DatumGetPointer(r->row);
	tuple.t_len = HeapTupleHeaderGetDatumLength(tuple.t_data);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = InvalidOid;
	r->keyed = true;
	for (int k = 0; k < l->nkeys; k++)
	{
		bool		isnull;

		r->keys[k] = heap_getattr(&tuple, l->keys[side][k], l->desc[side], &isnull);
		if (isnull)
			r->keyed = false;
		else
			r->hash = hash_combine(r->hash,
								   DatumGetUInt32(FunctionCall1Coll(&l->hash[k], l->collations[k],
																	r->keys[k])));
	}
	st->rows++;
	st->bytes += row_space(st, r);
	return r;
}

/*
 * Row r joins the rows ending at *latest, which are in order of time: rows
 * come nearly in that order, so the place is found from the latest.
 */
static void
sorted_add(JoinRow **latest, JoinRow *r)
{
	JoinRow    *newer = NULL;
	JoinRow    *o = *latest;

	while (o != NULL && o->ts > r->ts)
	{
		newer = o;
		o = o->older;
	}
	r->older = o;
	r->newer = newer;
	if (o != NULL)
		o->newer = r;
	if (newer != NULL)
		newer->older = r;
	else
		*latest = r;
}

/*
 * Row r leaves the rows ending at *latest, which only the latest row needs
 * (latest may be NULL for any other).
 */
static void
unlink_row(JoinRow **latest, JoinRow *r)
{
	if (r->older != NULL)
		r->older->newer = r->newer;
	if (r->newer != NULL)
		r->newer->older = r->older;
	else
		*latest = r->older;
}

/*
 * Row r joins its side's rows: by key (if it has one: else unkeyed) and by
 * time.  The key's slot, valid until the table next changes.
 */
static KeySlot *
keep(JoinStore *st, JoinRow *r)
{
	KeySlot    *ks = NULL;

	if (r->keyed)
	{
		bool		found;

		ks = keyslots_insert(st->keys, r->hash, &found);
		if (!found)
			ks->latest[0] = ks->latest[1] = NULL;
		sorted_add(&ks->latest[r->side], r);
	}
	else
		sorted_add(&st->unkeyed[r->side], r);
	r->in_heap = !dlist_is_empty(&st->in_order[r->side]) &&
		dlist_tail_element(JoinRow, by_time.list, &st->in_order[r->side])->ts > r->ts;
	if (r->in_heap)
		pairingheap_add(st->by_time[r->side], &r->by_time.heap);
	else
		dlist_push_tail(&st->in_order[r->side], &r->by_time.list);
	return ks;
}

/* Row r met one: an outer join will not write it alone. */
static void
mark(JoinStore *st, JoinRow *r)
{
	if (r->matched)
		return;
	r->matched = true;
	if (r->log != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(st->cxt);

		st->marked = lappend(st->marked, r);
		MemoryContextSwitchTo(old);
	}
}

/*
 * A new row of "side", a copy of composite "row": kept, and met with the
 * other side's kept rows, by join_store_meet_all.
 */
void
join_store_row(JoinStore *st, int side, Datum row, int64 ts, int64 seq)
{
	JoinRow    *r = new_row(st, side, row, ts, seq);
	MemoryContext old = MemoryContextSwitchTo(st->cxt);

	st->unmet[side] = lappend(st->unmet[side], r);
	MemoryContextSwitchTo(old);
}

/*
 * The latest kept row of the other side that new row r may meet, brought
 * towards the processor's cache, once the prefetch of r's slot has had
 * time to arrive.
 */
static void
prefetch_match(JoinStore *st, JoinRow *r)
{
	KeySlot    *ks = r->keyed ? keyslots_lookup(st->keys, r->hash) : NULL;

	if (ks != NULL && ks->latest[1 - r->side] != NULL)
		prefetch_memory(ks->latest[1 - r->side]);
}

/*
 * New row r: each kept row of the other side with equal keys whose time
 * is within [from, to] meets it (fn gets the pair, left first), then it
 * is kept.
 */
static void
meet(JoinStore *st, JoinRow *r, int64 from, int64 to, JoinPairFn fn, void *arg)
{
	int			side = r->side;
	KeySlot    *ks = keep(st, r);
	MemoryContext old;

	if (ks != NULL && from <= to)
	{
		/* the rows it meets are among the latest of its key */
		for (JoinRow *o = ks->latest[1 - side]; o != NULL; o = o->older)
		{
			if (o->ts < from)
				break;
			if (o->ts > to || !keys_equal(st, r, o))
				continue;
			fn(side == 0 ? r->row : o->row, side == 0 ? o->row : r->row, arg);
			mark(st, o);
			mark(st, r);
		}
	}
	old = MemoryContextSwitchTo(st->cxt);
	st->fresh = lappend(st->fresh, r);
	MemoryContextSwitchTo(old);
}

/*
 * The next row to meet: of the side whose next unmet row is earlier (the
 * left on a tie), or NULL once both sides' are met.
 */
static JoinRow *
next_unmet(JoinStore *st, int *next)
{
	JoinRow    *r[2];

	for (int i = 0; i < 2; i++)
		r[i] = next[i] < list_length(st->unmet[i]) ? list_nth(st->unmet[i], next[i]) : NULL;
	if (r[0] == NULL && r[1] == NULL)
		return NULL;
	if (r[1] == NULL || (r[0] != NULL && r[0]->ts <= r[1]->ts))
		return r[next[0]++, 0];
	return r[next[1]++, 1];
}

/*
 * The rows read since the last call meet the other side's kept rows and are
 * kept, both sides' in one sequence by time: each side's in the order they
 * were read, the earlier of the two sides' next rows first.  Any order
 * makes each pair once (the second row of a pair to come meets the first),
 * but in order of time the rows a row meets are the latest of its key's:
 * all the left rows first would make each right row pass over the left
 * rows of its key read later than it, a hundred per key in a step of a
 * hundred thousand rows over a thousand keys.  Rows are taken ROWS_AHEAD
 * at a time, each one's key slot and then the latest row of the other
 * side it may meet brought towards the processor's cache before any of
 * them meets: with many keys each is a load from memory.
 */
void
join_store_meet_all(JoinStore *st, JoinBoundsFn bounds, JoinPairFn fn, void *arg)
{
	int			next[2] = {0, 0};
	JoinRow    *ahead[ROWS_AHEAD];
	int			n;

	do
	{
		for (n = 0; n < ROWS_AHEAD && (ahead[n] = next_unmet(st, next)) != NULL; n++)
			if (ahead[n]->keyed)
				prefetch_memory(&st->keys->data[ahead[n]->hash & st->keys->sizemask]);
		for (int k = 0; k < n; k++)
			prefetch_match(st, ahead[k]);
		for (int k = 0; k < n; k++)
		{
			int64		from;
			int64		to;

			bounds(ahead[k]->side, ahead[k]->ts, &from, &to, arg);
			meet(st, ahead[k], from, to, fn, arg);
		}
	} while (n == ROWS_AHEAD);
	for (int i = 0; i < 2; i++)
	{
		list_free(st->unmet[i]);
		st->unmet[i] = NIL;
	}
}

/* A log row holds or marks one row fewer; none left, it can go. */
static void
release(JoinStore *st, LogRow *ls)
{
	if (ls != NULL && --ls->live == 0)
	{
		MemoryContext old = MemoryContextSwitchTo(st->cxt);

		st->done_rows = lappend(st->done_rows, ls);
		MemoryContextSwitchTo(old);
	}
}

/* Row r leaves: out of its lists now, out of memory once the step is logged. */
static void
leave(JoinStore *st, JoinRow *r)
{
	MemoryContext old;

	if (r->newer != NULL)
		/* not the latest of its rows: the slot stays as it is */
		unlink_row(NULL, r);
	else if (!r->keyed)
		unlink_row(&st->unkeyed[r->side], r);
	else
	{
		KeySlot    *ks = keyslots_lookup(st->keys, r->hash);

		unlink_row(&ks->latest[r->side], r);
		if (ks->latest[0] == NULL && ks->latest[1] == NULL)
			keyslots_delete_item(st->keys, ks);
	}
	release(st, r->log);
	release(st, r->mark_log);
	r->gone = true;
	st->rows--;
	old = MemoryContextSwitchTo(st->cxt);
	st->left = lappend(st->left, r);
	MemoryContextSwitchTo(old);
}

/*
 * The rows of "side" before "until" leave; if the side is outer, fn gets
 * each of them that met nothing, alone.
 */
void
join_store_expire(JoinStore *st, int side, int64 until, bool outer, JoinPairFn fn, void *arg)
{
	pairingheap *h = st->by_time[side];
	dlist_head *in_order = &st->in_order[side];

	for (;;)
	{
		JoinRow    *r = dlist_is_empty(in_order) ? NULL :
			dlist_head_element(JoinRow, by_time.list, in_order);

		if (!pairingheap_is_empty(h))
		{
			JoinRow    *first = pairingheap_container(JoinRow, by_time.heap, pairingheap_first(h));

			if (r == NULL || first->ts < r->ts)
				r = first;
		}
		if (r == NULL || r->ts >= until)
			break;
		if (r->in_heap)
			(void) pairingheap_remove_first(h);
		else
			dlist_delete(&r->by_time.list);
		if (outer && !r->matched)
			fn(side == 0 ? r->row : (Datum) 0, side == 0 ? (Datum) 0 : r->row, arg);
		leave(st, r);
	}
}

/*
 * A log row: its rows (side, whether it met one, time, arrival number, the
 * row's length and bytes), then its marks (side and arrival number of a row of an
 * earlier log row that met one).
 */
typedef struct LogHeader
{
	int32		rows;
	int32		marks;
} LogHeader;

#define ROW_HEAD (2 + 2 * sizeof(int64) + sizeof(int32))
#define MARK_SIZE (1 + sizeof(int64))

/*
 * The bytes of a log row, at most what one state_log row keeps, unless one
 * kept row is larger (its step's changes then take more than one).
 */
#define LOG_ROW_BYTES STATE_LOG_ROW_BYTES

/* The log row being written. */
typedef struct LogWriter
{
	JoinStore  *st;
	StateLogWriter *out;
	StringInfoData buf;
	LogHeader	h;
	LogRow	   *lr;
} LogWriter;

static void
log_row_begin(LogWriter *w)
{
	w->h = (LogHeader) {0, 0};
	resetStringInfo(&w->buf);
	appendBinaryStringInfo(&w->buf, (const char *) &w->h, sizeof(LogHeader));
	w->lr = MemoryContextAlloc(w->st->cxt, sizeof(LogRow));
}

/* Writes the log row if it holds or marks a row. */
static void
log_row_end(LogWriter *w)
{
	if (w->h.rows + w->h.marks == 0)
	{
		pfree(w->lr);
		return;
	}
	*w->lr = (LogRow) {w->st->next_log++, w->h.rows + w->h.marks};
	memcpy(w->buf.data, &w->h, sizeof(LogHeader));
	if (w->out == NULL)
		w->out = state_log_open();
	state_log_write(w->out, w->st->held.slot.pipeline_id, w->lr->number, w->buf.data, w->buf.len);
}

/* The row being written, or the next if "bytes" more would overfill it. */
static LogRow *
log_room(LogWriter *w, Size bytes)
{
	if (w->buf.len + bytes > LOG_ROW_BYTES && w->h.rows + w->h.marks > 0)
	{
		log_row_end(w);
		log_row_begin(w);
	}
	return w->lr;
}

static void
put_row(LogWriter *w, JoinRow *r)
{
	uint8		flags[2] = {r->side, r->matched};
	int32		len = VARSIZE(DatumGetPointer(r->row));

	r->log = log_room(w, ROW_HEAD + len);
	appendBinaryStringInfo(&w->buf, (const char *) flags, sizeof(flags));
	appendBinaryStringInfo(&w->buf, (const char *) &r->ts, sizeof(int64));
	appendBinaryStringInfo(&w->buf, (const char *) &r->seq, sizeof(int64));
	appendBinaryStringInfo(&w->buf, (const char *) &len, sizeof(len));
	appendBinaryStringInfo(&w->buf, DatumGetPointer(r->row), len);
	w->h.rows++;
}

static void
put_mark(LogWriter *w, JoinRow *r)
{
	r->mark_log = log_room(w, MARK_SIZE);
	appendBinaryStringInfo(&w->buf, (const char *) &r->side, sizeof(uint8));
	appendBinaryStringInfo(&w->buf, (const char *) &r->seq, sizeof(int64));
	w->h.marks++;
}

/* Deletes the log rows whose rows all left. */
static void
delete_done_rows(JoinStore *st)
{
	int			n = list_length(st->done_rows);
	int64	   *numbers = palloc(sizeof(int64) * Max(n, 1));
	int			k = 0;
	ListCell   *lc;

	foreach(lc, st->done_rows)
		numbers[k++] = ((LogRow *) lfirst(lc))->number;
	state_log_delete(st->held.slot.pipeline_id, numbers, n);
	pfree(numbers);
}

/*
 * The step's log rows (if it kept rows, or marked logged ones), and the
 * deletion of those whose rows all left; the rows that left are freed.
 * True if the rows it logged include rows of the state tables, which the
 * step must then empty.
 */
bool
join_store_log(JoinStore *st)
{
	LogWriter	w = {st};
	ListCell   *lc;
	bool		legacy = st->legacy;

	initStringInfo(&w.buf);
	enlargeStringInfo(&w.buf, LOG_ROW_BYTES);
	log_row_begin(&w);
	foreach(lc, st->fresh)
	{
		JoinRow    *r = lfirst(lc);

		if (!r->gone)
			put_row(&w, r);
	}
	foreach(lc, st->marked)
	{
		JoinRow    *r = lfirst(lc);

		if (!r->gone && r->mark_log == NULL)
			put_mark(&w, r);
	}
	log_row_end(&w);
	if (w.out != NULL)
		state_log_close(w.out);
	pfree(w.buf.data);
	delete_done_rows(st);
	foreach(lc, st->left)
	{
		JoinRow    *r = lfirst(lc);

		st->bytes -= row_space(st, r);
		if (r->in_arena)
			row_arena_free(st->arena, r);
		else
			pfree(r);
	}
	list_free_deep(st->done_rows);
	list_free(st->fresh);
	list_free(st->marked);
	list_free(st->left);
	st->done_rows = st->fresh = st->marked = st->left = NIL;
	st->legacy = false;
	return legacy;
}

/*
 * The store holds the state of step "version" once the transaction
 * commits; its slot is reserved now, so that the commit has nothing to
 * allocate.  A store larger than what windowing.state_memory leaves beside
 * the other state this process holds is thrown away at commit instead,
 * and the next step reads the log again, as a pipeline whose windows must
 * all be in memory reads them from the heap at every step.
 */
void
join_store_done(JoinStore *st, int64 version)
{
	st->held.version = version;
	st->fits = held_state_bytes(&st->held) + (int64) st->bytes <=
		(int64) state_store_memory * 1024;
	if (st->fits)
		(void) state_slots_reserve(&st->held.slot);
}

/* A row read back, by side and arrival number, for the marks that name it. */
typedef struct SeqEntry
{
	int64		id[2];			/* hash key: side, arrival number */
	JoinRow    *row;
} SeqEntry;

/* How read_log reads the log rows back: into a store, by arrival too. */
typedef struct LogRead
{
	JoinStore  *st;
	HTAB	   *by_seq;
} LogRead;

/* The rows of log row "number", "data" of "size" bytes, kept. */
static void
read_log_row(int64 number, const char *data, Size size, void *arg)
{
	JoinStore  *st = ((LogRead *) arg)->st;
	HTAB	   *by_seq = ((LogRead *) arg)->by_seq;
	const char *p = data + sizeof(LogHeader);
	LogHeader	h;
	LogRow	   *ls = MemoryContextAlloc(st->cxt, sizeof(LogRow));

	memcpy(&h, data, sizeof(h));
	*ls = (LogRow) {number, h.rows + h.marks};
	st->next_log = number + 1;
	for (int i = 0; i < h.rows; i++)
	{
		uint8		flags[2];
		int64		ts;
		int64		seq;
		int32		len;
		struct varlena *v;
		JoinRow    *r;
		SeqEntry   *e;
		int64		id[2];

		memcpy(flags, p, sizeof(flags));
		memcpy(&ts, p + 2, sizeof(int64));
		memcpy(&seq, p + 10, sizeof(int64));
		memcpy(&len, p + 18, sizeof(len));
		p += ROW_HEAD;
		/* the bytes are not aligned where they lie */
		v = palloc(len);
		memcpy(v, p, len);
		p += len;
		r = new_row(st, flags[0], PointerGetDatum(v), ts, seq);
		pfree(v);
		r->matched = flags[1];
		r->log = ls;
		(void) keep(st, r);
		id[0] = r->side;
		id[1] = seq;
		e = hash_search(by_seq, id, HASH_ENTER, NULL);
		e->row = r;
	}
	for (int i = 0; i < h.marks; i++)
	{
		int64		id[2] = {(uint8) *p, 0};
		SeqEntry   *e;

		memcpy(&id[1], p + 1, sizeof(int64));
		p += MARK_SIZE;
		e = hash_search(by_seq, id, HASH_FIND, NULL);
		/* a row it marks that left: its log row was deleted first */
		if (e != NULL && !e->row->matched)
		{
			e->row->matched = true;
			e->row->mark_log = ls;
		}
		else
			release(st, ls);
	}
	Assert(p == data + size);
}

/* The pipeline's log rows, in the order they were written. */
static void
read_log(JoinStore *st, int32 pipeline_id)
{
	HASHCTL		ctl;
	LogRead		lr = {st, NULL};

	ctl.keysize = sizeof(int64) * 2;
	ctl.entrysize = sizeof(SeqEntry);
	ctl.hcxt = CurrentMemoryContext;
	lr.by_seq = hash_create("windowing join rows by arrival", 1024, &ctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	(void) state_log_each(pipeline_id, read_log_row, &lr);
	hash_destroy(lr.by_seq);
}

/* The rows of an earlier release's state table of "side", fresh. */
static void
read_legacy(JoinStore *st, int side, Oid table)
{
	MemoryContext old;

	if (plans_execute(psprintf("SELECT s, s.windowing_matched, s.%s, s.windowing_seq FROM %s AS s",
							   quote_identifier(NameStr(TupleDescAttr(st->layout->desc[side],
																	  st->layout->time[side] - 1)->attname)),
							   quote_qualified_identifier(get_namespace_name(get_rel_namespace(table)),
														  get_rel_name(table))),
					  0, NULL, NULL, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the state table of join pipeline %d", st->held.slot.pipeline_id);
	old = MemoryContextSwitchTo(st->cxt);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		bool		isnull;
		bool		ts_null;
		Datum		ts = SPI_getbinval(t, d, 3, &ts_null);
		JoinRow    *r;

		if (ts_null)
			continue;
		r = new_row(st, side, SPI_getbinval(t, d, 1, &isnull), DatumGetInt64(ts),
					DatumGetInt64(SPI_getbinval(t, d, 4, &isnull)));
		r->matched = DatumGetBool(SPI_getbinval(t, d, 2, &isnull));
		(void) keep(st, r);
		st->fresh = lappend(st->fresh, r);
		st->legacy = true;
	}
	MemoryContextSwitchTo(old);
	SPI_freetuptable(SPI_tuptable);
}

/*
 * The committed state of a join pipeline, read from its log (and the
 * state tables "legacy" of an earlier release, if valid), each side's rows
 * before until[side] dropped: those a step left, which no step keeps past
 * its end.  Kept as the pipeline's store if "keep" (a step reads it, and
 * tells it the version it holds with join_store_done); else the caller
 * frees it.  Needs SPI connected.
 */
JoinStore *
join_store_read(int32 pipeline_id, const JoinLayout *layout, const int64 *until, Oid *legacy,
				bool keep_it)
{
	JoinStore  *st;
	JoinStore  *old_st = lookup(pipeline_id);

	if (old_st != NULL && !old_st->held.changing)
		held_state_discard(&old_st->held);
	/* stores this process holds no more */
	held_state_sweep();
	st = create(pipeline_id, layout);
	read_log(st, pipeline_id);
	for (int i = 0; i < 2; i++)
		join_store_expire(st, i, until[i], false, NULL, NULL);
	for (int i = 0; i < 2 && legacy != NULL; i++)
		if (OidIsValid(legacy[i]))
			read_legacy(st, i, legacy[i]);
	if (keep_it)
		held_state_keep(&st->held);
	return st;
}

static void
each_in(JoinRow *latest, JoinRowFn fn, void *arg)
{
	for (JoinRow *r = latest; r != NULL; r = r->older)
		fn(r->side, r->row, r->ts, r->matched, arg);
}

/* Gives fn each kept row, in no order. */
void
join_store_each(JoinStore *st, JoinRowFn fn, void *arg)
{
	keyslots_iterator it;
	KeySlot    *ks;

	keyslots_start_iterate(st->keys, &it);
	while ((ks = keyslots_iterate(st->keys, &it)) != NULL)
		for (int i = 0; i < 2; i++)
			each_in(ks->latest[i], fn, arg);
	for (int i = 0; i < 2; i++)
		each_in(st->unkeyed[i], fn, arg);
}
