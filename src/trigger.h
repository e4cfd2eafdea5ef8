/*
 * trigger.h
 *		When a window fires: Flink's Trigger, consulted by every kind of
 *		window at the same two moments.
 */
#ifndef WINDOWING_TRIGGER_H
#define WINDOWING_TRIGGER_H

#include "postgres.h"

#include "window_math.h"

struct Operator;

typedef enum TriggerResult
{
	TRIGGER_CONTINUE,			/* nothing now */
	TRIGGER_FIRE				/* emit the window's result so far */
} TriggerResult;

typedef struct WindowTrigger
{
	const char *name;
	/* a row joined window w (Flink's onElement) */
	TriggerResult (*on_element) (const struct Operator *op, const WmWindow *w);
	/* the watermark reached "time", a timer of window w (onEventTime) */
	TriggerResult (*on_event_time) (const struct Operator *op, const WmWindow *w,
									int64 time);
} WindowTrigger;

extern const WindowTrigger trigger_event_time;

#endif							/* WINDOWING_TRIGGER_H */
