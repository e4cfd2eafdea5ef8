/*
 * aggregates.c
 *		Any storable PostgreSQL aggregate, one transition state per window.
 *
 * A pipeline's "aggregates" is a select list ('count(*) AS n, sum(amount)').
 * Rather than re-implementing count, sum and friends, it is parsed and
 * analysed by PostgreSQL itself against the source table, which resolves
 * overloads, polymorphism, casts and collations exactly as in a query; the
 * resulting Aggref nodes give the transition, final and serialization
 * functions from pg_aggregate.  They then run the way nodeAgg.c runs them,
 * incrementally, under an AggState so that functions calling
 * AggCheckCallContext find their memory context.
 *
 * The text is only ever parsed, never spliced into SQL: one statement, a
 * bare select list of aggregate calls, no subqueries.  The inputs of the
 * aggregates are deparsed from the analysed tree for the queue reader; a
 * FILTER condition is one more input, so that whatever reads the queue
 * evaluates it with the others, and a row it does not pass skips the
 * transition.
 *
 * A state must survive the step that built it, so it must be storable: a
 * real type, or "internal" with serialize/deserialize functions (as parallel
 * aggregation needs).  Final functions must not modify the state, since a
 * window may fire again after more rows arrive.
 */
#include "compat.h"

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_agg.h"
#include "parser/parser.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/expandeddatum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "aggregates.h"

#define AGG_ERROR(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), __VA_ARGS__))

/* The raw select list, checked to be nothing but aggregate calls. */
static SelectStmt *
parse_select_list(const char *text)
{
	List	   *raw = raw_parser(text, RAW_PARSE_DEFAULT);
	SelectStmt *sel;
	ListCell   *lc;

	if (list_length(raw) != 1 ||
		!IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt))
		AGG_ERROR(errmsg("aggregates must be a single select list"),
				  errhint("Write it like: count(*) AS orders, sum(amount) AS revenue."));
	sel = (SelectStmt *) linitial_node(RawStmt, raw)->stmt;
	if (sel->fromClause || sel->whereClause || sel->groupClause ||
		sel->havingClause || sel->windowClause || sel->sortClause ||
		sel->limitCount || sel->limitOffset || sel->withClause ||
		sel->distinctClause || sel->intoClause || sel->lockingClause ||
		sel->op != SETOP_NONE || sel->targetList == NIL)
		AGG_ERROR(errmsg("aggregates must be a select list and nothing else"),
				  errhint("Write it like: count(*) AS orders, sum(amount) AS revenue."));
	foreach(lc, sel->targetList)
	{
		ResTarget  *rt = lfirst_node(ResTarget, lc);

		if (!IsA(rt->val, FuncCall))
			AGG_ERROR(errmsg("each item of aggregates must be an aggregate call"),
					  errposition(rt->location + 1));
	}
	return sel;
}

/* Errors point into the select list, not into the caller's query. */
static void
select_list_error_callback(void *arg)
{
	int			pos = geterrposition();

	if (pos > 0)
	{
		errposition(0);
		internalerrposition(pos);
		internalerrquery((const char *) arg);
	}
}

/*
 * The select list analysed against the source table.  Syntax errors too
 * point into the select list.
 */
static Query *
analyse(Oid source, const char *aggregates)
{
	char	   *text = psprintf("SELECT %s", aggregates);
	RawStmt    *stmt = makeNode(RawStmt);
	RangeVar   *rv = makeRangeVar(get_namespace_name(get_rel_namespace(source)),
									get_rel_name(source), -1);
	ErrorContextCallback errcb;
	SelectStmt *sel;
	Query	   *q;

	errcb.callback = select_list_error_callback;
	errcb.arg = text;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	sel = parse_select_list(text);
	sel->fromClause = list_make1(rv);
	stmt->stmt = (Node *) sel;
	stmt->stmt_location = -1;
	q = parse_analyze_fixedparams(stmt, text, NULL, 0, NULL);
	error_context_stack = errcb.previous;
	return q;
}

