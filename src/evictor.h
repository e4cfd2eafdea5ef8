/*
 * evictor.h
 *		Flink's evictors: which of a window's rows its aggregates see when
 *		it fires.
 */
#ifndef WINDOWING_EVICTOR_H
#define WINDOWING_EVICTOR_H

#include "postgres.h"

typedef enum EvictorKind
{
	EVICT_NONE,
	EVICT_COUNT,				/* CountEvictor: keep the last "count" rows */
	EVICT_TIME,					/* TimeEvictor: keep the rows within "span"
								 * of the latest */
	EVICT_DELTA					/* DeltaEvictor: drop the rows whose input is
								 * "threshold" or more from the last row's */
} EvictorKind;

typedef struct EvictorDef
{
	EvictorKind kind;
	int64		count;
	int64		span;			/* in the time column's unit */
	double		threshold;
	char	   *column;			/* the delta evictor's input */
	bool		after;			/* evicts after the aggregates, not before */
} EvictorDef;

/* A window's rows as an evictor sees them, in arrival order. */
typedef struct EvictorRows
{
	int			n;
	const int64 *ts;			/* event times */
	const double *input;		/* the delta evictor's inputs */
	const bool *input_null;		/* NULL or NaN */
} EvictorRows;

extern void evictor_parse(const char *text, bool is_ts, EvictorDef *def);
extern int	evictor_keep(const EvictorDef *def, const EvictorRows *rows, bool *keep);

#endif							/* WINDOWING_EVICTOR_H */
