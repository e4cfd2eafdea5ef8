/*
 * plans.h
 *		Statements prepared once per backend, kept by their text and
 *		parameter types.
 */
#ifndef WINDOWING_PLANS_H
#define WINDOWING_PLANS_H

#include "postgres.h"

#include "executor/spi.h"
#include "utils/plancache.h"

extern SPIPlanPtr plans_prepare(const char *sql, int nargs, Oid *types);
extern int	plans_execute(const char *sql, int nargs, Oid *types, Datum *values,
						   const char *nulls, bool read_only, long count);
extern int	plans_execute_generic(const char *sql, int nargs, Oid *types, Datum *values,
								  const char *nulls);
extern CachedPlan *plans_generic_plan(const char *sql, int nargs, Oid *types);

#endif							/* WINDOWING_PLANS_H */
