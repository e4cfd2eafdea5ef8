/*
 * operator.h
 *		Flink's window operator for one pipeline step: window state keyed by
 *		(key, window), the watermark, firing and cleanup timers, late rows.
 */
#ifndef WINDOWING_OPERATOR_H
#define WINDOWING_OPERATOR_H

#include "postgres.h"

#include "lib/pairingheap.h"
#include "nodes/pg_list.h"
#include "utils/hsearch.h"

#include "aggregates.h"
#include "spec.h"
#include "state_store.h"
#include "watermark.h"

struct TriggerDef;

/* A window of one key; "key" is the key columns in binary form. */
typedef struct WindowKey
{
	bytea	   *key;
	int64		start;
	int64		end;
} WindowKey;

/*
 * A window's identity.  It outlives the window's entry, which leaves the
 * operator's table as soon as the window is gone, for the firings and the
 * state deletions that still name it.
 */
typedef struct WindowRef
{
	WindowKey	k;
	bool		merged_away;	/* gone into a bigger session window */
	bool		stored;			/* gone, with a row in window_state */
	ItemPointerData row;		/* where that row was (WindowEntry.row) */
} WindowRef;

/* What a row's lookup and update touch leads, in one cache line. */
typedef struct WindowEntry
{
	WindowKey	k;				/* hash key, must be first */
	AggValue   *states;
	int			fire_count;
	bool		stored;			/* a row exists in window_state */
	bool		logged;			/* newer states in state_log than that row */
	bool		dirty;			/* changed since loaded */
	bool		gone;			/* cleaned up or merged away */
	bool		in_fire_heap;
	bool		in_cleanup_heap;
	bool		in_trigger_heap;
	bool		changed;		/* rows since it last fired (early firing) */
	bool		trigger_primed;	/* trigger_last holds an input (delta) */
	int64		trigger_time;	/* its trigger's own next timer, or WMK_NONE */
	union
	{
		int64		trigger_rows;	/* rows since it last fired (early by rows) */
		double		trigger_last;	/* the input it last fired on (delta) */
	};
	WindowRef  *ref;
	bytea	   *saved;			/* states as last stored, if not dirty */
	const void *stored_at;		/* where the state store held it, if there */
	ItemPointerData row;		/* its row in window_state, if known (else
								 * invalid): it may be stale, checked when
								 * used */
	pairingheap_node fire_node;
	pairingheap_node cleanup_node;
	pairingheap_node trigger_node;
	uint64		key_prefix;		/* its key's, in the operator's key order */
} WindowEntry;

/*
 * The operator's windows, by WindowKey: a table of pointers, so that entries
 * never move (the timer heaps and the keys' lists hold them).  "key" points
 * at the entry's own WindowKey, its first member.
 */
typedef struct WindowSlot
{
	WindowKey  *key;
	uint32		hash;
	char		status;
} WindowSlot;

#define SH_PREFIX wintab
#define SH_ELEMENT_TYPE WindowSlot
#define SH_KEY_TYPE WindowKey *
#define SH_SCOPE extern
#define SH_DECLARE
#include "lib/simplehash.h"

#define slot_entry(slot) ((WindowEntry *) (slot)->key)

/*
 * Which of a window's firings (Beam's panes): before the watermark reached
 * its end, when it did, or for a row that came after.
 */
typedef enum Pane
{
	PANE_ON_TIME,
	PANE_EARLY,
	PANE_LATE,
	PANE_FINAL					/* no firing: the end of its life (append) */
} Pane;

/* One firing of a window, with its results at that moment. */
typedef struct Firing
{
	WindowRef  *win;
	int			fire_count;
	Pane		pane;
	bool		is_final;
	bool		may_fire_again;	/* a later firing may replace its result */
	bool		first;			/* no result row can exist for its window yet */
	Datum	   *values;
	bool	   *nulls;
} Firing;

/* A row that missed some or all of its windows. */
typedef struct LateRow
{
	int64		seq;			/* arrival number in the queue */
	bool		ts_null;
	int64		ts;
	int64		watermark;		/* at arrival */
	const char *reason;
	List	   *missed;			/* WmWindow *, the windows it missed */
	const char *error;			/* the error it raised as JSON, or NULL */
} LateRow;

/*
 * An order of keys: "cmp" is negative, 0, positive as a < b, a = b, a > b;
 * keys whose "prefix" differs compare as their prefixes do.
 */
typedef struct KeyOrder
{
	int			(*cmp) (const bytea *a, const bytea *b, const void *arg);
	KeyPrefixFn prefix;
	const void *arg;
} KeyOrder;

