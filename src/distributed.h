/*
 * distributed.h
 *		Queues whose rows live in Citus shards.
 */
#ifndef WINDOWING_DISTRIBUTED_H
#define WINDOWING_DISTRIBUTED_H

#include "postgres.h"

extern Oid	distributed_arrival_seq(void);
extern int	distributed_shard_changes_begin(void);
extern void distributed_shard_changes_end(int nest);
extern bool distributed_citus_loaded(void);
extern void distributed_sync(void);
extern void distributed_exchange(void);
extern bool distributed_worker_stays(void);
extern void distributed_init(void);

#endif							/* WINDOWING_DISTRIBUTED_H */
