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
 * planned once: NULL when the statement is more than expressions over the
 * two rows (a subquery, a rule, a set-returning function), which the
 * caller then runs as a statement.
 */
extern PairWriter *pair_writer_create(const char *result_table, const char *select_list,
									  const PairSide sides[2]);

/*
 * Writes n pairs (rows[i][k], or none where unpaired[i][k]) in bulk, or
 * writes nothing and returns false if the result table needs the
 * executor's INSERT (bulk_insert.c).
 */
extern bool pair_writer_write(PairWriter *w, int n, Datum *const rows[2],
							  bool *const unpaired[2]);

#endif							/* WINDOWING_PAIR_WRITER_H */
