/*
 * calendar.h
 *		Window grids on the local clock of a time zone.
 *
 * Pure C like window_math.h: the time zone is reached only through the
 * CalZone callback, which the backend implements with PostgreSQL's tz
 * database (zone.c) and a test can implement with a table.
 *
 * Times are microseconds since 2000-01-01 00:00 UTC (PostgreSQL's epoch).
 * Local grids are aligned to 1970-01-01 00:00 local, like Flink's windows.
 */
#ifndef WINDOWING_CALENDAR_H
#define WINDOWING_CALENDAR_H

#include "window_math.h"

#define CAL_NO_TRANSITION INT64_MAX

/*
 * Offset east of UTC (seconds) in force at Unix second t; the next instant
 * after t at which the offset record changes (CAL_NO_TRANSITION if none) and
 * the offset from then on.
 */
typedef void (*CalLookup) (const void *arg, int64_t t, int32_t *offset,
						   int64_t *next, int32_t *next_offset);

typedef struct CalZone
{
	CalLookup	lookup;
	const void *arg;
} CalZone;

/* A grid of cells of "size" microseconds or "months" calendar months. */
typedef struct CalGrid
{
	int64_t		size;			/* on the local clock; 0 for month grids */
	int32_t		months;			/* 0 for fixed-length grids */
	int64_t		offset;			/* shift of the grid on the local clock */
	int64_t		phase;			/* wm_phase of fixed grids */
	bool		whole;			/* cells of a day or more (whole_bucket) */
} CalGrid;

extern void cal_grid_init(CalGrid *g, int64_t size, int32_t months,
						  int64_t offset);
extern bool cal_bucket(const CalGrid *g, const CalZone *z, int64_t ts,
					   WmWindow *w);
extern int	cal_hop(const CalGrid *slide, int n, const CalZone *z, int64_t ts,
					WmWindow *out);
extern int	cal_cumulate(const CalGrid *step, const CalGrid *max,
						 const CalZone *z, int64_t ts, WmWindow *out);

#endif							/* WINDOWING_CALENDAR_H */
