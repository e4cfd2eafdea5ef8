/*
 * trigger.c
 *		When windows fire: Flink's EventTimeTrigger, and early firing
 *		every so much event time (its ContinuousEventTimeTrigger), every
 *		so many rows (its CountTrigger), every so much time of the clock
 *		(its ContinuousProcessingTimeTrigger), or when a column of the rows
 *		moves by more than a threshold (its DeltaTrigger), each before the
 *		firing on time.
 *
 * Any of them may purge (Flink's PurgingTrigger): a window's contents are
 * cleared each time it fires, so each firing gives the rows since the one
 * before, and a firing that would find none gives nothing.
 *
 * The kinds of window register a window's timer at its last instant when
 * they make it (Flink's triggers register it on every element; the timer
 * heap keeps one per window either way) and ask the trigger at each row
 * and each timer.  A trigger that fires early keeps one timer of its own
 * per window (WindowEntry.trigger_time), stored with the window's state so
 * that a step's size never changes when a window fires.  Every such timer
 * falls on a multiple of the interval (next_timer), which tells a store
 * when any window may be due; one that passes without firing moves on
 * without the window being written, and stored_timer moves on the one
 * its stored state still holds.
 */
#include "compat.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/int.h"
#include "nodes/value.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/timestamp.h"

#include "operator.h"
#include "operator_int.h"
#include "spec.h"
#include "trigger.h"
#include "watermark.h"

/*
 * Flink's EventTimeTrigger: a window fires when the watermark passes its
 * last instant, and again at once for each row that joins it later, while
 * allowed lateness keeps it alive.
 */
static TriggerResult
event_time_on_element(Operator *op, WindowEntry *e, const WmWindow *w, int64 ts)
{
	return wmk_window_fires(w->end - 1, op->wm.value) ? TRIGGER_FIRE : TRIGGER_CONTINUE;
}

static TriggerResult
event_time_on_event_time(Operator *op, WindowEntry *e, const WmWindow *w, int64 time)
{
	return time == w->end - 1 ? TRIGGER_FIRE : TRIGGER_CONTINUE;
}

const WindowTrigger trigger_event_time = {
	.name = "event time",
	.on_element = event_time_on_element,
	.on_event_time = event_time_on_event_time,
};

/* The multiple of "every" at or before t. */
static int64
grid_floor(int64 t, int64 every)
{
	int64		r = t % every;

	return t - (r < 0 ? r + every : r);
}

/*
 * The early timer after "from" (a multiple of the interval): the next
 * multiple, if it comes before the window's last instant, where the
 * window fires on time anyway (one firing there, as Flink's timer service
 * keeps one timer per time).
 */
static int64
next_early(const Operator *op, const WmWindow *w, int64 from)
{
	int64		next;

	if (pg_add_s64_overflow(from, op->trigger_every, &next) || next >= w->end - 1)
		return WMK_NONE;
	return next;
}

static void
set_next_early(Operator *op, WindowEntry *e, const WmWindow *w, int64 from)
{
	op_set_trigger_timer(op, e, next_early(op, w, from));
}

/* The early timer after every multiple the watermark passed. */
static int64
next_early_past_watermark(const Operator *op, const WmWindow *w)
{
	return next_early(op, w, grid_floor(op->wm.value, op->trigger_every));
}

/*
 * Flink's ContinuousEventTimeTrigger: the window fires on time and late as
 * with EventTimeTrigger, and before that each time the watermark passes a
 * multiple of the interval, counted from its first row's time.  Unlike
 * Flink, an early timer that finds no new row since the window last fired
 * passes without firing, and so does one that the watermark passes
 * together with the window's end: either would repeat the result of the
 * firing before or after it.
 */
static TriggerResult
early_on_element(Operator *op, WindowEntry *e, const WmWindow *w, int64 ts)
{
	if (wmk_window_fires(w->end - 1, op->wm.value))
		return TRIGGER_FIRE;
	/*
	 * A window without a timer gets one at its first row; one that fired
	 * without leaving a timer (early by rows, before alter_pipeline gave
	 * its pipeline an interval) at the first multiple past the watermark,
	 * as after an early firing: a window whose next multiple is past its
	 * end has none, and gets none there either.
	 */
	if (e->trigger_time == WMK_NONE && e->fire_count == 0)
		set_next_early(op, e, w, grid_floor(ts, op->trigger_every));
	else if (e->trigger_time == WMK_NONE && op->wm.value != WMK_NONE)
		op_set_trigger_timer(op, e, next_early_past_watermark(op, w));
	return TRIGGER_CONTINUE;
}

