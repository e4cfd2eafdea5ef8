/*
 * window_math_test.c
 *		Unit tests of the pure window math, built and run without a server
 *		(make unitcheck).  Calendar grids are checked against made-up zones
 *		with spring-forward and fall-back transitions, so the tests do not
 *		depend on any tz database.
 */
#include <stdio.h>
#include <string.h>

#include "calendar.h"
#include "session_merge.h"
#include "window_math.h"

static int	passed;
static int	failed;

#define CHECK(cond) check((cond), #cond, __LINE__)

static void
check(int ok, const char *what, int line)
{
	if (ok)
		passed++;
	else
	{
		failed++;
		printf("FAIL line %d: %s\n", line, what);
	}
}

static void
test_tumble(void)
{
	WmWindow	w;

	CHECK(wm_floor_mod(-1, 5) == 4 && wm_floor_div(-1, 5) == -1);
	CHECK(wm_tumble(1640697324792, 5, wm_phase(0, 0, 5), &w) &&
		  w.start == 1640697324790 && w.end == 1640697324795);
	CHECK(wm_tumble(-1, 5, wm_phase(0, 0, 5), &w) && w.start == -5 && w.end == 0);
	CHECK(wm_tumble(-5, 5, wm_phase(0, 0, 5), &w) && w.start == -5);
	/* seed 000: one day with an offset of -8 hours, epoch milliseconds */
	CHECK(wm_tumble(1790785800000, 86400000, wm_phase(0, -28800000, 86400000), &w) &&
		  w.start == 1790784000000);
	CHECK(wm_tumble(12, 10, wm_phase(0, -3, 10), &w) && w.start == 7);
	CHECK(wm_tumble(INT64_MIN, 10, wm_phase(0, 2, 10), &w) && w.start == INT64_MIN);
	CHECK(!wm_tumble(INT64_MAX, 10, wm_phase(0, 0, 10), &w));
	CHECK(!wm_tumble(INT64_MIN, 10, wm_phase(0, 0, 10), &w));
	/* a huge origin and offset cannot overflow the phase */
	CHECK(wm_phase(INT64_MIN, INT64_MIN + 1, INT64_MAX) >= 0);
}

static void
test_hop(void)
{
	WmWindow	w[8];

	/* seed 002: size 5, slide 2: windows starting 792, 790, 788 */
	CHECK(wm_hop(1640697324792, 5, 2, wm_phase(0, 0, 2), w) == 3);
	CHECK(w[0].start == 1640697324792 && w[1].start == 1640697324790 &&
		  w[2].start == 1640697324788 && w[2].end == 1640697324793);
	CHECK(wm_hop(0, 7, 3, 0, w) == 3 && w[2].start == -6);
	CHECK(wm_hop(1, 7, 3, 0, w) == 2);
	CHECK(wm_hop(2, 2, 3, 0, w) == 0);
	CHECK(wm_hop_max_windows(7, 3) == 3 && wm_hop_max_windows(6, 3) == 2);
	CHECK(wm_hop_max_windows(INT64_MAX, 1) == -1);
	CHECK(wm_hop(INT64_MIN + 1, 10, 5, 0, w) == -1);
}

static void
test_cumulate_and_count(void)
{
	WmWindow	w[8];
	int64_t		first;
	int64_t		last;

	CHECK(wm_cumulate(13, 5, 20, 0, w) == 2 && w[0].end == 15 && w[1].end == 20);
	CHECK(wm_cumulate(-1, 5, 20, 0, w) == 1 && w[0].start == -20 && w[0].end == 0);
	CHECK(wm_count_windows(0, 3, 1, &first, &last) && first == 1 && last == 3);
	CHECK(wm_count_windows(6, 3, 3, &first, &last) && first == 3 && last == 3);
	CHECK(wm_count_windows(0, 2, 3, &first, &last) && last < first);
	CHECK(wm_count_windows(2, 2, 3, &first, &last) && first == 1 && last == 1);
	CHECK(!wm_count_windows(INT64_MAX, 3, 1, &first, &last));
}

