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
 * window may fire again after more rows arrive.  An aggregate that cannot
 * keep its state so, or that sorts its inputs (DISTINCT, ORDER BY), keeps
 * its rows instead (KeptRows below).
 */
#include "compat.h"

#include <math.h>

#include "access/detoast.h"
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"
#include "parser/analyze.h"
#include "parser/parse_agg.h"
#include "parser/parser.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/datum.h"
#include "utils/expandeddatum.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/sortsupport.h"
#include "utils/syscache.h"

#include "aggregates.h"
#include "evictor.h"
#include "trigger.h"

/*
 * An aggregate whose state cannot be kept as it is keeps its rows instead:
 * with DISTINCT or ORDER BY, whose inputs nodeAgg.c sorts before any
 * transition (and whose states PostgreSQL cannot combine), and when its
 * state cannot be stored (internal without serialization functions, as
 * array_agg's and string_agg's in PostgreSQL 15) or not fired twice (a
 * final function that modifies it).  Its state in a window is the inputs
 * of the window's rows, which merge by concatenation; when the window
 * fires they are sorted, as nodeAgg.c sorts them, and run through the
 * aggregate's own transition and final functions; the ordered-set
 * aggregates whose functions need the executor's sort (percentile_cont,
 * percentile_disc, mode) are computed here from the sorted rows instead.
 * Without DISTINCT or WITHIN GROUP a row also keeps its arrival number,
 * the last sort key, so that rows come in arrival order whatever the order
 * in which windows and slices merged.
 */
struct KeptRows
{
	int			ncols;			/* values of a row: the aggregate's inputs up
								 * to its FILTER */
	int16	   *typlen;
	bool	   *typbyval;
	int			nkeys;			/* sort keys: ORDER BY, or DISTINCT's */
	int		   *keycol;			/* their columns */
	SortSupport keys;
	bool		distinct;		/* rows equal in every key count once */
	bool		by_arrival;		/* the last column, windowing_seq, breaks ties */
	bool		skip_nulls;		/* rows with a NULL argument count for nothing */
	Datum	   *row;			/* room for a row's values */
	Oid			ordered_set;	/* an ordered-set aggregate computed here, or 0 */
	Datum		fraction;		/* its constant direct argument (percentiles) */
	bool		fraction_null;
};

/*
 * The kept rows of a window: a varlena, stored as it is, each row its
 * values through datumSerialize.
 */
typedef struct KeptState
{
	int32		vl_len_;
	int32		space;			/* bytes allocated */
	int32		nrows;
	int32		nset;			/* DISTINCT: the first nset rows are sorted and
								 * distinct */
} KeptState;

#define KEPT_ROWS(st) ((char *) (st) + sizeof(KeptState))

/*
 * A pipeline with an evictor keeps a window's rows as one more kept state
 * after the aggregates' (states[naggs]): every input of every aggregate,
 * then the row's event time, the evictor's input, and its arrival number
 * last, so that merged windows keep arrival order.  When the evictor drops
 * rows the aggregates run again over those left (agg_evict).
 */
struct AggEvictor
{
	AggDef		def;			/* its kept rows */
	EvictorDef	rule;
	int			ts_col;			/* -1: processing time, no event time */
	int			input_col;		/* the delta evictor's input, or -1 */
	Oid			input_type;
};

/* The definition of state i: an aggregate's, or the evictor's rows. */
static AggDef *
state_def(Aggregator *a, int i)
{
	return i < a->naggs ? &a->aggs[i] : &a->evict->def;
}

#define AGG_ERROR(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), __VA_ARGS__))

/* The raw select list, checked to be nothing but a select list. */
static SelectStmt *
parse_select_list(const char *text)
{
	List	   *raw = raw_parser(text, RAW_PARSE_DEFAULT);
	SelectStmt *sel;

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

/* The window's bounds a derived column may name, as parameters $1 to $3. */
static const char *const bound_names[] = {"window_start", "window_end", "window_time"};

#define NBOUNDS lengthof(bound_names)

/*
 * An unqualified window_start, window_end or window_time that is no column
 * of the source is the window's bound, a parameter of the window's type.
 */
static Node *
bound_ref(ParseState *pstate, ColumnRef *cref, Node *var)
{
	Oid			window_type = *(Oid *) pstate->p_ref_hook_state;
	Param	   *p;

	if (list_length(cref->fields) != 1 || !IsA(linitial(cref->fields), String))
		return NULL;
	for (int i = 0; i < NBOUNDS; i++)
	{
		if (strcmp(strVal(linitial(cref->fields)), bound_names[i]) != 0)
			continue;
		if (var != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_AMBIGUOUS_COLUMN),
					 errmsg("column reference \"%s\" is ambiguous", bound_names[i]),
					 errdetail("It could be the source's column or the window's bound."),
					 errhint("Qualify the source's column with its table's name."),
					 parser_errposition(pstate, cref->location)));
		p = makeNode(Param);
		p->paramkind = PARAM_EXTERN;
		p->paramid = i + 1;
		p->paramtype = window_type;
		p->paramtypmod = -1;
		p->paramcollid = InvalidOid;
		p->location = cref->location;
		return (Node *) p;
	}
	return NULL;
}

static void
setup_bounds(ParseState *pstate, void *arg)
{
	pstate->p_post_columnref_hook = bound_ref;
	pstate->p_ref_hook_state = arg;
}

/*
 * The select list analysed against the source table, the window's bounds
 * as parameters.  Syntax errors too point into the select list.
 */
static Query *
analyse_now(Oid source, const char *aggregates, Oid window_type)
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
	q = parse_analyze_withcb(stmt, text, setup_bounds, &window_type, NULL);
	error_context_stack = errcb.previous;
	return q;
}


/*
 * Select lists analysed in this process, kept from step to step: parsing
 * and analysing one was a good part of a small step's cost.  Any change
 * to the catalogs an analysis reads (functions, aggregates, types,
 * operators, casts, schemas, the source table) forgets them all, as
 * PostgreSQL's plan cache does for its plans.
 */