static TriggerResult
early_on_event_time(Operator *op, WindowEntry *e, const WmWindow *w, int64 time)
{
	if (time == w->end - 1)
		return TRIGGER_FIRE;
	/* a watermark past the end fires the window on time in this advance */
	if (wmk_window_fires(w->end - 1, op->wm.value))
	{
		op_set_trigger_timer(op, e, WMK_END);
		return TRIGGER_CONTINUE;
	}
	if (!e->changed)
	{
		/*
		 * Nothing to fire: the timer moves on to the first multiple past the
		 * watermark (those between would pass without firing too), and the
		 * window's stored state keeps the one that passed, which
		 * early_stored_timer moves on as the window comes back.  So a
		 * window without new rows is not written again at each multiple.
		 */
		op_move_trigger_timer(op, e, next_early_past_watermark(op, w));
		return TRIGGER_CONTINUE;
	}
	set_next_early(op, e, w, time);
	return TRIGGER_FIRE;
}

/*
 * A stored window's early timer: one set under another interval
 * (alter_pipeline) moves to the next multiple of this one, where a read
 * of the heap looks for early timers (next_timer); one that the watermark
 * passed before the window had new rows moves on as early_on_event_time
 * moved it.
 */
static int64
early_stored_timer(const Operator *op, bool changed, const WmWindow *w, int64 time)
{
	int64		floor;

	if (time == WMK_NONE || time == WMK_END)
		return time;
	floor = grid_floor(time, op->trigger_every);
	if (floor != time)
		time = next_early(op, w, floor);
	if (changed || time == WMK_NONE || time > op->wm.value)
		return time;
	return next_early_past_watermark(op, w);
}

/* A merged session takes the earliest early timer of those it covers. */
static void
early_on_merge(Operator *op, WindowEntry *into, const WindowEntry *from)
{
	into->changed |= from->changed;
	if (from->trigger_time != WMK_NONE &&
		(into->trigger_time == WMK_NONE || from->trigger_time < into->trigger_time))
		op_set_trigger_timer(op, into, from->trigger_time);
}

/*
 * Every early timer is a multiple of the interval (set_next_early), so the
 * first after t is the next multiple, whatever the window.
 */
static int64
early_next_timer(const Operator *op, int64 t)
{
	int64		next;

	if (pg_add_s64_overflow(grid_floor(t, op->trigger_every), op->trigger_every, &next))
		return WMK_END;
	return next;
}

const WindowTrigger trigger_early = {
	.name = "early",
	.on_element = early_on_element,
	.on_event_time = early_on_event_time,
	.on_merge = early_on_merge,
	.has_state = true,
	.next_timer = early_next_timer,
	.stored_timer = early_stored_timer,
};

/*
 * Early firing by rows: the window fires every "every" rows (Flink's
 * CountTrigger, which counts the rows since the window last fired), and
 * on time and late as with EventTimeTrigger.  A merged session counts the
 * rows of those it covers, as CountTrigger's onMerge sums their counts.
 */
static TriggerResult
rows_on_element(Operator *op, WindowEntry *e, const WmWindow *w, int64 ts)
{
	if (wmk_window_fires(w->end - 1, op->wm.value))
		return TRIGGER_FIRE;
	/* op_fire starts the count again */
	return ++e->trigger_rows < op->trigger_every ? TRIGGER_CONTINUE : TRIGGER_FIRE;
}

static void
rows_on_merge(Operator *op, WindowEntry *into, const WindowEntry *from)
{
	into->changed |= from->changed;
	into->trigger_rows += from->trigger_rows;
}

const WindowTrigger trigger_early_rows = {
	.name = "early by rows",
	.on_element = rows_on_element,
	.on_event_time = event_time_on_event_time,
	.on_merge = rows_on_merge,
	.has_state = true,
};

