/*
 * sql_session.c
 *		Session windows in SQL: the session() window function and the
 *		sessions() aggregate.
 *
 * A session depends on rows on both sides of a row, so session() reads its
 * whole partition once, on the first call, merges every row's window with
 * session_merge.c, and then answers each row by binary search.  It ignores
 * the frame: a session is a property of the partition.  Input ordered by
 * time (the usual OVER (PARTITION BY key ORDER BY ts)) skips the sort; any
 * other order gives the same sessions.
 *
 * sessions() keeps the rows' windows in a buffer and merges it whenever it
 * fills, so its memory follows the number of sessions, not of rows.  It
 * can run in parallel: partial states are concatenated and merged again.
 */
#include "compat.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"
#include "windowapi.h"

#include "session_merge.h"
#include "spec.h"

#define SESSIONS_INITIAL 1024

typedef struct SessionPartition
{
	bool		loaded;
	bool	   *isnull;			/* per row: no ts or no gap */
	int64	   *ts;				/* per row */
	WmWindow   *sessions;
	int64		nsessions;
	Datum	   *results;		/* per session, built on first use */
	int64		last;			/* session of the previous row */
} SessionPartition;

typedef struct SessionsState
{
	int64		n;
	int64		cap;
	WmWindow   *w;
} SessionsState;

/* A row's gap in the time column's unit, checked. */
static int64
gap_units(bool is_ts, Datum gap)
{
	int64		len;

	if (is_ts)
		return spec_gap_length(DatumGetIntervalP(gap));
	len = DatumGetInt64(gap);
	spec_check_gap(len);
	return len;
}

/* The window a row opens, checked against the range of its type. */
static WmWindow
row_window(bool is_ts, Datum ts, int64 gap)
{
	WmWindow	w;

	spec_check_event_time(is_ts, DatumGetInt64(ts));
	if (!sm_row_window(DatumGetInt64(ts), gap, &w))
		spec_report_out_of_range(is_ts);
	spec_check_window(is_ts, &w);
	return w;
}

static Datum
session_datum(TupleDesc desc, const WmWindow *w)
{
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = Int64GetDatum(w->start);
	values[1] = Int64GetDatum(w->end);
	values[2] = Int64GetDatum(w->end - 1);
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}