typedef struct Analysed
{
	Oid			source;
	Oid			window_type;
	Oid			user;
	char	   *search_path;
	char	   *aggregates;
	Query	   *query;
} Analysed;

/* more than a process's pipelines, usually; past it, all are forgotten */
#define MAX_ANALYSED 256

static MemoryContext analysed_cxt = NULL;
static List *analysed = NIL;
static uint64 analysed_generation = 0;	/* counts the forgettings */

static void
forget_analysed(void)
{
	analysed_generation++;
	analysed = NIL;
	MemoryContextReset(analysed_cxt);
}

static void
analysed_syscache_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	forget_analysed();
}

static void
analysed_relcache_changed(Datum arg, Oid relid)
{
	ListCell   *lc;

	foreach(lc, analysed)
	{
		if (!OidIsValid(relid) || ((Analysed *) lfirst(lc))->source == relid)
		{
			forget_analysed();
			return;
		}
	}
}

static void
watch_catalogs(void)
{
	const int	caches[] = {PROCOID, AGGFNOID, TYPEOID, OPEROID, CASTSOURCETARGET, NAMESPACEOID};

	analysed_cxt = AllocSetContextCreate(TopMemoryContext, "windowing analysed select lists",
										 ALLOCSET_SMALL_SIZES);
	for (int i = 0; i < lengthof(caches); i++)
		CacheRegisterSyscacheCallback(caches[i], analysed_syscache_changed, (Datum) 0);
	CacheRegisterRelcacheCallback(analysed_relcache_changed, (Datum) 0);
}

/* A copy of the select list's analysis: the caller may change it. */
static Query *
analyse(Oid source, const char *aggregates, Oid window_type)
{
	uint64		generation;
	Query	   *q;
	Analysed   *a;
	MemoryContext old;
	ListCell   *lc;

	if (analysed_cxt == NULL)
		watch_catalogs();
	foreach(lc, analysed)
	{
		a = lfirst(lc);
		if (a->source == source && a->window_type == window_type && a->user == GetUserId() &&
			strcmp(a->search_path, namespace_search_path) == 0 &&
			strcmp(a->aggregates, aggregates) == 0)
			return copyObject(a->query);
	}
	if (list_length(analysed) >= MAX_ANALYSED)
		forget_analysed();
	generation = analysed_generation;
	q = analyse_now(source, aggregates, window_type);
	/* a change seen while analysing may have come after what it read */
	if (generation != analysed_generation)
		return q;
	old = MemoryContextSwitchTo(analysed_cxt);
	a = palloc(sizeof(Analysed));
	a->source = source;
	a->window_type = window_type;
	a->user = GetUserId();
	a->search_path = pstrdup(namespace_search_path);
	a->aggregates = pstrdup(aggregates);
	a->query = copyObject(q);
	analysed = lappend(analysed, a);
	MemoryContextSwitchTo(old);
	return q;
}

/*
 * The ordered-set aggregates computed from a window's kept rows: those
 * PostgreSQL runs through its executor's sort, which cannot be stored.
 */
static bool
computed_here(Oid aggfnoid)
{
	return aggfnoid == F_PERCENTILE_DISC_FLOAT8_ANYELEMENT ||
		aggfnoid == F_PERCENTILE_CONT_FLOAT8_FLOAT8 ||
		aggfnoid == F_PERCENTILE_CONT_FLOAT8_INTERVAL ||
		aggfnoid == F_MODE;
}

/* Does an expression read a parameter: a window's bound? */
static bool
reads_bounds(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return true;
	return expression_tree_walker(node, reads_bounds, context);
}

/* An aggregate call of output column "name" that a pipeline can run, or an error. */
static void
check_aggref(Aggref *ref, const char *name)
{
	if (ref->aggkind != AGGKIND_NORMAL && !computed_here(ref->aggfnoid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("aggregate \"%s\" cannot be used in a pipeline", name),
				 errdetail("Of the ordered-set and hypothetical-set aggregates (WITHIN GROUP), pipelines support percentile_cont and percentile_disc of one fraction, and mode."),
				 errhint("Use one aggregate per fraction, or keep the values with array_agg(x ORDER BY x) and compute the result from the array in the query that reads the results.")));
	if (reads_bounds((Node *) ref, NULL))
		AGG_ERROR(errmsg("aggregate \"%s\" cannot read the window's bounds", name),
				  errdetail("An aggregate reads the rows of its window; window_start, window_end and window_time are the same for all of them."),
				  errhint("Use the bound outside the aggregate call."));
}

/* An output column that a pipeline can compute from its window, or an error. */
static void
check_output(TargetEntry *te)
{
	if (checkExprHasSubLink((Node *) te->expr))
		AGG_ERROR(errmsg("output \"%s\" cannot contain a subquery", te->resname));
	if (contain_window_function((Node *) te->expr))
		AGG_ERROR(errmsg("output \"%s\" cannot contain a window function", te->resname),
				  errhint("A pipeline's windows are its own: use windowing.tumbling(), hopping() or session() as its assigner."));
	if (expression_returns_set((Node *) te->expr))
		AGG_ERROR(errmsg("output \"%s\" cannot return a set", te->resname));
	if (strcmp(te->resname, "?column?") == 0)
		AGG_ERROR(errmsg("every output that is not a plain aggregate call needs a name"),
				  errhint("Name it with AS, like: sum(amount) / count(*) AS mean."));
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

/*
 * Transition, final and serialization functions from pg_aggregate; sets
 * keeps_rows if the aggregate's state cannot be kept as it is.
 */
static void
setup_functions(AggDef *d, Aggref *ref, Oid *argtypes, bool *keeps_rows)
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
	/* a state that cannot be stored, or not fired twice, is rebuilt each time */
	*keeps_rows = *keeps_rows ||
		(d->internal && (!OidIsValid(agg->aggserialfn) || !OidIsValid(agg->aggdeserialfn))) ||
		(OidIsValid(agg->aggfinalfn) && agg->aggfinalmodify != AGGMODIFY_READ_ONLY);
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
	if (d->internal && !*keeps_rows)
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
 * A row's arrival number, windowing_seq.  create_pipeline checks the
 * aggregates before it makes the table a queue: until then a NULL, never
 * read, stands for it.
 */
static Expr *
arrival_number(Oid source)
{
	AttrNumber	att = get_attnum(source, "windowing_seq");

	if (att == InvalidAttrNumber)
		return (Expr *) makeNullConst(INT8OID, -1, InvalidOid);
	return (Expr *) makeVar(1, att, INT8OID, -1, InvalidOid, 0);
}

/*
 * A percentile's fraction, once for all windows (and checked as
 * PostgreSQL checks it): a query evaluates it once per group, and a
 * pipeline's windows have no columns of their own.
 */
static void
constant_fraction(KeptRows *kr, AggDef *d, Expr *arg)
{
	Node	   *c = eval_const_expressions(NULL, (Node *) arg);

	if (!IsA(c, Const))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the fraction of aggregate \"%s\" must be a constant", d->name),
				 errdetail("A pipeline evaluates it once, for all its windows."),
				 errhint("Write the fraction as a number, such as percentile_cont(0.9).")));
	kr->fraction = ((Const *) c)->constvalue;
	kr->fraction_null = ((Const *) c)->constisnull;
	if (!kr->fraction_null &&
		!(DatumGetFloat8(kr->fraction) >= 0 && DatumGetFloat8(kr->fraction) <= 1))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("percentile value %g is not between 0 and 1",
						DatumGetFloat8(kr->fraction))));
}

