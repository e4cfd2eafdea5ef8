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

extern bool queue_needs_reclaim(Oid source);
extern bool queue_reclaim(Oid source, const PipelinePart *volatile *stepping);

#endif							/* WINDOWING_QUEUE_H */
