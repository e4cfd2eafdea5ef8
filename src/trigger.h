/*
 * trigger.h
 *		When a window fires: Flink's Trigger, consulted by every kind of
 *		window at the same moments.
 */
#ifndef WINDOWING_TRIGGER_H
#define WINDOWING_TRIGGER_H

#include "postgres.h"

#include "window_math.h"

struct Operator;
struct WindowEntry;
struct WindowSpec;

typedef enum TriggerResult
{
	TRIGGER_CONTINUE,			/* nothing now */
	TRIGGER_FIRE				/* emit the window's result so far */
} TriggerResult;

typedef struct WindowTrigger
{
	const char *name;

	/*
	 * A row at ts joined window w (Flink's onElement), kept in entry e, or
	 * made of slices (e NULL: such windows keep no trigger state).
	 */
	TriggerResult (*on_element) (struct Operator *op, struct WindowEntry *e,
								 const WmWindow *w, int64 ts);

	/*
	 * The watermark reached "time" (onEventTime): the window's last instant,
	 * or the trigger's own timer of entry e (e->trigger_time).
	 */
	TriggerResult (*on_event_time) (struct Operator *op, struct WindowEntry *e,
									const WmWindow *w, int64 time);

	/*
	 * The clock of the steps reached "time", the trigger's own timer of
	 * entry e (onProcessingTime); NULL if its own timers are on event time.
	 */
	TriggerResult (*on_processing_time) (struct Operator *op, struct WindowEntry *e,
										 const WmWindow *w, int64 time);

	/* Session window "from" merged into "into" (onMerge); NULL: nothing to do. */
	void		(*on_merge) (struct Operator *op, struct WindowEntry *into,
							 const struct WindowEntry *from);
	bool		has_state;		/* keeps trigger_time, trigger_rows and changed
								 * with the window */

	/*
	 * The first time past t at which a timer of its own (trigger_time) may
	 * run, on event time or on the clock (trigger_on_clock); NULL if it
	 * sets none.
	 */
	int64		(*next_timer) (const struct Operator *op, int64 t);

	/*
	 * The timer of its own of a window whose stored state says "time" (and
	 * whether rows came since it last fired), as it stands at the
	 * watermark: a timer may move on without the window being written;
	 * NULL: "time".
	 */
	int64		(*stored_timer) (const struct Operator *op, bool changed,
								 const WmWindow *w, int64 time);
} WindowTrigger;

/* A pipeline's trigger as its definition gives it (trigger_parse). */
typedef struct TriggerDef
{
	const WindowTrigger *trigger;
	int64		every;			/* early firing: every so much time, or rows */
	bool		purging;		/* windows are cleared as they fire */
	char	   *column;			/* a delta trigger's input column, else NULL */
	double		threshold;		/* by how much that input must move */
} TriggerDef;

/* Are the trigger's own timers on the clock of the steps (not event time)? */
static inline bool
trigger_on_clock(const WindowTrigger *t)
{
	return t->on_processing_time != NULL;
}

extern const WindowTrigger trigger_event_time;
extern const WindowTrigger trigger_early;
extern const WindowTrigger trigger_early_rows;
extern const WindowTrigger trigger_early_clock;
extern const WindowTrigger trigger_early_delta;
extern void trigger_parse(const char *text, const struct WindowSpec *spec, bool is_ts,
						  TriggerDef *def);
extern Oid	trigger_check_input(const TriggerDef *def, Oid source, const char *pipeline);
extern double trigger_input_value(Oid type, Datum value);
extern void trigger_check_numeric(Oid type, const char *column, const char *what);
extern char *trigger_input_column(const char *text, size_t len, const char *what);
extern double trigger_threshold(const char *text, const char *what);

#endif							/* WINDOWING_TRIGGER_H */