/* Kept rows are sorted as nodeAgg.c sorts them: by ORDER BY, or DISTINCT. */
static void
sort_keys(KeptRows *kr, List *sortlist, List *args)
{
	ListCell   *lc;
	int			i = 0;

	kr->nkeys = list_length(sortlist);
	kr->keycol = palloc(sizeof(int) * Max(kr->nkeys, 1));
	kr->keys = palloc0(sizeof(SortSupportData) * Max(kr->nkeys, 1));
	foreach(lc, sortlist)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		TargetEntry *tle = get_sortgroupclause_tle(sgc, args);
		SortSupport ssup = &kr->keys[i++];

		kr->keycol[i - 1] = tle->resno - 1;
		ssup->ssup_cxt = CurrentMemoryContext;
		ssup->ssup_collation = exprCollation((Node *) tle->expr);
		ssup->ssup_nulls_first = sgc->nulls_first;
		PrepareSortSupportFromOrderingOp(sgc->sortop, ssup);
	}
}

/* An aggregate that keeps its rows: what a row keeps, how they are sorted. */
static void
setup_kept_rows(Aggregator *a, AggDef *d, Aggref *ref, Oid source, List *dpcontext)
{
	KeptRows   *kr = palloc0(sizeof(KeptRows));
	ListCell   *lc;
	int			i = 0;

	kr->distinct = ref->aggdistinct != NIL;
	kr->ordered_set = ref->aggkind == AGGKIND_NORMAL ? InvalidOid : ref->aggfnoid;
	/* an ordered set's sort decides its result, and ties are equal values */
	kr->by_arrival = !kr->distinct && !OidIsValid(kr->ordered_set);
	kr->skip_nulls = d->transfn.fn_strict || OidIsValid(kr->ordered_set);
	if (ref->aggdirectargs != NIL)
		constant_fraction(kr, d, linitial(ref->aggdirectargs));
	kr->ncols = list_length(ref->args) + (kr->by_arrival ? 1 : 0);
	kr->typlen = palloc(sizeof(int16) * kr->ncols);
	kr->typbyval = palloc(sizeof(bool) * kr->ncols);
	kr->row = palloc(sizeof(Datum) * kr->ncols);
	foreach(lc, ref->args)
	{
		get_typlenbyval(exprType((Node *) lfirst_node(TargetEntry, lc)->expr),
						&kr->typlen[i], &kr->typbyval[i]);
		i++;
	}
	if (kr->by_arrival)
	{
		get_typlenbyval(INT8OID, &kr->typlen[i], &kr->typbyval[i]);
		add_input(a, arrival_number(source), dpcontext);
	}
	sort_keys(kr, ref->aggdistinct ? ref->aggdistinct : ref->aggorder, ref->args);
	d->kept = kr;
}

/* Column "column" of the source as an input. */
static Expr *
column_var(Oid source, const char *column, Oid *type)
{
	AttrNumber	att = get_attnum(source, column);
	int32		typmod;
	Oid			collation;

	if (att == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of the evictor does not exist in table \"%s\"",
						column, get_rel_name(source))));
	get_atttypetypmodcoll(source, att, type, &typmod, &collation);
	return (Expr *) makeVar(1, att, *type, typmod, collation, 0);
}

/* The evictor's kept rows: after every aggregate's inputs, its own. */
static void
setup_evictor(Aggregator *a, const EvictorDef *rule, Oid source, const char *time_column,
			  List *dpcontext)
{
	AggEvictor *ev = palloc0(sizeof(AggEvictor));
	KeptRows   *kr = palloc0(sizeof(KeptRows));
	Oid			type;
	ListCell   *lc;
	int			i = 0;

	ev->rule = *rule;
	ev->ts_col = ev->input_col = -1;
	if (time_column)
	{
		ev->ts_col = a->nargs;
		add_input(a, column_var(source, time_column, &type), dpcontext);
	}
	if (rule->column)
	{
		ev->input_col = a->nargs;
		add_input(a, column_var(source, rule->column, &ev->input_type), dpcontext);
		trigger_check_numeric(ev->input_type, rule->column, "a delta evictor's input");
	}
	add_input(a, arrival_number(source), dpcontext);
	kr->ncols = a->nargs;
	kr->by_arrival = true;
	kr->typlen = palloc(sizeof(int16) * kr->ncols);
	kr->typbyval = palloc(sizeof(bool) * kr->ncols);
	kr->row = palloc(sizeof(Datum) * kr->ncols);
	foreach(lc, a->arg_exprs)
	{
		get_typlenbyval(exprType(lfirst(lc)), &kr->typlen[i], &kr->typbyval[i]);
		i++;
	}
	ev->def.name = "the evictor";
	ev->def.kept = kr;
	a->evict = ev;
	a->nstates = a->naggs + 1;
}

