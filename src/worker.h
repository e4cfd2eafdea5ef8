/*
 * worker.h
 *		The per-database worker that steps running pipelines.
 */
#ifndef WINDOWING_WORKER_H
#define WINDOWING_WORKER_H

#include "postgres.h"

extern PGDLLIMPORT int worker_poll_interval;
extern PGDLLIMPORT int worker_step_time;
extern PGDLLIMPORT int worker_round_interval;
extern PGDLLIMPORT int worker_batch_time;

extern PGDLLEXPORT void windowing_worker_main(Datum main_arg) pg_attribute_noreturn();

#endif							/* WINDOWING_WORKER_H */
