/*
 * spec.c
 *		Checking window definitions and assigning rows to their windows.
 *
 * Lengths are "spans": an interval is split into fixed microseconds and
 * calendar months.  Months only make sense on a local calendar, so without
 * a time zone they are refused rather than approximated as 30 days; with
 * one, a span is either months or fixed time, never a mix whose cells would
 * not tile the calendar.
 *
 * Every check raises the error a user sees, naming the argument at fault;
 * spec_assign itself only reports windows that leave the representable
 * range.  Without a zone the windows of timestamptz rows are aligned to
 * 1970-01-01 UTC, as Flink aligns epoch milliseconds, so both overloads
 * agree on where windows start.
 */
#include "compat.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "session_merge.h"
#include "spec.h"
#include "zone.h"

/* Flink's origin, 1970-01-01, in microseconds since PostgreSQL's epoch. */
#define UNIX_EPOCH_USECS \
	((int64) (UNIX_EPOCH_JDATE - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY)
/* The shortest month, bounding offsets of month grids. */
#define MIN_MONTH_USECS (28 * USECS_PER_DAY)

Span
spec_interval_span(const Interval *iv, const char *what, bool calendar)
{
	Span		s = {0, iv->month};

	if (iv->month != 0 && !calendar)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s cannot be in months or years without a time zone", what),
				 errhint("Pass tz => 'UTC' (or another zone) for calendar months, or give %s in days.", what)));
	if (iv->month != 0 && (iv->day != 0 || iv->time != 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s cannot mix months with days or time", what),
				 errhint("Give %s either in months or in days and time.", what)));
	if (pg_mul_s64_overflow(iv->day, USECS_PER_DAY, &s.usecs) ||
		pg_add_s64_overflow(s.usecs, iv->time, &s.usecs))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("interval out of range")));
	return s;
}

static void
check_positive(Span s, const char *what)
{
	if (s.months < 0 || s.usecs < 0 || (s.months == 0 && s.usecs == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be greater than zero", what)));
}

/* The session gap of one row: fixed time, never months. */
int64
spec_gap_length(const Interval *iv)
{
	int64		gap;

	if (iv->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gap cannot be in months or years"),
				 errhint("Give the gap in days and time.")));
	gap = spec_interval_span(iv, "gap", false).usecs;
	spec_check_gap(gap);
	return gap;
}

void
spec_check_gap(int64 gap)
{
	if (gap <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gap must be greater than zero")));
}

/* Flink requires |offset| < the length of the cell it shifts. */
static void
check_offset(Span offset, Span cell, const char *cell_name)
{
	int64		bound = cell.usecs;

	if (cell.months && pg_mul_s64_overflow(cell.months, MIN_MONTH_USECS, &bound))
		bound = PG_INT64_MAX;

	if (offset.months != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("offset cannot be in months or years"),
				 errhint("Give the offset in days and time.")));
	if (offset.usecs <= -bound || offset.usecs >= bound)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("offset must be smaller than %s in absolute value", cell_name),
				 errhint("An offset of k * %s gives the same windows as none.", cell_name)));
}

void
spec_check_window_count(int64 n, const char *what)
{
	if (n < 0 || n > WM_MAX_WINDOWS_PER_ROW)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s would give a row more than %d windows", what,
						WM_MAX_WINDOWS_PER_ROW)));
}

static void
init_spec(WindowSpec *s, WindowKind kind, bool is_timestamp, const char *tz)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->is_timestamp = is_timestamp;
	s->calendar = tz != NULL;
	if (tz)
		zone_from_name(tz, &s->zone);
}

static int64
origin(bool is_timestamp)
{
	return is_timestamp ? UNIX_EPOCH_USECS : 0;
}

void
spec_tumble(WindowSpec *s, bool is_timestamp, Span size, Span offset,
			const char *tz)
{
	check_positive(size, "size");
	check_offset(offset, size, "size");
	init_spec(s, WK_TUMBLE, is_timestamp, tz);
	s->max_windows = 1;
	if (s->calendar)
		cal_grid_init(&s->grid, size.usecs, size.months, offset.usecs);
	s->size = size.usecs;
	s->phase = s->calendar ? 0 :
		wm_phase(origin(is_timestamp), offset.usecs, size.usecs);
}

