/*
 * pair_writer.c
 *		An interval join's pairs into its result table the way COPY FROM
 *		writes rows.
 *
 * A join's select list is SQL over its two inputs' columns.  As a
 * statement over arrays of the pairs (INSERT ... SELECT ... FROM unnest),
 * every pair went through the executor on its own: two composites taken
 * apart a field at a time, a heap insert and a WAL record for each row, a
 * third of a step at a million keys.  Here the statement is planned once
 * per backend, with each input's columns as parameters (kept as plans.c
 * keeps statements, planned again when what it uses changes):
 *
 *	 INSERT INTO result SELECT <select list>
 *	 FROM (SELECT $1 AS a, $2 AS b) AS left, (SELECT $3 AS c ...) AS right
 *
 * which the planner flattens to one expression per result column over the
 * parameters (the result table's defaults and the INSERT's coercions
 * included).  Each pair's two rows are taken apart once into the
 * parameters as the pair is made (while its rows are still in the
 * processor's caches), the expressions give the result row, and the rows
 * go into the table in batches (bulk_insert.c).  A statement that plans to more
 * than that (a subquery, a rule, a set-returning function) or a table
 * that bulk_insert does not write as INSERT would (triggers, row
 * security, partitions) is left to the caller's statement.
 */
#include "compat.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "executor/executor.h"
#include "lib/stringinfo.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/resowner.h"

#include "bulk_insert.h"
#include "pair_writer.h"
#include "plans.h"

struct PairWriter
{
	Oid			relid;
	int			ncols;
	const char **names;			/* the result table's columns written */
	Oid		   *types;
	ExprState **exprs;			/* and the expression of each */
	ExprContext *econtext;
	ParamListInfo params;
	int			first[2];		/* each side's first parameter */
	int			nshown[2];
	int		   *attrs[2];		/* each parameter's attribute, 0-based */
	TupleDesc	desc[2];
	Datum	   *values[2];		/* a row taken apart */
	bool	   *nulls[2];
	BulkInsert *bulk;
	Datum		pair[2];		/* the pair being written */
	CachedPlan *plan;			/* the statement's, pinned */
	ResourceOwner plan_owner;
};

/*
 * The source of the INSERT planned from "sql" (its plan kept by plans.c and
 * pinned in w until pair_writer_end), if it is a Result node that computes
 * its row from the parameters alone, else NULL.
 */
static Result *
insert_source(PairWriter *w, const char *sql, Oid *types, int nparams)
{
	PlannedStmt *ps;
	Plan	   *top;
	Plan	   *source;

	w->plan_owner = CurrentResourceOwner;
	w->plan = plans_generic_plan(sql, nparams, types);
	if (w->plan == NULL || list_length(w->plan->stmt_list) != 1)
		return NULL;
	ps = linitial_node(PlannedStmt, w->plan->stmt_list);
	top = ps->planTree;
	if (ps->commandType != CMD_INSERT || ps->hasReturning || ps->subplans != NIL ||
		!IsA(top, ModifyTable) || ((ModifyTable *) top)->onConflictAction != ONCONFLICT_NONE ||
		list_length(ps->resultRelations) != 1 || top->initPlan != NIL)
		return NULL;
	source = outerPlan(top);
	if (source == NULL || !IsA(source, Result) || outerPlan(source) != NULL ||
		((Result *) source)->resconstantqual != NULL || source->qual != NIL ||
		source->initPlan != NIL)
		return NULL;
	w->relid = rt_fetch(linitial_int(ps->resultRelations), ps->rtable)->relid;
	return (Result *) source;
}

/* Lets go of the plan, once its expressions are not needed. */
static void
release_plan(PairWriter *w)
{
	if (w->plan != NULL)
		ReleaseCachedPlan(w->plan, w->plan_owner);
	w->plan = NULL;
}

/* Side i's columns as parameters from the first free one, into "sql". */
static void
side_parameters(PairWriter *w, int i, const PairSide *s, StringInfo sql, Oid *types)
{
	int			n = w->first[i];

	appendStringInfoString(sql, i == 0 ? "(SELECT " : ", (SELECT ");
	w->attrs[i] = palloc(sizeof(int) * Max(s->desc->natts, 1));
	for (int a = 0; a < s->desc->natts; a++)
	{
		if (!s->shown[a])
			continue;
		appendStringInfo(sql, "%s$%d AS %s", n > w->first[i] ? ", " : "", n + 1,
						 quote_identifier(NameStr(TupleDescAttr(s->desc, a)->attname)));
		types[n] = TupleDescAttr(s->desc, a)->atttypid;
		w->attrs[i][n++ - w->first[i]] = a;
	}
	appendStringInfo(sql, ") AS %s", quote_identifier(s->alias));
	w->nshown[i] = n - w->first[i];
	w->desc[i] = s->desc;
	w->values[i] = palloc(sizeof(Datum) * Max(s->desc->natts, 1));
	w->nulls[i] = palloc(sizeof(bool) * Max(s->desc->natts, 1));
}