/*
 * Early firing by the clock of the steps (Flink's
 * ContinuousProcessingTimeTrigger, before the window's end): a window's
 * first row since it last fired sets a timer at the next multiple of the
 * interval of the clock, counted from 1970-01-01 as Flink counts it, and
 * the window fires when a step's clock passes it; then on time and late
 * as with EventTimeTrigger.  As with early firing by event time, a window
 * without rows since it last fired sets no timer, where Flink's would fire
 * again with the same result.
 */
static int64
clock_next_timer(const Operator *op, int64 t)
{
	const int64 unix_shift = (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;

	return grid_floor(t + unix_shift, op->trigger_every) - unix_shift + op->trigger_every;
}

static TriggerResult
clock_on_element(Operator *op, WindowEntry *e, const WmWindow *w, int64 ts)
{
	if (wmk_window_fires(w->end - 1, op->wm.value))
		return TRIGGER_FIRE;
	if (e->trigger_time == WMK_NONE)
		op_set_trigger_timer(op, e, clock_next_timer(op, op->clock));
	return TRIGGER_CONTINUE;
}

/* On time, the early timer still waiting has nothing left to add. */
static TriggerResult
clock_on_event_time(Operator *op, WindowEntry *e, const WmWindow *w, int64 time)
{
	op_set_trigger_timer(op, e, WMK_NONE);
	return event_time_on_event_time(op, e, w, time);
}

static TriggerResult
clock_on_processing_time(Operator *op, WindowEntry *e, const WmWindow *w, int64 time)
{
	return e->changed ? TRIGGER_FIRE : TRIGGER_CONTINUE;
}

/*
 * A stored window's timer of the clock: one set under another interval
 * (alter_pipeline) moves to the next multiple of this one, as with early
 * firing by event time.  A step whose clock passes no multiple finds no
 * timer due and reads windows by key (op_by_key), so one between two
 * multiples would run at one step in a process that holds the window and
 * at another in one that reads it from the heap.
 */
static int64
clock_stored_timer(const Operator *op, bool changed, const WmWindow *w, int64 time)
{
	if (time == WMK_NONE || time == WMK_END)
		return time;
	return clock_next_timer(op, time - 1);
}

const WindowTrigger trigger_early_clock = {
	.name = "early by the clock",
	.on_element = clock_on_element,
	.on_event_time = clock_on_event_time,
	.on_processing_time = clock_on_processing_time,
	.on_merge = early_on_merge,
	.has_state = true,
	.next_timer = clock_next_timer,
	.stored_timer = clock_stored_timer,
};

/*
 * Flink's DeltaTrigger, before the window's end: the window keeps the
 * input (a numeric column) of the row it last fired on, its first row's
 * to begin with, and fires early at a row whose input differs from it by
 * more than the threshold, which becomes the one kept; then on time and
 * late as with EventTimeTrigger (Flink's fires by the delta alone).  Rows
 * whose input is NULL or NaN count for the window, not for the trigger.
 */
static TriggerResult
delta_on_element(Operator *op, WindowEntry *e, const WmWindow *w, int64 ts)
{
	double		in = op->trigger_input;

	if (wmk_window_fires(w->end - 1, op->wm.value))
		return TRIGGER_FIRE;
	if (op->trigger_input_null || isnan(in))
		return TRIGGER_CONTINUE;
	if (e->trigger_primed && !(fabs(in - e->trigger_last) > op->trigger_threshold))
		return TRIGGER_CONTINUE;
	e->trigger_last = in;
	if (!e->trigger_primed)
	{
		e->trigger_primed = true;
		return TRIGGER_CONTINUE;
	}
	return TRIGGER_FIRE;
}

const WindowTrigger trigger_early_delta = {
	.name = "early by delta",
	.on_element = delta_on_element,
	.on_event_time = event_time_on_event_time,
	.has_state = true,
};

/*
 * The column named by the "len" bytes of "text", as SQL names one: the
 * input of "what" (a delta trigger, a delta evictor).
 */
char *
trigger_input_column(const char *text, size_t len, const char *what)
{
	List	   *names = stringToQualifiedNameList(pnstrdup(text, len));

	if (list_length(names) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s input must be one column of the queue", what)));
	return strVal(linitial(names));
}

/* The threshold of "what" (a delta trigger, a delta evictor) in "text". */
double
trigger_threshold(const char *text, const char *what)
{
	double		threshold = DatumGetFloat8(DirectFunctionCall1(float8in, CStringGetDatum(text)));

	if (isnan(threshold) || isinf(threshold) || threshold < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s threshold must be a finite number, 0 or more", what)));
	return threshold;
}

/*
 * "<column> moves more than <threshold>": the delta trigger's input and
 * threshold.  Session windows refuse it, as Flink's DeltaTrigger cannot
 * merge: which row would a merged session have last fired on?
 */
static const WindowTrigger *
parse_delta(const char *text, const WindowSpec *spec, TriggerDef *def)
{
	const char *sep = " moves more than ";
	const char *at = NULL;

	for (const char *p = text; *p != '\0' && at == NULL; p++)
		if (pg_strncasecmp(p, sep, strlen(sep)) == 0)
			at = p;
	if (at == NULL || at == text)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown trigger \"early when %s\"", text),
				 errhint("Write 'early when <column> moves more than <threshold>', for example 'early when price moves more than 0.5'.")));
	def->column = trigger_input_column(text, at - text, "a delta trigger's");
	def->threshold = trigger_threshold(at + strlen(sep), "a delta trigger's");
	if (spec->kind == WK_SESSION || spec->kind == WK_COUNT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot fire by delta", spec->kind == WK_SESSION ? "session windows" : "count windows"),
				 spec->kind == WK_SESSION ?
				 errdetail("A merged session has no one row it last fired on (Flink's DeltaTrigger cannot merge).") :
				 errdetail("A count window fires when its last row arrives.")));
	return &trigger_early_delta;
}

