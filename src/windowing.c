/*
 * windowing.c
 *		Module entry point.
 *
 * _PG_init follows the order of PostgreSQL's contrib modules: reloadable
 * GUCs first; then, only when preloaded, the restart-only ones, the
 * reservation of the "windowing." prefix (so a misspelt setting is reported
 * instead of silently ignored), the shared-memory hooks and the launcher of
 * the pipeline workers.  The SQL window functions need none of it and work
 * without shared_preload_libraries; pipelines then run only when
 * windowing.process() is called.
 */
#include "compat.h"

#include <limits.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "postmaster/postmaster.h"
#include "utils/guc.h"

#include "distributed.h"
#include "launcher.h"
#include "pipeline.h"
#include "queue.h"
#include "queue_helper.h"
#include "state_slots.h"
#include "state_store.h"
#include "worker.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomIntVariable("windowing.poll_interval",
							"Time a pipeline worker sleeps when it finds nothing to do.",
							"Rows committed into a queue wake the worker at once; the sleep "
							"bounds how late it sees the clock close windows (processing "
							"time, idle timeouts).",
							&worker_poll_interval,
							100, 1, 60000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("windowing.worker_step_time",
							"Longest time a pipeline worker reads rows in one step.",
							"A longer backlog is read in more steps, and the "
							"database's other pipelines take their turns between them.",
							&worker_step_time,
							1000, 1, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("windowing.worker_round_interval",
							"Shortest time between the starts of two rounds of a pipeline worker's steps.",
							"Rows committed meanwhile wait for the next round, so a trickle of "
							"small commits is read in fewer, bigger steps, at the cost of up to "
							"this much latency; 0 steps as soon as rows are committed.",
							&worker_round_interval,
							0, 0, 60 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("windowing.worker_batch_time",
							"Longest time the steps of a pipeline worker's round share one transaction.",
							"Small steps of several pipelines then pay for one commit; a step "
							"that joins the transaction stops at this time, and the results of "
							"the steps before it wait for it.  0 commits every step on its own.",
							&worker_batch_time,
							2, 0, 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("windowing.step_memory",
							"Memory a pipeline step may allocate beyond the window state it loads.",
							"A step that reaches it commits what it has read and the next "
							"step goes on from there; -1 means maintenance_work_mem.",
							&pipeline_step_memory,
							-1, -1, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("windowing.state_memory",
							"Memory a process may keep pipelines' window state in between their steps.",
							"The worker, or a backend that runs process(), keeps it; a pipeline "
							"whose state does not fit keeps the keys its steps touch and reads "
							"the others from the heap as rows name them.",
							&state_store_memory,
							64 * 1024, 0, MAX_KILOBYTES,
							PGC_SIGHUP, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("windowing.queue_truncate_size",
							"Size past which the worker empties a consumed queue.",
							"It truncates the table once every pipeline reading it has "
							"consumed its rows; a queue with retention 'keep' is never emptied.",
							&queue_truncate_size,
							16 * 1024, 8, MAX_KILOBYTES,
							PGC_SIGHUP, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("windowing.queue_lock_timeout",
							"Longest wait for a queue's lock to empty it.",
							"Producers inserting into the queue wait behind the lock, so this "
							"is the longest they stall; a queue not locked in time is emptied later.",
							&queue_lock_timeout,
							100, 1, 60000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("windowing.read_helper_rows",
							"Rows a step must expect to read for a helper process to read the queue for it.",
							"The helper reads the queue while the step works on the rows "
							"read so far; 0 never starts one.",
							&queue_helper_min_rows,
							1000000, 0, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomStringVariable("windowing.clock",
							   "Clock that pipeline steps read instead of the system clock (for tests).",
							   "A timestamp, or empty for the system clock.  It drives processing "
							   "time and idle timeouts.",
							   &pipeline_clock_setting,
							   "",
							   PGC_USERSET, 0,
							   NULL, NULL, NULL);

	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("windowing.max_workers",
							"Maximum number of databases whose pipelines run at the same time.",
							"Each runs one background worker, counted in max_worker_processes; "
							"0 runs none.",
							&windowing_max_workers,
							8, 0, MAX_BACKENDS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("windowing");

	distributed_init();
	state_slots_request_shmem();

	if (windowing_max_workers == 0)
		return;
	launcher_request_shmem();
	launcher_register();
}
