/*
 * bulk_insert.h
 *		Many rows into a plain table the way COPY FROM writes them.
 */
#ifndef WINDOWING_BULK_INSERT_H
#define WINDOWING_BULK_INSERT_H

#include "postgres.h"

/* Fills row i's values of the given columns (nulls start false). */
typedef void (*BulkRowFiller) (void *arg, int i, Datum *values, bool *nulls);

/*
 * Rows written as they come: NULL if the table needs the executor's INSERT
 * (see bulk_insert.c); each row filled by "fill" (as its i'th), written in
 * batches; the last batch at bulk_insert_end.
 */
typedef struct BulkInsert BulkInsert;

extern BulkInsert *bulk_insert_begin(Oid relid, int ncols, const char **names, Oid *types);
extern void bulk_insert_add(BulkInsert *b, BulkRowFiller fill, void *arg, int i);
extern void bulk_insert_end(BulkInsert *b);

/* nrows rows at once, or false (and nothing written) as bulk_insert_begin. */
extern bool bulk_insert(Oid relid, int ncols, const char **names, Oid *types,
						int nrows, BulkRowFiller fill, void *arg);

#endif							/* WINDOWING_BULK_INSERT_H */
