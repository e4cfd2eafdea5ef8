/*
 * state_store.h
 *		A pipeline's committed windows, by key, in the memory of the process
 *		that steps it.
 */
#ifndef WINDOWING_STATE_STORE_H
#define WINDOWING_STATE_STORE_H

#include "postgres.h"

#include "storage/itemptr.h"

extern int	state_store_memory;

typedef struct StateStore StateStore;

/* A window as the store keeps it. */
typedef struct StoredWindow
{
	int64		start;
	int64		end;
	int64		due;			/* the watermark at which a timer of it runs */
	int			fire_count;
	bool		stored;			/* a row exists in window_state */
	bool		logged;			/* newer states in state_log than that row */
	const bytea *state;			/* its trigger's and aggregates' states */
	/*
	 * Where its row in window_state was when last read or written, if
	 * known (else invalid): a table rewritten since, or a row another
	 * process changed, leaves it stale, so whoever uses it checks the row
	 * it finds there.
	 */
	ItemPointerData row;
	/*
	 * Where the store held a window it took out (state_store_take_key,
	 * state_store_take_due), for the step to give back when it puts the
	 * window back; or a window given to a fold, for it to tell where the
	 * window's row went (state_store_located); else NULL.
	 */
	const void *place;
} StoredWindow;

/*
 * The pipeline's state_log rows since the last fold: the steps that wrote
 * them, their size, and the first of those steps (0 if not known), from
 * which the fold deletes them.
 */
typedef struct StateLog
{
	int			steps;
	int64		bytes;
	int64		first;
} StateLog;

typedef void (*StoredWindowFn) (const bytea *key, const StoredWindow *w, void *arg);
/* A key as a number in the order the caller takes keys in (keys_order_prefix). */
typedef uint64 (*KeyPrefixFn) (const bytea *key, const void *arg);
typedef void (*DepartedFn) (const bytea *key, int64 start, int64 end, ItemPointer row,
							void *arg);

extern StateStore *state_store_find(int32 pipeline_id, int64 version, uint64 shape);
extern StateStore *state_store_create(int32 pipeline_id, uint64 shape, bool complete);
extern bool state_store_fits(int64 bytes);
extern StateLog state_store_log(const StateStore *st);
extern bool state_store_take_key(StateStore *st, const bytea *key,
								 StoredWindowFn fn, void *arg);
extern bool state_store_knows(const StateStore *st, const bytea *key);
extern void state_store_prefetch(const StateStore *st, const uint32 *hashes, int n);
extern void state_store_know(StateStore *st, const bytea *key);
extern int32 state_store_pipeline(const StateStore *st);
extern bool state_store_complete(const StateStore *st);
extern int64 state_store_heap_until(const StateStore *st);
extern int64 state_store_heap_next(const StateStore *st);
extern void state_store_set_heap_due(StateStore *st, int64 until, int64 next);
extern void state_store_heap_windows(StateStore *st, int64 windows);
extern bool state_store_room_ahead(StateStore *st);
extern const bytea *state_store_read_ahead(const StateStore *st);
extern void state_store_set_read_ahead(StateStore *st, const bytea *key);
extern bool state_store_take_due(StateStore *st, int64 upto, int64 max,
								 KeyPrefixFn order, const void *order_arg,
								 StoredWindowFn fn, void *arg);
extern bool state_store_taken(const StateStore *st);
extern void state_store_each(StateStore *st, StoredWindowFn fn, void *arg);
extern void state_store_clear(StateStore *st);
extern void state_store_put(StateStore *st, const bytea *key, const StoredWindow *w);
extern void state_store_logged(const StateStore *st, int64 *windows, int64 *bytes);
extern void state_store_departed(const StateStore *st, int64 *windows, int64 *bytes);
extern void state_store_fold(StateStore *st, StoredWindowFn fn, void *arg);
extern void state_store_located(const void *place, ItemPointer row);
extern void state_store_compact(StateStore *st, StoredWindowFn fn, void *arg);
extern void state_store_depart(StateStore *st, const bytea *key, int64 start, int64 end,
							   ItemPointer row);
extern void state_store_departures(StateStore *st, DepartedFn fn, void *arg);
extern void state_store_departures_done(StateStore *st);
extern void state_store_evict(StateStore *st);
extern void state_store_done(StateStore *st, int64 version, StateLog log, int64 clock);
extern void state_store_set_clock(StateStore *st, int64 clock);
extern int64 state_store_clock(const StateStore *st);
extern bool state_store_spilled_windows(int32 pipeline_id, int64 version, int64 *windows);
extern void state_store_forget(int32 pipeline_id);

#endif							/* WINDOWING_STATE_STORE_H */
