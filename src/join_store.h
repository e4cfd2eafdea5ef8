/*
 * join_store.h
 *		The rows an interval join keeps for matching, by key, in the memory
 *		of the process that steps it (join_store.c).
 */
#ifndef WINDOWING_JOIN_STORE_H
#define WINDOWING_JOIN_STORE_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "fmgr.h"

typedef struct JoinStore JoinStore;

/*
 * How the rows of both sides are laid out: each side's rows are of its
 * state table's row type, whose key columns (as many on each side, of the
 * same types) are compared with their types' equality and hashed with
 * their hash functions, the left side's collations for both.
 */
typedef struct JoinLayout
{
	TupleDesc	desc[2];
	int			nkeys;
	AttrNumber *keys[2];
	AttrNumber	time[2];
	FmgrInfo   *hash;
	FmgrInfo   *eq;
	Oid		   *collations;
} JoinLayout;

/* A pair of rows, left and right, either (Datum) 0 for an unmatched row. */
typedef void (*JoinPairFn) (Datum left, Datum right, void *arg);
/* The times [*from, *to] of the other side's rows that a row of "side" at "ts" meets. */
typedef void (*JoinBoundsFn) (int side, int64 ts, int64 *from, int64 *to, void *arg);
/* A kept row of "side", as join_store_each gives it. */
typedef void (*JoinRowFn) (int side, Datum row, int64 ts, bool matched, void *arg);

extern void join_layout_keys(JoinLayout *layout);
extern JoinStore *join_store_find(int32 pipeline_id, int64 version, const JoinLayout *layout);
extern JoinStore *join_store_read(int32 pipeline_id, const JoinLayout *layout,
								  const int64 *until, Oid *legacy, bool keep);
extern void join_store_changing(JoinStore *st);
extern void join_store_row(JoinStore *st, int side, Datum row, int64 ts, int64 seq);
extern void join_store_meet_all(JoinStore *st, JoinBoundsFn bounds, JoinPairFn fn, void *arg);
extern void join_store_expire(JoinStore *st, int side, int64 until, bool outer,
							  JoinPairFn fn, void *arg);
extern bool join_store_log(JoinStore *st);
extern void join_store_done(JoinStore *st, int64 version);
extern void join_store_each(JoinStore *st, JoinRowFn fn, void *arg);
extern void join_store_free(JoinStore *st);

#endif							/* WINDOWING_JOIN_STORE_H */
