/*
 * max_by.c
 *		Flink's maxBy and minBy: the value of the row with the greatest (or
 *		least) key, as the aggregates max_by(value, by) and min_by(value, by).
 *
 * The state keeps one value and its key, copied into the aggregate
 * context, so a window costs two datums however many rows it has.  Keys
 * compare by their type's default btree ordering under the call's
 * collation, as max() and ORDER BY compare them.  Ties keep the first row,
 * as Flink's maxBy(field, first = true) does: a later row replaces the
 * winner only if its key is strictly greater, and combining two states
 * keeps the first one's on a tie.  Rows without a key count for nothing.
 *
 * The state is "internal" (a polymorphic value has no SQL type of its own
 * to store it in), so it has serialize and deserialize functions: parallel
 * aggregation needs them, and pipelines store window states between steps
 * only through them.  A serialized state names its types, so that it can
 * be read back in another session; that rules out anonymous record types,
 * which exist only in the session that made them, and they are refused.
 */
#include "compat.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

typedef struct ByState
{
	Oid			value_type;
	int16		value_len;
	bool		value_byval;
	Oid			by_type;
	int16		by_len;
	bool		by_byval;
	FmgrInfo   *cmp;			/* the key type's btree comparison */
	bool		found;			/* a row with a key has been seen */
	bool		value_null;		/* the winner's value is NULL */
	Datum		value;
	Datum		by;
} ByState;

/* What a serialized state starts with; then the value and key. */
typedef struct ByHeader
{
	Oid			value_type;
	Oid			by_type;
	bool		found;
} ByHeader;

/* Types whose values could not be read back in another session. */
static void
check_storable(Oid type, const char *aggname)
{
	if (type == RECORDOID || type == RECORDARRAYOID)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot take an argument of an anonymous record type", aggname),
				 errdetail("Its state may be read back in another session, which does not know the type."),
				 errhint("Cast it to a named composite type, or pass a table's whole row.")));
}

/* The types' storage and the key's ordering, or an error without one. */
static void
set_types(ByState *st, Oid value_type, Oid by_type)
{
	TypeCacheEntry *tc = lookup_type_cache(by_type, TYPECACHE_CMP_PROC_FINFO);

	if (!OidIsValid(tc->cmp_proc_finfo.fn_oid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify a comparison function for type %s",
						format_type_be(by_type))));
	/* the type cache lives as long as the backend: the pointer stays valid */
	st->cmp = &tc->cmp_proc_finfo;
	st->value_type = value_type;
	st->by_type = by_type;
	get_typlenbyval(value_type, &st->value_len, &st->value_byval);
	get_typlenbyval(by_type, &st->by_len, &st->by_byval);
}

/* A state without a winner, made on the first row a group sees. */
static ByState *
new_state(FunctionCallInfo fcinfo, MemoryContext aggcxt, const char *aggname)
{
	Oid			value_type = get_fn_expr_argtype(fcinfo->flinfo, 1);
	Oid			by_type = get_fn_expr_argtype(fcinfo->flinfo, 2);
	ByState    *st;

	if (!OidIsValid(value_type) || !OidIsValid(by_type))
		elog(ERROR, "could not determine input data types of %s", aggname);
	check_storable(value_type, aggname);
	check_storable(by_type, aggname);
	st = MemoryContextAllocZero(aggcxt, sizeof(ByState));
	set_types(st, value_type, by_type);
	return st;
}

/*
 * A datum of the state, made in cxt.  A varlena is detoasted first: the
 * row it came from may be gone (or its TOAST table vacuumed) by the time a
 * stored state is read back.
 */
static Datum
copy_datum(MemoryContext cxt, Datum d, int16 len, bool byval)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	struct varlena *v = len == -1 ? (struct varlena *) DatumGetPointer(d) : NULL;

	if (v != NULL && (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v)))
		d = PointerGetDatum(detoast_attr(v));
	else
		d = datumCopy(d, byval, len);
	MemoryContextSwitchTo(old);
	return d;
}

/* The new winner replaces the old, whose copies are freed. */
static void
set_winner(ByState *st, MemoryContext cxt, Datum value, bool value_null, Datum by)
{
	if (st->found && !st->by_byval)
		pfree(DatumGetPointer(st->by));
	if (st->found && !st->value_null && !st->value_byval)
		pfree(DatumGetPointer(st->value));
	st->by = copy_datum(cxt, by, st->by_len, st->by_byval);
	st->value_null = value_null;
	st->value = value_null ? (Datum) 0 :
		copy_datum(cxt, value, st->value_len, st->value_byval);
	st->found = true;
}

/*
 * Does the key "by" beat the state's winner?  sign is 1 for max_by, -1
 * for min_by; only a strictly better key wins, so ties keep the first.
 */
static bool
beats(ByState *st, Datum by, Oid collation, int sign)
{
	int32		cmp;

	if (!st->found)
		return true;
	cmp = DatumGetInt32(FunctionCall2Coll(st->cmp, collation, by, st->by));
	return sign > 0 ? cmp > 0 : cmp < 0;
}

static MemoryContext
agg_context(FunctionCallInfo fcinfo, const char *fn)
{
	MemoryContext aggcxt;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "%s called in non-aggregate context", fn);
	return aggcxt;
}

