/*
 * owner.h
 *		Running code as a pipeline's owner, or as another role.
 */
#ifndef WINDOWING_OWNER_H
#define WINDOWING_OWNER_H

#include "postgres.h"

/* Who to be again, and which settings to restore, when leaving. */
typedef struct OwnerContext
{
	Oid			caller;
	int			caller_sec;
	int			nestlevel;
} OwnerContext;

/*
 * Enters "role"'s security-restricted context until owner_leave(): the
 * current transaction's.  An error in between leaves the restoring to the
 * rollback of the transaction or subtransaction, as for any function that
 * changes user; a caller that catches errors there must roll one back.
 */
extern void owner_enter(OwnerContext *cx, Oid role);
extern void owner_leave(OwnerContext *cx);

extern Oid	owner_of_table(Oid relid);

/* One statement through SPI (connected) as "role": the SPI result code. */
extern int	owner_execute(Oid role, const char *sql, int nargs, Oid *types,
						  Datum *values);

#endif							/* WINDOWING_OWNER_H */
