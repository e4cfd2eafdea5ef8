/*
 * parts.c
 *		Changing how many parts a pipeline is stepped as.
 *
 * A pipeline of parallelism n is n parts, each a row of windowing.pipeline
 * with its own cursor, watermark and state, each stepping the keys of a run
 * of key groups (keys_part) and reading every row of the queue.  Changing n
 * (alter_pipeline(parallelism => n)) moves key groups between parts, as
 * Flink's rescaling from a savepoint does: first every part reads the queue
 * up to one snapshot, taken once every part's lock is held, so that all of
 * them stand at the same point of the input; then their state, folded onto
 * the heap, goes to the part that steps its key group now, and every part
 * takes up the same cursor.  All of it in the caller's transaction: a
 * change commits whole or not at all, and steps wait for it.
 */
#include "compat.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "catalog.h"
#include "pipeline.h"
#include "state.h"
#include "tick.h"

/* What a change of parallelism cannot be made to. */
static void
check_changeable(const PipelineDef *def, const PipelineProgress *progress)
{
	if (def->join_type)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("join pipeline \"%s\" cannot have more than one part", def->name),
				 errdetail("The state of a join is its state tables, stepped whole.")));
	if (progress->replay_until != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pipeline \"%s\" is being rebuilt", def->name),
				 errhint("Run process() until windowing.rebuild_progress no longer lists it.")));
}

PG_FUNCTION_INFO_V1(windowing_change_parallelism);

/*
 * _change_parallelism(name, parallelism): pipeline "name", whose every part
 * the caller has locked, becomes "parallelism" parts.
 */
Datum
windowing_change_parallelism(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int			to = PG_GETARG_INT32(1);
	int			from;
	PipelineDef def;
	PipelineProgress progress;
	int64		watermark;
	char	   *until;
	int32	   *from_ids;
	int32	   *to_ids;
	int			n;

	/* its parts catch up with steps, which writes as process() does */
	PreventCommandIfReadOnly("alter_pipeline()");
	from = pipeline_parts(name, true);
	if (to == from)
		PG_RETURN_VOID();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	catalog_load_pipeline(name, 0, &def, &progress);
	check_changeable(&def, &progress);
	until = tick_now(def.watermark_from, &watermark);
	for (int part = 0; part < from; part++)
		pipeline_catch_up(name, part, until, watermark);
	from_ids = catalog_part_ids(name, &n);
	catalog_change_parts(name, from, to, until);
	to_ids = catalog_part_ids(name, &n);
	state_repartition(from_ids, from, to_ids, to, def.key_groups);
	if (to < from)
		catalog_drop_parts(name, to);
	SPI_finish();
	PG_RETURN_VOID();
}
