/*
 * watermark.h
 *		Watermark, trigger and cleanup rules of event-time windows.
 *
 * Pure C like window_math.h, so the pipeline step and its tests share one
 * statement of each rule.  Times are int64 in the pipeline's unit
 * (microseconds for timestamptz, the caller's unit for bigint); "tick" is
 * the smallest step of that unit, the 1 ms of Flink's "watermark - 1".
 */
#ifndef WINDOWING_WATERMARK_H
#define WINDOWING_WATERMARK_H

#include <stdbool.h>
#include <stdint.h>

#define WMK_NONE INT64_MIN		/* no watermark yet */
#define WMK_END INT64_MAX		/* end of input: everything fires */

typedef struct Watermark
{
	int64_t		value;			/* never goes back */
	int64_t		max_seen;		/* largest event time consumed */
	int64_t		delay;			/* bounded out-of-orderness */
	bool		automatic;		/* false: only explicit watermarks */
} Watermark;

extern int64_t wmk_add(int64_t a, int64_t b);
extern void wmk_init(Watermark *w, int64_t delay, bool automatic);
extern int64_t wmk_of(int64_t max_seen, int64_t delay);
extern bool wmk_observe(Watermark *w, int64_t ts);
extern bool wmk_advance(Watermark *w, int64_t to);
extern int64_t wmk_cleanup_time(int64_t max_timestamp, int64_t lateness);
extern bool wmk_window_fires(int64_t max_timestamp, int64_t watermark);
extern bool wmk_window_expired(int64_t max_timestamp, int64_t lateness,
							   int64_t watermark);

#endif							/* WINDOWING_WATERMARK_H */
