/*
 * state.h
 *		A pipeline's window state, read as a step needs it and written at
 *		its end.
 */
#ifndef WINDOWING_STATE_H
#define WINDOWING_STATE_H

#include "postgres.h"

#include "operator.h"

typedef struct StepState StepState;

extern StepState *state_load(Operator *op, int32 id, int key_groups, int64 steps,
							 bool by_key);
extern void state_save(StepState *ss, int64 step);
extern void state_prefetch(const StepState *ss, const uint32 *hashes, int n);
extern void state_peek(Operator *op, int32 id, int64 steps,
					   void (*fn) (WindowEntry *, void *), void *arg);
extern void state_clear(int32 id);
extern void state_repartition(const int32 *from, int nfrom, const int32 *to, int nto,
							  int key_groups);
extern bool state_taken(const StepState *ss);
extern void state_unchanged(StepState *ss);
extern void state_counts(const StepState *ss, int64 *hits, int64 *misses);

/*
 * The most of a step's changes one state_log row holds; the rest go on in
 * the step's next rows (its parts).  A row this size stays in its page: a
 * bigger one would pass the table's toast_tuple_target and be cut into
 * TOAST chunks of 2kB, each a row and an index entry of its own.
 */
#define STATE_LOG_ROW_BYTES 8000

/*
 * A pipeline's state_log rows for a state of another form (join_store.c):
 * a step's changes written through a writer (in as many rows as they
 * need), the rows of n steps deleted, or every step's changes read.
 */
typedef void (*StateLogFn) (int64 step, const char *changes, Size size, void *arg);
typedef struct StateLogWriter StateLogWriter;

extern StateLogWriter *state_log_open(void);
extern void state_log_write(StateLogWriter *w, int32 id, int64 step, const char *changes,
							Size size);
extern void state_log_close(StateLogWriter *w);
extern void state_log_delete(int32 id, const int64 *steps, int n);
extern int	state_log_each(int32 id, StateLogFn fn, void *arg);

#endif							/* WINDOWING_STATE_H */
