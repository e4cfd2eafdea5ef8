/*
 * calendar.c
 *		Calendar windows in a time zone: local midnights, hours and months.
 *
 * A fixed offset (Flink's only option) is wrong for half the year in a zone
 * with daylight saving time.  Here a grid is laid on the local clock and a
 * window boundary is an instant where the local clock shows a grid point,
 * or a transition where the local clock jumps from one cell into another
 * (a spring-forward gap that skips a grid point).  That one rule gives what
 * people expect on transition days:
 *
 *	- hourly windows in a repeated fall-back hour are two windows, one per
 *	  occurrence of the hour, and never overlap;
 *	- every instant is in exactly one cell, and cells tile the time line.
 *
 * Cells of a day or more follow a rule of their own (whole_bucket): a day
 * window runs from the first instant of the local day to the first instant
 * of the next, 23 or 25 hours long, even where clocks fall back across
 * midnight; a month window runs from the 1st to the 1st.
 *
 * Offsets change rarely, so the common case costs two zone lookups: one for
 * the offset at ts, one to confirm that no transition lies between the cell
 * start and ts.  Only cells that contain a transition take the slow path,
 * which walks the offset periods around the cell.
 */
#include "calendar.h"

#define USECS_PER_SEC INT64_C(1000000)
#define USECS_PER_DAY INT64_C(86400000000)
#define SECS_1970_TO_2000 INT64_C(946684800)
#define DAYS_1970_TO_2000 INT64_C(10957)
/* No zone has ever been 26 hours from UTC. */
#define MAX_ZONE_OFFSET (INT64_C(26) * 3600 * USECS_PER_SEC)
/* Guards the walks over offset periods against a malformed zone. */
#define MAX_PERIOD_STEPS 100000

/* One stretch of constant UTC offset, as seen from an instant in it. */
typedef struct Period
{
	int64_t		offset;			/* microseconds east of UTC */
	int64_t		next;			/* next transition, CAL_NO_TRANSITION if none */
} Period;

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's method). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t		era;
	int64_t		yoe;
	int64_t		doy;
	int64_t		doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Month index (months since 1970-01) of a day count since 1970-01-01. */
static int64_t
month_of_days(int64_t z)
{
	int64_t		era;
	int64_t		doe;
	int64_t		yoe;
	int64_t		doy;
	int64_t		mp;
	int64_t		m;
	int64_t		y;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	return (y - 1970) * 12 + (m - 1);
}

/* Local time (our epoch) at which month index idx begins. */
static bool
month_start(int64_t idx, int64_t *local)
{
	int64_t		days = days_from_civil(1970 + wm_floor_div(idx, 12),
									   (int) wm_floor_mod(idx, 12) + 1, 1);

	return !__builtin_mul_overflow(days - DAYS_1970_TO_2000, USECS_PER_DAY,
								   local);
}

void
cal_grid_init(CalGrid *g, int64_t size, int32_t months, int64_t offset)
{
	g->size = size;
	g->months = months;
	g->offset = offset;
	g->phase = months ? 0 :
		wm_phase(-SECS_1970_TO_2000 * USECS_PER_SEC, offset, size);
	g->whole = months > 0 || size >= USECS_PER_DAY;
}

/* The cell of the grid holding local time l, in local time. */
static bool
local_cell(const CalGrid *g, int64_t l, WmWindow *cell)
{
	int64_t		shifted;
	int64_t		idx;

	if (g->months == 0)
		return wm_tumble(l, g->size, g->phase, cell);
	if (__builtin_sub_overflow(l, g->offset, &shifted))
		return false;
	idx = month_of_days(wm_floor_div(shifted, USECS_PER_DAY) +
						DAYS_1970_TO_2000);
	idx -= wm_floor_mod(idx, g->months);
	return month_start(idx, &cell->start) &&
		month_start(idx + g->months, &cell->end) &&
		!__builtin_add_overflow(cell->start, g->offset, &cell->start) &&
		!__builtin_add_overflow(cell->end, g->offset, &cell->end);
}

/* The offset period holding instant t. */
static void
period_at(const CalZone *z, int64_t t, Period *p)
{
	int32_t		offset;
	int32_t		next_offset;
	int64_t		next;

	z->lookup(z->arg, wm_floor_div(t, USECS_PER_SEC) + SECS_1970_TO_2000,
			  &offset, &next, &next_offset);
	p->offset = (int64_t) offset * USECS_PER_SEC;
	if (next == CAL_NO_TRANSITION ||
		__builtin_mul_overflow(next - SECS_1970_TO_2000, USECS_PER_SEC,
							   &p->next))
		p->next = CAL_NO_TRANSITION;
}

/* The grid cell shown by the local clock at instant t under period p. */
static bool
cell_at(const CalGrid *g, const Period *p, int64_t t, WmWindow *cell)
{
	int64_t		l;

	return !__builtin_add_overflow(t, p->offset, &l) && local_cell(g, l, cell);
}

