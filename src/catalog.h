/*
 * catalog.h
 *		The pipeline catalog, windowing.pipeline, as typed rows.
 *
 * Every statement of the C code on windowing.pipeline is in catalog.c, and
 * reads its result by column name, so that a column added to the catalog
 * is added here and where it is used.  All of them need SPI connected.
 */
#ifndef WINDOWING_CATALOG_H
#define WINDOWING_CATALOG_H

#include "postgres.h"

#include "access/htup.h"
#include "datatype/timestamp.h"
#include "nodes/pg_list.h"

/* What a pipeline computes and where it writes. */
typedef struct PipelineDef
{
	int32		id;
	char	   *name;
	Oid			source;			/* the queue */
	char	   *time_column;	/* NULL: processing time */
	Oid			time_type;		/* timestamptz, timestamp or bigint */
	bool		is_ts;			/* microseconds (timestamptz or timestamp), not bigint */
	int			nkeys;
	char	  **keys;			/* the key columns' names */
	HeapTupleHeader assigner;	/* a windowing.assigner */
	char	   *aggregates;
	Interval   *max_out_of_orderness;	/* NULL: explicit watermarks only */
	Interval   *allowed_lateness;
	Oid			result_table;
	Oid			late_table;		/* InvalidOid: late rows are dropped */
	bool		append;			/* emit 'append', not 'upsert' */
	Interval   *idle_timeout;	/* NULL: none */
	bool		sliced;			/* sliding windows kept as slices */
	int64		cleaned_until;	/* windows whose last instant is at or before
								 * it are gone for good; PG_INT64_MIN: none */
	bool		intact;			/* the definition is the one it was created
								 * with (definition_stamp) */
	bool		route_errors;	/* on_error 'route': failing rows to the late table */
	char	   *trigger;		/* NULL: the default, 'event time' */
	char	   *evictor;		/* NULL: none */
	Interval   *fire_spread;	/* NULL: none */
	char	   *watermark_column;	/* its values are the watermark; NULL:
									 * the event times make it */
	int			key_groups;		/* its keys' hash partitions (keys_group) */
	int32		watermark_from;	/* the pipeline whose results are its
								 * source and whose watermark it takes; 0:
								 * none */
	char	   *join_type;		/* a join pipeline's 'inner', 'left', 'right'
								 * or 'full'; NULL: an aggregate pipeline */
	Interval   *join_lower;		/* a right row joins a left row at t from */
	Interval   *join_upper;		/* t + join_lower to t + join_upper */
	bool		join_lower_exclusive;
	bool		join_upper_exclusive;
	int			part;			/* which part of the pipeline this row is */
	int			parallelism;	/* of how many: each steps its share of the
								 * key groups (keys_part) */
	int32		first_id;		/* the id of part 0, which names the pipeline
								 * (its notification channel) */
	bool		exchanged;		/* a shard's pipeline on event time: it fires by
								 * the least watermark of its distributed
								 * pipeline's shards (shard_watermark) */
} PipelineDef;

/*
 * What a step runs on: part "part" of pipeline "name" (part 0 of a
 * pipeline of parallelism 1 is all of it).
 */
typedef struct PipelinePart
{
	char	   *name;
	int			part;
} PipelinePart;

/*
 * Where the pipeline's steps got to: the cursor on the queue and the
 * watermark, and what the step under way adds to the counters.  The NULLs
 * of the catalog are the sentinels the step uses.
 */
