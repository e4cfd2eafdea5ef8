/*
 * state_store.c
 *		A pipeline's committed windows, by key, in the memory of the process
 *		that steps it.
 *
 * The durable copy of every window is on the heap (state.c), written by
 * each step in its own transaction; that is what makes a step exactly
 * once.  This store keeps the windows as of the pipeline's last committed
 * step in the stepping process (Flink's heap state backend), so that a
 * step costs what it touches, not all the open state: a step takes out the
 * windows of the keys its rows name and of the windows whose timers its
 * watermark reaches (a heap by due time), and puts back what they became.
 * The windows it does not touch stay where they are.  Those it takes stay
 * too, in their places in memory and among the timers, until the step
 * puts them back: a window put back as it was, or with new states of the
 * same size, costs neither memory nor a move among a million timers.
 *
 * A store changed by a transaction is that transaction's until it ends
 * (held_state.c): at commit it becomes the pipeline's state as of the step
 * it was left with, and its slot says so to every backend; at abort, at
 * PREPARE, or when a subtransaction that changed it rolls back, it is
 * thrown away and the next step reads the heap.  A step trusts a store
 * only if its step count is the committed one and its slot still names
 * this process, so an aborted step, a step in another backend or an
 * eviction can only make a step read the heap, never stale state.  The
 * stores of a process are capped by windowing.state_memory: a store that
 * outgrows it sheds keys to the heap, the least recently touched first
 * (state_store_evict), and reads them back by key as a partial store
 * does; one whose kind must hold every window is thrown away, and its
 * pipeline read from the heap at every step ("spilled").  The results are
 * identical either way.
 */
#include "compat.h"

#include "lib/pairingheap.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"

#include "held_state.h"
#include "keys.h"
#include "prefetch.h"
#include "state_slots.h"
#include "state_store.h"
#include "watermark.h"

int			state_store_memory = 64 * 1024;	/* kB */

/*
 * A window and its states' bytes, in one piece: a StoredWindow without the
 * pointer to them, its two flags in the low bits of the pointer to its key
 * (an entry of the keys' table, MAXALIGN'd), and the states with a header
 * of one byte where they fit one, so that a count + sum window takes 96
 * bytes.
 */
typedef struct StoreWin
{
	pairingheap_node node;		/* in the store's heap by due time */
	struct StoreWin *next;		/* its key's next window */
	uintptr_t	owner_flags;	/* StoreKeyEnt *, | WIN_STORED | WIN_LOGGED */
	int64		start;
	int64		end;
	int64		due;
	ItemPointerData row;		/* StoredWindow.row */
	int32		fire_count;
	char		states[FLEXIBLE_ARRAY_MEMBER];	/* 4-byte aligned */
} StoreWin;

/* a 4-byte header of states must be aligned for VARSIZE */
StaticAssertDecl(offsetof(StoreWin, states) % sizeof(uint32) == 0,
				 "the states of a stored window are not aligned");

#define WIN_STORED 1			/* StoredWindow.stored */
#define WIN_LOGGED 2			/* StoredWindow.logged */
#define WIN_TOUCHED 4			/* put back since the last eviction */
#define WIN_FLAGS (WIN_STORED | WIN_LOGGED | WIN_TOUCHED)
#define STATES(sw) ((const bytea *) (sw)->states)
#define OWNER(sw) ((struct StoreKeyEnt *) ((sw)->owner_flags & ~(uintptr_t) WIN_FLAGS))
#define FLAG(sw, f) (((sw)->owner_flags & (f)) != 0)

static void
set_flags(StoreWin *sw, bool stored, bool logged)
{
	sw->owner_flags = (sw->owner_flags & ~(uintptr_t) (WIN_STORED | WIN_LOGGED)) |
		(stored ? WIN_STORED : 0) | (logged ? WIN_LOGGED : 0);
}

/* The header of states of "len" bytes of data: one byte where it fits. */
static Size
states_header(Size len)
{
	return len + VARHDRSZ_SHORT <= VARATT_SHORT_MAX ? VARHDRSZ_SHORT : VARHDRSZ;
}

/* The bytes a window's piece takes, with states of "len" bytes of data. */
static Size
piece_size(Size len)
{
	return offsetof(StoreWin, states) + states_header(len) + len;
}

/* A stored window as the store's callers see it. */
static StoredWindow
stored_window(const StoreWin *sw)
{
	StoredWindow w = {sw->start, sw->end, sw->due, sw->fire_count, FLAG(sw, WIN_STORED),
	FLAG(sw, WIN_LOGGED),
	STATES(sw), sw->row, NULL};

	return w;
}

/* A window that left, with its row in window_state. */
typedef struct StoreDeparted
{
	int64		start;
	int64		end;
	ItemPointerData row;		/* where its row was, if known */
	char		key[FLEXIBLE_ARRAY_MEMBER];	/* a bytea */
} StoreDeparted;

/*
 * A key and its windows.  A partial store keeps keys whose windows all
 * left, with none, so that their next rows do not look for them on the
 * heap; a complete one drops them as the step ends (settle), or at
 * the next fold if the store's list of keys to fold holds them.
 */
typedef struct StoreKeyEnt
{
	uintptr_t	windows_flags;	/* StoreWin * (MAXALIGN'd), | KEY_LOGGED */
	char		key[FLEXIBLE_ARRAY_MEMBER];	/* its copy, a bytea */
} StoreKeyEnt;

#define KEY_OF(k) ((bytea *) (k)->key)

#define KEY_LOGGED 1			/* in the store's logged_keys */
#define KEY_OUT 2				/* its windows are the step's (out_keys) */
#define KEY_FLAGS (KEY_LOGGED | KEY_OUT)
#define KEY_WINDOWS(k) ((StoreWin *) ((k)->windows_flags & ~(uintptr_t) KEY_FLAGS))
#define KEY_IS_LOGGED(k) (((k)->windows_flags & KEY_LOGGED) != 0)
#define KEY_IS_OUT(k) (((k)->windows_flags & KEY_OUT) != 0)