/*
 * An aggregate's inputs are its arguments (and ORDER BY expressions), then
 * the arrival number of a row it keeps, then its FILTER condition, all
 * evaluated together by whatever reads the queue.
 */
static void
setup_agg(Aggregator *a, AggDef *d, Aggref *ref, const char *name, Oid source,
		  List *dpcontext)
{
	Oid			argtypes[FUNC_MAX_ARGS];
	ListCell   *lc;
	bool		keeps_rows = ref->aggdistinct != NIL || ref->aggorder != NIL;

	check_aggref(ref, name);
	d->name = pstrdup(name);
	d->resulttype = ref->aggtype;
	get_typlenbyval(d->resulttype, &d->resultlen, &d->resultbyval);
	d->collation = ref->inputcollid;
	d->nargs = 0;
	d->firstarg = a->nargs;
	foreach(lc, ref->args)
	{
		TargetEntry *arg = lfirst_node(TargetEntry, lc);

		/* ORDER BY's own expressions come last, and are no arguments */
		if (!arg->resjunk)
			argtypes[d->nargs++] = exprType((Node *) arg->expr);
		add_input(a, arg->expr, dpcontext);
	}
	setup_functions(d, ref, argtypes, &keeps_rows);
	if (keeps_rows)
		setup_kept_rows(a, d, ref, source, dpcontext);
	d->has_filter = ref->aggfilter != NULL;
	if (d->has_filter)
		add_input(a, ref->aggfilter, dpcontext);
	d->ninputs = a->nargs - d->firstarg;
}

/* What agg_prepare needs while it goes through the select list. */
typedef struct Preparing
{
	Aggregator *a;
	Oid			source;
	List	   *dpcontext;
	const char *name;			/* the output column being read */
	List	   *derived_refs;	/* Aggref *, of the aggregates of derived columns */
	List	   *derived_aggs;	/* their indexes in a->aggs (int) */
} Preparing;

/* The parameter that stands for an aggregate's result in derived columns. */
static Param *
result_param(int agg, Aggref *ref)
{
	Param	   *p = makeNode(Param);

	p->paramkind = PARAM_EXTERN;
	p->paramid = NBOUNDS + agg + 1;
	p->paramtype = ref->aggtype;
	p->paramtypmod = -1;
	p->paramcollid = ref->aggcollid;
	p->location = ref->location;
	return p;
}

/*
 * A derived column's expression with its aggregate calls made parameters:
 * each call a new aggregate, or one met in an earlier derived column, so
 * that "sum(v) / count(*) AS mean, count(*) * 2 AS twice" keeps one count.
 * (Plain aggregate columns keep a state each, as they always have, so that
 * the stored states of existing pipelines keep their layout.)
 */
static Node *
params_for_aggrefs(Node *node, Preparing *p)
{
	Aggregator *a = p->a;
	ListCell   *ref;
	ListCell   *agg;

	if (node == NULL)
		return NULL;
	if (!IsA(node, Aggref))
		return expression_tree_mutator(node, params_for_aggrefs, p);
	forboth(ref, p->derived_refs, agg, p->derived_aggs)
		if (equal(lfirst(ref), node))
			return (Node *) result_param(lfirst_int(agg), (Aggref *) node);
	setup_agg(a, &a->aggs[a->naggs], (Aggref *) node, p->name, p->source, p->dpcontext);
	p->derived_refs = lappend(p->derived_refs, node);
	p->derived_aggs = lappend_int(p->derived_aggs, a->naggs);
	return (Node *) result_param(a->naggs++, (Aggref *) node);
}

/* How many aggregate calls a select list makes, for room for their states. */
static bool
count_aggrefs(Node *node, int *n)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		(*n)++;
		return false;
	}
	return expression_tree_walker(node, count_aggrefs, (void *) n);
}

/* The derived column of te: its expression, ready to evaluate. */
static void
setup_derived(Preparing *p, AggOutput *out, TargetEntry *te)
{
	Node	   *expr = params_for_aggrefs((Node *) te->expr, p);

	List	   *vars = pull_var_clause(expr, 0);

	/* PostgreSQL says this itself of a select list with aggregates */
	if (vars != NIL)
	{
		AttrNumber	att = linitial_node(Var, vars)->varattno;
		char	   *column = att == 0 ? get_rel_name(p->source) : get_attname(p->source, att, false);

		AGG_ERROR(errmsg("output \"%s\" reads column \"%s\" outside an aggregate",
						 te->resname, column),
				  errdetail("A window's result is made of its rows' aggregates, its key and its bounds."),
				  errhint("Aggregate the column, like max(%s), or make it a key column.",
						  quote_identifier(column)));
	}
	out->agg = -1;
	out->expr = ExecInitExpr(expression_planner((Expr *) expr), NULL);
	p->a->derived = true;
}

/* One output column: a plain aggregate, or an expression of its own. */
static void
setup_output(Preparing *p, AggOutput *out, TargetEntry *te)
{
	Aggregator *a = p->a;

	check_output(te);
	for (AggOutput *o = a->outs; o < out; o++)
		if (strcmp(o->name, te->resname) == 0)
			AGG_ERROR(errmsg("aggregate output name \"%s\" is used twice", te->resname),
					  errhint("Name the outputs with AS."));
	out->name = pstrdup(te->resname);
	out->type = exprType((Node *) te->expr);
	get_typlenbyval(out->type, &out->len, &out->byval);
	p->name = out->name;
	if (IsA(te->expr, Aggref))
	{
		out->agg = a->naggs;
		setup_agg(a, &a->aggs[a->naggs++], (Aggref *) te->expr, out->name,
				  p->source, p->dpcontext);
	}
	else
		setup_derived(p, out, te);
}

/* The parameters of derived columns: the window's bounds, the results. */
static void
setup_params(Aggregator *a, Oid window_type)
{
	a->bounds = makeParamList(NBOUNDS + a->naggs);
	a->bounds->numParams = NBOUNDS + a->naggs;
	for (int i = 0; i < NBOUNDS + a->naggs; i++)
	{
		a->bounds->params[i].pflags = PARAM_FLAG_CONST;
		a->bounds->params[i].ptype = i < NBOUNDS ? window_type : a->aggs[i - NBOUNDS].resulttype;
	}
	a->econtext = CreateStandaloneExprContext();
	a->econtext->ecxt_param_list_info = a->bounds;
	a->finals = palloc(sizeof(Datum) * Max(a->naggs, 1));
	a->finalnulls = palloc(sizeof(bool) * Max(a->naggs, 1));
}

