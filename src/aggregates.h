/*
 * aggregates.h
 *		PostgreSQL aggregates computed incrementally, one state per window.
 */
#ifndef WINDOWING_AGGREGATES_H
#define WINDOWING_AGGREGATES_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/execnodes.h"

typedef struct KeptRows KeptRows;

/* One aggregate of a pipeline's select list. */
typedef struct AggDef
{
	char	   *name;			/* result column */
	Oid			resulttype;
	int16		resultlen;		/* to copy a result out of a firing */
	bool		resultbyval;
	int			nargs;			/* inputs of the transition function */
	int			firstarg;		/* where its inputs start in a row's arguments */
	int			ninputs;		/* its inputs there: its arguments (and, if
								 * it keeps rows, its ORDER BY expressions
								 * and arrival number), then its FILTER */
	bool		has_filter;		/* its last input is its FILTER condition */
	Oid			transtype;
	int16		translen;
	bool		transbyval;
	bool		initnull;
	Datum		initval;
	bool		has_final;
	bool		final_extra;	/* final function takes the inputs too */
	bool		internal;		/* state is "internal": (de)serialize it */
	Oid			collation;
	FmgrInfo	transfn;
	FmgrInfo	finalfn;
	FmgrInfo	serialfn;
	FmgrInfo	deserialfn;
	bool		has_combine;	/* needed to merge session windows */
	FmgrInfo	combinefn;
	KeptRows   *kept;			/* its state is its input rows, or NULL */
} AggDef;

/* The state of one aggregate in one window. */
typedef struct AggValue
{
	Datum		value;
	bool		isnull;
	bool		empty;			/* strict transition function saw no input */
} AggValue;

/* Everything needed to run the aggregates of one pipeline. */
typedef struct Aggregator
{
	int			naggs;
	AggDef	   *aggs;
	int			nargs;			/* all aggregates' inputs */
	List	   *args_sql;		/* those inputs as SQL expressions (char *) */
	List	   *arg_exprs;		/* and as planned expressions over the source */
	MemoryContext statecxt;		/* where states live */
	AggState   *context;		/* what transition functions see */
	bool		advancing;		/* in agg_advance: an error there is the row's */
} Aggregator;

extern Aggregator *agg_prepare(Oid source, const char *aggregates);
extern void agg_bind_context(Aggregator *a, MemoryContext statecxt);
extern void agg_init(Aggregator *a, AggValue *states);
extern void agg_advance(Aggregator *a, AggValue *states, Datum *args,
						bool *argnulls);
extern void agg_final(Aggregator *a, AggValue *states, Datum *out,
					  bool *outnull);
extern bool agg_can_combine(Aggregator *a, const char **which);
extern void agg_combine(Aggregator *a, AggValue *into, AggValue *from);
extern bytea *agg_serialize(Aggregator *a, AggValue *states);
extern void agg_deserialize(Aggregator *a, bytea *data, AggValue *states);

#endif							/* WINDOWING_AGGREGATES_H */