static void
set_key_windows(StoreKeyEnt *k, StoreWin *w)
{
	k->windows_flags = (uintptr_t) w | (k->windows_flags & KEY_FLAGS);
}

/* The piece of a key's entry, with its bytes. */
static Size
key_ent_size(const bytea *key)
{
	return offsetof(StoreKeyEnt, key) + VARSIZE_ANY(key);
}

/*
 * The keys' table: a slot holds the hash of a key and its bytes in its
 * entry, so that a lookup costs the slot and the entry, which holds the
 * key's windows (a key's first row in a step finds it out of the
 * processor's caches at a million keys).  Slots move as the table changes;
 * entries stay in place, for the lists and windows that point at them.
 */
typedef struct KeySlot
{
	const bytea *key;			/* KEY_OF its entry */
	uint32		hash;
	char		status;
} KeySlot;

/* How full the table may be before it doubles (simplehash's own default). */
#define KEYS_FILL 0.9

#define SH_PREFIX storekeys
#define SH_ELEMENT_TYPE KeySlot
#define SH_FILLFACTOR KEYS_FILL
#define SH_KEY_TYPE const bytea *
#define SH_KEY key
#define SH_HASH_KEY(tb, k) keys_hash(k)
#define SH_EQUAL(tb, a, b) keys_equal(a, b)
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a) ((a)->hash)
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

static StoreKeyEnt *
slot_entry(const KeySlot *slot)
{
	return (StoreKeyEnt *) ((const char *) slot->key - offsetof(StoreKeyEnt, key));
}

/*
 * A store's windows and keys are pieces carved from blocks of its own, of
 * their own size rounded to MAXALIGN: AllocSet would round a count + sum
 * window's 110 bytes up to a chunk of 128 with a header of 16, and an
 * integer key's 8 bytes to a chunk of 8 with a header of 16.  A piece that
 * leaves goes to the list of its size, for the next piece of that size.
 */
#define PIECE_SIZES 128			/* listed sizes: up to 1 kB */
#define PIECE_BLOCK_MIN 1024
#define PIECE_BLOCK_MAX (64 * 1024)

typedef struct Pieces
{
	char	   *next;			/* room left in the current block */
	Size		left;
	Size		block;			/* the current block's size */
	void	   *free[PIECE_SIZES];	/* pieces that left, by size */
	int64		free_bytes;		/* and their bytes */
} Pieces;

/*
 * A window due with others, in a run of them sorted by their keys' order
 * (state_store_take_due).
 */
typedef struct DueEntry
{
	uint64		order;			/* its key's prefix in the step's key order */
	StoreWin   *win;
} DueEntry;

#define ST_SORT sort_due
#define ST_ELEMENT_TYPE DueEntry
#define ST_COMPARE(a, b) (((a)->order > (b)->order) - ((a)->order < (b)->order))
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* The most windows due together one run sorts: 16MB of DueEntry. */
#define DUE_RUN_MAX (1024 * 1024)

struct StateStore
{
	HeldState	held;			/* first: a StateStore is a HeldState */
	uint64		shape;			/* what its due times were computed under */
	StateLog	log;			/* the pipeline's state_log since the fold */
	bool		complete;		/* holds every window; else only the keys it
								 * knows, the rest being on the heap alone */
	int64		heap_until;		/* partial: the windows on the heap due up to
								 * here were read */
	int64		heap_next;		/* partial: none due before this (WMK_NONE:
								 * not known) */
	int64		heap_windows;	/* partial: windows on the heap alone */
	bytea	   *read_ahead;		/* partial: the last key read ahead
								 * (state_store_read_ahead), or NULL */
	int64		clock;			/* the clock of the step that left it */
	bool		taken;			/* windows taken out, not yet put back */
	MemoryContext cxt;
	/*
	 * Windows that left with a row in window_state, which the next fold
	 * deletes (state_log says they left): in a context of their own, since
	 * state_store_clear empties cxt.
	 */
	MemoryContext departed_cxt;
	List	   *departed;		/* StoreDeparted * */
	Pieces		pieces;			/* in cxt */
	storekeys_hash *keys;
	List	   *logged_keys;	/* StoreKeyEnt *, in cxt, each KEY_LOGGED:
								 * the keys put back with a window whose
								 * newest state is in state_log only, since
								 * the last fold */
	List	   *out_keys;		/* StoreKeyEnt *, in cxt, each KEY_OUT: the
								 * keys whose windows the step took, which
								 * stay in place until it puts them back */
	int64		logged_windows; /* those windows */
	int64		logged_bytes;	/* and the bytes of their keys and states */
	int64		departed_bytes; /* the keys' bytes of "departed" */
	pairingheap *due;
	/*
	 * Windows due together, out of "due" and not yet handed out, in their
	 * keys' order, in the step's transaction's memory (state_store_take_due)
	 */
	DueEntry   *run;
	int			run_len;
	int			run_next;
	int64		windows;
};

/*
 * The last store thrown away for the budget: how many windows its pipeline
 * had as of that step, so that the partial store after it need not count
 * them on the heap again.
 */
static struct
{
	SlotKey		slot;
	int64		version;
	int64		windows;
}			spilled = {{0}, -1, 0};

static int
due_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	int64		x = pairingheap_const_container(StoreWin, node, a)->due;
	int64		y = pairingheap_const_container(StoreWin, node, b)->due;

	/* pairingheap keeps the largest on top: the earliest is the largest */
	return (x < y) - (x > y);
}