/*
 * Checks a pipeline's select list against its source and prepares to run
 * it: its aggregates, and the result columns computed from them and from
 * the window's bounds (of type window_type).  Everything is allocated in
 * the current memory context.
 */
Aggregator *
agg_prepare(Oid source, const char *aggregates, Oid window_type, const EvictorDef *evictor,
			const char *time_column)
{
	Query	   *q = analyse(source, aggregates, window_type);
	Aggregator *a = palloc0(sizeof(Aggregator));
	Preparing	p = {a, source, deparse_context_for(get_rel_name(source), source)};
	int			naggrefs = 0;
	ListCell   *lc;

	(void) count_aggrefs((Node *) q->targetList, &naggrefs);
	a->aggs = palloc0(sizeof(AggDef) * Max(naggrefs, 1));
	a->outs = palloc0(sizeof(AggOutput) * list_length(q->targetList));
	foreach(lc, q->targetList)
	{
		setup_output(&p, &a->outs[a->nout], lfirst_node(TargetEntry, lc));
		a->nout++;
	}
	/* plain aggregates need no evaluation of their own, step after step */
	if (a->derived)
		setup_params(a, window_type);
	a->nstates = a->naggs;
	if (evictor != NULL && evictor->kind != EVICT_NONE)
		setup_evictor(a, evictor, source, time_column, p.dpcontext);
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

/* The state of a window without rows: the initial value, or none. */
static void
init_one(AggDef *d, AggValue *v)
{
	v->isnull = d->initnull;
	v->empty = d->initnull;
	v->value = d->initnull ? (Datum) 0 :
		datumCopy(d->initval, d->transbyval, d->translen);
}

void
agg_init(Aggregator *a, AggValue *states)
{
	for (int i = 0; i < a->nstates; i++)
	{
		if (state_def(a, i)->kept)
			states[i] = (AggValue) {(Datum) 0, true, true};
		else
			init_one(&a->aggs[i], &states[i]);
	}
}

/*
 * A copy of a by-reference value to keep in a window's state.  A row's
 * varlena may point into the queue's TOAST table, which nodeAgg.c can keep
 * for the length of its query, but a window's state outlives the row: it
 * keeps the value's own bytes.
 */
static Datum
state_copy(Datum value, bool byval, int len)
{
	if (len == -1 && VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(value)))
		return PointerGetDatum(detoast_external_attr((struct varlena *) DatumGetPointer(value)));
	return datumCopy(value, byval, len);
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
		result = state_copy(result, false, d->translen);
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
			v->value = state_copy(args[0], d->transbyval, d->translen);
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

/* The result of one state, as nodeAgg.c's finalize_aggregate makes it. */
static void
final_one(Aggregator *a, AggDef *d, AggValue *v, Datum *out, bool *outnull)
{
	LOCAL_FCINFO(fcinfo, FUNC_MAX_ARGS);

	if (!d->has_final)
	{
		*out = v->value;
		*outnull = v->isnull;
		return;
	}
	if (d->finalfn.fn_strict && v->isnull)
	{
		*out = (Datum) 0;
		*outnull = true;
		return;
	}
	InitFunctionCallInfoData(*fcinfo, &d->finalfn,
							 1 + (d->final_extra ? d->nargs : 0),
							 d->collation, (Node *) a->context, NULL);
	fcinfo->args[0].value = v->value;
	fcinfo->args[0].isnull = v->isnull;
	for (int j = 1; j < fcinfo->nargs; j++)
		fcinfo->args[j].isnull = true;
	*out = FunctionCallInvoke(fcinfo);
	*outnull = fcinfo->isnull;
}

/* Room for "extra" more bytes of rows in a kept state, made in statecxt. */
static KeptState *
kept_room(Aggregator *a, AggDef *d, AggValue *v, Size extra)
{
	KeptState  *st = v->isnull ? NULL : (KeptState *) DatumGetPointer(v->value);
	Size		need = (st ? VARSIZE(st) : sizeof(KeptState)) + extra;

	if (need > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the rows kept by aggregate \"%s\" in one window exceed 1 GB", d->name),
				 errhint("Use shorter windows.")));
	if (st == NULL)
	{
		Size		space = Max(need, 64);

		st = MemoryContextAlloc(a->statecxt, space);
		SET_VARSIZE(st, sizeof(KeptState));
		st->space = space;
		st->nrows = 0;
		st->nset = 0;
	}
	else if (need > (Size) st->space)
	{
		Size		space = Min(Max(need, (Size) st->space * 2), MaxAllocSize);

		st = repalloc(st, space);
		st->space = space;
	}
	v->value = PointerGetDatum(st);
	v->isnull = false;
	v->empty = false;
	return st;
}

/* The rows of a kept state, read back into values (in the current context). */
typedef struct RowSet
{
	KeptRows   *kr;
	int			n;
	Datum	   *vals;			/* row i's values from vals[i * ncols] */
	bool	   *nulls;
	char	  **at;				/* row i's bytes in the state */
	Size	   *len;
	int		   *order;			/* the rows in their order, after sort_rows */
} RowSet;

static void
read_rows(KeptRows *kr, KeptState *st, RowSet *rs)
{
	char	   *p = KEPT_ROWS(st);

	rs->kr = kr;
	rs->n = st->nrows;
	rs->vals = palloc(sizeof(Datum) * Max(rs->n * kr->ncols, 1));
	rs->nulls = palloc(sizeof(bool) * Max(rs->n * kr->ncols, 1));
	rs->at = palloc(sizeof(char *) * Max(rs->n, 1));
	rs->len = palloc(sizeof(Size) * Max(rs->n, 1));
	rs->order = palloc(sizeof(int) * Max(rs->n, 1));
	for (int r = 0; r < rs->n; r++)
	{
		rs->at[r] = p;
		for (int c = 0; c < kr->ncols; c++)
			rs->vals[r * kr->ncols + c] = datumRestore(&p, &rs->nulls[r * kr->ncols + c]);
		rs->len[r] = p - rs->at[r];
		rs->order[r] = r;
	}
}

