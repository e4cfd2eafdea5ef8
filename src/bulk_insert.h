/*
 * bulk_insert.h
 *		Many rows into a plain table the way COPY FROM writes them.
 */
#ifndef WINDOWING_BULK_INSERT_H
#define WINDOWING_BULK_INSERT_H

#include "postgres.h"

/* Fills row i's values of the given columns (nulls start false). */
typedef void (*BulkRowFiller) (void *arg, int i, Datum *values, bool *nulls);

extern bool bulk_insert(Oid relid, int ncols, const char **names, Oid *types,
						int nrows, BulkRowFiller fill, void *arg);

#endif							/* WINDOWING_BULK_INSERT_H */
