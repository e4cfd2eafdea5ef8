/*
 * state_store.c
 *		Window state of pipelines in shared memory, within a budget.
 *
 * The durable copy of every window's state is windowing.window_state,
 * written by each step in its own transaction; that is what makes a step
 * exactly once.  This store keeps, per pipeline, the state as of its last
 * committed step in a DSA area so the next step (in any backend: the worker
 * or a process() call) reads it from memory instead of the heap table.
 *
 * A step stages the new image in the area before it commits and a
 * transaction callback publishes it on commit, or frees it on abort; an
 * image staged in a subtransaction that rolls back is freed then, since
 * the step it describes is undone and the pipeline's lock released.  A
 * prepared transaction's images are freed at PREPARE: it may commit in any
 * backend, or never, so its pipelines' next steps read the heap.  Each
 * image carries the pipeline's step count, and a step only trusts an image
 * whose count equals the committed one, so an aborted step, a crash (which
 * resets shared memory) or a concurrent writer can only make a step fall
 * back to the heap, never read stale state.  Images are capped by
 * windowing.state_memory: a pipeline whose image does not fit is simply
 * read from the heap ("spilled"), with identical results.  The budget is
 * counted here rather than with dsa_set_size_limit, so that the hash
 * table's own small allocations can never fail, least of all in the commit
 * callback, where an error is not allowed.
 */
#include "compat.h"

#include "access/xact.h"
#include "lib/dshash.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/dsa.h"
#include "utils/memutils.h"

#include "state_store.h"
#include "version.h"

int			state_store_memory = 64 * 1024;	/* kB */

typedef struct StoreShared
{
	LWLock		lock;			/* creating the area and table */
	dsa_handle	area;
	dshash_table_handle table;
	int			tranche;
	pg_atomic_uint64 bytes;		/* images allocated, staged or published */
} StoreShared;

/*
 * Pipeline ids are numbered per installation of the extension in a
 * database; the area serves the cluster.
 */
typedef struct StoreKey
{
	Oid			dboid;
	Oid			extoid;
	int32		pipeline_id;
} StoreKey;

typedef struct StoreEntry
{
	StoreKey	key;			/* hash key */
	int64		version;		/* steps committed when the image was made */
	dsa_pointer image;
	Size		size;
} StoreEntry;

/* An image staged by this transaction, published at commit. */
typedef struct Staged
{
	StoreKey	key;			/* a commit has no catalog access to make it */
	int64		version;
	dsa_pointer image;
	Size		size;
	SubTransactionId subxid;	/* the subtransaction whose step made it */
} Staged;

static StoreShared *shared = NULL;
static dsa_area *area = NULL;
static dshash_table *table = NULL;
static List *staged = NIL;		/* Staged *, in TopTransactionContext */
static bool callback_registered = false;

static const dshash_parameters table_params = {
	sizeof(StoreKey),
	sizeof(StoreEntry),
	dshash_memcmp,
	dshash_memhash,
	0							/* tranche id, set at attach */
};

static StoreKey
key_of(int32 pipeline_id)
{
	StoreKey	key;

	memset(&key, 0, sizeof(key));	/* hashed and compared as bytes */
	key.dboid = MyDatabaseId;
	key.extoid = windowing_extension_oid();
	key.pipeline_id = pipeline_id;
	return key;
}

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
store_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(StoreShared)));
}

static void
store_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("windowing state store", sizeof(StoreShared), &found);
	if (!found)
	{
		shared->tranche = LWLockNewTrancheId();
		LWLockInitialize(&shared->lock, shared->tranche);
		shared->area = DSM_HANDLE_INVALID;
		shared->table = DSM_HANDLE_INVALID;
		pg_atomic_init_u64(&shared->bytes, 0);
	}
	LWLockRelease(AddinShmemInitLock);
	LWLockRegisterTranche(shared->tranche, "windowing_state_store");
}

/* From _PG_init, while preloading: without it, state is read from the heap. */
void
state_store_request_shmem(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = store_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = store_shmem_startup;
}

/* Attaches to (or creates) the area; false if the library was not preloaded. */
static bool
attach(void)
{
	dshash_parameters params = table_params;
	MemoryContext old;

	if (table != NULL)
		return true;
	if (shared == NULL)
		return false;
	params.tranche_id = shared->tranche;
	/* the area and table handles live as long as the backend */
	old = MemoryContextSwitchTo(TopMemoryContext);
	LWLockAcquire(&shared->lock, LW_EXCLUSIVE);
	if (shared->area == DSM_HANDLE_INVALID)
	{
		area = dsa_create(shared->tranche);
		dsa_pin(area);
		table = dshash_create(area, &params, NULL);
		shared->area = dsa_get_handle(area);
		shared->table = dshash_get_hash_table_handle(table);
	}
	else
	{
		area = dsa_attach(shared->area);
		table = dshash_attach(area, &params, shared->table, NULL);
	}
	dsa_pin_mapping(area);
	LWLockRelease(&shared->lock);
	MemoryContextSwitchTo(old);
	return true;
}

