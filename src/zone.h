/*
 * zone.h
 *		PostgreSQL's time zone database behind calendar.h's CalZone.
 */
#ifndef WINDOWING_ZONE_H
#define WINDOWING_ZONE_H

#include "calendar.h"

extern void zone_from_name(const char *name, CalZone *zone);

#endif							/* WINDOWING_ZONE_H */
