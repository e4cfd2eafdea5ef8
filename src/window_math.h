/*
 * window_math.h
 *		Window assignment rules on plain 64-bit integer time.
 *
 * Everything here is pure C (no PostgreSQL backend calls) so that the SQL
 * functions and the pipeline worker share one implementation of each rule,
 * and so the rules can be compiled and tested on their own.  Time is an
 * int64 on any epoch and unit; callers pass the epoch of alignment as
 * "origin" (Flink aligns windows to 1970-01-01).  Every function that can
 * leave the int64 range reports it instead of wrapping.
 */
#ifndef WINDOWING_WINDOW_MATH_H
#define WINDOWING_WINDOW_MATH_H

#include <stdbool.h>
#include <stdint.h>

/* A half-open window [start, end); its max timestamp is end - 1. */
typedef struct WmWindow
{
	int64_t		start;
	int64_t		end;
} WmWindow;

/*
 * Upper bound on the windows one row may belong to.  It keeps a careless
 * hop('1 day', '1 microsecond') from trying to emit 86 billion rows.
 */
#define WM_MAX_WINDOWS_PER_ROW 100000

static inline int64_t
wm_floor_mod(int64_t a, int64_t m)
{
	int64_t		r = a % m;

	return r < 0 ? r + m : r;
}

static inline int64_t
wm_floor_div(int64_t a, int64_t m)
{
	int64_t		q = a / m;

	return (a % m < 0) ? q - 1 : q;
}

extern int64_t wm_phase(int64_t origin, int64_t offset, int64_t size);
extern bool wm_align_start(int64_t ts, int64_t size, int64_t phase,
						   int64_t *start);
extern bool wm_tumble(int64_t ts, int64_t size, int64_t phase, WmWindow *w);
extern int	wm_hop(int64_t ts, int64_t size, int64_t slide, int64_t phase,
				   WmWindow *out);
extern int	wm_hop_max_windows(int64_t size, int64_t slide);
extern int	wm_cumulate(int64_t ts, int64_t step, int64_t max_size,
						int64_t phase, WmWindow *out);
extern int64_t wm_gcd(int64_t a, int64_t b);
extern bool wm_count_windows(int64_t pos, int64_t size, int64_t slide,
							 int64_t *first, int64_t *last);

#endif							/* WINDOWING_WINDOW_MATH_H */
