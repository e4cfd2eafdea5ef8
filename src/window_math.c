/*
 * window_math.c
 *		Tumbling, sliding, cumulating and count window assignment.
 *
 * These are Flink's rules (TimeWindow.getWindowStartWithOffset and the
 * assigners built on it) restated so that they hold on the whole int64
 * range: Flink computes (timestamp - offset) % size, which wraps near the
 * ends of the range; here the remainder is taken of each term separately
 * and recombined, so no intermediate value can overflow, and the only
 * failures left are windows whose bounds really do not fit.  Those return
 * false (or -1) and the caller raises the error in its own words.
 *
 * The phase of a window grid, floor_mod(origin + offset, size), is
 * computed once per grid, leaving one division on the per-row path.
 */
#include "window_math.h"

/* (a - b) mod m for a, b already in [0, m): never overflows. */
static inline int64_t
mod_sub(int64_t a, int64_t b, int64_t m)
{
	int64_t		d = a - b;

	return d < 0 ? d + m : d;
}

/* Phase of the grid of windows of length size aligned to origin + offset. */
int64_t
wm_phase(int64_t origin, int64_t offset, int64_t size)
{
	return mod_sub(wm_floor_mod(origin, size),
				   mod_sub(0, wm_floor_mod(offset, size), size), size);
}

/* Start of the grid cell holding ts; false if it lies before INT64_MIN. */
bool
wm_align_start(int64_t ts, int64_t size, int64_t phase, int64_t *start)
{
	int64_t		rem = mod_sub(wm_floor_mod(ts, size), phase, size);

	return !__builtin_sub_overflow(ts, rem, start);
}

bool
wm_tumble(int64_t ts, int64_t size, int64_t phase, WmWindow *w)
{
	return wm_align_start(ts, size, phase, &w->start) &&
		!__builtin_add_overflow(w->start, size, &w->end);
}

/*
 * Windows [s, s + size) for s = last, last - slide, ... while s > ts - size,
 * newest first as Flink emits them.  Returns how many were written to out
 * (which holds wm_hop_max_windows(size, slide) entries), -1 on overflow.
 * With size < slide a row can fall between windows and get none.
 */
int
wm_hop(int64_t ts, int64_t size, int64_t slide, int64_t phase, WmWindow *out)
{
	int64_t		last;
	int64_t		since;
	int64_t		n;

	if (!wm_align_start(ts, slide, phase, &last))
		return -1;
	since = ts - last;			/* in [0, slide) */
	if (since >= size)
		return 0;
	n = (size - since - 1) / slide + 1;
	for (int64_t k = 0; k < n; k++)
	{
		if (__builtin_mul_overflow(k, slide, &out[k].start) ||
			__builtin_sub_overflow(last, out[k].start, &out[k].start) ||
			__builtin_add_overflow(out[k].start, size, &out[k].end))
			return -1;
	}
	return (int) n;
}

/* Most windows a row can get from hop(size, slide): ceil(size / slide). */
int
wm_hop_max_windows(int64_t size, int64_t slide)
{
	int64_t		n = size / slide + (size % slide != 0);

	return n > WM_MAX_WINDOWS_PER_ROW ? -1 : (int) n;
}

/*
 * Flink SQL's CUMULATE: windows [S, S + k * step) of the max_size cell S,
 * for each k with S + k * step > ts.  max_size is a multiple of step
 * (checked by the caller).  Returns the count written to out, -1 on overflow.
 */
int
wm_cumulate(int64_t ts, int64_t step, int64_t max_size, int64_t phase,
			WmWindow *out)
{
	WmWindow	cell;
	int64_t		first = 0;
	int64_t		steps = max_size / step;
	int			n = 0;

	if (!wm_tumble(ts, max_size, phase, &cell))
		return -1;
	first = (ts - cell.start) / step + 1;
	for (int64_t k = first; k <= steps; k++)
	{
		out[n].start = cell.start;
		out[n].end = cell.start + k * step;	/* <= cell.end: no overflow */
		n++;
	}
	return n;
}

/*
 * Flink's countWindow(size, slide) fires window k (1-based) when the
 * (k * slide)-th row of the key arrives, with the last size rows.  The row at
 * 0-based position pos is in windows first..last.
 */
bool
wm_count_windows(int64_t pos, int64_t size, int64_t slide,
				 int64_t *first, int64_t *last)
{
	int64_t		reach;

	if (__builtin_add_overflow(pos, size, &reach))
		return false;
	*first = pos / slide + 1;
	*last = reach / slide;
	return true;
}

/* Greatest common divisor of two positive lengths. */
int64_t
wm_gcd(int64_t a, int64_t b)
{
	while (b != 0)
	{
		int64_t		t = a % b;

		a = b;
		b = t;
	}
	return a;
}
