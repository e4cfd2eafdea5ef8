/*
 * sql_assign.c
 *		SQL faces of tumbling, sliding and cumulating windows.
 *
 * The window definition is parsed and checked once and kept in fn_extra,
 * keyed by the raw bytes of the length arguments and the zone name, so a
 * GROUP BY over millions of rows pays for the rules of window_math.c and
 * nothing else.  The set-returning forms never use SRF_FIRSTCALL_INIT,
 * which would create a memory context for every row.
 *
 * A timestamp (without time zone) is microseconds like a timestamptz, and
 * its clock is its own: the same rules apply to it as to a timestamptz in
 * UTC, so months are laid on its calendar with no zone argument and no
 * session TimeZone involved.
 */
#include "compat.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "spec.h"
#include "watermark.h"

#define KEY_MAX (3 * sizeof(Interval) + 1 + TZ_STRLEN_MAX + 1)

/* The type of the time argument, and so of the lengths. */
typedef enum TimeArg
{
	TA_BIGINT,					/* bigint lengths, no zone */
	TA_TIMESTAMPTZ,				/* interval lengths, optional zone argument */
	TA_TIMESTAMP				/* interval lengths, its own calendar */
} TimeArg;

typedef struct AssignCache
{
	MemoryContext cxt;			/* holds everything below; reset on rebuild */
	int			keylen;
	char		key[KEY_MAX];
	bool		stable;			/* all definition arguments are constants */
	WindowSpec	spec;
	TupleDesc	tupdesc;		/* result row type, blessed; NULL for scalars */
	WmWindow   *windows;		/* spec.max_windows entries */
	int			nwindows;		/* hop_start: windows of the current row */
	int			next;			/* next of them to return */
	bool		in_set;			/* a set is being returned */
	ExprContext *registered;	/* where end_starts is registered, if anywhere */
} AssignCache;

static const char *const length_names[][3] = {
	[WK_TUMBLE] = {"size", "offset"},
	[WK_HOP] = {"size", "slide", "offset"},
	[WK_CUMULATE] = {"step", "max_size", "offset"},
};

static int
length_count(WindowKind kind)
{
	return kind == WK_TUMBLE ? 2 : 3;
}

/* The cache key: raw bytes of the lengths, then the zone name if any. */
static int
make_key(FunctionCallInfo fcinfo, int nlengths, TimeArg t, char *key,
		 text **tz)
{
	int			len = 0;

	*tz = NULL;
	for (int i = 1; i <= nlengths; i++)
	{
		if (t != TA_BIGINT)
		{
			memcpy(key + len, PG_GETARG_INTERVAL_P(i), sizeof(Interval));
			len += sizeof(Interval);
		}
		else
		{
			int64		v = PG_GETARG_INT64(i);

			memcpy(key + len, &v, sizeof(v));
			len += sizeof(v);
		}
	}
	if (t == TA_TIMESTAMPTZ && !PG_ARGISNULL(nlengths + 1))
	{
		int			n;

		*tz = PG_GETARG_TEXT_PP(nlengths + 1);
		/* a longer name cannot be a zone; zone_from_name says so */
		n = Min(VARSIZE_ANY_EXHDR(*tz), TZ_STRLEN_MAX + 1);
		key[len++] = 'z';
		memcpy(key + len, VARDATA_ANY(*tz), n);
		len += n;
	}
	return len;
}

static void
build_spec(FunctionCallInfo fcinfo, WindowKind kind, TimeArg t,
		   const char *tz, WindowSpec *s)
{
	bool		is_ts = t != TA_BIGINT;
	bool		months = false;
	Span		len[3];

	for (int i = 0; i < length_count(kind); i++)
	{
		len[i] = is_ts ?
			spec_interval_span(PG_GETARG_INTERVAL_P(i + 1), length_names[kind][i],
						  tz != NULL || t == TA_TIMESTAMP) :
			(Span) {PG_GETARG_INT64(i + 1), 0};
		months |= len[i].months != 0;
	}
	/* a timestamp's calendar is UTC's; fixed lengths need no calendar */
	if (t == TA_TIMESTAMP && months)
		tz = "UTC";
	if (kind == WK_TUMBLE)
		spec_tumble(s, is_ts, len[0], len[1], tz);
	else if (kind == WK_HOP)
		spec_hop(s, is_ts, len[0], len[1], len[2], tz);
	else
		spec_cumulate(s, is_ts, len[0], len[1], len[2], tz);
}

