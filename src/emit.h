/*
 * emit.h
 *		Writing what a pipeline step produced: window state, fired windows,
 *		late rows.
 */
#ifndef WINDOWING_EMIT_H
#define WINDOWING_EMIT_H

#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"

#include "operator.h"

/* The key columns of a pipeline and their storage, to pack them in bytes. */
typedef struct KeyColumns
{
	int			n;
	char	  **names;
	Oid		   *types;
	int16	   *lens;
	bool	   *byvals;
} KeyColumns;

/* Where a step writes. */
typedef struct EmitTarget
{
	int32		pipeline_id;
	int64		step;			/* the step's number, from 1 */
	char	   *source;			/* qualified, quoted names */
	char	   *result_table;
	Oid			result_relid;
	char	   *late_table;		/* NULL: late rows are dropped */
	bool		late_errors;	/* late rows may carry errors (on_error 'route') */
	bool		append;			/* keep every firing, not the latest */
	bool		fixed_windows;	/* a window's first firing has no row yet */
	Oid			time_type;		/* of the time column */
	Oid			window_type;	/* of window_start and window_end */
	KeyColumns *keys;
	Aggregator *agg;
} EmitTarget;

extern char *relation_name(Oid relid, const char *what);
extern void keys_init(KeyColumns *k, Oid source, int n, char **names);
extern bytea *keys_encode(const KeyColumns *k, Datum *values, bool *nulls,
						  StringInfo buf);
extern int	keys_order(const bytea *a, const bytea *b, const void *arg);
extern void keys_decode(const KeyColumns *k, bytea *key, Datum *values,
						bool *nulls);
extern void emit_state(const EmitTarget *t, Operator *op, bool store);
extern void emit_superseded(const EmitTarget *t, Operator *op);
extern bool emit_firings_as_fired(const EmitTarget *t, const Operator *op);
extern void emit_firings(const EmitTarget *t, Operator *op);
extern int64 emit_late(const EmitTarget *t, Operator *op);

#endif							/* WINDOWING_EMIT_H */
