/*
 * zone.c
 *		Time zone lookups for calendar windows.
 *
 * pg_next_dst_boundary answers both questions calendar.c asks (the offset at
 * an instant and the next change) with one binary search over the zone's
 * transitions, and extrapolates the zone's rule past its last transition,
 * so windows far in the future follow daylight saving time too.  Zones
 * from pg_tzset live as long as the backend, so a CalZone may keep the
 * pointer in a long-lived cache.
 */
#include "compat.h"

#include "pgtime.h"

#include "zone.h"

static void
lookup_pg_tz(const void *arg, int64_t t, int32_t *offset, int64_t *next,
			 int32_t *next_offset)
{
	pg_time_t	when = (pg_time_t) t;
	pg_time_t	boundary;
	long int	before_gmtoff;
	long int	after_gmtoff;
	int			before_isdst;
	int			after_isdst;
	int			found;

	found = pg_next_dst_boundary(&when, &before_gmtoff, &before_isdst,
								 &boundary, &after_gmtoff, &after_isdst,
								 (const pg_tz *) arg);
	if (found < 0)
		elog(ERROR, "could not find the next time zone transition");
	*offset = (int32_t) before_gmtoff;
	*next = found ? (int64_t) boundary : CAL_NO_TRANSITION;
	*next_offset = (int32_t) (found ? after_gmtoff : before_gmtoff);
}

void
zone_from_name(const char *name, CalZone *zone)
{
	pg_tz	   *tz = pg_tzset(name);

	if (tz == NULL || !pg_tz_acceptable(tz))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time zone \"%s\" not recognized", name),
				 errhint("Use a name from pg_timezone_names, such as 'Europe/Berlin'.")));
	zone->lookup = lookup_pg_tz;
	zone->arg = tz;
}
