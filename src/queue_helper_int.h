/*
 * queue_helper_int.h
 *		What a step and its queue helper process share: the segment's keys,
 *		what the step tells the helper, and the layout of the batches.
 */
#ifndef WINDOWING_QUEUE_HELPER_INT_H
#define WINDOWING_QUEUE_HELPER_INT_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "storage/itemptr.h"
#include "storage/proc.h"

#define HELPER_MAGIC 0x57494e48
#define HELPER_KEY_SHARED 1
#define HELPER_KEY_QUEUE 2
#define HELPER_KEY_COLUMNS 3
#define HELPER_QUEUE_BYTES (4 * 1024 * 1024)
#define HELPER_BATCH_BYTES (64 * 1024)

/* What the step tells its helper. */
typedef struct HelperShared
{
	PGPROC	   *leader;			/* the step's process, leading its lock group */
	int			leader_pid;
	Oid			database;
	Oid			user;
	Oid			source;
	Oid			index;
	int64		after_seq;
	int			nvalues;		/* columns sent (HELPER_KEY_COLUMNS); 0: rows */
	Size		hi_len;
	Size		lo_len;			/* 0: no tick_lo */
	char		ticks[FLEXIBLE_ARRAY_MEMBER];	/* tick_hi, then tick_lo */
} HelperShared;

/*
 * What leads each row in a batch of rows; the row's bytes follow, aligned.
 * In a batch of values, a row is its length (uint32), its nulls, then its
 * Datums, aligned; a by-reference one is the offset in the row of its
 * bytes, which follow.
 */
typedef struct RowHeader
{
	uint32		len;
	ItemPointerData self;
} RowHeader;

#define BATCH_HEAD MAXALIGN(sizeof(int64))
#define ROW_HEAD MAXALIGN(sizeof(RowHeader))
#define VALUES_AT(n) MAXALIGN(sizeof(uint32) + (n))

/* Which of the values of columns attnos (0: a NULL) are by reference. */
static inline bool *
by_reference(TupleDesc desc, const AttrNumber *attnos, int n)
{
	bool	   *byref = palloc(sizeof(bool) * Max(n, 1));

	for (int i = 0; i < n; i++)
		byref[i] = attnos[i] > 0 && !TupleDescAttr(desc, attnos[i] - 1)->attbyval;
	return byref;
}

#endif							/* WINDOWING_QUEUE_HELPER_INT_H */