static int
compare_rows(const void *a, const void *b, void *arg)
{
	RowSet	   *rs = arg;
	KeptRows   *kr = rs->kr;
	int			x = *(const int *) a * kr->ncols;
	int			y = *(const int *) b * kr->ncols;

	for (int k = 0; k < kr->nkeys; k++)
	{
		int			c = kr->keycol[k];
		int			cmp = ApplySortComparator(rs->vals[x + c], rs->nulls[x + c],
											  rs->vals[y + c], rs->nulls[y + c],
											  &kr->keys[k]);

		if (cmp != 0)
			return cmp;
	}
	if (kr->by_arrival)
	{
		int64		s = DatumGetInt64(rs->vals[x + kr->ncols - 1]);
		int64		t = DatumGetInt64(rs->vals[y + kr->ncols - 1]);

		return (s > t) - (s < t);
	}
	return 0;
}

/* The rows in the aggregate's order; with DISTINCT, each once. */
static void
sort_rows(RowSet *rs)
{
	int			n = 0;

	qsort_arg(rs->order, rs->n, sizeof(int), compare_rows, rs);
	if (!rs->kr->distinct)
		return;
	for (int i = 0; i < rs->n; i++)
		if (n == 0 || compare_rows(&rs->order[n - 1], &rs->order[i], rs) != 0)
			rs->order[n++] = rs->order[i];
	rs->n = n;
}

/*
 * DISTINCT keeps a set: rows go after it unsorted, and once they are as
 * many as it holds (or the state is stored), set and rows are sorted into
 * one set again, so that a window holds at most about twice its distinct
 * values, and each row costs a logarithmic share of a sort.
 */
static void
kept_set(Aggregator *a, AggDef *d, AggValue *v, bool now)
{
	KeptState  *st = (KeptState *) DatumGetPointer(v->value);
	MemoryContext tmp;
	MemoryContext old;
	KeptState  *set;
	RowSet		rs;
	Size		size = sizeof(KeptState);
	char	   *p;

	if (!d->kept->distinct || v->isnull || st->nrows == st->nset ||
		(!now && st->nrows - st->nset < Max(st->nset, 16)))
		return;
	tmp = AllocSetContextCreate(CurrentMemoryContext, "windowing distinct rows",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	read_rows(d->kept, st, &rs);
	sort_rows(&rs);
	for (int i = 0; i < rs.n; i++)
		size += rs.len[rs.order[i]];
	set = MemoryContextAlloc(a->statecxt, size);
	p = KEPT_ROWS(set);
	for (int i = 0; i < rs.n; i++)
	{
		memcpy(p, rs.at[rs.order[i]], rs.len[rs.order[i]]);
		p += rs.len[rs.order[i]];
	}
	SET_VARSIZE(set, size);
	set->space = size;
	set->nrows = set->nset = rs.n;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	pfree(st);
	v->value = PointerGetDatum(set);
}

/* Keeps a row's inputs, as the aggregate's transition would take them. */
static void
keep_row(Aggregator *a, AggDef *d, AggValue *v, Datum *in, bool *nulls)
{
	KeptRows   *kr = d->kept;
	Datum	   *vals = kr->row;
	Size		size = 0;
	KeptState  *st;
	char	   *p;

	/* a strict transition function would skip it, as nodeAgg.c does before sorting */
	if (kr->skip_nulls)
		for (int i = 0; i < d->nargs; i++)
			if (nulls[i])
				return;
	for (int i = 0; i < kr->ncols; i++)
	{
		vals[i] = in[i];
		/* the row's own bytes, not a pointer into TOAST */
		if (kr->typlen[i] == -1 && !nulls[i])
			vals[i] = PointerGetDatum(PG_DETOAST_DATUM_PACKED(in[i]));
		size += datumEstimateSpace(vals[i], nulls[i], kr->typbyval[i], kr->typlen[i]);
	}
	st = kept_room(a, d, v, size);
	p = (char *) st + VARSIZE(st);
	for (int i = 0; i < kr->ncols; i++)
		datumSerialize(vals[i], nulls[i], kr->typbyval[i], kr->typlen[i], &p);
	SET_VARSIZE(st, p - (char *) st);
	st->nrows++;
	kept_set(a, d, v, false);
}

/* Merging windows or slices: the rows of both. */
static void
kept_combine(Aggregator *a, AggDef *d, AggValue *into, AggValue *from)
{
	KeptState  *f = (KeptState *) DatumGetPointer(from->value);
	KeptState  *st;
	Size		size;

	if (from->isnull)
		return;
	size = VARSIZE(f) - sizeof(KeptState);
	st = kept_room(a, d, into, size);
	memcpy((char *) st + VARSIZE(st), KEPT_ROWS(f), size);
	SET_VARSIZE(st, VARSIZE(st) + size);
	st->nrows += f->nrows;
	kept_set(a, d, into, false);
}

/* row i's value of the sorted rows of an ordered-set aggregate */
#define SORTED(rs, i) ((rs)->vals[(rs)->order[i] * (rs)->kr->ncols])

/* The first value of the longest run of equal values, as mode() gives it. */
static Datum
mode_of(RowSet *rs)
{
	int			best = 0;
	int			best_len = 0;
	int			start = 0;

	for (int i = 1; i <= rs->n; i++)
		if (i == rs->n || compare_rows(&rs->order[i - 1], &rs->order[i], rs) != 0)
		{
			if (i - start > best_len)
			{
				best = start;
				best_len = i - start;
			}
			start = i;
		}
	return SORTED(rs, best);
}

/* percentile_cont: between the two values around the fraction, linearly. */
static Datum
percentile_cont(KeptRows *kr, RowSet *rs, double f)
{
	double		pos = f * (rs->n - 1);
	int64		first = (int64) floor(pos);
	int64		second = (int64) ceil(pos);
	Datum		lo = SORTED(rs, first);
	Datum		hi = SORTED(rs, second);
	double		part = pos - first;

	if (first == second)
		return lo;
	if (kr->ordered_set == F_PERCENTILE_CONT_FLOAT8_FLOAT8)
		return Float8GetDatum(DatumGetFloat8(lo) +
							  (part * (DatumGetFloat8(hi) - DatumGetFloat8(lo))));
	return DirectFunctionCall2(interval_pl,
							   DirectFunctionCall2(interval_mul,
												   DirectFunctionCall2(interval_mi, hi, lo),
												   Float8GetDatum(part)),
							   lo);
}

/*
 * An ordered-set aggregate over its sorted rows (without NULLs), with the
 * arithmetic of orderedsetaggs.c, which sorts the same rows the same way.
 */
static Datum
ordered_set_result(KeptRows *kr, RowSet *rs, bool *isnull)
{
	double		f = DatumGetFloat8(kr->fraction);

	*isnull = (kr->ordered_set != F_MODE && kr->fraction_null) || rs->n == 0;
	if (*isnull)
		return (Datum) 0;
	if (kr->ordered_set == F_MODE)
		return mode_of(rs);
	if (kr->ordered_set == F_PERCENTILE_DISC_FLOAT8_ANYELEMENT)
		return SORTED(rs, Max((int64) ceil(f * rs->n), 1) - 1);
	return percentile_cont(kr, rs, f);
}

/*
 * The aggregate's result over the kept rows: its own state built afresh,
 * in a context of its own, so that what the transition functions allocate
 * in the aggregate context goes with it.
 */
static void
kept_final(Aggregator *a, AggDef *d, AggValue *v, Datum *out, bool *outnull)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext statecxt = a->statecxt;
	MemoryContext tmp = AllocSetContextCreate(caller, "windowing kept rows",
											  ALLOCSET_DEFAULT_SIZES);
	AggValue	state;
	RowSet		rs;
	Datum		result;
	bool		isnull;

	MemoryContextSwitchTo(tmp);
	agg_bind_context(a, tmp);
	rs.n = 0;
	if (!v->isnull)
	{
		read_rows(d->kept, (KeptState *) DatumGetPointer(v->value), &rs);
		sort_rows(&rs);
	}
	if (OidIsValid(d->kept->ordered_set))
		result = ordered_set_result(d->kept, &rs, &isnull);
	else
	{
		init_one(d, &state);
		for (int i = 0; i < rs.n; i++)
			advance_one(a, d, &state, &rs.vals[rs.order[i] * d->kept->ncols],
						&rs.nulls[rs.order[i] * d->kept->ncols]);
		final_one(a, d, &state, &result, &isnull);
	}
	agg_bind_context(a, statecxt);
	MemoryContextSwitchTo(caller);
	*out = isnull ? (Datum) 0 : datumCopy(result, d->resultbyval, d->resultlen);
	*outnull = isnull;
	MemoryContextDelete(tmp);
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
	for (int i = 0; i < a->nstates; i++)
	{
		AggDef	   *d = state_def(a, i);
		Datum	   *in = args + d->firstarg;
		bool	   *innulls = argnulls + d->firstarg;

		if (!passes_filter(d, in, innulls))
			continue;
		if (d->kept)
			keep_row(a, d, &states[i], in, innulls);
		else
			advance_one(a, d, &states[i], in, innulls);
	}
	a->advancing = false;
}