static void
test_sessions(void)
{
	/* seed 000 §5.3: gap 3 on 1, 2, 10, 7, 20 */
	WmWindow	w[5];
	int64_t		ts[] = {1, 2, 10, 7, 20};
	int64_t		n;

	for (int i = 0; i < 5; i++)
		CHECK(sm_row_window(ts[i], 3, &w[i]));
	CHECK(!sm_is_sorted(w, 5));
	n = sm_merge(w, 5, false);
	CHECK(n == 3);
	CHECK(w[0].start == 1 && w[0].end == 5 && w[1].start == 7 &&
		  w[1].end == 13 && w[2].start == 20 && w[2].end == 23);
	CHECK(sm_find(w, n, 10) == 1 && sm_find(w, n, 1) == 0 && sm_find(w, n, 22) == 2);
	CHECK(!sm_row_window(INT64_MAX - 1, 3, &w[0]));
	CHECK(sm_merge(w, 0, true) == 0);
}

/*
 * A zone at +1h that springs forward to +2h at T1 and falls back to +1h at
 * T2 (Unix seconds), like Europe/Berlin in 2026.
 */
#define T1 INT64_C(1774746000)	/* 2026-03-29 01:00 UTC */
#define T2 INT64_C(1792976400)	/* 2026-10-25 01:00 UTC */

static void
fake_lookup(const void *arg, int64_t t, int32_t *off, int64_t *next,
			int32_t *next_off)
{
	(void) arg;
	if (t < T1)
		*off = 3600, *next = T1, *next_off = 7200;
	else if (t < T2)
		*off = 7200, *next = T2, *next_off = 3600;
	else
		*off = 3600, *next = CAL_NO_TRANSITION, *next_off = 3600;
}

#define USEC INT64_C(1000000)
#define HOUR (3600 * USEC)
#define DAY (24 * HOUR)
/* Unix seconds to microseconds since 2000-01-01 */
#define PG(t) (((t) - INT64_C(946684800)) * USEC)

/* Every instant is in its cell, and cells tile: each ends where the next starts. */
static int
tiles(const CalGrid *g, const CalZone *z, int64_t from, int64_t to, int64_t step)
{
	for (int64_t t = from; t < to; t += step)
	{
		WmWindow	a;
		WmWindow	b;

		if (!cal_bucket(g, z, t, &a) || !(a.start <= t && t < a.end) ||
			!cal_bucket(g, z, a.end, &b) || b.start != a.end ||
			!cal_bucket(g, z, a.start - 1, &b) || b.end != a.start)
			return 0;
	}
	return 1;
}

static void
test_calendar(void)
{
	CalZone		z = {fake_lookup, NULL};
	CalGrid		day;
	CalGrid		hour;
	CalGrid		month;
	WmWindow	w;

	cal_grid_init(&day, DAY, 0, 0);
	cal_grid_init(&hour, HOUR, 0, 0);
	cal_grid_init(&month, 0, 1, 0);
	/* 2026-03-29 is 23 hours long, 2026-10-25 25 hours */
	CHECK(cal_bucket(&day, &z, PG(T1) + HOUR, &w) && w.end - w.start == 23 * HOUR &&
		  w.start == PG(T1) - 2 * HOUR);
	CHECK(cal_bucket(&day, &z, PG(T2) + HOUR, &w) && w.end - w.start == 25 * HOUR &&
		  w.start == PG(T2) - 3 * HOUR);
	/* the repeated hour 02:00-03:00 local is two windows */
	CHECK(cal_bucket(&hour, &z, PG(T2) - HOUR / 2, &w) &&
		  w.start == PG(T2) - HOUR && w.end == PG(T2));
	CHECK(cal_bucket(&hour, &z, PG(T2) + HOUR / 2, &w) &&
		  w.start == PG(T2) && w.end == PG(T2) + HOUR);
	/* March 2026 in local time: 31 days less the lost hour */
	CHECK(cal_bucket(&month, &z, PG(T1), &w) && w.end - w.start == 31 * DAY - HOUR);
	CHECK(tiles(&hour, &z, PG(T1) - DAY, PG(T1) + DAY, 7 * 60 * USEC));
	CHECK(tiles(&hour, &z, PG(T2) - DAY, PG(T2) + DAY, 7 * 60 * USEC));
	CHECK(tiles(&day, &z, PG(T1) - 3 * DAY, PG(T2) + 3 * DAY, 5 * HOUR + 7));
	CHECK(tiles(&month, &z, PG(T1) - 90 * DAY, PG(T2) + 90 * DAY, 3 * DAY + 11));
}

