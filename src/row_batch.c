/*
 * row_batch.c
 *		Rows read from a queue, held a few at a time with values of their
 *		own.
 *
 * A reader gives a row's values until it reads the next: a value passed by
 * reference points into the scan's page, the helper's batch or the row's
 * expression memory.  Holding rows to act on several at once (the step
 * brings their keys' state towards the processor's cache before the first
 * of them reaches the operator) copies those values into the batch's own
 * memory, which is reset with it.
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "row_batch.h"

/* The type of the value at position i of a reader's row (0: none, a NULL). */
static Oid
value_type(const TickColumns *c, int i)
{
	if (i < c->ncolumns)
		return c->columns[i] == 0 ? InvalidOid : get_atttype(c->source, c->columns[i]);
	if (i < c->ncolumns + list_length(c->inputs))
		return exprType(list_nth(c->inputs, i - c->ncolumns));
	return InvalidOid;
}

RowBatch *
row_batch_create(const TickColumns *c, int nvalues)
{
	RowBatch   *b = palloc0(sizeof(RowBatch));

	b->nvalues = nvalues;
	b->byval = palloc(sizeof(bool) * nvalues);
	b->typlen = palloc(sizeof(int16) * nvalues);
	for (int i = 0; i < nvalues; i++)
	{
		Oid			type = value_type(c, i);

		b->byval[i] = true;
		b->typlen[i] = sizeof(Datum);
		if (OidIsValid(type))
			get_typlenbyval(type, &b->typlen[i], &b->byval[i]);
	}
	b->values = palloc(sizeof(Datum) * ROW_BATCH_ROWS * nvalues);
	b->nulls = palloc(sizeof(bool) * ROW_BATCH_ROWS * nvalues);
	b->cxt = AllocSetContextCreate(CurrentMemoryContext, "windowing row batch",
								   ALLOCSET_SMALL_SIZES);
	return b;
}

bool
row_batch_add(RowBatch *b, const Datum *values, const bool *nulls)
{
	Datum	   *v = row_batch_values(b, b->n);
	bool	   *isnull = row_batch_nulls(b, b->n);

	Assert(b->n < ROW_BATCH_ROWS);
	memcpy(isnull, nulls, sizeof(bool) * b->nvalues);
	for (int i = 0; i < b->nvalues; i++)
	{
		if (isnull[i])
			v[i] = (Datum) 0;
		else if (b->byval[i])
			v[i] = values[i];
		else
		{
			MemoryContext old = MemoryContextSwitchTo(b->cxt);

			v[i] = datumCopy(values[i], false, b->typlen[i]);
			MemoryContextSwitchTo(old);
		}
	}
	return ++b->n == ROW_BATCH_ROWS;
}

void
row_batch_clear(RowBatch *b)
{
	b->n = 0;
	MemoryContextReset(b->cxt);
}