/* The current result of every aggregate; the states stay usable. */
static void
agg_final(Aggregator *a, AggValue *states, Datum *out, bool *outnull)
{
	for (int i = 0; i < a->naggs; i++)
	{
		if (a->aggs[i].kept)
			kept_final(a, &a->aggs[i], &states[i], &out[i], &outnull[i]);
		else
			final_one(a, &a->aggs[i], &states[i], &out[i], &outnull[i]);
	}
}

/*
 * The result columns of a window [start, end) from its states, which stay
 * usable.  Derived columns are evaluated in memory that the next call
 * reuses: a caller that keeps results copies them.
 */
void
agg_results(Aggregator *a, AggValue *states, int64 start, int64 end,
			Datum *out, bool *outnull)
{
	ParamExternData *prm;

	if (!a->derived)
	{
		agg_final(a, states, out, outnull);
		return;
	}
	prm = a->bounds->params;
	prm[0].value = Int64GetDatum(start);
	prm[1].value = Int64GetDatum(end);
	prm[2].value = Int64GetDatum(end - 1);
	for (int i = 0; i < NBOUNDS; i++)
		prm[i].isnull = false;
	agg_final(a, states, a->finals, a->finalnulls);
	for (int i = 0; i < a->naggs; i++)
	{
		prm[NBOUNDS + i].value = a->finals[i];
		prm[NBOUNDS + i].isnull = a->finalnulls[i];
	}
	ResetExprContext(a->econtext);
	for (int i = 0; i < a->nout; i++)
	{
		AggOutput  *o = &a->outs[i];

		if (o->agg >= 0)
		{
			out[i] = a->finals[o->agg];
			outnull[i] = a->finalnulls[o->agg];
		}
		else
			out[i] = ExecEvalExprSwitchContext(o->expr, a->econtext, &outnull[i]);
	}
}

