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

/* The extension's row, as this transaction read it. */
static LocalTransactionId read_in = InvalidLocalTransactionId;
static Oid	extension_oid = InvalidOid;
static char version[NAMEDATALEN];	/* "" if not installed */

/*
 * Reads the extension's OID and version, once per transaction (as plpgsql
 * remembers its simple expressions, by local transaction id).
 */
static void
read_extension(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	if (read_in == MyProc->lxid)
		return;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("windowing"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	extension_oid = InvalidOid;
	version[0] = '\0';
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		extension_oid = ((Form_pg_extension) GETSTRUCT(tup))->oid;
		if (!isnull)
			text_to_cstring_buffer(DatumGetTextPP(d), version, sizeof(version));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	read_in = MyProc->lxid;
}

/*
 * Errors out unless the database's extension is at the library's version.
 * A mismatch is read again next time: the update may come in between.
 */
void
version_check(void)
{
	read_extension();
	if (version[0] != '\0' && strcmp(version, WINDOWING_VERSION) != 0)
	{
		read_in = InvalidLocalTransactionId;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("windowing's library is version %s but the database has version %s of the extension",
						WINDOWING_VERSION, version),
				 errhint("Run ALTER EXTENSION windowing UPDATE.")));
	}
}

/*
 * The OID of the database's extension (InvalidOid if none), which a DROP
 * and CREATE EXTENSION change: pipeline ids start from 1 again, and what
 * is kept by pipeline id outside the database (state_store.c) must not
 * pass to a new pipeline of the same id.
 */
Oid
windowing_extension_oid(void)
{
	read_extension();
	return extension_oid;
}
