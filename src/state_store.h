/*
 * state_store.h
 *		Pipelines' committed window state in shared memory.
 */
#ifndef WINDOWING_STATE_STORE_H
#define WINDOWING_STATE_STORE_H

#include "postgres.h"

extern int	state_store_memory;

extern void state_store_request_shmem(void);
extern char *state_store_get(int32 pipeline_id, int64 version, Size *size);
extern void state_store_put(int32 pipeline_id, int64 version,
							const char *image, Size size);
extern void state_store_forget(int32 pipeline_id);
extern int64 state_store_bytes(int32 pipeline_id, int64 version);

#endif							/* WINDOWING_STATE_STORE_H */
