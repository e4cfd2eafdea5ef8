/*
 * operator_int.h
 *		What the operator's files share.  Not for the rest of the extension,
 *		which uses operator.h.
 *
 * Calls go down: operator.c picks a kind of window for the pipeline and
 * hands each event to it through its OpKind; the kinds
 * (time_windows.c, slices.c, sessions.c, count_windows.c) ask the trigger
 * (trigger.c) whether a window fires, and keep their entries, timers,
 * firings and late rows through window_table.c.
 */
#ifndef WINDOWING_OPERATOR_INT_H
#define WINDOWING_OPERATOR_INT_H

#include "operator.h"
#include "trigger.h"

/*
 * A time slice or count pane of a key, its start kept beside it: walks
 * over a key's parts then read only its array, not each part's entry.
 */
typedef struct KeyPart
{
	int64		start;
	AggValue   *states;			/* the entry's */
	struct WindowEntry *e;
} KeyPart;

/*
 * The live entries of one key: session windows (merging needs them by
 * key), or its count panes or time slices in start order.
 */
typedef struct KeyEntries
{
	bytea	   *key;			/* hash key, must be first */
	List	   *live;			/* sessions: WindowEntry * */
	KeyPart    *parts;			/* slices, panes: nparts of maxparts */
	int			nparts;
	int			maxparts;
	pairingheap_node timer;		/* sliced: in key_timers */
	int64		next_end;		/* sliced: its next window to fire ends here */
	bool		in_timers;
	struct Swag *swag;			/* sliced: its windows' running combinations */
	pairingheap_node cleanup;	/* sliced, allowed lateness: in key_cleanups */
	int64		clean_end;		/* its oldest fired window still alive ends here */
	bool		in_cleanups;
	int			refired;		/* sliced: its live windows fired more than
								 * once, whose entries keep their counts */
	bool		unsorted;		/* loaded out of start order */
} KeyEntries;

/* The windows of the rows of one slice (slice_windows). */
typedef struct AssignedSlice
{
	int64		from;			/* the slice's start */
	int			n;				/* its windows, latest start first */
	WmWindow   *w;
} AssignedSlice;

/*
 * A kind of window: what its entries are and what it does at each of the
 * operator's events.  One table per kind, so that a new kind is a new file.
 */
typedef struct OpKind
{
	const char *name;
	bool		timed;			/* entries wait in the fire and cleanup heaps */
	bool		keyed;			/* entries are listed by key (KeyEntries) */
	bool		fresh_windows;	/* a window's first firing finds no result
								 * row: no other window had its bounds */
	bool		final_when_fired;	/* its windows fire once, by their rows */
	bool		by_key;			/* a key's entries and those due can be
								 * loaded alone (Operator.fetch_key) */
	bool		moving_bounds;	/* a window's bounds move as rows join it */
	void		(*init) (Operator *op);	/* may be NULL */
	/* a row, in arrival order, whose key fits */
	void		(*row) (Operator *op, int64 seq, bool ts_null, int64 ts, int64 gap,
						bytea *key, Datum *args, bool *argnulls);
	/* whether row() would let such a row's time count for the watermark; NULL: never */
	bool		(*time_counts) (Operator *op, bool ts_null, int64 ts, int64 gap);
	/* the watermark moved: fire and clean up what it passed */
	void		(*on_watermark) (Operator *op);
	void		(*at_end) (Operator *op);	/* end of input; may be NULL */
	/* a window stored by an earlier step is back: its timers and lists */
	void		(*load) (Operator *op, WindowEntry *e);
	void		(*leave) (Operator *op, WindowEntry *e);	/* may be NULL */
	/* each window that has rows and has not fired yet */
	void		(*open_windows) (Operator *op, void (*fn) (WindowEntry *, void *),
								 void *arg);

	/*
	 * Kinds whose entries' timers are their key's (slices): when entry e
	 * must be back in the table; how much earlier than the windows they are
	 * part of entries may end; the first window end whose last instant is
	 * past t.  NULL: an entry's own timers, 0, any.
	 */
	int64		(*due) (Operator *op, const WindowEntry *e);
	int64		(*ends_before) (const Operator *op);
	int64		(*next_end) (const Operator *op, int64 t);
} OpKind;

/* window_table.c: entries, key lists, timers, firings and late rows */
extern int	op_key_cmp(const Operator *op, const bytea *a, const bytea *b);
extern KeyEntries *op_key_entries(Operator *op, bytea *key);
extern void op_key_track(Operator *op, WindowEntry *e);
extern List *op_key_live(KeyEntries *sk);
extern void op_key_track_part(Operator *op, WindowEntry *e);
extern KeyPart *op_key_parts(KeyEntries *sk);
extern void op_key_add_part(Operator *op, KeyEntries *sk, int i, WindowEntry *e);
extern void op_key_drop_parts(KeyEntries *sk, int n);
extern int	op_key_part_from(const KeyEntries *sk, int64 start);
extern void op_init_table(Operator *op);
extern WindowEntry *op_entry(Operator *op, bytea *key, int64 start, int64 end,
							 bool *created);
extern bool op_rekey(Operator *op, WindowEntry *e, int64 start, int64 end);
extern void op_add_fire_timer(Operator *op, WindowEntry *e);
extern void op_keep_cleanup_timer(Operator *op, WindowEntry *e);
extern void op_set_trigger_timer(Operator *op, WindowEntry *e, int64 time);
extern void op_move_trigger_timer(Operator *op, WindowEntry *e, int64 time);
extern void op_add_row(Operator *op, WindowEntry *e, int64 ts, Datum *args,
					   bool *argnulls);
extern void op_fire(Operator *op, WindowEntry *e, Pane pane);
extern void op_final(Operator *op, WindowRef *ref, int fire_count, AggValue *states);
extern void op_leave(Operator *op, WindowEntry *e);
extern void op_run_timers(Operator *op);
extern void op_observe(Operator *op, int64 ts);
extern void op_watermark_moved(Operator *op, int64 before);
extern void op_open_entries(Operator *op, void (*fn) (WindowEntry *, void *),
							void *arg);
extern bool op_expired(const Operator *op, int64 max_ts);
extern bool op_reached(const Operator *op, const WindowEntry *e);
extern List *op_missed(Operator *op, List *missed, const WmWindow *w);
extern void op_add_late(Operator *op, int64 seq, bool ts_null, int64 ts,
						const char *reason, List *missed);
extern void op_bad_time(Operator *op, int64 seq, bool ts_null, int64 ts);
extern void op_no_window(Operator *op, int64 seq, int64 ts);
extern WindowRef *op_part_ref(Operator *op, bytea *key, int64 start, int64 end);
extern WindowEntry *op_part_window(Operator *op, bytea *key, int64 start, int64 end);

/* the kinds */
extern const OpKind time_window_kind;	/* time_windows.c */
extern const OpKind sliced_window_kind;	/* slices.c */
extern const OpKind session_window_kind;	/* sessions.c */
extern const OpKind count_window_kind;	/* count_windows.c */

/* slices.c, also for count windows' panes */
extern bool slices_can_slice(const WindowSpec *spec, Aggregator *agg, bool may_slice);
extern void slices_changed(KeyEntries *sk, int64 start);
extern bool slices_combine(Operator *op, KeyEntries *sk, int64 from, int64 end,
						   AggValue *states);

#endif							/* WINDOWING_OPERATOR_INT_H */