/* The plain aggregate call of one output column, or an error. */
static Aggref *
checked_aggref(TargetEntry *te)
{
	Aggref	   *ref = (Aggref *) te->expr;

	if (!IsA(ref, Aggref))
		AGG_ERROR(errmsg("aggregate output \"%s\" must be a plain aggregate call",
						 te->resname));
	if (ref->aggdistinct || ref->aggorder || ref->aggkind != AGGKIND_NORMAL ||
		ref->agglevelsup != 0)
		AGG_ERROR(errmsg("aggregate \"%s\" cannot use DISTINCT, ORDER BY or WITHIN GROUP in a pipeline",
						 te->resname));
	if (checkExprHasSubLink((Node *) ref->args) ||
		checkExprHasSubLink((Node *) ref->aggfilter))
		AGG_ERROR(errmsg("aggregate \"%s\" cannot contain a subquery", te->resname));
	return ref;
}

/*
 * One more input of every row: deparsed for the queries that read the
 * queue, planned for the heap scan.  The cast keeps a whole-row input one
 * column.
 */
static void
add_input(Aggregator *a, Expr *expr, List *dpcontext)
{
	a->args_sql = lappend(a->args_sql,
						  psprintf("CAST(%s AS %s)",
								   deparse_expression((Node *) expr, dpcontext,
													  false, false),
								   format_type_be_qualified(exprType((Node *) expr))));
	a->arg_exprs = lappend(a->arg_exprs, expression_planner(expr));
	a->nargs++;
}

static void
init_fn(Oid fn, Expr *expr, FmgrInfo *info)
{
	fmgr_info(fn, info);
	fmgr_info_set_expr((Node *) expr, info);
}

/* Transition, final and serialization functions from pg_aggregate. */
static void
setup_functions(AggDef *d, Aggref *ref, Oid *argtypes)
{
	HeapTuple	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(ref->aggfnoid));
	Form_pg_aggregate agg;
	Expr	   *transexpr;
	Expr	   *finalexpr;
	Datum		initval;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for aggregate %u", ref->aggfnoid);
	agg = (Form_pg_aggregate) GETSTRUCT(tup);
	/* the planner fills Aggref.aggtranstype; analysis alone does not */
	d->transtype = resolve_aggregate_transtype(ref->aggfnoid, agg->aggtranstype,
											   argtypes, d->nargs);
	get_typlenbyval(d->transtype, &d->translen, &d->transbyval);
	d->internal = d->transtype == INTERNALOID;
	if (d->internal && (!OidIsValid(agg->aggserialfn) || !OidIsValid(agg->aggdeserialfn)))
		AGG_ERROR(errmsg("aggregate \"%s\" cannot be used in a pipeline", d->name),
				  errdetail("Its transition state is of type internal and has no serialization functions, so it cannot be stored."));
	if (OidIsValid(agg->aggfinalfn) && agg->aggfinalmodify != AGGMODIFY_READ_ONLY)
		AGG_ERROR(errmsg("aggregate \"%s\" cannot be used in a pipeline", d->name),
				  errdetail("Its final function modifies the transition state, and a window may fire more than once."));
	build_aggregate_transfn_expr(argtypes, d->nargs, 0, false, d->transtype,
								 ref->inputcollid, agg->aggtransfn, InvalidOid,
								 &transexpr, NULL);
	init_fn(agg->aggtransfn, transexpr, &d->transfn);
	d->has_final = OidIsValid(agg->aggfinalfn);
	d->final_extra = agg->aggfinalextra;
	if (d->has_final)
	{
		build_aggregate_finalfn_expr(argtypes, 1 + (d->final_extra ? d->nargs : 0),
									 d->transtype, ref->aggtype,
									 ref->inputcollid, agg->aggfinalfn, &finalexpr);
		init_fn(agg->aggfinalfn, finalexpr, &d->finalfn);
	}
	d->has_combine = OidIsValid(agg->aggcombinefn);
	if (d->has_combine)
	{
		/* a combine function is a transition function of two states */
		build_aggregate_transfn_expr(&d->transtype, 1, 0, false, d->transtype,
									 ref->inputcollid, agg->aggcombinefn,
									 InvalidOid, &transexpr, NULL);
		init_fn(agg->aggcombinefn, transexpr, &d->combinefn);
	}
	if (d->internal)
	{
		build_aggregate_serialfn_expr(agg->aggserialfn, &transexpr);
		init_fn(agg->aggserialfn, transexpr, &d->serialfn);
		build_aggregate_deserialfn_expr(agg->aggdeserialfn, &transexpr);
		init_fn(agg->aggdeserialfn, transexpr, &d->deserialfn);
	}
	initval = SysCacheGetAttr(AGGFNOID, tup, Anum_pg_aggregate_agginitval,
							  &d->initnull);
	if (!d->initnull)
	{
		Oid			input;
		Oid			ioparam;

		getTypeInputInfo(d->transtype, &input, &ioparam);
		d->initval = OidInputFunctionCall(input, TextDatumGetCString(initval),
										  ioparam, -1);
	}
	ReleaseSysCache(tup);
}