/* The transition: the row wins if its key is not NULL and beats the winner. */
static Datum
by_trans(FunctionCallInfo fcinfo, int sign, const char *aggname)
{
	MemoryContext aggcxt = agg_context(fcinfo, aggname);
	ByState    *st;

	st = PG_ARGISNULL(0) ? new_state(fcinfo, aggcxt, aggname) :
		(ByState *) PG_GETARG_POINTER(0);
	if (!PG_ARGISNULL(2) && beats(st, PG_GETARG_DATUM(2), PG_GET_COLLATION(), sign))
		set_winner(st, aggcxt, PG_GETARG_DATUM(1), PG_ARGISNULL(1), PG_GETARG_DATUM(2));
	PG_RETURN_POINTER(st);
}

/*
 * Merges the second state into the first: its winner takes over only if
 * strictly better, so on a tie the first state's stays.  Without a first
 * state, the second is copied into the aggregate context: it may be a
 * deserialized one, made in a shorter-lived context.
 */
static Datum
by_combine(FunctionCallInfo fcinfo, int sign, const char *aggname)
{
	MemoryContext aggcxt = agg_context(fcinfo, aggname);
	ByState    *into = PG_ARGISNULL(0) ? NULL : (ByState *) PG_GETARG_POINTER(0);
	ByState    *from = PG_ARGISNULL(1) ? NULL : (ByState *) PG_GETARG_POINTER(1);

	if (from == NULL)
	{
		if (into == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(into);
	}
	if (into == NULL)
	{
		into = MemoryContextAlloc(aggcxt, sizeof(ByState));
		*into = *from;
		into->found = false;
		into->value = into->by = (Datum) 0;
	}
	if (from->found && beats(into, from->by, PG_GET_COLLATION(), sign))
		set_winner(into, aggcxt, from->value, from->value_null, from->by);
	PG_RETURN_POINTER(into);
}

PG_FUNCTION_INFO_V1(windowing_max_by_trans);
PG_FUNCTION_INFO_V1(windowing_min_by_trans);
PG_FUNCTION_INFO_V1(windowing_max_by_combine);
PG_FUNCTION_INFO_V1(windowing_min_by_combine);
PG_FUNCTION_INFO_V1(windowing_max_min_by_final);
PG_FUNCTION_INFO_V1(windowing_max_min_by_serialize);
PG_FUNCTION_INFO_V1(windowing_max_min_by_deserialize);

Datum
windowing_max_by_trans(PG_FUNCTION_ARGS)
{
	return by_trans(fcinfo, 1, "max_by");
}

Datum
windowing_min_by_trans(PG_FUNCTION_ARGS)
{
	return by_trans(fcinfo, -1, "min_by");
}

Datum
windowing_max_by_combine(PG_FUNCTION_ARGS)
{
	return by_combine(fcinfo, 1, "max_by");
}

Datum
windowing_min_by_combine(PG_FUNCTION_ARGS)
{
	return by_combine(fcinfo, -1, "min_by");
}

/*
 * The winner's value, copied: the state stays as it is, since a pipeline's
 * window may fire again after more rows, and the result may outlive it.
 */
Datum
windowing_max_min_by_final(PG_FUNCTION_ARGS)
{
	ByState    *st = PG_ARGISNULL(0) ? NULL : (ByState *) PG_GETARG_POINTER(0);

	if (st == NULL || !st->found || st->value_null)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(datumCopy(st->value, st->value_byval, st->value_len));
}

/* The state as bytea: a ByHeader, then the value and key by datumSerialize. */
Datum
windowing_max_min_by_serialize(PG_FUNCTION_ARGS)
{
	ByState    *st = (ByState *) PG_GETARG_POINTER(0);
	bool		value_null = !st->found || st->value_null;
	ByHeader	h;
	Size		size;
	bytea	   *out;
	char	   *p;

	agg_context(fcinfo, "max_by or min_by serialize function");
	/* zeroed padding: the bytes are stored, and logged */
	memset(&h, 0, sizeof(h));
	h.value_type = st->value_type;
	h.by_type = st->by_type;
	h.found = st->found;
	size = VARHDRSZ + sizeof(ByHeader) +
		datumEstimateSpace(st->value, value_null, st->value_byval, st->value_len) +
		datumEstimateSpace(st->by, !st->found, st->by_byval, st->by_len);
	out = palloc(size);
	SET_VARSIZE(out, size);
	p = VARDATA(out);
	memcpy(p, &h, sizeof(ByHeader));
	p += sizeof(ByHeader);
	datumSerialize(st->value, value_null, st->value_byval, st->value_len, &p);
	datumSerialize(st->by, !st->found, st->by_byval, st->by_len, &p);
	PG_RETURN_BYTEA_P(out);
}

/*
 * A serialized state read back, in the current context (the combine
 * function copies it into the aggregate context when it must).
 */
Datum
windowing_max_min_by_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	char	   *p = VARDATA_ANY(in);
	ByHeader	h;
	ByState    *st = palloc0(sizeof(ByState));
	bool		by_null;

	agg_context(fcinfo, "max_by or min_by deserialize function");
	if (VARSIZE_ANY_EXHDR(in) < (int) sizeof(ByHeader))
		elog(ERROR, "invalid max_by or min_by state");
	memcpy(&h, p, sizeof(ByHeader));
	p += sizeof(ByHeader);
	set_types(st, h.value_type, h.by_type);
	st->found = h.found;
	st->value = datumRestore(&p, &st->value_null);
	st->by = datumRestore(&p, &by_null);
	PG_RETURN_POINTER(st);
}