typedef struct PipelineProgress
{
	char	   *tick_lo;		/* NULL: nothing consumed yet */
	char	   *tick_hi;		/* NULL: no tick open */
	int64		tick_watermark;	/* watermark_from's watermark as of tick_hi,
								 * taken once the tick is read; WMK_NONE:
								 * none */
	int64		last_seq;
	int64		watermark;		/* WMK_NONE: none yet */
	int64		max_seen;		/* INT64_MIN: no event time consumed */
	int64		steps;			/* committed steps so far */
	TimestampTz last_row_at;	/* clock of the last step with rows; DT_NOBEGIN: none */
	int64		scan_from;		/* every row up to it is consumed or aborted */
	int64		scan_next;		/* scan_from to be, once scan_next_xid has ended */
	char	   *scan_next_xid;	/* NULL: no candidate */
	/* a rebuild's replay: the rows visible in replay_until, by event time */
	char	   *replay_until;	/* NULL: none under way */
	int64		replay_done;	/* rows of its order replayed */
	/* the step's own counts: zero when loaded, added to the totals when saved */
	int64		rows;
	int64		windows_fired;
	int64		late_routed;
	int64		late_dropped;
	int64		state_hits;		/* keys found in memory */
	int64		state_misses;	/* keys read from the heap */
	/* a shard's pipeline: the watermark its shards agreed on, and its own */
	int64		shard_watermark;	/* WMK_NONE: none yet */
	int64		input_watermark;	/* WMK_NONE: no rows yet */
} PipelineProgress;

/*
 * One input of a join pipeline (windowing.join_input): its queue and the
 * table of its rows kept for matching, and its own cursor and watermark.
 * The cursor is a PipelineProgress for tick_open and tick_close, of which
 * only the tick and scan fields are used.
 */
typedef struct JoinInput
{
	const char *side;			/* "left" or "right" */
	Oid			source;
	char	   *alias;			/* the name the select list gives its rows */
	char	   *time_column;
	int			nkeys;
	char	  **keys;
	Oid			state_table;
	PipelineProgress cursor;
	int64		watermark;		/* WMK_NONE: none yet */
	int64		max_seen;		/* INT64_MIN: no event time read */
	TimestampTz last_row_at;	/* DT_NOBEGIN: never */
} JoinInput;

/*
 * The row of part "part" of pipeline "name", read with a fresh snapshot (a
 * step reads it once it holds the pipeline's lock); an error if there is
 * none.  Its values live until SPI_finish.
 */
extern void catalog_load_pipeline(const char *name, int part, PipelineDef *def,
								  PipelineProgress *progress);
extern Oid	catalog_time_type(const char *name);
extern Oid	catalog_pipeline_owner(const char *name, bool latest);
extern int	catalog_parallelism(const char *name);

/* A change of a pipeline's parallelism (parts.c). */
extern int32 *catalog_part_ids(const char *name, int *n);
extern void catalog_change_parts(const char *name, int from, int to, const char *until);
extern void catalog_drop_parts(const char *name, int to);

/* The two inputs of join pipeline "id", left first; ditto. */
extern void catalog_load_join_inputs(int32 id, JoinInput *inputs);

/* Writes the progress of a step, in the step's transaction, counting it. */
extern void catalog_save_progress(const PipelineDef *def,
								  const PipelineProgress *progress);

extern void catalog_save_join_input(int32 id, const JoinInput *in);

/* The worker's: lists are made in "cxt". */
extern void catalog_start_replay(const PipelineDef *def, const char *snapshot,
								 int64 rows);
extern List *catalog_running_pipelines(MemoryContext cxt, int part, int *parts);
extern List *catalog_consumed_queues(MemoryContext cxt);
/* What the worker learns of a pipeline before it steps it. */
typedef struct PipelineRunning
{
	bool		failing;		/* its last steps failed */
	Oid			source;
	Oid			right_source;	/* a join's right queue, or InvalidOid */
	Oid			result_table;
	Oid			late_table;		/* or InvalidOid */
	Oid			state_tables[2];	/* a join's, left then right, or InvalidOid */
} PipelineRunning;

extern Oid	catalog_owner_if_running(const PipelinePart *p, PipelineRunning *running);
extern bool catalog_record_failure(const PipelinePart *p, const ErrorData *edata,
								   bool row_known, int64 row, int max_failures);
extern void catalog_clear_failures(const PipelinePart *p);

/* The reclaim of a queue's: the list of parts is made in "cxt". */
extern bool catalog_queue_readers(Oid source, MemoryContext cxt, List **readers);
extern bool catalog_queue_consumed(Oid source, const char *qualified);
extern bool catalog_queue_consumes(Oid source);
extern char *catalog_relation_name(Oid relid, const char *what);

#endif							/* WINDOWING_CATALOG_H */