/*
 * Checks that "what" (a delta trigger's or evictor's input), column
 * "column" of type "type", is a number trigger_input_value can read.
 */
void
trigger_check_numeric(Oid type, const char *column, const char *what)
{
	if (type != INT2OID && type != INT4OID && type != INT8OID &&
		type != FLOAT4OID && type != FLOAT8OID && type != NUMERICOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s must be a number, and \"%s\" is %s", what, column, format_type_be(type)),
				 errhint("Use a column of type smallint, integer, bigint, real, double precision or numeric.")));
}

/*
 * Checks a trigger's input column in the source: for a pipeline's step
 * (pipeline not NULL), or for a definition being made.  Returns its type,
 * or InvalidOid if the trigger has none.
 */
Oid
trigger_check_input(const TriggerDef *def, Oid source, const char *pipeline)
{
	AttrNumber	att;
	Oid			type;

	if (def->column == NULL)
		return InvalidOid;
	att = get_attnum(source, def->column);
	type = att == InvalidAttrNumber ? InvalidOid : get_atttype(source, att);
	if (!OidIsValid(type))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 pipeline ?
				 errmsg("trigger input \"%s\" of pipeline \"%s\" no longer exists in table \"%s\"",
						def->column, pipeline, get_rel_name(source)) :
				 errmsg("column \"%s\" of the trigger does not exist in table \"%s\"",
						def->column, get_rel_name(source))));
	trigger_check_numeric(type, def->column, "a delta trigger's input");
	return type;
}

/* A delta trigger's input, of a type trigger_check_input accepted. */
double
trigger_input_value(Oid type, Datum value)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(value);
		case INT4OID:
			return DatumGetInt32(value);
		case INT8OID:
			return (double) DatumGetInt64(value);
		case FLOAT4OID:
			return DatumGetFloat4(value);
		case FLOAT8OID:
			return DatumGetFloat8(value);
		default:
			return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, value));
	}
}

