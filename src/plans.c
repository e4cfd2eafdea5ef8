/*
 * plans.c
 *		Statements prepared once per backend, kept by their text.
 *
 * A pipeline step runs the same few statements every time, and parsing
 * and planning them again was most of a small step's fixed cost.  Their
 * plans are kept (SPI_keepplan) under their text; PostgreSQL's plan cache
 * revalidates a kept plan after DDL on what it reads, a change of
 * search_path, or a change of user where row security applies, so a kept
 * plan is never staler than a new one.  A statement given arrays (a step's
 * windows or results, one array per column) is still planned at each run,
 * as it was before plans were kept: its best plan depends on how long they
 * are, which a generic plan does not know.  The texts are few: fixed ones,
 * and per pipeline the ones naming its tables; past MAX_PLANS (pipelines
 * come and go in a long-lived worker) all are freed and prepared again.
 */
#include "compat.h"

#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "plans.h"

typedef struct PlanEntry
{
	const char *sql;			/* hash key: the text, copied */
	SPIPlanPtr	plan;
} PlanEntry;

#define MAX_PLANS 256

static MemoryContext plans_cxt = NULL;	/* the table and texts */
static HTAB *plans = NULL;

static uint32
text_hash(const void *key, Size keysize)
{
	const char *sql = *(const char *const *) key;

	return hash_bytes((const unsigned char *) sql, strlen(sql));
}

static int
text_match(const void *a, const void *b, Size keysize)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static void
forget_plans(void)
{
	HASH_SEQ_STATUS seq;
	PlanEntry  *e;

	hash_seq_init(&seq, plans);
	while ((e = hash_seq_search(&seq)) != NULL)
		SPI_freeplan(e->plan);
	MemoryContextDelete(plans_cxt);
	plans = NULL;
}

static void
create_table(void)
{
	HASHCTL		ctl;

	plans_cxt = AllocSetContextCreate(TopMemoryContext, "windowing plans",
									  ALLOCSET_SMALL_SIZES);
	ctl.keysize = sizeof(const char *);
	ctl.entrysize = sizeof(PlanEntry);
	ctl.hash = text_hash;
	ctl.match = text_match;
	ctl.hcxt = plans_cxt;
	plans = hash_create("windowing plans", 64, &ctl,
						HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
}

static bool
any_array(int nargs, const Oid *types)
{
	for (int i = 0; i < nargs; i++)
		if (type_is_array(types[i]))
			return true;
	return false;
}

/*
 * The kept plan of a statement, prepared on first use; "generic" if it
 * may be planned once even with arrays among its parameters (its plan
 * does not depend on their lengths).
 */
static SPIPlanPtr
prepare(const char *sql, int nargs, Oid *types, bool generic)
{
	PlanEntry  *e;
	SPIPlanPtr	plan;

	if (plans != NULL && hash_get_num_entries(plans) >= MAX_PLANS)
		forget_plans();
	if (plans == NULL)
		create_table();
	e = hash_search(plans, &sql, HASH_FIND, NULL);
	if (e != NULL)
		return e->plan;
	plan = SPI_prepare_cursor(sql, nargs, types,
							  generic ? CURSOR_OPT_GENERIC_PLAN :
							  any_array(nargs, types) ? CURSOR_OPT_CUSTOM_PLAN : 0);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	e = hash_search(plans, &sql, HASH_ENTER, NULL);
	e->sql = MemoryContextStrdup(plans_cxt, sql);
	e->plan = plan;
	return plan;
}

SPIPlanPtr
plans_prepare(const char *sql, int nargs, Oid *types)
{
	return prepare(sql, nargs, types, false);
}

/* SPI_execute_with_args, with the statement's kept plan. */
int
plans_execute(const char *sql, int nargs, Oid *types, Datum *values,
			   const char *nulls, bool read_only, long count)
{
	return SPI_execute_plan(prepare(sql, nargs, types, false), values, nulls,
							read_only, count);
}

/*
 * The same for a statement whose plan does not depend on how long its
 * arrays are (it reads them whole, joins nothing): planned once.
 */
int
plans_execute_generic(const char *sql, int nargs, Oid *types, Datum *values,
					  const char *nulls)
{
	return SPI_execute_plan(prepare(sql, nargs, types, true), values, nulls, false, 0);
}
