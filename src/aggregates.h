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
typedef struct AggEvictor AggEvictor;
struct EvictorDef;

/* One aggregate of a pipeline's select list. */
typedef struct AggDef
{
	char	   *name;			/* the result column it is of, for messages */
	Oid			resulttype;
	int16		resultlen;
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

/*
 * One result column: a plain aggregate's result, or an expression over the
 * aggregates' results and the window's bounds, evaluated when the window
 * fires.
 */
typedef struct AggOutput
{
	char	   *name;
	Oid			type;
	int16		len;			/* to copy a result out of a firing */
	bool		byval;
	int			agg;			/* a plain aggregate: its index in aggs */
	ExprState  *expr;			/* otherwise (agg < 0): its expression */
} AggOutput;

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
	int			nstates;		/* a window's states: naggs, and its rows
								 * if an evictor needs them (states[naggs]) */
	AggEvictor *evict;			/* the evictor, or NULL */
	int			nout;			/* result columns */
	AggOutput  *outs;
	bool		derived;		/* some column is not one plain aggregate */
	/* derived columns only: */
	ParamListInfo bounds;		/* their parameters: the
								 * window's bounds, then every aggregate's
								 * result */
	ExprContext *econtext;		/* where derived columns are evaluated */
	Datum	   *finals;			/* the aggregates' results, for them */
	bool	   *finalnulls;
	int			nargs;			/* all aggregates' inputs */
	List	   *args_sql;		/* those inputs as SQL expressions (char *) */
	List	   *arg_exprs;		/* and as planned expressions over the source */
	MemoryContext statecxt;		/* where states live */
	AggState   *context;		/* what transition functions see */
	bool		advancing;		/* in agg_advance: an error there is the row's */
} Aggregator;

extern Aggregator *agg_prepare(Oid source, const char *aggregates, Oid window_type,
							   const struct EvictorDef *evictor, const char *time_column);
extern void agg_evict(Aggregator *a, AggValue *states, bool after);
extern void agg_bind_context(Aggregator *a, MemoryContext statecxt);
extern void agg_init(Aggregator *a, AggValue *states);
extern void agg_advance(Aggregator *a, AggValue *states, Datum *args,
						bool *argnulls);
extern void agg_results(Aggregator *a, AggValue *states, int64 start, int64 end,
						Datum *out, bool *outnull);
extern bool agg_can_combine(Aggregator *a, const char **which);
extern void agg_combine(Aggregator *a, AggValue *into, AggValue *from);
extern bytea *agg_serialize(Aggregator *a, AggValue *states);
extern void agg_deserialize(Aggregator *a, bytea *data, AggValue *states);

#endif							/* WINDOWING_AGGREGATES_H */
