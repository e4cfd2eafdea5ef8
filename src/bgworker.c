/*
 * bgworker.c
 *		What every background worker of the library has in common: the
 *		launcher, the per-database workers and the queue helpers.
 */
#include "compat.h"

#include "bgworker.h"

/*
 * A background worker of this library, connected to a database, running
 * "function" and shown as "type" (its name too, unless the caller renames
 * it).
 */
void
bgworker_init(BackgroundWorker *bgw, const char *function,
						const char *type, int restart_time)
{
	memset(bgw, 0, sizeof(*bgw));
	bgw->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw->bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw->bgw_restart_time = restart_time;
	strlcpy(bgw->bgw_library_name, "windowing", BGW_MAXLEN);
	strlcpy(bgw->bgw_function_name, function, BGW_MAXLEN);
	strlcpy(bgw->bgw_name, type, BGW_MAXLEN);
	strlcpy(bgw->bgw_type, type, BGW_MAXLEN);
}
