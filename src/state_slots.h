/*
 * state_slots.h
 *		Which process holds each pipeline's window state in its memory, seen
 *		by every backend.
 */
#ifndef WINDOWING_STATE_SLOTS_H
#define WINDOWING_STATE_SLOTS_H

#include "postgres.h"

/* A pipeline, across the cluster: ids are numbered per installation. */
typedef struct SlotKey
{
	Oid			dboid;
	Oid			extoid;
	int32		pipeline_id;
} SlotKey;

extern void state_slots_request_shmem(void);
extern SlotKey state_slots_key(int32 pipeline_id);
extern bool state_slots_reserve(const SlotKey *key);
extern void state_slots_publish(const SlotKey *key, int64 version,
								int64 memory_windows, int64 windows, int64 bytes);
extern void state_slots_clear(const SlotKey *key);
extern void state_slots_release(const SlotKey *key);
extern bool state_slots_held_here(const SlotKey *key, int64 version);
extern bool state_slots_get(int32 pipeline_id, int64 version,
							int64 *memory_windows, int64 *windows, int64 *bytes);

#endif							/* WINDOWING_STATE_SLOTS_H */