/*
 * Is the transition at instant n a window boundary?  It is when the local
 * clock lands on a grid point or in another cell than it left.
 */
static bool
transition_is_boundary(const CalGrid *g, const Period *before,
					   const Period *after, int64_t n, bool *is)
{
	WmWindow	from;
	WmWindow	to;

	if (!cell_at(g, before, n - 1, &from) || !cell_at(g, after, n, &to))
		return false;
	*is = from.start != to.start || to.start == n + after->offset;
	return true;
}

/*
 * Latest boundary at or before ts, walking forward from an instant before
 * any time the local clock could show the cell's start (slow path).
 */
static bool
cell_start_slow(const CalGrid *g, const CalZone *z, int64_t ts,
				int64_t local_start, int64_t *start)
{
	int64_t		t = local_start - MAX_ZONE_OFFSET;
	Period		p;
	bool		found = false;

	period_at(z, t, &p);
	for (int i = 0; i < MAX_PERIOD_STEPS; i++)
	{
		int64_t		last = (p.next != CAL_NO_TRANSITION && p.next <= ts) ?
			p.next - 1 : ts;
		WmWindow	cell;
		Period		q;
		bool		is;

		if (!cell_at(g, &p, last, &cell))
			return false;
		if (cell.start - p.offset >= t)
		{
			*start = cell.start - p.offset;
			found = true;
		}
		if (last == ts)
			return found;
		period_at(z, p.next, &q);
		if (!transition_is_boundary(g, &p, &q, p.next, &is))
			return false;
		if (is)
		{
			*start = p.next;
			found = true;
		}
		t = p.next;
		p = q;
	}
	return false;
}

/* First boundary after an instant of period p whose local cell is local_cell. */
static bool
cell_end(const CalGrid *g, const CalZone *z, Period p,
		 const WmWindow *local_cell, int64_t *end)
{
	for (int i = 0; i < MAX_PERIOD_STEPS; i++)
	{
		int64_t		cand;
		Period		q;
		bool		is;

		if (__builtin_sub_overflow(local_cell->end, p.offset, &cand))
			return false;
		if (p.next == CAL_NO_TRANSITION || cand < p.next)
		{
			*end = cand;
			return true;
		}
		period_at(z, p.next, &q);
		if (!transition_is_boundary(g, &p, &q, p.next, &is))
			return false;
		if (is)
		{
			*end = p.next;
			return true;
		}
		p = q;
	}
	return false;
}

/* t - d, or the earliest instant if that is before it. */
static int64_t
back_by(int64_t t, int64_t d)
{
	int64_t		r;

	return __builtin_sub_overflow(t, d, &r) ? INT64_MIN : r;
}

/*
 * The first instant at which the local clock shows local time l or later,
 * walking forward from an instant of period p before which it never did:
 * where it passes l, or a transition that jumps to l or over it.
 */
static bool
first_reach(const CalZone *z, Period p, int64_t l, int64_t *at)
{
	for (int i = 0; i < MAX_PERIOD_STEPS; i++)
	{
		int64_t		cand;
		int64_t		landing;
		Period		q;

		if (__builtin_sub_overflow(l, p.offset, &cand))
			return false;
		if (p.next == CAL_NO_TRANSITION || cand < p.next)
		{
			*at = cand;
			return true;
		}
		period_at(z, p.next, &q);
		if (__builtin_add_overflow(p.next, q.offset, &landing))
			return false;
		if (landing >= l)
		{
			*at = p.next;
			return true;
		}
		p = q;
	}
	return false;
}

/*
 * The latest local time the clock showed at or before instant ts, of
 * period p: ts's own, but for a while after a fall-back the clock showed
 * later times before.  A fall-back puts the clock back by less than two
 * zone offsets, so only the transitions since then count.
 */
static bool
high_water(const CalZone *z, int64_t ts, const Period *p, int64_t *high)
{
	Period		q;

	if (__builtin_add_overflow(ts, p->offset, high))
		return false;
	period_at(z, back_by(ts, 2 * MAX_ZONE_OFFSET), &q);
	for (int i = 0; i < MAX_PERIOD_STEPS; i++)
	{
		if (q.next == CAL_NO_TRANSITION || q.next > ts)
			return true;
		/* the clock showed q.next - 1 + q.offset last before the change */
		if (q.next - 1 + q.offset > *high)
			*high = q.next - 1 + q.offset;
		period_at(z, q.next, &q);
	}
	return false;
}

/* The first instant at which the local clock shows local time l or later. */
static bool
reach(const CalZone *z, int64_t l, int64_t *at)
{
	Period		p;

	/* before this instant the clock cannot have shown l */
	period_at(z, back_by(l, MAX_ZONE_OFFSET + 1), &p);
	return first_reach(z, p, l, at);
}