/*
 * An aggregate's inputs are its arguments, then its FILTER condition,
 * evaluated with them by whatever reads the queue.
 */
static void
setup_agg(Aggregator *a, AggDef *d, TargetEntry *te, List *dpcontext)
{
	Aggref	   *ref = checked_aggref(te);
	Oid			argtypes[FUNC_MAX_ARGS];
	ListCell   *lc;
	int			i = 0;

	d->name = pstrdup(te->resname);
	d->resulttype = ref->aggtype;
	get_typlenbyval(d->resulttype, &d->resultlen, &d->resultbyval);
	d->collation = ref->inputcollid;
	d->nargs = list_length(ref->args);
	d->firstarg = a->nargs;
	foreach(lc, ref->args)
	{
		TargetEntry *arg = lfirst_node(TargetEntry, lc);

		argtypes[i++] = exprType((Node *) arg->expr);
		add_input(a, arg->expr, dpcontext);
	}
	d->has_filter = ref->aggfilter != NULL;
	if (d->has_filter)
		add_input(a, ref->aggfilter, dpcontext);
	d->ninputs = a->nargs - d->firstarg;
	setup_functions(d, ref, argtypes);
}

/*
 * Checks a pipeline's aggregates against its source and prepares to run
 * them.  Everything is allocated in the current memory context.
 */
Aggregator *
agg_prepare(Oid source, const char *aggregates)
{
	Query	   *q = analyse(source, aggregates);
	Aggregator *a = palloc0(sizeof(Aggregator));
	List	   *dpcontext = deparse_context_for(get_rel_name(source), source);
	ListCell   *lc;

	a->aggs = palloc0(sizeof(AggDef) * list_length(q->targetList));
	foreach(lc, q->targetList)
	{
		TargetEntry *te = lfirst_node(TargetEntry, lc);

		for (int i = 0; i < a->naggs; i++)
			if (strcmp(a->aggs[i].name, te->resname) == 0)
				AGG_ERROR(errmsg("aggregate output name \"%s\" is used twice", te->resname),
						  errhint("Name the outputs with AS."));
		setup_agg(a, &a->aggs[a->naggs++], te, dpcontext);
	}
	a->context = makeNode(AggState);
	a->context->curaggcontext = CreateStandaloneExprContext();
	return a;
}

/* States are allocated in statecxt from now on. */
void
agg_bind_context(Aggregator *a, MemoryContext statecxt)
{
	a->statecxt = statecxt;
	a->context->curaggcontext->ecxt_per_tuple_memory = statecxt;
}

void
agg_init(Aggregator *a, AggValue *states)
{
	for (int i = 0; i < a->naggs; i++)
	{
		AggDef	   *d = &a->aggs[i];

		states[i].isnull = d->initnull;
		states[i].empty = d->initnull;
		states[i].value = d->initnull ? (Datum) 0 :
			datumCopy(d->initval, d->transbyval, d->translen);
	}
}

/*
 * The new state of a transition function, kept as nodeAgg.c's
 * ExecAggTransReparent keeps it: an expanded object made in the states'
 * context stays as it is, so that array_append (collect()) appends in
 * place rather than copying the whole array at every row, as a flat array
 * would be; anything else is copied there.  The old state goes, so a
 * window holds one state however many rows it had.
 */
