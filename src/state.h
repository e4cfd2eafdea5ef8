/*
 * state.h
 *		A pipeline's window state, read at the start of a step and written
 *		at its end.
 */
#ifndef WINDOWING_STATE_H
#define WINDOWING_STATE_H

#include "postgres.h"

#include "operator.h"

extern bool state_load(Operator *op, int32 id, int64 steps);
extern void state_save(Operator *op, int32 id, int64 step, bool from_memory);

#endif							/* WINDOWING_STATE_H */
