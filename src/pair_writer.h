/*
 * pair_writer.h
 *		An interval join's pairs into its result table the way COPY FROM
 *		writes rows (pair_writer.c).
 */
#ifndef WINDOWING_PAIR_WRITER_H
#define WINDOWING_PAIR_WRITER_H

#include "postgres.h"

#include "access/tupdesc.h"

typedef struct PairWriter PairWriter;

/* One side of the join: its rows' descriptor and the columns a select list sees. */
typedef struct PairSide
{
	const char *alias;
	TupleDesc	desc;			/* of the composites the pairs hold */
	const bool *shown;			/* per attribute: a queue column */
} PairSide;

/*
 * "INSERT INTO result_table SELECT select_list" over a row of each side,
 * planned, and the result table opened to write the pairs in bulk; NULL
 * when the statement is more than expressions over the two rows (a
 * subquery, a rule, a set-returning function) or the table needs the
 * executor's INSERT (bulk_insert.c), which the caller then runs.
 */
extern PairWriter *pair_writer_create(const char *result_table, const char *select_list,
									  const PairSide sides[2]);

/* A pair's row, written with the next ones; (Datum) 0 for no row. */
extern void pair_writer_add(PairWriter *w, Datum left, Datum right);

/* Writes what is left and closes the result table. */
extern void pair_writer_end(PairWriter *w);

#endif							/* WINDOWING_PAIR_WRITER_H */
