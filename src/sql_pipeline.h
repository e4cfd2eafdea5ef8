/*
 * sql_pipeline.h
 *		Checks of a pipeline's definition: at create time, and at every step
 *		against what DDL may have done to its tables since.
 */
#ifndef WINDOWING_SQL_PIPELINE_H
#define WINDOWING_SQL_PIPELINE_H

#include "postgres.h"

#include "aggregates.h"

extern void sql_pipeline_check_table(const char *pipeline, Oid relid, const char *what);
extern void sql_pipeline_check_column(const char *pipeline, Oid source, const char *column,
								  const char *what, Oid type, Oid result);
extern void sql_pipeline_check_outputs(const char *pipeline, Oid result, const Aggregator *agg);

#endif							/* WINDOWING_SQL_PIPELINE_H */