/*
 * A zone whose clocks fall back across midnight, like America/Havana's:
 * at -4h, back to -5h at 01:00 local on 2025-11-01 (FA), back to -6h at
 * 00:30 local on 2026-01-01 (FB, to 23:30 of December 31), forward to -5h
 * at midnight on 2026-01-11 (FC), forward to -4h at 23:30 on 2026-02-07
 * (FD, to 00:30 of February 8), and across the date line to +20h at
 * midnight on 2026-03-01 (FE, which it skips).
 */
#define FA INT64_C(1761973200)	/* 2025-11-01 05:00 UTC */
#define FB INT64_C(1767245400)	/* 2026-01-01 05:30 UTC */
#define FC INT64_C(1768111200)	/* 2026-01-11 06:00 UTC */
#define FD INT64_C(1770525000)	/* 2026-02-08 04:30 UTC */
#define FE INT64_C(1772337600)	/* 2026-03-01 04:00 UTC */

static void
midnight_lookup(const void *arg, int64_t t, int32_t *off, int64_t *next,
				int32_t *next_off)
{
	static const int64_t at[] = {FA, FB, FC, FD, FE};
	static const int32_t hours[] = {-4, -5, -6, -5, -4, 20};
	int			i = 0;

	(void) arg;
	while (i < 5 && t >= at[i])
		i++;
	*off = hours[i] * 3600;
	*next = i < 5 ? at[i] : CAL_NO_TRANSITION;
	*next_off = hours[i < 5 ? i + 1 : i] * 3600;
}

#define MINUTE (60 * USEC)

/* A window is [start, end) relative to an instant. */
static int
is_window(const WmWindow *w, int64_t at, int64_t start, int64_t end)
{
	return w->start == at + start && w->end == at + end;
}