static void
rebuild_cache(FunctionCallInfo fcinfo, AssignCache *c, WindowKind kind,
			  TimeArg t, text *tz, bool composite)
{
	MemoryContext old;
	TupleDesc	desc;

	MemoryContextReset(c->cxt);
	c->keylen = 0;				/* invalid until the spec is built */
	old = MemoryContextSwitchTo(c->cxt);
	build_spec(fcinfo, kind, t, tz ? text_to_cstring(tz) : NULL, &c->spec);
	c->windows = palloc(sizeof(WmWindow) * c->spec.max_windows);
	c->tupdesc = NULL;
	if (composite)
	{
		if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "return type must be a row type");
		c->tupdesc = BlessTupleDesc(CreateTupleDescCopy(desc));
	}
	MemoryContextSwitchTo(old);
}

/* The cached definition for this call's arguments; NULL if one is NULL. */
static AssignCache *
assign_cache(FunctionCallInfo fcinfo, WindowKind kind, TimeArg t,
			 bool composite)
{
	AssignCache *c = fcinfo->flinfo->fn_extra;
	int			nlengths = length_count(kind);
	char		key[KEY_MAX];
	int			keylen;
	text	   *tz;

	if (PG_ARGISNULL(0))
		return NULL;
	/* constant definitions (the usual case) skip even the key comparison */
	if (c != NULL && c->stable)
		return c;
	for (int i = 1; i <= nlengths; i++)
		if (PG_ARGISNULL(i))
			return NULL;
	keylen = make_key(fcinfo, nlengths, t, key, &tz);
	if (c == NULL)
	{
		c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(*c));
		c->cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt,
									   "windowing assign cache",
									   ALLOCSET_SMALL_SIZES);
		fcinfo->flinfo->fn_extra = c;
	}
	if (c->keylen != keylen || memcmp(c->key, key, keylen) != 0)
	{
		rebuild_cache(fcinfo, c, kind, t, tz, composite);
		memcpy(c->key, key, keylen);
		c->keylen = keylen;
		c->stable = true;
		for (int i = 1; i < PG_NARGS(); i++)
			c->stable &= get_fn_expr_arg_stable(fcinfo->flinfo, i);
	}
	return c;
}

static Datum
window_datum(const AssignCache *c, const WmWindow *w)
{
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = Int64GetDatum(w->start);
	values[1] = Int64GetDatum(w->end);
	values[2] = Int64GetDatum(w->end - 1);
	return HeapTupleGetDatum(heap_form_tuple(c->tupdesc, values, nulls));
}

/* tumble: the one window of ts, as a row. */
static Datum
tumble_row(FunctionCallInfo fcinfo, TimeArg t)
{
	AssignCache *c = assign_cache(fcinfo, WK_TUMBLE, t, true);

	if (c == NULL)
		PG_RETURN_NULL();
	spec_assign(&c->spec, PG_GETARG_INT64(0), c->windows);
	return window_datum(c, &c->windows[0]);
}

/* tumble_start: the start of that window alone, for a fast GROUP BY. */
static Datum
tumble_start(FunctionCallInfo fcinfo, TimeArg t)
{
	AssignCache *c = assign_cache(fcinfo, WK_TUMBLE, t, false);
	bool		is_ts = t != TA_BIGINT;
	int64		ts;
	WmWindow	w;

	if (c == NULL)
		PG_RETURN_NULL();
	ts = PG_GETARG_INT64(0);
	/* fixed-length windows in range: the rule alone, no dispatch */
	if (!c->spec.calendar && !(is_ts && TIMESTAMP_NOT_FINITE(ts)) &&
		wm_tumble(ts, c->spec.size, c->spec.phase, &w) &&
		(!is_ts || (IS_VALID_TIMESTAMP(w.start) && IS_VALID_TIMESTAMP(w.end))))
		PG_RETURN_INT64(w.start);
	/* calendar windows, and the errors */
	spec_assign(&c->spec, ts, c->windows);
	PG_RETURN_INT64(c->windows[0].start);
}

/*
 * hop and cumulate in FROM: the executor keeps every set in a tuplestore
 * anyway, so write the windows straight into one (materialize mode) instead
 * of forming a composite Datum per window for the executor to copy.
 */
