/*
 * spec.h
 *		A validated window definition and the windows it gives a row.
 *
 * SQL functions and pipelines describe windows the same way (kind, lengths,
 * offset, optional zone); this is the one place those arguments are checked
 * and turned into the pure window math of window_math.h and calendar.h.
 */
#ifndef WINDOWING_SPEC_H
#define WINDOWING_SPEC_H

#include "access/htup.h"
#include "datatype/timestamp.h"

#include "calendar.h"

typedef enum WindowKind
{
	WK_TUMBLE,
	WK_HOP,
	WK_CUMULATE,
	WK_SESSION,					/* pipelines only: merging is the operator's */
	WK_COUNT,					/* pipelines only: windows of rows per key */
	WK_GLOBAL					/* pipelines only: one window per key, for all
								 * time, fired by its trigger alone */
} WindowKind;

/* A length as SQL gives it: microseconds plus calendar months, or a bigint. */
typedef struct Span
{
	int64		usecs;
	int32		months;
} Span;

typedef struct WindowSpec
{
	WindowKind	kind;
	bool		is_timestamp;	/* microseconds (timestamptz or timestamp), else bigint */
	int64		size;			/* tumble and hop size, cumulate max_size */
	int64		slide;			/* hop slide, cumulate step */
	int64		phase;			/* of the grid that aligns the windows */
	int			max_windows;	/* most windows one row can get */
	bool		calendar;		/* laid on the local clock of zone */
	CalZone		zone;
	CalGrid		grid;			/* tumble cells, hop slides, cumulate steps */
	CalGrid		outer;			/* cumulate: max_size cells */
	int			cells;			/* hop: slide cells per window */
	int64		gap;			/* session: fixed gap, or 0 */
	char	   *gap_column;		/* session: the column holding each row's gap */
	int64		rows;			/* count: rows per window */
	int64		rows_slide;		/* count: rows between firings */
} WindowSpec;

extern Span spec_interval_span(const Interval *iv, const char *what, bool calendar);
extern int64 spec_gap_length(const Interval *iv);
extern void spec_check_gap(int64 gap);
extern void spec_check_window_count(int64 n, const char *what);
extern void spec_tumble(WindowSpec *s, bool is_timestamp, Span size,
						Span offset, const char *tz);
extern void spec_hop(WindowSpec *s, bool is_timestamp, Span size, Span slide,
					 Span offset, const char *tz);
extern void spec_cumulate(WindowSpec *s, bool is_timestamp, Span step,
						  Span max_size, Span offset, const char *tz);
extern int	spec_windows(const WindowSpec *s, int64 ts, WmWindow *out);
extern int	spec_assign(const WindowSpec *s, int64 ts, WmWindow *out);
extern void spec_from_assigner(WindowSpec *s, HeapTupleHeader a, Oid time_type);
extern void spec_check_event_time(bool is_timestamp, int64 ts);
extern void spec_check_window(bool is_timestamp, const WmWindow *w);
extern void spec_report_out_of_range(bool is_timestamp) pg_attribute_noreturn();

#endif							/* WINDOWING_SPEC_H */
