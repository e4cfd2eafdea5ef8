/*
 * owner.c
 *		Running code as a pipeline's owner, or as another role.
 *
 * Whoever calls, a pipeline's code (its aggregates and their inputs) runs
 * as its owner, the way VACUUM and REFRESH MATERIALIZED VIEW run a table
 * owner's code: a security-restricted operation (no SET ROLE, no temporary
 * objects), with search_path pinned to pg_catalog and every setting it
 * changes undone when it ends.  So the owner's code can neither take the
 * caller's identity (a superuser's, in the worker) nor leave anything
 * behind for the caller or for the next owner's step, and a user's objects
 * never stand in for PostgreSQL's.  The statements that must run as a
 * table's owner (writing window state, emptying a queue) and the queue
 * helper run in the same context.
 *
 * This is the only place that changes user.  An error inside is undone
 * by the rollback of the (sub)transaction, which restores the user and the
 * settings it started with: that is what a PL/pgSQL exception block around
 * process() does, and the worker rolls back its whole transaction.
 */
#include "compat.h"

#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/syscache.h"

#include "owner.h"
#include "plans.h"

void
owner_enter(OwnerContext *cx, Oid role)
{
	cx->nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	GetUserIdAndSecContext(&cx->caller, &cx->caller_sec);
	SetUserIdAndSecContext(role, cx->caller_sec |
						   SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
}

void
owner_leave(OwnerContext *cx)
{
	SetUserIdAndSecContext(cx->caller, cx->caller_sec);
	AtEOXact_GUC(false, cx->nestlevel);
}

/* The owner of a table (a queue, or the extension's own). */
Oid
owner_of_table(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

int
owner_execute(Oid role, const char *sql, int nargs, Oid *types, Datum *values)
{
	OwnerContext cx;
	int			rc;

	owner_enter(&cx, role);
	rc = plans_execute(sql, nargs, types, values, NULL, false, 0);
	owner_leave(&cx);
	return rc;
}
