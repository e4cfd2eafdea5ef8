/*
 * compat.h
 *		The one place for differences between PostgreSQL major versions.
 *
 * PostgreSQL 15 is what is supported and tested.  The extension uses
 * shmem_request_hook and MarkGUCPrefixReserved, both new in 15, and
 * bulk_insert.c checks permissions with ExecCheckRTEPerms and
 * rte->requiredPerms, which 16 replaced: other major versions are refused
 * at compile time (the Makefile says so first) rather than half supported.
 */
#ifndef WINDOWING_COMPAT_H
#define WINDOWING_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 160000
#error "windowing supports PostgreSQL 15 only"
#endif

/* Marks a database left invalid by an interrupted DROP; new in 15.4. */
#ifndef DATCONNLIMIT_INVALID_DB
#define DATCONNLIMIT_INVALID_DB -2
#endif

#endif							/* WINDOWING_COMPAT_H */