typedef struct Operator
{
	const WindowSpec *spec;
	Aggregator *agg;
	int64		lateness;
	int64		spread;			/* fire_spread, in the time column's unit */
	int64		gone_until;		/* windows whose last instant is at or before
								 * it were cleaned up under a smaller
								 * lateness (alter_pipeline) */
	KeyOrder	key_order;		/* windows of one end fire in this order */
	Watermark	wm;
	MemoryContext cxt;			/* entries and late rows */
	MemoryContext firing_cxt;	/* the firings not written yet (op_forget_firings) */
	MemoryContext late_cxt;		/* the late rows not written yet (op_forget_late) */
	wintab_hash *windows;
	pairingheap *fire_timers;	/* entries not fired yet, by end, key, start */
	pairingheap *cleanup_timers;	/* every live entry, by cleanup time */
	pairingheap *trigger_timers;	/* entries by their trigger's own timer */
	WmWindow   *scratch;		/* unkeyed: a row's windows, spec->max_windows */
	List	   *firings;		/* Firing *, in firing order, not written yet */
	int			firings_may_refire;	/* of which those whose window may fire
									 * again */
	List	   *late;			/* LateRow * */
	List	   *superseded;		/* WindowRef *, fired, then merged away */
	List	   *dropped;		/* WindowRef *, stored or logged, then gone */
	List	   *deleting;		/* WindowEntry *, gone while delete_left,
								 * its row in window_state its newest state,
								 * which delete_rows deletes after the batch */
	bool		delete_left;	/* set while more due batches follow */
	List	   *leaving;		/* WindowEntry *, gone, still in the table */
	HTAB	   *keyed;			/* session, count, sliced: key -> its live entries */
	const struct OpKind *kind;	/* what its entries are, how rows reach them */
	const struct WindowTrigger *trigger;	/* when a window fires */
	int64		trigger_every;	/* early firing: every so much event time, or
								 * every so many rows */
	bool		purging;		/* a window's contents go when it fires */
	double		trigger_threshold;	/* delta: by how much its input moves */
	int64		clock;			/* the step's clock (op_run_clock) */
	double		trigger_input;	/* the row's input to a delta trigger */
	bool		trigger_input_null;
	int64		slice;			/* sliced: the slices' length; counting: the
								 * panes' rows */
	struct AssignedSlice *assigned;	/* sliced: recent slices' windows */
	WindowEntry *part_window;	/* sliced, counting: the window made of parts
								 * (op_part_window), until it fires */
	pairingheap *key_timers;	/* sliced: keys by the end of their next window */
	pairingheap *key_cleanups;	/* sliced, allowed lateness: keys by the end
								 * of their oldest fired window still alive */
	bool		final_rows;		/* a window's end of life gets its result too */
	/*
	 * Windows kept outside the operator (state.c), brought in as they are
	 * needed: those of a key before its row, those whose timers a watermark
	 * reaches before it moves, a batch at a time (fetch_due is true while
	 * due windows are left outside).  NULL: every window is in the table.
	 */
	void		(*fetch_key) (struct Operator *op, const bytea *key);
	bool		(*fetch_due) (struct Operator *op, int64 upto);
	void	   *fetch_arg;
	/* deletes the rows of windows that left (deleting); NULL: dropped */
	void		(*delete_rows) (struct Operator *op, List *entries);
	/* between batches of due windows: write their firings, drop what left */
	void		(*due_batch_done) (struct Operator *op, void *arg);
	void	   *due_batch_arg;
	int64		windows_fired;
	int64		windows_left;	/* cleaned up or merged away in the step */
	StateLog	log;			/* the pipeline's state_log since the fold */
} Operator;

extern Operator *op_create(const WindowSpec *spec, Aggregator *agg,
						   int64 lateness, bool may_slice,
						   const struct TriggerDef *trigger,
						   const KeyOrder *key_order);
extern bytea *op_serialize(Operator *op, WindowEntry *e);
extern void op_forget_firings(Operator *op);
extern void op_forget_late(Operator *op);
extern void op_add_error(Operator *op, int64 seq, bool ts_null, int64 ts,
						 const char *reason, const char *error);
extern WindowEntry *op_load(Operator *op, bytea *key, int64 start, int64 end,
							int fire_count, bytea *state);
extern void op_row(Operator *op, int64 seq, bool ts_null, int64 ts,
				   int64 gap, bytea *key, Datum *args, bool *argnulls);
extern void op_foreign_row(Operator *op, bool ts_null, int64 ts, int64 gap,
						   const bytea *key);
extern void op_advance_watermark(Operator *op, int64 to);
extern bool op_open_as_stored(const Operator *op);
extern void op_peek(Operator *op, bytea *key, int64 start, int64 end, bytea *state,
					void (*fn) (WindowEntry *, void *), void *arg);
extern bool op_run_clock(Operator *op, int64 now);
extern void op_compact(Operator *op);
extern WindowEntry *op_next_window(Operator *op, wintab_iterator *it);
extern void op_open_windows(Operator *op, void (*fn) (WindowEntry *, void *),
							void *arg);
extern HTAB *op_window_table(const char *name, Size entrysize);
extern int64 op_due(Operator *op, const WindowEntry *e);
extern int64 op_ends_before(const Operator *op);
extern int64 op_next_end(const Operator *op, int64 t);
extern int64 op_next_early(const Operator *op, int64 t);
extern bool op_stored_due(const Operator *op, int64 start, int64 end, const bytea *state,
						  int64 until);
extern bool op_by_key(const Operator *op, int64 since);
extern bool op_due_by_end(const Operator *op);
extern bool op_due_at_end(const Operator *op);
extern bool op_moving_bounds(const Operator *op);

#endif							/* WINDOWING_OPERATOR_H */
