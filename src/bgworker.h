/*
 * bgworker.h
 *		The library's background workers.
 */
#ifndef WINDOWING_BGWORKER_H
#define WINDOWING_BGWORKER_H

#include "postgres.h"

#include "postmaster/bgworker.h"

extern void bgworker_init(BackgroundWorker *bgw, const char *function,
						  const char *type, int restart_time);

#endif							/* WINDOWING_BGWORKER_H */