/*
 * Copies the committed image of a pipeline into palloc'd memory if it is
 * the one of step "version"; NULL otherwise (read the heap instead).
 */
char *
state_store_get(int32 pipeline_id, int64 version, Size *size)
{
	StoreKey	key = key_of(pipeline_id);
	StoreEntry *e;
	char	   *copy = NULL;

	if (!attach())
		return NULL;
	e = dshash_find(table, &key, false);
	if (e == NULL)
		return NULL;
	if (e->version == version && DsaPointerIsValid(e->image))
	{
		*size = e->size;
		copy = palloc(e->size);
		memcpy(copy, dsa_get_address(area, e->image), e->size);
	}
	dshash_release_lock(table, e);
	return copy;
}

static void
free_image(dsa_pointer p, Size size)
{
	if (!DsaPointerIsValid(p))
		return;
	dsa_free(area, p);
	pg_atomic_sub_fetch_u64(&shared->bytes, size);
}

/* Publishes staged images at commit; frees them at abort or PREPARE. */
static void
store_xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;

	if (staged == NIL || (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
						  event != XACT_EVENT_PARALLEL_ABORT && event != XACT_EVENT_PREPARE))
		return;
	foreach(lc, staged)
	{
		Staged	   *s = lfirst(lc);
		StoreEntry *e;

		/* the entry was reserved when the image was staged */
		e = event == XACT_EVENT_COMMIT ?
			dshash_find(table, &s->key, true) : NULL;
		if (e == NULL)
		{
			free_image(s->image, s->size);
			continue;
		}
		free_image(e->image, e->size);
		e->version = s->version;
		e->image = s->image;
		e->size = s->size;
		dshash_release_lock(table, e);
	}
	staged = NIL;				/* its memory goes with the transaction */
}

/*
 * A subtransaction's images follow its fate: freed if it rolls back, handed
 * to its parent if it commits.
 */
static void
store_subxact_callback(SubXactEvent event, SubTransactionId subxid,
					   SubTransactionId parent, void *arg)
{
	ListCell   *lc;

	if (event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB)
		return;
	foreach(lc, staged)
	{
		Staged	   *s = lfirst(lc);

		if (s->subxid != subxid)
			continue;
		if (event == SUBXACT_EVENT_COMMIT_SUB)
			s->subxid = parent;
		else
		{
			free_image(s->image, s->size);
			staged = foreach_delete_current(staged, lc);
		}
	}
}

/* Forgets a pipeline's image (it no longer fits, or the pipeline is gone). */
void
state_store_forget(int32 pipeline_id)
{
	StoreKey	key = key_of(pipeline_id);
	StoreEntry *e;

	if (!attach())
		return;
	e = dshash_find(table, &key, true);
	if (e == NULL)
		return;
	free_image(e->image, e->size);
	dshash_delete_entry(table, e);
}

/* Makes sure the pipeline has an entry, so that commit needs no allocation. */
static void
reserve_entry(int32 pipeline_id)
{
	StoreKey	key = key_of(pipeline_id);
	bool		found;
	StoreEntry *e = dshash_find_or_insert(table, &key, &found);

	if (!found)
	{
		e->version = -1;
		e->image = InvalidDsaPointer;
		e->size = 0;
	}
	dshash_release_lock(table, e);
}

/*
 * Stages the image of a pipeline's state after the current step, to be
 * published if the transaction commits.  An image over the budget is not
 * kept: the pipeline's next step reads the heap.
 */
void
state_store_put(int32 pipeline_id, int64 version, const char *image, Size size)
{
	MemoryContext old;
	Staged	   *s;
	dsa_pointer p;

	if (!attach())
		return;
	if (pg_atomic_add_fetch_u64(&shared->bytes, size) > (uint64) state_store_memory * 1024)
	{
		pg_atomic_sub_fetch_u64(&shared->bytes, size);
		state_store_forget(pipeline_id);
		return;
	}
	p = dsa_allocate_extended(area, Max(size, 1), DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(p))
	{
		pg_atomic_sub_fetch_u64(&shared->bytes, size);
		state_store_forget(pipeline_id);
		return;
	}
	reserve_entry(pipeline_id);
	memcpy(dsa_get_address(area, p), image, size);
	if (!callback_registered)
	{
		RegisterXactCallback(store_xact_callback, NULL);
		RegisterSubXactCallback(store_subxact_callback, NULL);
		callback_registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	s = palloc(sizeof(Staged));
	s->key = key_of(pipeline_id);
	s->version = version;
	s->image = p;
	s->size = size;
	s->subxid = GetCurrentSubTransactionId();
	staged = lappend(staged, s);
	MemoryContextSwitchTo(old);
}

/* Bytes of a pipeline's state held in shared memory (0 if spilled). */
int64
state_store_bytes(int32 pipeline_id, int64 version)
{
	StoreKey	key = key_of(pipeline_id);
	StoreEntry *e;
	int64		bytes = 0;

	if (!attach())
		return 0;
	e = dshash_find(table, &key, false);
	if (e == NULL)
		return 0;
	if (e->version == version)
		bytes = (int64) e->size;
	dshash_release_lock(table, e);
	return bytes;
}