static Datum
keep_state(Aggregator *a, AggDef *d, Datum result, AggValue *old)
{
	if (!DatumIsReadWriteExpandedObject(result, false, d->translen) ||
		MemoryContextGetParent(DatumGetEOHP(result)->eoh_context) != a->statecxt)
		result = datumCopy(result, false, d->translen);
	if (old->isnull)
		return result;
	if (DatumIsReadWriteExpandedObject(old->value, false, d->translen))
		DeleteExpandedObject(old->value);
	else
		pfree(DatumGetPointer(old->value));
	return result;
}

/* nodeAgg.c's advance_transition_function, for one aggregate. */
static void
advance_one(Aggregator *a, AggDef *d, AggValue *v, Datum *args, bool *nulls)
{
	LOCAL_FCINFO(fcinfo, FUNC_MAX_ARGS);
	MemoryContext old;
	Datum		result;

	if (d->transfn.fn_strict)
	{
		for (int i = 0; i < d->nargs; i++)
			if (nulls[i])
				return;
		if (v->empty)
		{
			/* the first input becomes the state, as in nodeAgg.c */
			v->value = datumCopy(args[0], d->transbyval, d->translen);
			v->isnull = false;
			v->empty = false;
			return;
		}
		if (v->isnull)
			return;
	}
	InitFunctionCallInfoData(*fcinfo, &d->transfn, d->nargs + 1, d->collation,
							 (Node *) a->context, NULL);
	fcinfo->args[0].value = v->value;
	fcinfo->args[0].isnull = v->isnull;
	for (int i = 0; i < d->nargs; i++)
	{
		fcinfo->args[i + 1].value = args[i];
		fcinfo->args[i + 1].isnull = nulls[i];
	}
	old = MemoryContextSwitchTo(a->statecxt);
	result = FunctionCallInvoke(fcinfo);
	if (!d->transbyval && !d->internal && !fcinfo->isnull &&
		DatumGetPointer(result) != DatumGetPointer(v->value))
		result = keep_state(a, d, result, v);
	MemoryContextSwitchTo(old);
	v->value = result;
	v->isnull = fcinfo->isnull;
}

/* Does the row pass the aggregate's FILTER?  NULL does not, as in SQL. */
static bool
passes_filter(AggDef *d, Datum *args, bool *nulls)
{
	int			last = d->ninputs - 1;

	return !d->has_filter || (!nulls[last] && DatumGetBool(args[last]));
}

/* Adds one row; args holds every aggregate's inputs in order. */
void
agg_advance(Aggregator *a, AggValue *states, Datum *args, bool *argnulls)
{
	a->advancing = true;
	for (int i = 0; i < a->naggs; i++)
	{
		AggDef	   *d = &a->aggs[i];
		Datum	   *in = args + d->firstarg;
		bool	   *innulls = argnulls + d->firstarg;

		if (passes_filter(d, in, innulls))
			advance_one(a, d, &states[i], in, innulls);
	}
	a->advancing = false;
}

/* The current result of every aggregate; the states stay usable. */
void
agg_final(Aggregator *a, AggValue *states, Datum *out, bool *outnull)
{
	for (int i = 0; i < a->naggs; i++)
	{
		AggDef	   *d = &a->aggs[i];
		LOCAL_FCINFO(fcinfo, FUNC_MAX_ARGS);

		if (!d->has_final)
		{
			out[i] = states[i].value;
			outnull[i] = states[i].isnull;
			continue;
		}
		if (d->finalfn.fn_strict && states[i].isnull)
		{
			out[i] = (Datum) 0;
			outnull[i] = true;
			continue;
		}
		InitFunctionCallInfoData(*fcinfo, &d->finalfn,
								 1 + (d->final_extra ? d->nargs : 0),
								 d->collation, (Node *) a->context, NULL);
		fcinfo->args[0].value = states[i].value;
		fcinfo->args[0].isnull = states[i].isnull;
		for (int j = 1; j < fcinfo->nargs; j++)
			fcinfo->args[j].isnull = true;
		out[i] = FunctionCallInvoke(fcinfo);
		outnull[i] = fcinfo->isnull;
	}
}

/* Can every aggregate merge two states?  If not, names the first that cannot. */
bool
agg_can_combine(Aggregator *a, const char **which)
{
	for (int i = 0; i < a->naggs; i++)
		if (!a->aggs[i].has_combine)
		{
			*which = a->aggs[i].name;
			return false;
		}
	return true;
}