/* The result table's columns the source computes, with their expressions. */
static void
result_columns(PairWriter *w, Result *source)
{
	Relation	rel = table_open(w->relid, AccessShareLock);
	ListCell   *lc;

	w->names = palloc(sizeof(char *) * list_length(source->plan.targetlist));
	w->types = palloc(sizeof(Oid) * list_length(source->plan.targetlist));
	w->exprs = palloc(sizeof(ExprState *) * list_length(source->plan.targetlist));
	foreach(lc, source->plan.targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), tle->resno - 1);

		if (tle->resjunk || att->attisdropped)
			continue;
		w->names[w->ncols] = pstrdup(NameStr(att->attname));
		w->types[w->ncols] = exprType((Node *) tle->expr);
		w->exprs[w->ncols++] = ExecInitExpr(tle->expr, NULL);
	}
	table_close(rel, AccessShareLock);
}

PairWriter *
pair_writer_create(const char *result_table, const char *select_list, const PairSide sides[2])
{
	PairWriter *w = palloc0(sizeof(PairWriter));
	int			nattrs = sides[0].desc->natts + sides[1].desc->natts;
	Oid		   *types = palloc(sizeof(Oid) * Max(nattrs, 1));
	StringInfoData sql;
	Result	   *source;
	int			n;

	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s SELECT %s FROM ", result_table, select_list);
	for (int i = 0; i < 2; i++)
	{
		w->first[i] = i == 0 ? 0 : w->nshown[0];
		side_parameters(w, i, &sides[i], &sql, types);
	}
	n = w->nshown[0] + w->nshown[1];
	source = insert_source(w, sql.data, types, n);
	if (source != NULL)
	{
		result_columns(w, source);
		w->bulk = bulk_insert_begin(w->relid, w->ncols, w->names, w->types);
	}
	if (w->bulk == NULL)
	{
		release_plan(w);
		return NULL;
	}
	w->params = makeParamList(n);
	for (int k = 0; k < n; k++)
		w->params->params[k] = (ParamExternData) {(Datum) 0, true, PARAM_FLAG_CONST, types[k]};
	w->params->numParams = n;
	w->econtext = CreateStandaloneExprContext();
	w->econtext->ecxt_param_list_info = w->params;
	return w;
}

/* Side i's row, or none, into its parameters. */
static void
load_side(PairWriter *w, int i, Datum row)
{
	ParamExternData *p = &w->params->params[w->first[i]];
	HeapTupleData t;

	if (row == (Datum) 0)
	{
		for (int k = 0; k < w->nshown[i]; k++)
			p[k].isnull = true;
		return;
	}
	t.t_data = (HeapTupleHeader) DatumGetPointer(row);
	t.t_len = HeapTupleHeaderGetDatumLength(t.t_data);
	ItemPointerSetInvalid(&t.t_self);
	t.t_tableOid = InvalidOid;
	heap_deform_tuple(&t, w->desc[i], w->values[i], w->nulls[i]);
	for (int k = 0; k < w->nshown[i]; k++)
	{
		p[k].value = w->values[i][w->attrs[i][k]];
		p[k].isnull = w->nulls[i][w->attrs[i][k]];
	}
}

/* The pair's result row (BulkRowFiller). */
static void
fill_pair(void *arg, int i, Datum *values, bool *nulls)
{
	PairWriter *w = arg;

	for (int side = 0; side < 2; side++)
		load_side(w, side, w->pair[side]);
	for (int c = 0; c < w->ncols; c++)
		values[c] = ExecEvalExpr(w->exprs[c], w->econtext, &nulls[c]);
}

void
pair_writer_add(PairWriter *w, Datum left, Datum right)
{
	w->pair[0] = left;
	w->pair[1] = right;
	bulk_insert_add(w->bulk, fill_pair, w, 0);
}

void
pair_writer_end(PairWriter *w)
{
	bulk_insert_end(w->bulk);
	FreeExprContext(w->econtext, true);
	release_plan(w);
}