/* A piece of "size" bytes of the store's memory. */
static void *
piece_alloc(StateStore *st, Size size)
{
	Pieces	   *p = &st->pieces;
	Size		sz = MAXALIGN(size);
	Size		c = sz / MAXIMUM_ALIGNOF;
	void	   *piece;

	if (c >= PIECE_SIZES)
		return MemoryContextAlloc(st->cxt, sz);
	if (p->free[c] != NULL)
	{
		piece = p->free[c];
		p->free[c] = *(void **) piece;
		p->free_bytes -= sz;
		return piece;
	}
	if (p->left < sz)
	{
		/* what is left of the block stays unused: less than a piece */
		p->block = Min(Max(p->block * 2, PIECE_BLOCK_MIN), PIECE_BLOCK_MAX);
		p->next = MemoryContextAlloc(st->cxt, p->block);
		p->left = p->block;
	}
	piece = p->next;
	p->next += sz;
	p->left -= sz;
	return piece;
}

/* A piece of "size" bytes leaves, for the next of its size. */
static void
piece_free(StateStore *st, void *piece, Size size)
{
	Size		c = MAXALIGN(size) / MAXIMUM_ALIGNOF;

	if (c >= PIECE_SIZES)
	{
		pfree(piece);
		return;
	}
	*(void **) piece = st->pieces.free[c];
	st->pieces.free[c] = piece;
	st->pieces.free_bytes += c * MAXIMUM_ALIGNOF;
}

/* A context for a store's keys, windows and heap. */
static MemoryContext
store_context(void)
{
	return AllocSetContextCreate(TopMemoryContext, "windowing state store",
								 ALLOCSET_DEFAULT_SIZES);
}

/* Appends a key's entry to a list in the store's memory. */
static List *
key_list_append(StateStore *st, List *list, StoreKeyEnt *k)
{
	MemoryContext old = MemoryContextSwitchTo(st->cxt);

	list = lappend(list, k);
	MemoryContextSwitchTo(old);
	return list;
}

/* Remembers that a key has windows to fold: its entry, not a lookup of it. */
static void
log_key(StateStore *st, StoreKeyEnt *k)
{
	if (KEY_IS_LOGGED(k))
		return;
	k->windows_flags |= KEY_LOGGED;
	st->logged_keys = key_list_append(st, st->logged_keys, k);
}

/* The bytes a window counts for in logged_bytes. */
static int64
logged_bytes(const bytea *key, const StoreWin *w)
{
	return VARSIZE_ANY_EXHDR(key) + VARSIZE_ANY_EXHDR(STATES(w));
}

/* The store's own memory: its keys, windows and heap. */
static void
init_contents(StateStore *st)
{
	MemoryContext old = MemoryContextSwitchTo(st->cxt);

	memset(&st->pieces, 0, sizeof(Pieces));
	st->keys = storekeys_create(st->cxt, 64, NULL);
	st->logged_keys = NIL;
	st->out_keys = NIL;
	st->logged_windows = 0;
	st->logged_bytes = 0;
	st->due = pairingheap_allocate(due_cmp, NULL);
	st->run = NULL;
	st->run_len = st->run_next = 0;
	st->windows = 0;
	MemoryContextSwitchTo(old);
}

/* A store thrown away (HeldStateKind.free). */
static void
free_store(HeldState *h)
{
	StateStore *st = (StateStore *) h;

	MemoryContextDelete(st->cxt);
	MemoryContextDelete(st->departed_cxt);
	if (st->read_ahead != NULL)
		pfree(st->read_ahead);
	pfree(st);
}

/*
 * The memory a store takes: what its contexts hold (the keys' table
 * whole), less the room kept for new windows and keys: where others left,
 * and the rest of the block pieces are carved from (up to PIECE_BLOCK_MAX).
 */
static int64
store_bytes(StateStore *st)
{
	return MemoryContextMemAllocated(st->cxt, true) +
		MemoryContextMemAllocated(st->departed_cxt, true) -
		st->pieces.free_bytes - st->pieces.left;
}

/*
 * At commit (HeldStateKind.commit): a store whose windows a step took out
 * and did not put back holds no whole state.
 */
static bool
commit_store(HeldState *h)
{
	StateStore *st = (StateStore *) h;

	if (st->taken)
		return false;
	state_slots_publish(&h->slot, h->version, st->windows, st->windows + st->heap_windows,
						store_bytes(st));
	return true;
}

static int64
held_bytes(HeldState *h)
{
	return store_bytes((StateStore *) h);
}

static const HeldStateKind store_kind = {commit_store, free_store, held_bytes};

static void
discard(StateStore *st)
{
	held_state_discard(&st->held);
}

static StateStore *
lookup(int32 pipeline_id)
{
	return (StateStore *) held_state_lookup(pipeline_id, &store_kind);
}

/* The store is the current transaction's until it ends. */
static void
changing(StateStore *st)
{
	held_state_changing(&st->held);
}

/*
 * The store of a pipeline if it holds the state of step "version", the
 * committed one (or one of this transaction's earlier steps), with due
 * times computed under "shape"; else NULL, and any other store of the
 * pipeline is thrown away.
 */
StateStore *
state_store_find(int32 pipeline_id, int64 version, uint64 shape)
{
	StateStore *st = lookup(pipeline_id);

	if (st == NULL)
		return NULL;
	if (st->shape == shape && !st->taken && held_state_current(&st->held, version))
		return st;
	discard(st);
	return NULL;
}

/*
 * An empty store for a pipeline, in place of any it had: complete (the step
 * puts every window), or partial (the others are on the heap).  The step
 * must put its windows in and be done with it before it commits.
 */