/* With a zone, a hop window is a whole number of slide cells. */
static int
calendar_cells(Span size, Span slide)
{
	bool		whole = (size.months == 0) == (slide.months == 0) &&
		(size.months ? size.months % slide.months : size.usecs % slide.usecs) == 0;

	if (!whole)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("size must be a multiple of slide for calendar windows"),
				 errhint("Calendar hop windows are made of whole slide cells.")));
	return (int) Min(size.months ? size.months / slide.months :
					 size.usecs / slide.usecs, PG_INT32_MAX);
}

void
spec_hop(WindowSpec *s, bool is_timestamp, Span size, Span slide,
		 Span offset, const char *tz)
{
	check_positive(size, "size");
	check_positive(slide, "slide");
	check_offset(offset, slide, "slide");
	init_spec(s, WK_HOP, is_timestamp, tz);
	if (s->calendar)
	{
		s->cells = calendar_cells(size, slide);
		spec_check_window_count(s->cells, "hop");
		s->max_windows = s->cells;
		cal_grid_init(&s->grid, slide.usecs, slide.months, offset.usecs);
		return;
	}
	s->max_windows = wm_hop_max_windows(size.usecs, slide.usecs);
	spec_check_window_count(s->max_windows, "hop");
	s->size = size.usecs;
	s->slide = slide.usecs;
	s->phase = wm_phase(origin(is_timestamp), offset.usecs, slide.usecs);
}

/*
 * How many step cells make a max_size cell, or -1 if steps do not tile it.
 * Fixed steps tile a month when they divide a day, since months start at
 * local midnight.
 */
static int64
cumulate_steps(Span step, Span max_size)
{
	int64		steps;

	if (max_size.months == 0)
		return step.months == 0 && max_size.usecs % step.usecs == 0 ?
			max_size.usecs / step.usecs : -1;
	if (step.months)
		return max_size.months % step.months == 0 ?
			max_size.months / step.months : -1;
	if (USECS_PER_DAY % step.usecs != 0)
		return -1;
	/* An upper bound (31-day months), used to size the output. */
	if (pg_mul_s64_overflow(max_size.months * INT64CONST(31),
							USECS_PER_DAY / step.usecs, &steps))
		return PG_INT64_MAX;
	return steps;
}

void
spec_cumulate(WindowSpec *s, bool is_timestamp, Span step, Span max_size,
			  Span offset, const char *tz)
{
	int64		steps;

	check_positive(step, "step");
	check_positive(max_size, "max_size");
	check_offset(offset, max_size, "max_size");
	steps = cumulate_steps(step, max_size);
	if (steps < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_size must be a multiple of step"),
				 errhint("Cumulating windows grow by whole steps up to max_size.")));
	spec_check_window_count(steps, "cumulate");
	init_spec(s, WK_CUMULATE, is_timestamp, tz);
	s->max_windows = (int) steps;
	if (s->calendar)
	{
		cal_grid_init(&s->grid, step.usecs, step.months, offset.usecs);
		cal_grid_init(&s->outer, max_size.usecs, max_size.months, offset.usecs);
		return;
	}
	s->size = max_size.usecs;
	s->slide = step.usecs;
	s->phase = wm_phase(origin(is_timestamp), offset.usecs, max_size.usecs);
}

void
spec_report_out_of_range(bool is_timestamp)
{
	ereport(ERROR,
			(errcode(is_timestamp ? ERRCODE_DATETIME_VALUE_OUT_OF_RANGE :
					 ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg(is_timestamp ? "timestamp out of range" : "bigint out of range"),
			 errdetail("A window of this row would start or end outside the range of %s.",
					   is_timestamp ? "timestamps" : "bigint")));
}

void
spec_check_event_time(bool is_timestamp, int64 ts)
{
	if (is_timestamp && TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 errdetail("An infinite timestamp belongs to no window.")));
}

