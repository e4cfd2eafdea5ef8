/*
 * operator_int.h
 *		What the operator's files share: operator.c (per-window state,
 *		timers, firing), sessions.c, count_windows.c and slices.c.  Not for
 *		the rest of the extension, which uses operator.h.
 */
#ifndef WINDOWING_OPERATOR_INT_H
#define WINDOWING_OPERATOR_INT_H

#include "operator.h"

/*
 * The live entries of one key: session windows (merging needs them by
 * key), count panes, or time slices in start order.
 */
typedef struct KeyEntries
{
	bytea	   *key;			/* hash key, must be first */
	List	   *live;			/* WindowEntry * */
	pairingheap_node timer;		/* sliced: in key_timers */
	int64		next_end;		/* sliced: its next window to fire ends here */
	bool		in_timers;
	int64		oldest;			/* sliced: the starts of its first and last */
	int64		newest;			/* slices (and count panes), without a walk */
	struct Swag *swag;			/* sliced: its windows' running combinations */
	pairingheap_node cleanup;	/* sliced, allowed lateness: in key_cleanups */
	int64		clean_end;		/* its oldest fired window still alive ends here */
	bool		in_cleanups;
	int			refired;		/* sliced: its live windows fired more than
								 * once, whose entries keep their counts */
	bool		unsorted;		/* sessions, panes: loaded out of start order */
} KeyEntries;

/* The windows of the rows of one slice (slice_windows). */
typedef struct AssignedSlice
{
	int64		from;			/* the slice's start */
	int			n;				/* its windows, latest start first */
	WmWindow   *w;
} AssignedSlice;

/* operator.c */
extern int	op_key_cmp(const Operator *op, const bytea *a, const bytea *b);
extern KeyEntries *op_key_entries(Operator *op, bytea *key);
extern List *op_key_live(KeyEntries *sk);
extern WindowEntry *op_entry(Operator *op, bytea *key, int64 start, int64 end,
							 bool *created);
extern bool op_rekey(Operator *op, WindowEntry *e, int64 start, int64 end);
extern void op_add_fire_timer(Operator *op, WindowEntry *e);
extern void op_fire(Operator *op, WindowEntry *e);
extern void op_final(Operator *op, WindowRef *ref, int fire_count);
extern void op_leave(Operator *op, WindowEntry *e);
extern bool op_expired(const Operator *op, int64 max_ts);
extern List *op_missed(Operator *op, List *missed, const WmWindow *w);
extern void op_add_late(Operator *op, int64 seq, bool ts_null, int64 ts,
						const char *reason, List *missed);
extern WindowRef *op_part_ref(Operator *op, bytea *key, int64 start, int64 end);
extern WindowEntry *op_part_window(Operator *op, bytea *key, int64 start, int64 end);

/* sessions.c */
extern void session_forget(Operator *op, WindowEntry *e);
extern bool session_row(Operator *op, int64 seq, int64 ts, int64 gap, bytea *key,
						Datum *args, bool *argnulls);

/* count_windows.c */
extern void count_row(Operator *op, bytea *key, Datum *args, bool *argnulls);
extern void flush_count_windows(Operator *op);

/* slices.c */
extern void slices_init(Operator *op);
extern void slice_changed(KeyEntries *sk, int64 start);
extern bool slices_combine(Operator *op, KeyEntries *sk, int64 from, int64 end,
						   AggValue *states);
extern bool can_slice(const WindowSpec *spec, Aggregator *agg, bool may_slice);
extern void load_slice(Operator *op, WindowEntry *e);
extern const AssignedSlice *slice_windows(Operator *op, int64 ts);
extern void slice_row(Operator *op, int64 seq, int64 ts, const AssignedSlice *a,
					  bytea *key, Datum *args, bool *argnulls);
extern void fire_sliced(Operator *op);
extern void open_sliced_windows(Operator *op, void (*fn) (WindowEntry *, void *),
								void *arg);

#endif							/* WINDOWING_OPERATOR_INT_H */