/* nodeAgg.c's advance_combine_function: merges "from" into "into". */
static void
combine_one(Aggregator *a, AggDef *d, AggValue *into, AggValue *from)
{
	LOCAL_FCINFO(fcinfo, 2);
	MemoryContext old;
	Datum		result;

	if (d->combinefn.fn_strict)
	{
		if (from->isnull)
			return;
		if (into->isnull)
		{
			/* internal states live in the same context: share, do not copy */
			into->value = d->internal ? from->value :
				datumCopy(from->value, d->transbyval, d->translen);
			into->isnull = false;
			into->empty = false;
			return;
		}
	}
	InitFunctionCallInfoData(*fcinfo, &d->combinefn, 2, d->collation,
							 (Node *) a->context, NULL);
	fcinfo->args[0].value = into->value;
	fcinfo->args[0].isnull = into->isnull;
	fcinfo->args[1].value = from->value;
	fcinfo->args[1].isnull = from->isnull;
	old = MemoryContextSwitchTo(a->statecxt);
	result = FunctionCallInvoke(fcinfo);
	if (!d->transbyval && !d->internal && !fcinfo->isnull &&
		DatumGetPointer(result) != DatumGetPointer(into->value))
		result = datumCopy(result, false, d->translen);
	MemoryContextSwitchTo(old);
	into->value = result;
	into->isnull = fcinfo->isnull;
	into->empty = into->empty && from->empty;
}

void
agg_combine(Aggregator *a, AggValue *into, AggValue *from)
{
	for (int i = 0; i < a->naggs; i++)
		combine_one(a, &a->aggs[i], &into[i], &from[i]);
}

static Datum
call_with_context(Aggregator *a, FmgrInfo *fn, Datum arg0, int nargs)
{
	LOCAL_FCINFO(fcinfo, 2);
	Datum		result;

	InitFunctionCallInfoData(*fcinfo, fn, nargs, InvalidOid,
							 (Node *) a->context, NULL);
	fcinfo->args[0].value = arg0;
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = (Datum) 0;
	fcinfo->args[1].isnull = false;
	result = FunctionCallInvoke(fcinfo);
	if (fcinfo->isnull)
		elog(ERROR, "aggregate state (de)serialization returned NULL");
	return result;
}

/*
 * The states of one window as one bytea: per aggregate a flag byte, then
 * the value through datumSerialize (internal states through their
 * serialize function first).
 */
bytea *
agg_serialize(Aggregator *a, AggValue *states)
{
	Datum	   *vals = palloc(sizeof(Datum) * a->naggs);
	Size		size = VARHDRSZ;
	bytea	   *out;
	char	   *p;

	for (int i = 0; i < a->naggs; i++)
	{
		AggDef	   *d = &a->aggs[i];

		vals[i] = states[i].value;
		if (d->internal && !states[i].isnull)
			vals[i] = call_with_context(a, &d->serialfn, vals[i], 1);
		size += 1 + datumEstimateSpace(vals[i], states[i].isnull,
									   d->internal ? false : d->transbyval,
									   d->internal ? -1 : d->translen);
	}
	out = palloc(size);
	SET_VARSIZE(out, size);
	p = VARDATA(out);
	for (int i = 0; i < a->naggs; i++)
	{
		AggDef	   *d = &a->aggs[i];

		*p++ = (char) (states[i].empty ? 1 : 0);
		datumSerialize(vals[i], states[i].isnull,
					   d->internal ? false : d->transbyval,
					   d->internal ? -1 : d->translen, &p);
	}
	return out;
}

void
agg_deserialize(Aggregator *a, bytea *data, AggValue *states)
{
	char	   *p = VARDATA_ANY(data);
	MemoryContext old = MemoryContextSwitchTo(a->statecxt);

	for (int i = 0; i < a->naggs; i++)
	{
		AggDef	   *d = &a->aggs[i];
		Datum		v;

		states[i].empty = *p++ != 0;
		v = datumRestore(&p, &states[i].isnull);
		if (d->internal && !states[i].isnull)
			v = call_with_context(a, &d->deserialfn, v, 2);
		states[i].value = v;
	}
	MemoryContextSwitchTo(old);
}