/* Can every aggregate merge two states?  If not, names the first that cannot. */
bool
agg_can_combine(Aggregator *a, const char **which)
{
	for (int i = 0; i < a->naggs; i++)
		if (!a->aggs[i].has_combine && !a->aggs[i].kept)
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
	for (int i = 0; i < a->nstates; i++)
	{
		if (state_def(a, i)->kept)
			kept_combine(a, state_def(a, i), &into[i], &from[i]);
		else
			combine_one(a, &a->aggs[i], &into[i], &from[i]);
	}
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

/* Is a state stored as a varlena rather than as its type? */
static bool
stored_as_varlena(AggDef *d)
{
	return d->kept || d->internal;
}

/*
 * A stored state's flag byte.  STATE_EMPTY alone (or 0) is followed by the
 * value through datumSerialize, as every state was stored before
 * STATE_BYVAL and STATE_NULL, which window_state and state_log may still
 * hold.  A by-value state takes its Datum's bytes after the flag, and a
 * null one nothing: datumSerialize's header would be a third of a count's
 * state, and windows held by the million keep them in memory.
 */
#define STATE_EMPTY 1
#define STATE_BYVAL 2
#define STATE_NULL 4

/* The flag byte of state i (STATE_EMPTY, STATE_BYVAL, STATE_NULL). */
static char
state_flag(Aggregator *a, AggValue *states, int i)
{
	AggDef	   *d = state_def(a, i);
	char		flag = states[i].empty ? STATE_EMPTY : 0;

	if (states[i].isnull)
		return flag | STATE_NULL;
	if (d->transbyval && !stored_as_varlena(d))
		return flag | STATE_BYVAL;
	return flag;
}

/*
 * The states of one window as one bytea: per aggregate a flag byte, then
 * its value (internal states through their serialize function first,
 * kept rows as they are).
 */
bytea *
agg_serialize(Aggregator *a, AggValue *states)
{
	Datum	   *vals = palloc(sizeof(Datum) * a->nstates);
	Size		size = VARHDRSZ + a->nstates;
	bytea	   *out;
	char	   *p;

	for (int i = 0; i < a->nstates; i++)
	{
		AggDef	   *d = state_def(a, i);
		char		flag;

		if (d->kept)
			kept_set(a, d, &states[i], true);
		vals[i] = states[i].value;
		if (d->internal && !d->kept && !states[i].isnull)
			vals[i] = call_with_context(a, &d->serialfn, vals[i], 1);
		flag = state_flag(a, states, i);
		if (flag & STATE_BYVAL)
			size += sizeof(Datum);
		else if (!(flag & STATE_NULL))
			size += datumEstimateSpace(vals[i], false,
									   stored_as_varlena(d) ? false : d->transbyval,
									   stored_as_varlena(d) ? -1 : d->translen);
	}
	out = palloc(size);
	SET_VARSIZE(out, size);
	p = VARDATA(out);
	for (int i = 0; i < a->nstates; i++)
	{
		AggDef	   *d = state_def(a, i);
		char		flag = state_flag(a, states, i);

		*p++ = flag;
		if (flag & STATE_BYVAL)
		{
			memcpy(p, &vals[i], sizeof(Datum));
			p += sizeof(Datum);
		}
		else if (!(flag & STATE_NULL))
			datumSerialize(vals[i], false,
						   stored_as_varlena(d) ? false : d->transbyval,
						   stored_as_varlena(d) ? -1 : d->translen, &p);
	}
	return out;
}

/* The value of a stored state whose flag byte was "flag", at *p. */
static Datum
state_value(char flag, char **p, bool *isnull)
{
	Datum		v = (Datum) 0;

	*isnull = (flag & STATE_NULL) != 0;
	if (*isnull)
		return v;
	if (flag & STATE_BYVAL)
	{
		memcpy(&v, *p, sizeof(Datum));
		*p += sizeof(Datum);
		return v;
	}
	return datumRestore(p, isnull);
}

void
agg_deserialize(Aggregator *a, bytea *data, AggValue *states)
{
	char	   *p = VARDATA_ANY(data);
	MemoryContext old = MemoryContextSwitchTo(a->statecxt);

	for (int i = 0; i < a->nstates; i++)
	{
		AggDef	   *d = state_def(a, i);
		char		flag = *p++;
		Datum		v;

		states[i].empty = (flag & STATE_EMPTY) != 0;
		v = state_value(flag, &p, &states[i].isnull);
		if (d->kept && !states[i].isnull)
			((KeptState *) DatumGetPointer(v))->space = VARSIZE(DatumGetPointer(v));
		else if (d->internal && !states[i].isnull)
			v = call_with_context(a, &d->deserialfn, v, 2);
		states[i].value = v;
	}
	MemoryContextSwitchTo(old);
}

/*
 * The evictor of a window that fires, before its aggregates' results are
 * taken (after false) or after (after true), as its rule says: the rows
 * it drops leave the window, and the aggregates run again over the rest,
 * in arrival order.
 */
void
agg_evict(Aggregator *a, AggValue *states, bool after)
{
	AggEvictor *ev = a->evict;
	KeptRows   *kr;
	MemoryContext tmp;
	MemoryContext old;
	RowSet		rs;
	EvictorRows er;
	int64	   *ts;
	double	   *input;
	bool	   *input_null;
	bool	   *keep;

	if (ev == NULL || ev->rule.after != after || states[a->naggs].isnull)
		return;
	kr = ev->def.kept;
	tmp = AllocSetContextCreate(CurrentMemoryContext, "windowing evictor", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	read_rows(kr, (KeptState *) DatumGetPointer(states[a->naggs].value), &rs);
	sort_rows(&rs);
	ts = palloc(sizeof(int64) * Max(rs.n, 1));
	input = palloc(sizeof(double) * Max(rs.n, 1));
	input_null = palloc(sizeof(bool) * Max(rs.n, 1));
	keep = palloc(sizeof(bool) * Max(rs.n, 1));
	for (int i = 0; i < rs.n; i++)
	{
		int			r = rs.order[i] * kr->ncols;

		ts[i] = ev->ts_col >= 0 ? DatumGetInt64(rs.vals[r + ev->ts_col]) : 0;
		input_null[i] = ev->input_col < 0 || rs.nulls[r + ev->input_col];
		input[i] = input_null[i] ? 0 : trigger_input_value(ev->input_type, rs.vals[r + ev->input_col]);
		input_null[i] |= isnan(input[i]);
	}
	er = (EvictorRows) {rs.n, ts, input, input_null};
	if (evictor_keep(&ev->rule, &er, keep) < rs.n)
	{
		MemoryContextSwitchTo(a->statecxt);
		agg_init(a, states);
		MemoryContextSwitchTo(tmp);
		for (int i = 0; i < rs.n; i++)
			if (keep[i])
				agg_advance(a, states, &rs.vals[rs.order[i] * kr->ncols],
							&rs.nulls[rs.order[i] * kr->ncols]);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}
