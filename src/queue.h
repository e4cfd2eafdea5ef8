/*
 * queue.h
 *		Reclaiming consumed queue storage in bulk.
 */
#ifndef WINDOWING_QUEUE_H
#define WINDOWING_QUEUE_H

#include "postgres.h"

#include "catalog.h"

extern int	queue_truncate_size;
extern int	queue_lock_timeout;

/* What came of an attempt to empty a queue. */
typedef enum QueueReclaim
{
	QUEUE_EMPTIED,
	QUEUE_BUSY,					/* producers held its lock */
	QUEUE_NOT_READY				/* a pipeline of it does not run, is held or has
								 * a table locked, or the queue keeps its rows */
} QueueReclaim;

extern bool queue_needs_reclaim(Oid source);
extern QueueReclaim queue_reclaim(Oid source, const PipelinePart *volatile *stepping);

#endif							/* WINDOWING_QUEUE_H */