/* Reads every row of the partition and merges their windows. */
static void
load_partition(WindowObject win, SessionPartition *p, bool is_ts,
			   bool const_gap)
{
	MemoryContext cxt = GetMemoryChunkContext(p);
	int64		nrows = WinGetPartitionRowCount(win);
	bool		gapnull = false;
	Datum		gap = 0;
	int64		len = 0;
	int64		n = 0;

	p->isnull = MemoryContextAllocHuge(cxt, Max(nrows, 1) * sizeof(bool));
	p->ts = MemoryContextAllocHuge(cxt, Max(nrows, 1) * sizeof(int64));
	p->sessions = MemoryContextAllocHuge(cxt, Max(nrows, 1) * sizeof(WmWindow));
	if (const_gap)
	{
		gap = WinGetFuncArgCurrent(win, 1, &gapnull);
		if (!gapnull)
			len = gap_units(is_ts, gap);
	}
	for (int64 i = 0; i < nrows; i++)
	{
		bool		tsnull;
		bool		isout;
		Datum		ts = WinGetFuncArgInPartition(win, 0, i, WINDOW_SEEK_HEAD,
												  false, &tsnull, &isout);

		if (!const_gap && !tsnull)
		{
			gap = WinGetFuncArgInPartition(win, 1, i, WINDOW_SEEK_HEAD,
										   false, &gapnull, &isout);
			if (!gapnull)
				len = gap_units(is_ts, gap);
		}
		p->isnull[i] = tsnull || gapnull;
		if (p->isnull[i])
			continue;
		p->ts[i] = DatumGetInt64(ts);
		p->sessions[n++] = row_window(is_ts, ts, len);
	}
	p->nsessions = sm_merge(p->sessions, n, sm_is_sorted(p->sessions, n));
	p->results = MemoryContextAllocExtended(cxt, Max(p->nsessions, 1) * sizeof(Datum),
											MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	p->last = 0;
	p->loaded = true;
}

/*
 * The session of a row.  Rows usually come in time order, so try the
 * previous row's session and the next one before searching.
 */
static int64
session_of(SessionPartition *p, int64 ts)
{
	int64		i = p->last;

	if (!(p->sessions[i].start <= ts && ts < p->sessions[i].end))
	{
		i++;
		if (!(i < p->nsessions && p->sessions[i].start <= ts && ts < p->sessions[i].end))
			i = sm_find(p->sessions, p->nsessions, ts);
	}
	p->last = i;
	return i;
}

static TupleDesc
cached_result_desc(FunctionCallInfo fcinfo)
{
	TupleDesc	desc;
	MemoryContext old;

	if (fcinfo->flinfo->fn_extra)
		return fcinfo->flinfo->fn_extra;
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	desc = BlessTupleDesc(CreateTupleDescCopy(desc));
	MemoryContextSwitchTo(old);
	fcinfo->flinfo->fn_extra = desc;
	return desc;
}

static Datum
session_window(FunctionCallInfo fcinfo, bool is_ts)
{
	WindowObject win = PG_WINDOW_OBJECT();
	SessionPartition *p = WinGetPartitionLocalMemory(win, sizeof(*p));
	int64		pos = WinGetCurrentPosition(win);
	TupleDesc	desc = cached_result_desc(fcinfo);
	int64		i;

	if (!p->loaded)
		load_partition(win, p, is_ts, get_fn_expr_arg_stable(fcinfo->flinfo, 1));
	if (p->isnull[pos])
		PG_RETURN_NULL();
	i = session_of(p, p->ts[pos]);
	/* one composite per session, shared by its rows, for the partition */
	if (p->results[i] == (Datum) 0)
	{
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(p));

		p->results[i] = session_datum(desc, &p->sessions[i]);
		MemoryContextSwitchTo(old);
	}
	return p->results[i];
}

PG_FUNCTION_INFO_V1(windowing_session);
PG_FUNCTION_INFO_V1(windowing_session_bigint);

Datum
windowing_session(PG_FUNCTION_ARGS)
{
	return session_window(fcinfo, true);
}

Datum
windowing_session_bigint(PG_FUNCTION_ARGS)
{
	return session_window(fcinfo, false);
}

/* ---- sessions() aggregate ---- */

static SessionsState *
new_state(MemoryContext cxt, int64 cap)
{
	SessionsState *s = MemoryContextAlloc(cxt, sizeof(*s));

	s->n = 0;
	s->cap = Max(cap, SESSIONS_INITIAL);
	s->w = MemoryContextAllocHuge(cxt, s->cap * sizeof(WmWindow));
	return s;
}

/* Makes room for one more window: merge first, grow if that freed too little. */
static void
make_room(SessionsState *s)
{
	if (s->n < s->cap)
		return;
	s->n = sm_merge(s->w, s->n, false);
	if (s->n > s->cap / 2)
	{
		s->cap *= 2;
		s->w = repalloc_huge(s->w, s->cap * sizeof(WmWindow));
	}
}

static MemoryContext
agg_context(FunctionCallInfo fcinfo)
{
	MemoryContext cxt;

	if (!AggCheckCallContext(fcinfo, &cxt))
		elog(ERROR, "sessions transition function called in non-aggregate context");
	return cxt;
}

