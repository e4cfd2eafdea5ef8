/*
 * evictor.c
 *		Flink's evictors: which of a window's rows its aggregates see.
 *
 * A pipeline with an evictor keeps every row of a window (Flink's
 * EvictingWindowOperator keeps its elements in a list state) besides the
 * aggregates' states.  When the window fires the evictor drops rows, before
 * the aggregates run over the rest (Flink's evictBefore) or after (its
 * evictAfter, with "after"), and the dropped rows are gone from the window
 * for good, as in Flink.  The rules below see a window's rows in arrival
 * order, as Flink's list state holds them; aggregates.c keeps the rows and
 * runs the aggregates again over those left.
 */
#include "compat.h"

#include <math.h>

#include "common/int.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "evictor.h"
#include "spec.h"
#include "trigger.h"

#define EVICTOR_HINT \
	errhint("Use 'count <n>', 'time <interval>' or 'delta <threshold> of <column>', each optionally followed by ' after'.")

/* Whether text ends with word, as a word of its own; if so, text without it. */
static bool
strip_suffix(char *text, const char *word)
{
	size_t		len = strlen(text);
	size_t		wlen = strlen(word);

	if (len <= wlen || text[len - wlen - 1] != ' ' || pg_strcasecmp(text + len - wlen, word) != 0)
		return false;
	text[len - wlen - 1] = '\0';
	return true;
}

static bool
has_prefix(const char *text, const char *prefix)
{
	return pg_strncasecmp(text, prefix, strlen(prefix)) == 0;
}

/* 'count <n>': Flink's CountEvictor.of(n). */
static void
parse_count(const char *text, EvictorDef *def)
{
	char	   *end;

	def->kind = EVICT_COUNT;
	def->count = strtoll(text, &end, 10);
	if (end == text || *end != '\0' || def->count <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a count evictor keeps a positive number of rows, not \"%s\"", text)));
}

/* 'time <interval>': Flink's TimeEvictor.of(interval). */
static void
parse_time(const char *text, bool is_ts, EvictorDef *def)
{
	Interval   *iv = DatumGetIntervalP(DirectFunctionCall3(interval_in, CStringGetDatum(text),
														   ObjectIdGetDatum(InvalidOid),
														   Int32GetDatum(-1)));

	def->kind = EVICT_TIME;
	def->span = spec_interval_span(iv, "the evictor's interval", false).usecs;
	if (!is_ts)
		def->span /= 1000;
	if (def->span <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 is_ts ? errmsg("the evictor's interval must be positive") :
				 errmsg("the evictor's interval must be at least 1 millisecond"),
				 is_ts ? 0 : errdetail("The time column is bigint, in milliseconds.")));
}

/* 'delta <threshold> of <column>': Flink's DeltaEvictor, |a - b| as its delta. */
static void
parse_delta(const char *text, EvictorDef *def)
{
	const char *of = NULL;

	for (const char *p = text; *p != '\0' && of == NULL; p++)
		if (has_prefix(p, " of "))
			of = p;
	if (of == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown evictor \"delta %s\"", text),
				 EVICTOR_HINT));
	def->kind = EVICT_DELTA;
	def->threshold = trigger_threshold(pnstrdup(text, of - text), "a delta evictor's");
	def->column = trigger_input_column(of + strlen(" of "), strlen(of + strlen(" of ")),
									   "a delta evictor's");
}

/*
 * A pipeline's evictor from its definition: NULL for none, else 'count
 * <n>', 'time <interval>' (in the time column's unit) or 'delta
 * <threshold> of <column>', each optionally followed by ' after'.
 */
void
evictor_parse(const char *text, bool is_ts, EvictorDef *def)
{
	char	   *rule;

	memset(def, 0, sizeof(EvictorDef));
	if (text == NULL)
		return;
	rule = pstrdup(text);
	def->after = strip_suffix(rule, "after");
	if (has_prefix(rule, "count "))
		parse_count(rule + strlen("count "), def);
	else if (has_prefix(rule, "time "))
		parse_time(rule + strlen("time "), is_ts, def);
	else if (has_prefix(rule, "delta "))
		parse_delta(rule + strlen("delta "), def);
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown evictor \"%s\"", text),
				 EVICTOR_HINT));
}

/*
 * Which rows the evictor keeps (keep[i]); returns how many.  As Flink's:
 * CountEvictor keeps the last "count"; TimeEvictor drops the rows at or
 * before the latest event time less the interval; DeltaEvictor drops the
 * rows whose input is "threshold" or more away from the last row's (here a
 * NULL or NaN input, the last row's too, drops nothing).
 */
int
evictor_keep(const EvictorDef *def, const EvictorRows *rows, bool *keep)
{
	int64		latest = PG_INT64_MIN;
	int64		cutoff = PG_INT64_MIN;
	int			kept = 0;

	for (int i = 0; i < rows->n; i++)
		latest = Max(latest, def->kind == EVICT_TIME ? rows->ts[i] : 0);
	if (def->kind == EVICT_TIME && pg_sub_s64_overflow(latest, def->span, &cutoff))
		cutoff = PG_INT64_MIN;
	for (int i = 0; i < rows->n; i++)
	{
		switch (def->kind)
		{
			case EVICT_COUNT:
				keep[i] = i >= rows->n - def->count;
				break;
			case EVICT_TIME:
				keep[i] = rows->ts[i] > cutoff;
				break;
			case EVICT_DELTA:
				keep[i] = rows->input_null[i] || rows->input_null[rows->n - 1] ||
					fabs(rows->input[i] - rows->input[rows->n - 1]) < def->threshold;
				break;
			case EVICT_NONE:
				keep[i] = true;
				break;
		}
		kept += keep[i];
	}
	return kept;
}
