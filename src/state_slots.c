/*
 * state_slots.c
 *		Which process holds each pipeline's window state in its memory.
 *
 * A pipeline's windows live in the memory of the process that steps it
 * (state_store.c): the worker, or a backend that calls process().  A slot
 * per pipeline, in a dshash table every backend sees, says which process
 * that is, as of which step, and how big the state is.  It serves two
 * ends: pipeline_stats reports state held anywhere, and a process trusts
 * its own copy only while the slot still names it, so that another
 * backend can evict it (_forget_state) or step the pipeline in between.
 * A process's slots go when it exits.
 *
 * A step reserves its pipeline's slot before it commits and the commit
 * callback fills it in: only the reservation allocates, so nothing in the
 * callback can fail.
 */
#include "compat.h"

#include "lib/dshash.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/dsa.h"
#include "utils/memutils.h"

#include "state_slots.h"
#include "version.h"

typedef struct SlotsShared
{
	LWLock		lock;			/* creating the area and table */
	dsa_handle	area;
	dshash_table_handle table;
	int			tranche;
} SlotsShared;

typedef struct Slot
{
	SlotKey		key;			/* hash key */
	int64		version;		/* steps committed when it was filled in */
	int			pid;			/* the process that holds the state, or 0 */
	int64		memory_windows;	/* in its memory */
	int64		windows;		/* all of them, on the heap too */
	int64		bytes;
} Slot;

static SlotsShared *shared = NULL;
static dsa_area *area = NULL;
static dshash_table *table = NULL;

static const dshash_parameters table_params = {
	sizeof(SlotKey),
	sizeof(Slot),
	dshash_memcmp,
	dshash_memhash,
	0							/* tranche id, set at attach */
};

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
slots_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(SlotsShared)));
}

static void
slots_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("windowing state slots", sizeof(SlotsShared), &found);
	if (!found)
	{
		shared->tranche = LWLockNewTrancheId();
		LWLockInitialize(&shared->lock, shared->tranche);
		shared->area = DSM_HANDLE_INVALID;
		shared->table = DSM_HANDLE_INVALID;
	}
	LWLockRelease(AddinShmemInitLock);
	LWLockRegisterTranche(shared->tranche, "windowing_state_slots");
}

/* From _PG_init, while preloading: without it, no process sees another's. */
void
state_slots_request_shmem(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = slots_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = slots_shmem_startup;
}

/* Empties the slots of an exiting process: its memory goes with it. */
static void
clear_own_slots(int code, Datum arg)
{
	dshash_seq_status seq;
	Slot	   *s;

	dshash_seq_init(&seq, table, true);
	while ((s = dshash_seq_next(&seq)) != NULL)
		if (s->pid == MyProcPid)
			dshash_delete_current(&seq);
	dshash_seq_term(&seq);
}

/* Attaches to (or creates) the table; false if the library was not preloaded. */
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
	before_shmem_exit(clear_own_slots, (Datum) 0);
	return true;
}

/* A pipeline's slot key (read from the catalog: not in a commit callback). */
SlotKey
state_slots_key(int32 pipeline_id)
{
	SlotKey		key;

	memset(&key, 0, sizeof(key));	/* hashed and compared as bytes */
	key.dboid = MyDatabaseId;
	key.extoid = windowing_extension_oid();
	key.pipeline_id = pipeline_id;
	return key;
}

/* Makes sure the pipeline has a slot, so that publishing allocates nothing. */
bool
state_slots_reserve(const SlotKey *key)
{
	bool		found;
	Slot	   *s;

	if (!attach())
		return false;
	s = dshash_find_or_insert(table, key, &found);
	if (!found)
	{
		s->version = -1;
		s->pid = 0;
		s->memory_windows = 0;
		s->windows = 0;
		s->bytes = 0;
	}
	dshash_release_lock(table, s);
	return true;
}

/*
 * This process holds the pipeline's state of step "version" (at commit:
 * allocates nothing, and does nothing if the slot was not reserved).
 */
void
state_slots_publish(const SlotKey *key, int64 version, int64 memory_windows,
					int64 windows, int64 bytes)
{
	Slot	   *s;

	if (table == NULL || (s = dshash_find(table, key, true)) == NULL)
		return;
	s->version = version;
	s->pid = MyProcPid;
	s->memory_windows = memory_windows;
	s->windows = windows;
	s->bytes = bytes;
	dshash_release_lock(table, s);
}

/* No process holds the pipeline's state any longer: its slot goes. */
void
state_slots_clear(const SlotKey *key)
{
	Slot	   *s;

	if (!attach() || (s = dshash_find(table, key, true)) == NULL)
		return;
	dshash_delete_entry(table, s);
}

/* This process no longer holds the pipeline's state, if its slot says it did. */
void
state_slots_release(const SlotKey *key)
{
	Slot	   *s;

	if (table == NULL || (s = dshash_find(table, key, true)) == NULL)
		return;
	if (s->pid == MyProcPid)
		dshash_delete_entry(table, s);
	else
		dshash_release_lock(table, s);
}

/*
 * Whether this process's copy of step "version" is still the pipeline's:
 * nobody evicted it.  Without the shared table, only the version tells.
 */
bool
state_slots_held_here(const SlotKey *key, int64 version)
{
	Slot	   *s;
	bool		held;

	if (!attach())
		return true;
	s = dshash_find(table, key, false);
	if (s == NULL)
		return false;
	held = s->pid == MyProcPid && s->version == version;
	dshash_release_lock(table, s);
	return held;
}

/*
 * The windows (in memory, and all) and bytes of a pipeline's state of step
 * "version" in some process.
 */
bool
state_slots_get(int32 pipeline_id, int64 version, int64 *memory_windows,
				int64 *windows, int64 *bytes)
{
	SlotKey		key = state_slots_key(pipeline_id);
	Slot	   *s;
	bool		found;

	if (!attach() || (s = dshash_find(table, &key, false)) == NULL)
		return false;
	found = s->pid != 0 && s->version == version;
	*memory_windows = s->memory_windows;
	*windows = s->windows;
	*bytes = s->bytes;
	dshash_release_lock(table, s);
	return found;
}
