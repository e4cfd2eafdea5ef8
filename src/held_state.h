/*
 * held_state.h
 *		A pipeline's state held in the memory of one process, which belongs
 *		to the transaction that changes it (held_state.c).
 */
#ifndef WINDOWING_HELD_STATE_H
#define WINDOWING_HELD_STATE_H

#include "postgres.h"

#include "state_slots.h"

typedef struct HeldState HeldState;

/* What a kind of held state does when its transaction ends. */
typedef struct HeldStateKind
{
	/*
	 * At commit: publish the state in its slot and return true to keep it,
	 * or false to have it freed.  It must not fail: anything it needs was
	 * allocated before (state_slots_reserve).
	 */
	bool		(*commit) (HeldState *h);
	/* frees the state (its slot was released) */
	void		(*free) (HeldState *h);
	/* the memory it takes, which windowing.state_memory caps */
	int64		(*bytes) (HeldState *h);
} HeldStateKind;

/* The first member of each kind's state. */
struct HeldState
{
	const HeldStateKind *kind;
	SlotKey		slot;
	int64		version;		/* the step whose state it holds */
	bool		changing;		/* by the current transaction */
	SubTransactionId subxid;	/* the innermost subtransaction that did */
};

extern void held_state_init(HeldState *h, const HeldStateKind *kind, int32 pipeline_id);
extern void held_state_keep(HeldState *h);
extern HeldState *held_state_lookup(int32 pipeline_id, const HeldStateKind *kind);
extern bool held_state_current(const HeldState *h, int64 version);
extern void held_state_changing(HeldState *h);
extern void held_state_discard(HeldState *h);
extern void held_state_sweep(void);
extern int64 held_state_bytes(const HeldState *besides);

#endif							/* WINDOWING_HELD_STATE_H */
