/*
 * held_state.c
 *		A pipeline's state held in the memory of one process, which belongs
 *		to the transaction that changes it.
 *
 * An aggregate pipeline's windows (state_store.c) and an interval join's
 * kept rows (join_store.c) stay in the memory of the process that stepped
 * the pipeline, between steps.  Memory does not roll back, so a state
 * changed by a transaction is that transaction's until it ends: at commit
 * it becomes the pipeline's state, and its slot (state_slots.c) tells every
 * backend which process holds it, of which step; at abort, at PREPARE (the
 * prepared transaction may commit in another process, or never), or when
 * the subtransaction that changed it last rolls back, it is thrown away,
 * and the pipeline's next step here reads the durable copy.  A state whose
 * slot names another process or another step (the pipeline was stepped
 * elsewhere, evicted or dropped) is stale: it goes at the next sweep.
 */
#include "compat.h"

#include "access/xact.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"

#include "held_state.h"

static List *held = NIL;		/* HeldState *, in TopMemoryContext */
static bool callbacks_registered = false;

/* Frees h, out of the list already, and its slot if this process held it. */
static void
free_held(HeldState *h)
{
	state_slots_release(&h->slot);
	h->kind->free(h);
}

/* The state ends with the transaction that changed it, kept or thrown away. */
static void
xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_ABORT && event != XACT_EVENT_PREPARE)
		return;
	foreach(lc, held)
	{
		HeldState  *h = lfirst(lc);

		if (!h->changing)
			continue;
		h->changing = false;
		if (event == XACT_EVENT_COMMIT && h->kind->commit(h))
			continue;
		held = foreach_delete_current(held, lc);
		free_held(h);
	}
}

/*
 * A subtransaction that changed a state and rolls back takes the state
 * with it; one that commits hands it to its parent.
 */
static void
subxact_callback(SubXactEvent event, SubTransactionId subxid, SubTransactionId parent, void *arg)
{
	ListCell   *lc;

	if (event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB)
		return;
	foreach(lc, held)
	{
		HeldState  *h = lfirst(lc);

		if (!h->changing || h->subxid != subxid)
			continue;
		if (event == SUBXACT_EVENT_COMMIT_SUB)
		{
			h->subxid = parent;
			continue;
		}
		held = foreach_delete_current(held, lc);
		free_held(h);
	}
}

/* h is a state of "kind" for pipeline_id, of no step yet. */
void
held_state_init(HeldState *h, const HeldStateKind *kind, int32 pipeline_id)
{
	h->kind = kind;
	h->slot = state_slots_key(pipeline_id);
	h->version = -1;
	h->changing = false;
}

/* h is the state this process holds for its pipeline. */
void
held_state_keep(HeldState *h)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	held = lappend(held, h);
	MemoryContextSwitchTo(old);
}

/* The state of "kind" this process holds for pipeline_id, or NULL. */
HeldState *
held_state_lookup(int32 pipeline_id, const HeldStateKind *kind)
{
	ListCell   *lc;

	foreach(lc, held)
	{
		HeldState  *h = lfirst(lc);

		if (h->slot.pipeline_id == pipeline_id && h->kind == kind)
			return h;
	}
	return NULL;
}

/*
 * Whether h holds the state of step "version" of the pipeline as it now
 * is (not one of an extension dropped and created again), committed and
 * still named by its slot, or this transaction's own.
 */
bool
held_state_current(const HeldState *h, int64 version)
{
	return h->slot.extoid == state_slots_key(h->slot.pipeline_id).extoid &&
		h->version == version &&
		(h->changing || state_slots_held_here(&h->slot, version));
}

/* The state is the current transaction's until it ends. */
void
held_state_changing(HeldState *h)
{
	if (!callbacks_registered)
	{
		RegisterXactCallback(xact_callback, NULL);
		RegisterSubXactCallback(subxact_callback, NULL);
		callbacks_registered = true;
	}
	h->changing = true;
	h->subxid = GetCurrentSubTransactionId();
}

void
held_state_discard(HeldState *h)
{
	held = list_delete_ptr(held, h);
	free_held(h);
}

/*
 * Throws away the states whose slot no longer names this process, while no
 * transaction has them.
 */
void
held_state_sweep(void)
{
	ListCell   *lc;

	foreach(lc, held)
	{
		HeldState  *h = lfirst(lc);

		if (h->changing || state_slots_held_here(&h->slot, h->version))
			continue;
		held = foreach_delete_current(held, lc);
		free_held(h);
	}
}

/*
 * The memory the states this process holds take, all of them but
 * "besides" (if not NULL): windowing.state_memory caps them together.
 */
int64
held_state_bytes(const HeldState *besides)
{
	int64		bytes = 0;
	ListCell   *lc;

	foreach(lc, held)
	{
		HeldState  *h = lfirst(lc);

		if (h != besides)
			bytes += h->kind->bytes(h);
	}
	return bytes;
}