/*
 * For a grid of a day or more, the cell whose window holds instant ts, of
 * period p, and the window's start: the cell of the latest local time shown
 * so far (high_water), from the first instant the clock reaches the cell's
 * start, as java.time's atStartOfDay gives a day.  A fall-back across
 * midnight thus neither splits a day nor starts it twice: the repeated
 * times belong to the day the clock first left them for.  Usually no
 * transition lies within three zone offsets before ts, and one lookup
 * shows it.
 */
static bool
whole_cell(const CalGrid *g, const CalZone *z, int64_t ts, const Period *p,
		   WmWindow *cell, int64_t *start)
{
	Period		back;
	int64_t		high;

	if (!cell_at(g, p, ts, cell))
		return false;
	period_at(z, back_by(cell->start, 3 * MAX_ZONE_OFFSET), &back);
	if (back.next == CAL_NO_TRANSITION || back.next > ts)
	{
		*start = cell->start - p->offset;
		return true;
	}
	return high_water(z, ts, p, &high) && local_cell(g, high, cell) &&
		reach(z, cell->start, start);
}

/* The window holding ts: its cell's, up to the first instant of the next. */
static bool
whole_bucket(const CalGrid *g, const CalZone *z, int64_t ts, WmWindow *w)
{
	Period		p;
	WmWindow	cell;

	period_at(z, ts, &p);
	return whole_cell(g, z, ts, &p, &cell, &w->start) &&
		first_reach(z, p, cell.end, &w->end);
}

/*
 * Sliding windows of n cells of a day or more, newest first: window k runs
 * from the first instant of the k-th cell before that of ts to the first
 * instant n cells later, counted on the local clock, so that a day a zone
 * skips (Pacific/Apia, 2011-12-30) is still one of a window's days.
 */
static int
whole_hop(const CalGrid *g, int n, const CalZone *z, int64_t ts, WmWindow *out)
{
	Period		p;
	WmWindow	cell;
	WmWindow	c;

	period_at(z, ts, &p);
	if (!whole_cell(g, z, ts, &p, &cell, &out[0].start) ||
		!first_reach(z, p, cell.end, &out[n - 1].end))
		return -1;
	c = cell;
	for (int k = 1; k < n; k++)
		if (!local_cell(g, c.start - 1, &c) || !reach(z, c.start, &out[k].start))
			return -1;
	c = cell;
	for (int k = n - 2; k >= 0; k--)
		if (!local_cell(g, c.end, &c) || !reach(z, c.end, &out[k].end))
			return -1;
	return n;
}

/* The window [start, end) of grid g holding instant ts in zone z. */
bool
cal_bucket(const CalGrid *g, const CalZone *z, int64_t ts, WmWindow *w)
{
	Period		p;
	Period		at_start;
	WmWindow	local;
	int64_t		guess;

	if (g->whole)
		return whole_bucket(g, z, ts, w);
	period_at(z, ts, &p);
	if (!cell_at(g, &p, ts, &local))
		return false;
	guess = local.start - p.offset;
	period_at(z, guess, &at_start);
	if (at_start.offset == p.offset &&
		(at_start.next == CAL_NO_TRANSITION || at_start.next > ts))
		w->start = guess;
	else if (!cell_start_slow(g, z, ts, local.start, &w->start))
		return false;
	return cell_end(g, z, p, &local, &w->end);
}

/*
 * Sliding windows of n consecutive cells of the slide grid, newest first:
 * window k starts k cells before the cell of ts and ends n cells after.
 */
int
cal_hop(const CalGrid *slide, int n, const CalZone *z, int64_t ts,
		WmWindow *out)
{
	WmWindow	cell;

	if (slide->whole)
		return whole_hop(slide, n, z, ts, out);
	if (!cal_bucket(slide, z, ts, &cell))
		return -1;
	out[0].start = cell.start;
	out[n - 1].end = cell.end;
	for (int k = 1; k < n; k++)
	{
		if (!cal_bucket(slide, z, out[k - 1].start - 1, &cell))
			return -1;
		out[k].start = cell.start;
	}
	for (int k = n - 2; k >= 0; k--)
	{
		if (!cal_bucket(slide, z, out[k + 1].end, &cell))
			return -1;
		out[k].end = cell.end;
	}
	return n;
}

/*
 * CUMULATE on calendar grids: windows from the start of the max cell to the
 * end of each step cell from the one holding ts to the last in the max cell.
 * The step grid is a refinement of the max grid (checked by the caller).
 */
int
cal_cumulate(const CalGrid *step, const CalGrid *max, const CalZone *z,
			 int64_t ts, WmWindow *out)
{
	WmWindow	whole;
	WmWindow	cell;
	int			n = 0;

	if (!cal_bucket(max, z, ts, &whole) || !cal_bucket(step, z, ts, &cell))
		return -1;
	for (;;)
	{
		out[n].start = whole.start;
		out[n].end = cell.end < whole.end ? cell.end : whole.end;
		if (out[n++].end >= whole.end || n >= WM_MAX_WINDOWS_PER_ROW)
			return n;
		if (!cal_bucket(step, z, cell.end, &cell))
			return -1;
	}
}
