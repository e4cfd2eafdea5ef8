/*
 * emit.h
 *		Writing what a pipeline step produced: fired windows and late rows.
 */
#ifndef WINDOWING_EMIT_H
#define WINDOWING_EMIT_H

#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"

#include "keys.h"
#include "operator.h"

/* Where a step writes. */
typedef struct EmitTarget
{
	int32		pipeline_id;
	char	   *source;			/* qualified, quoted names */
	char	   *result_table;
	Oid			result_relid;
	char	   *late_table;		/* NULL: late rows are dropped */
	bool		late_errors;	/* late rows may carry errors (on_error 'route') */
	bool		append;			/* keep every firing, not the latest */
	bool		panes;			/* results say which pane each firing was */
	Oid			time_type;		/* of the time column */
	Oid			window_type;	/* of window_start and window_end */
	KeyColumns *keys;
	Aggregator *agg;
} EmitTarget;

extern void emit_superseded(const EmitTarget *t, Operator *op);
extern void emit_firings(const EmitTarget *t, Operator *op);
extern void emit_firings_so_far(const EmitTarget *t, Operator *op);
extern int64 emit_late(const EmitTarget *t, Operator *op);
extern char *emit_window_sql(Oid time_type, const char *start, const char *end);

#endif							/* WINDOWING_EMIT_H */
