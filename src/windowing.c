/*
 * windowing.c
 *		Module entry point.
 *
 * _PG_init follows the order of PostgreSQL's contrib modules: reloadable
 * GUCs first, then (only when preloaded) the restart-only ones and the
 * shared-memory hooks, then the reservation of the "windowing." prefix so a
 * misspelt setting is reported instead of silently ignored.  The SQL window
 * functions need none of it and work without shared_preload_libraries.
 */
#include "compat.h"

#include "fmgr.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	MarkGUCPrefixReserved("windowing");
}
