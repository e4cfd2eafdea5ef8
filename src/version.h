/*
 * version.h
 *		The version of the extension's SQL this library is built for.
 *
 * It must be windowing.control's default_version (the build checks): the
 * library reads and writes the pipeline catalog as that version's scripts
 * leave it, and refuses to run a pipeline against any other.
 */
#ifndef WINDOWING_VERSION_H
#define WINDOWING_VERSION_H

#include "postgres.h"

#define WINDOWING_VERSION "0.23"

extern void version_check(void);
extern Oid windowing_extension_oid(void);

#endif							/* WINDOWING_VERSION_H */