static void
test_calendar_midnight(void)
{
	CalZone		z = {midnight_lookup, NULL};
	CalGrid		day;
	CalGrid		hour;
	CalGrid		month;
	WmWindow	w;
	WmWindow	ws[40];

	cal_grid_init(&day, DAY, 0, 0);
	cal_grid_init(&hour, HOUR, 0, 0);
	cal_grid_init(&month, 0, 1, 0);
	/* 2025-11-01: one day of 25 hours, both before and after the change */
	CHECK(cal_bucket(&day, &z, PG(FA) - 30 * MINUTE, &w) && is_window(&w, PG(FA), -HOUR, DAY));
	CHECK(cal_bucket(&day, &z, PG(FA) + 30 * MINUTE, &w) && is_window(&w, PG(FA), -HOUR, DAY));
	/* while the hours stay two windows */
	CHECK(cal_bucket(&hour, &z, PG(FA) - 30 * MINUTE, &w) && is_window(&w, PG(FA), -HOUR, 0));
	CHECK(cal_bucket(&hour, &z, PG(FA) + 30 * MINUTE, &w) && is_window(&w, PG(FA), 0, HOUR));
	/* November runs from its first instant to December's, 30 days and 1 hour */
	CHECK(cal_bucket(&month, &z, PG(FA) + 30 * MINUTE, &w) &&
		  is_window(&w, PG(FA), -HOUR, 30 * DAY));
	/* December 31 ends when January 1 first begins; the repeated half hour
	 * of December 31 belongs to January 1, which lasts 24.5 hours */
	CHECK(cal_bucket(&day, &z, PG(FB) - 40 * MINUTE, &w) &&
		  is_window(&w, PG(FB), -DAY - 30 * MINUTE, -30 * MINUTE));
	CHECK(cal_bucket(&day, &z, PG(FB) + 10 * MINUTE, &w) &&
		  is_window(&w, PG(FB), -30 * MINUTE, DAY + 30 * MINUTE));
	CHECK(cal_bucket(&month, &z, PG(FB) + 10 * MINUTE, &w) &&
		  is_window(&w, PG(FB), -30 * MINUTE, 31 * DAY - 30 * MINUTE));
	/* midnight skipped: January 11 starts at the change, 23 hours long */
	CHECK(cal_bucket(&day, &z, PG(FC), &w) && is_window(&w, PG(FC), 0, 23 * HOUR));
	CHECK(cal_bucket(&day, &z, PG(FC) - 1, &w) && is_window(&w, PG(FC), -DAY, 0));
	/* a gap across midnight: February 7 ends, and 8 starts, at the change */
	CHECK(cal_bucket(&day, &z, PG(FD) - 1, &w) &&
		  is_window(&w, PG(FD), -23 * HOUR - 30 * MINUTE, 0));
	CHECK(cal_bucket(&day, &z, PG(FD), &w) && is_window(&w, PG(FD), 0, 23 * HOUR + 30 * MINUTE));
	/* March 1 is skipped: February ends, and March starts, at the change */
	CHECK(cal_bucket(&day, &z, PG(FE), &w) && is_window(&w, PG(FE), 0, DAY));
	CHECK(cal_bucket(&day, &z, PG(FE) - 1, &w) && is_window(&w, PG(FE), -DAY, 0));
	CHECK(cal_bucket(&month, &z, PG(FE) - 1, &w) && is_window(&w, PG(FE), -28 * DAY + HOUR, 0));
	CHECK(tiles(&day, &z, PG(FA) - 3 * DAY, PG(FE) + 3 * DAY, 47 * MINUTE + 3));
	CHECK(tiles(&month, &z, PG(FA) - 90 * DAY, PG(FE) + 90 * DAY, DAY + 7));
	CHECK(tiles(&hour, &z, PG(FB) - DAY, PG(FB) + DAY, 7 * MINUTE));
	/* hop and cumulate by day share the days */
	CHECK(cal_hop(&day, 2, &z, PG(FB) + 10 * MINUTE, ws) == 2 &&
		  is_window(&ws[0], PG(FB), -30 * MINUTE, 2 * DAY + 30 * MINUTE) &&
		  is_window(&ws[1], PG(FB), -DAY - 30 * MINUTE, DAY + 30 * MINUTE));
	CHECK(cal_cumulate(&day, &month, &z, PG(FB) + 10 * MINUTE, ws) == 31 &&
		  is_window(&ws[0], PG(FB), -30 * MINUTE, DAY + 30 * MINUTE));
	/* two days of which one is skipped last one day */
	CHECK(cal_hop(&day, 2, &z, PG(FE) + HOUR, ws) == 2 &&
		  is_window(&ws[0], PG(FE), 0, 2 * DAY) && is_window(&ws[1], PG(FE), 0, DAY));
	CHECK(cal_hop(&day, 2, &z, PG(FE) - HOUR, ws) == 2 &&
		  is_window(&ws[0], PG(FE), -DAY, 0) && is_window(&ws[1], PG(FE), -2 * DAY, 0));
}

static void
test_calendar_hop_cumulate(void)
{
	CalZone		z = {fake_lookup, NULL};
	CalGrid		day;
	CalGrid		month;
	WmWindow	w[40];

	cal_grid_init(&day, DAY, 0, 0);
	cal_grid_init(&month, 0, 1, 0);
	/* two-day windows over the spring change: 47 hours each */
	CHECK(cal_hop(&day, 2, &z, PG(T1) + HOUR, w) == 2);
	CHECK(w[0].end - w[0].start == 47 * HOUR && w[1].end - w[1].start == 47 * HOUR);
	CHECK(w[1].end - w[0].start == 23 * HOUR);
	/* month to date by day, on the 29th of March: 3 windows */
	CHECK(cal_cumulate(&day, &month, &z, PG(T1) + HOUR, w) == 3);
	CHECK(w[2].end - w[0].start == 31 * DAY - HOUR);
}

int
main(void)
{
	test_tumble();
	test_hop();
	test_cumulate_and_count();
	test_sessions();
	test_calendar();
	test_calendar_hop_cumulate();
	test_calendar_midnight();
	printf("window math: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
