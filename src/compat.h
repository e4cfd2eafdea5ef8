/*
 * compat.h
 *		The one place for differences between PostgreSQL major versions.
 *
 * CI builds and tests against PostgreSQL 15.  The extension uses
 * shmem_request_hook and MarkGUCPrefixReserved, both new in 15, so older
 * servers are refused at compile time rather than half supported.
 */
#ifndef WINDOWING_COMPAT_H
#define WINDOWING_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000
#error "windowing requires PostgreSQL 15 or later"
#endif

/* Marks a database left invalid by an interrupted DROP; new in 15.4. */
#ifndef DATCONNLIMIT_INVALID_DB
#define DATCONNLIMIT_INVALID_DB -2
#endif

#endif							/* WINDOWING_COMPAT_H */
