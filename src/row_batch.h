/*
 * row_batch.h
 *		Rows read from a queue, held a few at a time with values of their
 *		own (row_batch.c).
 */
#ifndef WINDOWING_ROW_BATCH_H
#define WINDOWING_ROW_BATCH_H

#include "postgres.h"

#include "tick.h"

/* The most rows a batch holds. */
#define ROW_BATCH_ROWS 16

typedef struct RowBatch
{
	int			nvalues;		/* values a row has */
	int			n;				/* rows held */
	bool	   *byval;			/* of each value: passed by value */
	int16	   *typlen;			/* and its type's length */
	Datum	   *values;			/* ROW_BATCH_ROWS rows of nvalues each */
	bool	   *nulls;
	MemoryContext cxt;			/* the held rows' by-reference values */
} RowBatch;

/*
 * A batch of rows of tick_read's (or tick_replay_read's) values for
 * columns "c": the columns, the inputs, then as many more values as make
 * "nvalues", which are passed by value.
 */
extern RowBatch *row_batch_create(const TickColumns *c, int nvalues);

/*
 * Holds a copy of a row, whose values the reader may overwrite or free
 * once it reads the next; true if the batch is full.
 */
extern bool row_batch_add(RowBatch *b, const Datum *values, const bool *nulls);

/* Forgets the rows held, and their values. */
extern void row_batch_clear(RowBatch *b);

static inline Datum *
row_batch_values(RowBatch *b, int i)
{
	return b->values + i * b->nvalues;
}

static inline bool *
row_batch_nulls(RowBatch *b, int i)
{
	return b->nulls + i * b->nvalues;
}

#endif							/* WINDOWING_ROW_BATCH_H */