static Datum
window_set(FunctionCallInfo fcinfo, WindowKind kind, TimeArg t)
{
	ReturnSetInfo *rsi = (ReturnSetInfo *) fcinfo->resultinfo;
	AssignCache *c;
	MemoryContext old;
	int			n;

	if (rsi == NULL || !IsA(rsi, ReturnSetInfo) ||
		!(rsi->allowedModes & SFRM_Materialize) || rsi->expectedDesc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	rsi->returnMode = SFRM_Materialize;
	old = MemoryContextSwitchTo(rsi->econtext->ecxt_per_query_memory);
	rsi->setResult = tuplestore_begin_heap(rsi->allowedModes & SFRM_Materialize_Random,
										   false, work_mem);
	MemoryContextSwitchTo(old);
	c = assign_cache(fcinfo, kind, t, false);
	if (c == NULL)
		PG_RETURN_NULL();
	n = spec_assign(&c->spec, PG_GETARG_INT64(0), c->windows);
	for (int i = 0; i < n; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = Int64GetDatum(c->windows[i].start);
		values[1] = Int64GetDatum(c->windows[i].end);
		values[2] = Int64GetDatum(c->windows[i].end - 1);
		tuplestore_putvalues(rsi->setResult, rsi->expectedDesc, values, nulls);
	}
	PG_RETURN_NULL();
}

static void
end_starts(Datum arg)
{
	AssignCache *c = (AssignCache *) DatumGetPointer(arg);

	c->in_set = false;
	c->registered = NULL;
}

/*
 * hop_start in the select list streams one scalar per call (ValuePerCall),
 * with no tuplestore at all: the fast form for GROUP BY, as tumble_start is
 * for tumbling windows.  A callback forgets a half-returned set if the
 * executor abandons it.
 */
static Datum
window_starts(FunctionCallInfo fcinfo, TimeArg t)
{
	ReturnSetInfo *rsi = (ReturnSetInfo *) fcinfo->resultinfo;
	AssignCache *c = fcinfo->flinfo->fn_extra;

	if (rsi == NULL || !IsA(rsi, ReturnSetInfo) ||
		!(rsi->allowedModes & SFRM_ValuePerCall))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	if (c == NULL || !c->in_set)
	{
		c = assign_cache(fcinfo, WK_HOP, t, false);
		if (c == NULL)
		{
			rsi->isDone = ExprEndResult;
			PG_RETURN_NULL();
		}
		c->nwindows = spec_assign(&c->spec, PG_GETARG_INT64(0), c->windows);
		c->next = 0;
		c->in_set = true;
		if (c->registered != rsi->econtext)
		{
			RegisterExprContextCallback(rsi->econtext, end_starts,
										PointerGetDatum(c));
			c->registered = rsi->econtext;
		}
	}
	if (c->next < c->nwindows)
	{
		rsi->isDone = ExprMultipleResult;
		PG_RETURN_INT64(c->windows[c->next++].start);
	}
	c->in_set = false;
	rsi->isDone = ExprEndResult;
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(windowing_tumble);
PG_FUNCTION_INFO_V1(windowing_tumble_bigint);
PG_FUNCTION_INFO_V1(windowing_tumble_timestamp);
PG_FUNCTION_INFO_V1(windowing_tumble_start);
PG_FUNCTION_INFO_V1(windowing_tumble_start_bigint);
PG_FUNCTION_INFO_V1(windowing_tumble_start_timestamp);
PG_FUNCTION_INFO_V1(windowing_hop);
PG_FUNCTION_INFO_V1(windowing_hop_bigint);
PG_FUNCTION_INFO_V1(windowing_hop_timestamp);
PG_FUNCTION_INFO_V1(windowing_hop_start);
PG_FUNCTION_INFO_V1(windowing_hop_start_bigint);
PG_FUNCTION_INFO_V1(windowing_hop_start_timestamp);
PG_FUNCTION_INFO_V1(windowing_cumulate);
PG_FUNCTION_INFO_V1(windowing_cumulate_bigint);
PG_FUNCTION_INFO_V1(windowing_cumulate_timestamp);

Datum
windowing_tumble(PG_FUNCTION_ARGS)
{
	return tumble_row(fcinfo, TA_TIMESTAMPTZ);
}

Datum
windowing_tumble_bigint(PG_FUNCTION_ARGS)
{
	return tumble_row(fcinfo, TA_BIGINT);
}

Datum
windowing_tumble_timestamp(PG_FUNCTION_ARGS)
{
	return tumble_row(fcinfo, TA_TIMESTAMP);
}

Datum
windowing_tumble_start(PG_FUNCTION_ARGS)
{
	return tumble_start(fcinfo, TA_TIMESTAMPTZ);
}

Datum
windowing_tumble_start_bigint(PG_FUNCTION_ARGS)
{
	return tumble_start(fcinfo, TA_BIGINT);
}

Datum
windowing_tumble_start_timestamp(PG_FUNCTION_ARGS)
{
	return tumble_start(fcinfo, TA_TIMESTAMP);
}

Datum
windowing_hop(PG_FUNCTION_ARGS)
{
	return window_set(fcinfo, WK_HOP, TA_TIMESTAMPTZ);
}

Datum
windowing_hop_bigint(PG_FUNCTION_ARGS)
{
	return window_set(fcinfo, WK_HOP, TA_BIGINT);
}

Datum
windowing_hop_timestamp(PG_FUNCTION_ARGS)
{
	return window_set(fcinfo, WK_HOP, TA_TIMESTAMP);
}

Datum
windowing_hop_start(PG_FUNCTION_ARGS)
{
	return window_starts(fcinfo, TA_TIMESTAMPTZ);
}

Datum
windowing_hop_start_bigint(PG_FUNCTION_ARGS)
{
	return window_starts(fcinfo, TA_BIGINT);
}

Datum
windowing_hop_start_timestamp(PG_FUNCTION_ARGS)
{
	return window_starts(fcinfo, TA_TIMESTAMP);
}

Datum
windowing_cumulate(PG_FUNCTION_ARGS)
{
	return window_set(fcinfo, WK_CUMULATE, TA_TIMESTAMPTZ);
}

Datum
windowing_cumulate_bigint(PG_FUNCTION_ARGS)
{
	return window_set(fcinfo, WK_CUMULATE, TA_BIGINT);
}

Datum
windowing_cumulate_timestamp(PG_FUNCTION_ARGS)
{
	return window_set(fcinfo, WK_CUMULATE, TA_TIMESTAMP);
}

/* _windows(assigner, ts): the assigner parsed once per distinct value. */
typedef struct AssignerCache
{
	MemoryContext cxt;			/* holds everything below; reset on rebuild */
	bytea	   *assigner;		/* the value parsed, its raw bytes */
	WindowSpec	spec;
	WmWindow   *windows;		/* spec.max_windows entries */
} AssignerCache;

static AssignerCache *
assigner_cache(FunctionCallInfo fcinfo, Oid time_type)
{
	AssignerCache *c = fcinfo->flinfo->fn_extra;
	struct varlena *a = PG_GETARG_VARLENA_PP(0);
	MemoryContext old;

	if (c == NULL)
	{
		c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(*c));
		c->cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "windowing assigner cache",
									   ALLOCSET_SMALL_SIZES);
		fcinfo->flinfo->fn_extra = c;
	}
	if (c->assigner != NULL && VARSIZE_ANY(c->assigner) == VARSIZE_ANY(a) &&
		memcmp(c->assigner, a, VARSIZE_ANY(a)) == 0)
		return c;
	MemoryContextReset(c->cxt);
	c->assigner = NULL;			/* invalid until the spec is built */
	old = MemoryContextSwitchTo(c->cxt);
	spec_from_assigner(&c->spec, PG_GETARG_HEAPTUPLEHEADER(0), time_type);
	c->windows = palloc(sizeof(WmWindow) * c->spec.max_windows);
	c->assigner = palloc(VARSIZE_ANY(a));
	memcpy(c->assigner, a, VARSIZE_ANY(a));
	MemoryContextSwitchTo(old);
	return c;
}