void
spec_check_window(bool is_timestamp, const WmWindow *w)
{
	if (is_timestamp &&
		!(IS_VALID_TIMESTAMP(w->start) && IS_VALID_TIMESTAMP(w->end)))
		spec_report_out_of_range(is_timestamp);
}

/*
 * Fills out (s->max_windows entries) with the windows of ts and returns how
 * many, or -1 if ts is infinite or a window would leave the range of the
 * type.  Pipelines route such rows to their late table instead of failing.
 */
int
spec_windows(const WindowSpec *s, int64 ts, WmWindow *out)
{
	int			n;

	if (s->is_timestamp && TIMESTAMP_NOT_FINITE(ts))
		return -1;
	switch (s->kind)
	{
		case WK_TUMBLE:
			n = (s->calendar ? cal_bucket(&s->grid, &s->zone, ts, out) :
				 wm_tumble(ts, s->size, s->phase, out)) ? 1 : -1;
			break;
		case WK_HOP:
			n = s->calendar ? cal_hop(&s->grid, s->cells, &s->zone, ts, out) :
				wm_hop(ts, s->size, s->slide, s->phase, out);
			break;
		case WK_CUMULATE:
			n = s->calendar ?
				cal_cumulate(&s->grid, &s->outer, &s->zone, ts, out) :
				wm_cumulate(ts, s->slide, s->size, s->phase, out);
			break;
		case WK_GLOBAL:
			/* the widest valid window: the watermark reaches its end only at flush() */
			out[0].start = s->is_timestamp ? MIN_TIMESTAMP : PG_INT64_MIN;
			out[0].end = s->is_timestamp ? END_TIMESTAMP - 1 : PG_INT64_MAX;
			n = ts < out[0].end ? 1 : 0;
			break;
		case WK_SESSION:
			/* a row's first window, until it merges; a column's gaps are the operator's */
			if (s->gap <= 0)
				elog(ERROR, "sessions with a gap column are assigned by the operator");
			n = sm_row_window(ts, s->gap, out) ? 1 : -1;
			break;
		case WK_COUNT:
			elog(ERROR, "count windows are assigned by the operator");
			break;
		default:
			elog(ERROR, "unrecognized window kind %d", (int) s->kind);
	}
	for (int i = 0; i < n; i++)
		if (s->is_timestamp &&
			!(IS_VALID_TIMESTAMP(out[i].start) && IS_VALID_TIMESTAMP(out[i].end)))
			return -1;
	return n;
}

/* spec_windows for SQL functions: bad input is an error. */
int
spec_assign(const WindowSpec *s, int64 ts, WmWindow *out)
{
	int			n;

	spec_check_event_time(s->is_timestamp, ts);
	n = spec_windows(s, ts, out);
	if (n < 0)
		spec_report_out_of_range(s->is_timestamp);
	return n;
}

/*
 * One length of a pipeline assigner.  A bigint time column holds epoch
 * milliseconds, so its lengths are whole milliseconds.
 */
static Span
assigner_span(HeapTupleHeader a, const char *field, const char *what,
			  bool is_timestamp, bool calendar, bool required)
{
	bool		isnull;
	Datum		d = GetAttributeByName(a, field, &isnull);
	Span		s;

	if (isnull && required)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("assigner has no %s", what)));
	if (isnull)
		return (Span) {0, 0};
	s = spec_interval_span(DatumGetIntervalP(d), what, calendar);
	if (!is_timestamp && s.usecs % 1000 != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a whole number of milliseconds for a bigint time column", what),
				 errdetail("A bigint time column holds epoch milliseconds.")));
	if (!is_timestamp)
		s.usecs /= 1000;
	return s;
}

/* Session windows of a pipeline: a fixed gap, or a column holding it. */
static void
spec_session(WindowSpec *s, bool is_timestamp, HeapTupleHeader a, bool fixed)
{
	bool		isnull;
	Datum		column;

	init_spec(s, WK_SESSION, is_timestamp, NULL);
	s->max_windows = 1;
	if (fixed)
	{
		s->gap = assigner_span(a, "size", "gap", is_timestamp, false, true).usecs;
		spec_check_gap(s->gap);
		return;
	}
	column = GetAttributeByName(a, "gap_column", &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("assigner has no gap column")));
	s->gap_column = pstrdup(NameStr(*DatumGetName(column)));
}