StateStore *
state_store_create(int32 pipeline_id, uint64 shape, bool complete)
{
	StateStore *st = lookup(pipeline_id);
	MemoryContext old;

	if (st != NULL)
		discard(st);
	/* stores this process holds no more */
	held_state_sweep();
	old = MemoryContextSwitchTo(TopMemoryContext);
	st = palloc0(sizeof(StateStore));
	held_state_init(&st->held, &store_kind, pipeline_id);
	held_state_keep(&st->held);
	st->shape = shape;
	st->complete = complete;
	st->heap_until = WMK_NONE;
	st->heap_next = WMK_NONE;
	st->heap_windows = 0;
	st->cxt = store_context();
	st->departed_cxt = AllocSetContextCreate(TopMemoryContext, "windowing departed windows",
											 ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(old);
	init_contents(st);
	changing(st);
	st->taken = true;
	return st;
}

/* The store holds the same state at a later clock: a step changed nothing. */
void
state_store_set_clock(StateStore *st, int64 clock)
{
	st->clock = clock;
}

/* The clock of the step whose state the store holds (state_store_done). */
int64
state_store_clock(const StateStore *st)
{
	return st->clock;
}

/* The pipeline's state_log rows since the last fold. */
StateLog
state_store_log(const StateStore *st)
{
	return st->log;
}

/* A key leaves the store's table. */
static void
forget_key(StateStore *st, StoreKeyEnt *k)
{
	storekeys_delete(st->keys, KEY_OF(k));
	piece_free(st, k, key_ent_size(KEY_OF(k)));
}

/*
 * Whether a key leaves the store's table: a complete store keeps no key
 * without windows, once the list of keys to fold no longer points at it.
 */
static bool
droppable(const StateStore *st, const StoreKeyEnt *k)
{
	return st->complete && KEY_WINDOWS(k) == NULL && !KEY_IS_LOGGED(k);
}

/* Whether a window is among the store's timers. */
static bool
timed(const StateStore *st, StoreWin *w)
{
	return w->node.prev_or_parent != NULL || st->due->ph_root == &w->node;
}

/* A window leaves the store's timers, for "timed" to see. */
static void
untime(StateStore *st, StoreWin *w)
{
	pairingheap_remove(st->due, &w->node);
	w->node.prev_or_parent = NULL;
}

/*
 * The run is over: the windows of it not handed out, if a caller left any,
 * wait for their timers again.
 */
static void
end_run(StateStore *st)
{
	for (int i = st->run_next; i < st->run_len; i++)
		if (!KEY_IS_OUT(OWNER(st->run[i].win)))
			pairingheap_add(st->due, &st->run[i].win->node);
	if (st->run != NULL)
		pfree(st->run);
	st->run = NULL;
	st->run_len = st->run_next = 0;
}

/*
 * The step put back what it took: the windows of the keys it took that it
 * did not put back leave, and so do the keys it left without windows
 * (droppable).  Keys taken and put back stay in place: a step that takes a
 * key's windows out and puts them back costs no removal and no new entry.
 */
static void
settle(StateStore *st)
{
	ListCell   *lc;

	end_run(st);
	foreach(lc, st->out_keys)
	{
		StoreKeyEnt *k = lfirst(lc);
		StoreWin   *kept = NULL;
		StoreWin  **tail = &kept;
		StoreWin   *next;

		for (StoreWin *w = KEY_WINDOWS(k); w != NULL; w = next)
		{
			next = w->next;
			if (FLAG(w, WIN_TOUCHED))
			{
				*tail = w;
				tail = &w->next;
				continue;
			}
			if (timed(st, w))
				untime(st, w);
			piece_free(st, w, piece_size(VARSIZE_ANY_EXHDR(STATES(w))));
		}
		*tail = NULL;
		set_key_windows(k, kept);
		k->windows_flags &= ~(uintptr_t) KEY_OUT;
		if (droppable(st, k))
			forget_key(st, k);
	}
	list_free(st->out_keys);
	st->out_keys = NIL;
}

/*
 * Takes a key's windows out, each given to fn first, with its place.  They
 * keep their places, marked as not put back (WIN_TOUCHED), until the step
 * puts them back (state_store_put) or is done with them (settle).
 */
static void
take(StateStore *st, StoreKeyEnt *k, StoredWindowFn fn, void *arg)
{
	bytea	   *key = KEY_OF(k);

	for (StoreWin *w = KEY_WINDOWS(k); w != NULL; w = w->next)
	{
		StoredWindow sw = stored_window(w);

		sw.place = w;
		fn(key, &sw, arg);
		if (sw.logged)
		{
			st->logged_windows--;
			st->logged_bytes -= logged_bytes(key, w);
		}
		w->owner_flags &= ~(uintptr_t) WIN_TOUCHED;
		st->windows--;
	}
	k->windows_flags |= KEY_OUT;
	st->out_keys = key_list_append(st, st->out_keys, k);
}

/*
 * Takes the windows of a key out of the store; false if the store does not
 * know the key (a partial store's key may have windows on the heap).
 */
bool
state_store_take_key(StateStore *st, const bytea *key, StoredWindowFn fn, void *arg)
{
	KeySlot    *slot = storekeys_lookup(st->keys, key);
	StoreKeyEnt *k;

	if (slot == NULL)
		return false;
	k = slot_entry(slot);
	/* a key taken out already is the step's */
	if (KEY_WINDOWS(k) != NULL && !KEY_IS_OUT(k))
	{
		changing(st);
		st->taken = true;
		take(st, k, fn, arg);
	}
	return true;
}

/*
 * Brings the slots of the keys with these hashes (keys_hash) towards the
 * processor's cache, then the entries they point at: a step's rows name
 * keys at random, so that at a million keys a lookup's slot and entry are
 * each a load from memory (state_store_take_key), the second waiting for
 * the first.  Asked for a few rows ahead, the loads overlap.  Each hash
 * probes at most PREFETCH_PROBES slots: prefetching is a hint, and a key
 * the store does not have ends its probe at an empty slot.
 */
#define PREFETCH_PROBES 8

void
state_store_prefetch(const StateStore *st, const uint32 *hashes, int n)
{
	const storekeys_hash *t = st->keys;

	for (int i = 0; i < n; i++)
		prefetch_memory(&t->data[hashes[i] & t->sizemask]);
	for (int i = 0; i < n; i++)
	{
		uint32		b = hashes[i] & t->sizemask;

		for (int probe = 0; probe < PREFETCH_PROBES; probe++, b = (b + 1) & t->sizemask)
		{
			if (t->data[b].status != storekeys_SH_IN_USE)
				break;
			if (t->data[b].hash == hashes[i])
			{
				prefetch_memory(t->data[b].key);
				break;
			}
		}
	}
}

/* Whether the store knows a key: it has the key's windows, if any. */
bool
state_store_knows(const StateStore *st, const bytea *key)
{
	return st->complete || storekeys_lookup(st->keys, key) != NULL;
}

static StoreKeyEnt *
key_entry(StateStore *st, const bytea *key)
{
	bool		found;
	KeySlot    *slot = storekeys_insert(st->keys, key, &found);
	StoreKeyEnt *k;

	if (found)
		return slot_entry(slot);
	k = piece_alloc(st, key_ent_size(key));
	k->windows_flags = 0;
	memcpy(k->key, key, VARSIZE_ANY(key));
	slot->key = KEY_OF(k);
	return k;
}

/* A key whose windows the step read from the heap: the store knows it now. */
void
state_store_know(StateStore *st, const bytea *key)
{
	changing(st);
	(void) key_entry(st, key);
}

int32
state_store_pipeline(const StateStore *st)
{
	return st->held.slot.pipeline_id;
}

bool
state_store_complete(const StateStore *st)
{
	return st->complete;
}

/*
 * Partial: the windows on the heap due up to "until" were read, and none
 * is due before "next" (WMK_NONE: not known).
 */
int64
state_store_heap_until(const StateStore *st)
{
	return st->heap_until;
}

int64
state_store_heap_next(const StateStore *st)
{
	return st->heap_next;
}

void
state_store_set_heap_due(StateStore *st, int64 until, int64 next)
{
	changing(st);
	st->heap_until = until;
	st->heap_next = next;
}

/*
 * Partial: windows on the heap alone, less so many read into memory.  Once
 * none is left, the store holds every window: it is complete.
 */
void
state_store_heap_windows(StateStore *st, int64 windows)
{
	changing(st);
	st->heap_windows += windows;
	if (st->heap_windows <= 0)
		st->complete = true;
}

/*
 * Whether a partial store has room for every window the heap alone holds,
 * at what each of its own takes: then reading them ahead sheds none.  Not
 * before it holds some windows to measure by.
 */
bool
state_store_room_ahead(StateStore *st)
{
	if (st->complete || st->windows == 0)
		return false;
	return state_store_fits(st->heap_windows * (store_bytes(st) / st->windows));
}

/*
 * Partial: the last key whose windows were read ahead from the heap, in
 * the primary key's order, where the next such read starts (NULL: from the
 * first key).
 */
const bytea *
state_store_read_ahead(const StateStore *st)
{
	return st->read_ahead;
}

void
state_store_set_read_ahead(StateStore *st, const bytea *key)
{
	changing(st);
	if (st->read_ahead != NULL)
		pfree(st->read_ahead);
	st->read_ahead = NULL;
	if (key != NULL)
	{
		st->read_ahead = MemoryContextAlloc(TopMemoryContext, VARSIZE_ANY(key));
		memcpy(st->read_ahead, key, VARSIZE_ANY(key));
	}
}

/*
 * The first windows due, at or before "upto", out of the timers and into a
 * run sorted by their keys' prefixes in "order", DUE_RUN_MAX at most;
 * false if none is due.  Windows of keys the step has taken leave the
 * timers only: theirs come back as the step puts them back.
 */
static bool
start_run(StateStore *st, int64 upto, KeyPrefixFn order, const void *order_arg)
{
	int			room = 1024;
	int64		due;

	end_run(st);
	if (pairingheap_is_empty(st->due))
		return false;
	due = pairingheap_container(StoreWin, node, pairingheap_first(st->due))->due;
	if (due > upto)
		return false;
	changing(st);
	st->run = MemoryContextAlloc(TopTransactionContext, sizeof(DueEntry) * room);
	while (st->run_len < DUE_RUN_MAX && !pairingheap_is_empty(st->due))
	{
		StoreWin   *w = pairingheap_container(StoreWin, node, pairingheap_first(st->due));

		if (w->due != due)
			break;
		untime(st, w);
		if (KEY_IS_OUT(OWNER(w)))
			continue;
		if (st->run_len == room)
		{
			room *= 2;
			st->run = repalloc(st->run, sizeof(DueEntry) * room);
		}
		st->run[st->run_len].order = order(KEY_OF(OWNER(w)), order_arg);
		st->run[st->run_len++].win = w;
	}
	sort_due(st->run, st->run_len);
	return true;
}

/*
 * Takes out keys with a window due at or before "upto" (a timer of it runs
 * there), until at least "max" windows are out; true if windows due by
 * then are left, for the caller to take once it has run these.  The key's
 * other windows come along, since what happens to one window of a key (a
 * session's merge) may concern the others.
 *
 * Windows due together come out in the order of their keys (their
 * prefixes in "order", the order the operator fires them in), a run of up
 * to DUE_RUN_MAX at a time, rather than in the order they were stored: a
 * million windows ending together fire in batches, and their result rows
 * then enter the result table's index (end, key, start) at its right edge,
 * where a B-tree inserts without descending from its root, instead of
 * each batch's at random leaves.
 */
bool
state_store_take_due(StateStore *st, int64 upto, int64 max, KeyPrefixFn order,
					 const void *order_arg, StoredWindowFn fn, void *arg)
{
	int64		left = st->windows - max;

	for (;;)
	{
		StoreWin   *w;

		if (st->run_next == st->run_len)
		{
			/* a run may hold none: every window due then was the step's */
			if (!start_run(st, upto, order, order_arg))
				return false;
			continue;
		}
		w = st->run[st->run_next].win;
		/* a key with two windows due together went with the first */
		if (KEY_IS_OUT(OWNER(w)))
		{
			st->run_next++;
			continue;
		}
		if (st->windows <= left)
			return true;
		st->run_next++;
		changing(st);
		st->taken = true;
		take(st, OWNER(w), fn, arg);
	}
}

/* Whether windows were taken out that the step has not put back yet. */
bool
state_store_taken(const StateStore *st)
{
	return st->taken;
}

/* Gives every window to fn, taking none out. */
void
state_store_each(StateStore *st, StoredWindowFn fn, void *arg)
{
	storekeys_iterator it;
	KeySlot    *slot;

	storekeys_start_iterate(st->keys, &it);
	while ((slot = storekeys_iterate(st->keys, &it)) != NULL)
		for (StoreWin *w = KEY_WINDOWS(slot_entry(slot)); w != NULL; w = w->next)
		{
			StoredWindow sw = stored_window(w);

			fn(slot->key, &sw, arg);
		}
}

/* Takes every window out, unseen: the step puts every window back. */
void
state_store_clear(StateStore *st)
{
	changing(st);
	st->taken = true;
	st->complete = true;
	st->heap_until = WMK_NONE;
	st->heap_next = WMK_NONE;
	st->heap_windows = 0;
	MemoryContextReset(st->cxt);
	init_contents(st);
}

/*
 * Whether a window the step took out can go back into its place: once,
 * with states that fit the piece.  Its bounds may have changed (a session
 * that grew): the place is the window's, whose entry the step kept.
 */
static bool
fits_place(const StoreWin *sw, Size len)
{
	return !FLAG(sw, WIN_TOUCHED) &&
		MAXALIGN(piece_size(VARSIZE_ANY_EXHDR(STATES(sw)))) == MAXALIGN(piece_size(len));
}

/*
 * Puts a window of a key into the store: a copy of it, in the place it was
 * taken from (w->place) where it fits, and among the timers where it was
 * if its due time is the same.
 */
void
state_store_put(StateStore *st, const bytea *key, const StoredWindow *w)
{
	Size		len = VARSIZE_ANY_EXHDR(w->state);
	StoreWin   *sw = (StoreWin *) w->place;
	StoreKeyEnt *k = sw != NULL ? OWNER(sw) : key_entry(st, key);
	bool		in_place = false;

	Assert(sw == NULL || (KEY_IS_OUT(k) && keys_equal(KEY_OF(k), key)));
	changing(st);
	if (sw != NULL && fits_place(sw, len))
	{
		in_place = timed(st, sw);
		if (in_place && sw->due != w->due)
		{
			untime(st, sw);
			in_place = false;
		}
	}
	else
	{
		sw = piece_alloc(st, piece_size(len));
		sw->next = KEY_WINDOWS(k);
		set_key_windows(k, sw);
	}
	sw->start = w->start;
	sw->end = w->end;
	sw->due = w->due;
	sw->fire_count = w->fire_count;
	sw->row = w->row;
	sw->owner_flags = (uintptr_t) k | WIN_TOUCHED;
	set_flags(sw, w->stored, w->logged);
	if (states_header(len) == VARHDRSZ_SHORT)
		SET_VARSIZE_SHORT(sw->states, len + VARHDRSZ_SHORT);
	else
		SET_VARSIZE(sw->states, len + VARHDRSZ);
	memcpy(sw->states + states_header(len), VARDATA_ANY(w->state), len);
	if (!in_place)
		pairingheap_add(st->due, &sw->node);
	st->windows++;
	if (w->logged)
	{
		log_key(st, k);
		st->logged_windows++;
		st->logged_bytes += logged_bytes(key, sw);
	}
}

/*
 * The keys logged_keys lists are spread over the store: with a million of
 * them each is a load from memory, then its first window another.  Key i
 * + LOGGED_AHEAD is brought towards the processor's cache, and the first
 * window of key i + LOGGED_AHEAD / 2, whose entry was asked for earlier.
 */
#define LOGGED_AHEAD 16

static void
prefetch_logged(const List *keys, int i)
{
	if (i + LOGGED_AHEAD < list_length(keys))
		prefetch_memory(list_nth(keys, i + LOGGED_AHEAD));
	if (i + LOGGED_AHEAD / 2 < list_length(keys))
		prefetch_memory(KEY_WINDOWS((StoreKeyEnt *) list_nth(keys, i + LOGGED_AHEAD / 2)));
}

/*
 * Gives fn every window whose newest state is in state_log only.  They are
 * found through the keys put back with such windows, so that this costs
 * what changed since the last fold, not every key.  A fold ("fold") marks
 * them as in window_state, where fn writes them, and forgets the keys;
 * otherwise (fn writes them into the one state_log row that replaces the
 * others) they stay as they are, and the keys that have none any more are
 * forgotten, so that a store whose keys come and go does not keep them all
 * until the next fold.  A complete store's keys left without windows go.
 */
static void
each_logged(StateStore *st, StoredWindowFn fn, void *arg, bool fold)
{
	List	   *kept = NIL;
	ListCell   *lc;

	changing(st);
	settle(st);
	foreach(lc, st->logged_keys)
	{
		StoreKeyEnt *k = lfirst(lc);
		bool		logged = false;

		prefetch_logged(st->logged_keys, foreach_current_index(lc));

		for (StoreWin *w = KEY_WINDOWS(k); w != NULL; w = w->next)
		{
			StoredWindow sw;

			if (!FLAG(w, WIN_LOGGED))
				continue;
			sw = stored_window(w);
			if (fold)
			{
				sw.place = w;
				set_flags(w, true, false);
			}
			fn(KEY_OF(k), &sw, arg);
			logged = true;
		}
		if (logged && !fold)
		{
			kept = key_list_append(st, kept, k);
			continue;
		}
		k->windows_flags &= ~(uintptr_t) KEY_LOGGED;
		if (droppable(st, k))
			forget_key(st, k);
	}
	if (fold)
	{
		st->logged_windows = 0;
		st->logged_bytes = 0;
	}
	list_free(st->logged_keys);
	st->logged_keys = kept;
}

/*
 * The windows whose newest state is in state_log only, and the bytes of
 * their keys and states.
 */
void
state_store_logged(const StateStore *st, int64 *windows, int64 *bytes)
{
	*windows = st->logged_windows;
	*bytes = st->logged_bytes;
}

/* The windows that left with a row in window_state, and their keys' bytes. */
void
state_store_departed(const StateStore *st, int64 *windows, int64 *bytes)
{
	*windows = list_length(st->departed);
	*bytes = st->departed_bytes;
}

/* The windows to fold, to write into window_state (each_logged). */
void
state_store_fold(StateStore *st, StoredWindowFn fn, void *arg)
{
	each_logged(st, fn, arg, true);
}

/*
 * Where the row of a window given to a fold (state_store_fold) went.  A
 * store is the transaction's until it commits (held_state.c): an abort
 * discards it, and the row with it.
 */
void
state_store_located(const void *place, ItemPointer row)
{
	((StoreWin *) place)->row = *row;
}

/* The windows to fold, to write into one state_log row (each_logged). */
void
state_store_compact(StateStore *st, StoredWindowFn fn, void *arg)
{
	each_logged(st, fn, arg, false);
}

/*
 * Remembers a window that left with a row in window_state, for the next
 * fold to delete: deleting each such row as its window leaves (a session
 * grows into new bounds at nearly every row) cost more than the rest of
 * the step.
 */
void
state_store_depart(StateStore *st, const bytea *key, int64 start, int64 end,
				   ItemPointer row)
{
	Size		len = VARSIZE_ANY(key);
	StoreDeparted *d = MemoryContextAlloc(st->departed_cxt,
										  offsetof(StoreDeparted, key) + len);
	MemoryContext old = MemoryContextSwitchTo(st->departed_cxt);

	changing(st);
	d->start = start;
	d->end = end;
	d->row = *row;
	memcpy(d->key, key, len);
	st->departed = lappend(st->departed, d);
	st->departed_bytes += VARSIZE_ANY_EXHDR(key);
	MemoryContextSwitchTo(old);
}

/*
 * Gives fn every window that left since the last fold with a row in
 * window_state: the fold deletes those rows, then forgets them
 * (state_store_departures_done), since fn may keep pointers to them.
 */
void
state_store_departures(StateStore *st, DepartedFn fn, void *arg)
{
	ListCell   *lc;

	changing(st);
	foreach(lc, st->departed)
	{
		StoreDeparted *d = lfirst(lc);

		fn((const bytea *) d->key, d->start, d->end, &d->row, arg);
	}
}

/* The departures are deleted from window_state: forgets them. */
void
state_store_departures_done(StateStore *st)
{
	changing(st);
	st->departed = NIL;
	st->departed_bytes = 0;
	MemoryContextReset(st->departed_cxt);
}

/* The memory all stores of this process take, a join's kept rows too. */
static int64
stores_bytes(void)
{
	return held_state_bytes(NULL);
}

/* Whether a state of so many bytes would fit beside the stores there are. */
bool
state_store_fits(int64 bytes)
{
	return stores_bytes() + bytes <= (int64) state_store_memory * 1024;
}

/*
 * Copies the store's windows and keys into a context of their own size and
 * frees the old one.  The room that windows leave is kept for new ones,
 * and stays taken from the process until then: a store that shrank for
 * good gives it back this way.
 */
static void
compact(StateStore *st)
{
	MemoryContext old_cxt = st->cxt;
	storekeys_hash *old_keys = st->keys;
	storekeys_iterator it;
	KeySlot    *slot;

	st->cxt = store_context();
	init_contents(st);
	storekeys_start_iterate(old_keys, &it);
	while ((slot = storekeys_iterate(old_keys, &it)) != NULL)
	{
		StoreKeyEnt *k = slot_entry(slot);
		StoreKeyEnt *copy;

		/* the next fold would have dropped it (each_logged) */
		if (st->complete && KEY_WINDOWS(k) == NULL)
			continue;
		copy = key_entry(st, KEY_OF(k));

		for (StoreWin *w = KEY_WINDOWS(k); w != NULL; w = w->next)
		{
			StoredWindow sw = stored_window(w);

			state_store_put(st, KEY_OF(k), &sw);
			if (!FLAG(w, WIN_TOUCHED))
				KEY_WINDOWS(copy)->owner_flags &= ~(uintptr_t) WIN_TOUCHED;
		}
	}
	MemoryContextDelete(old_cxt);
}

/*
 * Whether a step put any of a key's windows back since the last eviction
 * looked at it; the marks are cleared, so that the next one may take the
 * key if no step touches it in between (CLOCK's second chance).
 */
static bool
touched(StoreKeyEnt *k)
{
	bool		any = false;

	for (StoreWin *w = KEY_WINDOWS(k); w != NULL; w = w->next)
	{
		any |= FLAG(w, WIN_TOUCHED);
		w->owner_flags &= ~(uintptr_t) WIN_TOUCHED;
	}
	return any;
}

/*
 * Whether a key's windows may leave for the heap: their newest states are
 * there (and the list of keys to fold does not point at it).
 */
static bool
evictable(const StoreKeyEnt *k)
{
	if (KEY_IS_LOGGED(k))
		return false;
	for (const StoreWin *w = KEY_WINDOWS(k); w != NULL; w = w->next)
		if (FLAG(w, WIN_LOGGED) || !FLAG(w, WIN_STORED))
			return false;
	return true;
}

/*
 * A key and its windows leave the store, which no longer knows the key:
 * its next row reads the heap.  Returns the bytes that left, and adds the
 * windows to *windows and their earliest due time to *first_due.
 */
static int64
evict_key(StateStore *st, StoreKeyEnt *k, int64 *windows, int64 *first_due)
{
	int64		bytes = MAXALIGN(key_ent_size(KEY_OF(k)));
	StoreWin   *w = KEY_WINDOWS(k);

	while (w != NULL)
	{
		StoreWin   *next = w->next;
		Size		size = piece_size(VARSIZE_ANY_EXHDR(STATES(w)));

		*first_due = Min(*first_due, w->due);
		pairingheap_remove(st->due, &w->node);
		piece_free(st, w, size);
		bytes += MAXALIGN(size);
		st->windows--;
		(*windows)++;
		w = next;
	}
	forget_key(st, k);
	return bytes;
}

/*
 * The keys' table rebuilt for the keys left, where that at least halves
 * it: it does not shrink by itself as keys leave (their windows fired and
 * left, or an eviction took them), and the budget counts all of it.  The
 * entries stay in place.  The old table hands its keys over in the order
 * of their hashes, which can make the new one grow on the way, as
 * simplehash does where keys crowd together: then the old one stays.
 */
static void
shrink_keys(StateStore *st)
{
	storekeys_hash *old = st->keys;
	storekeys_hash *smaller;
	storekeys_iterator it;
	KeySlot    *slot;

	if (old->members >= old->size / 4)
		return;
	smaller = storekeys_create(st->cxt, old->members, NULL);
	storekeys_start_iterate(old, &it);
	while ((slot = storekeys_iterate(old, &it)) != NULL)
	{
		bool		found;

		storekeys_insert_hash(smaller, slot->key, slot->hash, &found)->key = slot->key;
	}
	if (smaller->size >= old->size)
	{
		storekeys_destroy(smaller);
		return;
	}
	st->keys = smaller;
	storekeys_destroy(old);
}

/* The bytes of the keys' table once shrink_keys ran with "members" keys left. */
static int64
keys_table_bytes(const StateStore *st, uint64 members)
{
	uint64		size = st->keys->size;

	if (members < size / 4)
		size = pg_nextpower2_64(Max((uint64) (members / KEYS_FILL), 2));
	return size * sizeof(KeySlot);
}

/*
 * What an eviction leaves of the budget: room for the next steps' new keys,
 * so that not every step evicts (each folds the state log first).
 */
#define EVICT_TO(budget) ((budget) / 4 * 3)

/*
 * Makes room in the budget: keys and their windows leave the store for the
 * heap until the stores of this process take at most EVICT_TO of it, the
 * keys no step touched since the last eviction first, then any that may
 * leave (evictable: the caller folds the state log first).  The store is
 * partial from then on: it reads the keys that left by key and by due
 * time, as it reads those it never held.  The keys' table gives its slots
 * back only as it shrinks, at the end (shrink_keys): what it will take
 * then counts, not what it takes, and a table that did not shrink as
 * expected makes a second round.
 */
void
state_store_evict(StateStore *st)
{
	int64		to = EVICT_TO((int64) state_store_memory * 1024);
	int64		windows = 0;
	int64		first_due = WMK_END;

	changing(st);
	settle(st);
	for (int round = 0; round < 2 && stores_bytes() > to; round++)
	{
		int64		over = stores_bytes() - keys_table_bytes(st, st->keys->members) - to;

		for (int pass = 0; pass < 2; pass++)
		{
			storekeys_iterator it;
			KeySlot    *slot;

			/* a key evicted leaves the table: iteration allows it */
			storekeys_start_iterate(st->keys, &it);
			while (over + keys_table_bytes(st, st->keys->members) > 0 &&
				   (slot = storekeys_iterate(st->keys, &it)) != NULL)
			{
				StoreKeyEnt *k = slot_entry(slot);

				if ((pass == 0 && touched(k)) || !evictable(k))
					continue;
				over -= evict_key(st, k, &windows, &first_due);
			}
		}
		shrink_keys(st);
	}
	if (windows > 0)
	{
		/*
		 * What the heap alone holds may now be due from first_due: the next
		 * read by due time starts before it (state.c reads ahead of the
		 * watermark, so the store may have read past it).  Every window of
		 * a complete store was in memory, so none on the heap is due
		 * sooner: a read from the start would read the windows of every
		 * key that left (all of them, where a trigger's early timers make
		 * every window due at once).
		 */
		if (st->complete)
		{
			st->heap_until = wmk_add(first_due, -1);
			st->heap_next = first_due;
		}
		else
		{
			st->heap_until = Min(st->heap_until, wmk_add(first_due, -1));
			if (st->heap_next != WMK_NONE)
				st->heap_next = Min(st->heap_next, first_due);
		}
		st->complete = false;
		st->heap_windows += windows;
	}
}

/*
 * The step put back what it took: the store holds the state of step
 * "version", at the step's clock, to be the pipeline's if the transaction
 * commits.  Past the budget it is thrown away (the pipeline's next step
 * reads the heap).
 */
void
state_store_done(StateStore *st, int64 version, StateLog log, int64 clock)
{
	changing(st);
	settle(st);
	shrink_keys(st);
	st->held.version = version;
	st->log = log;
	st->clock = clock;
	st->taken = false;
	if (stores_bytes() > (int64) state_store_memory * 1024)
	{
		spilled.slot = st->held.slot;
		spilled.version = version;
		spilled.windows = st->windows + st->heap_windows;
		discard(st);
	}
	else if (!state_slots_reserve(&st->held.slot))
		discard(st);
	else if (MemoryContextMemAllocated(st->cxt, true) > 2 * store_bytes(st))
		compact(st);
}

/*
 * The windows of a pipeline as of step "version", if this process threw
 * its store of that step away for the budget.
 */
bool
state_store_spilled_windows(int32 pipeline_id, int64 version, int64 *windows)
{
	SlotKey		key = state_slots_key(pipeline_id);

	if (spilled.version != version || memcmp(&spilled.slot, &key, sizeof(SlotKey)) != 0)
		return false;
	*windows = spilled.windows;
	return true;
}

/* Forgets a pipeline's state here and, in any process, its slot. */
void
state_store_forget(int32 pipeline_id)
{
	StateStore *st = lookup(pipeline_id);
	SlotKey		key = state_slots_key(pipeline_id);

	if (st != NULL && !st->held.changing)
		discard(st);
	state_slots_clear(&key);
}
