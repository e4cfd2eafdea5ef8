/*
 * keys.h
 *		A pipeline's key columns as one bytea, and back.
 */
#ifndef WINDOWING_KEYS_H
#define WINDOWING_KEYS_H

#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/hsearch.h"

/* The key columns of a pipeline and their storage, to pack them in bytes. */
typedef struct KeyColumns
{
	int			n;
	char	  **names;
	Oid		   *types;
	int16	   *lens;
	bool	   *byvals;
} KeyColumns;

extern void keys_init(KeyColumns *k, Oid source, int n, char **names);
extern bytea *keys_encode(const KeyColumns *k, Datum *values, bool *nulls,
						  StringInfo buf);
extern int	keys_order(const bytea *a, const bytea *b, const void *arg);
extern uint64 keys_bytes_prefix(const char *bytes, Size len);
extern uint64 keys_order_prefix(const bytea *key, const void *arg);
extern void keys_decode(const KeyColumns *k, bytea *key, Datum *values,
						bool *nulls);
extern bool keys_equal(const bytea *a, const bytea *b);
extern uint32 keys_hash(const bytea *key);
extern int	keys_group(const bytea *key, int ngroups);
extern int	keys_part(int group, int ngroups, int parallelism);
extern HTAB *keys_table(const char *name, Size entrysize, MemoryContext cxt);

#endif							/* WINDOWING_KEYS_H */
