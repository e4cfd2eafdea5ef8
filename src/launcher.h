/*
 * launcher.h
 *		The launcher: one background worker that keeps a pipeline worker
 *		running in each database that needs one.
 *
 * The launcher owns the shared slot table; workers only attach to the slot
 * they were started for and say, on the way out, why they left, which is
 * how the launcher tells an idle database from a failing one.  A
 * database's first worker also says how many workers its pipelines' parts
 * need.
 */
#ifndef WINDOWING_LAUNCHER_H
#define WINDOWING_LAUNCHER_H

#include "postgres.h"

#include "fmgr.h"
#include "postmaster/bgworker.h"

/* Why a worker left; the launcher picks the restart delay from it. */
typedef enum WorkerExit
{
	WORKER_EXIT_FAILED,			/* error, signal, or never attached */
	WORKER_EXIT_IDLE,			/* no extension or no running pipeline */
	WORKER_EXIT_YIELD			/* its database is being dropped, renamed... */
} WorkerExit;

extern PGDLLIMPORT int windowing_max_workers;

extern void launcher_request_shmem(void);
extern void launcher_register(void);
extern bool launcher_attach_worker(int *part);
extern void launcher_want_workers(int parts);
extern void launcher_set_worker_exit(WorkerExit how);
extern void windowing_wake_database(Oid dboid);

extern PGDLLEXPORT void windowing_launcher_main(Datum main_arg) pg_attribute_noreturn();
extern PGDLLEXPORT Datum windowing_wake_launcher(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum windowing_queue_rows_added(PG_FUNCTION_ARGS);

#endif							/* WINDOWING_LAUNCHER_H */
