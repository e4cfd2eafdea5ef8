/*
 * trigger.c
 *		Flink's EventTimeTrigger: a window fires when the watermark passes
 *		its last instant, and again at once for each row that joins it
 *		later, while allowed lateness keeps it alive.
 *
 * The kinds of window register a window's timer at its last instant when
 * they make it (Flink's EventTimeTrigger registers it on every element;
 * the timer heap keeps one per window either way) and ask the trigger at
 * each row and each timer.  Triggers that fire early, by count or by
 * processing time, are further tables of the same shape.
 */
#include "compat.h"

#include "operator.h"
#include "trigger.h"
#include "watermark.h"

static TriggerResult
event_time_on_element(const Operator *op, const WmWindow *w)
{
	return wmk_window_fires(w->end - 1, op->wm.value) ? TRIGGER_FIRE : TRIGGER_CONTINUE;
}

static TriggerResult
event_time_on_event_time(const Operator *op, const WmWindow *w, int64 time)
{
	return time == w->end - 1 ? TRIGGER_FIRE : TRIGGER_CONTINUE;
}

const WindowTrigger trigger_event_time = {
	.name = "event time",
	.on_element = event_time_on_element,
	.on_event_time = event_time_on_event_time,
};
