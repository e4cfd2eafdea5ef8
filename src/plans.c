/*
 * plans.c
 *		Statements prepared once per backend, kept by their text and
 *		parameter types.
 *
 * A pipeline step runs the same few statements every time, and parsing
 * and planning them again was most of a small step's fixed cost.  Their
 * plans are kept (SPI_keepplan) under their text and parameter types
 * (PlanKey); PostgreSQL's plan cache revalidates a kept plan after DDL on
 * what it reads, a change of search_path, or a change of user where row
 * security applies, so a kept plan is never staler than a new one.  A statement given arrays (a step's
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

/*
 * A statement is known by its text and its parameters' types: the same
 * text over a table dropped and made again under the same name may take
 * the new table's row type, and a plan keeps the types it was made with.
 */
typedef struct PlanKey
{
	const char *sql;
	int			nargs;
	const Oid  *types;
} PlanKey;

typedef struct PlanEntry
{
	PlanKey		key;			/* hash key: the text and types, copied */
	SPIPlanPtr	plan;
} PlanEntry;

#define MAX_PLANS 256

static MemoryContext plans_cxt = NULL;	/* the table, texts and types */
static HTAB *plans = NULL;

static uint32
key_hash(const void *key, Size keysize)
{
	const PlanKey *k = key;

	uint32		h = hash_bytes((const unsigned char *) k->sql, strlen(k->sql));

	for (int i = 0; i < k->nargs; i++)
		h = hash_combine(h, k->types[i]);
	return h;
}

static int
key_match(const void *a, const void *b, Size keysize)
{
	const PlanKey *ka = a;
	const PlanKey *kb = b;

	if (ka->nargs != kb->nargs ||
		(ka->nargs > 0 && memcmp(ka->types, kb->types, sizeof(Oid) * ka->nargs) != 0))
		return 1;
	return strcmp(ka->sql, kb->sql);
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
	ctl.keysize = sizeof(PlanKey);
	ctl.entrysize = sizeof(PlanEntry);
	ctl.hash = key_hash;
	ctl.match = key_match;
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
	PlanKey		key = {sql, nargs, types};
	PlanEntry  *e;
	SPIPlanPtr	plan;
	Oid		   *kept_types;

	if (plans != NULL && hash_get_num_entries(plans) >= MAX_PLANS)
		forget_plans();
	if (plans == NULL)
		create_table();
	e = hash_search(plans, &key, HASH_FIND, NULL);
	if (e != NULL)
		return e->plan;
	plan = SPI_prepare_cursor(sql, nargs, types,
							  generic ? CURSOR_OPT_GENERIC_PLAN :
							  any_array(nargs, types) ? CURSOR_OPT_CUSTOM_PLAN : 0);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	kept_types = MemoryContextAlloc(plans_cxt, sizeof(Oid) * Max(nargs, 1));
	if (nargs > 0)
		memcpy(kept_types, types, sizeof(Oid) * nargs);
	e = hash_search(plans, &key, HASH_ENTER, NULL);
	e->key = (PlanKey) {MemoryContextStrdup(plans_cxt, sql), nargs, kept_types};
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

/*
 * The kept generic plan of such a statement, planned again if what it
 * depends on changed, pinned for the caller until it calls
 * ReleaseCachedPlan(plan, the CurrentResourceOwner of this call); NULL if
 * the text holds more than one statement.
 */
CachedPlan *
plans_generic_plan(const char *sql, int nargs, Oid *types)
{
	return SPI_plan_get_cached_plan(prepare(sql, nargs, types, true));
}
