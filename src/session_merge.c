/*
 * session_merge.c
 *		Session windows: each row opens [ts, ts + gap), overlapping or
 *		touching windows merge into their cover.
 *
 * Flink's MergingWindowSet merges incrementally as rows arrive; the result
 * is the same as sorting every row's window by start and sweeping once,
 * which is what a set of rows known in full (a SQL partition or group) can
 * afford.  Touching windows merge (a.start <= b.end, TimeWindow.intersects),
 * so the result does not depend on the order rows came in: a late row that
 * bridges two sessions joins them, as in Flink.
 */
#include <stdlib.h>

#include "session_merge.h"

/* The window a single row opens; false if ts + gap leaves the int64 range. */
bool
sm_row_window(int64_t ts, int64_t gap, WmWindow *w)
{
	w->start = ts;
	return !__builtin_add_overflow(ts, gap, &w->end);
}

static int
cmp_start(const void *a, const void *b)
{
	int64_t		x = ((const WmWindow *) a)->start;
	int64_t		y = ((const WmWindow *) b)->start;

	return (x > y) - (x < y);
}

bool
sm_is_sorted(const WmWindow *w, int64_t n)
{
	for (int64_t i = 1; i < n; i++)
		if (w[i].start < w[i - 1].start)
			return false;
	return true;
}

/*
 * Merge w[0..n) in place into disjoint, non-touching sessions in start
 * order; returns their number.  Input already sorted by start skips the sort
 * (the common case of a window function ordered by time).
 */
int64_t
sm_merge(WmWindow *w, int64_t n, bool sorted)
{
	int64_t		out = 0;

	if (n == 0)
		return 0;
	if (!sorted)
		qsort(w, (size_t) n, sizeof(WmWindow), cmp_start);
	for (int64_t i = 1; i < n; i++)
	{
		if (w[i].start <= w[out].end)
		{
			if (w[i].end > w[out].end)
				w[out].end = w[i].end;
		}
		else
			w[++out] = w[i];
	}
	return out + 1;
}

/* Index of the merged session holding ts: the last one starting at or before it. */
int64_t
sm_find(const WmWindow *sessions, int64_t n, int64_t ts)
{
	int64_t		lo = 0;
	int64_t		hi = n - 1;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo + 1) / 2;

		if (sessions[mid].start <= ts)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}