/* The number of "<n> rows", or -1 if the text is not that. */
static int64
rows_of(const char *text)
{
	char	   *end;
	long long	n = strtoll(text, &end, 10);

	while (*end == ' ')
		end++;
	if (end == text || pg_strcasecmp(end, "rows") != 0)
		return -1;
	if (n <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a trigger's number of rows must be positive")));
	return n;
}

/*
 * The interval of "<interval>" or of "<interval> of processing time" in
 * *span; true for the latter, whose timers are on the clock.
 */
static bool
clock_interval(const char *text, char **span)
{
	const char *suffix = " of processing time";
	size_t		len = strlen(text);
	size_t		slen = strlen(suffix);

	if (len <= slen || pg_strcasecmp(text + len - slen, suffix) != 0)
	{
		*span = pstrdup(text);
		return false;
	}
	*span = pnstrdup(text, len - slen);
	return true;
}

/*
 * When windows fire: 'event time' (NULL too), 'early every <interval>'
 * (every: the interval in the pipeline's unit of time), 'early every
 * <interval> of processing time' (every: in microseconds of the clock),
 * 'early every <n> rows' (every: n) or 'early when <column> moves more
 * than <threshold>'.
 */
static const WindowTrigger *
parse_firing(const char *text, const WindowSpec *spec, bool is_ts, TriggerDef *def)
{
	const char *prefix = "early every ";
	int64	   *every = &def->every;
	Interval   *iv;
	char	   *span;
	bool		on_clock;

	if (text == NULL || pg_strcasecmp(text, "event time") == 0)
	{
		if (spec->kind == WK_GLOBAL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("global windows need a trigger that fires them"),
					 errdetail("A global window never ends: the watermark fires it at flush() alone."),
					 errhint("Give one, for example trigger => 'purging early every 100 rows'.")));
		return &trigger_event_time;
	}
	if (pg_strncasecmp(text, "early when ", strlen("early when ")) == 0)
		return parse_delta(text + strlen("early when "), spec, def);
	if (pg_strncasecmp(text, prefix, strlen(prefix)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown trigger \"%s\"", text),
				 errhint("Use 'event time' (the default), 'early every <interval>', for example 'early every 10 seconds', 'early every <interval> of processing time', 'early every <n> rows' or 'early when <column> moves more than <threshold>', each after 'purging ' to clear windows as they fire.")));
	if (spec->kind == WK_COUNT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("count windows cannot fire early"),
				 errdetail("A count window fires when its last row arrives.")));
	if ((*every = rows_of(text + strlen(prefix))) > 0)
		return &trigger_early_rows;
	on_clock = clock_interval(text + strlen(prefix), &span);
	iv = DatumGetIntervalP(DirectFunctionCall3(interval_in, CStringGetDatum(span),
											   ObjectIdGetDatum(InvalidOid),
											   Int32GetDatum(-1)));
	*every = spec_interval_span(iv, "the trigger's interval", false).usecs;
	/* the clock counts microseconds, whatever the time column's unit */
	is_ts |= on_clock;
	if (!is_ts)
		*every /= 1000;
	if (*every <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 is_ts ? errmsg("the trigger's interval must be positive") :
				 errmsg("the trigger's interval must be at least 1 millisecond"),
				 is_ts ? 0 : errdetail("The time column is bigint, in milliseconds.")));
	return on_clock ? &trigger_early_clock : &trigger_early;
}

/*
 * A pipeline's trigger from its definition (parse_firing), after 'purging '
 * if the windows are cleared at each firing.
 */
void
trigger_parse(const char *text, const WindowSpec *spec, bool is_ts, TriggerDef *def)
{
	const char *purge_prefix = "purging";

	memset(def, 0, sizeof(TriggerDef));
	def->purging = text != NULL && pg_strncasecmp(text, purge_prefix, strlen(purge_prefix)) == 0 &&
		(text[strlen(purge_prefix)] == ' ' || text[strlen(purge_prefix)] == '\0');
	if (!def->purging)
	{
		def->trigger = parse_firing(text, spec, is_ts, def);
		return;
	}
	text += strlen(purge_prefix);
	while (*text == ' ')
		text++;
	if (spec->kind == WK_SESSION || spec->kind == WK_COUNT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot purge", spec->kind == WK_SESSION ? "session windows" : "count windows"),
				 spec->kind == WK_SESSION ?
				 errdetail("A purged session's earlier firings would belong to a window that merging replaces.") :
				 errdetail("A count window fires once, with its rows, and is gone.")));
	def->trigger = parse_firing(*text == '\0' ? NULL : text, spec, is_ts, def);
}