/* Count windows of a pipeline, with the limits of count_window(). */
static void
spec_count(WindowSpec *s, bool is_timestamp, HeapTupleHeader a)
{
	bool		isnull;
	Datum		size = GetAttributeByName(a, "rows", &isnull);
	Datum		slide = GetAttributeByName(a, "rows_slide", &isnull);

	init_spec(s, WK_COUNT, is_timestamp, NULL);
	s->max_windows = 1;
	s->rows = DatumGetInt64(size);
	s->rows_slide = DatumGetInt64(slide);
	if (s->rows <= 0 || s->rows_slide <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be greater than zero", s->rows <= 0 ? "size" : "slide")));
	spec_check_window_count(s->rows / s->rows_slide + (s->rows % s->rows_slide != 0), "counting");
}

/* Does the assigner's size or slide count months? */
static bool
assigner_months(HeapTupleHeader a)
{
	static const char *const fields[] = {"size", "slide"};

	for (int i = 0; i < lengthof(fields); i++)
	{
		bool		isnull;
		Datum		d = GetAttributeByName(a, fields[i], &isnull);

		if (!isnull && DatumGetIntervalP(d)->month != 0)
			return true;
	}
	return false;
}

/*
 * The window definition of a pipeline (a windowing.assigner value), checked
 * like the SQL functions' arguments.  A timestamp column's months are laid
 * on its own calendar, UTC's, as the timestamp SQL functions lay them.
 */
void
spec_from_assigner(WindowSpec *s, HeapTupleHeader a, Oid time_type)
{
	bool		isnull;
	Datum		kind_d = GetAttributeByName(a, "kind", &isnull);
	char	   *kind = isnull ? "" : TextDatumGetCString(kind_d);
	Datum		tz_d = GetAttributeByName(a, "tz", &isnull);
	char	   *tz = isnull ? NULL : TextDatumGetCString(tz_d);
	bool		is_timestamp = time_type != INT8OID;
	bool		cal;

	if (tz != NULL && time_type != TIMESTAMPTZOID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time zones need a timestamptz time column")));
	if (time_type == TIMESTAMPOID && assigner_months(a))
		tz = "UTC";
	cal = tz != NULL;
	if (strcmp(kind, "session") == 0 || strcmp(kind, "session_dynamic") == 0)
		spec_session(s, is_timestamp, a, strcmp(kind, "session") == 0);
	else if (strcmp(kind, "counting") == 0)
		spec_count(s, is_timestamp, a);
	else if (strcmp(kind, "tumbling") == 0)
		spec_tumble(s, is_timestamp,
					assigner_span(a, "size", "size", is_timestamp, cal, true),
					assigner_span(a, "offset", "offset", is_timestamp, cal, false), tz);
	else if (strcmp(kind, "hopping") == 0)
		spec_hop(s, is_timestamp,
				 assigner_span(a, "size", "size", is_timestamp, cal, true),
				 assigner_span(a, "slide", "slide", is_timestamp, cal, true),
				 assigner_span(a, "offset", "offset", is_timestamp, cal, false), tz);
	else if (strcmp(kind, "global") == 0)
	{
		init_spec(s, WK_GLOBAL, is_timestamp, NULL);
		s->max_windows = 1;
	}
	else if (strcmp(kind, "cumulating") == 0)
		spec_cumulate(s, is_timestamp,
					  assigner_span(a, "slide", "step", is_timestamp, cal, true),
					  assigner_span(a, "size", "max_size", is_timestamp, cal, true),
					  assigner_span(a, "offset", "offset", is_timestamp, cal, false), tz);
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown window assigner \"%s\"", kind),
				 errhint("Use windowing.tumbling(), hopping(), cumulating(), session(), session_dynamic(), counting() or global().")));
}