PG_FUNCTION_INFO_V1(windowing_assigner_windows);

/*
 * _windows(assigner, ts, watermark, lateness): the start and end of each
 * window of ts, by the rules a pipeline's step follows, that is not past
 * its cleanup time (window_end - 1 + lateness, in the time column's unit)
 * at the watermark; all of them if the watermark is NULL.  Only the kinds
 * that give a row its windows by its time alone (tumbling, hopping,
 * cumulating) have any, and sessions of a fixed gap, whose window for a
 * row is [ts, ts + gap) until it merges; a NULL or out-of-range time has
 * none.
 */
Datum
windowing_assigner_windows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsi = (ReturnSetInfo *) fcinfo->resultinfo;
	AssignerCache *c;
	int			n;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	c = assigner_cache(fcinfo, get_fn_expr_argtype(fcinfo->flinfo, 1));
	if (c->spec.kind != WK_TUMBLE && c->spec.kind != WK_HOP && c->spec.kind != WK_CUMULATE &&
		!(c->spec.kind == WK_SESSION && c->spec.gap > 0))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("only tumbling, hopping, cumulating and fixed-gap session windows are given by time alone")));
	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	n = spec_windows(&c->spec, PG_GETARG_INT64(1), c->windows);
	for (int i = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		if (!PG_ARGISNULL(2) &&
			wmk_add(c->windows[i].end - 1, PG_GETARG_INT64(3)) <= PG_GETARG_INT64(2))
			continue;
		values[0] = Int64GetDatum(c->windows[i].start);
		values[1] = Int64GetDatum(c->windows[i].end);
		tuplestore_putvalues(rsi->setResult, rsi->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(windowing_assigner_in_range);

/*
 * _in_range(assigner, ts): whether the assigner can give ts its windows by
 * the rules of a pipeline's step; not for an infinite time or one whose
 * windows would leave the range of its type.  A time between hopping
 * windows (size < slide) has none, and is in range.
 */
Datum
windowing_assigner_in_range(PG_FUNCTION_ARGS)
{
	AssignerCache *c = assigner_cache(fcinfo, get_fn_expr_argtype(fcinfo->flinfo, 1));

	PG_RETURN_BOOL(spec_windows(&c->spec, PG_GETARG_INT64(1), c->windows) >= 0);
}
