/*
 * tick.h
 *		A pipeline's ticks of its queue: opening and closing them, and
 *		reading their rows through whichever reader fits.
 */
#ifndef WINDOWING_TICK_H
#define WINDOWING_TICK_H

#include "postgres.h"

#include "nodes/pg_list.h"

#include "catalog.h"

typedef struct TickReader TickReader;
typedef struct ReplayReader ReplayReader;

/* One row of the tick, in arrival order; false stops the read there. */
typedef bool (*TickRowFn) (Datum *vals, bool *nulls, void *arg);

/* What each row gives: columns of the queue, then the aggregates' inputs. */
typedef struct TickColumns
{
	Oid			source;
	const AttrNumber *columns;	/* 0: a NULL (processing time) */
	int			ncolumns;
	List	   *inputs;			/* planned expressions over the queue's row */
	List	   *inputs_sql;		/* the same as SQL text (char *) */
} TickColumns;

extern char *tick_now(int32 upstream, int64 *watermark);
extern void tick_force(char *until, int64 watermark);
extern void tick_open(PipelineProgress *p, Oid source, int32 upstream);
extern void tick_close(PipelineProgress *p);
extern TickReader *tick_reader_begin(const TickColumns *c, const PipelineProgress *p,
									 List *skip, int64 max_rows);
extern uint64 tick_read(TickReader *r, int64 after_seq, int64 want,
						TickRowFn fn, void *arg);
extern void tick_reader_end(TickReader *r);
extern char *tick_replay_snapshot(void);
extern int64 tick_replay_order(int32 id, Oid source, const char *time_column,
							   const char *snapshot);
extern void tick_replay_forget(int32 id);
extern ReplayReader *tick_replay_begin(const TickColumns *c, int32 id,
									  const PipelineProgress *p, List *skip);
extern uint64 tick_replay_read(ReplayReader *r, int64 want, TickRowFn fn, void *arg);
extern void tick_replay_end(ReplayReader *r);
extern int64 *tick_replay_seqs(Oid source, int32 id, const PipelineProgress *p, int *n);
extern int64 *tick_seqs(Oid source, const PipelineProgress *p, int *n);

#endif							/* WINDOWING_TICK_H */
