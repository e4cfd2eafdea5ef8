/*
 * watermark.c
 *		Bounded out-of-orderness watermarks and Flink's window timers.
 *
 * Flink emits watermarks on a timer, so which rows a window fires with
 * depends on timing; here the watermark moves after every row consumed in
 * arrival order (W = max(W, max_ts_seen - delay - 1 tick)), which is what
 * Flink does with a watermark between every two rows, and makes results
 * independent of batch size.  Each window has Flink's two timers: it fires
 * when W reaches its max timestamp (end - 1) and its state is dropped when
 * W reaches max timestamp + allowed lateness.  Sums that would pass the end
 * of int64 are clamped there, as Flink's cleanupTime does, so a window near
 * the end of time still fires instead of wrapping into the past.
 */
#include "watermark.h"

/* a + b, clamped at the ends of int64 */
int64_t
wmk_add(int64_t a, int64_t b)
{
	int64_t		r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

void
wmk_init(Watermark *w, int64_t delay, bool automatic)
{
	w->value = WMK_NONE;
	w->max_seen = INT64_MIN;
	w->delay = delay;
	w->automatic = automatic;
}

/* Moves the watermark to at least "to"; true if it moved. */
bool
wmk_advance(Watermark *w, int64_t to)
{
	if (to <= w->value)
		return false;
	w->value = to;
	return true;
}

/* The watermark the rows up to "max_seen" make; WMK_NONE before any row. */
int64_t
wmk_of(int64_t max_seen, int64_t delay)
{
	if (max_seen == INT64_MIN)
		return WMK_NONE;
	return wmk_add(wmk_add(max_seen, -delay), -1);
}

/* Accounts for one consumed row; true if the watermark moved. */
bool
wmk_observe(Watermark *w, int64_t ts)
{
	if (ts > w->max_seen)
		w->max_seen = ts;
	if (!w->automatic || w->max_seen == INT64_MIN)
		return false;
	return wmk_advance(w, wmk_of(w->max_seen, w->delay));
}

int64_t
wmk_cleanup_time(int64_t max_timestamp, int64_t lateness)
{
	return wmk_add(max_timestamp, lateness);
}

bool
wmk_window_fires(int64_t max_timestamp, int64_t watermark)
{
	return max_timestamp <= watermark;
}

/* Flink's isWindowLate: the window's state is already gone. */
bool
wmk_window_expired(int64_t max_timestamp, int64_t lateness, int64_t watermark)
{
	return wmk_cleanup_time(max_timestamp, lateness) <= watermark;
}