static Datum
sessions_add(FunctionCallInfo fcinfo, bool is_ts)
{
	MemoryContext cxt = agg_context(fcinfo);
	SessionsState *s = PG_ARGISNULL(0) ? new_state(cxt, 0) :
		(SessionsState *) PG_GETARG_POINTER(0);

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_POINTER(s);
	make_room(s);
	s->w[s->n++] = row_window(is_ts, PG_GETARG_DATUM(1), gap_units(is_ts, PG_GETARG_DATUM(2)));
	PG_RETURN_POINTER(s);
}

PG_FUNCTION_INFO_V1(windowing_sessions_add);
PG_FUNCTION_INFO_V1(windowing_sessions_add_bigint);
PG_FUNCTION_INFO_V1(windowing_sessions_final);
PG_FUNCTION_INFO_V1(windowing_sessions_combine);
PG_FUNCTION_INFO_V1(windowing_sessions_serialize);
PG_FUNCTION_INFO_V1(windowing_sessions_deserialize);

Datum
windowing_sessions_add(PG_FUNCTION_ARGS)
{
	return sessions_add(fcinfo, true);
}

Datum
windowing_sessions_add_bigint(PG_FUNCTION_ARGS)
{
	return sessions_add(fcinfo, false);
}

/*
 * Merging in place leaves a state that means the same sessions, so the
 * final function may run more than once (window aggregates do that).
 */
Datum
windowing_sessions_final(PG_FUNCTION_ARGS)
{
	SessionsState *s;
	Oid			elemtype;
	TupleDesc	desc;
	Datum	   *items;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	s = (SessionsState *) PG_GETARG_POINTER(0);
	s->n = sm_merge(s->w, s->n, false);
	elemtype = get_element_type(get_fn_expr_rettype(fcinfo->flinfo));
	desc = lookup_rowtype_tupdesc(elemtype, -1);
	items = palloc(Max(s->n, 1) * sizeof(Datum));
	for (int64 i = 0; i < s->n; i++)
		items[i] = session_datum(desc, &s->w[i]);
	ReleaseTupleDesc(desc);
	PG_RETURN_ARRAYTYPE_P(construct_array(items, (int) s->n, elemtype, -1,
										  false, TYPALIGN_DOUBLE));
}

Datum
windowing_sessions_combine(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = agg_context(fcinfo);
	SessionsState *a = PG_ARGISNULL(0) ? NULL : (SessionsState *) PG_GETARG_POINTER(0);
	SessionsState *b = PG_ARGISNULL(1) ? NULL : (SessionsState *) PG_GETARG_POINTER(1);

	if (b == NULL)
		PG_RETURN_POINTER(a);
	if (a == NULL)
		a = new_state(cxt, b->n);
	for (int64 i = 0; i < b->n; i++)
	{
		make_room(a);
		a->w[a->n++] = b->w[i];
	}
	PG_RETURN_POINTER(a);
}

Datum
windowing_sessions_serialize(PG_FUNCTION_ARGS)
{
	SessionsState *s = (SessionsState *) PG_GETARG_POINTER(0);
	StringInfoData buf;

	s->n = sm_merge(s->w, s->n, false);
	pq_begintypsend(&buf);
	pq_sendint64(&buf, s->n);
	for (int64 i = 0; i < s->n; i++)
	{
		pq_sendint64(&buf, s->w[i].start);
		pq_sendint64(&buf, s->w[i].end);
	}
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

Datum
windowing_sessions_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *data = PG_GETARG_BYTEA_PP(0);
	StringInfoData buf;
	SessionsState *s;
	int64		n;

	buf.data = VARDATA_ANY(data);
	buf.len = VARSIZE_ANY_EXHDR(data);
	buf.maxlen = buf.len;
	buf.cursor = 0;
	n = pq_getmsgint64(&buf);
	s = new_state(agg_context(fcinfo), n);
	for (int64 i = 0; i < n; i++)
	{
		s->w[i].start = pq_getmsgint64(&buf);
		s->w[i].end = pq_getmsgint64(&buf);
	}
	s->n = n;
	pq_getmsgend(&buf);
	PG_RETURN_POINTER(s);
}
