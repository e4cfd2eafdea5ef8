/*
 * version.c
 *		Refusing to run pipelines against the catalog of another version.
 *
 * A new library installed under a database whose extension was not yet
 * updated (ALTER EXTENSION windowing UPDATE) would read columns its
 * catalog does not have, and fail with errors that name none of this.
 * Every entry point that reads the pipeline catalog checks the installed
 * version first.  pg_extension has no syscache to be invalidated through,
 * so the check reads its row, once per transaction: a step's transaction
 * costs one index lookup more, and a version changed by another session
 * is seen by the next transaction.
 */
#include "compat.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_extension.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

#include "version.h"

/* The installed version of the extension; NULL if it is not installed. */
static char *
installed_version(void)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	char	   *version = NULL;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("windowing"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		if (!isnull)
			version = TextDatumGetCString(d);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

/*
 * Errors out unless the database's extension is at the library's version.
 * Only a match is remembered, for the rest of the transaction (as plpgsql
 * remembers its simple expressions, by local transaction id).
 */
void
check_extension_version(void)
{
	static LocalTransactionId checked_in = InvalidLocalTransactionId;
	char	   *version;

	if (checked_in == MyProc->lxid)
		return;
	version = installed_version();
	if (version != NULL && strcmp(version, WINDOWING_VERSION) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("windowing's library is version %s but the database has version %s of the extension",
						WINDOWING_VERSION, version),
				 errhint("Run ALTER EXTENSION windowing UPDATE.")));
	checked_in = MyProc->lxid;
}
